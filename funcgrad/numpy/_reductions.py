"""Reductions of funcgrad.numpy with numpy's signatures (axis, keepdims, dtype)."""
from __future__ import annotations

from typing import Any

from funcgrad.primitives.reductions import reduce_sum
from funcgrad.numpy._creation import asarray, astype

__all__ = ["sum", "normalize_axis"]


def normalize_axis(axis: Any, ndim: int) -> tuple:
    """numpy's axis argument (None, int or tuple, negatives allowed) as a sorted tuple."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if not isinstance(axis, (tuple, list)) else axis
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim if ndim else 0)
    return tuple(sorted(out))


def sum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    a = asarray(a)
    if dtype is not None:
        a = astype(a, dtype)
    return reduce_sum(a, axis=normalize_axis(axis, a.ndim), keepdims=bool(keepdims))
