"""Student's t distribution (scipy.stats.t) with df degrees of freedom. The CDF and
quantile are not differentiable in df (scipy's stdtr/stdtrit have no df-derivative here)."""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.primitives.distributions import student_log_density
from funcgrad.scipy.special import stdtr, stdtrit
from ._common import at_z, density, floats, quantile, log_probability, scipy_sampler

__all__ = ["rvs", "logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, df = floats(x, df)
    return density(lambda z: student_log_density(df, z), x, loc, scale, valid=df > 0)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return fnp.exp(logpdf(x, df, loc, scale))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, df = floats(x, df)
    return at_z(lambda z: stdtr(df, z), x, loc, scale, valid=df > 0)


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return log_probability(cdf(x, df, loc, scale), sf(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, df = floats(x, df)
    return at_z(lambda z: stdtr(df, -z), x, loc, scale, valid=df > 0)


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return log_probability(sf(x, df, loc, scale), cdf(x, df, loc, scale))


def ppf(q: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    q, df = floats(q, df)
    return quantile(lambda p: stdtrit(df, p), q, loc, scale, valid=df > 0)


def isf(q: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    q, df = floats(q, df)
    return quantile(lambda p: -stdtrit(df, p), q, loc, scale, valid=df > 0,
                    support=(np.inf, -np.inf))


rvs = scipy_sampler("t")
