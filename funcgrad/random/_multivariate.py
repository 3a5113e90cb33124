"""Matrix-valued and multivariate draws: multivariate normal vectors, orthogonal matrices."""
from __future__ import annotations

from operator import index
from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array

from ._continuous import normal_data
from ._keys import check_prng_key
from ._util import broadcast_shapes, canonical_shape, check_shape, float_dtype

_METHODS = {"svd", "eigh", "cholesky"}


def _factor(cov: Array, method: str) -> Array:
    """A matrix F with F F^T = cov."""
    if method == "svd":
        u, s, _ = fnp.linalg.svd(cov)
        return u * fnp.sqrt(s[..., None, :])
    if method == "eigh":
        w, v = fnp.linalg.eigh(cov)
        return v * fnp.sqrt(w[..., None, :])
    return fnp.linalg.cholesky(cov)


def _promote_inexact(*xs: Any) -> list:
    arrays = [fnp.asarray(x) for x in xs]
    dtype = np.result_type(*[a.dtype for a in arrays], np.float16)  # at least a float
    return [fnp.astype(a, dtype) for a in arrays]


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Sequence[int] | None = None,
                        dtype: Any = None, method: str = "cholesky") -> Array:
    """Normal vectors with the given mean (..., n) and covariance (..., n, n): mean + F z
    for a factor F of cov (Cholesky, or 'svd' / 'eigh' for singular covariances);
    differentiable in mean and cov."""
    data, _ = check_prng_key("multivariate_normal", key)
    mean, cov = _promote_inexact(mean, cov)
    if method not in _METHODS:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else float_dtype("multivariate_normal", dtype)
    if dtype.kind != "f":
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, got "
                         f"{dtype}")
    if not mean.ndim >= 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if not cov.ndim >= 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {tuple(cov.shape)}.")
    if shape is None:
        shape = broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    else:
        shape = canonical_shape(shape)
        check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    z = normal_data(data, tuple(shape) + (n,), dtype)
    return mean + fnp.einsum("...ij,...j->...i", _factor(cov, method), z)


def orthogonal(key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None,
               m: int | None = None) -> Array:
    """Matrices (*shape, n, m) uniform on the orthogonal (unitary, for complex dtypes)
    group, semi-orthogonal when n != m: Q of the QR of a normal matrix, with the signs of
    R's diagonal moved into it (Mezzadri, 2007)."""
    shape = canonical_shape(shape)
    data, _ = check_prng_key("orthogonal", key)
    dtype = float_dtype("orthogonal", dtype, "fc", "a float or complex")
    n = index(n)
    m = n if m is None else index(m)
    z = normal_data(data, (*shape, max(n, m), min(n, m)), dtype)
    q, r = fnp.linalg.qr(z)
    d = fnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * fnp.expand_dims(fnp.sign(d), -2)
    return fnp.swapaxes(x, -1, -2) if n < m else x
