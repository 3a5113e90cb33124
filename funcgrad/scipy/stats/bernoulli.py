"""The Bernoulli distribution (scipy.stats.bernoulli): P(1) = p, P(0) = 1 - p."""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.scipy.special import xlog1py, xlogy
from ._common import discrete, floats, nan_unless, safe, log_probability, scipy_sampler

__all__ = ["rvs", "logpmf", "pmf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _p(k: Any, p: Any) -> tuple:
    k, p = floats(k, p)
    return k, p, (p >= 0) & (p <= 1)


def logpmf(k: Any, p: Any, loc: Any = 0) -> Array:
    k, p, ok = _p(k, p)
    k, _ = discrete(k, loc)
    inside = (k == 0) | (k == 1)
    k = safe(inside, k, 0.0)
    return nan_unless(ok, fnp.where(inside, xlogy(k, p) + xlog1py(1 - k, -p), -np.inf))


def pmf(k: Any, p: Any, loc: Any = 0) -> Array:
    return fnp.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any, loc: Any = 0) -> Array:
    k, p, ok = _p(k, p)
    k, _ = discrete(k, loc)
    return nan_unless(ok, fnp.where(k < 0, 0.0, fnp.where(k < 1, 1 - p, 1.0 + 0 * p)))


def logcdf(k: Any, p: Any, loc: Any = 0) -> Array:
    return log_probability(cdf(k, p, loc), sf(k, p, loc))


def sf(k: Any, p: Any, loc: Any = 0) -> Array:
    k, p, ok = _p(k, p)
    k, _ = discrete(k, loc)
    return nan_unless(ok, fnp.where(k < 0, 1.0, fnp.where(k < 1, p, 0.0 * p)))


def logsf(k: Any, p: Any, loc: Any = 0) -> Array:
    return log_probability(sf(k, p, loc), cdf(k, p, loc))


def ppf(q: Any, p: Any, loc: Any = 0) -> Array:
    """The smallest k with cdf(k) >= q: loc - 1 at q = 0, loc up to 1 - p, loc + 1 above."""
    q, p, ok = _p(q, p)
    (loc,) = floats(loc)
    k = fnp.where(q == 0, -1.0, fnp.where(q <= 1 - p, 0.0, 1.0))
    return nan_unless(ok & (q >= 0) & (q <= 1), k + loc)


rvs = scipy_sampler("bernoulli")
