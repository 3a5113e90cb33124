"""The collectives as functions: JAX's ``jax.lax`` signatures, over pytrees.

Each function checks its arguments (so that a mistake is an error naming it on the rank
that made it, before any communication) and applies the registry primitive of
`funcgrad.primitives.collectives` to every leaf. The reductions also accept a tuple of
axis names (a reduction over each in turn, which is the reduction over their product).
"""
from __future__ import annotations

from typing import Any, Callable, Hashable, Sequence

import numpy as np

from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.primitives import collectives as C
from funcgrad.primitives.batching import axis_size_of as _axis_size  # vmap's or a group's

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "reduce_scatter",
           "pbroadcast", "broadcast", "ppermute", "axis_index", "axis_size"]


def _leaves(x: Any, fn: Callable[[Any], Any]) -> Any:
    return tree_util.tree_map(fn, x)


def _names(axis_name: Any) -> tuple:
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for n in names:
        try:
            hash(n)
        except TypeError:
            raise TypeError(f"an axis name must be hashable (a string, usually), got "
                            f"{type(n).__name__}") from None
    return names


def _one_name(axis_name: Any, what: str) -> Hashable:
    names = _names(axis_name)
    if len(names) != 1:
        raise NotImplementedError(f"{what} over several axes at once ({axis_name!r}) is not "
                                  "supported; apply it over one axis name at a time")
    return names[0]


def _ndim(x: Any) -> int:
    return x.ndim if isinstance(x, (Array, np.ndarray)) else np.ndim(x)


def _shape(x: Any) -> tuple:
    return tuple(x.shape) if isinstance(x, (Array, np.ndarray)) else np.shape(x)


def _axis(axis: int, ndim: int, what: str) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of bounds for an operand with {ndim} "
                         f"dimension{'s' if ndim != 1 else ''}")
    return axis % ndim if ndim else 0


def _reduction(prim: Any, doc: str) -> Callable:
    # an eager psum/pmax/pmin's common case goes to its primitive's `reduce`; prim.bind
    # otherwise, a method: calling the object itself goes through its type's __call__
    # slot, which enters a new interpreter frame from C (~1 k instructions)
    one = (prim.reduce if isinstance(prim, C.AxisReduction) else
           lambda x, name: prim.bind(x, axis_name=name))

    def reduce(x: Any, axis_name: Any) -> Any:
        if type(axis_name) is str and isinstance(x, Array):  # the common case, directly
            return one(x, axis_name)
        names = _names(axis_name)
        return _leaves(x, lambda leaf: _over(prim, leaf, names))
    reduce.__name__ = reduce.__qualname__ = prim.name
    reduce.__doc__ = doc
    return reduce


def _over(prim: Any, leaf: Any, names: tuple) -> Any:
    for name in names:
        leaf = prim(leaf, axis_name=name)
    return leaf


psum = _reduction(C.psum, "``psum(x, axis_name)``: the sum of x over the ranks of the axis "
                  "(a pytree: leaf by leaf). Its derivative follows JAX's pmap: see "
                  "funcgrad.primitives.collectives.")
pmean = _reduction(C.pmean, "``pmean(x, axis_name)``: the mean of x over the ranks of the "
                   "axis.")
pmax = _reduction(C.pmax, "``pmax(x, axis_name)``: the elementwise maximum over the ranks "
                  "(the derivative is shared equally among the ranks attaining it).")
pmin = _reduction(C.pmin, "``pmin(x, axis_name)``: the elementwise minimum over the ranks.")


def all_gather(x: Any, axis_name: Any, *, axis: int = 0, tiled: bool = False) -> Any:
    """Every rank's x, stacked along a new axis ``axis`` (of the axis' size), or with
    ``tiled`` joined along the existing ``axis``."""
    name = _one_name(axis_name, "all_gather")

    def gather(leaf: Any) -> Any:
        ndim = _ndim(leaf)
        if tiled and ndim == 0:
            raise ValueError("all_gather with tiled=True needs an operand with at least one "
                             "dimension, got a scalar")
        a = _axis(axis, ndim if tiled else ndim + 1, "all_gather")
        return C.all_gather(leaf, axis_name=name, axis=a, tiled=bool(tiled))
    return _leaves(x, gather)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 tiled: bool = False) -> Any:
    """Block ``axis_index`` of the sum over ranks, along ``scatter_dimension``: that
    dimension must equal the axis' size (it is removed), or with ``tiled`` be a multiple
    of it (each rank keeps its block)."""
    name = _one_name(axis_name, "psum_scatter")
    size = _axis_size(name)

    def scatter(leaf: Any) -> Any:
        shape = _shape(leaf)
        d = _axis(scatter_dimension, len(shape), "psum_scatter")
        n = shape[d] if shape else None
        if n is None or (n % size if tiled else n != size):
            need = f"a multiple of {size}" if tiled else f"equal to {size}"
            raise ValueError(f"psum_scatter over axis {name!r} of size {size}: dimension "
                             f"{scatter_dimension} of the operand (shape {shape}) must be "
                             f"{need}")
        return C.psum_scatter(leaf, axis_name=name, scatter_dimension=d, tiled=bool(tiled))
    return _leaves(x, scatter)


reduce_scatter = psum_scatter


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """x of rank ``source``, on every rank of the axis (JAX's ``lax.pbroadcast``)."""
    name = _one_name(axis_name, "pbroadcast")
    source = _rank(source, name, "source")
    return _leaves(x, lambda leaf: C.pbroadcast(leaf, axis_name=name, source=source))


def broadcast(x: Any, axis_name: Any, root: int = 0) -> Any:
    """x of rank ``root`` on every rank (`pbroadcast` with PyTorch's argument name)."""
    return pbroadcast(x, axis_name, root)


def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Send x along ``perm``, (source, destination) pairs: each rank receives the x of the
    rank that sends to it, or zeros if none does."""
    name = _one_name(axis_name, "ppermute")
    pairs = tuple((_rank(s, name, "source"), _rank(d, name, "destination"))
                  for s, d in perm)
    sources = [s for s, _ in pairs]
    dests = [d for _, d in pairs]
    if len(set(sources)) != len(sources) or len(set(dests)) != len(dests):
        raise ValueError(f"ppermute sources and destinations must be unique, got {pairs}.")
    return _leaves(x, lambda leaf: C.ppermute(leaf, axis_name=name, perm=pairs))


def axis_index(axis_name: Any) -> Array:
    """This rank's index along the axis (an int32 scalar)."""
    return C.axis_index(axis_name=_one_name(axis_name, "axis_index"))


def axis_size(axis_name: Any) -> int:
    """The number of ranks along the axis (the product, for a tuple of names)."""
    return int(np.prod([_axis_size(n) for n in _names(axis_name)], dtype=np.int64))


def _rank(r: Any, name: Hashable, what: str) -> int:
    size = _axis_size(name)
    if not isinstance(r, (int, np.integer)) or isinstance(r, bool) or not 0 <= r < size:
        raise ValueError(f"{what} {r!r} is not a rank of axis {name!r} (ranks 0 to "
                         f"{size - 1})")
    return int(r)
