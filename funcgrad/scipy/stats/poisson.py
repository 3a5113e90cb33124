"""The Poisson distribution (scipy.stats.poisson) with mean mu, on k = loc, loc + 1, ...
Differentiable in mu (the CDF through gammaincc's x-derivative)."""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.scipy.special import gammainc, gammaincc, gammaln, xlogy
from ._common import discrete, floats, nan_unless, safe, log_probability, scipy_sampler

__all__ = ["rvs", "logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Array:
    """k log(mu) - log(k!) - mu at whole k >= 0, -inf elsewhere."""
    k, mu = floats(k, mu)
    k, whole = discrete(k, loc)
    inside = whole & (k >= 0)
    k = safe(inside, k, 0.0)
    return nan_unless(mu >= 0, fnp.where(inside, xlogy(k, mu) - gammaln(k + 1) - mu, -np.inf))


def pmf(k: Any, mu: Any, loc: Any = 0) -> Array:
    return fnp.exp(logpmf(k, mu, loc))


def _tail(k: Any, mu: Any, loc: Any, lower: bool) -> Array:
    """P(K <= k) = gammaincc(floor(k) + 1, mu) (lower) or P(K > k) = gammainc(...)."""
    k, mu = floats(k, mu)
    k, _ = discrete(k, loc)
    inside = k >= 0
    n = fnp.floor(safe(inside, k, 0.0)) + 1
    value = gammaincc(n, mu) if lower else gammainc(n, mu)
    return nan_unless(mu >= 0, fnp.where(inside, value, 0.0 if lower else 1.0))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Array:
    return _tail(k, mu, loc, True)


def logcdf(k: Any, mu: Any, loc: Any = 0) -> Array:
    return log_probability(cdf(k, mu, loc), sf(k, mu, loc))


def sf(k: Any, mu: Any, loc: Any = 0) -> Array:
    return _tail(k, mu, loc, False)


def logsf(k: Any, mu: Any, loc: Any = 0) -> Array:
    return log_probability(sf(k, mu, loc), cdf(k, mu, loc))


rvs = scipy_sampler("poisson")
