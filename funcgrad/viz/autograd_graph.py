"""`make_dot`: the backward graph of facade tensors, drawn as torchviz draws PyTorch's.

It reads only PyTorch's public autograd interface, so it draws `funcgrad.torch` tensors
(and anything else exposing that interface): ``tensor.grad_fn``; a node's
``next_functions`` (``(node, input_nr)`` pairs) and ``type(node).__name__``
(``MulBackward0``); ``AccumulateGrad.variable`` for leaves; saved values as ``_saved_*``
attributes or, for custom Functions, ``saved_tensors``; ``_is_view()``/``_base`` for views.
Nodes of `funcgrad.torch` ops that do not name their saved values that way show them
through ``saved_refs()`` (each ref holds the tensor or a weak reference to it in
``.tensor``, ``.is_output`` when it is the node's own output, and ``.array``, the saved
value) as "saved" inputs and "result" outputs.

Conventions (torchviz's): backward nodes grey, leaves light blue with their name (from
``params``) and shape, saved tensors orange, outputs green, a view's base dark green.
"""
from __future__ import annotations

import weakref
from types import SimpleNamespace
from typing import Any, Iterable, Mapping

from .graph import label, new_graph

__all__ = ["make_dot"]

SAVED_PREFIX = "_saved_"
LEAF, SAVED, OUTPUT, BASE = "lightblue", "orange", "darkolivegreen1", "darkolivegreen3"


def make_dot(output: Any, params: Mapping[str, Any] | Iterable | None = None,
             show_attrs: bool = False, show_saved: bool = False,
             max_attr_chars: int = 50) -> Any:
    """A `graphviz.Digraph` of the autograd graph behind ``output`` (a tensor or a tuple
    of tensors), as ``torchviz.make_dot`` draws it.

    ``params``: names for leaf tensors (a dict name -> tensor, or ``named_parameters()``);
    ``show_attrs``: list each node's saved non-tensor attributes; ``show_saved``: draw the
    tensors each node saved (orange); ``max_attr_chars``: truncate long attribute values."""
    names = {id(t): name for name, t in (dict(params) if params is not None else {}).items()}
    graph = new_graph("autograd", graph_attr={"size": "12,12"}, node_attr={
        "style": "filled", "shape": "box", "align": "left", "fontsize": "10",
        "ranksep": "0.1", "height": "0.2", "fontname": "monospace"})
    _Walker(graph, names, show_attrs, show_saved, max(max_attr_chars, 3)).outputs(output)
    rows = len(graph.body)
    size = max(12.0, rows * 0.15)
    graph.graph_attr.update(size=f"{size},{size}")
    return graph


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "grad_fn") and hasattr(x, "shape") and hasattr(x, "requires_grad")


def _size(t: Any) -> str:
    return "(" + ", ".join(str(int(n)) for n in t.shape) + ")"


def _saved_attrs(fn: Any) -> list[tuple[str, Any]]:
    """(name, value) of the node's ``_saved_*`` attributes; freed ones are skipped."""
    out = []
    for attr in dir(fn):
        if attr.startswith(SAVED_PREFIX):
            try:
                out.append((attr[len(SAVED_PREFIX):], getattr(fn, attr)))
            except RuntimeError:  # freed by a backward pass without retain_graph
                continue
    return out


def _saved_values(fn: Any) -> list[tuple[str, Any]]:
    """(name, tensor) of what ``fn`` saved: its ``_saved_*`` tensors, else (for facade op
    nodes, which have no ``saved_tensors``) its ``saved_refs()``."""
    out = []
    for name, val in _saved_attrs(fn):
        if _is_tensor(val):
            out.append((name, val))
        elif isinstance(val, tuple):
            out += [(f"{name}[{i}]", v) for i, v in enumerate(val) if _is_tensor(v)]
    refs = getattr(fn, "saved_refs", None)
    if out or not callable(refs) or hasattr(type(fn), "saved_tensors"):
        return out
    for ref in refs():
        t = getattr(ref, "tensor", None)
        t = t() if isinstance(t, weakref.ref) else t
        if t is None:  # no longer referenced elsewhere: the saved value's shape is left
            t = SimpleNamespace(shape=tuple(ref.array.shape))
        out.append(("result" if getattr(ref, "is_output", False) else "saved", t))
    return out


class _Walker:
    def __init__(self, graph: Any, names: dict, show_attrs: bool, show_saved: bool,
                 max_chars: int):
        self.graph = graph
        self.names = names
        self.show_attrs = show_attrs
        self.show_saved = show_saved
        self.max_chars = max_chars
        self.seen: set[int] = set()

    def var_label(self, t: Any, name: str | None = None) -> str:
        return label(f"{name or self.names.get(id(t), '')}\n {_size(t)}")

    def tensor(self, t: Any, color: str, name: str | None = None) -> None:
        self.seen.add(id(t))
        self.graph.node(str(id(t)), self.var_label(t, name), fillcolor=color)

    def outputs(self, output: Any) -> None:
        for t in (output if isinstance(output, (tuple, list)) else (output,)):
            self.base_tensor(t, OUTPUT)

    def base_tensor(self, t: Any, color: str) -> None:
        if id(t) in self.seen:
            return
        self.tensor(t, color)
        if t.grad_fn is not None:
            self.node(t.grad_fn)
            self.graph.edge(str(id(t.grad_fn)), str(id(t)))
        is_view = getattr(t, "_is_view", None)
        base = getattr(t, "_base", None)
        if callable(is_view) and is_view() and base is not None:
            self.base_tensor(base, BASE)
            self.graph.edge(str(id(base)), str(id(t)), style="dotted")

    def node(self, fn: Any) -> None:
        if id(fn) in self.seen:
            return
        self.seen.add(id(fn))
        if self.show_saved:
            for k, (name, t) in enumerate(_saved_values(fn)):
                saved = f"saved{id(fn)}_{k}"
                self.graph.node(saved, self.var_label(t, name), fillcolor=SAVED)
                self.graph.edge(str(id(fn)), saved, dir="none")
        variable = getattr(fn, "variable", None)
        if variable is not None:  # AccumulateGrad: the leaf it accumulates into
            self.tensor(variable, LEAF)
            self.graph.edge(str(id(variable)), str(id(fn)))
        self.graph.node(str(id(fn)), label(self.fn_label(fn)))
        for u, _ in getattr(fn, "next_functions", ()):
            if u is not None:
                self.graph.edge(str(id(u)), str(id(fn)))
                self.node(u)
        for k, t in enumerate(self.custom_saved(fn)):
            saved = f"ctx{id(fn)}_{k}"
            self.graph.node(saved, self.var_label(t), fillcolor=SAVED)
            self.graph.edge(saved, str(id(fn)), dir="none")

    @staticmethod
    def custom_saved(fn: Any) -> tuple:
        """A custom Function's ``saved_tensors`` (empty once freed, or for other nodes)."""
        try:
            saved = getattr(fn, "saved_tensors", ())
        except RuntimeError:
            return ()
        return tuple(t for t in (saved or ()) if _is_tensor(t))

    def fn_label(self, fn: Any) -> str:
        name = type(fn).__name__
        if not self.show_attrs:
            return name
        attrs = {}
        for attr, val in _saved_attrs(fn):
            if _is_tensor(val):
                attrs[attr] = "[saved tensor]"
            elif isinstance(val, tuple) and any(_is_tensor(t) for t in val):
                attrs[attr] = "[saved tensors]"
            else:
                attrs[attr] = str(val)
        if not attrs:
            return name
        col1 = max(len(k) for k in attrs)
        col2 = min(max(len(v) for v in attrs.values()), self.max_chars)
        sep = "-" * max(col1 + col2 + 2, len(name))

        def cut(s: str) -> str:
            return s[:col2 - 3] + "..." if len(s) > col2 else s
        rows = "\n".join(f"{k:<{col1}}: {cut(v):>{col2}}" for k, v in attrs.items())
        return f"{name}\n{sep}\n{rows}"
