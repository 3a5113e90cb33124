"""Reductions and scans of funcgrad.numpy with numpy's signatures (axis, keepdims, dtype).

sum, prod, max, min, cumsum, cumprod, argmax, argmin, all and any are primitives; mean,
var, std, ptp and average are composed from them (differentiable to any order for free).
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from funcgrad.primitives import reductions as P
from funcgrad.numpy._creation import asarray, astype

__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin", "std", "var", "cumsum",
           "cumprod", "argmax", "argmin", "all", "any", "ptp", "average", "normalize_axis",
           "normalize_axis_tuple", "AxisError"]

try:
    from numpy.exceptions import AxisError
except ImportError:  # numpy < 1.25
    from numpy import AxisError  # type: ignore[attr-defined,no-redef]


def normalize_axis_tuple(axis: Any, ndim: int, argname: str = "axis") -> tuple:
    """numpy's int-or-tuple axis argument as a tuple of non-negative axes, in the given
    order; out-of-range axes raise AxisError naming the axis, repeated ones ValueError."""
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise AxisError(f"{argname} {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in `{argname}` argument: {axis!r}")
    return tuple(out)


def normalize_axis(axis: Any, ndim: int) -> tuple:
    """numpy's axis argument (None, int or tuple, negatives allowed) as a sorted tuple."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(normalize_axis_tuple(axis, ndim)))


def _one_axis(axis: Any, ndim: int) -> int:
    return normalize_axis_tuple(axis, ndim)[0]


def _count(shape: tuple, axes: tuple) -> int:
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _prepare(a: Any, dtype: Any) -> Any:
    a = asarray(a)
    return a if dtype is None else astype(a, dtype)


def _reduce(prim: Any, a: Any, axis: Any, keepdims: bool, dtype: Any = None) -> Any:
    a = _prepare(a, dtype)
    return prim(a, axis=normalize_axis(axis, a.ndim), keepdims=bool(keepdims))


def sum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """Sum over ``axis`` (all axes by default)."""
    return _reduce(P.reduce_sum, a, axis, keepdims, dtype)


def prod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """Product over ``axis``; its gradient is exact where elements are zero."""
    return _reduce(P.reduce_prod, a, axis, keepdims, dtype)


def max(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Maximum over ``axis``; the gradient is split equally among tied maxima."""
    return _reduce(P.reduce_max, a, axis, keepdims)


def min(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Minimum over ``axis``; the gradient is split equally among tied minima."""
    return _reduce(P.reduce_min, a, axis, keepdims)


amax = max
amin = min


def ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Range (maximum - minimum) over ``axis``."""
    return max(a, axis, keepdims) - min(a, axis, keepdims)


def mean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """Arithmetic mean over ``axis`` (float64 for integer input, as numpy)."""
    a = asarray(a)
    if dtype is None and not np.issubdtype(a.dtype, np.inexact):
        dtype = np.float64
    axes = normalize_axis(axis, a.ndim)
    return sum(a, axes, dtype, keepdims) / _count(a.shape, axes)


def var(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0,
        keepdims: bool = False) -> Any:
    """Variance over ``axis``, dividing by ``n - ddof`` (real for complex input)."""
    a = asarray(a)
    axes = normalize_axis(axis, a.ndim)
    d = a - mean(a, axes, dtype, keepdims=True)
    if np.issubdtype(d.dtype, np.complexfloating):
        import funcgrad.numpy as fnp
        d2 = fnp.real(d * fnp.conj(d))
    else:
        d2 = d * d
    return sum(d2, axes, keepdims=keepdims) / builtins.max(_count(a.shape, axes) - ddof, 0)


def std(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0,
        keepdims: bool = False) -> Any:
    """Standard deviation: sqrt(var)."""
    from funcgrad.numpy import sqrt
    return sqrt(var(a, axis, dtype, ddof, keepdims))


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """Weighted mean over ``axis``; with ``returned`` also the sum of the weights."""
    from funcgrad.numpy._shape import broadcast_to, reshape
    a = asarray(a)
    axes = normalize_axis(axis, a.ndim)
    if weights is None:
        avg = mean(a, axes, keepdims=keepdims)
        scale = asarray(_count(a.shape, axes), dtype=avg.dtype)
    else:
        if not np.issubdtype(a.dtype, np.inexact):
            a = astype(a, np.float64)
        w = asarray(weights)
        if w.shape != a.shape:
            if isinstance(axis, (tuple, list)) or axis is None or w.shape != (
                    a.shape[axes[0]],):
                raise ValueError(f"average: weights of shape {w.shape} do not fit an array "
                                 f"of shape {a.shape}: give weights of the array's shape, "
                                 "or 1-D weights along a single int axis")
            w = broadcast_to(reshape(w, tuple(-1 if i == axes[0] else 1
                                              for i in range(a.ndim))), a.shape)
        scale = sum(w, axes, keepdims=keepdims)
        avg = sum(a * w, axes, keepdims=keepdims) / scale
    return (avg, broadcast_to(scale, avg.shape)) if returned else avg


def _scan(prim: Any, a: Any, axis: Any, dtype: Any) -> Any:
    from funcgrad.numpy._shape import ravel
    a = _prepare(a, dtype)
    if axis is None:
        a, axis = ravel(a), 0
    return prim(a, axis=_one_axis(axis, a.ndim))


def cumsum(a: Any, axis: Any = None, dtype: Any = None) -> Any:
    """Cumulative sum along ``axis`` (of the flattened array by default)."""
    return _scan(P.cumsum, a, axis, dtype)


def cumprod(a: Any, axis: Any = None, dtype: Any = None) -> Any:
    """Cumulative product along ``axis``; its gradient is exact where elements are zero."""
    return _scan(P.cumprod, a, axis, dtype)


def _arg(prim: Any, a: Any, axis: Any, keepdims: bool) -> Any:
    a = asarray(a)
    return prim(a, axis=None if axis is None else _one_axis(axis, a.ndim),
                keepdims=bool(keepdims))


def argmax(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Index of the (first) maximum; of the flattened array when ``axis`` is None."""
    return _arg(P.argmax, a, axis, keepdims)


def argmin(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Index of the (first) minimum; of the flattened array when ``axis`` is None."""
    return _arg(P.argmin, a, axis, keepdims)


def all(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Whether every element along ``axis`` is true (not differentiable)."""
    return _reduce(P.reduce_all, a, axis, keepdims)


def any(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Whether some element along ``axis`` is true (not differentiable)."""
    return _reduce(P.reduce_any, a, axis, keepdims)
