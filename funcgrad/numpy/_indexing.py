"""Indexing of funcgrad.numpy with numpy's rules (an index out of bounds raises
IndexError): ``x[idx]``, ``x.at[idx].set/add/...``, take, nonzero. funcgrad's own code
indexes in bounds through these; the public ``x[idx]``, ``.at``, ``take`` and
``take_along_axis`` are JAX's (`funcgrad.numpy._index_modes`), which call these first.

`parse_index` turns any numpy index into the static `Index` and the stacked integer array
``idx`` that the indexing primitives take (see funcgrad.primitives.indexing): integer
arrays, lists and integer Arrays (traced ones too: they are non-differentiable inputs)
become rows of ``idx``; boolean masks become their nonzero() integer arrays, computed on
their concrete values (transforms are eager).
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from funcgrad.array import Array, new_array
from funcgrad.backend import backend_of
from funcgrad.core import Tracer
from funcgrad.primitives import indexing as P
from funcgrad.primitives.indexing import NO_INDEX, Index, Ref, Slice
from funcgrad.numpy._creation import as_index_array, asarray, astype
from funcgrad.numpy._reductions import normalize_axis_tuple
from funcgrad.numpy._shape import broadcast_to, expand_dims, ravel, stack
import funcgrad.numpy as fnp

__all__ = ["nonzero", "argwhere", "flatnonzero"]


def _concrete_raw(a: Array) -> Any:
    return a.concrete()._value


def _component(e: Any, template: list, arrays: list) -> bool:
    """Append one index component to the template (and its arrays to ``arrays``); say
    whether it was a boolean mask."""
    if e is None or e is Ellipsis:
        template.append(e)
    elif isinstance(e, slice):
        template.append(Slice(*(None if v is None else operator.index(v)
                                 for v in (e.start, e.stop, e.step))))
    elif isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_)):
        template.append(int(e))
    else:
        a = e if isinstance(e, Array) else np.asarray(e)
        if not isinstance(e, Array) and a.size == 0 and a.dtype == np.float64:
            a = a.astype(np.intp)  # [] indexes as an empty integer array
        kind = a.dtype.kind
        if kind == "b":
            raw = _concrete_raw(a) if isinstance(a, Array) else a
            if raw.ndim == 0:
                raise IndexError("a boolean scalar index (x[True], x[False]) is supported "
                                 "only on its own, not in a tuple or x.at[]; use None "
                                 "(numpy.newaxis) to add an axis")
            for rows in np.nonzero(raw):
                template.append(Ref(len(arrays)))
                arrays.append(rows)
            return True
        elif kind in "iu":
            if a.ndim == 0 and not isinstance(a, Tracer):
                template.append(int(a))
            else:
                template.append(Ref(len(arrays)))
                arrays.append(a)
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                             "(`None`) and integer or boolean arrays are valid indices; got "
                             f"an index of dtype {a.dtype}")
    return False


def _check_masks(idx: tuple, shape: tuple) -> None:
    """numpy's own error for a boolean mask that does not fit the array's shape (numpy
    checks the index against a zero-byte array of that shape)."""
    np.empty(shape, dtype=[])[tuple(e.to_numpy() if isinstance(e, Array) else e
                                    for e in idx)]


def parse_index(idx: Any, like: Array) -> tuple[Index, Array]:
    """(static Index, integer Array with the broadcast advanced indices stacked on the
    backend of ``like``, the array to be indexed)."""
    template: list = []
    arrays: list = []
    idx = idx if type(idx) is tuple else (idx,)
    masks = False
    for e in idx:
        masks = _component(e, template, arrays) or masks
    if masks:
        _check_masks(idx, like.shape)
    if not arrays:
        return Index(template), NO_INDEX
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         f"with shapes {' '.join(str(a.shape) for a in arrays)}") from None
    if any(isinstance(a, Tracer) for a in arrays):
        stacked = stack([broadcast_to(astype(asarray(a), np.intp), shape) for a in arrays])
    else:
        raw = [_concrete_raw(a) if isinstance(a, Array) else a for a in arrays]
        # the device, not the value, says which backend (like may be batched by vmap)
        xp = np if like.device == "cpu" else backend_of(_concrete_raw(like)).xp
        stacked = new_array(xp.stack([xp.broadcast_to(xp.asarray(r, dtype=np.intp), shape)
                                      for r in raw]))
    return Index(template), stacked


def getitem(x: Any, idx: Any) -> Array:
    """``x[idx]`` with numpy's basic and advanced indexing rules."""
    x = asarray(x)
    if type(idx) is int:  # the commonest index (iteration), without parsing
        return P.getitem(x, NO_INDEX, index=Index((idx,)))
    if type(idx) is tuple and not idx:
        return x
    one = idx[0] if type(idx) is tuple and len(idx) == 1 else idx
    if isinstance(one, (bool, np.bool_)) or (isinstance(one, (Array, np.ndarray))
                                             and one.shape == () and one.dtype == bool):
        new = expand_dims(x, 0)  # x[True]: a new axis of length 1, x[False]: of length 0
        return new if bool(one) else getitem(new, slice(0, 0))
    index, stacked = parse_index(idx, x)
    return P.getitem(x, stacked, index=index)


_REPEATS_ERROR = (
    "x.at[idx].{mode}(values): idx selects some elements more than once, which makes "
    "the result or its gradient ambiguous for '{mode}'. Make the indices unique (for "
    "example with numpy.unique), or combine the values of repeated indices first and use "
    ".at[idx].set or .at[idx].add.")


def _check_unique(x: Array, index: Index, stacked: Array, mode: str,
                  within: tuple | None) -> None:
    """Refuse repeated elements (among those of the leading ``within`` block of x, when
    given: the rest are slots whose updates are dropped)."""
    if not index.advanced:
        return
    raw = _concrete_raw(stacked)
    hits = np.zeros_like(raw, shape=x.shape)
    np.add.at(hits, index.build(raw), 1)
    if within is not None:
        hits = hits[tuple(slice(0, n) for n in within)]
    if hits.size and int(hits.max()) > 1:
        raise ValueError(_REPEATS_ERROR.format(mode=mode))


def index_update(x: Any, idx: Any, values: Any, mode: str) -> Array:
    """``x.at[idx].<mode>(values)`` for mode set, add, multiply, divide, power, min or
    max: a new Array (x is unchanged). ``add`` accumulates repeated indices; ``set`` keeps
    the last write; the others need unique indices."""
    x = asarray(x)
    index, stacked = parse_index(idx, x)
    return update_parsed(x, index, stacked, values, mode)


def update_parsed(x: Array, index: Index, stacked: Array, values: Any, mode: str,
                  within: tuple | None = None) -> Array:
    """`index_update` of a parsed index (``within``: see `_check_unique`)."""
    values = asarray(values)
    if values.dtype != x.dtype:
        values = astype(values, x.dtype)
    if mode == "set":
        return P.index_set(x, values, stacked, index=index)
    if mode == "add":
        return x + P.scatter_add(values, stacked, index=index, shape=x.shape)
    combine = {"multiply": fnp.multiply, "divide": fnp.true_divide, "power": fnp.power,
               "min": fnp.minimum, "max": fnp.maximum}
    if mode not in combine:
        raise ValueError(f"unknown index update {mode!r}; use set, add, multiply, divide, "
                         "power, min or max")
    _check_unique(x, index, stacked, mode, within)
    old = P.getitem(x, stacked, index=index)
    new = combine[mode](old, values)
    return P.index_set(x, astype(new, x.dtype), stacked, index=index)


def take(a: Any, indices: Any, axis: Any = None) -> Array:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array by
    default), numpy's IndexError for one out of bounds (funcgrad.numpy's public ``take``,
    with JAX's modes, is `funcgrad.numpy._index_modes.take`)."""
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis_tuple(axis, a.ndim)[0]
    return getitem(a, (slice(None),) * axis + (indices,))


def along_axis_index(arr: Any, indices: Any, axis: Any) -> tuple[Array, tuple]:
    """(``arr``, flattened when ``axis`` is None; the index of ``take_along_axis``: the
    other axes broadcast against ``indices``)."""
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis_tuple(axis, a.ndim)[0]
    ind = indices if isinstance(indices, Array) else np.asarray(indices)
    if ind.ndim != a.ndim:
        raise ValueError(f"take_along_axis: indices (ndim {ind.ndim}) and arr (ndim "
                         f"{a.ndim}) must have the same number of dimensions")
    return a, tuple(ind if i == axis else np.arange(n).reshape(
        (1,) * i + (n,) + (1,) * (a.ndim - i - 1)) for i, n in enumerate(a.shape))


def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Array:
    """``arr`` gathered at ``indices`` along ``axis``: the other axes broadcast, so
    ``take_along_axis(x, argsort(x, axis), axis)`` sorts x (numpy's IndexError out of
    bounds; the public one is `funcgrad.numpy._index_modes.take_along_axis`)."""
    return getitem(*along_axis_index(arr, indices, axis))


def nonzero(a: Any) -> tuple:
    """Indices of the non-zero elements, one integer Array per dimension."""
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "atleast_1d(scalar).nonzero() instead.")
    return tuple(map(as_index_array, P.nonzero(a)))


def argwhere(a: Any) -> Array:
    """Indices of the non-zero elements, one row per element."""
    a = asarray(a)
    if a.ndim == 0:
        return as_index_array(new_array(np.argwhere(_concrete_raw(a))))
    return stack(nonzero(a), axis=1)


def flatnonzero(a: Any) -> Array:
    """Indices of the non-zero elements of the flattened array."""
    return nonzero(ravel(a))[0]
