"""The op table, part 4: order statistics, running extremes and counting.

median, nanmedian, kthvalue, mode, quantile, msort, cummax, cummin, logcumsumexp,
aminmax, std_mean, var_mean, nanmean (differentiable: the values are gathered from the
input at indices computed without gradient, so the gradient goes where PyTorch sends it),
and searchsorted, bucketize, histc, bincount, isin (no gradient).

Every index here is found with funcgrad.numpy ops (a stable argsort puts NaN last, as
PyTorch orders NaN above every number), so the ops also run under funcgrad's transforms.
Ties: where PyTorch documents no index (median, kthvalue among equal values) ours is the
first in stable sorted order; mode and the running extremes pick the last occurrence, as
PyTorch's CPU kernels do.
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.primitives.control import stop_gradient
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._dispatch import apply, const_like
from funcgrad.torch._ops_basic import FUNCTIONS, METHODS, Spec, cast, op, operand
from funcgrad.torch._ops_reduce import _axes, _correction, _return_type, _std, return_types
from funcgrad.torch._tensor import Tensor, _type_word
from funcgrad.torch._factories import tensor

__all__ = ["median", "nanmedian", "kthvalue", "mode", "cummax", "cummin", "aminmax", "unique",
           "searchsorted", "bucketize", "histc", "bincount", "isin", "std_mean", "var_mean"]

for _name, _fields in [("median", ("values", "indices")), ("nanmedian", ("values", "indices")),
                       ("mode", ("values", "indices")), ("cummax", ("values", "indices")),
                       ("cummin", ("values", "indices")), ("aminmax", ("min", "max"))]:
    setattr(return_types, _name, _return_type(_name, _fields))


def _axis(dim: int, ndim: int) -> int | None:
    """One torch ``dim`` as an axis (None for a 0-d tensor, where only 0 and -1 exist)."""
    axes = _axes(dim, ndim)
    return axes[0] if axes else None


def _nonempty(name: str, input: Tensor, axis: int | None) -> None:
    if axis is not None and input.shape[axis] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")


def _selected(x: Any, idx: Any, axis: int | None, keepdim: bool) -> tuple:
    """``(values, indices)``: x at ``idx`` (kept along ``axis``), the axis then dropped
    unless ``keepdim``; the gradient goes to those positions only."""
    if axis is None:
        return x, fnp.zeros((), np.int64)
    values = fnp.take_along_axis(x, idx, axis=axis)
    if not keepdim:
        values, idx = fnp.squeeze(values, axis), fnp.squeeze(idx, axis)
    return values, fnp.astype(idx, np.int64)


def _sorted_position(x: Any, pos: Any, axis: int) -> Any:
    """The index (kept along ``axis``) of the element at sorted position ``pos``."""
    order = fnp.argsort(x, axis=axis, kind="stable")
    return fnp.take_along_axis(order, pos, axis=axis)


def _nan_count(x: Any, axis: int) -> Any:
    return fnp.sum(fnp.isnan(x), axis=axis, keepdims=True) if fnp.issubdtype(
        x.dtype, np.inexact) else fnp.zeros_like(fnp.sum(x, axis=axis, keepdims=True),
                                                 dtype=np.int64)


def _median_index(x: Any, axis: int, skip_nan: bool) -> Any:
    """The lower median's index along ``axis``: with a NaN in the slice (and not
    ``skip_nan``) the first NaN's; ``skip_nan`` takes the median of the rest."""
    n, nans = x.shape[axis], _nan_count(x, axis)
    if skip_nan:
        pos = fnp.maximum(fnp.floor_divide(fnp.subtract(n - 1, nans), 2), 0)
    else:
        pos = fnp.where(fnp.greater(nans, 0), fnp.subtract(n, nans), (n - 1) // 2)
    return _sorted_position(x, pos, axis)


def _evenly(x: Any, value: Any) -> Any:
    """``value`` (a scalar taken from x) whose gradient is shared evenly among the
    elements equal to it, or among the NaNs when it is NaN (PyTorch's rule for full
    median, nanmedian, amin, amax)."""
    value = stop_gradient(value)
    if not fnp.issubdtype(x.dtype, np.inexact):
        return value
    mask = fnp.where(fnp.isnan(value), fnp.isnan(x), fnp.equal(x, value))
    share = fnp.sum(fnp.where(mask, fnp.subtract(x, stop_gradient(x)), 0))
    count = fnp.astype(fnp.maximum(fnp.sum(mask), 1), x.dtype)
    return fnp.add(value, fnp.true_divide(share, count))


def _medians(kind: str) -> Any:
    skip_nan = kind == "nanmedian"
    node = "NanmedianBackward" if skip_nan else "MedianBackward"
    result = getattr(return_types, kind)

    def median(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
        if dim is None:
            if input.numel() == 0:
                return apply(node + "0", lambda x: fnp.full((), np.nan, x.dtype), [input])

            def whole(x: Any) -> Any:
                flat = fnp.reshape(x, (-1,))
                at = _median_index(flat, 0, skip_nan)
                return _evenly(flat, fnp.reshape(fnp.take_along_axis(flat, at, 0), ()))
            return apply(node + "0", whole, [input])
        axis = _axis(dim, input.ndim)
        _nonempty(kind, input, axis)
        return result(*apply(node + "1", lambda x: _selected(
            x, None if axis is None else _median_index(x, axis, skip_nan), axis, keepdim),
            [input], multi=True))
    median.__name__ = kind
    median.__doc__ = (f"``{kind}(input)``: the lower median (its gradient shared among "
                      f"equal elements); ``{kind}(input, dim, keepdim)``: values and "
                      "indices." + (" NaNs are ignored." if skip_nan else
                                    " A NaN makes the result NaN."))
    return median


median, nanmedian = _medians("median"), _medians("nanmedian")


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """The ``k``-th smallest element (1-based) along ``dim`` and its index (NaN counts as
    larger than every number)."""
    axis = _axis(dim, input.ndim)
    size = 1 if axis is None else input.shape[axis]
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension "
                         f"{0 if axis is None else axis}")
    return return_types.kthvalue(*apply("KthvalueBackward0", lambda x: _selected(
        x, None if axis is None else _sorted_position(
            x, fnp.full(x.shape[:axis] + (1,) + x.shape[axis + 1:], k - 1, np.int64), axis),
        axis, keepdim), [input], multi=True))


def _mode_index(x: Any, axis: int) -> Any:
    """The most frequent value's last index along ``axis`` (the smallest value among
    equally frequent ones)."""
    order = fnp.argsort(x, axis=axis, kind="stable")
    s = fnp.take_along_axis(x, order, axis=axis)
    counts = fnp.sum(fnp.equal(fnp.expand_dims(s, axis + 1), fnp.expand_dims(s, axis)),
                     axis=axis + 1)
    first = fnp.argmax(counts, axis=axis, keepdims=True)  # the first of the smallest run
    last = fnp.add(first, fnp.subtract(fnp.take_along_axis(counts, first, axis=axis), 1))
    return fnp.take_along_axis(order, last, axis=axis)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and
    the index of its last occurrence."""
    axis = _axis(dim, input.ndim)
    _nonempty("mode", input, axis)
    return return_types.mode(*apply("ModeBackward0", lambda x: _selected(
        x, None if axis is None else _mode_index(x, axis), axis, keepdim), [input],
        multi=True))


def msort(input: Tensor) -> Tensor:
    """``sort(input, dim=0).values``."""
    return FUNCTIONS["sort"](input, 0).values


# -- quantiles ------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantiles(kind: str) -> Any:
    ignore_nan = kind == "nanquantile"
    fn = fnp.nanquantile if ignore_nan else fnp.quantile

    def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                 interpolation: str = "linear") -> Tensor:
        _check_quantile(kind, input, q, interpolation)
        axis = None if dim is None else _axis(dim, input.ndim)
        if isinstance(q, Tensor):  # q's gradient is the interpolation's, as PyTorch's
            return apply("SqueezeBackward4", lambda x, qs: fn(
                x, qs, axis=axis, keepdims=keepdim, method=interpolation), [input, q])
        return apply("SqueezeBackward4", lambda x: fn(x, float(q), axis=axis,
                                                      keepdims=keepdim,
                                                      method=interpolation), [input])
    quantile.__name__ = kind
    quantile.__doc__ = ("The ``q``-th quantiles over ``dim`` (all of input by default); "
                        "a 1-D ``q`` adds a leading dimension."
                        + (" NaNs are ignored." if ignore_nan else
                           " A slice holding a NaN gives NaN."))
    return quantile


def _check_quantile(kind: str, input: Tensor, q: Any, interpolation: str) -> None:
    """PyTorch's errors for quantile's arguments."""
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError(f"{kind}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{kind}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{kind}() q tensor must be same dtype as the input tensor")
        values = q.detach().numpy(force=True)
    else:
        values = np.asarray(q, dtype=np.float64)
    if np.any((values < 0) | (values > 1)):
        raise RuntimeError(f"{kind}() q values must be in the range [0, 1]" if isinstance(
            q, Tensor) else f"{kind}() q must be in the range [0, 1] but got {q}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{kind}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError(f"{kind}() input tensor must be non-empty")


quantile, nanquantile = _quantiles("quantile"), _quantiles("nanquantile")


# -- running extremes and sums --------------------------------------------------------

def _shifted(x: Any, s: int, axis: int, fill: Any) -> Any:
    """x moved ``s`` places along ``axis`` (toward higher indices), ``fill`` in front."""
    n = x.shape[axis]
    head = fnp.full(x.shape[:axis] + (min(s, n),) + x.shape[axis + 1:], fill, x.dtype)
    kept = fnp.take(x, np.arange(max(n - s, 0)), axis=axis)
    return fnp.concatenate([head, kept], axis=axis)


def _running_index(x: Any, axis: int, largest: bool) -> Any:
    """The index of the running maximum (minimum) along ``axis``: the last position of
    the extreme so far, or of the last NaN once there is one (PyTorch's cummax)."""
    n = x.shape[axis]
    idx = fnp.broadcast_to(fnp.reshape(fnp.arange(n), (n,) + (1,) * (x.ndim - axis - 1)),
                           x.shape)
    val, s = x, 1
    nan = fnp.isnan(x) if fnp.issubdtype(x.dtype, np.inexact) else None
    while s < n:  # Hillis-Steele scan of "the later element wins ties and NaN"
        before_v, before_i = _shifted(val, s, axis, 0), _shifted(idx, s, axis, -1)
        better = fnp.greater_equal(val, before_v) if largest else fnp.less_equal(
            val, before_v)
        if nan is not None:
            val_nan, before_nan = fnp.isnan(val), fnp.isnan(before_v)
            better = fnp.logical_or(val_nan, fnp.logical_and(better,
                                                              fnp.logical_not(before_nan)))
        keep = fnp.logical_or(better, fnp.less(before_i, 0))
        val, idx = fnp.where(keep, val, before_v), fnp.where(keep, idx, before_i)
        s *= 2
    return idx


def _running(kind: str) -> Any:
    largest = kind == "cummax"
    result = getattr(return_types, kind)

    def running(input: Tensor, dim: int) -> Any:
        axis = _axis(dim, input.ndim)

        def f(x: Any) -> tuple:
            if axis is None or x.shape[axis] == 0:
                return x, fnp.zeros(x.shape, np.int64)
            return _selected(x, _running_index(x, axis, largest), axis, True)
        return result(*apply(kind.capitalize() + "Backward0", f, [input], multi=True))
    running.__name__ = kind
    running.__doc__ = (f"The running {'maximum' if largest else 'minimum'} along ``dim`` "
                       "and where it was reached (the last such index; NaN propagates).")
    return running


cummax, cummin = _running("cummax"), _running("cummin")


@op("logcumsumexp")
def _logcumsumexp(input: Tensor, dim: int) -> Spec:
    """log(cumsum(exp(x))) along ``dim``, as a scan of logaddexp (no overflow)."""
    axis = _axis(dim, input.ndim)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for '
                                  f"'{_type_word(input.dtype)}'")

    def f(x: Any) -> Any:
        n, s = (0 if axis is None else x.shape[axis]), 1
        while s < n:
            x = fnp.logaddexp(x, _shifted(x, s, axis, -np.inf))
            s *= 2
        return x
    return Spec("LogcumsumexpBackward0", f, [input])


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> Any:
    """``(min, max)`` over ``dim`` (all of input by default), gradients as amin/amax's."""
    if input.numel() == 0 and dim is None:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                           "the operation has no identity.")
    axes = None if dim is None else _axes(dim, input.ndim)
    return return_types.aminmax(*apply("AminmaxBackward0", lambda x: (
        fnp.min(x, axis=axes, keepdims=keepdim), fnp.max(x, axis=axes, keepdims=keepdim)),
        [input], multi=True))


def _spread_mean(kind: str) -> Any:
    spread = _std if kind == "std" else fnp.var

    def spread_mean(input: Tensor, dim: Any = None, unbiased: Any = None,
                    keepdim: bool = False, *, correction: Any = None) -> tuple:
        if not (input.dtype.is_floating_point or input.dtype.is_complex):
            raise RuntimeError(f"{kind}_mean only support floating point and complex "
                               "dtypes")
        dim, ddof = _correction(dim, unbiased, correction)
        axes = None if dim is None else _axes(dim, input.ndim)
        return apply(kind.capitalize() + "MeanBackward0", lambda x: (
            spread(x, axis=axes, ddof=ddof, keepdims=keepdim),
            fnp.mean(x, axis=axes, keepdims=keepdim)), [input], multi=True)
    spread_mean.__name__ = kind + "_mean"
    spread_mean.__doc__ = f"``({kind}, mean)`` of input over ``dim`` in one op."
    return spread_mean


std_mean, var_mean = _spread_mean("std"), _spread_mean("var")


@op("nanmean")
def _nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *,
             dtype: Any = None) -> Spec:
    """The mean of the non-NaN elements (NaN where there is none)."""
    dt = input.dtype if dtype is None else D.to_torch_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex "
                           f"dtype but got {_type_word(dt)}")
    axes = None if dim is None else _axes(dim, input.ndim)

    def f(x: Any) -> Any:
        x = cast(x, dt.np)
        nan = fnp.isnan(x)
        total = fnp.sum(fnp.where(nan, 0, x), axis=axes, keepdims=keepdim)
        count = fnp.sum(fnp.logical_not(nan), axis=axes, keepdims=keepdim)
        return fnp.true_divide(total, fnp.astype(count, dt.np))
    return Spec("DivBackward0", f, [input])


# -- searching and counting (no gradient) --------------------------------------------

def _below(a: Any, v: Any, right: bool) -> Any:
    """Whether a < v (``right``: a <= v) with NaN above every number."""
    if not fnp.issubdtype(fnp.result_type(a, v), np.inexact):
        return fnp.less_equal(a, v) if right else fnp.less(a, v)
    v_nan = fnp.isnan(v)
    if right:
        return fnp.logical_or(fnp.less_equal(a, v), v_nan)
    return fnp.logical_or(fnp.less(a, v), fnp.logical_and(v_nan, fnp.logical_not(
        fnp.isnan(a))))


def _int_type(out_int32: bool) -> np.dtype:
    return np.dtype(np.int32 if out_int32 else np.int64)


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Tensor | None = None
                 ) -> Tensor:
    """Where each element of ``input`` would go in the innermost dimension of
    ``sorted_sequence`` to keep it sorted (the first such place; ``right``/``side='right'``
    the last)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' "
                               f"but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    values = operand(input)
    seq_shape, in_shape = tuple(sorted_sequence.shape), () if scalar else tuple(values.shape)
    if len(seq_shape) != 1 and (scalar or seq_shape[:-1] != in_shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           "the first N-1 dimensions of boundaries tensor and input value "
                           "tensor must match, but we got boundaries tensor "
                           f"{list(seq_shape)} and input value tensor {list(in_shape)}")
    order = None if sorter is None else sorter._a
    slots = [sorted_sequence] + ([] if scalar else [values])

    def f(seq: Any, v: Any = values) -> Any:
        if order is not None:
            seq = fnp.take_along_axis(seq, order, axis=-1)
        v = fnp.asarray(v, dtype=seq.dtype) if scalar else v
        a = seq if seq.ndim == 1 else fnp.expand_dims(seq, -2)
        counts = fnp.sum(_below(a, fnp.expand_dims(v, -1), right), axis=-1)
        return fnp.astype(counts, _int_type(out_int32))
    return apply("searchsorted", f, slots, differentiable=False)


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False,
              right: bool = False) -> Tensor:
    """The bucket of each element of ``input`` among the 1-D ``boundaries``
    (``boundaries[i-1] < x <= boundaries[i]``; ``right``: ``<= x <``)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def histc(input: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:  # noqa: A002
    """A histogram of ``bins`` equal bins over [min, max] (the data's range when
    min == max); elements outside are ignored."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"histogram_cpu" not implemented for '
                                  f"'{_type_word(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           "dimension 0")
    raw = input.detach().numpy(force=True).ravel()
    lo, hi = builtins.float(min), builtins.float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi and raw.size:
        lo, hi = builtins.float(raw.min()), builtins.float(raw.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc(): range of [{lo}, {hi}] is not finite")
    kept = raw[(raw >= lo) & (raw <= hi)]
    counts = np.histogram(kept, bins=bins, range=(lo, hi))[0]
    return _constant(counts.astype(input.dtype.np), input)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0..max(input) occurs in the 1-D non-negative integer
    ``input`` (summing ``weights`` instead of ones when given)."""
    if input.dtype.np.kind not in "iub":
        raise NotImplementedError(f'"bincount_cpu" not implemented for '
                                  f"'{_type_word(input.dtype)}'")
    if input.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    raw = input.detach().numpy(force=True)
    if raw.size and raw.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return _constant(np.bincount(raw, minlength=minlength).astype(np.int64), input)
    if tuple(weights.shape) != tuple(input.shape):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    w = weights.detach().numpy(force=True)
    dt = np.float32 if w.dtype == np.float32 else np.float64
    return _constant(np.bincount(raw, weights=w.astype(np.float64),
                                 minlength=minlength).astype(dt), input)


def _constant(raw: np.ndarray, like: Tensor) -> Tensor:
    return apply("constant", lambda: const_like(raw, like), [], differentiable=False)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """Whether each of ``elements`` is in ``test_elements`` (either may be a number)."""
    if not (isinstance(elements, Tensor) or isinstance(test_elements, Tensor)):
        raise TypeError(f"isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__}), but "
                        "expected elements or test_elements to be a Tensor")
    slots = [operand(e) for e in (elements, test_elements) if isinstance(e, Tensor)]
    scalar_element = not isinstance(elements, Tensor)

    def f(*xs: Any) -> Any:
        e = fnp.asarray(elements) if scalar_element else xs[0]
        t = xs[-1] if isinstance(test_elements, Tensor) else fnp.asarray(test_elements)
        found = fnp.any(fnp.equal(fnp.expand_dims(e, -1), fnp.reshape(t, (-1,))), axis=-1)
        return fnp.logical_not(found) if invert else found
    return apply("isin", f, slots, differentiable=False)


for _f in (median, nanmedian, kthvalue, mode, msort, quantile, nanquantile, cummax, cummin,
           aminmax, std_mean, var_mean, searchsorted, bucketize, histc, bincount, isin):
    FUNCTIONS[_f.__name__] = _f
for _f in (median, nanmedian, kthvalue, mode, msort, quantile, nanquantile, cummax, cummin,
           aminmax, histc, bincount):
    METHODS[_f.__name__] = _f


# -- unique values and index conversions (no gradient) ---------------------------------

def _unique_result(values: np.ndarray, inverse: np.ndarray, counts: np.ndarray, like: Tensor,
                   return_inverse: bool, return_counts: bool) -> Any:
    out = [_constant(values.astype(like.dtype.np), like)]
    if return_inverse:
        out.append(_constant(inverse.astype(np.int64), like))
    if return_counts:
        out.append(_constant(counts.astype(np.int64), like))
    return out[0] if len(out) == 1 else tuple(out)


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct values (sorted; slices along ``dim`` if given), with the index of
    each element's value and each value's count on request."""
    raw = input.detach().numpy(force=True)
    axis = None if dim is None else _axis(dim, input.ndim)
    values, inverse, counts = np.unique(raw, return_inverse=True, return_counts=True,
                                        axis=axis, equal_nan=False)  # (each NaN its own)
    inverse = inverse.reshape(raw.shape if axis is None else (-1,))
    return _unique_result(values, inverse, counts, input, return_inverse, return_counts)


def unique_consecutive(input: Tensor, return_inverse: bool = False,
                       return_counts: bool = False, dim: int | None = None) -> Any:
    """The values with each run of equal consecutive elements (slices along ``dim``)
    collapsed to one."""
    raw = input.detach().numpy(force=True)
    axis = None if dim is None else _axis(dim, input.ndim)
    rows = raw.reshape(-1, 1) if axis is None else np.moveaxis(raw, axis, 0).reshape(
        raw.shape[axis], -1)
    starts = np.ones(len(rows), dtype=bool)
    if len(rows) > 1:
        starts[1:] = np.any(rows[1:] != rows[:-1], axis=1)
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.nonzero(starts)[0], len(rows)))
    kept = raw.reshape(-1)[starts] if axis is None else np.take(raw, np.nonzero(starts)[0],
                                                                axis=axis)
    return _unique_result(kept, inverse.reshape(raw.shape) if axis is None else inverse,
                          counts, input, return_inverse, return_counts)


def unravel_index(indices: Any, shape: Any) -> tuple:
    """The coordinates, one int64 tensor per dimension of ``shape``, of flat indices."""
    idx = indices if isinstance(indices, Tensor) else tensor(indices)
    if idx.dtype.np.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {idx.dtype}")
    sizes = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    raw = idx.detach().numpy(force=True)
    strides = np.cumprod((1,) + sizes[::-1][:-1])[::-1]
    return tuple(_constant((raw // s % n).astype(np.int64), idx)
                 for s, n in zip(strides, sizes))


def argwhere(input: Tensor) -> Tensor:
    """The indices of the non-zero elements, one row per element."""
    return FUNCTIONS["nonzero"](input)


for _f in (unique, unique_consecutive, unravel_index, argwhere):
    FUNCTIONS[_f.__name__] = _f
for _f in (unique, unique_consecutive, argwhere):
    METHODS[_f.__name__] = _f
