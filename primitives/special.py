"""Special functions of one or two arguments: erf and its inverses, the gamma family, beta,
xlogy, spence.

Each is a primitive because its derivative is another special function (digamma's is
polygamma(1, .), polygamma(n, .)'s is polygamma(n + 1, .)), which makes every order of
derivative available. Values come from cupyx.scipy.special for GPU arrays, scipy.special
when scipy is installed (the ``scipy`` extra), and otherwise from the pure-numpy kernels in
`funcgrad.primitives.kernels.special` where there is one (erf, erfc, gammaln, digamma,
polygamma, expit, i0, i1, xlogy, xlog1py); the others raise an ImportError naming the
extra.
Results have the float dtype of their floating inputs (float64 for integer inputs).

| primitive     | derivative                                                            |
|---------------|-----------------------------------------------------------------------|
| erf, erfc     | +-2/sqrt(pi) exp(-x^2)                                                |
| erfinv        | sqrt(pi)/2 exp(out^2) (erfcinv: its negative)                         |
| gammaln       | digamma(x)                                                            |
| gamma         | gamma(x) digamma(x)                                                   |
| rgamma        | -rgamma(x) digamma(x); at the zeros x = -n: (-1)^n n!                 |
| gammasgn      | 0                                                                     |
| digamma       | polygamma(1, x); polygamma(n, x): polygamma(n + 1, x)                 |
| beta, betaln  | (digamma(a) - digamma(a + b)) times beta (or 1), symmetric in b       |
| xlogy         | log(y) in x; x / y in y, 0 where x == y == 0 (xlog1py: log1p(y), x/(1+y))|
| spence        | log(z) / (1 - z) (its Taylor series near z = 1)                        |
| expit         | out (1 - out)                                                         |
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from funcgrad.core import ZERO, Primitive, is_inexact
from . import sampling
from .binary import binary
from .select import where
from .elementwise import abs, cos, exp, floor, log, log1p, unary
from .kernels import special as K
from .samplers import special as samples
from .batching import broadcasting
from .promotion import INEXACT_OPS

try:
    import scipy.special as _scipy_special
except ImportError:  # scipy is optional: the kernels' fallbacks take over where they exist
    _scipy_special = None


def float_dtype(args: tuple) -> np.dtype:
    """The inexact dtype of a result computed from ``args``: that of the floating arrays
    among them (Python numbers are weak, as in numpy), float64 when there are none; a
    Python complex makes it complex."""
    dtypes = [a.dtype for a in args if is_inexact(getattr(a, "dtype", np.int8))]
    dtype = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
    if any(isinstance(a, complex) for a in args):
        dtype = np.result_type(dtype, np.complex64)
    return dtype


def missing_scipy(name: str) -> Callable:
    """The stand-in implementation of a scipy-backed function when scipy is absent."""
    def missing(*args: Any, **params: Any) -> Any:
        raise ImportError(f"the special function {name!r} is computed by scipy.special, and "
                          "scipy is not installed; install funcgrad's scipy extra: "
                          "pip install 'funcgrad[scipy]'")
    return missing


def backend_impl(name: str, fallback: Callable | None = None) -> Callable:
    """The implementation of special function ``name``: cupyx.scipy.special for GPU
    arrays, scipy.special if installed, else ``fallback`` (or an ImportError naming the
    ``scipy`` extra); cast to the float dtype of the inputs (`float_dtype`)."""
    fallback = fallback or missing_scipy(name)

    def impl(*args: Any) -> Any:
        if any(hasattr(a, "__cuda_array_interface__") for a in args):
            import cupyx.scipy.special as lib  # optional: only for GPU arrays
            out = getattr(lib, name)(*args)
        elif _scipy_special is not None:
            out = getattr(_scipy_special, name)(*args)
        else:
            out = fallback(*args)
        return out.astype(float_dtype(args), copy=False)
    impl.__name__ = name
    return impl


def not_implemented(name: str, argument: str, note: str = "") -> Callable:
    """A rule for an argument the function is not differentiated in: it raises, naming it."""
    def rule(g: Any) -> Any:
        raise NotImplementedError(f"the derivative of {name} with respect to {argument} is "
                                  f"not implemented{note}")
    rule.__name__ = f"{name}_d{argument}_not_implemented"
    return rule


def _xlogy_fallback(x: Any, y: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.asarray(x) == 0, 0.0, x * np.log(y))


def _xlog1py_fallback(x: Any, y: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.asarray(x) == 0, 0.0, x * np.log1p(y))


_FALLBACKS = {"erf": K.erf_fallback, "erfc": K.erfc_fallback, "gammaln": K.lgamma_fallback,
              "digamma": K.digamma_fallback, "polygamma": K.polygamma_fallback,
              "expit": K.expit_fallback, "i0": np.i0, "i1": K.i1_fallback,
              "xlogy": _xlogy_fallback,
              "xlog1py": _xlog1py_fallback}


def _impl(name: str) -> Callable:
    return backend_impl(name, _FALLBACKS.get(name))


def _real(name: str, rule: Any, complex_: bool = False, **kwargs: Any) -> Primitive:
    """A special function of one argument, real unless ``complex_`` (scipy's complex
    version, holomorphic: the same rule serves)."""
    return unary(name, _impl(name), rule, complex_=complex_, **kwargs)


def _is_pole(x: Any) -> Any:
    """x in {0, -1, -2, ...}, where gamma has its poles."""
    return (x <= 0) & (x == floor(x))


def _rgamma_rule(g: Any, x: Any, out: Any) -> Any:
    """-rgamma(x) digamma(x); at the zeros of rgamma, x = -n, the limit (-1)^n n! =
    cos(pi x) gamma(1 - x)."""
    pole = _is_pole(x)
    safe = where(pole, 0.5, x)
    return g * where(pole, cos(math.pi * x) * gamma(1 - safe), -out * digamma(safe))


def _spence_rule(g: Any, x: Any) -> Any:
    """log(x) / (1 - x); within 1e-3 of x = 1, where that is 0 / 0, its series in u = x - 1,
    -1 + u/2 - u^2/3 + u^3/4 - u^4/5 (which also gives the higher derivatives there)."""
    u = x - 1
    near = abs(u) < 1e-3
    safe = where(near, 0.5, x)
    series = -1 + u * (0.5 + u * (-1 / 3 + u * (0.25 - u * 0.2)))
    return g * where(near, series, log(safe) / (1 - safe))


def _safe_divisor(x: Any, y: Any, pole: float) -> Any:
    """y, with 1 + pole where x == 0 and y == pole: the divisor of the y-derivative of
    x log(y - pole) that makes it 0 there (x / y elsewhere, also where only x == 0, which
    keeps the mixed second derivative 1 / y right)."""
    return where((x == 0) & (y == pole), 1 + pole, y)


# -- the table ----------------------------------------------------------------------------

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_HALF_SQRT_PI = math.sqrt(math.pi) / 2

erf = _real("erf", lambda g, x: g * _TWO_OVER_SQRT_PI * exp(-x * x), complex_=True)
erfc = _real("erfc", lambda g, x: -g * _TWO_OVER_SQRT_PI * exp(-x * x), complex_=True)
erfinv = _real("erfinv", lambda g, out: g * _HALF_SQRT_PI * exp(out * out),
               domain=(-0.9, 0.9))
erfcinv = _real("erfcinv", lambda g, out: -g * _HALF_SQRT_PI * exp(out * out),
                domain=(0.1, 1.9))
gammaln = _real("gammaln", lambda g, x: g * digamma(x), domain=(0.2, 3.0))
gamma = _real("gamma", lambda g, x, out: g * out * digamma(x),
              sample=samples.off_poles(gamma_like=True))
rgamma = _real("rgamma", _rgamma_rule, sample=samples.off_poles(gamma_like=True))
gammasgn = _real("gammasgn", ZERO, sample=samples.off_poles(gamma_like=True))
digamma = _real("digamma", lambda g, x: g * polygamma(1, x), domain=(0.2, 3.0))
expit = _real("expit", lambda g, out: g * out * (1 - out))
spence = _real("spence", _spence_rule, domain=(0.1, 3.0))

polygamma = Primitive("polygamma", _impl("polygamma"), ("n", "x"), promote=INEXACT_OPS,
                      sample=sampling.custom(samples.polygamma_cases),
                      doc="The n-th derivative of digamma (integer n >= 0).")
polygamma.defvjp(ZERO, lambda g, n, x: g * polygamma(n + 1, x))
polygamma.defjvp(ZERO, lambda t, n, x: t * polygamma(n + 1, x))

beta = binary("beta", _impl("beta"),
              lambda g, x, y, out: g * out * (digamma(x) - digamma(x + y)),
              lambda g, x, y, out: g * out * (digamma(y) - digamma(x + y)),
              domain=(0.3, 3.0), complex_=False, promote=INEXACT_OPS)
betaln = binary("betaln", _impl("betaln"),
                lambda g, x, y: g * (digamma(x) - digamma(x + y)),
                lambda g, x, y: g * (digamma(y) - digamma(x + y)),
                domain=(0.3, 3.0), complex_=False, promote=INEXACT_OPS)
xlogy = binary("xlogy", _impl("xlogy"), lambda g, y: g * log(y),
               lambda g, x, y: g * x / _safe_divisor(x, y, 0.0),
               sample=samples.with_prim(samples.xlogy_cases), complex_=False, promote=INEXACT_OPS)
xlog1py = binary("xlog1py", _impl("xlog1py"), lambda g, y: g * log1p(y),
                 lambda g, x, y: g * x / (1 + _safe_divisor(x, y, -1.0)),
                 sample=samples.with_prim(samples.xlogy_cases), complex_=False, promote=INEXACT_OPS)


# -- the Hurwitz zeta function, and its derivatives of every order in s --------------------

def _zeta_impl(x: Any, q: Any, order: int) -> Any:
    """zeta(x, q) (order 0: scipy, or Euler-Maclaurin without it) or d^order/dx^order
    (the Taylor kernel); where q == 1 and x < 1, Riemann's zeta continued there."""
    on_gpu = hasattr(x, "__cuda_array_interface__")
    if order == 0 and _scipy_special is not None and not on_gpu:
        out = np.asarray(_scipy_special.zeta(x, q), np.float64)
        riemann = np.broadcast_to((np.asarray(q) == 1) & (np.asarray(x) < 1), out.shape)
        if riemann.any():
            out = np.where(riemann, _scipy_special.zeta(np.broadcast_to(x, out.shape)), out)
    else:
        out = K.zeta_taylor(x, q, order)
    return out.astype(float_dtype((x, q)), copy=False)


def _zeta_dq(g: Any, x: Any, q: Any, order: int) -> Any:
    """d/dq d^k/dx^k zeta(x, q) = d^k/dx^k [-x zeta(x + 1, q)] (Leibniz' rule)."""
    shifted = -x * zeta(x + 1, q, order=order)
    if order:
        shifted = shifted - order * zeta(x + 1, q, order=order - 1)
    return g * shifted


zeta = Primitive("zeta", _zeta_impl, ("x", "q"), ("order",), promote=INEXACT_OPS,
                 sample=sampling.custom(samples.zeta_cases),
                 doc="The Hurwitz zeta function sum_n (n + q)^-x, or its order-th "
                     "derivative in x.")
zeta.defvjp(lambda g, x, q, order: g * zeta(x, q, order=order + 1), _zeta_dq)
zeta.defjvp(lambda t, x, q, order: t * zeta(x, q, order=order + 1), _zeta_dq)


# -- batching rules (vmap): see funcgrad.primitives.batching ------------------------------
for _p in (erf, erfc, erfinv, erfcinv, gammaln, gamma, rgamma, gammasgn, digamma, expit, spence,
           polygamma, beta, betaln, xlogy, xlog1py, zeta):
    broadcasting(_p)
