"""numpy's NaN-ignoring reductions: nansum, nanprod, nanmax, nanmin, nanargmax,
nanargmin, nanmean, nanvar, nanstd, nancumsum, nancumprod (nanmedian and the nan
quantiles are in `_statistics`).

Each replaces the NaNs by the reduction's identity (0 for sums, 1 for products, -inf/+inf
for max/min) with ``where`` and reduces: NaN elements get a zero gradient, the others
their usual one. Integer arrays hold no NaN and reduce as they are. As in numpy, an
all-NaN slice gives NaN for max, min, mean, var and std, and raises for the arg forms.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.array import Array
from funcgrad.numpy._creation import asarray
from funcgrad.numpy._elementwise import isnan, logical_and, logical_not, where
from funcgrad.numpy._elementwise import sqrt
from funcgrad.numpy._reductions import (all as _all, any as _any, argmax, argmin, cumprod,
                                        cumsum, max, mean, min, no_out, prod, sum, var)

__all__ = ["nansum", "nanprod", "nanmax", "nanmin", "nanargmax", "nanargmin", "nanmean",
           "nanvar", "nanstd", "nancumsum", "nancumprod"]


def _has_nans(a: Array) -> bool:
    return a.dtype.kind in "fc"


def _filled(a: Any, fill: Any) -> tuple[Array, Any]:
    """(a with NaNs replaced by fill, the mask of valid elements or None)."""
    a = asarray(a)
    if not _has_nans(a):
        return a, None
    valid = logical_not(isnan(a))
    return where(valid, a, fill), valid


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, initial: Any = None, where: Any = None) -> Array:
    """The sum treating NaNs as zero."""
    filled, _ = _filled(a, 0)
    return sum(filled, axis, dtype, out, keepdims, initial, where)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, initial: Any = None, where: Any = None) -> Array:
    """The product treating NaNs as one."""
    filled, _ = _filled(a, 1)
    return prod(filled, axis, dtype, out, keepdims, initial, where)


def _extreme(reduce: Any, fill: float, a: Any, axis: Any, out: Any, keepdims: bool,
             initial: Any, mask: Any) -> Array:
    filled, valid = _filled(a, fill)
    result = reduce(filled, axis, out, keepdims, initial, mask)
    if valid is None:
        return result
    seen = _any(valid, axis, None, keepdims)
    return where(seen, result, np.nan)


def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Array:
    """The maximum ignoring NaNs (NaN for an all-NaN slice)."""
    return _extreme(max, -np.inf, a, axis, out, keepdims, initial, where)


def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Array:
    """The minimum ignoring NaNs (NaN for an all-NaN slice)."""
    return _extreme(min, np.inf, a, axis, out, keepdims, initial, where)


def _arg(pick: Any, fill: float, a: Any, axis: Any, out: Any, keepdims: bool) -> Array:
    no_out(out, pick.__name__)
    filled, valid = _filled(a, fill)
    if valid is not None and not bool(_all(_any(valid, axis))):
        raise ValueError("All-NaN slice encountered")
    return pick(filled, axis, keepdims=keepdims)


def nanargmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Array:
    """The index of the maximum ignoring NaNs; an all-NaN slice raises ValueError."""
    return _arg(argmax, -np.inf, a, axis, out, keepdims)


def nanargmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Array:
    """The index of the minimum ignoring NaNs; an all-NaN slice raises ValueError."""
    return _arg(argmin, np.inf, a, axis, out, keepdims)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, *, where: Any = None) -> Array:
    """The mean of the non-NaN elements (NaN where there are none)."""
    a = asarray(a)
    if not _has_nans(a):
        return mean(a, axis, dtype, out, keepdims, where=where)
    valid = logical_not(isnan(a))
    mask = valid if where is None else logical_and(valid, where)
    return mean(a, axis, dtype, out, keepdims, where=mask)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: bool = False, *, where: Any = None, mean: Any = None,
           correction: Any = None) -> Array:
    """The variance of the non-NaN elements."""
    a = asarray(a)
    if not _has_nans(a):
        return var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                   correction=correction)
    filled, valid = _filled(a, 0)  # var's where= still differentiates a NaN's (x - mean)**2
    mask = valid if where is None else logical_and(valid, where)
    return var(filled, axis, dtype, out, ddof, keepdims, where=mask, mean=mean,
               correction=correction)


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: bool = False, *, where: Any = None, mean: Any = None,
           correction: Any = None) -> Array:
    """The standard deviation of the non-NaN elements."""
    return sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                       correction=correction))


def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Array:
    """The cumulative sum treating NaNs as zero."""
    filled, _ = _filled(a, 0)
    return cumsum(filled, axis, dtype, out)


def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Array:
    """The cumulative product treating NaNs as one."""
    filled, _ = _filled(a, 1)
    return cumprod(filled, axis, dtype, out)
