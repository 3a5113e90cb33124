"""Special functions: erf, erfc, gammaln, digamma, polygamma, expit, i0, i1.

Each is a primitive because its derivative is another special function (digamma's is
polygamma(1, .), polygamma(n, .)'s is polygamma(n + 1, .)), which makes every order of
derivative available. The values come from scipy.special when scipy is installed (an
optional dependency), cupyx.scipy.special for GPU arrays, and otherwise from the pure-numpy
fallbacks below: math.erf/erfc/lgamma vectorised, and for digamma and polygamma the
recurrence psi(x) = psi(x + 1) - 1/x up to x >= 20 followed by the asymptotic series in
Bernoulli numbers (accurate to about 1e-14 relative). Results keep the input's float dtype.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from funcgrad.core import ZERO, Primitive
from . import sampling
from .binary import where
from .elementwise import exp, nonzero_or_one, unary

try:
    import scipy.special as _scipy_special
except ImportError:  # scipy is optional: the fallbacks below take over
    _scipy_special = None

# B_2, B_4, ..., B_20
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330)
_ASYMPTOTIC_FROM = 20.0


def _float_dtype(x: Any) -> np.dtype:
    """The float dtype of a result computed from x (float64 for integer input)."""
    dtype = x.dtype if hasattr(x, "dtype") else np.result_type(x)
    return dtype if np.issubdtype(dtype, np.floating) else np.dtype(np.float64)


def backend_impl(name: str, fallback: Callable) -> Callable:
    """The implementation of special function ``name``: cupyx.scipy.special for GPU
    arrays, scipy.special if installed, else ``fallback``; cast to the input's float
    dtype. The last argument is the one that sets the dtype."""
    def impl(*args: Any) -> Any:
        x = args[-1]
        if hasattr(x, "__cuda_array_interface__"):
            import cupyx.scipy.special as lib
            out = getattr(lib, name)(*args)
        elif _scipy_special is not None:
            out = getattr(_scipy_special, name)(*args)
        else:
            out = fallback(*args)
        return out.astype(_float_dtype(x), copy=False)
    impl.__name__ = name
    return impl


# -- pure-numpy fallbacks -----------------------------------------------------------------

def _vectorize(f: Callable) -> Callable:
    ufunc = np.frompyfunc(f, 1, 1)
    return lambda x: np.asarray(ufunc(np.asarray(x, np.float64)), np.float64)


def _lgamma(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # a pole: 0, -1, -2, ...
        return math.inf


def _shift_up(x: np.ndarray, term: Callable[[np.ndarray], np.ndarray]) -> tuple:
    """(x shifted by whole steps to >= 20, the sum of ``term`` over the skipped points)."""
    acc = np.zeros_like(x)
    x = x.copy()
    low = x < _ASYMPTOTIC_FROM
    while low.any():
        acc[low] += term(x[low])
        x[low] += 1.0
        low = x < _ASYMPTOTIC_FROM
    return x, acc


def digamma_fallback(x: Any) -> np.ndarray:
    """psi(x): reflection psi(x) = psi(1 - x) - pi / tan(pi x) below 1/2, recurrence up to
    20, then ln x - 1/(2x) - sum B_2k / (2k x^2k). -inf at 0, nan at negative integers."""
    x = np.asarray(x, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        reflect = x < 0.5
        y, acc = _shift_up(np.where(reflect, 1.0 - x, x), lambda v: -1.0 / v)
        inv2 = 1.0 / (y * y)
        series = sum(b / (2 * k) * inv2 ** k for k, b in enumerate(_BERNOULLI, 1))
        out = acc + np.log(y) - 0.5 / y - series
        frac = x - np.round(x)  # tan(pi x) from the fractional part keeps its precision
        out = np.where(reflect, out - np.pi / np.tan(np.pi * frac), out)
        return np.where(x == 0, -np.inf, np.where((x < 0) & (frac == 0), np.nan, out))


def polygamma_fallback(n: Any, x: Any) -> np.ndarray:
    """psi^(n)(x) for integer n >= 0: recurrence psi^(n)(x) = psi^(n)(x + 1) +
    (-1)^(n+1) n! / x^(n+1) up to 20, then (-1)^(n+1) [(n-1)!/x^n + n!/(2 x^(n+1)) +
    sum B_2k (2k+n-1)! / ((2k)! x^(2k+n))]."""
    n, x = np.broadcast_arrays(np.asarray(n), np.asarray(x, np.float64))
    out = np.empty(x.shape)
    for order in np.unique(n):
        at = n == order
        out[at] = _polygamma_of_order(int(order), x[at])
    return out


def _polygamma_of_order(n: int, x: np.ndarray) -> np.ndarray:
    if n < 0:
        return np.full(x.shape, np.nan)
    if n == 0:
        return digamma_fallback(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        y, acc = _shift_up(x, lambda v: 1.0 / v ** (n + 1))
        series = sum(b * math.factorial(2 * k + n - 1) / math.factorial(2 * k)
                     / y ** (2 * k + n) for k, b in enumerate(_BERNOULLI, 1))
        tail = math.factorial(n - 1) / y ** n + math.factorial(n) / (2 * y ** (n + 1))
        return (-1) ** (n + 1) * (math.factorial(n) * acc + tail + series)


def expit_fallback(x: Any) -> Any:
    """1 / (1 + exp(-x)) as exp(-log(1 + exp(-x))): no overflow for any x."""
    return np.exp(-np.logaddexp(0, -np.asarray(x)))


def i1_fallback(x: Any) -> np.ndarray:
    """I_1(x) = sum_k (x/2)^(2k+1) / (k! (k+1)!): all terms share x's sign, so the sum
    has no cancellation; it runs until the terms stop contributing."""
    x = np.asarray(x, np.float64)
    half = x / 2
    term = half.copy()
    total = term.copy()
    k = 0
    with np.errstate(over="ignore", invalid="ignore"):
        while np.any(np.abs(term) > 1e-17 * np.abs(total)):
            term = term * half * half / ((k + 1) * (k + 2))
            total = total + term
            k += 1
    return total


_FALLBACKS = {"erf": _vectorize(math.erf), "erfc": _vectorize(math.erfc),
              "gammaln": _vectorize(_lgamma), "digamma": digamma_fallback,
              "polygamma": polygamma_fallback, "expit": expit_fallback,
              "i0": np.i0, "i1": i1_fallback}


def _impl(name: str) -> Callable:
    return backend_impl(name, _FALLBACKS[name])


# -- the table ----------------------------------------------------------------------------

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)

erf = unary("erf", _impl("erf"), lambda g, x: g * _TWO_OVER_SQRT_PI * exp(-x * x),
            complex_=False)
erfc = unary("erfc", _impl("erfc"), lambda g, x: -g * _TWO_OVER_SQRT_PI * exp(-x * x),
             complex_=False)
gammaln = unary("gammaln", _impl("gammaln"), lambda g, x: g * digamma(x),
                domain=(0.2, 3.0), complex_=False)
digamma = unary("digamma", _impl("digamma"), lambda g, x: g * polygamma(1, x),
                domain=(0.2, 3.0), complex_=False)
expit = unary("expit", _impl("expit"), lambda g, out: g * out * (1 - out), complex_=False)


def _i1_slope(g: Any, x: Any) -> Any:
    """I_1'(x) = I_0(x) - I_1(x) / x, which is 1/2 at x = 0."""
    return g * where(x == 0, 0.5, i0(x) - i1(x) / nonzero_or_one(x))


# the modified Bessel functions of the first kind of orders 0 and 1 (numpy's i0)
i0 = unary("i0", _impl("i0"), lambda g, x: g * i1(x), complex_=False)
i1 = unary("i1", _impl("i1"), _i1_slope, complex_=False)


def _polygamma_cases(rng: np.random.RandomState, draw: Any) -> list:
    from hypothesis import strategies as st
    n = draw(st.integers(0, 3))
    shape = sampling.draw_shape(draw)
    return [sampling.Case(lambda x: polygamma(n, x),
                          (sampling.values(rng, shape, (0.3, 3.0)),), f"n={n} {shape}")]


polygamma = Primitive("polygamma", _impl("polygamma"), ("n", "x"),
                      sample=sampling.custom(_polygamma_cases),
                      doc="The n-th derivative of digamma (integer n >= 0).")
polygamma.defvjp(ZERO, lambda g, n, x: g * polygamma(n + 1, x))
polygamma.defjvp(ZERO, lambda t, n, x: t * polygamma(n + 1, x))
