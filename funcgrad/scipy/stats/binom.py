"""The binomial distribution (scipy.stats.binom): n trials of probability p. Differentiable
in p (the CDF through betainc's x-derivative); n is a count."""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.scipy.special import betainc, gammaln, xlog1py, xlogy
from ._common import discrete, floats, nan_unless, safe, log_probability, scipy_sampler

__all__ = ["rvs", "logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"]


def _params(k: Any, n: Any, p: Any) -> tuple:
    k, n, p = floats(k, n, p)
    return k, n, p, (n >= 0) & (n == fnp.floor(n)) & (p >= 0) & (p <= 1)


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    k, n, p, ok = _params(k, n, p)
    k, whole = discrete(k, loc)
    inside = whole & (k >= 0) & (k <= n)
    k = safe(inside, k, 0.0)
    log_comb = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
    return nan_unless(ok, fnp.where(inside, log_comb + xlogy(k, p) + xlog1py(n - k, -p),
                                    -np.inf))


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    return fnp.exp(logpmf(k, n, p, loc))


def _tail(k: Any, n: Any, p: Any, loc: Any, lower: bool) -> Array:
    """P(K <= k) = betainc(n - j, j + 1, 1 - p), P(K > k) = betainc(j + 1, n - j, p) for
    j = floor(k) in [0, n); 0/1 outside."""
    k, n, p, ok = _params(k, n, p)
    k, _ = discrete(k, loc)
    inside = (k >= 0) & (k < n)
    j = fnp.floor(safe(inside, k, 0.0))
    nn = fnp.where(inside, n, j + 1)
    value = betainc(nn - j, j + 1, 1 - p) if lower else betainc(j + 1, nn - j, p)
    below = 0.0 if lower else 1.0
    return nan_unless(ok, fnp.where(inside, value, fnp.where(k < 0, below, 1.0 - below)))


def cdf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    return _tail(k, n, p, loc, True)


def logcdf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    return log_probability(cdf(k, n, p, loc), sf(k, n, p, loc))


def sf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    return _tail(k, n, p, loc, False)


def logsf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    return log_probability(sf(k, n, p, loc), cdf(k, n, p, loc))


rvs = scipy_sampler("binom")
