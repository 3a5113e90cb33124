"""The Dirichlet distribution (scipy.stats.dirichlet) with concentrations alpha (K,).

As scipy: the components of x run along its first axis (x of shape (K,) or (K, N), or K - 1
components, the last being 1 - their sum), and x off the simplex or alpha <= 0 raise
ValueError (checked on the values, also while x or alpha are traced)."""
from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.primitives.control import stop_gradient
from funcgrad.scipy.special import gammaln, xlogy
from ._common import floats, scipy_sampler

__all__ = ["rvs", "logpdf", "pdf"]


def _checked(x: Any, alpha: Any) -> tuple:
    x, alpha = floats(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"Parameter vector 'a' must be one dimensional, but a.shape = "
                         f"{alpha.shape}.")
    if bool(fnp.any(stop_gradient(alpha) <= 0)):
        raise ValueError("All parameters must be greater than 0")
    k = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (k, k - 1):
        raise ValueError(f"Vector 'x' must have either the same number of entries as, or "
                         f"one entry fewer than, parameter vector 'a', but alpha.shape = "
                         f"{alpha.shape} and x.shape = {x.shape}.")
    if x.shape[0] == k - 1:
        x = fnp.concatenate([x, 1 - fnp.sum(x, axis=0, keepdims=True)], axis=0)
    seen = stop_gradient(x)
    if bool(fnp.any((seen < 0) | (seen > 1))):
        raise ValueError("Each entry in 'x' must be greater than or equal to zero and less "
                         "than or equal to one.")
    total = fnp.sum(seen, axis=0)
    if bool(fnp.any(fnp.abs(total - 1.0) > 10e-10)):
        raise ValueError(f"The input vector 'x' must lie within the normal simplex. but "
                         f"np.sum(x, 0) = {total}.")
    return x, alpha


def logpdf(x: Any, alpha: Any) -> Array:
    """sum_i (alpha_i - 1) log x_i - log B(alpha)."""
    x, alpha = _checked(x, alpha)
    a = fnp.reshape(alpha, (-1,) + (1,) * (x.ndim - 1))
    log_beta = fnp.sum(gammaln(alpha)) - gammaln(fnp.sum(alpha))
    return fnp.sum(xlogy(a - 1, x), axis=0) - log_beta


def pdf(x: Any, alpha: Any) -> Array:
    return fnp.exp(logpdf(x, alpha))


rvs = scipy_sampler("dirichlet")
