"""JAX's rules for indices out of bounds: the defaults of ``x[idx]``, ``x.at[idx]``,
``take`` and ``take_along_axis``, and the ``mode=`` that changes them.

JAX's defaults, which funcgrad.numpy follows (checked against jax in
tests/test_index_oob_vs_jax.py); a negative index counts from the end once (-1 is the last
element, -4 on a length-3 axis is out of bounds):

* a read (``x[idx]``, ``x.at[idx].get()``) clamps each index into its axis. Its gradient
  follows JAX's lowering: an index of integers, scalar integer arrays and unit-step slices
  is a dynamic slice, whose gradient goes to the clamped element; any other (an integer
  array, a mask, a strided slice beside an integer) is a gather, whose transpose drops the
  gradient of every position with an index out of bounds (they keep the clamped value).
* an update (``x.at[idx].set/add/...``) drops the updates out of bounds.
* ``take`` and ``take_along_axis`` fill: NaN for inexact types (`fill_value_for`).

``mode=``: "clip" clamps (reads and updates; the gradient to the clamped element), "fill"
and "drop" (one mode, as in JAX) fill reads and drop updates, "promise_in_bounds" is the
default, and funcgrad's "raise" keeps numpy's IndexError (what the PyTorch facade uses).

How: an index in bounds takes numpy's own indexing (the plain primitives; numpy raises
IndexError for one that is not, and only then is the index bounded here), so the common
case costs nothing. A traced index is always bounded: its runtime values are unknown.
"fill"/"drop" send an out-of-bounds position to a slot one past the end of its axis, added
for the call: a read reads the fill value there, an update writes there and the slot is cut
away. The dropped gradient of a clamped gather uses two slots, copies of the last and the
first element under stop_gradient: the value is the clamped one, the gradient goes nowhere.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.array import Array
from funcgrad.core import Tracer
from funcgrad.primitives import indexing as P
from funcgrad.primitives.control import stop_gradient
from funcgrad.primitives.indexing import NO_INDEX, Index, Ref, Slice
from funcgrad.numpy import _indexing as plain
from funcgrad.numpy._creation import asarray
from funcgrad.numpy._indexing import along_axis_index, parse_index, update_parsed
from funcgrad.numpy._reductions import normalize_axis_tuple
from funcgrad.numpy._shape import concatenate, pad, ravel
import funcgrad.numpy as fnp

__all__ = ["MODES", "getitem", "gather", "update", "take", "take_along_axis",
           "fill_value_for"]

MODES = ("promise_in_bounds", "clip", "fill", "drop", "raise")
_ALL = Slice(None, None, None)


def _checked(mode: str | None) -> str:
    """The mode's bounding: "default", "clip", "fill" or "raise" (JAX's error otherwise)."""
    if mode is None or mode == "promise_in_bounds":
        return "default"
    if mode not in MODES:
        raise ValueError(f'Unknown gather mode "{mode}"')
    return "fill" if mode == "drop" else mode


def _traced(idx: Any) -> bool:
    """Whether the index has traced components (bounded always: values unknown)."""
    return isinstance(idx, Tracer) or (type(idx) is tuple
                                       and any(isinstance(e, Tracer) for e in idx))


def _axes(index: Index, ndim: int) -> list:
    """The axis each component of ``index`` indexes (None for None and Ellipsis)."""
    consumed = sum(1 for e in index if e is not None and e is not Ellipsis)
    axes, d = [], 0
    for e in index:
        if e is Ellipsis:
            axes.append(None)
            d += ndim - consumed
        elif e is None:
            axes.append(None)
        else:
            axes.append(d)
            d += 1
    return axes


def _bounded_int(i: int, n: int, how: str) -> int:
    """``i`` counted from the end when negative, then clamped ("clip"), or sent to the
    slot past the end ("fill"; "edges": the slot of the last element, or of the first)."""
    i = i + n if i < 0 else i
    if 0 <= i < n:
        return i
    if how == "clip":
        return min(max(i, 0), n - 1)
    return n + 1 if how == "edges" and i < 0 else n


def _bounded_rows(stacked: Any, sizes: list, how: str) -> Any:
    """`_bounded_int` of the integer rows of an advanced index, each against its axis."""
    n = np.asarray(sizes, np.intp).reshape((len(sizes),) + (1,) * (stacked.ndim - 1))
    rows = fnp.where(stacked < 0, stacked + n, stacked)
    if how == "clip":
        return fnp.clip(rows, 0, n - 1)
    past = fnp.where(rows >= n, n, rows)
    return fnp.where(rows < 0, n + 1 if how == "edges" else n, past)


def _may_reach_slot(rows: Any, row: int, n: int) -> bool:
    """Whether row ``row`` of the bounded rows may point at a slot (a traced one may)."""
    return isinstance(rows, Tracer) or bool((rows.concrete()._value[row] >= n).any())


def _bounded(x: Array, index: Index, stacked: Any, how: str) -> tuple[Index, Any, set]:
    """(the Index and rows bounded by ``how``, the axes whose slots they use)."""
    template, slots, sizes = [], set(), [0] * len(stacked)
    for e, ax in zip(index, _axes(index, x.ndim)):
        if type(e) is int or type(e) is Ref:
            if x.shape[ax] == 0:
                raise IndexError(f"index is out of bounds for axis {ax} with size 0")
            if type(e) is int:
                e = _bounded_int(e, x.shape[ax], how)
                if e >= x.shape[ax]:
                    slots.add(ax)
            else:
                sizes[e.row] = x.shape[ax]
        template.append(e)
    if sizes:
        stacked = _bounded_rows(stacked, sizes, how)
        if how != "clip":
            slots.update(ax for e, ax in zip(index, _axes(index, x.ndim)) if type(e) is Ref
                         and _may_reach_slot(stacked, e.row, sizes[e.row]))
    return Index(template), stacked, slots


def _slice_like(index: Index, stacked: Any) -> bool:
    """Whether JAX reads this index as a dynamic slice: integers, scalar integer arrays,
    None, Ellipsis and slices of step 1 or -1 (its gradient then goes to the clamped
    element); anything else is a gather."""
    return (stacked is NO_INDEX or stacked.ndim == 1) and all(
        type(e) is not Slice or e.step in (None, 1, -1) for e in index)


def fill_value_for(dtype: np.dtype) -> Any:
    """JAX's default fill: NaN for inexact types, the most negative value of a signed
    integer type, the largest of an unsigned one, True for booleans."""
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return True


def _cut(x: Array, d: int, start: int, stop: int) -> Array:
    return P.getitem(x, NO_INDEX, index=Index((_ALL,) * d + (Slice(start, stop, None),)))


def _with_slots(x: Array, slots: set, how: str, fill: Any) -> Array:
    """``x`` with the slots of ``how`` at the end of each axis in ``slots``: one holding
    ``fill`` ("fill"), or copies of the last and the first element that no gradient
    reaches ("edges")."""
    if how == "fill":
        return pad(x, [(0, 1) if d in slots else (0, 0) for d in range(x.ndim)],
                   constant_values=fill)
    for d in sorted(slots):
        n = x.shape[d]
        x = concatenate([x, stop_gradient(_cut(x, d, n - 1, n)),
                         stop_gradient(_cut(x, d, 0, 1))], axis=d)
    return x


def gather(x: Any, idx: Any, mode: str | None, fill_value: Any = None) -> Array:
    """``x.at[idx].get(mode=..., fill_value=...)``."""
    x = asarray(x)
    how = _checked(mode)
    if how == "raise" or not _traced(idx):
        try:
            return plain.getitem(x, idx)
        except IndexError:
            if how == "raise":
                raise
    index, stacked = parse_index(idx, x)
    if how == "default":
        how = "clip" if _slice_like(index, stacked) else "edges"
    index, stacked, slots = _bounded(x, index, stacked, how)
    if slots:
        fill = fill_value_for(x.dtype) if fill_value is None else fill_value
        x = _with_slots(x, slots, how, fill)
    return P.getitem(x, stacked, index=index)


def getitem(x: Any, idx: Any) -> Array:
    """``x[idx]``: numpy's indexing, with JAX's clamping of indices out of bounds."""
    if type(idx) is int:  # the commonest index (iteration): in bounds, nothing added
        try:
            return plain.getitem(x, idx)
        except IndexError:
            pass
    return gather(x, idx, None)


def update(x: Any, idx: Any, values: Any, how: str, mode: str | None) -> Array:
    """``x.at[idx].<how>(values, mode=...)``: out of bounds dropped unless "clip" or
    "raise"."""
    x = asarray(x)
    bounding = _checked(mode)
    if bounding == "raise" or not _traced(idx):
        try:
            return plain.index_update(x, idx, values, how)
        except IndexError:
            if bounding == "raise":
                raise
    index, stacked = parse_index(idx, x)
    index, stacked, slots = _bounded(x, index, stacked, "clip" if bounding == "clip"
                                     else "fill")
    if not slots:
        return update_parsed(x, index, stacked, values, how)
    padded = _with_slots(x, slots, "fill", 0)
    out = update_parsed(padded, index, stacked, values, how, within=x.shape)
    return P.getitem(out, NO_INDEX, index=Index(tuple(Slice(0, n, None) for n in x.shape)))


def take(a: Any, indices: Any, axis: Any = None, out: None = None, mode: str | None = None,
         unique_indices: bool = False, indices_are_sorted: bool = False,
         fill_value: Any = None) -> Array:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array by default).
    ``mode``: "fill" (JAX's default: ``fill_value``, NaN for inexact types), "clip",
    "wrap", or funcgrad's "raise" (numpy's IndexError; JAX refuses it)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis_tuple(axis, a.ndim)[0]
    if mode == "wrap":
        indices = fnp.mod(indices, a.shape[axis])
    elif mode == "clip":  # numpy's and JAX's: a negative index clips to 0, not from the end
        indices = fnp.clip(indices, 0, a.shape[axis] - 1)
    elif mode not in (None, "fill", "raise"):
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    if a.shape[axis] == 0 and np.size(indices) != 0:
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    where = (slice(None),) * axis + (indices,)
    if mode in ("wrap", "clip", "raise"):
        return plain.getitem(a, where)
    return gather(a, where, mode or "fill", fill_value)


def take_along_axis(arr: Any, indices: Any, axis: Any = -1, mode: str | None = None,
                    fill_value: Any = None) -> Array:
    """``arr`` gathered at ``indices`` along ``axis``, the other axes broadcast (so
    ``take_along_axis(x, argsort(x, axis), axis)`` sorts x); out of bounds as ``mode``
    (JAX's default "fill")."""
    a, where = along_axis_index(arr, indices, axis)
    return gather(a, where, mode or "fill", fill_value)
