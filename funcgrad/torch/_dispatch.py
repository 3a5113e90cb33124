"""Running funcgrad functions as tensor ops, and `OpNode`, the node that differentiates them.

Every facade op is a funcgrad function ``f`` (Arrays in, Array or tuple out). When grad mode
is on and an input requires grad, `apply` runs ``f`` under a reverse-mode trace (what
`funcgrad.vjp` does, minus pytrees: `OpTape`) and keeps the tape in an `OpNode`: backward
runs the tape's backward pass, so every derivative comes from the primitive registry's
rules. The tape says exactly which values the rules read (each record's ``saved``/``out``):
those that are the op's tensor inputs or outputs become the node's saved tensors,
version-checked on use and freed after backward.

Double backward (``create_graph=True``) records the backward of a node as a new facade op
on tensors, so it gets a node of its own:
- "replay": when every traced residual is an input or output of the op, the backward op
  re-runs the tape's rules on the residual tensors and the incoming gradient;
- "recompute": when a rule reads an intermediate of a composite op (softmax, mean...),
  the node also holds the op's input arrays and the backward op is
  ``(inputs, grad) -> vjp(f, *inputs)[1](grad)``, traced afresh.
Either way the rules are funcgrad ops, differentiable again.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator, Sequence

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.core import is_inexact, new_trace
from funcgrad.transforms.tape import Record, RevTrace, RevTracer, backward_pass
from funcgrad.torch import _dtypes as D
from funcgrad.torch._tensor import Tensor, make
from funcgrad.torch.autograd import grad_mode, graph
from funcgrad.torch.autograd.node import FREED_ERROR, Node, SavedRef, node_class

__all__ = ["apply", "capture_inputs", "inplace", "OpNode", "OpTape", "zeros_of", "proxy", "as_data", "const_like"]

_INFERENCE_ERROR = ("Inference tensors cannot be saved for backward. To work around you can "
                    "make a clone to get a normal tensor and use it in autograd.")


def as_data(x: Any) -> Any:
    return x._st.a if isinstance(x, Tensor) else x


def zeros_of(meta: tuple) -> Any:
    shape, dtype, device = meta
    z = fnp.zeros(shape, dtype)
    return z if device == "cpu" else funcgrad.device_put(z, device)


def const_like(raw: Any, like: Tensor) -> Any:
    """A constant funcgrad array of ``raw`` (numpy) on the device of ``like``."""
    a = fnp.asarray(raw)
    device = like._st.a.device
    return a if device == "cpu" else funcgrad.device_put(a, device)


def proxy(data: Any, edge: tuple) -> Tensor:
    """A tensor holding ``data`` that feeds gradients into ``edge`` (for double backward)."""
    node, nr = edge
    return make(data, requires_grad=node is not None, grad_fn=node, output_nr=nr)


def _wrap(out: Any, multi: bool) -> Any:
    if multi:
        return tuple(make(o) for o in out)
    return make(out)


class _Capture(threading.local):
    """Tensors seen by ops while a `capture_inputs` block runs (utils.checkpoint uses it
    to find the parameters a function reads from its closure)."""

    def __init__(self) -> None:
        self.sets: list[dict] = []


_capture = _Capture()


@contextlib.contextmanager
def capture_inputs() -> Iterator[dict]:
    seen: dict = {}
    _capture.sets.append(seen)
    try:
        yield seen
    finally:
        _capture.sets.pop()


def apply(name: str, f: Callable, inputs: Sequence, *, multi: bool = False,
          target: Tensor | None = None, differentiable: bool = True) -> Any:
    """Run ``f`` on the arrays of ``inputs`` (tensors and Python scalars; each is one
    ``next_functions`` slot) and return the output tensor(s), recording a node called
    ``name`` when grad mode is on and an input requires grad."""
    if _capture.sets:
        _capture.sets[-1].update((id(x), x) for x in inputs if isinstance(x, Tensor))
    datas = [as_data(x) for x in inputs]
    if differentiable and grad_mode.state.enabled:
        diff = [i for i, x in enumerate(inputs)
                if isinstance(x, Tensor) and (x._rg or x._grad_fn is not None)]
        if diff:
            return _record(name, f, inputs, datas, diff, multi, target)
    return _wrap(f(*datas), multi)


class OpTape:
    """What `funcgrad.vjp` keeps, without its pytree handling (one op has a flat list of
    array inputs and outputs): the records, the variables of the inputs and outputs, and
    the backward pass as a call ``tape(cotangents) -> input cotangents``."""

    __slots__ = ("records", "var_avals", "in_vars", "out_vars", "in_devices", "outputs")

    def __init__(self, fn: Callable, primals: Sequence):
        trace = RevTrace("funcgrad.torch")
        with new_trace(trace):
            tracers = [trace.new_var(p) for p in primals]
            out = fn(*tracers)
            outs = out if isinstance(out, tuple) else (out,)
            self.out_vars = [trace.var_of(o) for o in outs]
            self.outputs = [o._primal if isinstance(o, RevTracer) and o._trace is trace
                            else o for o in outs]
        self.records = trace.records
        self.var_avals = trace.var_avals
        self.in_vars = [t._var for t in tracers]
        self.in_devices = [p.device for p in primals]

    def __call__(self, cotangents: Sequence) -> list:
        seeds = [(v, c) for v, c in zip(self.out_vars, cotangents) if v >= 0]
        cts = backward_pass(self.records, self.var_avals, seeds)
        out = []
        for v, device in zip(self.in_vars, self.in_devices):
            if cts[v] is None:
                shape, dtype = self.var_avals[v]
                out.append(fnp.zeros(shape, dtype, device=device))
            else:
                out.append(cts[v])
        return out


def _record(name: str, f: Callable, inputs: Sequence, datas: list, diff: list, multi: bool,
            target: Tensor | None) -> Any:
    side: list = []

    def g(*d: Any) -> Any:
        full = list(datas)
        for i, v in zip(diff, d):
            full[i] = v
        out = f(*full)
        if multi:
            side.append(out)
            return tuple(o for o in out if is_inexact(o.dtype))
        return out

    tape = OpTape(g, [datas[i] for i in diff])
    outs = tape.outputs
    tape.outputs = None
    float_outs = outs if multi else [o for o in outs if is_inexact(o.dtype)]
    if not float_outs:
        return _wrap(side[0] if multi else outs[0], multi)
    node = node_class(name, OpNode)(inputs, datas, diff, f, multi, tape)
    tensors = [make(o, grad_fn=node, output_nr=k) for k, o in enumerate(float_outs)]
    node._meta = [(o.shape, o.dtype, o.device) for o in float_outs]
    node._find_saved(inputs, tensors, target)
    if multi:
        it = iter(tensors)
        return tuple(next(it) if is_inexact(o.dtype) else make(o) for o in side[0])
    return tensors[0]


def inplace(target: Tensor, name: str, f: Callable, others: Sequence = ()) -> Tensor:
    """``target`` op= ``others``: compute ``f(target, *others)`` anew, then rebind
    ``target`` to the result (same dtype) and bump its version counter."""
    target._check_inplace()
    dtype = target._st.a.dtype

    def f_cast(*a: Any) -> Any:
        r = f(*a)
        if r.dtype != dtype:
            rd, td = D.to_torch_dtype(r.dtype), D.to_torch_dtype(dtype)
            if not D.can_cast(rd, td):
                from funcgrad.torch._tensor import _type_word
                raise RuntimeError(f"result type {_type_word(rd)} can't be cast to the "
                                   f"desired output type {_type_word(td)}")
            r = fnp.astype(r, dtype)
        return r

    return target._rebind(apply(name, f_cast, [target, *others], target=target))


def _cotangent(g: Tensor | None, meta: tuple) -> Any:
    """An output's gradient as a funcgrad array of the output's dtype (zeros if None)."""
    if g is None:
        return zeros_of(meta)
    c = g._st.a
    return c if c.dtype == meta[1] else fnp.astype(c, meta[1])


def _conj(x: Any) -> Any:
    return fnp.conj(x) if np.issubdtype(x.dtype, np.complexfloating) else x


def _pytorch_convention(tape: Callable, is_complex: bool) -> Callable:
    """PyTorch's gradients of complex values are the conjugates of funcgrad's (JAX's)
    cotangents: ``vjp_torch(g) = conj(vjp(conj(g)))``; a no-op for real ops."""
    if not is_complex:
        return tape
    return lambda cts: [_conj(r) for r in tape([_conj(c) for c in cts])]


def _conj_cotangents(backward_op: Callable, n_residuals: int) -> Callable:
    def converted(*args: Any) -> tuple:
        cts = [_conj(c) for c in args[n_residuals:]]
        return tuple(_conj(r) for r in backward_op(*args[:n_residuals], *cts))
    return converted


class OpNode(Node):
    """The node of a facade op: its backward is the vjp of the op's funcgrad function."""

    __slots__ = ("_vjp", "_fn", "_datas", "_diff", "_multi", "_saved", "_has_saved",
                 "_replay", "_in_map", "_out_map", "_packed", "_complex")

    def __init__(self, inputs: Sequence, datas: list, diff: list, f: Callable, multi: bool,
                 vjp_fn: Any):
        diffset = set(diff)
        super().__init__(tuple(x._edge() if i in diffset else (None, 0)
                               for i, x in enumerate(inputs)))
        self._vjp = vjp_fn
        self._fn = f
        self._datas = datas
        self._diff = diff
        self._multi = multi
        self._saved: list = []
        self._packed = None
        self._complex = any(getattr(d, "dtype", None) is not None and
                            np.issubdtype(d.dtype, np.complexfloating) for d in datas)
        graph.register_node(self)

    def _find_saved(self, inputs: Sequence, outs: list, target: Tensor | None) -> None:
        """Read the tape: which tensors the rules will read (to version-check them) and
        whether every traced residual is an op input or output (replay) or not."""
        vjp_fn = self._vjp
        self._in_map = {v: i for i, v in zip(self._diff, vjp_fn.in_vars)}
        self._out_map = {v: k for k, v in enumerate(vjp_fn.out_vars) if v >= 0}
        consts = {id(self._datas[i]): i for i, x in enumerate(inputs)
                  if isinstance(x, Tensor) and i not in self._in_map.values()}
        saved_in, saved_out, replay, has_saved = set(), set(), True, False
        for rec in vjp_fn.records:
            for j, s in enumerate(rec.saved):
                if s is None:
                    continue
                has_saved = True
                v = rec.in_vars[j]
                if v < 0:
                    if id(s) in consts:
                        saved_in.add(consts[id(s)])
                elif v in self._in_map:
                    saved_in.add(self._in_map[v])
                elif v in self._out_map:
                    saved_out.add(self._out_map[v])
                else:
                    replay = False
            if rec.out is not None:
                has_saved = True
                for v in rec.out_vars:
                    if v >= 0 and v not in self._out_map:
                        replay = False
                    elif v >= 0:
                        saved_out.add(self._out_map[v])
        self._has_saved = has_saved
        self._replay = replay
        if replay:
            self._datas = self._fn = None  # the residuals are all the backward needs
        for i in sorted(saved_in):
            if target is not None and i == 0:
                continue  # the old value of an in-place target: an immutable snapshot
            if inputs[i]._inference:
                raise RuntimeError(_INFERENCE_ERROR)
            self._saved.append(SavedRef(inputs[i], keep=False))
        for k in sorted(saved_out):
            if target is not None:
                self._saved.append(SavedRef(target, node=self, output_nr=k,
                                            version=target._vc.v + 1, keep=False))
            else:
                self._saved.append(SavedRef(outs[k], node=self, output_nr=k, keep=False))
        hooks = graph.current_hooks()
        if hooks is not None and has_saved:
            known = {id(inputs[i]._st.a): inputs[i] for i in saved_in}
            known.update({id(t._st.a): t for t in outs})
            self._packed = graph.pack_records(vjp_fn.records, hooks, known)

    def saved_refs(self) -> list:
        return self._saved

    def release(self) -> None:
        if self._has_saved:
            self._vjp = None
            self._datas = None
            self._packed = None

    def apply(self, grads: list, create_graph: bool) -> list:
        if self._vjp is None:
            raise RuntimeError(FREED_ERROR)
        for s in self._saved:
            s.check(self)
        if all(g is None for g in grads):
            return [None] * len(self._next)
        with graph.unpacked(self._packed):
            if create_graph:
                res = self._apply_graph(grads)
            else:
                cts = [_cotangent(g, m) for g, m in zip(grads, self._meta)]
                res = [make(r) for r in _pytorch_convention(self._vjp, self._complex)(cts)]
        out: list = [None] * len(self._next)
        for i, r in zip(self._diff, res):
            out[i] = r
        return out

    def _apply_graph(self, grads: list) -> Sequence:
        """The backward of this node as a recorded facade op (for create_graph)."""
        grads = [g if g is not None else make(zeros_of(m)) for g, m in zip(grads, self._meta)]
        name = self.name() + "Backward"
        if self._replay:
            res_in, res_out = self._residual_slots()
            args = ([proxy(self._residual_value(("in", i)), self._next[i]) for i in res_in]
                    + [proxy(self._residual_value(("out", k)), (self, k)) for k in res_out]
                    + grads)
            fn, n = self._replay_fn(res_in, res_out), len(res_in) + len(res_out)
        else:
            args = [proxy(self._datas[i], self._next[i]) for i in self._diff] + grads
            fn, n = self._recompute_fn(), len(self._diff)
        if self._complex:
            fn = _conj_cotangents(fn, n)
        return apply(name, fn, args, multi=True)

    # -- replay: the tape's rules on residual tensors ------------------------------------------
    def _residual_slots(self) -> tuple:
        ins, outs = set(), set()
        for rec in self._vjp.records:
            for j, s in enumerate(rec.saved):
                v = rec.in_vars[j]
                if s is not None and v >= 0:
                    (ins.add(self._in_map[v]) if v in self._in_map
                     else outs.add(self._out_map[v]))
            if rec.out is not None:
                outs.update(self._out_map[v] for v in rec.out_vars if v >= 0)
        return sorted(ins), sorted(outs)

    def _residual_value(self, key: tuple) -> Any:
        for rec in self._vjp.records:
            for j, s in enumerate(rec.saved):
                v = rec.in_vars[j]
                if s is not None and v >= 0 and self._source(v) == key:
                    return s
            if rec.out is not None:
                outs = rec.out if rec.prim.multiple_results else (rec.out,)
                for v, o in zip(rec.out_vars, outs):
                    if v >= 0 and self._source(v) == key:
                        return o
        raise AssertionError(f"residual {key} not found")

    def _source(self, v: int) -> tuple:
        return ("in", self._in_map[v]) if v in self._in_map else ("out", self._out_map[v])

    def _replay_fn(self, res_in: list, res_out: list) -> Callable:
        vjp_fn = self._vjp
        records, var_avals = vjp_fn.records, vjp_fn.var_avals
        source = self._source
        n_in = len(res_in)
        n_res = n_in + len(res_out)

        def backward_op(*args: Any) -> tuple:
            values = dict(zip([("in", i) for i in res_in] + [("out", k) for k in res_out],
                              args[:n_res]))

            def sub(s: Any, v: int) -> Any:
                return s if s is None or v < 0 else values[source(v)]

            new = []
            for rec in records:
                saved = tuple(sub(s, v) for s, v in zip(rec.saved, rec.in_vars))
                out = rec.out
                if out is not None:
                    out = (tuple(sub(o, v) for o, v in zip(out, rec.out_vars))
                           if rec.prim.multiple_results else sub(out, rec.out_vars[0]))
                new.append(Record(rec.prim, rec.params, rec.in_vars, rec.in_avals,
                                  rec.out_vars, saved, out, rec.phase, rec.source))
            seeds = [(v, c) for v, c in zip(vjp_fn.out_vars, args[n_res:]) if v >= 0]
            cts = backward_pass(new, var_avals, seeds)
            return tuple(cts[v] if cts[v] is not None else fnp.zeros(*var_avals[v])
                         for v in vjp_fn.in_vars)
        return backward_op

    # -- recompute: differentiate the op again from its inputs --------------------------------
    def _recompute_fn(self) -> Callable:
        f, datas, diff, multi = self._fn, list(self._datas), self._diff, self._multi
        n = len(diff)

        def g(*d: Any) -> Any:
            full = list(datas)
            for i, v in zip(diff, d):
                full[i] = v
            out = f(*full)
            return tuple(o for o in out if is_inexact(o.dtype)) if multi else out

        def backward_op(*args: Any) -> tuple:
            return tuple(OpTape(g, args[:n])(list(args[n:])))
        return backward_op
