"""The chi-squared distribution (scipy.stats.chi2) with df degrees of freedom: the gamma
distribution with shape df / 2 and scale 2."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.scipy.special import gammaincinv
from . import gamma as _gamma
from ._common import at_z, density, floats, quantile, log_probability, scipy_sampler

__all__ = ["rvs", "logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]

_LOG2 = math.log(2.0)


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, df = floats(x, df)
    return density(lambda z: _gamma.log_standard(z * 0.5, df * 0.5) - _LOG2, x, loc, scale,
                   valid=df > 0)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return fnp.exp(logpdf(x, df, loc, scale))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, df = floats(x, df)
    return at_z(lambda z: _gamma.lower(z * 0.5, df * 0.5), x, loc, scale, valid=df > 0)


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return log_probability(cdf(x, df, loc, scale), sf(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, df = floats(x, df)
    return at_z(lambda z: _gamma.upper(z * 0.5, df * 0.5), x, loc, scale, valid=df > 0)


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return log_probability(sf(x, df, loc, scale), cdf(x, df, loc, scale))


def ppf(q: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    q, df = floats(q, df)
    return quantile(lambda p: 2 * gammaincinv(df * 0.5, p), q, loc, scale, valid=df > 0,
                    support=(0.0, np.inf))


rvs = scipy_sampler("chi2")
