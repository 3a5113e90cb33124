"""Array manipulations that rules are written with, composed of primitives.

Rules cannot use `funcgrad.numpy` (it imports this package), so the few numpy-like helpers
they need live here: expanding, concatenating and stacking along any (negative) axis,
triangles, broadcasting, padding one axis, sums over the matrix axes and row permutations.
Each is a composition of registry primitives, differentiable to any order and traceable.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .binary import equal
from .constants import constant
from .control import convert_element_type
from .linalg import matmul, mT
from .reductions import reduce_sum
from .select import where
from .shape import broadcast_to, concatenate, pad, reshape

__all__ = ["expand_dims", "concat", "stack", "tril", "triu", "broadcast_arrays",
           "pad_axis", "matrix_sum", "sum_last", "permute_rows", "unpermute_rows"]


def expand_dims(x: Any, axis: int) -> Any:
    """x with a new size-1 axis at ``axis`` (negative counts from the end of the result)."""
    shape = list(x.shape)
    shape.insert(axis % (x.ndim + 1), 1)
    return reshape(x, shape=tuple(shape))


def concat(xs: Sequence, axis: int) -> Any:
    """The arrays joined along ``axis`` (negative counts from the end)."""
    return concatenate(*xs, axis=axis % xs[0].ndim)


def stack(xs: Sequence, axis: int = 0) -> Any:
    """The arrays (of one shape) stacked along a new ``axis``."""
    return concat([expand_dims(x, axis) for x in xs], axis)


def _triangle(x: Any, k: int, lower: bool) -> Any:
    n, m = x.shape[-2:]
    mask = np.tri(n, m, k, dtype=bool)
    return where(constant(x, mask if lower else ~np.tri(n, m, k - 1, dtype=bool)), x, 0)


def tril(x: Any, k: int = 0) -> Any:
    """The lower triangle of the last two axes (on and below diagonal ``k``)."""
    return _triangle(x, k, True)


def triu(x: Any, k: int = 0) -> Any:
    """The upper triangle of the last two axes (on and above diagonal ``k``)."""
    return _triangle(x, k, False)


def broadcast_arrays(*xs: Any) -> list:
    shape = np.broadcast_shapes(*(tuple(x.shape) for x in xs))
    return [x if tuple(x.shape) == shape else broadcast_to(x, shape=shape) for x in xs]


def pad_axis(x: Any, axis: int, before: int, after: int) -> Any:
    """x with ``before`` and ``after`` zeros added along ``axis``."""
    widths = [(0, 0)] * x.ndim
    widths[axis % x.ndim] = (before, after)
    return pad(x, pad_width=tuple(widths), constant_values=0)


def matrix_sum(x: Any) -> Any:
    """The sums over the last two axes."""
    return reduce_sum(x, axis=(x.ndim - 2, x.ndim - 1), keepdims=False)


def sum_last(x: Any) -> Any:
    """The sums over the last axis."""
    return reduce_sum(x, axis=(x.ndim - 1,), keepdims=False)


def _permutation_matrix(perm: Any, dtype: Any) -> Any:
    """P with P[..., i, j] = (perm[..., i] == j): (P @ x)[i] = x[perm[i]]."""
    n = perm.shape[-1]
    hits = equal(expand_dims(perm, -1), constant(perm, np.arange(n)))
    return convert_element_type(hits, new_dtype=np.dtype(dtype))


def permute_rows(x: Any, perm: Any) -> Any:
    """x[..., perm, :] (as a product with the permutation matrix: traceable)."""
    return matmul(_permutation_matrix(perm, x.dtype), x)


def unpermute_rows(x: Any, perm: Any) -> Any:
    """y with y[..., perm, :] = x."""
    return matmul(mT(_permutation_matrix(perm, x.dtype)), x)
