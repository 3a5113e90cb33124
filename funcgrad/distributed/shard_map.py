"""`shard_map` and `pmap`: one function per process, each on its shard of the data.

Every process calls the mapped function with the same whole arrays. Inputs mapped over an
axis are split into contiguous blocks, one per rank (``in_specs=P("world")`` splits
dimension 0, ``P(None, "world")`` dimension 1); replicated inputs (``P()`` or None) are
passed whole. The function runs on this rank's blocks, collectives included, and the
outputs are put back together the same way: mapped outputs are joined from every rank's
block, replicated ones (``P()``) are taken as they are, checked to agree across ranks. So
the result is the same whole array on every rank, and so is its derivative: ``grad`` of a
``shard_map`` equals ``grad`` of the computation done in one process (the boundary
primitives ``pscatter``, ``pcast`` and ``all_gather_invariant`` carry the transposes; see
funcgrad.primitives.collectives).

``pmap(f, axis_name)(x)`` is the stacked form: the mapped dimension has one entry per
rank and disappears inside ``f`` (JAX's ``pmap`` over processes instead of devices).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Hashable

import numpy as np

from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.primitives import collectives as C
from funcgrad.primitives.kernels.collectives import axis_transport
from .world import WORLD, initialize

__all__ = ["PartitionSpec", "P", "shard_map", "pmap"]


class PartitionSpec(tuple):
    """How an array is split: entry k names the axis dimension k is split over (None:
    not split). ``P()`` is a replicated array."""

    def __new__(cls, *names: Hashable | None) -> "PartitionSpec":
        return super().__new__(cls, names)

    def __repr__(self) -> str:
        return "P(" + ", ".join(repr(n) for n in self) + ")"


P = PartitionSpec


def _is_spec(x: Any) -> bool:
    return x is None or isinstance(x, PartitionSpec)


def _mapped_dims(spec: PartitionSpec | None, what: str) -> list[tuple[int, Hashable]]:
    """(dimension, axis name) of each split dimension of ``spec``."""
    if spec is None:
        return []
    dims = [(d, n) for d, n in enumerate(spec) if n is not None]
    if len({n for _, n in dims}) != len(dims):
        raise ValueError(f"{what} {spec!r} splits two dimensions over one axis")
    return dims


def _prefix_leaves(prefix: Any, tree: Any, what: str) -> list:
    """One entry of ``prefix`` per leaf of ``tree``, of which it is a tree prefix (an
    entry that is a spec, None or an int stands for the whole subtree under it)."""
    if _is_spec(prefix) or isinstance(prefix, int):
        return [prefix] * len(tree_util.tree_leaves(tree))
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)) and \
            len(prefix) == len(tree):
        return [s for p, t in zip(prefix, tree) for s in _prefix_leaves(p, t, what)]
    if isinstance(prefix, dict) and isinstance(tree, dict) and prefix.keys() == tree.keys():
        return [s for k in sorted(tree) for s in _prefix_leaves(prefix[k], tree[k], what)]
    raise ValueError(f"{what} must be a tree prefix of the values it describes (one entry "
                     f"per leaf or subtree); got {prefix!r} for a value of structure "
                     f"{tree_util.tree_structure(tree)}")


def _enter(x: Any, spec: PartitionSpec | None, axes: tuple, fname: str) -> Any:
    """This rank's view of a whole input."""
    dims = _mapped_dims(spec, "in_specs entry")
    shape = tuple(np.shape(x)) if not isinstance(x, Array) else tuple(x.shape)
    for d, name in dims:
        size = axis_transport(name).size
        if d >= len(shape) or shape[d] % size:
            raise ValueError(
                f"shard_map applied to the function {fname!r} was given an argument of "
                f"shape {shape} whose dimension {d} is not evenly divisible by the size "
                f"{size} of axis {name!r} (in_specs entry {spec!r})")
        x = C.pscatter(x, axis_name=name, axis=d, tiled=True)
    mapped = {name for _, name in dims}
    for name in axes:
        if name not in mapped:
            x = C.pcast(x, axis_name=name, to="varying")
    return x


def _leave(y: Any, spec: PartitionSpec | None, axes: tuple, fname: str,
           check_rep: bool) -> Any:
    """The whole output assembled from every rank's ``y``."""
    dims = _mapped_dims(spec, "out_specs entry")
    mapped = {name for _, name in dims}
    for name in axes:
        if name not in mapped:
            if check_rep:
                _check_replicated(y, name, fname, spec)
            y = C.pcast(y, axis_name=name, to="invariant")
    for d, name in sorted(dims, reverse=True):
        y = C.all_gather_invariant(y, axis_name=name, axis=d, tiled=True)
    return y


def _check_replicated(y: Any, name: Hashable, fname: str, spec: Any) -> None:
    """Raise on every rank unless ``y`` agrees across the ranks of ``name`` (to a few
    ulps: ranks may sum in different orders)."""
    value = y.concrete().to_numpy() if isinstance(y, Array) else np.asarray(y)
    transport = axis_transport(name)
    lo = transport.allreduce(value, "min")
    hi = transport.allreduce(value, "max")
    tol = 64 * np.finfo(value.dtype).eps if value.dtype.kind in "fc" else 0
    if not np.all(np.abs(hi - lo) <= tol * np.maximum(np.abs(hi), np.abs(lo)) + tol):
        raise ValueError(
            f"shard_map applied to the function {fname!r} was given out_specs {spec!r}, "
            f"which says the output is replicated over axis {name!r}, but it differs "
            "across the ranks. Return it with a spec that splits it over the axis, or make "
            "it agree (psum / pmean / pbroadcast it).")


def shard_map(f: Callable, *, in_specs: Any, out_specs: Any, check_rep: bool = True
              ) -> Callable:
    """``shard_map(f, in_specs=..., out_specs=...)(*args)``: ``f`` on every rank's blocks
    of ``args`` (see the module docstring). ``in_specs`` is a tree prefix of ``args`` (a
    tuple, one entry per argument), ``out_specs`` of the output. ``check_rep`` checks that
    outputs declared replicated agree across ranks (two small all-reduces each)."""
    fname = getattr(f, "__name__", "function")
    axes = _axes_of(in_specs, out_specs)

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        specs = in_specs if type(in_specs) in (tuple, list) else (in_specs,)
        if len(specs) != len(args):
            raise TypeError(f"shard_map applied to the function {fname!r}: in_specs has "
                            f"{len(specs)} entries but {len(args)} arguments were given")
        leaves, tree = tree_util.tree_flatten(args)
        spec_of = _prefix_leaves(specs, args, "shard_map in_specs")
        local = tree.unflatten([_enter(x, s, axes, fname) for x, s in zip(leaves, spec_of)])
        out = f(*local)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_spec_of = _prefix_leaves(out_specs, out, "shard_map out_specs")
        return out_tree.unflatten([_leave(y, s, axes, fname, check_rep)
                                   for y, s in zip(out_leaves, out_spec_of)])
    return mapped


def _axes_of(*spec_trees: Any) -> tuple:
    names: list = []
    for specs in spec_trees:
        for spec in tree_util.tree_leaves(specs, is_leaf=_is_spec):
            for _, name in _mapped_dims(spec, "spec"):
                if name not in names:
                    names.append(name)
    if not names:
        names.append(WORLD)
    for name in names:
        if name == WORLD:
            initialize(WORLD)
    return tuple(names)


def pmap(f: Callable, axis_name: Hashable = WORLD, *, in_axes: Any = 0, out_axes: Any = 0
         ) -> Callable:
    """``pmap(f, axis_name)(x)``: rank r runs ``f`` on ``x[r]`` (dimension ``in_axes``
    indexes the ranks and has one entry per rank); the results are stacked back along
    ``out_axes``. ``in_axes``/``out_axes`` are an int, None (the value passes or returns
    whole) or a tree prefix of the arguments / output."""
    fname = getattr(f, "__name__", "function")
    if axis_name == WORLD:
        initialize(WORLD)

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        size = axis_transport(axis_name).size
        leaves, tree = tree_util.tree_flatten(args)
        axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
        per_leaf = _prefix_leaves(tuple(axes), args, "pmap in_axes")
        local = [_pmap_in(x, a, axis_name, size, fname) for x, a in zip(leaves, per_leaf)]
        out = f(*tree.unflatten(local))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        per_out = _prefix_leaves(out_axes, out, "pmap out_axes")
        return out_tree.unflatten([_pmap_out(y, a, axis_name)
                                   for y, a in zip(out_leaves, per_out)])
    return mapped


def _pmap_in(x: Any, axis: int | None, name: Hashable, size: int, fname: str) -> Any:
    if axis is None:
        return C.pcast(x, axis_name=name, to="varying")
    shape = tuple(x.shape) if isinstance(x, Array) else np.shape(x)
    if not -len(shape) <= axis < len(shape) or shape[axis] != size:
        raise ValueError(f"pmap of {fname!r} over axis {name!r} of size {size}: the mapped "
                         f"dimension {axis} of an argument of shape {shape} must have "
                         f"size {size} (one entry per rank)")
    return C.pscatter(x, axis_name=name, axis=axis % len(shape), tiled=False)


def _pmap_out(y: Any, axis: int | None, name: Hashable) -> Any:
    if axis is None:
        return C.pcast(y, axis_name=name, to="invariant")
    ndim = np.ndim(y) if not isinstance(y, Array) else y.ndim
    if not -(ndim + 1) <= axis <= ndim:
        raise ValueError(f"pmap out_axes {axis} is out of bounds for an output with {ndim} "
                         "dimensions")
    return C.all_gather_invariant(y, axis_name=name, axis=axis % (ndim + 1), tiled=False)
