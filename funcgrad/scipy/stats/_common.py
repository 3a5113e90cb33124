"""What the distributions share: scipy's loc/scale convention, nan for invalid parameters,
and "safe" arguments that keep gradients finite outside a support.

A continuous distribution with standard density f has the density f((x - loc) / scale) /
scale, the CDF F((x - loc) / scale) and the quantile loc + scale F^-1(q); scipy returns
nan where scale <= 0 or a shape parameter is out of its range, and so do these. Values
outside the support are computed from a harmless stand-in argument and then replaced
(-inf log-density, 0 or 1 for a CDF): a masked-out branch then contributes a zero gradient
instead of 0 * inf = nan.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array

__all__ = ["scipy_sampler", "floats", "standardized", "density", "at_z", "quantile",
           "nan_unless", "safe",
           "discrete", "log_probability"]


def scipy_sampler(name: str) -> Callable:
    """``rvs`` of distribution ``name``: scipy.stats' sampler itself (draws are not
    differentiated), called with plain numpy arguments; an ImportError naming the extra
    without scipy."""
    def rvs(*args: Any, **kwargs: Any) -> np.ndarray:
        try:
            import scipy.stats as scipy_stats  # scipy is optional: needed only to sample
        except ImportError:
            raise ImportError(f"{name}.rvs is scipy.stats.{name}.rvs, and scipy is not "
                              "installed; install funcgrad's scipy extra: "
                              "pip install 'funcgrad[scipy]'") from None
        plain = [np.asarray(a) if isinstance(a, Array) else a for a in args]
        return getattr(scipy_stats, name).rvs(*plain, **kwargs)
    rvs.__name__ = "rvs"
    rvs.__doc__ = f"scipy.stats.{name}.rvs (samples, not differentiated)."
    return rvs


def floats(*args: Any) -> list:
    """The arguments as Arrays of one float dtype: that of the floating arrays among them
    (Python numbers are weak, as in numpy and JAX), float64 if there are none."""
    arrays = [fnp.asarray(a) for a in args]
    dtypes = [a.dtype for a, raw in zip(arrays, args)
              if a.dtype.kind in "fc" and not isinstance(raw, (int, float))]
    dtype = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
    return [a if a.dtype == dtype else a.astype(dtype) for a in arrays]


def nan_unless(ok: Any, value: Any) -> Array:
    return fnp.where(ok, value, np.nan)


def safe(inside: Any, x: Any, stand_in: float) -> Array:
    """x where ``inside``, else ``stand_in`` (a value inside the support)."""
    return fnp.where(inside, x, stand_in)


def standardized(x: Any, loc: Any, scale: Any) -> tuple:
    """((x - loc) / scale, log(scale), scale > 0), with scale <= 0 replaced by 1."""
    x, loc, scale = floats(x, loc, scale)
    ok = scale > 0
    scale = safe(ok, scale, 1.0)
    return (x - loc) / scale, fnp.log(scale), ok


def density(log_standard: Callable, x: Any, loc: Any, scale: Any, *params: Any,
            valid: Any = True) -> Array:
    """log f((x - loc) / scale; params) - log(scale), nan where invalid."""
    z, log_scale, ok = standardized(x, loc, scale)
    return nan_unless(ok & valid, log_standard(z, *params) - log_scale)


def at_z(standard: Callable, x: Any, loc: Any, scale: Any, *params: Any,
         valid: Any = True) -> Array:
    """standard((x - loc) / scale; params) (a CDF, survival function or their logs)."""
    z, _, ok = standardized(x, loc, scale)
    return nan_unless(ok & valid, standard(z, *params))


def quantile(standard: Callable, q: Any, loc: Any, scale: Any, *params: Any,
             valid: Any = True, support: tuple = (-np.inf, np.inf)) -> Array:
    """loc + scale * standard(q; params), nan for q outside [0, 1] or invalid parameters,
    and the ends of the standard ``support`` at q = 0 and q = 1 (as scipy's ppf)."""
    q, loc, scale = floats(q, loc, scale)
    ok = (scale > 0) & (q >= 0) & (q <= 1) & valid
    inside = (q > 0) & (q < 1)
    z = fnp.where(inside, standard(safe(inside, q, 0.5), *params),
                  fnp.where(q <= 0, support[0], support[1]))
    return nan_unless(ok, loc + scale * z)


def log_probability(p: Any, complement: Any) -> Array:
    """log(p) given also 1 - p: log1p(-complement) where p > 1/2, which keeps the digits
    of log(p) near 0 (a log-CDF far in the upper tail)."""
    high = p > 0.5
    return fnp.where(high, fnp.log1p(-fnp.where(high, complement, 0.0)),
                     fnp.log(fnp.where(high, 0.5, p)))


def discrete(k: Any, loc: Any) -> tuple:
    """(k - loc, whether it is a whole number) for a distribution on the integers."""
    k, loc = floats(k, loc)
    shifted = k - loc
    return shifted, shifted == fnp.floor(shifted)
