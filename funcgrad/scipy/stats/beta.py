"""The beta distribution (scipy.stats.beta) with shapes a, b on [0, 1] (then shifted and
scaled). The CDF and quantile are differentiable in x and q, not in a and b (betainc)."""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.scipy.special import betainc, betaincinv, betaln, xlog1py, xlogy
from ._common import at_z, density, floats, quantile, safe, log_probability, scipy_sampler

__all__ = ["rvs", "logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _log_standard(z: Any, a: Any, b: Any) -> Array:
    inside = (z >= 0) & (z <= 1)
    z = safe(inside, z, 0.5)
    return fnp.where(inside, xlogy(a - 1, z) + xlog1py(b - 1, -z) - betaln(a, b), -np.inf)


def _lower(z: Any, a: Any, b: Any) -> Array:
    inside = (z > 0) & (z < 1)
    return fnp.where(inside, betainc(a, b, safe(inside, z, 0.5)), fnp.where(z <= 0, 0.0, 1.0))


def _upper(z: Any, a: Any, b: Any) -> Array:
    inside = (z > 0) & (z < 1)
    return fnp.where(inside, betainc(b, a, 1 - safe(inside, z, 0.5)),
                     fnp.where(z <= 0, 1.0, 0.0))


def _params(x: Any, a: Any, b: Any) -> tuple:
    x, a, b = floats(x, a, b)
    return x, a, b, (a > 0) & (b > 0)


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, a, b, ok = _params(x, a, b)
    return density(_log_standard, x, loc, scale, a, b, valid=ok)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return fnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, a, b, ok = _params(x, a, b)
    return at_z(_lower, x, loc, scale, a, b, valid=ok)


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return log_probability(cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, a, b, ok = _params(x, a, b)
    return at_z(_upper, x, loc, scale, a, b, valid=ok)


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return log_probability(sf(x, a, b, loc, scale), cdf(x, a, b, loc, scale))


def ppf(q: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    q, a, b, ok = _params(q, a, b)
    return quantile(lambda p: betaincinv(a, b, p), q, loc, scale, valid=ok, support=(0.0, 1.0))


rvs = scipy_sampler("beta")
