"""The scripted IR as plain data (JSON-able dicts and lists) and back, for ``torch.jit.save``
/ ``load`` and for ``freeze``'s copies of graphs.

Values are numbered per graph; a node is its kind, input numbers, typed outputs, attributes
and blocks. Reading a program back never evaluates anything from it: every type goes
through `stypes.parse`, every op kind through the interpreter's name lookup (unknown and
denied names refused), every attribute through a fixed table of what the IR uses, and
values must be defined before use in an enclosing block (SSA). Tensor constants (a frozen
module's parameters) are kept in a `TensorStore` and referred to by number.
"""
from __future__ import annotations

from typing import Any, Callable

from funcgrad.torch._script import stypes as T
from funcgrad.torch._script.interp import resolve
from funcgrad.torch._script.ir import Block, Graph, Node, Value
from funcgrad.torch._script.ops import PY_OPS
from funcgrad.torch._tensor import Tensor

__all__ = ["ArchiveError", "TensorStore", "graph_to_data", "GraphReader", "encode_value",
           "FUNCTION"]

FUNCTION = T.FunctionType("Function")
# kinds run by the interpreter itself (the other prim:: and aten:: kinds by `resolve`)
_STRUCTURAL = frozenset({"prim::If", "prim::Loop", "prim::Constant", "prim::GetAttr",
                         "prim::CallMethod", "prim::CallFunction", "prim::TupleUnpack",
                         "prim::ListUnpack", "prim::RaiseException"})
_NAMESPACES = frozenset({"Tensor", "torch", "F", "list"})
_LAYOUT_CHARS = frozenset("vsne")


class ArchiveError(RuntimeError):
    """A saved program that cannot be read (malformed, or naming what the IR refuses)."""


class TensorStore:
    """The tensors of an archive by number (a tensor met twice is stored once)."""

    def __init__(self, tensors: list | None = None):
        self.tensors: list = list(tensors or [])
        self._index: dict = {id(t): k for k, t in enumerate(self.tensors)}

    def add(self, t: Tensor) -> int:
        if id(t) not in self._index:
            self._index[id(t)] = len(self.tensors)
            self.tensors.append(t)
        return self._index[id(t)]

    def get(self, k: Any) -> Tensor:
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < len(self.tensors):
            raise ArchiveError(f"tensor record {k!r} does not exist")
        return self.tensors[k]


def encode_value(v: Any, store: TensorStore) -> Any:
    """A constant or attribute as JSON data: tuples and tensors tagged, lists as lists."""
    if isinstance(v, Tensor):
        return {"tensor": store.add(v)}
    if isinstance(v, tuple):
        return {"tuple": [encode_value(x, store) for x in v]}
    if isinstance(v, list):
        return [encode_value(x, store) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise ArchiveError(f"a value of type {type(v).__name__} cannot be saved")


def decode_value(d: Any, store: TensorStore) -> Any:
    if isinstance(d, list):
        return [decode_value(x, store) for x in d]
    if isinstance(d, dict):
        if set(d) == {"tensor"}:
            return store.get(d["tensor"])
        if set(d) == {"tuple"} and isinstance(d["tuple"], list):
            return tuple(decode_value(x, store) for x in d["tuple"])
        raise ArchiveError(f"malformed value {d!r}")
    if d is None or isinstance(d, (bool, int, float, str)):
        return d
    raise ArchiveError(f"malformed value {d!r}")


# -- writing ---------------------------------------------------------------------------------
class _Writer:
    def __init__(self, store: TensorStore):
        self.store, self.ids = store, {}

    def define(self, v: Value) -> list:
        self.ids[v.id] = len(self.ids)
        return [self.ids[v.id], str(v.type), v.base]

    def block(self, b: Block) -> dict:
        return {"params": [self.define(p) for p in b.params],
                "nodes": [self.node(n) for n in b.nodes],
                "returns": [self.ids[v.id] for v in b.returns]}

    def node(self, n: Node) -> dict:
        out: dict = {"kind": n.kind, "inputs": [self.ids[v.id] for v in n.inputs]}
        if n.blocks:
            out["blocks"] = [self.block(b) for b in n.blocks]
        out["outputs"] = [self.define(v) for v in n.outputs]
        attrs = {k: encode_value(v, self.store) for k, v in n.attrs.items() if k != "python"}
        if attrs:
            out["attrs"] = attrs
        if n.loc:
            out["loc"] = list(n.loc)
        return out


def graph_to_data(graph: Graph, store: TensorStore) -> dict:
    """``graph`` as JSON data (tensor constants go to ``store``)."""
    w = _Writer(store)
    return {"name": graph.name, "qualname": graph.qualname,
            "defaults": {k: encode_value(v, store) for k, v in graph.defaults.items()},
            "return_type": str(graph.return_type), "body": w.block(graph.block)}


# -- reading ---------------------------------------------------------------------------------
def _need(ok: bool, what: str) -> None:
    if not ok:
        raise ArchiveError(what)


def _str(d: Any, what: str) -> str:
    _need(isinstance(d, str), f"{what} is not a string: {d!r}")
    return d


def _list(d: Any, what: str) -> list:
    _need(isinstance(d, list), f"{what} is not a list: {d!r}")
    return d


class GraphReader:
    """Reads graphs, checking them: ``functions`` are the qualified names of the archive's
    functions (what a Function constant may name), ``attr_ok(name)`` whether a
    ``prim::GetAttr`` may read ``name``."""

    def __init__(self, store: TensorStore, functions: set, attr_ok: Callable[[str], bool]):
        self.store, self.functions, self.attr_ok = store, functions, attr_ok
        self.function_values: set = set()

    def graph(self, d: Any, scope: dict | None = None) -> Graph:
        _need(isinstance(d, dict), "a graph is not an object")
        body = d.get("body")
        _need(isinstance(body, dict), "a graph has no body")
        scope = dict(scope or {})
        params = [self.define(p, scope) for p in _list(body.get("params"), "params")]
        g = Graph(_str(d.get("name"), "a graph's name"), params,
                  _str(d.get("qualname"), "a graph's qualname"))
        defaults = d.get("defaults", {})
        _need(isinstance(defaults, dict), "defaults is not an object")
        g.defaults = {k: decode_value(v, self.store) for k, v in defaults.items()}
        g.return_type = self.type(d.get("return_type"))
        try:
            self.fill(g.block, body, scope)
        except ArchiveError as e:
            raise ArchiveError(f"in graph '{g.qualname}': {e}") from None
        return g

    def type(self, text: Any) -> T.Type:
        try:
            return T.parse(_str(text, "a type"))
        except ValueError as e:
            raise ArchiveError(str(e)) from None

    def define(self, d: Any, scope: dict) -> Value:
        _need(isinstance(d, list) and len(d) == 3 and isinstance(d[0], int),
              f"malformed value definition {d!r}")
        _need(d[0] not in scope, f"value {d[0]} is defined twice")
        v = Value(self.type(d[1]), _str(d[2], "a value's name"))
        scope[d[0]] = v
        return v

    def ref(self, k: Any, scope: dict) -> Value:
        _need(isinstance(k, int) and k in scope, f"value {k!r} is used where it is not "
              "defined")
        return scope[k]

    def fill(self, block: Block, d: dict, scope: dict) -> None:
        for nd in _list(d.get("nodes"), "nodes"):
            block.nodes.append(self.node(nd, scope))
        block.returns = [self.ref(k, scope) for k in _list(d.get("returns"), "returns")]

    def node(self, d: Any, scope: dict) -> Node:
        _need(isinstance(d, dict), f"malformed node {d!r}")
        kind = _str(d.get("kind"), "a node's kind")
        inputs = [self.ref(k, scope) for k in _list(d.get("inputs", []), "inputs")]
        attrs = self.attrs(kind, d.get("attrs", {}))
        node = Node(kind, inputs, [], attrs, self.loc(d.get("loc")))
        for bd in _list(d.get("blocks", []), "blocks"):
            _need(isinstance(bd, dict), "malformed block")
            inner = dict(scope)
            block = Block([self.define(p, inner) for p in _list(bd.get("params"), "params")])
            self.fill(block, bd, inner)
            node.blocks.append(block)
        node.outputs = [self.define(o, scope) for o in _list(d.get("outputs", []), "outputs")]
        self.check(node)
        return node

    def attrs(self, kind: str, d: Any) -> dict:
        _need(isinstance(d, dict), f"{kind}: attributes are not an object")
        out = {}
        for k, v in d.items():
            if k == "value":
                out[k] = decode_value(v, self.store)
            elif k in ("name", "ns", "layout", "exc"):
                out[k] = _str(v, f"{kind}: attribute '{k}'")
            elif k == "kw":
                out[k] = [_str(x, f"{kind}: a keyword name") for x in _list(v, "kw")]
            else:
                raise ArchiveError(f"{kind}: unknown attribute '{k}'")
        _need(out.get("ns") in _NAMESPACES or "ns" not in out,
              f"{kind}: unknown namespace {out.get('ns')!r}")
        _need(set(out.get("layout", "")) <= _LAYOUT_CHARS, f"{kind}: malformed index layout")
        return out

    def loc(self, d: Any) -> tuple | None:
        if d is None:
            return None
        _need(isinstance(d, list) and len(d) == 3 and isinstance(d[0], str) and all(
            isinstance(x, int) for x in d[1:]), f"malformed source location {d!r}")
        return tuple(d)

    def check(self, node: Node) -> None:
        """Refuse what the interpreter must not run: unknown or denied ops, Python calls,
        attribute reads outside the stored modules, calls of values not functions."""
        kind, attrs = node.kind, node.attrs
        if kind == "prim::PythonOp":
            raise ArchiveError(f"the program calls the Python function "
                               f"'{attrs.get('name')}' (Python code cannot be loaded)")
        if kind in ("prim::GetAttr", "prim::CallMethod"):
            _need("name" in attrs, f"{kind} without a name")
            _need(kind != "prim::GetAttr" or self.attr_ok(attrs["name"]),
                  f"prim::GetAttr reads '{attrs['name']}', which no stored module has")
        elif kind == "prim::CallFunction":
            _need(bool(node.inputs) and node.inputs[0] in self.function_values,
                  "prim::CallFunction of a value that is not a stored function")
        elif kind == "prim::Constant" and node.outputs and node.outputs[0].type == FUNCTION:
            _need(attrs.get("name") in self.functions,
                  f"a Function constant names '{attrs.get('name')}', which is not stored")
            self.function_values.add(node.outputs[0])
        elif kind not in _STRUCTURAL:
            name = kind.split("::", 1)[-1]
            _need(not name.startswith("__") or name in PY_OPS and "ns" not in attrs,
                  f"Unknown builtin op: {kind}.")
            try:
                fn = resolve(kind, attrs)
            except RuntimeError as e:
                raise ArchiveError(str(e)) from None
            _need(attrs.get("ns") not in ("torch", "F") or getattr(
                fn, "__module__", "").startswith("funcgrad"), f"Unknown builtin op: {kind}.")
        _need(kind not in ("prim::If", "prim::Loop") or len(node.blocks) == (
            2 if kind == "prim::If" else 1), f"{kind} with a wrong number of blocks")
