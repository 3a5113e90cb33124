"""``jax.interpreters.mlir``'s lowering registration, onto funcgrad's compiled programs.

JAX lowers a primitive to XLA; funcgrad's `jit` compiles a program to numpy code, so a
lowering here is a rule computing the primitive on numpy arrays: ``rule(ctx, *arrays,
**params)`` returning the list of results, as JAX's does for its values. `lower_fun`
makes one from a function (JAX's name). A lowering that builds XLA operations (``hlo.*``)
cannot run on arrays: it fails with an error naming the fix.
"""
from __future__ import annotations

from typing import Any, Callable

from funcgrad.array import Array, to_raw
from funcgrad.avals import ShapedArray, shaped_array_of
from funcgrad.core import Primitive
from funcgrad.extend.primitive import JaxStylePrimitive

__all__ = ["register_lowering", "lower_fun", "LoweringRuleContext"]

_PLATFORMS = ("cpu", "cuda", "rocm", "gpu", "tpu")


class LoweringRuleContext:
    """What a lowering rule gets first (JAX's ``ctx``): the primitive, the inputs' and
    outputs' abstract values, the platforms."""

    platforms = ("cpu",)

    def __init__(self, primitive: JaxStylePrimitive, args: tuple, params: dict):
        self.primitive = primitive
        self._args = args
        self._params = params

    @property
    def avals_in(self) -> list[ShapedArray]:
        return [shaped_array_of(a) for a in self._args]

    @property
    def avals_out(self) -> list[ShapedArray]:
        out = self.primitive.abstract_eval(*self.avals_in, **self._params)
        return list(out) if self.primitive.multiple_results else [out]


def _raw(x: Any) -> Any:
    return x._value if type(x) is Array else to_raw(x)


def _xla_error(prim: Primitive, rule: Callable, err: Exception) -> NotImplementedError:
    code = getattr(rule, "__code__", None)
    builds = code is not None and {"hlo", "mlir", "ir"} & set(code.co_names)
    why = ("it builds XLA operations" if builds else "it does not compute on numpy arrays")
    return NotImplementedError(
        f"the lowering {getattr(rule, '__name__', rule)!r} of primitive '{prim.name}' "
        f"failed on numpy arrays ({type(err).__name__}: {err}): {why}. funcgrad's jit "
        "compiles to numpy code, so XLA/MLIR lowerings (hlo.* ops, custom calls) cannot "
        "run; register a lowering that computes on numpy arrays: "
        "mlir.register_lowering(p, mlir.lower_fun(impl, multiple_results=False)), or "
        "lambda ctx, *args, **params: [result].")


def register_lowering(prim: Primitive, rule: Callable, platform: str | None = None
                      ) -> Callable:
    """Give a JAX-style primitive its compiled-program implementation, ``rule(ctx,
    *arrays, **params) -> [results]``. funcgrad's programs run on the arrays' device as
    numpy (cupy) code: a lowering for ``cpu`` (or for all platforms, ``None``) is that
    code; lowerings for other platforms are XLA's custom calls and are not used."""
    if not isinstance(prim, JaxStylePrimitive):
        raise TypeError(f"funcgrad's own primitive '{prim.name}' is compiled from its "
                        "implementation; lowerings are registered for primitives made "
                        "with Primitive(name)")
    if platform is not None and platform not in _PLATFORMS:
        raise ValueError(f"unknown platform {platform!r}: one of {', '.join(_PLATFORMS)}")
    if platform not in (None, "cpu"):
        return rule

    def lowered(*args: Any, **params: Any) -> Any:
        try:
            outs = rule(LoweringRuleContext(prim, args, params), *args, **params)
            outs = [_raw(o) for o in outs] if isinstance(outs, (list, tuple)) else \
                [_raw(outs)]
        except NotImplementedError:
            raise
        except Exception as err:
            raise _xla_error(prim, rule, err) from err
        return outs if prim.multiple_results else outs[0]
    lowered.__name__ = prim.name
    prim.lowering = lowered
    return rule


def lower_fun(fun: Callable, multiple_results: bool = True) -> Callable:
    """A lowering computing ``fun(*arrays, **params)`` (JAX's ``mlir.lower_fun``)."""
    def rule(ctx: LoweringRuleContext, *args: Any, **params: Any) -> list:
        out = fun(*args, **params)
        return list(out) if multiple_results else [out]
    return rule
