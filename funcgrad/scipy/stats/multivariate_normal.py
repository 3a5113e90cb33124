"""The multivariate normal distribution (scipy.stats.multivariate_normal).

``cov`` may be a scalar (times the identity), a vector (a diagonal) or a matrix; the
dimension comes from ``mean`` or ``cov`` and x's last axis holds the coordinates (1-D
distributions take x of any shape as a set of points), as in scipy. The log-density goes
through the Cholesky factor (solve_triangular); with ``allow_singular`` it uses the
eigendecomposition, pseudo-inverse and pseudo-determinant instead, as scipy does."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.primitives.control import stop_gradient
from funcgrad.scipy import linalg
from ._common import floats, scipy_sampler

__all__ = ["rvs", "logpdf", "pdf", "entropy"]

_LOG_2PI = math.log(2 * math.pi)


def _parameters(mean: Any, cov: Any) -> tuple:
    """(dimension, mean (d,), cov (d, d)) from scipy's accepted forms."""
    cov = floats(cov)[0]
    if mean is None:
        d = 1 if cov.ndim == 0 else cov.shape[0]
        mean = fnp.zeros(d, dtype=cov.dtype)
    mean = floats(mean)[0]
    d = mean.shape[0] if mean.ndim else (1 if cov.ndim == 0 else cov.shape[0])
    if mean.ndim > 1 or (mean.ndim == 1 and mean.shape[0] != d):
        raise ValueError(f"Array 'mean' must be a vector of length {d}.")
    mean = fnp.broadcast_to(mean, (d,))
    if cov.ndim == 0:
        cov = cov * fnp.eye(d, dtype=cov.dtype)
    elif cov.ndim == 1:
        if cov.shape[0] != d:
            raise ValueError(f"Array 'cov' must be of shape ({d}, {d}) or a vector of "
                             f"length {d}, got {cov.shape}.")
        cov = fnp.diag(cov)
    elif cov.shape != (d, d):
        raise ValueError(f"Array 'cov' must be of shape ({d}, {d}), got {cov.shape}.")
    return d, mean, cov


def _points(x: Any, d: int) -> Array:
    x = floats(x)[0]
    if x.ndim == 0:
        x = fnp.reshape(x, (1,))
    if d == 1 and (x.ndim == 1 or x.shape[-1] != 1):
        x = fnp.expand_dims(x, -1)
    if x.shape[-1] != d:
        raise ValueError(f"x has {x.shape[-1]} coordinates in its last axis, the "
                         f"distribution {d}")
    return x


def logpdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Array:
    """-(d log(2 pi) + log det(cov) + (x - mean)^T cov^-1 (x - mean)) / 2, squeezed as
    scipy's result (a scalar for one point)."""
    d, mean, cov = _parameters(mean, cov)
    dev = _points(x, d) - mean
    if allow_singular:
        out = _singular_logpdf(dev, cov, d)
    else:
        chol = linalg.cholesky(cov, lower=True)
        z = linalg.solve_triangular(chol, fnp.swapaxes(dev, -1, -2) if dev.ndim > 1 else dev,
                                    lower=True)
        maha = fnp.sum(z * z, axis=-2 if dev.ndim > 1 else -1)
        log_det = 2 * fnp.sum(fnp.log(fnp.diagonal(chol)))
        out = -0.5 * (d * _LOG_2PI + log_det + maha)
    return fnp.squeeze(out) if out.ndim else out


def _singular_logpdf(dev: Array, cov: Array, d: int) -> Array:
    """scipy's allow_singular path: eigenvalues below a cutoff count as zero; the density
    lives on the range of cov (rank r: r log(2 pi) and the pseudo-determinant)."""
    w, v = linalg.eigh(cov)
    seen = stop_gradient(w)
    cutoff = float(1e6 * np.finfo(np.dtype(str(w.dtype))).eps * fnp.max(fnp.abs(seen)))
    keep = seen > cutoff
    rank = int(fnp.sum(keep))
    inv_w = fnp.where(keep, 1 / fnp.where(keep, w, 1.0), 0.0)
    proj = fnp.matmul(dev, v)
    maha = fnp.sum(proj * proj * inv_w, axis=-1)
    log_pdet = fnp.sum(fnp.where(keep, fnp.log(fnp.where(keep, w, 1.0)), 0.0))
    return -0.5 * (rank * _LOG_2PI + log_pdet + maha)


def pdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Array:
    return fnp.exp(logpdf(x, mean, cov, allow_singular))


def entropy(mean: Any = None, cov: Any = 1) -> Array:
    """The differential entropy (d log(2 pi e) + log det(cov)) / 2."""
    d, _, cov = _parameters(mean, cov)
    chol = linalg.cholesky(cov, lower=True)
    return 0.5 * (d * (_LOG_2PI + 1.0)) + fnp.sum(fnp.log(fnp.diagonal(chol)))


rvs = scipy_sampler("multivariate_normal")
