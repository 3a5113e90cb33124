"""JAX's out-of-bounds modes of ``x.at[idx]``: ``mode=`` "promise_in_bounds", "clip",
"fill" and "drop".

funcgrad's indexing is numpy's: an index out of bounds raises IndexError, also with
"promise_in_bounds" (no mode given is the same). With "clip" each index is clamped into
its axis (negative ones counted from the end first). "fill" and "drop" (one mode, as in
JAX) send an out-of-bounds position to a slot one past the end of its axis, added for the
call: a get reads the fill value there, an update writes there and the slot is cut away,
so out-of-bounds updates are dropped. Everything is made of differentiable funcgrad ops.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.array import Array
from funcgrad.core import Tracer
from funcgrad.primitives import indexing as P
from funcgrad.primitives.indexing import Index, Ref
from funcgrad.numpy._creation import asarray
from funcgrad.numpy._indexing import parse_index, update_parsed
from funcgrad.numpy._shape import pad
import funcgrad.numpy as fnp

__all__ = ["MODES", "bounded_index", "with_slots", "without_slots", "fill_value_for",
           "gather", "update"]

MODES = ("promise_in_bounds", "clip", "fill", "drop")


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


def _bounded_int(i: int, n: int, clip: bool) -> int:
    i = i + n if i < 0 else i
    if clip:
        return min(max(i, 0), n - 1)
    return i if 0 <= i < n else n


def _may_reach_slot(rows: Any, row: int, n: int) -> bool:
    """Whether row ``row`` of the bounded rows may point at the slot (a traced one may)."""
    return isinstance(rows, Tracer) or bool((rows.concrete()._value[row] == n).any())


def _bounded_rows(stacked: Any, sizes: list, clip: bool) -> Any:
    """The integer rows of an advanced index, each normalised against its axis' size and
    clamped ("clip") or sent to the slot at that size."""
    n = np.asarray(sizes, np.intp).reshape((len(sizes),) + (1,) * (stacked.ndim - 1))
    rows = fnp.where(stacked < 0, stacked + n, stacked)
    if clip:
        return fnp.clip(rows, 0, n - 1)
    return fnp.where((rows < 0) | (rows >= n), n, rows)


def bounded_index(x: Array, idx: Any, mode: str | None) -> tuple[Index, Any, set]:
    """`parse_index` of ``idx`` into ``x`` under ``mode``: (the Index, its stacked rows,
    the axes whose slot it uses: pad them with `with_slots`)."""
    index, stacked = parse_index(idx, x)
    if mode is None or mode == "promise_in_bounds":
        return index, stacked, set()
    if mode not in MODES:
        raise ValueError(f"unknown out-of-bounds mode {mode!r}; use one of {MODES}")
    clip = mode == "clip"
    axes = _axes(index, x.ndim)
    template, slots, sizes = [], set(), [0] * len(stacked)
    for e, ax in zip(index, axes):
        if type(e) is int:
            e = _bounded_int(e, x.shape[ax], clip)
            if e == x.shape[ax]:
                slots.add(ax)
        elif type(e) is Ref:
            sizes[e.row] = x.shape[ax]
        template.append(e)
    if sizes:
        stacked = _bounded_rows(stacked, sizes, clip)
        if not clip:
            slots.update(ax for e, ax in zip(index, axes) if type(e) is Ref
                         and _may_reach_slot(stacked, e.row, sizes[e.row]))
    return Index(template), stacked, slots


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


def with_slots(x: Array, slots: set, fill: Any = 0) -> Array:
    """``x`` with one more position, holding ``fill``, at the end of each axis in ``slots``."""
    return pad(x, [(0, 1) if d in slots else (0, 0) for d in range(x.ndim)],
               constant_values=fill)


def without_slots(x: Array, shape: tuple) -> Array:
    """`with_slots` undone: ``x`` cut back to ``shape``."""
    return P.getitem(x, P.NO_INDEX, index=Index(tuple(P.Slice(0, n, None) for n in shape)))


def update(x: Any, idx: Any, values: Any, how: str, mode: str | None) -> Array:
    """``x.at[idx].<how>(values, mode=...)``."""
    x = asarray(x)
    index, stacked, slots = bounded_index(x, idx, mode)
    if not slots:
        return update_parsed(x, index, stacked, values, how)
    out = update_parsed(with_slots(x, slots), index, stacked, values, how, within=x.shape)
    return without_slots(out, x.shape)


def gather(x: Any, idx: Any, mode: str | None, fill_value: Any) -> Array:
    """``x.at[idx].get(mode=..., fill_value=...)``."""
    x = asarray(x)
    index, stacked, slots = bounded_index(x, idx, mode)
    if slots:
        x = with_slots(x, slots, fill_value_for(x.dtype) if fill_value is None else fill_value)
    return P.getitem(x, stacked, index=index)
