"""The Laplace distribution (scipy.stats.laplace): density e^-|x| / 2 (loc the median,
scale the mean absolute deviation)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from ._common import at_z, density, quantile, scipy_sampler

__all__ = ["rvs", "logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]

_LOG2 = math.log(2.0)


def _cdf(z: Any) -> Array:
    """e^z / 2 below 0, 1 - e^-z / 2 above (each exp of a non-positive number)."""
    half = 0.5 * fnp.exp(-fnp.abs(z))
    return fnp.where(z < 0, half, 1 - half)


def _logcdf(z: Any) -> Array:
    return fnp.where(z < 0, fnp.minimum(z, 0.0) - _LOG2,
                     fnp.log1p(-0.5 * fnp.exp(-fnp.maximum(z, 0.0))))


def _ppf(q: Any) -> Array:
    low = q < 0.5
    return fnp.where(low, fnp.log(2 * fnp.where(low, q, 0.25)),
                     -fnp.log(2 - 2 * fnp.where(low, 0.75, q)))


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return density(lambda z: -fnp.abs(z) - _LOG2, x, loc, scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(_cdf, x, loc, scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(_logcdf, x, loc, scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: _cdf(-z), x, loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: _logcdf(-z), x, loc, scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return quantile(_ppf, q, loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return quantile(lambda p: -_ppf(p), q, loc, scale, support=(np.inf, -np.inf))


rvs = scipy_sampler("laplace")
