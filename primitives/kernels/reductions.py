"""Kernels of the reductions: implementations that reuse fresh temporaries in place or
choose a faster indexing path for common shapes."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["reduce_with", "tie_weights", "linear_recurrence", "logsumexp", "log_softmax",
           "nll_loss", "unweighted"]


def reduce_with(impl: Any, ufunc: np.ufunc | None) -> Any:
    """A reduction over static axes: ``ufunc.reduce`` on numpy arrays (``np.sum`` and its
    kin are Python wrappers around it: same result, less overhead), ``impl`` on other
    arrays (cupy)."""
    def reduce(x: Any, axis: Any, keepdims: bool) -> Any:
        if ufunc is not None and type(x) is np.ndarray:
            return ufunc.reduce(x, axis=axis, keepdims=keepdims)
        return impl(x, axis=axis, keepdims=keepdims)
    reduce.__name__ = getattr(impl, "__name__", "reduce")
    return reduce


def tie_weights(x: Any, out: Any, axis: tuple) -> Any:
    hit = x == out
    return (hit / np.sum(hit, axis=axis, keepdims=True)).astype(x.dtype, copy=False)


def linear_recurrence(a: Any, b: Any, axis: int) -> Any:
    dtype = np.result_type(a.dtype, b.dtype)
    h = np.moveaxis(b, axis, 0).astype(dtype, copy=True)
    a = np.moveaxis(a, axis, 0)
    for k in range(1, h.shape[0]):
        h[k] += a[k] * h[k - 1]
    return np.moveaxis(h, 0, axis)


def logsumexp(x: Any, axis: tuple, keepdims: bool) -> Any:
    """log(sum(exp(x))) shifted by the max (0 where it is not finite): no exp overflows.
    Where every max is finite the sum is at least 1 (the max's own term), so only a row
    of -inf (log(0)) needs the floating-point warning silenced."""
    numpy_in = type(x) is np.ndarray  # ufunc reductions: np.max/np.sum's wrappers skipped
    if x.size:
        peak = (_peak(x, axis) if numpy_in else np.max(x, axis=axis, keepdims=True))
        finite = bool(np.logical_and.reduce(np.isfinite(peak), axis=None) if numpy_in
                      else np.isfinite(peak).all())
        if not finite:
            peak = np.where(np.isfinite(peak), peak, 0)  # all -inf: log(0) + 0 = -inf
        terms = x - peak
        # exp in place on the fresh difference (a 0-d one comes back as a numpy scalar)
        in_place = type(terms) is np.ndarray and terms.dtype.kind in "fc"
        terms = np.exp(terms, out=terms) if in_place else np.exp(terms)
    else:
        peak, terms, finite = 0, np.exp(x), False  # an empty sum is 0 whatever the shift
    total = (np.add.reduce(terms, axis=axis, keepdims=True) if type(terms) is np.ndarray
             else np.sum(terms, axis=axis, keepdims=True))
    if finite:
        out = np.log(total) + peak
    else:
        with np.errstate(divide="ignore"):  # log(0) = -inf: a sum of exp(-inf)
            out = np.log(total) + peak
    return out if keepdims else np.squeeze(out, axis)


def _peak(x: np.ndarray, axis: tuple) -> np.ndarray:
    """The max over ``axis`` (kept). numpy reduces a matrix's short rows one by one, at
    ~100ns a row (13us for a batch of 128 logits of 10 classes); the transposed copy's
    columns are reduced elementwise across its rows, 3-4x faster from 32 rows of at
    most 32 (a max is exact: the order of the comparisons changes no value)."""
    if (x.ndim == 2 and axis in ((1,), (-1,)) and x.shape[0] >= 32 and x.shape[1] <= 32
            and x.dtype.kind == "f"):
        return np.maximum.reduce(np.ascontiguousarray(x.T), axis=0, keepdims=True).T
    return np.maximum.reduce(x, axis=axis, keepdims=True)


def log_softmax(x: Any, axis: tuple) -> Any:
    return x - logsumexp(x, axis, True)


def unweighted(weight: Any) -> bool:
    """Whether a loss weight is the Python number 1 (no weighting)."""
    return type(weight) in (int, float) and weight == 1


def nll_loss(logp: Any, target: Any, weight: Any, axis: int, reduction: str) -> Any:
    """-logp at each target's class along ``axis``, weighted, reduced as PyTorch does;
    (C,) and (N, C) inputs take one fancy index. A target outside the classes raises
    PyTorch's IndexError here, where the values are known in every mode (a compiled
    program's labels are only known when it runs; numpy's indexing would wrap -1)."""
    classes = logp.shape[axis]
    numpy_in = type(logp) is np.ndarray and type(target) is np.ndarray
    if target.size and _out_of_range(target, classes, numpy_in):
        bad = target[(target < 0) | (target >= classes)].ravel()[0]
        raise IndexError(f"Target {int(bad)} is out of bounds.")
    if numpy_in and logp.ndim <= 2:
        picked = logp[target] if logp.ndim == 1 else logp[np.arange(len(target)), target]
    else:
        picked = np.squeeze(np.take_along_axis(logp, np.expand_dims(target, axis), axis),
                            axis)
    if not unweighted(weight):
        picked = picked * weight
    if reduction == "none":
        return -picked
    # (ufunc reductions: what ndarray.sum and np.sum call, without their wrappers)
    total = -(np.add.reduce(picked, axis=None) if numpy_in else picked.sum())
    if reduction == "sum":
        return total
    size = math.prod(target.shape)
    if type(weight) in (int, float):
        return total / (weight * size)
    return total / (np.add.reduce(weight, axis=None) if type(weight) is np.ndarray
                    else np.sum(weight))


def _out_of_range(target: Any, classes: int, numpy_in: bool) -> bool:
    """Whether a label is negative or at least ``classes``; on numpy, one reduction: a
    signed label read as unsigned is negative exactly where it is at least 2**(bits-1)."""
    if not numpy_in or target.dtype.kind not in "iu":
        return bool(target.min() < 0 or target.max() >= classes)
    unsigned = target.view(target.dtype.str.replace("i", "u"))  # (same byte order)
    return bool(np.maximum.reduce(unsigned, axis=None) >= classes)
