"""The scripted program's IR, TorchScript's shape of it: a `Graph` is a `Block` of `Node`s
whose inputs and outputs are typed SSA `Value`s; ``prim::If`` and ``prim::Loop`` nodes own
sub-blocks (TorchScript's structured control flow), so a program is a tree of blocks that
can be checked, printed (``.graph``), run and stored as data without Python source.

``prim::Loop(max_trip_count, initial_condition, *carried)`` has one block whose parameters
are the iteration number and the carried values and whose returns are the condition to go
on and the new carried values: ``for`` loops and ``while`` loops are both this node, as in
TorchScript. ``prim::If(cond)`` has two blocks returning its outputs.
"""
from __future__ import annotations

import itertools
from typing import Any, Iterator

from funcgrad.torch._script import stypes as T

__all__ = ["Value", "Node", "Block", "Graph"]

_ids = itertools.count(1)


class Value:
    """One SSA value: its type and a debug name (the variable it was assigned to)."""

    __slots__ = ("type", "base", "id", "slot")

    def __init__(self, type: T.Type, base: str = ""):
        self.type, self.base, self.id = type, base, next(_ids)
        self.slot = -1  # its index in an interpreter frame (set by `Graph.number`)

    def __str__(self) -> str:
        return f"%{self.base}.{self.id}" if self.base else f"%{self.id}"

    __repr__ = __str__


class Block:
    """Nodes run in order, with parameters (a loop's iteration and carried values, a
    graph's arguments) and returns."""

    def __init__(self, params: list | None = None):
        self.params: list = params or []
        self.nodes: list = []
        self.returns: list = []

    def walk(self) -> Iterator["Node"]:
        """Every node in the block and, depth first, in the blocks it contains."""
        for node in self.nodes:
            yield node
            for b in node.blocks:
                yield from b.walk()


class Node:
    """An operation: ``kind`` (``aten::add``, ``prim::If``...), its input and output
    values, attributes (a constant's value, a method's name, keyword names) and blocks;
    ``loc`` is (file, line, column) of the source it came from."""

    __slots__ = ("kind", "inputs", "outputs", "attrs", "blocks", "loc")

    def __init__(self, kind: str, inputs: list, out_types: list, attrs: dict | None = None,
                 loc: tuple | None = None, out_names: list | None = None):
        self.kind, self.inputs = kind, list(inputs)
        names = out_names or [""] * len(out_types)
        self.outputs = [Value(t, n) for t, n in zip(out_types, names)]
        self.attrs = dict(attrs or {})
        self.blocks: list = []
        self.loc = loc

    @property
    def output(self) -> Value:
        return self.outputs[0]


class Graph:
    """A function's program: its argument values, its body block, its return type; and
    the objects it calls that are not data (`python` holds @ignore'd functions by name)."""

    def __init__(self, name: str, params: list, qualname: str = ""):
        self.name, self.qualname = name, qualname or name
        self.block = Block(params)
        self.arg_names: list = [p.base for p in params]
        self.defaults: dict = {}
        self.return_type: T.Type = T.NONE
        self.n_slots = 0

    def number(self) -> int:
        """Give every value a frame slot (the interpreter's registers); returns their
        count."""
        n = 0

        def visit(block: Block) -> None:
            nonlocal n
            for v in block.params:
                v.slot, n = n, n + 1
            for node in block.nodes:
                for v in node.outputs:
                    v.slot, n = n, n + 1
                for b in node.blocks:
                    visit(b)
        visit(self.block)
        self.n_slots = n
        return n

    def __str__(self) -> str:
        lines = ["graph(" + ",\n      ".join(f"{p} : {p.type}" for p in self.block.params)
                 + "):"]
        _print_block(self.block, "  ", lines)
        lines.append("  return (" + ", ".join(str(v) for v in self.block.returns) + ")")
        return "\n".join(lines) + "\n"

    __repr__ = __str__


def _attr_text(node: Node) -> str:
    shown = {k: v for k, v in node.attrs.items() if k in ("value", "name")}
    if not shown or (node.kind == "prim::Constant" and shown.get("value", 0) is None):
        return ""
    parts = []
    for k, v in shown.items():
        if isinstance(v, bool):
            v = int(v)
        plain = isinstance(v, (int, float, str, tuple, list)) or v is None
        # (a frozen module's tensor is shown by its kind, not its values)
        parts.append(f"{k}=<Tensor>" if not plain else f'{k}="{v}"' if isinstance(
            v, str) else f"{k}={v}")
    return "[" + ", ".join(parts) + "]"


def _print_block(block: Block, indent: str, lines: list) -> None:
    for node in block.nodes:
        outs = ", ".join(f"{v} : {v.type}" for v in node.outputs)
        lhs = outs + " = " if outs else ""
        args = ", ".join(str(v) for v in node.inputs)
        loc = f" # {node.loc[0]}:{node.loc[1]}:{node.loc[2]}" if node.loc else ""
        lines.append(f"{indent}{lhs}{node.kind}{_attr_text(node)}({args}){loc}")
        for i, b in enumerate(node.blocks):
            params = ", ".join(f"{p} : {p.type}" for p in b.params)
            lines.append(f"{indent}  block{i}({params}):")
            _print_block(b, indent + "    ", lines)
            lines.append(f"{indent}    -> (" + ", ".join(str(v) for v in b.returns) + ")")


def constant_value(node: Node) -> Any:
    """A ``prim::Constant``'s value."""
    return node.attrs.get("value")
