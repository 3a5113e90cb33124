"""``numpy.lib.stride_tricks.sliding_window_view``, differentiable.

One `sliding_windows` primitive per windowed axis: a strided view of the input (no copy),
whose transpose adds each window back (its gradient). Windows of numpy's layout: the
windowed axes shrink to the number of positions and the window axes come last, in the
order of ``axis``.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from funcgrad.array import Array
from funcgrad.numpy._creation import asarray
from funcgrad.numpy._reductions import normalize_axis_tuple
from funcgrad.numpy._shape import reshape
from funcgrad.primitives.conv import sliding_windows

__all__ = ["sliding_window_view"]


def _one_axis(x: Any, axis: int, size: int) -> Any:
    """Windows of ``size`` along ``axis``, their offsets appended as the last axis."""
    n = x.ndim
    window = tuple(size if i == axis else 1 for i in range(n))
    out = sliding_windows(x, window_dimensions=window, window_strides=(1,) * n,
                          padding=((0, 0),) * n, base_dilation=(1,) * n,
                          window_dilation=(1,) * n, fill=0.0)
    return reshape(out, out.shape[:n] + (size,))


def sliding_window_view(x: Any, window_shape: int | Sequence[int], axis: Any = None, *,
                        subok: bool = False, writeable: bool = False) -> Array:
    """All windows of ``window_shape`` over ``axis`` (every axis by default); an axis may
    be named more than once (windows of windows), as in numpy."""
    if writeable:
        raise ValueError("sliding_window_view: funcgrad Arrays are immutable, so the view "
                         "cannot be writeable; use writeable=False")
    x = asarray(x)
    shape = (window_shape,) if np.ndim(window_shape) == 0 else tuple(window_shape)
    shape = tuple(operator.index(w) for w in shape)
    if any(w < 0 for w in shape):
        raise ValueError("`window_shape` cannot contain negative values")
    if axis is None:
        if len(shape) != x.ndim:
            raise ValueError(f"Since axis is `None`, must provide window_shape for all "
                             f"dimensions of `x`; got {len(shape)} window_shape elements and "
                             f"`x.ndim` is {x.ndim}.")
        axes = tuple(range(x.ndim))
    else:
        raw = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        axes = tuple(normalize_axis_tuple(a, x.ndim)[0] for a in raw)
        if len(shape) != len(axes):
            raise ValueError(f"Must provide matching length window_shape and axis; got "
                             f"{len(shape)} window_shape elements and {len(axes)} axes "
                             "elements.")
    for ax, w in zip(axes, shape):
        if x.shape[ax] < w:
            raise ValueError("window shape cannot be larger than input array shape")
        x = _one_axis(x, ax, w)
    return x
