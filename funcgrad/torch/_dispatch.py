"""Running funcgrad functions as tensor ops: `apply`, and the recording of their nodes.

Every facade op is a funcgrad function ``f`` (Arrays in, Array or tuple out). When grad mode
is on and an input requires grad, `apply` runs ``f`` under a reverse-mode trace
(`funcgrad.transforms.tape.trace_flat`, what `funcgrad.vjp` does minus pytrees) and keeps
the `Tape` in an `OpNode` (`funcgrad.torch._op_node`). An op that is exactly one primitive
(`PrimCall`: elementwise, shape and reduction ops, addmm, log_softmax, nll_loss) skips the
trace: `record_primitive` builds the one-record tape tracing would have given, and its node
is a `PrimNode`. Only the tape's public API is used here.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable, Sequence

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.core import Primitive, Tracer, bind, is_inexact
from funcgrad.transforms.tape import Tape
from funcgrad.transforms.tape_call import record_call
from funcgrad.torch._op_node import INFERENCE_ERROR, OpNode, PrimNode, trace_op
from funcgrad.torch._scopes import in_scopes, open_scopes, scopes
from funcgrad.torch._tensor import Tensor, make
from funcgrad.torch._views import output
from funcgrad.torch import _saved_hooks as graph
from funcgrad.torch._runtime import grad_mode, profiler
from funcgrad.torch._runtime.node import meta_of, node_class, sequence_number, setup

__all__ = ["apply", "PrimCall", "const_like", "refresh_view"]

_NO_EDGE = (None, 0)
_new = object.__new__


def const_like(raw: Any, like: Tensor) -> Any:
    """A constant funcgrad array of ``raw`` (numpy) on the device of ``like``."""
    a = fnp.asarray(raw)
    device = like._a.device
    return a if device == "cpu" else funcgrad.device_put(a, device)


class PrimCall:
    """An op function that is exactly one primitive on the op's arrays, followed by
    constant arguments ``consts`` (arrays that are no tensor input of the op, such as class
    labels): ``prim(*arrays, *consts, **params)``. `apply` records it without tracing
    (`_record_primitive`); any other function is traced."""

    __slots__ = ("prim", "params", "consts")

    def __init__(self, prim: Primitive, params: dict | None = None, consts: tuple = ()):
        if prim.multiple_results:
            raise ValueError(f"PrimCall: {prim.name} has several results; use a function")
        self.prim = prim
        self.params = params or {}
        self.consts = consts

    def __call__(self, *args: Any) -> Any:
        return self.prim.bind(*args, *self.consts, **self.params)

    def __repr__(self) -> str:
        params = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"PrimCall({self.prim.name}{params})"


def apply(name: str, f: Callable, inputs: Sequence, multi: bool = False,
          differentiable: bool = True, *, target: Tensor | None = None) -> Any:
    """Run ``f`` on the arrays of ``inputs`` (tensors and Python scalars; each is one
    ``next_functions`` slot) and return the output tensor(s), recording a node called
    ``name`` when grad mode is on and an input requires grad. (The positional parameters
    are a `Spec`'s fields: an op calls ``apply(*spec)``.)"""
    if profiler.sessions.open and _profiled():  # one event per facade op
        return profiler.op_range(name, inputs, lambda: apply(
            name, f, inputs, multi=multi, target=target, differentiable=differentiable))
    datas = []
    diff = []
    concrete = True  # no tracer among the arrays (no funcgrad transform is running)
    i = 0
    for x in inputs:  # the arrays, and which inputs require grad, in one pass
        if isinstance(x, Tensor):
            if x._refuses:
                raise x._refusal(name)
            view = x._view
            if view is not None and view.version != x._vc.v:
                x._refresh_view()
            a = x._a
            datas.append(a)
            if type(a) is not Array:
                concrete = False
            if x._rg or x._grad_fn is not None:
                diff.append(i)
        else:
            datas.append(x)
            if isinstance(x, Tracer):
                concrete = False
        i += 1
    if open_scopes.open:  # a block is open, in some thread
        datas, concrete = _scoped(inputs, datas, concrete)
    if diff and differentiable and (not grad_mode.disabled.open or grad_mode.state.enabled):
        # (`grad_mode.is_grad_enabled`, written out: this runs for every op)
        if concrete and type(f) is PrimCall and not multi:
            return _record_primitive(name, f, inputs, datas, diff)
        return _record(name, f, inputs, datas, diff, multi, target)
    return _run_untracked(name, f, inputs, datas, multi)


def _run_untracked(name: str, f: Callable, inputs: Sequence, datas: list, multi: bool
                   ) -> Any:
    """`apply` recording nothing: ``f`` on the arrays, its result(s) as tensors."""
    if type(f) is PrimCall and not multi:  # (no call of the PrimCall object: see `bind`)
        out = bind(f.prim, datas + list(f.consts) if f.consts else datas, f.params)
        if f.prim.fresh and type(out) is Array:  # a ufunc's result views no input
            return make(out)
        return output(out, name, f, inputs, datas)
    out = f(*datas)
    if multi:
        return _untracked(out, name, f, inputs, datas)
    return output(out, name, f, inputs, datas)


def _profiled() -> bool:
    """Whether a facade op is an event of an open profile (while some profile is open in
    some thread): one is open in this thread, and the op is not part of another's work."""
    return bool(profiler.state.sessions) and not profiler.state.inside


def _scoped(inputs: Sequence, datas: list, concrete: bool) -> tuple[list, bool]:
    """The op's arrays as the blocks running on this thread have them (`in_scopes`), and
    whether they are concrete (no tracer); unchanged when no block runs here."""
    if not scopes.stack:
        return datas, concrete
    datas = in_scopes(inputs, datas)
    return datas, not any(isinstance(d, Tracer) for d in datas)


def _untracked(outs: Sequence, name: str, f: Callable, inputs: Sequence, datas: list
               ) -> tuple:
    """The output tensors, without a node, of a ``multi`` op (numbered among all its
    outputs, as views of inputs are)."""
    return tuple([output(o, name, f, inputs, datas, None, 0, k) for k, o in enumerate(outs)])


def _record(name: str, f: Callable, inputs: Sequence, datas: list, diff: list, multi: bool,
            target: Tensor | None) -> Any:
    """Run ``f`` under a reverse-mode trace and give its outputs the node of that tape."""
    if multi or len(diff) < len(datas):
        side: list = []

        def g(*d: Any) -> Any:
            full = list(datas)
            for i, v in zip(diff, d):
                full[i] = v
            out = f(*full)
            if multi:
                side.append(out)
                return tuple([o for o in out if is_inexact(o.dtype)])
            return out
    else:
        g = f  # every input is differentiated: nothing to fill in
    tape, outs = trace_op(g, [datas[i] for i in diff])
    return _node(name, f, inputs, datas, diff, multi, tape, outs, target,
                 side[0] if multi else None)


def _node(name: str, f: Callable, inputs: Sequence, datas: list, diff: list, multi: bool,
          tape: Tape, outs: tuple, target: Tensor | None, all_outs: Any) -> Any:
    """The output tensor(s) of a traced op, with its node unless nothing differentiable
    came out (``all_outs``: every output of a ``multi`` op, differentiable or not)."""
    if not multi and not is_inexact(outs[0].dtype):
        return output(outs[0], name, f, inputs, datas)
    if not outs:
        return _untracked(all_outs, name, f, inputs, datas)
    meta = [meta_of(o) for o in outs]
    # PyTorch's convention differs from funcgrad's only where a differentiated input or
    # an output is complex (a real function of real inputs has a real Jacobian)
    is_complex = any(m[1].kind == "c" for m in meta) or any(
        tape.var_avals[v][1].kind == "c" for v in tape.in_vars)
    node = node_class(name, OpNode)(_edges(inputs, diff), meta, is_complex, tape, f, datas,
                                    diff, multi)
    if multi:  # output numbers: among all outputs (views) and among the differentiable
        kept = [k for k, o in enumerate(all_outs) if is_inexact(o.dtype)]
        tensors = [output(o, name, f, inputs, datas, node, n, kept[n])
                   for n, o in enumerate(outs)]
    else:
        tensors = [output(outs[0], name, f, inputs, datas, node, 0)]
    node._keep_saved(inputs, tensors, target, *node._traced_slots(inputs, tensors))
    if multi:
        it = iter(tensors)
        return tuple([next(it) if is_inexact(o.dtype) else output(o, name, f, inputs, datas,
                                                                    None, 0, k)
                      for k, o in enumerate(all_outs)])
    return tensors[0]


def _record_primitive(name: str, call: PrimCall, inputs: Sequence, datas: list,
                      diff: list) -> Tensor:
    """`_record` of a `PrimCall` on concrete arrays: the one-record tape of the call
    (`record_primitive`; the differentiated inputs are its variables 0, 1, ...) held by a
    `PrimNode`. Most tensor ops come this way."""
    prim = call.prim
    args = datas + list(call.consts) if call.consts else datas
    out, rec, avals, positions, is_complex, reads, traced = record_call(prim, call.params,
                                                                        args, diff)
    if not traced:  # not differentiable (an integer or boolean result)
        return output(out, name, call, inputs, datas)
    node = setup(_new(_PRIM_NODES.get(name) or _prim_node_class(name)), _edges(inputs, diff),
                 sequence_number(), ((out.shape, out.dtype, out.device),))
    node._rec = rec  # (the node's `CallTape` is made only when asked for: `PrimNode`)
    node._avals = avals
    node._fn = node._datas = node._packed = None
    node._diff = positions  # (``diff``, a tuple shared by calls of its kind)
    node._multi = False
    node._complex = is_complex
    node._replay = True
    # a fresh result (a ufunc's) views no input: no alias to look for
    result = make(out, False, node, 0) if prim.fresh else output(out, name, call, inputs,
                                                                   datas, node, 0)
    # what the record saved: the residuals its rules declare (the tensor inputs among
    # them, not the constants after them)
    saved_in, reads_out = reads
    node._has_saved = bool(saved_in or reads_out)
    if not node._has_saved:
        node._held_refs = ()
        if graph.open_hooks.open and graph.current_hooks() is not None:
            node._pack_under_hooks(inputs, [result], ())  # PyTorch's formula may save some
        return result
    # per saved tensor, (the tensor, or a weak reference to a saved output; its version
    # counter; its version; its input position, -1 for the output; its array), flat:
    # `PrimNode` makes `SavedRef`s of them only when they are read
    held: tuple = ()
    n = len(inputs)
    for i in saved_in:
        if i < n:
            x = inputs[i]
            if isinstance(x, Tensor):
                if x._inference:
                    raise RuntimeError(INFERENCE_ERROR)
                vc = x._vc
                held += (x, vc, vc.v, i, x._a)
    if reads_out:  # (weakly: the output holds the node, which would then hold it)
        vc = result._vc
        held += (weakref.ref(result), vc, vc.v, -1, result._a)
    node._held_refs = held
    if graph.open_hooks.open and graph.current_hooks() is not None:
        node._pack_under_hooks(inputs, [result], saved_in)
    return result


_PRIM_NODES: dict = {}  # node name -> its PrimNode class (read once per recorded op)


def _prim_node_class(name: str) -> type:
    cls = _PRIM_NODES[name] = node_class(name, PrimNode)
    return cls


def _edges(inputs: Sequence, diff: list) -> tuple:
    """The ``next_functions`` of an op: one edge per input, ``(None, 0)`` if not
    differentiated."""
    edges = [_NO_EDGE] * len(inputs)
    for i in diff:
        x = inputs[i]
        fn = x._grad_fn
        edges[i] = (fn, x._output_nr) if fn is not None else x._edge()
    return tuple(edges)


def refresh_view(view_tensor: Tensor) -> None:
    """A view whose storage was written since its graph was made: its values are now a
    part of the base's new ones, so its node is made again off the base's
    (``AsStridedBackward0``, as PyTorch's). The tensor calls it (as ``_refresh_view``)
    where a view's graph is read."""
    view = view_tensor._view
    if not view.grad_enabled or not grad_mode.state.enabled:
        return
    view.version = view_tensor._vc.v
    if view.base.requires_grad:
        view_tensor._take_graph(apply(view.node, view.fn, [view.base]))
