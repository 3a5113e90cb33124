"""The logistic distribution (scipy.stats.logistic): CDF expit(x), computed through
softplus so that neither tail overflows."""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.scipy.special import expit, logit, softplus
from ._common import at_z, density, quantile, scipy_sampler

__all__ = ["rvs", "logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return density(lambda z: -z - 2 * softplus(-z), x, loc, scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(expit, x, loc, scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: -softplus(-z), x, loc, scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: expit(-z), x, loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: -softplus(z), x, loc, scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return quantile(logit, q, loc, scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return quantile(lambda p: -logit(p), q, loc, scale, support=(np.inf, -np.inf))


rvs = scipy_sampler("logistic")
