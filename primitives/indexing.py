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
    where = index.build(idx)
    out = x[where]
    if isinstance(out, np.generic) and not any(e is Ellipsis for e in where):
        return x[where + (Ellipsis,)]  # numpy's 0-d view instead of a scalar copy
    return out


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
                    keeps_weak=slice(0, 1), sample=samplers.gather,
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


# -- batching rules (vmap) ------------------------------------------------------------------
# An index of each example becomes one index of the batch: a leading full slice when the
# index is the same for every example, a leading advanced component (the example number,
# an arange) when the integer arrays differ. numpy places the broadcast block of advanced
# components in place when they are adjacent, else first: `_layout` tells where, and the
# rules transpose to the layout each example has.
# (the module, read at call time: funcgrad.primitives.batching imports this one)
from . import batching as B  # noqa: E402
from .constants import constant  # noqa: E402

_ALL = Slice(None, None, None)


def _layout(index: Index, ndim: int) -> tuple[bool, int]:
    """(whether the advanced components are adjacent, the output position of their
    broadcast block) for an index with advanced components on an array of rank ``ndim``."""
    consumed = sum(1 for e in index if e is not Ellipsis and e is not None)
    entries: list = []
    for e in index:
        entries += [_ALL] * (ndim - consumed) if e is Ellipsis else [e]
    adv = [i for i, e in enumerate(entries) if type(e) in (Ref, int)]
    if adv != list(range(adv[0], adv[-1] + 1)):
        return False, 0
    return True, adv[0] - sum(1 for e in entries[:adv[0]] if type(e) is int)


def _shared_index(index: Index, idx_ndim: int, x_ndim: int) -> tuple[Index, int]:
    """The index of the batch (batch axis first) for an index shared by the examples
    (idx of rank ``idx_ndim``, examples of rank ``x_ndim``), and where the batch axis of
    the result is."""
    new = Index((_ALL,) + tuple(index))
    if not index.advanced or _layout(index, x_ndim)[0]:
        return new, 0
    return new, idx_ndim - 1  # the advanced block went first


def _per_example(index: Index, idx: Any, di: int, x_ndim: int) -> tuple[Any, Index, tuple]:
    """For integer arrays that differ per example: (idx with a row of example numbers, the
    batch's index, the permutation from the batch's result layout (batch, block, rest) to
    the examples' layout (batch, rest before the block, block, rest after))."""
    idx = B.moveaxis(idx, di, 1)  # (rows, batch, *block)
    rows, size, block = idx.shape[0], idx.shape[1], tuple(idx.shape[2:])
    numbers = constant(idx, np.arange(size, dtype=idx.dtype).reshape((1, size) + (1,) * len(
        block)))
    from .shape import broadcast_to, concatenate  # shape imports this module
    idx = concatenate(idx, broadcast_to(numbers, shape=(1, size) + block), axis=0)
    adjacent, q = _layout(index, x_ndim)
    q = q if adjacent else 0
    nb = len(block)
    rest = x_ndim - sum(1 for e in index if type(e) in (int, Ref)) + sum(
        1 for e in index if e is None)
    perm = (0,) + tuple(1 + nb + i for i in range(q)) + tuple(range(1, 1 + nb)) + tuple(
        1 + nb + i for i in range(q, rest))
    return idx, Index((Ref(rows),) + tuple(index)), perm


def _inverse(perm: tuple) -> tuple:
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return tuple(out)


def _batched_idx(idx: Any, di: Any, index: Index) -> bool:
    return di is not None and index.advanced


def _batch_getitem(args: tuple, dims: tuple, index: Index) -> tuple:
    (x, idx), (dx, di) = args, dims
    if not _batched_idx(idx, di, index):
        new, at = _shared_index(index, idx.ndim - (di is not None), x.ndim - 1)
        return getitem(B.to_front(x, dx), _unbatched_idx(idx, di), index=new), at
    size = idx.shape[di]
    x = B.materialize(x, dx, size)
    idx, new, perm = _per_example(index, idx, di, x.ndim - 1)
    from .shape import transpose  # shape imports this module
    return transpose(getitem(x, idx, index=new), axes=perm), 0


def _unbatched_idx(idx: Any, di: Any) -> Any:
    """idx of an index without integer arrays (nothing to batch): the empty rows."""
    return idx if di is None else NO_INDEX


def _updates_layout(u: Any, du: Any, size: int, rank: int, at: int, perm: tuple | None
                    ) -> Any:
    """Updates (or values) laid out as the batch's gather: batch axis at ``at``, or
    (per-example indices) transposed by the inverse of ``perm``."""
    if du is None and B.ndim_of(u) == 0:
        return u
    u = B.lift(B.materialize(u, du, size), rank)
    from .shape import broadcast_to, transpose  # shape imports this module
    if perm is not None:
        u = broadcast_to(u, shape=(size,) + tuple(np.broadcast_shapes(tuple(u.shape[1:]),
                                                                       (1,) * rank)))
        return transpose(u, axes=_inverse(perm))
    return B.moveaxis(u, 0, at)


def _gather_rank(index: Index, x_ndim: int, block: int) -> int:
    kept = x_ndim - sum(1 for e in index if type(e) in (int, Ref))
    news = sum(1 for e in index if e is None)
    return kept + news + (block if index.advanced else 0)


def _scatter_like(args: tuple, dims: tuple, index: Index, shape: tuple, x: Any) -> tuple:
    """(target with the batch axis in front, the updates laid out for the batch's index,
    idx, the batch's index) for scatter_add and index_set."""
    u, idx = args
    du, di, dx = dims
    size = next(a.shape[d] for a, d in ((u, du), (idx, di), (x, dx)) if d is not None)
    block = idx.ndim - 1 - (di is not None)
    rank = _gather_rank(index, len(shape), block)
    if _batched_idx(idx, di, index):
        idx, new, perm = _per_example(index, idx, di, len(shape))
        return _updates_layout(u, du, size, rank, 0, perm), idx, new, size
    new, at = _shared_index(index, block + 1, len(shape))
    return _updates_layout(u, du, size, rank, at, None), _unbatched_idx(idx, di), new, size


def _batch_scatter_add(args: tuple, dims: tuple, index: Index, shape: tuple) -> tuple:
    u, idx, new, size = _scatter_like(args, (*dims, None), index, shape, None)
    return scatter_add(u, idx, index=new, shape=(size,) + tuple(shape)), 0


def _batch_index_set(args: tuple, dims: tuple, index: Index) -> tuple:
    x, values, idx = args
    dx, dv, di = dims
    u, idx, new, size = _scatter_like((values, idx), (dv, di, dx), index,
                                      tuple(x.shape)[(dx is not None):], x)
    return index_set(B.materialize(x, dx, size), u, idx, index=new), 0


def _batch_set_winners(args: tuple, dims: tuple, index: Index, shape: tuple) -> tuple:
    (idx,), (di,) = args, dims
    if not index.advanced:
        return set_winners(NO_INDEX, index=index, shape=shape), None
    idx, new, perm = _per_example(index, idx, di, len(shape))
    from .shape import transpose  # shape imports this module
    return transpose(set_winners(idx, index=new, shape=(idx.shape[1],) + tuple(shape)),
                     axes=perm), 0


getitem.defbatch(_batch_getitem)
scatter_add.defbatch(_batch_scatter_add)
index_set.defbatch(_batch_index_set)
set_winners.defbatch(_batch_set_winners)
B.broadcasting(argsort, axes=("axis",))
B.not_batchable(nonzero, "its result's shape depends on the values, so the examples' results "
                "need not have one shape; select with funcgrad.numpy.where(mask, x, fill) "
                "instead of boolean indexing")
