"""The op table, part 7: more elementwise math: unary special functions (sinc, frac,
deg2rad, erfinv, digamma, lgamma, i0, sgn...), binary ones (logaddexp, hypot, copysign,
xlogy, fmax, fmin, gcd, lcm, ldexp, nextafter, heaviside), nan_to_num, frexp, polar,
complex, and the predicates isposinf, isneginf, isreal, is_nonzero, is_same_size,
is_signed.

Declared like part 1b (`funcgrad.torch._ops_elementwise`): unary ops join its table
``UNARY`` (integer inputs become the default float dtype where PyTorch's do) and get their
in-place forms; binary ops promote as `_ops_basic._binary` does.
"""
from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.primitives.control import stop_gradient
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._ops_basic import (FUNCTIONS, METHODS, Spec, _binary, cast, np_fn, op,
                                       sp_fn)
from funcgrad.torch._ops_elementwise import UNARY, _unary_spec
from funcgrad.torch._ops_reduce import _return_type, return_types
from funcgrad.torch._tensor import Tensor, _type_word
from funcgrad.torch import _conventions
from funcgrad.torch._inplace import inplace
from funcgrad.torch._dispatch import apply

__all__ = ["frexp", "is_nonzero", "is_same_size", "is_signed", "positive", "polar",
           "complex"]

return_types.frexp = _return_type("frexp", ("mantissa", "exponent"))


def _frac(x: Any) -> Any:
    if not np.issubdtype(x.dtype, np.inexact):
        raise NotImplementedError(f'"frac_cpu" not implemented for '
                                  f"'{_type_word(D.to_torch_dtype(x.dtype))}'")
    return fnp.subtract(x, stop_gradient(fnp.trunc(x)))


def _sgn(x: Any) -> Any:
    """sign for reals; x / |x| (0 at 0) for complex numbers."""
    if not np.iscomplexobj(x):
        return _conventions.sign(x)
    magnitude = fnp.abs(x)
    zero = fnp.equal(magnitude, 0)
    return fnp.where(zero, 0, fnp.true_divide(x, fnp.where(zero, 1, magnitude)))


_NEW_UNARY = {
    "sinc": (np_fn("sinc"), "SincBackward0", True),
    "frac": (_frac, "FracBackward0", False),
    "deg2rad": (lambda x: fnp.multiply(x, math.pi / 180), "Deg2RadBackward0", True),
    "rad2deg": (lambda x: fnp.multiply(x, 180 / math.pi), "Rad2DegBackward0", True),
    "erfinv": (sp_fn("erfinv"), "ErfinvBackward0", True),
    "digamma": (sp_fn("digamma"), "DigammaBackward0", True),
    "lgamma": (sp_fn("gammaln"), "LgammaBackward0", True),
    "i0": (sp_fn("i0"), "I0Backward0", True),
    "sgn": (_sgn, "SgnBackward0", False),
}
UNARY.update(_NEW_UNARY)
for _name in _NEW_UNARY:
    op(_name, inplace=True)(_unary_spec(_name))


def _float_np(input: Tensor) -> np.dtype:
    dt = input.dtype
    return (dt if dt.is_floating_point or dt.is_complex else D.get_default_dtype()).np


@op("polygamma", method=False)
def _polygamma(n: int, input: Tensor) -> Spec:
    """The ``n``-th derivative of digamma."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    dt = _float_np(input)
    return Spec("PolygammaBackward0", lambda x: sp_fn("polygamma")(n, cast(x, dt)), [input])


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return FUNCTIONS["polygamma"](n, self)


def _polygamma_inplace(self: Tensor, n: int) -> Tensor:
    dt = _float_np(self)
    return inplace(self, "PolygammaBackward0", lambda x: sp_fn("polygamma")(
        n, cast(x, dt)), [])


METHODS["polygamma"], METHODS["polygamma_"] = _polygamma_method, _polygamma_inplace


@op("mvlgamma", inplace=True)
def _mvlgamma(input: Tensor, p: int) -> Spec:
    """The multivariate log-gamma function of dimension ``p``."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if not input.dtype.is_floating_point:
        raise RuntimeError("mvlgamma: Expected a floating point tensor as input, but got "
                           f"{_type_word(input.dtype)}")
    return Spec("MvlgammaBackward0", lambda x: sp_fn("multigammaln")(x, p), [input])


# -- binary -------------------------------------------------------------------------------

def _tensor_other(name: str, other: Any) -> None:
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


def _nan_ignoring(x: Any, y: Any, wins: Any) -> Any:
    """fmax/fmin: x where it wins (ties included) or y is NaN, else y; the gradient goes
    to the one chosen, as PyTorch's."""
    if not np.issubdtype(np.result_type(x.dtype, y.dtype), np.inexact):
        return fnp.where(wins(x, y), x, y)
    return fnp.where(fnp.logical_or(wins(x, y), fnp.isnan(y)), x, y)


def _tensor_binary(name: str, node: str, fn: Any, floating: bool) -> None:
    def spec(input: Tensor, other: Tensor) -> Spec:
        _tensor_other(name, other)
        return _binary(node, fn, input, other, floating=floating)
    spec.__name__ = name
    spec.__doc__ = f"Elementwise {name} of two tensors (broadcast, promoted)."
    op(name, inplace=name in ("hypot", "nextafter"))(spec)


for _name, _node, _fn, _floating in [
        ("logaddexp", "LogaddexpBackward0", np_fn("logaddexp"), True),
        ("logaddexp2", "Logaddexp2Backward0", np_fn("logaddexp2"), True),
        ("hypot", "HypotBackward0", np_fn("hypot"), True),
        ("fmax", "FmaxBackward0", lambda x, y: _nan_ignoring(x, y, fnp.greater_equal), False),
        ("fmin", "FminBackward0", lambda x, y: _nan_ignoring(x, y, fnp.less_equal), False)]:
    _tensor_binary(_name, _node, _fn, _floating)


@op("nextafter", inplace=True)
def _nextafter(input: Tensor, other: Tensor) -> Spec:
    """The next float after ``input`` toward ``other`` (no gradient)."""
    _tensor_other("nextafter", other)
    return _binary("NextafterBackward0", np_fn("nextafter"), input,
                   other)._replace(differentiable=False)


@op("copysign", inplace=True)
def _copysign(input: Tensor, other: Any) -> Spec:
    """|input| with the sign of ``other``."""
    node = "CopysignBackward0" if isinstance(other, Tensor) else "CopysignBackward1"
    return _binary(node, _copysign_fn, input, other, floating=True)


def _copysign_fn(x: Any, y: Any) -> Any:
    """copysign whose gradient in x is result / x (0 at x == 0), as PyTorch's; none in y."""
    ones = fnp.ones_like(x)
    ratio = stop_gradient(fnp.multiply(fnp.copysign(ones, x), fnp.copysign(ones, y)))
    return fnp.where(fnp.equal(x, 0), stop_gradient(fnp.copysign(x, y)),
                     fnp.multiply(x, ratio))


@op("xlogy", inplace=True)
def _xlogy(input: Any, other: Any) -> Spec:
    """x * log(y), 0 where x == 0 (unless y is NaN)."""
    node = ("XlogyBackward1" if not isinstance(input, Tensor) else
            "XlogyBackward2" if not isinstance(other, Tensor) else "XlogyBackward0")
    return _binary(node, sp_fn("xlogy"), input, other, floating=True)


@op("heaviside", inplace=True)
def _heaviside(input: Tensor, values: Tensor) -> Spec:
    """0 for x < 0, ``values`` at 0, 1 for x > 0 (no gradient)."""
    _tensor_other("heaviside", values)
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different "
                           "dtypes.")
    dt = input.dtype.np
    return Spec("HeavisideBackward0", lambda x, v: fnp.astype(fnp.heaviside(x, v), dt),
                [input, values], differentiable=False)


def _integer_binary(name: str, numpy_name: str | None = None, kernel: str | None = None
                    ) -> None:
    """An op of integer tensors only (``kernel``: the name PyTorch's error gives it)."""
    def spec(input: Tensor, other: Tensor) -> Spec:
        for t in (input, other):
            if isinstance(t, Tensor) and t.dtype.np.kind not in "iu":
                raise NotImplementedError(f'"{kernel or name}_cpu" not implemented for '
                                          f"'{_type_word(t.dtype)}'")
        return _binary(name, np_fn(numpy_name or name), input, other)._replace(
            differentiable=False)
    spec.__name__ = name
    spec.__doc__ = f"The elementwise {name} of integer tensors."
    op(name, inplace=True)(spec)


_integer_binary("gcd")
_integer_binary("lcm")
_integer_binary("bitwise_left_shift", "left_shift", "lshift")
_integer_binary("bitwise_right_shift", "right_shift", "rshift")


@op("ldexp")  # (ldexp_: `funcgrad.torch._legacy_api`, with its own check)
def _ldexp(input: Tensor, other: Tensor) -> Spec:
    """input * 2 ** other."""
    dt = _float_np(input) if not (isinstance(other, Tensor) and other.dtype.is_floating_point
                                  ) else np.result_type(_float_np(input), other.dtype.np)
    return Spec("LdexpBackward0", lambda x, e: fnp.multiply(cast(x, dt), fnp.exp2(
        fnp.astype(e, dt))), [input, other])


@op("nan_to_num", inplace=True)
def _nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
                neginf: float | None = None) -> Spec:
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest values
    unless given); the gradient is 0 at the replaced elements."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        return Spec("NanToNumBackward0", lambda x: x, [input])
    info = np.finfo(input.dtype.np)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf

    def f(x: Any) -> Any:
        out = fnp.where(fnp.isnan(x), nan, x)
        out = fnp.where(fnp.isposinf(x), hi, out)
        return fnp.astype(fnp.where(fnp.isneginf(x), lo, out), x.dtype)
    return Spec("NanToNumBackward0", f, [input])


def frexp(input: Tensor) -> Any:
    """``(mantissa, exponent)`` with input = mantissa * 2 ** exponent, |mantissa| in
    [0.5, 1); the mantissa's gradient is 2 ** -exponent."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")

    def f(x: Any) -> tuple:
        exponent = stop_gradient(fnp.frexp(x)[1])
        mantissa = fnp.multiply(x, fnp.exp2(fnp.negative(fnp.astype(exponent, x.dtype))))
        mantissa = fnp.where(fnp.isfinite(x), mantissa, x)
        return mantissa, fnp.astype(exponent, np.int32)
    return return_types.frexp(*apply("FrexpBackward0", f, [input], multi=True))


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """The complex numbers abs * (cos(angle) + i sin(angle))."""
    _same_float("polar", abs, angle)
    return apply("PolarBackward0", lambda r, t: fnp.add(
        fnp.multiply(r, fnp.cos(t)), fnp.multiply(fnp.multiply(r, fnp.sin(t)), 1j)),
        [abs, angle])


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001 - PyTorch's name
    """The complex tensor real + i imag."""
    _same_float("complex", real, imag)
    return apply("ComplexBackward0", lambda a, b: fnp.add(a, fnp.multiply(b, 1j)),
                 [real, imag])


def _same_float(name: str, a: Tensor, b: Tensor) -> None:
    for t in (a, b):
        if t.dtype not in (D.float32, D.float64, D.float16):
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but "
                               f"got {_type_word(a.dtype)} and {_type_word(b.dtype)}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {_type_word(a.dtype)} but got "
                           f"scalar type {_type_word(b.dtype)} for second argument")


# -- predicates (no gradient) --------------------------------------------------------------

def _predicate(name: str, fn: Any) -> None:
    def spec(input: Tensor) -> Spec:
        return Spec(name, fn, [input], differentiable=False)
    spec.__name__ = name
    op(name)(spec)


_predicate("isposinf", np_fn("isposinf"))
_predicate("isneginf", np_fn("isneginf"))
_predicate("isreal", lambda x: fnp.equal(fnp.imag(x), 0) if np.iscomplexobj(x) else
           fnp.ones(x.shape, np.bool_))


def positive(input: Tensor) -> Tensor:
    """``+input``: the tensor itself (not for bools, as in PyTorch)."""
    if input.dtype is D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def is_nonzero(input: Tensor) -> bool:
    """Whether the one-element tensor is not zero."""
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item() != 0)


def is_same_size(input: Tensor, other: Tensor) -> bool:
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input: Tensor) -> bool:
    """Whether the dtype holds negative numbers (floats, complex, signed integers)."""
    return input.dtype.np.kind in "fciV"


for _f in (frexp, positive, is_nonzero, is_same_size, is_signed):
    FUNCTIONS[_f.__name__] = METHODS[_f.__name__] = _f
FUNCTIONS["polar"], FUNCTIONS["complex"] = polar, complex
