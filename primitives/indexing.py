"""Indexing primitives: the gather `getitem`, its transpose `scatter_add`, and `index_set`.

An index is split in two. The static param ``index`` (an `Index`) is numpy's index with
integers, slices, None and Ellipsis kept as they are and each integer-array component
replaced by a `Ref` to one row of the integer input ``idx``, into which the wrapper
(`funcgrad.numpy.getitem`) stacks the advanced indices broadcast together. Rebuilding the
numpy index from both and letting numpy (or cupy) do the indexing reproduces numpy's rules
exactly, mixed basic and advanced indexing included. Boolean masks arrive here already
converted to integer arrays (nonzero): their values are concrete, transforms are eager.

| primitive   | VJP                                                    | JVP                  |
|-------------|--------------------------------------------------------|----------------------|
| getitem     | x: scatter_add(g) into zeros of x's shape              | getitem(t)           |
| scatter_add | updates: getitem(g)                                    | scatter_add(t)       |
| index_set   | x: index_set(g, 0); values: getitem(g) where they won  | index_set(t / zeros) |

scatter_add accumulates repeated indices (np.add.at semantics), which makes it the exact
transpose of a gather with repeats. index_set keeps numpy's "last write wins"; with
repeated indices only the winning update gets a derivative (`set_winners` finds it).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from funcgrad.array import new_array
from funcgrad.core import ZERO, Primitive
from .constants import zeros_like
from .samplers import indexing as samplers


class Slice(NamedTuple):
    """A hashable ``slice`` (slices are not hashable before Python 3.12)."""
    start: int | None
    stop: int | None
    step: int | None

    def __repr__(self) -> str:
        s = f"{'' if self.start is None else self.start}:{'' if self.stop is None else self.stop}"
        return s if self.step is None else f"{s}:{self.step}"


class Ref(NamedTuple):
    """An advanced (integer array) index component: row ``row`` of the ``idx`` input."""
    row: int

    def __repr__(self) -> str:
        return f"idx[{self.row}]"


class Index(tuple):
    """The static part of an index: ints, `Slice`, None, Ellipsis and `Ref` entries."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "[" + ", ".join("..." if e is Ellipsis else repr(e) for e in self) + "]"

    @property
    def advanced(self) -> bool:
        """Whether it has integer-array components (and so may repeat elements)."""
        return any(type(e) is Ref for e in self)

    def build(self, idx: Any) -> tuple:
        """The numpy index, with the rows of ``idx`` in place of the `Ref` entries."""
        return tuple(slice(*e) if type(e) is Slice else idx[e.row] if type(e) is Ref else e
                     for e in self)


NO_INDEX = new_array(np.zeros((0,), np.intp))
"""The ``idx`` input of an index without integer-array components."""


def _gather(x: Any, idx: Any, index: Index) -> Any:
    return x[index.build(idx)]


def _scatter_add(updates: Any, idx: Any, index: Index, shape: tuple) -> Any:
    out = np.zeros_like(updates, shape=shape)
    where = index.build(idx)
    if index.advanced:
        np.add.at(out, where, updates)
    else:  # basic indexing never repeats an element
        out[where] = updates
    return out


def _index_set(x: Any, values: Any, idx: Any, index: Index) -> Any:
    out = np.copy(x)
    out[index.build(idx)] = values
    return out


def _set_winners(idx: Any, index: Index, shape: tuple) -> Any:
    """Boolean mask over the indexed positions: True where the update is the one that
    stays (the last write to its element, as numpy assigns)."""
    where = index.build(idx)
    owner = np.full_like(idx, -1, shape=shape)
    target = owner[where].shape
    ids = np.arange(int(np.prod(target)), like=idx).reshape(target)
    owner[where] = ids
    return owner[where] == ids


# -- primitives ----------------------------------------------------------------------------

getitem = Primitive("getitem", _gather, ("x", "idx"), ("index",), view=True,
                    sample=samplers.gather,
                    doc="x[index] with idx's rows in place of the Ref entries.")
scatter_add = Primitive("scatter_add", _scatter_add, ("updates", "idx"), ("index", "shape"),
                        sample=samplers.update,
                        doc="zeros(shape) with updates added at index (repeats accumulate).")
index_set = Primitive("index_set", _index_set, ("x", "values", "idx"), ("index",),
                      sample=samplers.update,
                      doc="a copy of x with x[index] = values.")
argsort = Primitive("argsort", lambda x, axis, kind: np.argsort(x, axis=axis, kind=kind),
                   params=("axis", "kind"), differentiable=False)
nonzero = Primitive("nonzero", lambda x: tuple(np.nonzero(x)), multiple_results=True,
                    differentiable=False, dynamic_shape=True)
set_winners = Primitive("set_winners", _set_winners, ("idx",), ("index", "shape"),
                        differentiable=False,
                        doc="which updates of index_set stay (the last write wins).")


def _set_values_vjp(g: Any, x_shape: tuple, idx: Any, index: Index) -> Any:
    got = getitem(g, idx, index=index)
    return got * set_winners(idx, index=index, shape=x_shape) if index.advanced else got


def _set_values_jvp(t: Any, x_shape: tuple, idx: Any, index: Index) -> Any:
    return index_set(zeros_like(t, shape=x_shape), t, idx, index=index)


getitem.defvjp(lambda g, x_shape, idx, index: scatter_add(g, idx, index=index, shape=x_shape),
               ZERO)
getitem.defjvp(lambda t, idx, index: getitem(t, idx, index=index), ZERO)
scatter_add.defvjp(lambda g, idx, index: getitem(g, idx, index=index), ZERO)
scatter_add.defjvp(lambda t, idx, index, shape: scatter_add(t, idx, index=index, shape=shape),
                   ZERO)
index_set.defvjp(lambda g, idx, index: index_set(g, 0, idx, index=index), _set_values_vjp,
                 ZERO)
index_set.defjvp(lambda t, idx, index: index_set(t, 0, idx, index=index), _set_values_jvp,
                 ZERO)


def slice_axis(x: Any, axis: int, start: int | None = None, stop: int | None = None,
               step: int | None = None) -> Any:
    """x[..., start:stop:step] along ``axis`` (non-negative), as a getitem."""
    return getitem(x, NO_INDEX, index=Index(
        (Slice(None, None, None),) * axis + (Slice(start, stop, step),)))
