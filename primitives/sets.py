"""Set and search primitives. All are non-differentiable: they answer with positions or
truth values. `funcgrad.numpy` gathers values at those positions (``unique``'s values,
``sort_complex``...), which is what makes those functions differentiable.

| primitive        | result                                                   |
|------------------|----------------------------------------------------------|
| unique_positions | first index, inverse indices, counts of the unique values |
| isin             | element in test_elements (or not, with invert)            |
| searchsorted     | insertion points of v in the sorted 1-D a                 |
| digitize         | the bin of each x                                         |
| lexsort          | the stable sort order by several keys, the last primary   |
"""
from __future__ import annotations

from funcgrad.core import Primitive
from .kernels import sets as K

unique_positions = Primitive(
    "unique_positions", K.unique_positions, ("x",), ("axis", "equal_nan"),
    multiple_results=True, differentiable=False, dynamic_shape=True,
    doc="(first index, inverse indices, counts) of the sorted unique values of x.")
isin = Primitive("isin", K.isin, ("element", "test_elements"), ("invert",),
                 differentiable=False, doc="whether each element is in test_elements.")
searchsorted = Primitive("searchsorted", K.searchsorted, ("a", "v"), ("side",),
                         differentiable=False,
                         doc="the indices where v would be inserted to keep a sorted.")
digitize = Primitive("digitize", K.digitize, ("x", "bins"), ("right",),
                     differentiable=False, doc="the index of the bin of each x.")
lexsort = Primitive("lexsort", lambda *keys, axis: K.lexsort(keys, axis), None, ("axis",),
                    differentiable=False,
                    doc="the indirect stable sort by the keys (the last one primary).")


# -- batching rules (vmap) ------------------------------------------------------------------
# A batched set (test_elements, a, bins) differs per example: membership and insertion
# points become comparisons of every element with every member, counted (for sorted a and
# monotonic bins these are the kernels' answers), with NaN sorted last as numpy sorts it.
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from . import batching as B  # noqa: E402
from .binary import equal, less, less_equal, logical_and, logical_or  # noqa: E402
from .control import convert_element_type  # noqa: E402
from .elementwise import isnan, logical_not  # noqa: E402
from .indexing import NO_INDEX, Index, Slice, getitem  # noqa: E402
from .reductions import reduce_any, reduce_sum  # noqa: E402
from .select import where  # noqa: E402
from .shape import reshape  # noqa: E402


def _pairs(values: Any, dv: Any, members: Any, dm: Any, size: int) -> tuple:
    """(values as (batch, *shape, 1), members as (batch, 1..., m)): every pair compared."""
    values = B.materialize(values, dv, size)
    members = B.materialize(members, dm, size)
    members = reshape(members, shape=(size,) + (1,) * (values.ndim - 1) + (-1,))
    return reshape(values, shape=tuple(values.shape) + (1,)), members


def _count(hits: Any) -> Any:
    return reduce_sum(convert_element_type(hits, new_dtype=np.dtype(np.intp)),
                      axis=(hits.ndim - 1,), keepdims=False)


def _before(a: Any, v: Any, strict: bool) -> Any:
    """Whether a sorts before v (strict) or not after it, NaN being the largest."""
    if strict:
        return logical_or(less(a, v), logical_and(isnan(v), logical_not(isnan(a))))
    return logical_or(less_equal(a, v), isnan(v))


def _batch_isin(args: tuple, dims: tuple, invert: bool) -> tuple:
    (element, test), (de, dt) = args, dims
    if dt is None:
        return isin(B.to_front(element, de), test, invert=invert), 0
    x, members = _pairs(element, de, test, dt, test.shape[dt])
    found = reduce_any(equal(x, members), axis=(members.ndim - 1,), keepdims=False)
    return (logical_not(found) if invert else found), 0


def _batch_searchsorted(args: tuple, dims: tuple, side: str) -> tuple:
    (a, v), (da, dv) = args, dims
    if da is None:
        return searchsorted(a, B.to_front(v, dv), side=side), 0
    x, members = _pairs(v, dv, a, da, a.shape[da])
    return _count(_before(members, x, strict=side == "left")), 0


def _batch_digitize(args: tuple, dims: tuple, right: bool) -> tuple:
    """numpy's digitize: for increasing bins the bins not after x (right: before it), for
    decreasing bins the bins after it (right: not before it), chosen per example."""
    (x, bins), (dx, db) = args, dims
    if db is None:
        return digitize(B.to_front(x, dx), bins, right=right), 0
    size = bins.shape[db]
    v, members = _pairs(x, dx, bins, db, size)
    rising = _count(_before(members, v, strict=right))
    falling = _count(logical_not(_before(members, v, strict=not right)))
    if members.shape[-1] == 0:  # no bins: every x is in bin 0
        return rising, 0
    ends = [getitem(members, NO_INDEX, index=Index((Slice(None, None, None),) * (
        members.ndim - 1) + (k,))) for k in (0, -1)]
    increasing = less_equal(*ends)
    increasing = reshape(increasing, shape=(size,) + (1,) * (rising.ndim - 1))
    return where(increasing, rising, falling), 0


isin.defbatch(_batch_isin)
searchsorted.defbatch(_batch_searchsorted)
digitize.defbatch(_batch_digitize)
B.broadcasting(lexsort, axes=("axis",), same_shape=True)
B.not_batchable(unique_positions, "the number of unique values depends on the values, so "
                "the examples' results need not have one shape")
