"""Calls of Python functions on the values of arrays, from inside any transform.

- `debug_callback`: for its effect alone (printing, logging): no result and no derivative;
  under grad and jvp the function sees the primal values, under vmap it runs once per
  example, in order (as JAX's does), under jit each time the compiled program runs (an
  effectful primitive is never dropped or merged). `funcgrad.debug` builds on it.
- `pure_callback`: a function assumed pure, with results of declared shapes and dtypes: a
  compiled program drops a call whose results it does not use; under vmap it follows the
  call's ``vmap_method``; it has no derivative (as JAX's: give it one with custom_jvp).
- `io_callback`: a function with effects and results: never dropped or merged; under vmap
  once per example unless ``ordered``; no derivative.

Under jit an effect happens when the program runs. While jit records a construct's
sub-program (a loop's body, `scoped`) the calls are recorded without being made: the body's
iterations run afterwards, the first one included (`_stage_effect`).

The last two are not differentiable primitives (the traces record no derivative), so the
wrappers in `funcgrad.callbacks` refuse arguments that carry one (`refuse_derivatives`),
as JAX does; a recorded tape (make_tape) that is differentiated later meets the VJP rule
below, which refuses too. Nothing is silently treated as constant.

Each primitive takes its function as the static parameter ``callback``, which receives
backend arrays and returns the flat results (the wrappers in `funcgrad.callbacks` rebuild
and flatten the pytrees), and the results' declared ``result_avals``, which they must match.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from funcgrad.array import new_array
from funcgrad.core import Primitive, Tracer, bind, is_inexact
from .batching import to_front
from .shape import broadcast_to, reshape

__all__ = ["debug_callback", "pure_callback", "io_callback", "VMAP_METHODS",
           "refuse_derivatives", "no_derivative_error"]

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all")


def _impl(*raws: Any, callback: Callable, result_avals: tuple, **_: Any) -> tuple:
    results = [np.asarray(r) for r in callback(*raws)]
    if len(results) != len(result_avals):
        raise TypeError(f"{prim_name(callback)}: the callback returned {len(results)} "
                        f"arrays, but {len(result_avals)} are declared")
    for k, (r, (shape, dtype)) in enumerate(zip(results, result_avals)):
        if r.shape != shape or r.dtype != dtype:
            raise TypeError(
                f"{prim_name(callback)}: result {k} of the callback has shape {r.shape} "
                f"and dtype {r.dtype}, but result_shape_dtypes declares {shape} and "
                f"{dtype}; return exactly what is declared (cast with astype)")
    return tuple(results)


def prim_name(callback: Callable) -> str:
    """The API a callback came from, for its errors."""
    return getattr(callback, "api_name", "callback")


def _effect_impl(*raws: Any, callback: Callable) -> tuple:
    callback(*raws)
    return ()


debug_callback = Primitive(
    "debug_callback", _effect_impl, None, ("callback",), multiple_results=True,
    differentiable=False, effectful=True, doc="callback(*values) for its effect; no result.")
pure_callback = Primitive(
    "pure_callback", _impl, None, ("callback", "result_avals", "vmap_method"),
    multiple_results=True, differentiable=False,
    doc="callback(*values): results of declared shapes and dtypes; assumed pure.")
io_callback = Primitive(
    "io_callback", _impl, None, ("callback", "result_avals", "ordered"), multiple_results=True,
    differentiable=False, effectful=True, doc="callback(*values) with effects and results.")


class _PerExample:
    """The callback of a batched call: run once per example (the batched arguments, batch
    axis in front, indexed; the others as they are), its results stacked."""

    def __init__(self, callback: Callable, batched: tuple):
        self.callback = callback
        self.batched = batched
        self.api_name = prim_name(callback)

    def __call__(self, *raws: Any) -> tuple:
        size = next(len(r) for r, b in zip(raws, self.batched) if b)
        results = [self.callback(*[r[i] if b else r for r, b in zip(raws, self.batched)])
                   for i in range(size)]
        if not results or not results[0]:
            return ()
        return tuple(np.stack(column) for column in zip(*results))


def _batch_size(args: Sequence, dims: Sequence) -> int:
    return next(a.shape[d] for a, d in zip(args, dims) if d is not None)


def _batch_debug(args: Sequence, dims: Sequence, *, callback: Callable) -> tuple:
    fronts = [a if d is None else to_front(a, d) for a, d in zip(args, dims)]
    bind(debug_callback, fronts,
         {"callback": _PerExample(callback, tuple(d is not None for d in dims))})
    return (), ()


def _batched_call(prim: Primitive, args: Sequence, dims: Sequence, how: str,
                  params: dict) -> tuple:
    """The batched call for vmap method ``how``: results with the batch axis in front."""
    fronts = [a if d is None else to_front(a, d) for a, d in zip(args, dims)]
    size = _batch_size(args, dims)
    params = {**params, "result_avals": tuple(((size, *shape), dtype)
                                              for shape, dtype in params["result_avals"])}
    if how in ("sequential", "sequential_unrolled"):
        per_example = _PerExample(params["callback"], tuple(d is not None for d in dims))
        outs = bind(prim, fronts, {**params, "callback": per_example})
    else:
        if how == "expand_dims":
            fronts = [a if d is not None else reshape(a, shape=(1, *np.shape(a)))
                      for a, d in zip(fronts, dims)]
        else:  # broadcast_all
            fronts = [a if d is not None else broadcast_to(a, shape=(size, *np.shape(a)))
                      for a, d in zip(fronts, dims)]
        outs = bind(prim, fronts, params)
    return tuple(outs), (0,) * len(outs)


def _batch_pure(args: Sequence, dims: Sequence, *, callback: Callable, result_avals: tuple,
                vmap_method: str | None) -> tuple:
    if vmap_method is None:
        raise NotImplementedError(
            "vmap is only supported for pure_callback when vmap_method is specified: pass "
            f"vmap_method= one of {VMAP_METHODS} (sequential: one call per example).")
    return _batched_call(pure_callback, args, dims, vmap_method,
                         {"callback": callback, "result_avals": result_avals,
                          "vmap_method": vmap_method})


def _batch_io(args: Sequence, dims: Sequence, *, callback: Callable, result_avals: tuple,
              ordered: bool) -> tuple:
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback: the examples would have no "
                         "order; pass ordered=False to run it once per example.")
    return _batched_call(io_callback, args, dims, "sequential",
                         {"callback": callback, "result_avals": result_avals,
                          "ordered": ordered})


def no_derivative_error(kind: str) -> TypeError:
    return TypeError(
        f"{kind} callbacks have no derivative (funcgrad cannot see inside the function): "
        "wrap the call in a funcgrad.custom_jvp or custom_vjp function with a rule, or "
        "apply funcgrad.stop_gradient to its inputs.")


def refuse_derivatives(kind: str, args: Sequence) -> None:
    """Raise if an argument carries a derivative (a float traced by grad, vjp or jvp, at
    any level; a tape recorded whole, make_tape's, refuses only if differentiated)."""
    for a in args:
        while isinstance(a, Tracer):
            trace = a._trace
            if is_inexact(a.dtype) and (trace.mode == "jvp" or trace.mode == "rev"
                                        and a._diff and not trace.keep_all):
                raise no_derivative_error(kind)
            a = a._primal


def _no_derivative(kind: str) -> Callable:
    def rule(g: Any) -> Any:
        raise no_derivative_error(kind)
    return rule


def _stage_effect(trace: Any, args: Sequence, params: dict, prim: Primitive) -> Any:
    """How jit records ``prim``: made now only outside a sub-program being recorded (a
    sub-program's runs make it, its first iteration's too); there, an io_callback's results
    are zeros of their declared shapes, which serve the recording only."""
    primals, in_vars, _ = trace.lower(args)
    if trace.staging:
        outs = tuple(new_array(np.zeros(shape, dtype))
                     for shape, dtype in params.get("result_avals", ()))
    else:
        outs = bind(prim, primals, params)
    return list(trace.record(prim, params, primals, in_vars, 0, tuple(outs)))


debug_callback.defbatch(_batch_debug)
pure_callback.defbatch(_batch_pure)
io_callback.defbatch(_batch_io)
debug_callback.defstage(lambda trace, args, params: _stage_effect(trace, args, params,
                                                                  debug_callback))
io_callback.defstage(lambda trace, args, params: _stage_effect(trace, args, params,
                                                               io_callback))
pure_callback.defvjp_all(_no_derivative("Pure"))
io_callback.defvjp_all(_no_derivative("IO"))
