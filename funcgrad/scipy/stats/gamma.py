"""The gamma distribution (scipy.stats.gamma) with shape a: density x^(a-1) e^-x / gamma(a)
on x >= 0 (then scaled). Differentiable in a everywhere, the CDF too (gammainc's
a-derivative)."""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.scipy.special import gammainc, gammaincc, gammaincinv, gammaln, xlogy
from ._common import at_z, density, floats, quantile, safe, log_probability, scipy_sampler

__all__ = ["rvs", "logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def log_standard(z: Any, a: Any) -> Array:
    """log of the standard gamma density, -inf for z < 0."""
    inside = z >= 0
    z = safe(inside, z, 1.0)
    return fnp.where(inside, xlogy(a - 1, z) - z - gammaln(a), -np.inf)


def lower(z: Any, a: Any) -> Array:
    inside = z >= 0
    return fnp.where(inside, gammainc(a, safe(inside, z, 1.0)), 0.0)


def upper(z: Any, a: Any) -> Array:
    inside = z >= 0
    return fnp.where(inside, gammaincc(a, safe(inside, z, 1.0)), 1.0)


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, a = floats(x, a)
    return density(log_standard, x, loc, scale, a, valid=a > 0)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return fnp.exp(logpdf(x, a, loc, scale))


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, a = floats(x, a)
    return at_z(lower, x, loc, scale, a, valid=a > 0)


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return log_probability(cdf(x, a, loc, scale), sf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, a = floats(x, a)
    return at_z(upper, x, loc, scale, a, valid=a > 0)


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return log_probability(sf(x, a, loc, scale), cdf(x, a, loc, scale))


def ppf(q: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    q, a = floats(q, a)
    return quantile(lambda p: gammaincinv(a, p), q, loc, scale, valid=a > 0,
                    support=(0.0, np.inf))


rvs = scipy_sampler("gamma")
