"""Reductions and scans of funcgrad.numpy with numpy's signatures (axis, dtype, keepdims,
initial, where) and the Array API's (cumulative_sum, correction=, include_initial=).

sum, prod, max, min, cumsum, cumprod, argmax, argmin, all and any are primitives; mean,
var, std, ptp, average and count_nonzero are composed from them (differentiable to any
order for free). ``where=`` replaces the masked-out elements by the reduction's identity
(``initial`` for max and min, which have none), so masked elements get no gradient.

Integer sums and products accumulate in the default integer (int64, or int32 with x64
disabled; unsigned inputs in the unsigned one), as numpy and the Array API say; an explicit
``dtype`` is the result's dtype (for a narrow integer dtype the wide accumulation is cast
back, which is the same modular result). ``out=`` is refused: Arrays are immutable.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from funcgrad._config import default_int, requested_dtype
from funcgrad._promotion import INEXACT, computed_dtype
from funcgrad.primitives import reductions as P
from funcgrad.numpy._creation import as_index_array, asarray, astype, full, promote_dtypes
from funcgrad.numpy._elementwise import (conj, maximum, minimum, not_equal, real, sqrt,
                                         where)

__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin", "std", "var", "cumsum",
           "cumprod", "cumulative_sum", "cumulative_prod", "argmax", "argmin", "all", "any",
           "ptp", "average", "count_nonzero", "normalize_axis", "normalize_axis_tuple",
           "AxisError"]

try:
    from numpy.exceptions import AxisError
except ImportError:  # numpy < 1.25
    from numpy import AxisError  # type: ignore[attr-defined,no-redef]


def axis_index(axis: Any, argname: str = "axis") -> int:
    """One axis as a Python int: integers (and integer Arrays) only, as numpy's
    ``operator.index`` rule; a float or a bool raises numpy's TypeError instead of being
    truncated."""
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"an integer is required for the {argname}")
    return operator.index(axis)


def normalize_axis_tuple(axis: Any, ndim: int, argname: str = "axis") -> tuple:
    """numpy's int-or-tuple axis argument as a tuple of non-negative axes, in the given
    order; out-of-range axes raise AxisError naming the axis, repeated ones ValueError,
    non-integers TypeError."""
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = axis_index(a, argname)
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


def no_out(out: Any, name: str) -> None:
    """numpy's ``out=`` has no meaning for immutable Arrays: refuse it clearly."""
    if out is not None:
        raise TypeError(f"{name}: out= is not supported because funcgrad Arrays are "
                        "immutable; use the returned Array instead")


def _count(shape: tuple, axes: tuple) -> int:
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def accumulator(dtype: np.dtype, requested: Any = None) -> np.dtype:
    """The dtype a sum or product of ``dtype`` elements is computed and returned in."""
    if requested is not None:
        return np.dtype(requested)
    wide = default_int()
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < wide.itemsize):
        return wide
    if dtype.kind == "u" and dtype.itemsize < wide.itemsize:
        return np.dtype(f"uint{8 * wide.itemsize}")
    return dtype


def _masked(a: Any, mask: Any, fill: Any) -> Any:
    """``a`` with the elements outside ``mask`` replaced by ``fill`` (numpy's where=)."""
    if mask is None or mask is True:
        return a
    return where(mask, a, fill)


def _accumulate(prim: Any, identity: int, a: Any, axis: Any, dtype: Any, out: Any,
                keepdims: bool, initial: Any, mask: Any, name: str) -> Any:
    no_out(out, name)
    a = asarray(a)
    acc = accumulator(a.dtype, dtype)
    a = _masked(a if a.dtype == acc else astype(a, acc), mask, identity)
    result = prim(a, axis=normalize_axis(axis, a.ndim), keepdims=builtins.bool(keepdims))
    if result.dtype != acc:
        result = astype(result, acc)
    if initial is not None:
        result = result + initial if identity == 0 else result * initial
        result = result if result.dtype == acc else astype(result, acc)
    return result


def sum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
        keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    """Sum over ``axis`` (all axes by default), plus ``initial``, of the elements selected
    by ``where``."""
    return _accumulate(P.reduce_sum, 0, a, axis, requested_dtype(dtype, "sum"), out,
                       keepdims, initial, where, "sum")


def prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    """Product over ``axis``; its gradient is exact where elements are zero."""
    return _accumulate(P.reduce_prod, 1, a, axis, requested_dtype(dtype, "prod"), out,
                       keepdims, initial, where, "prod")


def _extreme(prim: Any, pick: Any, a: Any, axis: Any, out: Any, keepdims: bool,
             initial: Any, mask: Any, name: str) -> Any:
    no_out(out, name)
    a = asarray(a)
    if mask is not None and mask is not True:
        if initial is None:
            raise ValueError(f"reduction operation '{name}' does not have an identity, so "
                             "to use a where mask one has to specify 'initial'")
        a = _masked(a, mask, initial)
    axes = normalize_axis(axis, a.ndim)
    if initial is None:
        return prim(a, axis=axes, keepdims=builtins.bool(keepdims))
    if _count(a.shape, axes) == 0:
        shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape)
                      if keepdims or i not in axes)
        return full(shape, initial, a.dtype)
    result = pick(prim(a, axis=axes, keepdims=builtins.bool(keepdims)), initial)
    return result if result.dtype == a.dtype else astype(result, a.dtype)


def max(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Any:
    """Maximum over ``axis``; the gradient is split equally among tied maxima."""
    return _extreme(P.reduce_max, maximum, a, axis, out, keepdims, initial, where, "maximum")


def min(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Any:
    """Minimum over ``axis``; the gradient is split equally among tied minima."""
    return _extreme(P.reduce_min, minimum, a, axis, out, keepdims, initial, where, "minimum")


amax = max
amin = min


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Range (maximum - minimum) over ``axis``."""
    return max(a, axis, out, keepdims) - min(a, axis, out, keepdims)


def _mean_dtype(a: Any, dtype: Any) -> Any:
    return computed_dtype(a, rule=INEXACT) if dtype is None else np.dtype(dtype)


def _selected(a: Any, axes: tuple, mask: Any, keepdims: bool) -> Any:
    """How many elements each reduction sees: a number, or an Array for a where= mask."""
    if mask is None or mask is True:
        return _count(a.shape, axes)
    from funcgrad.numpy._shape import broadcast_to  # _shape imports this module
    chosen = broadcast_to(asarray(mask), a.shape)
    return P.reduce_sum(astype(chosen, default_int()), axis=axes,
                        keepdims=builtins.bool(keepdims))


def mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, *, where: Any = None) -> Any:
    """Arithmetic mean over ``axis`` (float64 for integer input, as numpy)."""
    no_out(out, "mean")
    a = asarray(a)
    dt = _mean_dtype(a, requested_dtype(dtype, "mean"))
    axes = normalize_axis(axis, a.ndim)
    total = sum(a, axes, dt, None, keepdims, where=where)
    n = _selected(a, axes, where, keepdims)
    result = total / n
    return result if result.dtype == dt else astype(result, dt)


def _ddof(ddof: Any, correction: Any) -> Any:
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
        keepdims: bool = False, *, where: Any = None, mean: Any = None,
        correction: Any = None) -> Any:
    """Variance over ``axis``, dividing by ``n - ddof`` (``correction`` is the Array API's
    name for ddof); real for complex input. ``mean``, if given, is the precomputed mean
    (with keepdims=True)."""
    no_out(out, "var")
    ddof = _ddof(ddof, correction)
    a = asarray(a)
    axes = normalize_axis(axis, a.ndim)
    centre = (_mean(a, axes, requested_dtype(dtype, "var"), None, True, where=where)
              if mean is None else mean)
    d = a - centre
    if np.issubdtype(d.dtype, np.complexfloating):
        d2 = real(d * conj(d))
    else:
        d2 = d * d
    n = _selected(a, axes, where, keepdims)
    total = sum(d2, axes, None, None, keepdims, where=where)
    dof = n - ddof
    return total / (maximum(dof, 0) if not isinstance(dof, (int, float)) else
                    builtins.max(dof, 0))


_mean = mean


def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
        keepdims: bool = False, *, where: Any = None, mean: Any = None,
        correction: Any = None) -> Any:
    """Standard deviation: sqrt(var)."""
    return sqrt(var(a, axis, requested_dtype(dtype, "std"), out, ddof, keepdims, where=where,
                    mean=mean, correction=correction))


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: bool = False) -> Any:
    """Weighted mean over ``axis``; with ``returned`` also the sum of the weights."""
    from funcgrad.numpy._shape import broadcast_to, reshape  # _shape imports this module
    a = asarray(a)
    axes = normalize_axis(axis, a.ndim)
    if weights is None:
        avg = mean(a, axes, keepdims=keepdims)
        scale = asarray(_count(a.shape, axes), dtype=avg.dtype)
    else:
        a, w = promote_dtypes(a, weights, rule=INEXACT)
        if w.shape != a.shape:
            if isinstance(axis, (tuple, list)) or axis is None or w.shape != (
                    a.shape[axes[0]],):
                raise ValueError(f"average: weights of shape {w.shape} do not fit an array "
                                 f"of shape {a.shape}: give weights of the array's shape, "
                                 "or 1-D weights along a single int axis")
            w = broadcast_to(reshape(w, tuple(-1 if i == axes[0] else 1
                                              for i in range(a.ndim))), a.shape)
        scale = sum(w, axes, keepdims=keepdims)
        if not bool(P.reduce_all(not_equal(scale, 0), axis=tuple(range(scale.ndim)),
                                 keepdims=False)):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = sum(a * w, axes, keepdims=keepdims) / scale
    return (avg, broadcast_to(scale, avg.shape)) if returned else avg


def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    """The number of non-zero elements over ``axis`` (an Array of the default integer)."""
    a = asarray(a)
    return sum(not_equal(a, 0), axis, default_int(), None, keepdims)


# -- scans ----------------------------------------------------------------------------------

def _scan(prim: Any, a: Any, axis: Any, dtype: Any) -> Any:
    from funcgrad.numpy._shape import ravel  # _shape imports this module
    a = asarray(a)
    acc = np.dtype(dtype) if dtype is not None else default_int() if a.dtype == np.bool_ \
        else a.dtype  # (jax.numpy's scans keep an integer's width, unlike its sums)
    a = a if a.dtype == acc else astype(a, acc)
    if axis is None:
        a, axis = ravel(a), 0
    out = prim(a, axis=_one_axis(axis, a.ndim))
    return out if out.dtype == acc else astype(out, acc)


def cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative sum along ``axis`` (of the flattened array by default)."""
    no_out(out, "cumsum")
    return _scan(P.cumsum, a, axis, requested_dtype(dtype, "cumsum"))


def cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative product along ``axis``; its gradient is exact where elements are zero."""
    no_out(out, "cumprod")
    return _scan(P.cumprod, a, axis, requested_dtype(dtype, "cumprod"))


def _cumulative(prim: Any, identity: int, x: Any, axis: Any, dtype: Any,
                include_initial: bool, name: str) -> Any:
    from funcgrad.numpy._shape import concatenate  # _shape imports this module
    x = asarray(x)
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"{name}: axis must be specified for an array of "
                             f"{x.ndim} dimensions (it may be omitted only for 1-D input)")
        axis = 0
    axis = _one_axis(axis, x.ndim)
    out = _scan(prim, x, axis, accumulator(x.dtype, dtype))  # (the Array API widens)
    if not include_initial:
        return out
    shape = tuple(1 if i == axis else n for i, n in enumerate(out.shape))
    return concatenate([full(shape, identity, out.dtype), out], axis)


def cumulative_sum(x: Any, /, *, axis: Any = None, dtype: Any = None,
                   include_initial: bool = False) -> Any:
    """The Array API's cumulative sum: ``axis`` required beyond 1-D; ``include_initial``
    starts with the sum of nothing (0)."""
    return _cumulative(P.cumsum, 0, x, axis, dtype, include_initial, "cumulative_sum")


def cumulative_prod(x: Any, /, *, axis: Any = None, dtype: Any = None,
                    include_initial: bool = False) -> Any:
    """The Array API's cumulative product (``include_initial``: it starts with 1)."""
    return _cumulative(P.cumprod, 1, x, axis, dtype, include_initial, "cumulative_prod")


# -- indices and truth values -----------------------------------------------------------------

def _arg(prim: Any, a: Any, axis: Any, out: Any, keepdims: bool, name: str) -> Any:
    no_out(out, name)
    a = asarray(a)
    return as_index_array(prim(a, axis=None if axis is None else _one_axis(axis, a.ndim),
                               keepdims=builtins.bool(keepdims)))


def argmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
    """Index of the (first) maximum; of the flattened array when ``axis`` is None."""
    return _arg(P.argmax, a, axis, out, keepdims, "argmax")


def argmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
    """Index of the (first) minimum; of the flattened array when ``axis`` is None."""
    return _arg(P.argmin, a, axis, out, keepdims, "argmin")


def _truth(prim: Any, identity: bool, a: Any, axis: Any, out: Any, keepdims: bool,
           mask: Any, name: str) -> Any:
    no_out(out, name)
    a = _masked(asarray(a), mask, identity)
    return prim(a, axis=normalize_axis(axis, a.ndim), keepdims=builtins.bool(keepdims))


def all(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *,
        where: Any = None) -> Any:
    """Whether every element along ``axis`` is true (not differentiable)."""
    return _truth(P.reduce_all, True, a, axis, out, keepdims, where, "all")


def any(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *,
        where: Any = None) -> Any:
    """Whether some element along ``axis`` is true (not differentiable)."""
    return _truth(P.reduce_any, False, a, axis, out, keepdims, where, "any")
