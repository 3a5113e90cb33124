"""The uniform distribution (scipy.stats.uniform) on [loc, loc + scale]."""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from ._common import at_z, density, quantile, log_probability, scipy_sampler

__all__ = ["rvs", "logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return density(lambda z: fnp.where((z >= 0) & (z <= 1), 0.0 * z, -np.inf), x, loc, scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: fnp.clip(z, 0.0, 1.0), x, loc, scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return log_probability(cdf(x, loc, scale), sf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return at_z(lambda z: fnp.clip(1 - z, 0.0, 1.0), x, loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return log_probability(sf(x, loc, scale), cdf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return quantile(lambda p: p, q, loc, scale, support=(0.0, 1.0))


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return quantile(lambda p: 1 - p, q, loc, scale, support=(1.0, 0.0))


rvs = scipy_sampler("uniform")
