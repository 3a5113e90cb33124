"""More of numpy's array manipulation, and the Array API's names for it: concat,
permute_dims, unstack, the h/v/dsplit family, append, insert, delete, block, resize,
rollaxis, trim_zeros, select, choose, compress, extract, piecewise, apply_along_axis,
apply_over_axes, and the functional forms of numpy's in-place updates (place, put,
putmask, put_along_axis, fill_diagonal).

All are compositions of the shape functions and gathers/scatters, so every one is
differentiable in its array arguments. Where numpy computes an index layout (insert,
delete, choose...), funcgrad lets numpy compute it on integer positions and then gathers
the values at those positions.

numpy's in-place updates cannot modify an immutable Array: as in JAX they take
``inplace=True`` by default and raise unless ``inplace=False`` is passed, in which case
they return the updated copy.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from funcgrad.array import Array, new_array
from funcgrad.numpy._creation import as_shape, asarray, astype, full, promote_dtypes, zeros
from funcgrad.numpy._elementwise import where
from funcgrad.numpy._indexing import getitem, nonzero, take, take_along_axis
from funcgrad.numpy._reductions import axis_index, normalize_axis_tuple
from funcgrad.numpy._reductions import AxisError, any as _any
from funcgrad.numpy._shape import (broadcast_arrays, broadcast_to, concatenate, expand_dims,
                                   moveaxis, ravel, reshape, split, stack, transpose, vstack)

__all__ = ["concat", "permute_dims", "unstack", "hsplit", "vsplit", "dsplit", "append",
           "insert", "delete", "block", "row_stack", "resize", "rollaxis", "trim_zeros",
           "select", "choose", "compress", "extract", "piecewise", "apply_along_axis",
           "apply_over_axes", "place", "put", "putmask", "put_along_axis",
           "fill_diagonal"]


def concat(arrays: Sequence, /, *, axis: Any = 0) -> Array:
    """The Array API's concatenate: the arrays joined along ``axis`` (flattened first when
    None), their dtypes promoted."""
    return concatenate(promote_dtypes(*arrays) if arrays else [], axis)


def permute_dims(a: Any, /, axes: Any) -> Array:
    """The Array API's transpose: ``a`` with its axes in the order ``axes``."""
    return transpose(a, axes)


def unstack(x: Any, /, *, axis: Any = 0) -> tuple:
    """The slices of ``x`` along ``axis``, as a tuple (the inverse of stack)."""
    x = asarray(x)
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    axis = normalize_axis_tuple(axis, x.ndim)[0]
    return tuple(getitem(x, (slice(None),) * axis + (i,)) for i in range(x.shape[axis]))


def _split_along(ary: Any, indices_or_sections: Any, axis: int, least: int,
                 name: str) -> list:
    a = asarray(ary)
    if a.ndim < least:
        raise ValueError(f"{name} only works on arrays of {least} or more dimensions")
    return split(a, indices_or_sections, axis)


def hsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split horizontally: along axis 1 (axis 0 for 1-D arrays)."""
    a = asarray(ary)
    if a.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split vertically: along axis 0 of an array of at least 2 dimensions."""
    return _split_along(ary, indices_or_sections, 0, 2, "vsplit")


def dsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split depth-wise: along axis 2 of an array of at least 3 dimensions."""
    return _split_along(ary, indices_or_sections, 2, 3, "dsplit")


def append(arr: Any, values: Any, axis: Any = None) -> Array:
    """``values`` appended to ``arr`` (both flattened when ``axis`` is None)."""
    arr, values = asarray(arr), asarray(values)
    if axis is None:
        return concat([ravel(arr), ravel(values)])
    return concat([arr, values], axis=axis)


def _positions(shape: tuple, axis: int | None) -> tuple[np.ndarray, int | None]:
    """numpy integer positions 0 .. n-1 to run numpy's layout functions on."""
    if axis is None:
        return np.arange(int(np.prod(shape))), None
    return np.arange(shape[axis]), axis


def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Array:
    """``values`` inserted before the indices ``obj`` along ``axis`` (numpy's rules for
    broadcasting values). numpy lays out tags (positions of arr, negative tags for the
    values) and the result gathers from both."""
    arr, values = asarray(arr), asarray(values)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = normalize_axis_tuple(axis, arr.ndim)[0]
    tags = np.arange(arr.size).reshape(arr.shape)
    value_tags = -1 - np.arange(values.size).reshape(values.shape)
    laid = np.insert(tags, _index_obj(obj), value_tags, axis=axis)
    flat_arr = ravel(arr)
    flat_values = ravel(astype(values, arr.dtype))
    from_arr = take(flat_arr, np.where(laid >= 0, laid, 0)) if flat_arr.size else None
    from_values = take(flat_values, np.where(laid < 0, -1 - laid, 0)) if \
        flat_values.size else None
    if from_values is None:
        return from_arr if from_arr is not None else zeros(laid.shape, arr.dtype)
    if from_arr is None:
        return from_values
    return where(new_array(laid >= 0), from_arr, from_values)


def _index_obj(obj: Any) -> Any:
    if isinstance(obj, Array):
        return obj.concrete().to_numpy()
    return obj


def delete(arr: Any, obj: Any, axis: Any = None) -> Array:
    """``arr`` without the entries ``obj`` (an int, slice, or integer/boolean array)
    along ``axis`` (of the flattened array when None)."""
    arr = asarray(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = normalize_axis_tuple(axis, arr.ndim)[0]
    keep = np.delete(np.arange(arr.shape[axis]), _index_obj(obj))
    return take(arr, keep, axis)


def block(arrays: Any) -> Array:
    """An array assembled from nested lists of blocks: the innermost lists are joined
    along the last axis, the next level along the second-to-last, and so on."""
    depth = _list_depth(arrays)
    leaves = _leaves(arrays)
    if not leaves:
        raise ValueError("block: lists cannot be empty")
    ndim = max(depth, max(asarray(x).ndim for x in leaves))
    return _assemble(arrays, depth, ndim)


def _list_depth(x: Any) -> int:
    if isinstance(x, tuple):
        raise TypeError("block: arrays is a tuple. Only lists can be used to arrange "
                        "blocks, and np.block does not allow implicit conversion from "
                        "tuple to ndarray.")
    if not isinstance(x, list):
        return 0
    if not x:
        raise ValueError("block: lists cannot be empty")
    depths = {_list_depth(e) for e in x}
    if len(depths) > 1:
        raise ValueError("block: list depths are mismatched; every entry of a list must "
                         "be nested equally deep")
    return 1 + depths.pop()


def _leaves(x: Any) -> list:
    return [y for e in x for y in _leaves(e)] if isinstance(x, list) else [x]


def _assemble(x: Any, depth: int, ndim: int) -> Array:
    if not isinstance(x, list):
        a = asarray(x)
        return reshape(a, (1,) * (ndim - a.ndim) + a.shape)
    parts = [_assemble(e, depth - 1, ndim) for e in x]
    return concat(parts, axis=-depth)


row_stack = vstack


def resize(a: Any, new_shape: Any) -> Array:
    """``a`` flattened, repeated as often as needed and reshaped to ``new_shape``."""
    a = asarray(a)
    shape = as_shape(new_shape)
    if any(n < 0 for n in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    size = int(np.prod(shape))
    flat = ravel(a)
    if size == 0 or flat.size == 0:
        return zeros(shape, a.dtype)
    return reshape(take(flat, np.arange(size) % flat.size), shape)


def rollaxis(a: Any, axis: Any, start: Any = 0) -> Array:
    """Axis ``axis`` moved to lie before position ``start`` (numpy's older moveaxis)."""
    a = asarray(a)
    n = a.ndim
    axis = normalize_axis_tuple(axis, n)[0]
    start = axis_index(start, "start")
    if not -n <= start <= n:
        raise AxisError(f"start arg {start} is out of bounds for array of dimension {n}")
    start = start % (n + 1) if start < 0 else start
    if axis < start:
        start -= 1
    return a if axis == start else moveaxis(a, axis, start)


def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Array:
    """``filt`` without its leading ('f') and/or trailing ('b') zeros."""
    a = asarray(filt)
    trim = trim.lower()
    nz = np.flatnonzero(np.asarray(a.concrete().to_numpy()).reshape(a.shape[0], -1).any(
        axis=1)) if a.ndim > 1 else np.flatnonzero(a.concrete().to_numpy())
    if nz.size == 0:
        return getitem(a, slice(0, 0))
    first = int(nz[0]) if "f" in trim else 0
    last = int(nz[-1]) + 1 if "b" in trim else a.shape[0]
    return getitem(a, slice(first, last))


def select(condlist: Sequence, choicelist: Sequence, default: Any = 0) -> Array:
    """Per element, the choice of the first condition that holds, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    *choices, out = promote_dtypes(*choicelist, default)
    for cond, choice in zip(condlist[::-1], choices[::-1]):
        cond = asarray(cond)
        if cond.dtype != np.bool_:
            raise TypeError(f"invalid entry in condlist: should be boolean ndarray, got "
                            f"{cond.dtype}")
        out = where(cond, choice, out)
    return out


def choose(a: Any, choices: Sequence, mode: str = "raise") -> Array:
    """Per element, ``choices[a[i]][i]`` (choices broadcast against a); out-of-range
    indices raise, wrap or clip by ``mode``."""
    idx = np.asarray(asarray(a).concrete().to_numpy())
    n = len(choices)
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    elif mode != "raise":
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    elif idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError("invalid entry in choice array")
    arrays = broadcast_arrays(new_array(idx), *[asarray(c) for c in choices])
    picked = stack(arrays[1:])
    return take_along_axis(picked, expand_dims(arrays[0], 0), 0)[0]


def compress(condition: Any, a: Any, axis: Any = None) -> Array:
    """The slices of ``a`` along ``axis`` where the 1-D ``condition`` is true."""
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    cond = np.asarray(asarray(condition).concrete().to_numpy(), dtype=bool)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    return take(a, np.flatnonzero(cond), axis)


def extract(condition: Any, arr: Any) -> Array:
    """The elements of ``arr`` (flattened) where ``condition`` is true."""
    cond = ravel(asarray(condition))
    return take(ravel(asarray(arr)), nonzero(cond)[0])


def piecewise(x: Any, condlist: Any, funclist: Sequence, *args: Any, **kw: Any) -> Array:
    """Per element, ``funclist[i](x)`` where ``condlist[i]`` holds (a constant instead of
    a function is used as it is); one extra function is the default where none holds.
    Each function sees only its elements (numpy's semantics), so a function undefined
    elsewhere gives no NaN gradient."""
    x = asarray(x)
    conds = [asarray(c) for c in (condlist if isinstance(condlist, (list, tuple)) and
                                   np.ndim(condlist[0]) == x.ndim else [condlist])]
    if len(funclist) == len(conds) + 1:
        other = ~_any(stack([broadcast_to(c, x.shape) for c in conds]), axis=0) \
            if conds else full(x.shape, True)
        conds.append(other)
    elif len(funclist) != len(conds):
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    out = zeros(x.shape, x.dtype)
    for cond, fn in zip(conds, funclist):
        where_ = broadcast_to(cond, x.shape)
        vals = fn(getitem(x, where_), *args, **kw) if callable(fn) else fn
        out = out.at[where_].set(vals)
    return out


def apply_along_axis(func1d: Callable, axis: Any, arr: Any, *args: Any,
                     **kwargs: Any) -> Array:
    """``func1d`` applied to every 1-D slice of ``arr`` along ``axis``; its results (of
    one shape) replace the axis."""
    a = asarray(arr)
    axis = normalize_axis_tuple(axis, a.ndim)[0]
    moved = moveaxis(a, axis, -1)
    lead = moved.shape[:-1]
    rows = reshape(moved, (-1, moved.shape[-1]))
    if rows.shape[0] == 0:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    results = [asarray(func1d(rows[i], *args, **kwargs)) for i in range(rows.shape[0])]
    out = reshape(stack(results), lead + results[0].shape)
    tail = results[0].ndim
    return moveaxis(out, tuple(range(len(lead), len(lead) + tail)),
                    tuple(range(axis, axis + tail))) if tail else out


def apply_over_axes(func: Callable, a: Any, axes: Any) -> Array:
    """``func(a, axis)`` applied over each of ``axes`` in turn, keeping dimensions."""
    out = asarray(a)
    for ax in (axes if isinstance(axes, (list, tuple)) else [axes]):
        ax = axis_index(ax)
        ax = ax + out.ndim if ax < 0 else ax
        res = asarray(func(out, ax))
        if res.ndim == out.ndim:
            out = res
        elif res.ndim == out.ndim - 1:
            out = expand_dims(res, ax)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return out


# -- functional forms of numpy's in-place updates --------------------------------------------

def refuse_in_place(name: str, inplace: bool) -> None:
    """JAX's rule for numpy's in-place functions: they need inplace=False."""
    if inplace:
        raise ValueError(f"funcgrad.numpy.{name} cannot modify arrays in-place, because "
                         "funcgrad Arrays are immutable. Pass inplace=False to instead "
                         "return an updated array.")


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Array:
    """A copy of ``arr`` with its masked elements set, in order, from ``vals`` (repeated
    as needed); ``inplace=False`` is required."""
    refuse_in_place("place", inplace)
    arr = asarray(arr)
    where_ = np.flatnonzero(np.asarray(asarray(mask).concrete().to_numpy(), bool))
    vals = ravel(asarray(vals))
    if where_.size and vals.size == 0:
        raise ValueError("Cannot insert from an empty array!")
    new = take(vals, np.arange(where_.size) % max(vals.size, 1)) if where_.size else vals
    return reshape(ravel(arr).at[where_].set(new), arr.shape)


def put(a: Any, ind: Any, v: Any, mode: Any = None, *, inplace: bool = True) -> Array:
    """A copy of ``a`` with the flat positions ``ind`` set to ``v`` (repeated as needed;
    mode 'raise', 'wrap' or 'clip'); ``inplace=False`` is required."""
    refuse_in_place("put", inplace)
    a = asarray(a)
    ind = np.ravel(np.asarray(_index_obj(ind)))
    n = a.size
    if mode == "wrap":
        ind = ind % n
    elif mode == "clip":
        ind = np.clip(ind, 0, n - 1)
    v = ravel(asarray(v))
    vals = take(v, np.arange(ind.size) % max(v.size, 1)) if ind.size else v
    return reshape(ravel(a).at[ind].set(vals), a.shape)


def putmask(a: Any, mask: Any, values: Any, *, inplace: bool = True) -> Array:
    """A copy of ``a`` with ``a[i] = values[i % len(values)]`` where the mask holds;
    ``inplace=False`` is required."""
    refuse_in_place("putmask", inplace)
    a = asarray(a)
    m = np.flatnonzero(np.broadcast_to(np.asarray(asarray(mask).concrete().to_numpy(),
                                                  bool), a.shape))
    v = ravel(asarray(values))
    return reshape(ravel(a).at[m].set(take(v, m % max(v.size, 1))), a.shape)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: Any, inplace: bool = True,
                   *, mode: Any = None) -> Array:
    """A copy of ``arr`` with ``values`` set at ``indices`` along ``axis`` (the inverse of
    take_along_axis); ``inplace=False`` is required."""
    refuse_in_place("put_along_axis", inplace)
    a = asarray(arr)
    shape = a.shape
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis_tuple(axis, a.ndim)[0]
    ind = asarray(indices)
    if ind.ndim != a.ndim:
        raise ValueError(f"put_along_axis: indices (ndim {ind.ndim}) and arr (ndim "
                         f"{a.ndim}) must have the same number of dimensions")
    full_index = tuple(ind if i == axis else np.arange(n).reshape(
        (1,) * i + (n,) + (1,) * (a.ndim - i - 1)) for i, n in enumerate(a.shape))
    return reshape(a.at[full_index].set(values), shape)


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *,
                  inplace: bool = True) -> Array:
    """A copy of ``a`` with its main diagonal (a[i, i, ...]) set to ``val`` (repeated as
    needed; ``wrap`` continues below the first square of a tall matrix);
    ``inplace=False`` is required."""
    refuse_in_place("fill_diagonal", inplace)
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    where_ = np.flatnonzero(_diagonal_mask(a.shape, wrap))
    v = ravel(asarray(val))
    vals = take(v, np.arange(where_.size) % max(v.size, 1)) if where_.size else v
    return reshape(ravel(a).at[where_].set(vals), a.shape)


def _diagonal_mask(shape: tuple, wrap: bool) -> np.ndarray:
    """numpy's fill_diagonal positions, found by running it on a boolean array."""
    mask = np.zeros(shape, dtype=bool)
    np.fill_diagonal(mask, True, wrap=wrap)
    return mask

