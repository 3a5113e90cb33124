"""Sorting and searching: sort, argsort (numpy's ``kind``/``stable`` and the Array API's
``descending``), partition, lexsort, searchsorted, digitize, and the set functions (unique
and its Array API forms, isin, intersect1d, union1d, setdiff1d, setxor1d).

Orders and positions are not differentiable; values picked at them are: ``sort``,
``partition``, ``unique``'s values and the sorted set functions gather their input, so the
gradient of each output element goes to the input element it came from.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from funcgrad.array import Array
from funcgrad.primitives import indexing as I, sets as S
from funcgrad.numpy._creation import as_index_array, asarray, astype
from funcgrad.numpy._indexing import getitem, take, take_along_axis
from funcgrad.numpy._reductions import normalize_axis_tuple
from funcgrad.numpy._shape import concatenate, flip, ravel, reshape

__all__ = ["sort", "argsort", "partition", "argpartition", "lexsort", "sort_complex",
           "searchsorted", "digitize", "unique", "unique_all", "unique_counts",
           "unique_inverse", "unique_values", "isin", "intersect1d", "union1d", "setdiff1d",
           "setxor1d", "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult"]


def _sort_axis(a: Array, axis: Any) -> tuple[Array, int]:
    if axis is None:
        return ravel(a), 0
    return a, normalize_axis_tuple(axis, a.ndim)[0]


def argsort(a: Any, axis: Any = -1, kind: str | None = None, order: Any = None, *,
            stable: bool | None = None, descending: bool = False) -> Array:
    """Indices that sort ``a`` along ``axis`` (not differentiable). ``stable`` keeps equal
    elements in their order; ``descending`` sorts from the largest, ties still in their
    original order."""
    if order is not None:
        raise NotImplementedError("argsort: order= (structured arrays) is not supported")
    a, axis = _sort_axis(asarray(a), axis)
    kind = "stable" if stable or descending else kind
    if not descending:
        return as_index_array(I.argsort(a, axis=axis, kind=kind))
    # a stable ascending sort of the reversed array, read backwards, is a stable
    # descending sort of the array
    n = a.shape[axis]
    return as_index_array((n - 1) - flip(I.argsort(flip(a, axis), axis=axis, kind=kind), axis))


def sort(a: Any, axis: Any = -1, kind: str | None = None, order: Any = None, *,
         stable: bool | None = None, descending: bool = False) -> Array:
    """``a`` sorted along ``axis``; differentiable (the gradient follows the
    permutation)."""
    a, axis = _sort_axis(asarray(a), axis)
    return take_along_axis(a, argsort(a, axis, kind, order, stable=stable,
                                      descending=descending), axis)


def partition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
              order: Any = None) -> Array:
    """A partition of ``a`` around the ``kth`` elements: funcgrad returns the fully sorted
    array, which is one (every element at or before kth is no larger than those after)."""
    return sort(a, axis, order=order)


def argpartition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
                 order: Any = None) -> Array:
    """Indices that partition ``a`` around ``kth`` (the full sort order, see partition)."""
    return argsort(a, axis, order=order)


def lexsort(keys: Any, axis: Any = -1) -> Array:
    """The stable sort order by several keys, the last key primary."""
    keys = [asarray(k) for k in (keys if not isinstance(keys, Array) else list(keys))]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    return S.lexsort(*keys, axis=normalize_axis_tuple(axis, keys[0].ndim)[0])


def sort_complex(a: Any) -> Array:
    """``a`` sorted by real part, then imaginary part, as a complex array."""
    a = asarray(a)
    if a.dtype.kind != "c":
        a = astype(a, np.complex64 if a.dtype.itemsize <= 2 or a.dtype == np.float32
                   else np.complex128)
    return sort(a, 0)


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Array:
    """Where ``v`` would be inserted into the sorted 1-D ``a`` (``side`` 'left' or
    'right'); ``sorter`` is the order that sorts ``a``."""
    a = asarray(a)
    if a.ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-D, got shape {a.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    if sorter is not None:
        a = take(a, sorter)
    return as_index_array(S.searchsorted(a, asarray(v), side=side))


def digitize(x: Any, bins: Any, right: bool = False) -> Array:
    """The index of the bin each x falls in (bins monotonic)."""
    bins = asarray(bins)
    if bins.ndim != 1:
        raise ValueError("object too deep for desired array")
    return as_index_array(S.digitize(asarray(x), bins, right=bool(right)))


# -- sets ------------------------------------------------------------------------------------

class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def _unique(x: Array, axis: Any, equal_nan: bool) -> tuple:
    """(values, first indices, inverse, counts); values differentiable in x."""
    if axis is None:
        flat = ravel(x)
        index, inverse, counts = S.unique_positions(flat, axis=None, equal_nan=equal_nan)
        return take(flat, index), index, inverse, counts
    axis = normalize_axis_tuple(axis, x.ndim)[0]
    index, inverse, counts = S.unique_positions(x, axis=axis, equal_nan=equal_nan)
    return take(x, index, axis), index, inverse, counts


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: Any = None, *, equal_nan: bool = True,
           sorted: bool = True) -> Any:
    """The sorted unique elements (or sub-arrays along ``axis``), and as numpy asks the
    first indices, the inverse indices and the counts."""
    values, index, inverse, counts = _unique(asarray(ar), axis, equal_nan)
    extra = [r for r, want in ((index, return_index), (inverse, return_inverse),
                               (counts, return_counts)) if want]
    return (values, *extra) if extra else values


def _shaped_inverse(inverse: Array, x: Array) -> Array:
    return reshape(inverse, x.shape)


def unique_all(x: Any, /) -> UniqueAllResult:
    """The Array API's unique: values, first indices, inverse indices (shaped like x) and
    counts; every NaN is its own value."""
    x = asarray(x)
    values, index, inverse, counts = _unique(x, None, False)
    return UniqueAllResult(values, index, _shaped_inverse(inverse, x), counts)


def unique_counts(x: Any, /) -> UniqueCountsResult:
    """The unique values and how often each occurs."""
    values, _, _, counts = _unique(asarray(x), None, False)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Any, /) -> UniqueInverseResult:
    """The unique values and, shaped like x, the index of each element's value."""
    x = asarray(x)
    values, _, inverse, _ = _unique(x, None, False)
    return UniqueInverseResult(values, _shaped_inverse(inverse, x))


def unique_values(x: Any, /) -> Array:
    """The unique values (sorted; every NaN is its own value)."""
    return _unique(asarray(x), None, False)[0]


def isin(element: Any, test_elements: Any, assume_unique: bool = False,
         invert: bool = False, *, kind: Any = None) -> Array:
    """Whether each element is among ``test_elements`` (negated with ``invert``)."""
    return S.isin(asarray(element), asarray(test_elements), invert=bool(invert))


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False,
                return_indices: bool = False) -> Any:
    """The sorted values found in both arrays (differentiable in ar1, whose first
    occurrences they are); with ``return_indices`` also those positions in each."""
    a1, a2 = ravel(asarray(ar1)), ravel(asarray(ar2))
    u1, i1, _, _ = _unique(a1, None, True)
    u2, i2, _, _ = _unique(a2, None, True)
    keep = S.isin(u1, u2, invert=False)
    values = getitem(u1, keep)
    if not return_indices:
        return values
    in_2 = S.isin(u2, u1, invert=False)
    return values, getitem(i1, keep), getitem(i2, in_2)


def union1d(ar1: Any, ar2: Any) -> Array:
    """The sorted unique values of either array."""
    return unique(concatenate([ravel(asarray(ar1)), ravel(asarray(ar2))]))


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Array:
    """The sorted unique values of ar1 that are not in ar2."""
    u1 = ravel(asarray(ar1)) if assume_unique else unique(ar1)
    return getitem(u1, S.isin(u1, asarray(ar2), invert=True))


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Array:
    """The sorted unique values in exactly one of the arrays."""
    u1 = ravel(asarray(ar1)) if assume_unique else unique(ar1)
    u2 = ravel(asarray(ar2)) if assume_unique else unique(ar2)
    both = concatenate([getitem(u1, S.isin(u1, u2, invert=True)),
                        getitem(u2, S.isin(u2, u1, invert=True))])
    return sort(both) if both.size else both

