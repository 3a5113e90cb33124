"""Kernels of the linear-algebra family: matmul's error messages, layout-aware products,
in-place adds on fresh products, einsum's path choice, diagonal scatters, cofactors, and
16-bit products accumulated in float32 (`low_precision_dtype`, `in_float32`).

`cofactor_matrix` is the matrix of cofactors ``C`` (``det(a) inv(a)^T`` where a is
invertible) computed from the SVD ``a = U diag(s) V^H`` as
``det(U) det(V^H) conj(U) diag(p) conj(V^H)`` with ``p[i]`` the product of the singular
values other than ``s[i]``: exact for singular matrices too (rank n-1 gives the one
non-zero term, lower ranks give 0), with no division, so that det's gradient exists
everywhere, as it does in JAX and PyTorch.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.backend import backend_of
from funcgrad.dtypes import LOW_FLOATS

__all__ = ["matmul", "matmul_tn", "addmm", "einsum", "diagonal_embed", "cofactor_matrix",
           "low_precision_dtype", "in_float32"]

_F32 = np.dtype(np.float32)


def low_precision_dtype(*xs: Any) -> np.dtype | None:
    """The result dtype of a product of numpy operands when it is a 16-bit float (float16,
    bfloat16), else None. numpy has no BLAS for those: float16's loops are scalar C and
    ml_dtypes' bfloat16 matmul answers in float32 (its einsum refuses), so such products
    are computed by `in_float32`, as PyTorch's CPU kernels accumulate them too. On cupy
    (cuBLAS handles float16 itself) this is None."""
    for x in xs:  # a loop testing the item size first: this runs before every product
        if type(x) is np.ndarray and x.itemsize == 2 and x.dtype in LOW_FLOATS:
            break
    else:
        return None
    dtype = np.result_type(*[x.dtype for x in xs])
    return dtype if dtype in LOW_FLOATS else None


def in_float32(fn: Any, dtype: np.dtype, *xs: Any, **kwargs: Any) -> Any:
    """``fn(*xs, **kwargs)`` on float32 copies of ``xs``, rounded once to ``dtype``."""
    return fn(*[x.astype(_F32) for x in xs], **kwargs).astype(dtype)


def matmul(x: Any, y: Any) -> Any:
    # only 2-byte operands can be 16-bit floats: most products skip the call (it would cost
    # more than the product's own bookkeeping on small matrices)
    low = (low_precision_dtype(x, y) if getattr(x, "itemsize", 0) == 2 or
           getattr(y, "itemsize", 0) == 2 else None)
    if low is not None:
        return in_float32(matmul, low, x, y)
    try:
        return np.matmul(x, y)
    except ValueError:
        xs, ys = np.shape(x), np.shape(y)
        if not xs or not ys:
            hint = "matmul does not take 0-d operands; use multiply (*) for scalars"
        elif xs[-1] != ys[-2 if len(ys) > 1 else 0]:  # (JAX's error: a TypeError)
            raise TypeError("dot_general requires contracting dimensions to have the same "
                            f"shape, got ({xs[-1]},) and ({ys[-2 if len(ys) > 1 else 0]},). "
                            f"(matmul of shapes {xs} and {ys}: the last axis of the first "
                            f"operand must equal the {'second-to-last' if len(ys) > 1 else 'only'}"
                            " axis of the second)") from None
        else:
            hint = "their batch dimensions (all but the last two) do not broadcast"
        raise ValueError(f"matmul: shapes {xs} and {ys} do not match: {hint}") from None


def matmul_tn(a: Any, b: Any, layout: str = "C") -> Any:
    """``a^T @ b`` for matrices, stored column-major for ``layout = "F"``: matmul's VJP asks
    for the layout of its ``y``, so that for ``y = w.T`` (column-major) the product comes
    out column-major, the transpose's VJP hands ``w`` a row-major gradient and an update
    ``w - lr * grad`` runs on matching layouts (mixed ones are ~10x slower). PyTorch keeps
    this layout contract too (from mat2's strides)."""
    low = (low_precision_dtype(a, b) if getattr(a, "itemsize", 0) == 2 or
           getattr(b, "itemsize", 0) == 2 else None)  # (as in `matmul`)
    if low is not None:
        return in_float32(matmul_tn, low, a, b, layout=layout)
    if layout == "F":
        return np.matmul(b.T, a).T
    return np.matmul(a.swapaxes(-1, -2), b)


def addmm(c: Any, x: Any, y: Any) -> Any:
    """``c + x @ y``, the add done in place on the fresh product where that is the same
    (``c`` broadcasts to it and does not widen its dtype): one pass and one array less."""
    out = matmul(x, y)
    if type(out) is np.ndarray and np.result_type(out, c) == out.dtype:
        try:
            out += c
            return out
        except ValueError:  # c does not broadcast into the product: add's own error
            pass
    return np.add(out, c)


def einsum(*xs: Any, subscripts: str) -> Any:
    low = low_precision_dtype(*xs)
    if low is not None:
        return in_float32(einsum, low, *xs, subscripts=subscripts)
    # numpy's path search (BLAS, contraction order) costs ~15us: worth it on larger inputs
    big = len(xs) > 1 and sum(np.size(x) for x in xs) > 1000
    return np.einsum(subscripts, *xs, optimize=big)


def diagonal_embed(x: Any, shape: tuple, offset: int, axis1: int, axis2: int) -> Any:
    out = np.zeros_like(x, shape=shape)
    k = x.shape[-1]
    i = np.arange(k)
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    view[..., i + max(-offset, 0), i + max(offset, 0)] = x
    return out


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
