"""jax.nn's functions over axes: softmax, log_softmax, logsumexp (all with ``where``
masks), standardize, glu, one_hot."""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad._config import default_float
from funcgrad.array import Array
from funcgrad.numpy._reductions import normalize_axis_tuple
from funcgrad.scipy import special
from ._activations import sigmoid

__all__ = ["softmax", "log_softmax", "logsumexp", "standardize", "glu", "one_hot"]


def _masked(x: Array, where: Any, fill: float) -> Array:
    return x if where is None else fnp.where(where, x, fill)


def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Array:
    """x - logsumexp(x) over ``axis``; -inf where ``where`` is False."""
    x = fnp.asarray(x)
    out = special.log_softmax(_masked(x, where, -np.inf), axis=axis)
    return out if where is None else fnp.where(where, out, -np.inf)


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Array:
    """exp(x) / sum(exp(x)) over ``axis``; 0 where ``where`` is False."""
    x = fnp.asarray(x)
    out = fnp.exp(special.log_softmax(_masked(x, where, -np.inf), axis=axis))
    return out if where is None else fnp.where(where, out, 0.0)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """log(sum(b exp(a))) over ``axis`` (`funcgrad.scipy.special.logsumexp`), the masked
    elements left out."""
    a = fnp.asarray(a)
    return special.logsumexp(_masked(a, where, -np.inf), axis=axis, b=b, keepdims=keepdims,
                             return_sign=return_sign)


def _mean(x: Array, axis: Any, where: Any) -> Array:
    if where is None:
        return fnp.mean(x, axis=axis, keepdims=True)
    where = fnp.broadcast_to(fnp.asarray(where), x.shape)
    count = fnp.sum(where, axis=axis, keepdims=True)
    return fnp.sum(fnp.where(where, x, 0.0), axis=axis, keepdims=True) / count


def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None,
                epsilon: Any = 1e-5, where: Any = None, *, algorithm: str = "fast") -> Array:
    """(x - mean) / sqrt(variance + epsilon) over ``axis``. The variance is JAX's
    ``algorithm``: 'fast', mean(x^2) - mean(x)^2 clipped at 0 (JAX's default; it loses
    digits when |mean| >> std), or 'stable', the two-pass mean((x - mean)^2)."""
    x = fnp.asarray(x)
    if mean is None:
        mean = _mean(x, axis, where)
    if variance is None:
        if algorithm == "stable":
            variance = _mean(fnp.square(x - mean), axis, where)
        elif algorithm == "fast":
            variance = fnp.maximum(_mean(fnp.square(x), axis, where) - fnp.square(mean), 0.0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return (x - mean) / fnp.sqrt(variance + epsilon)


def glu(x: Any, axis: int = -1) -> Array:
    """a sigmoid(b) for x split in halves a, b along ``axis``."""
    x = fnp.asarray(x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu: the size of axis {axis} must be divisible by 2, got {size}")
    first, second = fnp.split(x, 2, axis)
    return first * sigmoid(second)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Array:
    """1 where x equals the class index along a new ``axis`` of length ``num_classes``, 0
    elsewhere (also for indices outside [0, num_classes)); not differentiable."""
    if not isinstance(num_classes, (int, np.integer)) or isinstance(num_classes, bool):
        raise TypeError(f"one_hot: num_classes must be a Python int, got {num_classes!r}")
    x = fnp.asarray(x)
    (pos,) = normalize_axis_tuple(axis, x.ndim + 1)
    shape = [1] * (x.ndim + 1)
    shape[pos] = int(num_classes)
    classes = fnp.reshape(fnp.arange(int(num_classes)), tuple(shape))
    hit = fnp.expand_dims(x, pos) == classes
    return hit.astype(default_float() if dtype is None else dtype)
