"""The Cauchy distribution (scipy.stats.cauchy): density 1 / (pi (1 + x^2)). The CDF is
arctan2(1, -x) / pi, which keeps its precision in both tails."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from ._common import at_z, density, quantile, scipy_sampler

__all__ = ["rvs", "logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]

_LOG_PI = math.log(math.pi)


def _cdf(z: Any) -> Array:
    return fnp.arctan2(1.0, -z) / math.pi


def _ppf(q: Any) -> Array:
    """-cot(pi q) below 1/2, cot(pi (1 - q)) above: exact at 0 and 1 (+-inf) and in both
    tails, where tan(pi (q - 1/2)) loses its digits."""
    low = q < 0.5
    lo, hi = fnp.where(low, q, 0.25), fnp.where(low, 0.75, q)
    return fnp.where(low, -1 / fnp.tan(math.pi * lo), 1 / fnp.tan(math.pi * (1 - hi)))


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return density(lambda z: -_LOG_PI - fnp.log1p(z * z), x, loc, scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(_cdf, x, loc, scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: fnp.log(_cdf(z)), x, loc, scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: _cdf(-z), x, loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: fnp.log(_cdf(-z)), x, loc, scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return quantile(_ppf, q, loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return quantile(lambda p: -_ppf(p), q, loc, scale, support=(np.inf, -np.inf))


rvs = scipy_sampler("cauchy")
