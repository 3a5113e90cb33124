"""Elementwise functions of funcgrad.numpy under numpy's names and signatures.

Most are primitives exported as they are (no wrapper on the hot path: ``fnp.add`` *is* the
primitive, and calling it is `Primitive.bind`). The rest are composed from primitives, so they are differentiable to any order:
clip (maximum/minimum, so ties split the gradient as in JAX), fmax/fmin, float_power,
angle, deg2rad, fabs, divmod. Wrappers exist only where numpy's signature needs work
(keyword arguments, real-input shortcuts for real/imag/conj).
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from funcgrad._config import default_float
from funcgrad._promotion import INEXACT
from funcgrad.array import Array
from funcgrad.numpy._creation import asarray, astype, promote_dtypes, zeros_like
from funcgrad.primitives import elementwise as E, select
from funcgrad.primitives.elementwise import (
    neg as negative, sin, cos, tan, arcsin, arccos, arctan, sinh, cosh, tanh, arcsinh,
    arccosh, arctanh, exp, exp2, expm1, log, log2, log10, log1p, sqrt, cbrt, square,
    reciprocal, abs, sign, floor, ceil, trunc, rint, isfinite, isnan, isinf, signbit,
    logical_not, invert, spacing, bitwise_count)
from funcgrad.primitives.binary import (
    add, sub as subtract, mul as multiply, div as true_divide, power, floor_divide, mod,
    fmod, maximum, minimum, arctan2, hypot, logaddexp, logaddexp2, copysign, equal,
    not_equal, less, less_equal, greater, greater_equal, logical_and, logical_or,
    logical_xor, bitwise_and, bitwise_or, bitwise_xor, left_shift, right_shift, nextafter,
    heaviside, ldexp, gcd, lcm)
from funcgrad.primitives.bessel import i0
from funcgrad import numpy as fnp

__all__ = [
    "negative", "positive", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
    "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "exp", "exp2", "expm1", "log", "log2",
    "log10", "log1p", "sqrt", "cbrt", "square", "reciprocal", "abs", "absolute", "fabs",
    "sign", "floor", "ceil", "trunc", "fix", "rint", "round", "around", "sinc", "deg2rad",
    "rad2deg", "radians", "degrees", "real", "imag", "conj", "conjugate", "angle",
    "isfinite", "isnan", "isinf", "signbit", "logical_not", "invert", "bitwise_not",
    "bitwise_invert", "add", "subtract", "multiply", "divide", "true_divide",
    "floor_divide", "power", "pow", "float_power", "mod", "remainder", "fmod", "divmod",
    "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot", "logaddexp", "logaddexp2",
    "copysign", "where", "clip", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "logical_and_bitwise",
    "logical_or_bitwise", "logical_xor_bitwise", "acos", "asin", "atan", "acosh", "asinh",
    "atanh", "atan2", "spacing", "bitwise_count", "nextafter", "heaviside", "ldexp", "gcd",
    "lcm", "i0", "bitwise_left_shift", "bitwise_right_shift", "modf", "frexp", "isposinf",
    "isneginf", "isreal", "iscomplex", "isrealobj", "iscomplexobj", "nan_to_num",
    "real_if_close",
]

# numpy's aliases (and the Array API's names, as numpy 2 has them)
divide = true_divide
absolute = abs
remainder = mod
pow = power
fix = trunc
bitwise_not = bitwise_invert = invert
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift
acos, asin, atan, acosh, asinh, atanh, atan2 = (arccos, arcsin, arctan, arccosh, arcsinh,
                                                 arctanh, arctan2)
# the Array operators &, |, ^: numpy's bitwise ufuncs, which are logical on booleans
logical_and_bitwise, logical_or_bitwise, logical_xor_bitwise = (bitwise_and, bitwise_or,
                                                                bitwise_xor)


def _is_complex(x: Any) -> bool:
    return np.iscomplexobj(x)


def positive(x: Any) -> Array:
    """+x: x itself (Arrays are immutable, so no copy is needed)."""
    return asarray(x)


def real(val: Any) -> Array:
    """The real part (x itself for a real input)."""
    return E.real(val) if _is_complex(val) else asarray(val)


def imag(val: Any) -> Array:
    """The imaginary part (constant zeros for a real input)."""
    return E.imag(val) if _is_complex(val) else zeros_like(val)


def conj(x: Any) -> Array:
    """The complex conjugate (x itself for a real input)."""
    return E.conj(x) if _is_complex(x) else asarray(x)


conjugate = conj


def angle(z: Any, deg: bool = False) -> Array:
    """The argument of z: arctan2(imag, real); for a real input arctan2(0, z): pi where the
    sign bit is set (-0 included), else 0, NaN at NaN; a constant."""
    if _is_complex(z):
        out = arctan2(E.imag(z), E.real(z))
    else:
        z = asarray(z)
        dtype = z.dtype if np.issubdtype(z.dtype, np.floating) else default_float()
        out = astype(where(signbit(z), math.pi, 0.0), dtype)
        if np.issubdtype(z.dtype, np.floating):  # numpy's arctan2(0, nan) is nan
            out = where(isnan(z), math.nan, out)
    return out * (180 / math.pi) if deg else out


def fabs(x: Any) -> Array:
    """|x| for real x (numpy's fabs rejects complex input)."""
    if _is_complex(x):
        raise TypeError("fabs is not defined for complex input; use abs (absolute) for the "
                        "modulus of complex numbers")
    x = asarray(x)
    return abs(astype(x, np.fabs(np.zeros(0, x.dtype)).dtype))


def round(a: Any, decimals: int = 0) -> Array:
    """a rounded to ``decimals`` decimals, halves to even (derivative 0)."""
    return E.round(a, decimals=operator.index(decimals))


around = round


def sinc(x: Any) -> Array:
    """sin(pi x)/(pi x), 1 at 0; differentiable to any order (0 included)."""
    return E.sinc(x, order=0)


def deg2rad(x: Any) -> Array:
    return multiply(x, math.pi / 180)


def rad2deg(x: Any) -> Array:
    return multiply(x, 180 / math.pi)


radians, degrees = deg2rad, rad2deg


def float_power(x1: Any, x2: Any) -> Array:
    """x1 ** x2 computed in an inexact dtype: jax.numpy's (float32 for 32-bit inputs, where
    numpy computes in float64)."""
    return power(*promote_dtypes(x1, x2, rule=INEXACT))


def divmod(x1: Any, x2: Any) -> tuple:
    """(x1 // x2, x1 % x2)."""
    return floor_divide(x1, x2), mod(x1, x2)


def fmax(x1: Any, x2: Any) -> Array:
    """The larger of x1 and x2, ignoring NaNs; at ties the gradient goes to x2 (JAX)."""
    return where(logical_or(greater(x1, x2), isnan(x2)), x1, x2)


def fmin(x1: Any, x2: Any) -> Array:
    """The smaller of x1 and x2, ignoring NaNs; at ties the gradient goes to x2 (JAX)."""
    return where(logical_or(less(x1, x2), isnan(x2)), x1, x2)


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """x where condition holds, else y; ``where(condition)`` is ``nonzero(condition)``."""
    if x is None and y is None:
        return fnp.nonzero(condition)
    if x is None or y is None:
        raise ValueError("where takes either only the condition or all of condition, x "
                         "and y")
    return select.where(condition, x, y)


_UNSET: Any = object()


def clip(a: Any, /, min: Any = None, max: Any = None, *, a_min: Any = _UNSET,
         a_max: Any = _UNSET) -> Array:
    """a limited to [min, max] (either may be None; numpy's older names a_min and a_max
    are accepted as keywords): maximum(min, a), then minimum(max, .), so that at a bound
    the gradient is split 0.5/0.5 as in JAX."""
    lo = min if a_min is _UNSET else a_min
    hi = max if a_max is _UNSET else a_max
    out = asarray(a)
    if lo is not None:
        out = maximum(lo, out)
    if hi is not None:
        out = minimum(hi, out)
    return out


def modf(x: Any) -> tuple:
    """(fractional part, integral part), both with x's sign; the fractional part has
    slope 1."""
    return E.modf(x)


def frexp(x: Any) -> tuple:
    """(mantissa m, exponent e) with x = m * 2**e and 0.5 <= |m| < 1; m is differentiable
    (slope 2**-e), e is an integer."""
    e = E.frexp_exponent(x)
    return ldexp(x, -e), e


def _real_input(x: Any, name: str) -> Array:
    x = asarray(x)
    if _is_complex(x):
        raise TypeError(f"This operation is not supported for complex values because it "
                        f"would be ambiguous ({name})")
    return x


def isposinf(x: Any) -> Array:
    """Whether each element is +inf (real input only)."""
    x = _real_input(x, "isposinf")
    return logical_and(isinf(x), logical_not(signbit(x)))


def isneginf(x: Any) -> Array:
    """Whether each element is -inf (real input only)."""
    x = _real_input(x, "isneginf")
    return logical_and(isinf(x), signbit(x))


def isreal(x: Any) -> Array:
    """Whether each element has a zero imaginary part (True for real arrays)."""
    x = asarray(x)
    return equal(E.imag(x), 0) if _is_complex(x) else equal(zeros_like(x, dtype=bool), False)


def iscomplex(x: Any) -> Array:
    """Whether each element has a non-zero imaginary part."""
    return logical_not(isreal(x))


def isrealobj(x: Any) -> bool:
    """Whether x's dtype is not complex (whatever its values)."""
    return not iscomplexobj(x)


def iscomplexobj(x: Any) -> bool:
    """Whether x's dtype is complex (whatever its values)."""
    dtype = getattr(x, "dtype", None)
    return np.dtype(dtype).kind == "c" if dtype is not None else np.iscomplexobj(x)


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None,
               neginf: Any = None) -> Array:
    """x with NaN replaced by ``nan`` and infinities by ``posinf``/``neginf`` (the largest
    finite values by default); the gradient passes through the finite elements."""
    x = asarray(x)
    if _is_complex(x):
        return add(nan_to_num(E.real(x), nan=nan, posinf=posinf, neginf=neginf),
                   multiply(nan_to_num(E.imag(x), nan=nan, posinf=posinf, neginf=neginf),
                            1j))
    if x.dtype.kind not in "f":
        return x
    info = np.finfo(x.dtype)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    out = where(isnan(x), nan, x)
    out = where(isposinf(x), big, out)
    return astype(where(isneginf(x), small, out), x.dtype)


def real_if_close(a: Any, tol: float = 100) -> Array:
    """The real part of a complex ``a`` whose imaginary parts are all within ``tol``
    machine epsilons of zero (tol > 1), or below ``tol`` itself (tol <= 1); else a."""
    a = asarray(a)
    if not _is_complex(a):
        return a
    limit = tol * np.finfo(a.dtype).eps if tol > 1 else tol
    if bool(np.all(np.abs(np.imag(a.concrete().to_numpy())) < limit)):
        return E.real(a)
    return a
