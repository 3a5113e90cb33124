"""Shape functions of funcgrad.numpy (numpy's names and signatures)."""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.primitives import shape as P
from funcgrad.numpy._creation import asarray

__all__ = ["reshape", "broadcast_to", "transpose"]


def reshape(a: Any, newshape: Any = None, order: str = "C", *, shape: Any = None) -> Any:
    a = asarray(a)
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    target = shape if shape is not None else newshape
    target = (target,) if isinstance(target, (int, np.integer)) else tuple(target)
    out_shape = np.empty(a.shape, dtype=[]).reshape(target).shape  # resolves -1, checks size
    return a if out_shape == a.shape else P.reshape(a, shape=out_shape)


def broadcast_to(array: Any, shape: Any) -> Any:
    a = asarray(array)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return a if a.shape == shape else P.broadcast_to(a, shape=shape)


def transpose(a: Any, axes: Any = None) -> Any:
    a = asarray(a)
    axes = tuple(range(a.ndim))[::-1] if axes is None else tuple(int(i) % max(a.ndim, 1) for i in axes)
    return a if axes == tuple(range(a.ndim)) else P.transpose(a, axes=axes)
