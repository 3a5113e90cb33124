"""The exponential distribution (scipy.stats.expon): density e^-x on x >= 0 (then shifted by
loc and scaled; scale is 1 / rate)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from ._common import at_z, density, quantile, safe, scipy_sampler

__all__ = ["rvs", "logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]

_LN2 = math.log(2.0)


def _inside(z: Any, value: Any, outside: float) -> Array:
    inside = z >= 0
    return fnp.where(inside, value(safe(inside, z, 1.0)), outside)


def _log1mexp(y: Any) -> Array:
    """log(1 - e^-y) for y >= 0: log(-expm1(-y)) up to log 2, log1p(-e^-y) above (Maechler's
    split keeps the digits of both ends)."""
    small = y < _LN2
    return fnp.where(small, fnp.log(-fnp.expm1(-fnp.where(small, y, 1.0))),
                     fnp.log1p(-fnp.exp(-fnp.where(small, 1.0, y))))


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return density(lambda z: _inside(z, fnp.negative, -np.inf), x, loc, scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: _inside(z, lambda y: -fnp.expm1(-y), 0.0), x, loc, scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: _inside(z, _log1mexp, -np.inf), x, loc, scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: _inside(z, lambda y: fnp.exp(-y), 1.0), x, loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: _inside(z, fnp.negative, 0.0), x, loc, scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return quantile(lambda p: -fnp.log1p(-p), q, loc, scale, support=(0.0, np.inf))


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return quantile(lambda p: -fnp.log(p), q, loc, scale, support=(np.inf, 0.0))


rvs = scipy_sampler("expon")
