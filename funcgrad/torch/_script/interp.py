"""Running the IR: each node becomes a closure over frame slots (the graph's values are
registers of a list), each block a list of them. On concrete tensors control flow runs in
Python, so the facade's autograd records the path taken (as PyTorch's eager engine
differentiates); when a condition or a loop's carried tensors are traced by a funcgrad
transform (under ``funcgrad.jit`` or ``torch.compile``), ``prim::If`` becomes
``lax.cond``, a counted ``prim::Loop`` ``lax.fori_loop`` and a loop on a traced
condition ``lax.while_loop``: the program keeps its control flow instead of failing on a
value it cannot know.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.transforms.control_flow import is_abstract
from funcgrad.transforms.vmap import is_batched
from funcgrad.torch._script import stypes as T
from funcgrad.torch._script.ir import Block, Graph, Node
from funcgrad.torch._script.ops import DENIED, PY_OPS
from funcgrad.torch._tensor import Tensor, make

__all__ = ["build", "resolve"]

_SPECIAL = {"size": lambda t, *d: t.size(*d) if d else list(t.size()),
            "dim": lambda t: t.dim(), "numpy_T": lambda t: t.T, "mT": lambda t: t.mT,
            "__getitem__": lambda a, i: a[i], "_set_item": lambda a, i, v: a.__setitem__(i, v),
            "_index_put": lambda a, i, v: a.__setitem__(i, v),
            "__range_length": lambda lo, hi, st: len(range(lo, hi, st)),
            "__derive_index": lambda i, lo, st: lo + i * st,
            "floor": lambda x: math.floor(x), "ceil": lambda x: math.ceil(x)}
_PRIM = {"prim::dtype": lambda t: t.dtype, "prim::requires_grad": lambda t: t.requires_grad,
         "prim::is_cuda": lambda t: t.is_cuda, "prim::data": lambda t: t.data,
         "prim::device": lambda t: t.device, "prim::grad": lambda t: t.grad,
         "prim::min": min, "prim::TupleConstruct": lambda *a: a,
         "prim::ListConstruct": lambda *a: list(a),
         "prim::DictConstruct": lambda *a: dict(zip(a[::2], a[1::2])),
         "prim::TupleIndex": lambda a, i: a[i], "prim::unchecked_cast": lambda a: a,
         "prim::Uninitialized": lambda: None, "prim::Print": print}


def _free_slots(blocks: list) -> list:
    """The slots that ``blocks`` read but do not define (their closure over the frame)."""
    defined, read = set(), set()
    for b in blocks:
        defined.update(v.slot for v in b.params)
        read.update(v.slot for v in b.returns)
        for n in b.walk():
            read.update(v.slot for v in n.inputs)
            defined.update(v.slot for v in n.outputs)
            for inner in n.blocks:
                defined.update(v.slot for v in inner.params)
                read.update(v.slot for v in inner.returns)
    return sorted(read - defined)


class _Closure:
    """The tensors a staged construct reads from the frame, passed as its operands (a
    transform inside ``jit`` refuses constructs closing over its values)."""

    def __init__(self, blocks: list):
        self.slots = _free_slots(blocks)

    def operands(self, frame: list) -> tuple:
        slots = [s for s in self.slots if isinstance(frame[s], Tensor)]
        return slots, [frame[s]._a for s in slots]

    @staticmethod
    def enter(frame: list, slots: list, arrays: Any) -> None:
        for s, a in zip(slots, arrays):
            frame[s] = make(a)


def _traced(x: Any) -> bool:
    return isinstance(x, Tensor) and (is_abstract(x._a) or is_batched(x._a))


def _to_bool(x: Any) -> Any:
    """``aten::Bool``: a Python bool, or the tensor itself when its value is traced
    (the If/Loop that reads it is then staged)."""
    return x if _traced(x) else bool(x)


def resolve(kind: str, attrs: dict) -> Callable:
    """The Python callable of an op (``aten::relu`` in namespace ``attrs['ns']``);
    unknown or refused names raise."""
    name = kind.split("::", 1)[1]
    ns = attrs.get("ns")
    if kind.startswith("prim::") and kind in _PRIM:
        return _PRIM[kind]
    if not kind.startswith("aten::") or name in DENIED or name.startswith("_") and \
            name not in _SPECIAL and not name.startswith("__"):
        raise RuntimeError(f"Unknown builtin op: {kind}.")
    if name == "Bool":
        return _to_bool
    if name in ("select", "slice", "index"):
        return _indexer(attrs.get("layout", "v" if name == "select" else "s"))
    if ns is None:
        if name in _SPECIAL:
            return _SPECIAL[name]
        if name in PY_OPS:
            return PY_OPS[name]
    import funcgrad.torch as torch  # (the facade's namespace: it imports this package)
    table = {"Tensor": Tensor, "torch": torch, "F": torch.nn.functional, "list": list}
    fn = getattr(table.get(ns), name, None) if ns in table else None
    if fn is None or not callable(fn):
        raise RuntimeError(f"Unknown builtin op: {kind}.")
    return fn


def _indexer(layout: str) -> Callable:
    """``x[...]`` from the layout of its index (int-or-tensor, slice, None, Ellipsis)."""
    def index(base: Any, *parts: Any) -> Any:
        it, idx = iter(parts), []
        for p in layout:
            if p == "v":
                idx.append(next(it))
            elif p == "s":
                idx.append(slice(next(it), next(it), next(it)))
            else:
                idx.append(None if p == "n" else Ellipsis)
        return base[idx[0] if len(idx) == 1 else tuple(idx)]
    return index


class _Builder:
    """Compiles a graph's blocks into closures; ``ctx`` finds called graphs' runners."""

    def __init__(self, ctx: Any):
        self.ctx = ctx

    def block(self, block: Block) -> Callable:
        steps = [self.node(n) for n in block.nodes]

        def run(frame: list) -> None:
            for step in steps:
                step(frame)
        return run

    def node(self, node: Node) -> Callable:
        kind = node.kind
        ins = [v.slot for v in node.inputs]
        outs = [v.slot for v in node.outputs]
        if kind == "prim::If":
            return self.if_node(node, ins[0], outs)
        if kind == "prim::Loop":
            return self.loop_node(node, ins, outs)
        if kind == "prim::Constant":
            value = node.attrs.get("value")
            if "name" in node.attrs and node.outputs[0].type == T.FunctionType("Function"):
                value = self.ctx.function_runner(node.attrs["name"])
            o = outs[0]

            def constant(frame: list) -> None:
                frame[o] = value
            return constant
        fn = self.callable(node)
        kw = node.attrs.get("kw")
        if kw:
            n_pos = len(ins) - len(kw)

            def call_kw(frame: list) -> None:
                args = [frame[i] for i in ins]
                frame[outs[0]] = fn(*args[:n_pos], **dict(zip(kw, args[n_pos:])))
            return call_kw
        if len(outs) > 1:
            def call_many(frame: list) -> None:
                for o, r in zip(outs, fn(*[frame[i] for i in ins])):
                    frame[o] = r
            return call_many
        o = outs[0] if outs else -1
        if len(ins) == 2:
            a, b = ins

            def call2(frame: list) -> None:
                frame[o] = fn(frame[a], frame[b])
            return call2

        def call(frame: list) -> None:
            frame[o] = fn(*[frame[i] for i in ins])
        return call

    def callable(self, node: Node) -> Callable:
        kind, attrs = node.kind, node.attrs
        if kind in ("prim::TupleUnpack", "prim::ListUnpack"):
            return lambda x: x
        if kind == "prim::GetAttr":
            name = attrs["name"]
            return lambda obj: getattr(obj, name)
        if kind == "prim::CallMethod":
            name, ctx = attrs["name"], self.ctx
            return lambda obj, *args: ctx.method_runner(obj, name)(obj, *args)
        if kind == "prim::CallFunction":
            return lambda f, *args: f(*args)
        if kind == "prim::PythonOp":
            return self.ctx.python_op(attrs["name"], attrs.get("python"))
        if kind == "prim::RaiseException":
            msg = attrs.get("value", "")

            def raise_(*_: Any) -> None:
                raise RuntimeError(f"The following operation failed in the TorchScript "
                                   f"interpreter.\n{attrs.get('exc') or 'Exception'}: {msg}")
            return raise_
        return resolve(kind, attrs)

    def if_node(self, node: Node, c: int, outs: list) -> Callable:
        then_b, else_b = (self.block(b) for b in node.blocks)
        rets = [[v.slot for v in b.returns] for b in node.blocks]
        closure = _Closure(node.blocks)

        def run_if(frame: list) -> None:
            cond = frame[c]
            if isinstance(cond, Tensor):
                return _staged_if(frame, cond, (then_b, else_b), rets, outs, closure)
            k = 0 if cond else 1
            (then_b if k == 0 else else_b)(frame)
            for o, r in zip(outs, rets[k]):
                frame[o] = frame[r]
        return run_if

    def loop_node(self, node: Node, ins: list, outs: list) -> Callable:
        block = node.blocks[0]
        body = self.block(block)
        params = [v.slot for v in block.params]
        go_slot, rets = block.returns[0].slot, [v.slot for v in block.returns[1:]]
        counted = block.returns[0] is node.inputs[1] and not any(n.attrs.get("ns") == "list" for n in block.walk())
        loop = _Loop(body, params, go_slot, rets, outs, counted)
        loop.closure = _Closure(node.blocks)
        return lambda frame: loop.run(frame, [frame[i] for i in ins])


class _Loop:
    """A ``prim::Loop``: Python iterations on known values, staged otherwise."""

    def __init__(self, body: Callable, params: list, go: int, rets: list, outs: list,
                 counted: bool):
        self.body, self.params, self.go, self.rets, self.outs = body, params, go, rets, outs
        self.counted = counted

    def step(self, frame: list, i: Any, carried: list) -> tuple:
        frame[self.params[0]] = i
        for p, v in zip(self.params[1:], carried):
            frame[p] = v
        self.body(frame)
        return frame[self.go], [frame[r] for r in self.rets]

    def run(self, frame: list, values: list) -> None:
        trip, go, carried = values[0], values[1], values[2:]
        if self.counted and isinstance(trip, int) and any(_traced(v) for v in carried):
            carried = self.fori(frame, trip, carried)
        else:
            i = 0
            while not isinstance(go, Tensor) and go and i < trip:
                go, carried = self.step(frame, i, carried)
                i += 1
            if isinstance(go, Tensor):
                carried = self.staged_while(frame, i, trip, go, carried)
        for o, v in zip(self.outs, carried):
            frame[o] = v

    def fori(self, frame: list, trip: int, carried: list) -> list:
        slots, operands = self.closure.operands(frame)

        def body(i: Any, state: tuple) -> tuple:
            arrays, outer = state
            self.closure.enter(frame, slots, outer)
            _, out = self.step(frame, make(i), [make(a) for a in arrays])
            return _arrays(out, arrays), outer
        return [make(a) for a in lax.fori_loop(0, trip, body, (_arrays(carried),
                                                                 operands))[0]]

    def staged_while(self, frame: list, i: int, trip: int, go: Tensor, carried: list) -> list:
        def cond(state: tuple) -> Any:
            return fnp.logical_and(state[1], state[0] < trip)

        slots, operands = self.closure.operands(frame)

        def body(state: tuple) -> tuple:
            k, _, arrays, outer = state
            self.closure.enter(frame, slots, outer)
            go2, out = self.step(frame, make(k), [make(a) for a in arrays])
            return k + 1, fnp.asarray(_array(go2), bool), _arrays(out, arrays), outer
        init = (fnp.asarray(i), fnp.asarray(go._a, bool), _arrays(carried), operands)
        return [make(a) for a in lax.while_loop(cond, body, init)[2]]


def _array(x: Any) -> Any:
    return x._a if isinstance(x, Tensor) else fnp.asarray(x)


def _arrays(xs: list, like: list | None = None) -> list:
    """The arrays of staged values (scalars as arrays, of ``like``'s dtypes if given)."""
    out = [_array(x) for x in xs]
    if like is not None:
        out = [fnp.asarray(o, getattr(l, "dtype", None)) for o, l in zip(out, like)]
    return out


def _staged_if(frame: list, cond: Tensor, blocks: tuple, rets: list, outs: list,
               closure: _Closure) -> None:
    slots, operands = closure.operands(frame)

    def branch(k: int) -> Callable:
        def run(arrays: list) -> list:
            closure.enter(frame, slots, arrays)
            blocks[k](frame)
            return [_array(frame[r]) for r in rets[k]]
        return run
    results = lax.cond(cond._a, branch(0), branch(1), operands)
    for o, r in zip(outs, results):
        frame[o] = make(r)


def build(graph: Graph, ctx: Any) -> Callable:
    """A Python function running ``graph`` on its arguments."""
    n = graph.number()
    params = [v.slot for v in graph.block.params]
    body = _Builder(ctx).block(graph.block)
    ret = graph.block.returns[0].slot

    def run(*args: Any) -> Any:
        frame = [None] * n
        for p, a in zip(params, args):
            frame[p] = a
        body(frame)
        return frame[ret]
    return run
