"""Running funcgrad functions as tensor ops, and `OpNode`, the node that differentiates them.

Every facade op is a funcgrad function ``f`` (Arrays in, Array or tuple out). When grad mode
is on and an input requires grad, `apply` runs ``f`` under a reverse-mode trace (what
`funcgrad.vjp` does, minus pytrees: `OpTape`) and keeps the tape in an `OpNode`: backward
runs the tape's backward pass, so every derivative comes from the primitive registry's
rules. The tape says exactly which values the rules read (each record's ``saved``/``out``):
those that are the op's tensor inputs or outputs become the node's saved tensors,
version-checked on use and freed after backward. An op that is exactly one primitive
(`PrimCall`: elementwise, shape and reduction ops, addmm, log_softmax, nll_loss) skips the
trace: `_record_primitive` builds the one-record tape tracing would have given, and its
node, a `PrimNode`, reads the rules' residuals off that record.

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
from funcgrad.core import Primitive, Tracer, new_trace
from funcgrad.transforms.tape import (Record, RevTrace, RevTracer, backward_pass,
                                      one_output_record)
from funcgrad.torch import _dtypes as D
from funcgrad.torch._tensor import Tensor, make
from funcgrad.torch.autograd import grad_mode, graph
from funcgrad.torch.autograd.node import FREED_ERROR, Node, SavedRef, meta_of, node_class

__all__ = ["apply", "capture_inputs", "inplace", "OpNode", "PrimNode", "OpTape", "PrimCall",
           "zeros_of", "proxy", "const_like"]

_NO_EDGE = (None, 0)
_INFERENCE_ERROR = ("Inference tensors cannot be saved for backward. To work around you can "
                    "make a clone to get a normal tensor and use it in autograd.")


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


class PrimCall:
    """An op function that is exactly one primitive on the op's arrays, followed by
    constant arguments ``consts`` (arrays that are no tensor input of the op, such as class
    labels): ``prim(*arrays, *consts, **params)``. `apply` records it without tracing
    (`_record_primitive`); any other function is traced. ``fn``, if given, is the same call
    made faster (the primitive's `as_function`), for the untraced path."""

    __slots__ = ("prim", "params", "fn", "consts")

    def __init__(self, prim: Primitive, params: dict | None = None,
                 fn: Callable | None = None, consts: tuple = ()):
        if prim.multiple_results:
            raise ValueError(f"PrimCall: {prim.name} has several results; use a function")
        self.prim = prim
        self.params = params or {}
        self.fn = fn
        self.consts = consts

    def __call__(self, *args: Any) -> Any:
        if self.fn is not None:
            return self.fn(*args)
        return self.prim(*args, *self.consts, **self.params)

    def __repr__(self) -> str:
        params = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"PrimCall({self.prim.name}{params})"


def apply(name: str, f: Callable, inputs: Sequence, *, multi: bool = False,
          target: Tensor | None = None, differentiable: bool = True) -> Any:
    """Run ``f`` on the arrays of ``inputs`` (tensors and Python scalars; each is one
    ``next_functions`` slot) and return the output tensor(s), recording a node called
    ``name`` when grad mode is on and an input requires grad."""
    if _capture.sets:
        _capture.sets[-1].update((id(x), x) for x in inputs if isinstance(x, Tensor))
    datas = []
    diff = []
    i = 0
    for x in inputs:  # the arrays, and which inputs require grad, in one pass
        if isinstance(x, Tensor):
            datas.append(x._st.a)
            if x._rg or x._grad_fn is not None:
                diff.append(i)
        else:
            datas.append(x)
        i += 1
    if diff and differentiable and grad_mode.state.enabled:
        return _record(name, f, inputs, datas, diff, multi, target)
    out = f(*datas)
    return tuple([make(o) for o in out]) if multi else make(out)


class OpTape:
    """What `funcgrad.vjp` keeps, without its pytree handling (one op has a flat list of
    array inputs and outputs): the records, the variables' avals and the outputs'
    variables, and the backward pass as a call ``tape(cotangents) -> input cotangents``.
    The tape's variables 0..n-1 are the op's n differentiated inputs, in order."""

    __slots__ = ("records", "var_avals", "n_in", "out_vars")

    def __init__(self, records: list, var_avals: list, n_in: int, out_vars: list):
        self.records = records
        self.var_avals = var_avals
        self.n_in = n_in
        self.out_vars = out_vars

    @staticmethod
    def run(fn: Callable, primals: Sequence) -> tuple["OpTape", tuple]:
        """Run ``fn(*primals)`` under a reverse-mode trace: (its tape, its outputs)."""
        trace = RevTrace("funcgrad.torch")
        with new_trace(trace):
            out = fn(*[trace.new_var(p) for p in primals])
        out_vars = []
        values = []
        for o in (out if type(out) is tuple else (out,)):
            if type(o) is RevTracer and o._trace is trace:
                out_vars.append(o._var)
                values.append(o._primal)
            else:
                out_vars.append(-1)
                values.append(o)
        return OpTape(trace.records, trace.var_avals, len(primals), out_vars), tuple(values)

    def __call__(self, cotangents: Sequence) -> list:
        cts = backward_pass(self.records, self.var_avals, zip(self.out_vars, cotangents))
        del cts[self.n_in:]
        for v, c in enumerate(cts):
            if c is None:  # an input the outputs do not depend on
                shape, dtype = self.var_avals[v]
                cts[v] = fnp.zeros(shape, dtype, device=cotangents[0].device)
        return cts


def _record(name: str, f: Callable, inputs: Sequence, datas: list, diff: list, multi: bool,
            target: Tensor | None) -> Any:
    if type(f) is PrimCall and not multi:
        for d in datas:
            if isinstance(d, Tracer):  # under a funcgrad transform: trace it like the rest
                break
        else:
            return _record_primitive(name, f, inputs, datas, diff)
    if multi or len(diff) < len(datas):
        side: list = []

        def g(*d: Any) -> Any:
            full = list(datas)
            for i, v in zip(diff, d):
                full[i] = v
            out = f(*full)
            if multi:
                side.append(out)
                return tuple([o for o in out if o.dtype.kind in "fc"])
            return out
    else:
        g = f  # every input is differentiated: nothing to fill in
    tape, outs = OpTape.run(g, [datas[i] for i in diff])
    return _node(name, f, inputs, datas, diff, multi, tape, outs, target,
                 side[0] if multi else None)


def _node(name: str, f: Callable, inputs: Sequence, datas: list, diff: list, multi: bool,
          tape: OpTape, outs: tuple, target: Tensor | None, all_outs: Any) -> Any:
    """The output tensor(s) of a traced op, with its node unless nothing differentiable
    came out (``all_outs``: every output of a ``multi`` op, differentiable or not)."""
    if not multi and outs[0].dtype.kind not in "fc":
        return make(outs[0])
    if not outs:
        return tuple([make(o) for o in all_outs])
    meta = [meta_of(o) for o in outs]
    # PyTorch's convention differs from funcgrad's only where a differentiated input or
    # an output is complex (a real function of real inputs has a real Jacobian)
    is_complex = any(m[1].kind == "c" for m in meta) or any(
        dtype.kind == "c" for _, dtype in tape.var_avals[:tape.n_in])
    node = node_class(name, OpNode)(_edges(inputs, diff), meta, is_complex, tape, f, datas,
                                    diff, multi)
    tensors = ([make(outs[0], False, node, 0)] if len(outs) == 1 else
               [make(o, False, node, k) for k, o in enumerate(outs)])
    node._keep_saved(inputs, tensors, target, *node._traced_slots(inputs))
    if multi:
        it = iter(tensors)
        return tuple([next(it) if o.dtype.kind in "fc" else make(o) for o in all_outs])
    return tensors[0]


def _record_primitive(name: str, call: PrimCall, inputs: Sequence, datas: list,
                      diff: list) -> Tensor:
    """`_record` of a `PrimCall` on concrete arrays: run the primitive and build, without a
    trace, the one-record tape a trace of the op would give (the differentiated inputs are
    its variables 0, 1, ..., the output the next), and a `PrimNode` holding it. Written
    flat, for speed: most tensor ops come this way."""
    prim = call.prim
    args = datas + list(call.consts) if call.consts else datas
    out = prim.apply(args, call.params)
    raw = out._value  # numpy or cupy: C attributes, faster than the Array's properties
    if raw.dtype.kind not in "fc":
        return make(out)
    in_vars = [-1] * len(args)
    var_avals = []
    mask = 0
    is_complex = raw.dtype.kind == "c"
    for k, i in enumerate(diff):
        a = args[i]._value  # a differentiated input is a tensor's Array
        dtype = a.dtype
        var_avals.append((a.shape, dtype))
        in_vars[i] = k
        if dtype.kind in "fc":
            mask |= 1 << i
            is_complex = is_complex or dtype.kind == "c"
    var = len(var_avals)
    var_avals.append((raw.shape, raw.dtype))
    if mask and prim.differentiable:
        records = [one_output_record(prim, call.params, args, in_vars, mask, var, out)]
    else:
        records = []  # nothing to differentiate: the node gives zero gradients
    tape = OpTape(records, var_avals, len(diff), [var])
    node = node_class(name, PrimNode)(_edges(inputs, diff), [meta_of(out)], is_complex, tape,
                                      None, None, diff, False)
    result = make(out, False, node, 0)
    node._keep_record_saved(inputs, result)
    return result


def _edges(inputs: Sequence, diff: list) -> tuple:
    """The ``next_functions`` of an op: one edge per input, ``(None, 0)`` if not
    differentiated."""
    edges = [_NO_EDGE] * len(inputs)
    for i in diff:
        x = inputs[i]
        fn = x._grad_fn
        edges[i] = (fn, x._output_nr) if fn is not None else x._edge()
    return tuple(edges)


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


def _conj(x: Any) -> Any:
    return fnp.conj(x) if np.issubdtype(x.dtype, np.complexfloating) else x


def _pytorch_convention(tape: Callable) -> Callable:
    """PyTorch's gradients of complex values are the conjugates of funcgrad's (JAX's)
    cotangents: ``vjp_torch(g) = conj(vjp(conj(g)))``."""
    return lambda cts: [_conj(r) for r in tape([_conj(c) for c in cts])]


def _conj_cotangents(backward_op: Callable, n_residuals: int) -> Callable:
    def converted(*args: Any) -> tuple:
        cts = [_conj(c) for c in args[n_residuals:]]
        return tuple(_conj(r) for r in backward_op(*args[:n_residuals], *cts))
    return converted


class OpNode(Node):
    """The node of a facade op: its backward is the vjp of the op's funcgrad function."""

    __slots__ = ("_vjp", "_fn", "_datas", "_diff", "_multi", "_saved", "_has_saved",
                 "_replay", "_packed", "_complex")

    def __init__(self, edges: tuple, meta: list, is_complex: bool, tape: OpTape,
                 f: Callable | None, datas: list | None, diff: list, multi: bool):
        super().__init__(edges, meta=meta)
        self._vjp = tape
        self._fn = f
        self._datas = datas
        self._diff = diff
        self._multi = multi
        self._saved: list = []
        self._packed = None
        # PyTorch's gradients differ from funcgrad's cotangents where a differentiated input
        # or an output is complex
        self._complex = is_complex
        self._replay = True  # until the tape shows a residual that is not an input/output

    def _traced_slots(self, inputs: Sequence) -> tuple:
        """Read the tape: which tensors the rules will read (input positions and output
        numbers, to version-check them), whether the rules read anything, and whether
        every traced residual is an op input or output (replay) or not. The tape's
        variables 0..n-1 are the differentiated inputs, in order."""
        tape = self._vjp
        diff = self._diff
        n_in = len(diff)
        consts = None  # id(array) -> position, of the tensor inputs not differentiated
        saved_in, saved_out, replay, has_saved = set(), set(), True, False
        for rec in tape.records:
            for s, v in zip(rec.saved, rec.in_vars):
                if s is None:
                    continue
                has_saved = True
                if v < 0:
                    if consts is None:
                        consts = self._constant_inputs(inputs)
                    i = consts.get(id(s)) if consts else None
                    if i is not None:
                        saved_in.add(i)
                elif v < n_in:
                    saved_in.add(diff[v])
                else:
                    k = self._output_nr(v)
                    if k is None:
                        replay = False
                    else:
                        saved_out.add(k)
            if rec.out is not None:
                has_saved = True
                for v in rec.out_vars:
                    if v < 0:
                        continue
                    k = self._output_nr(v)
                    if k is None:
                        replay = False
                    else:
                        saved_out.add(k)
        if not replay:
            self._replay = False
        return sorted(saved_in), sorted(saved_out), has_saved

    def _keep_saved(self, inputs: Sequence, outs: list, target: Tensor | None,
                    saved_in: Sequence, saved_out: Sequence, has_saved: bool) -> None:
        """Hold what the rules read: version-checked refs of the saved input and output
        tensors (and packed copies under saved-tensor hooks)."""
        self._has_saved = has_saved
        if self._replay:
            self._datas = self._fn = None  # the residuals are all the backward needs
        for i in saved_in:
            if target is not None and i == 0:
                continue  # the old value of an in-place target: an immutable snapshot
            if inputs[i]._inference:
                raise RuntimeError(_INFERENCE_ERROR)
            self._saved.append(SavedRef(inputs[i]))  # no cycle: inputs never point back
        for k in saved_out:
            if target is not None:
                self._saved.append(SavedRef(target, is_output=True, output_nr=k,
                                            version=target._vc.v + 1, keep=False))
            else:
                self._saved.append(SavedRef(outs[k], is_output=True, output_nr=k,
                                            keep=False))
        hooks = graph.current_hooks() if has_saved else None
        if hooks is not None:
            known = {id(inputs[i]._st.a): inputs[i] for i in saved_in}
            known.update({id(t._st.a): t for t in outs})
            self._packed = graph.pack_records(self._vjp.records, hooks, known)

    def _constant_inputs(self, inputs: Sequence) -> dict:
        """id(array) -> position, of the tensor inputs that are not differentiated (their
        arrays are constants on the tape)."""
        diff = self._diff
        if len(diff) == len(inputs):
            return {}
        diffset = set(diff)
        return {id(self._datas[i]): i for i, x in enumerate(inputs)
                if isinstance(x, Tensor) and i not in diffset}

    def _output_nr(self, v: int) -> int | None:
        """Which output of the op tape variable ``v`` is (the last, if it is several)."""
        out_vars = self._vjp.out_vars
        for k in range(len(out_vars) - 1, -1, -1):
            if out_vars[k] == v:
                return k
        return None

    def saved_refs(self) -> list:
        return self._saved

    def release(self) -> None:
        if self._has_saved:
            self._vjp = None
            self._datas = None
            self._packed = None
            self._saved = []  # the saved input tensors go now, as PyTorch frees them

    def apply(self, grads: list, create_graph: bool) -> list:
        tape = self._vjp
        if tape is None:
            raise RuntimeError(FREED_ERROR)
        for s in self._saved:
            if s.vc.v != s.version:
                s.check(self)  # raises PyTorch's in-place error
        if len(grads) == 1 and not (create_graph or self._complex or self._packed):
            # the common case, `_backward` and the tape's call inlined: one real output
            g = grads[0]
            if g is None:
                return [None] * len(self._next)
            c = g._st.a
            dtype = self._meta[0][1]
            res = tape([c if c.dtype == dtype else fnp.astype(c, dtype)])
            out: list = [None] * len(self._next)
            for i, r in zip(self._diff, res):
                out[i] = make(r)
            return out
        for g in grads:
            if g is not None:
                break
        else:
            return [None] * len(self._next)
        if self._packed is None:
            res = self._backward(grads, create_graph)
        else:
            with graph.unpacked(self._packed):
                res = self._backward(grads, create_graph)
        out = [None] * len(self._next)
        for i, r in zip(self._diff, res):
            out[i] = r
        return out

    def _backward(self, grads: list, create_graph: bool) -> Sequence:
        """The gradients of the differentiated inputs (the saved values are in place)."""
        if create_graph:
            return self._apply_graph(grads)
        cts = []
        for g, meta in zip(grads, self._meta):  # as funcgrad arrays of the outputs' dtypes
            if g is None:
                cts.append(zeros_of(meta))
            else:
                c = g._st.a
                cts.append(c if c._value.dtype == meta[1] else fnp.astype(c, meta[1]))
        tape = self._vjp if not self._complex else _pytorch_convention(self._vjp)
        return [make(r) for r in tape(cts)]

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
            for s, v in zip(rec.saved, rec.in_vars):
                if s is not None and v >= 0:
                    kind, i = self._source(v)
                    (ins if kind == "in" else outs).add(i)
            if rec.out is not None:
                outs.update(self._output_nr(v) for v in rec.out_vars if v >= 0)
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
        """("in", input position) or ("out", output number) of a traced residual."""
        diff = self._diff
        return ("in", diff[v]) if v < len(diff) else ("out", self._output_nr(v))

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
                         for v in range(vjp_fn.n_in))
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
            return tuple([o for o in out if o.dtype.kind in "fc"]) if multi else out

        def backward_op(*args: Any) -> tuple:
            tape, _ = OpTape.run(g, args[:n])
            return tuple(tape(list(args[n:])))
        return backward_op


class PrimNode(OpNode):
    """The node of an op that is one primitive call on the op's own arrays (a `PrimCall`):
    its tape is that call's one record, built by `_record_primitive` without a trace. The
    record's residuals are the op's input and output tensors (or constants), so it replays
    them for double backward and says directly which tensors to version-check."""

    __slots__ = ()

    def _keep_record_saved(self, inputs: Sequence, result: Tensor) -> None:
        """`_keep_saved`, with what the rules read taken off the record: the tensor inputs
        it saved (not the constants after them) and the output if it kept it."""
        records = self._vjp.records
        if not records:
            return self._keep_saved(inputs, [result], None, (), (), False)
        rec = records[0]
        saved = rec.saved
        saved_in = [i for i, s in enumerate(saved[:len(inputs)])
                    if s is not None and isinstance(inputs[i], Tensor)]
        reads_out = rec.out is not None
        has_saved = reads_out or any(s is not None for s in saved)
        self._keep_saved(inputs, [result], None, saved_in, (0,) if reads_out else (),
                         has_saved)
