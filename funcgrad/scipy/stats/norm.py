"""The normal distribution (scipy.stats.norm): loc is the mean, scale the standard
deviation."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.scipy.special import log_ndtr, ndtr, ndtri
from ._common import at_z, density, quantile, scipy_sampler

__all__ = ["rvs", "logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _log_standard(z: Any) -> Array:
    return -0.5 * z * z - _HALF_LOG_2PI


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return density(_log_standard, x, loc, scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(ndtr, x, loc, scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """log(cdf), accurate far into the lower tail (log_ndtr)."""
    return at_z(log_ndtr, x, loc, scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: ndtr(-z), x, loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: log_ndtr(-z), x, loc, scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return quantile(ndtri, q, loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return quantile(lambda p: -ndtri(p), q, loc, scale, support=(np.inf, -np.inf))


rvs = scipy_sampler("norm")
