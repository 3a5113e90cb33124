"""Linear-algebra kernels on raw backend arrays.

`cofactor_matrix` is the matrix of cofactors ``C`` (``det(a) inv(a)^T`` where a is
invertible) computed from the SVD ``a = U diag(s) V^H`` as
``det(U) det(V^H) conj(U) diag(p) conj(V^H)`` with ``p[i]`` the product of the singular
values other than ``s[i]``: exact for singular matrices too (rank n-1 gives the one
non-zero term, lower ranks give 0), with no division, so that det's gradient exists
everywhere, as it does in JAX and PyTorch.
"""
from __future__ import annotations

from typing import Any

from funcgrad.backend import backend_of

__all__ = ["cofactor_matrix"]


def _exclusive_products(s: Any, xp: Any) -> Any:
    """For each entry of the last axis, the product of the other entries."""
    ones = xp.ones(s.shape[:-1] + (1,), dtype=s.dtype)
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    flipped = xp.flip(s, axis=-1)
    after = xp.flip(xp.cumprod(xp.concatenate([ones, flipped[..., :-1]], axis=-1), axis=-1),
                    axis=-1)
    return before * after


def cofactor_matrix(a: Any) -> Any:
    """The cofactor matrices of the square matrices in the last two axes of ``a``."""
    xp = backend_of(a).xp
    if a.shape[-1] == 0:
        return a.copy()
    u, s, vh = xp.linalg.svd(a)
    phase = xp.linalg.det(u) * xp.linalg.det(vh)
    scaled = xp.conj(u) * _exclusive_products(s, xp)[..., None, :]
    return (phase[..., None, None] * (scaled @ xp.conj(vh))).astype(a.dtype, copy=False)
