"""Reverse mode from a JVP rule, as JAX derives it: linearize, then transpose.

A JAX-style primitive (`funcgrad.extend.primitive`) is given a JVP rule written with other
primitives (often itself: multiply_add's tangent is ``multiply_add(xt, y,
multiply_add(x, yt, zt))``), and transpose rules for the primitives it uses linearly. Its
VJP runs the rule with the input tangents as tracers of a `LinearTrace`: a reverse-mode
trace that records the tangent computation (the linear program) with the shapes of its
values only (meta arrays), so nothing of it runs or reaches an outer transform. Each
JAX-style primitive applied to tangents is recorded as a `linear_call`, whose VJP is that
primitive's transpose rule with `UndefinedPrimal` for the tangent arguments; funcgrad's own
primitives keep their VJP rules, which on a linear use are the transpose. The tape's
backward pass from the output cotangent is then the primitive's VJP; the rules it runs are
funcgrad ops, so outer transforms (jit, grad of grad) trace them.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import funcgrad.numpy as fnp
from funcgrad.avals import ShapedArray, shaped_array_of
from funcgrad.core import Primitive, bind, is_inexact
from funcgrad.meta import def_meta_impl, to_meta
from .tape import RevTrace, trace_flat

__all__ = ["Zero", "UndefinedPrimal", "is_undefined_primal", "instantiate_zeros",
           "TransposablePrimitive", "LinearTrace", "transpose_jvp"]


class Zero:
    """A tangent or cotangent known to be zero (JAX's ``ad.Zero``), of abstract value
    ``aval``: JAX-style rules receive it instead of an array of zeros."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    @staticmethod
    def from_primal_value(x: Any) -> "Zero":
        return Zero(shaped_array_of(x))

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


class UndefinedPrimal:
    """What a transpose rule receives for an argument the primitive is linear in (JAX's
    ``ad.UndefinedPrimal``): its abstract value, not a value."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x: Any) -> bool:
    return type(x) is UndefinedPrimal


def instantiate_zeros(t: Any) -> Any:
    """An array of zeros for a `Zero`; anything else unchanged."""
    return fnp.zeros(t.aval.shape, t.aval.dtype) if type(t) is Zero else t


class TransposablePrimitive(Primitive):
    """A primitive with a transpose rule for its linear uses: what a `LinearTrace` records
    as a `linear_call`. ``transpose(ct, args, params)`` returns one cotangent per argument
    (``None`` where zero or not linear); `funcgrad.extend.primitive` implements it."""

    def transpose(self, ct: Any, args: Sequence, params: dict) -> list:
        raise NotImplementedError


def _linear_call_vjp(g: Any, xs: tuple, prim: TransposablePrimitive, linear: tuple,
                     prim_params: dict) -> list:
    args = [UndefinedPrimal(shaped_array_of(x)) if lin else x for x, lin in zip(xs, linear)]
    return prim.transpose(g, args, prim_params)


def _linear_call(multiple_results: bool) -> Primitive:
    """The primitive a JAX-style primitive's linear use is recorded as (one of single,
    one of several results): its VJP is the primitive's transpose rule."""
    p = Primitive("linear_call" + ("_multiple" if multiple_results else ""),
                  lambda *xs, prim, linear, prim_params: prim.impl(*xs, **prim_params),
                  None, ("prim", "linear", "prim_params"), multiple_results=multiple_results,
                  # only a linear tape's backward pass uses its VJP (the transpose): it is
                  # bound on meta arrays alone, so no transform differentiates through it
                  differentiable=False,
                  doc="A JAX-style primitive applied to tangents, transposed by its rule.")
    p.defvjp_all(_linear_call_vjp)
    p.defbatch(lambda xs, dims, prim, linear, prim_params:
               prim.batch_rule(xs, dims, **prim_params))
    def_meta_impl(p, lambda *xs, prim, linear, prim_params: bind(prim, xs, prim_params))
    return p


linear_call = _linear_call(False)
linear_call_multiple = _linear_call(True)


def _shape_of(x: Any) -> Any:
    """A stand-in of ``x`` for shape computation: a meta array (a Python number as is)."""
    return x if type(x) in (bool, int, float, complex) else to_meta(x)


class LinearTrace(RevTrace):
    """The reverse-mode trace of a JVP rule's tangent computation (see the module
    docstring): records carry the real constants (the rules' residuals) but results are
    meta arrays, computed from shapes."""

    def process(self, prim: Primitive, args: Sequence, params: dict) -> Any:
        primals, in_vars, mask = self.lower(args)
        if isinstance(prim, TransposablePrimitive):
            params = {"prim": prim, "linear": tuple(v >= 0 for v in in_vars),
                      "prim_params": params}
            prim = linear_call_multiple if prim.multiple_results else linear_call
        out = bind(prim, [_shape_of(p) for p in primals], params)
        return self.record(prim, params, primals, in_vars, mask, out)


def transpose_jvp(tangent_of: Callable[[list], Any], primals: Sequence, ct: Any) -> list:
    """The cotangent of each of ``primals`` (None where zero) for output cotangent ``ct``
    (a list for several outputs), of the linear map ``tangent_of(tangents)``: a JVP rule's
    output tangent at ``primals``. Inputs that carry no derivative get `Zero` tangents."""
    diff = [i for i, p in enumerate(primals) if is_inexact(shaped_array_of(p).dtype)]

    def linear(*ts: Any) -> Any:
        tangents = [Zero.from_primal_value(p) for p in primals]
        for i, t in zip(diff, ts):
            tangents[i] = t
        out = tangent_of(tangents)
        if isinstance(out, (tuple, list)):
            return [instantiate_zeros(o) for o in out]
        return instantiate_zeros(out)

    tape, _ = trace_flat(linear, [to_meta(primals[i]) for i in diff],
                         trace=LinearTrace("transpose"))
    cts = tape.backward(ct if isinstance(ct, (list, tuple)) else [ct])
    out: list = [None] * len(primals)
    for i, c in zip(diff, cts):
        out[i] = c
    return out
