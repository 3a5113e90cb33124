"""numpy's index tricks: ``r_`` and ``c_`` (concatenation by slicing syntax), ``mgrid``,
``ogrid``, ``s_``, ``index_exp``, ``ix_``, the triangle and diagonal index helpers,
``unravel_index``, ``ravel_multi_index``, ``ndindex`` and ``ndenumerate``.

``r_``/``c_`` and ``ix_`` build on concatenate and reshape, so they are differentiable in
the Arrays they are given; the index helpers compute integer positions (constants).
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Iterator

import numpy as np

from funcgrad.array import Array, new_array
from funcgrad.numpy._creation import array, asarray, astype, ones
from funcgrad.numpy._indexing import getitem, nonzero
from funcgrad.numpy._ranges import arange, linspace
from funcgrad.numpy._shape import concatenate, reshape, swapaxes, transpose

__all__ = ["r_", "c_", "s_", "index_exp", "mgrid", "ogrid", "ix_", "diag_indices",
           "diag_indices_from", "tril_indices", "tril_indices_from", "triu_indices",
           "triu_indices_from", "mask_indices", "unravel_index", "ravel_multi_index",
           "ndindex", "ndenumerate"]

s_ = np.s_
index_exp = np.index_exp
ndindex = np.ndindex


def _slice_range(key: slice) -> Array:
    """``start:stop:step`` as arange, or as linspace of |step| points for an imaginary
    step (numpy's ``r_[0:1:5j]``)."""
    start = 0 if key.start is None else key.start
    step = 1 if key.step is None else key.step
    if isinstance(step, (complex, np.complexfloating)):
        return linspace(start, key.stop, int(abs(step)))
    return arange(start, key.stop, step)


class _Concatenator:
    """``r_[...]`` / ``c_[...]``: slices become ranges, scalars and arrays are lifted to
    ``ndmin`` dimensions (placing their axes by ``trans1d``), and all are joined along
    ``axis``; a leading string 'axis[,ndmin[,trans1d]]' changes those."""

    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key: Any) -> Array:
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if items and isinstance(items[0], str):
            axis, ndmin, trans1d = self._directive(items.pop(0), ndmin, trans1d)
        pieces = []
        for item in items:
            if isinstance(item, slice):
                piece = array(_slice_range(item), ndmin=ndmin)
                if ndmin > 1 and trans1d != -1:
                    piece = swapaxes(piece, -1, trans1d)
            elif isinstance(item, str):
                raise ValueError(f"{self.name}: a string directive is allowed only first")
            elif np.ndim(item) == 0 and not isinstance(item, Array):
                piece = array(item, ndmin=ndmin)
            else:
                piece = self._lift(asarray(item), ndmin, trans1d)
            pieces.append(piece)
        if not pieces:
            return new_array(np.zeros(0))
        dtype = np.result_type(*(p.dtype for p in pieces))
        return concatenate([p if p.dtype == dtype else astype(p, dtype) for p in pieces],
                           axis)

    def _directive(self, text: str, ndmin: int, trans1d: int) -> tuple:
        if text in ("r", "c"):
            raise NotImplementedError(f"{self.name}['{text}', ...] builds a numpy matrix; "
                                      "funcgrad has no matrix type: use 2-D Arrays")
        parts = [operator.index(int(p)) for p in text.split(",")]
        axis = parts[0]
        ndmin = parts[1] if len(parts) > 1 else ndmin
        trans1d = parts[2] if len(parts) > 2 else trans1d
        return axis, ndmin, trans1d

    def _lift(self, a: Array, ndmin: int, trans1d: int) -> Array:
        """numpy's ``array(item, ndmin=ndmin)``, whose new leading axes of length 1 are
        then rotated so that the item's own axes start at position ``trans1d``."""
        k = a.ndim
        lifted = array(a, ndmin=ndmin)
        if trans1d == -1 or k >= ndmin:
            return lifted
        k2 = ndmin - k
        k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
        axes = list(range(ndmin))
        return transpose(lifted, axes[:k1] + axes[k2:] + axes[k1:k2])

    def __len__(self) -> int:
        return 0


r_ = _Concatenator(0, 1, -1, "r_")
c_ = _Concatenator(-1, 2, 0, "c_")


class _Grid:
    """``mgrid[...]`` (dense) and ``ogrid[...]`` (open) coordinate grids (constants)."""

    def __init__(self, np_grid: Any):
        self._np = np_grid

    def __getitem__(self, key: Any) -> Any:
        out = self._np[key]
        if isinstance(out, (list, tuple)):
            return type(out)(new_array(np.array(g, copy=True)) for g in out)
        return new_array(np.array(out, copy=True))


mgrid = _Grid(np.mgrid)
ogrid = _Grid(np.ogrid)


def ix_(*args: Any) -> tuple:
    """An open mesh from 1-D sequences: each reshaped to broadcast along its own axis
    (boolean sequences become the positions of their True entries)."""
    out = []
    n = len(args)
    for k, seq in enumerate(args):
        a = asarray(seq)
        if a.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if a.dtype == np.bool_:
            a = nonzero(a)[0]
        out.append(reshape(a, (1,) * k + (-1,) + (1,) * (n - k - 1)))
    return tuple(out)


def _constants(raw: tuple) -> tuple:
    return tuple(new_array(np.array(r, copy=True)) for r in raw)


def diag_indices(n: Any, ndim: Any = 2) -> tuple:
    """The indices of the main diagonal of an (n, n, ..., n) array."""
    return _constants(np.diag_indices(operator.index(n), operator.index(ndim)))


def diag_indices_from(arr: Any) -> tuple:
    """The indices of the main diagonal of arr (all of whose axes have one length)."""
    a = asarray(arr)
    if a.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(a.shape[0], a.ndim)


def tril_indices(n: Any, k: Any = 0, m: Any = None) -> tuple:
    """The indices of the lower triangle of an (n, m) array, from the k-th diagonal."""
    return _constants(np.tril_indices(operator.index(n), operator.index(k),
                                      None if m is None else operator.index(m)))


def triu_indices(n: Any, k: Any = 0, m: Any = None) -> tuple:
    """The indices of the upper triangle of an (n, m) array, from the k-th diagonal."""
    return _constants(np.triu_indices(operator.index(n), operator.index(k),
                                      None if m is None else operator.index(m)))


def tril_indices_from(arr: Any, k: Any = 0) -> tuple:
    """tril_indices for the shape of the 2-D arr."""
    a = asarray(arr)
    if a.ndim != 2:
        raise ValueError("input array must be 2-d")
    return tril_indices(a.shape[0], k, a.shape[1])


def triu_indices_from(arr: Any, k: Any = 0) -> tuple:
    """triu_indices for the shape of the 2-D arr."""
    a = asarray(arr)
    if a.ndim != 2:
        raise ValueError("input array must be 2-d")
    return triu_indices(a.shape[0], k, a.shape[1])


def mask_indices(n: Any, mask_func: Callable, k: Any = 0) -> tuple:
    """The indices where ``mask_func(ones((n, n)), k)`` is non-zero (e.g. triu)."""
    mask = asarray(mask_func(ones((operator.index(n),) * 2, dtype=int), k))
    return nonzero(mask != 0)


def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple:
    """The coordinates in ``shape`` of flat indices."""
    raw = np.asarray(asarray(indices).concrete().to_numpy())
    return _constants(np.unravel_index(raw, tuple(operator.index(s) for s in np.atleast_1d(
        shape)) if np.ndim(shape) else operator.index(shape), order=order))


def ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise",
                      order: str = "C") -> Array:
    """The flat indices in ``dims`` of coordinate arrays (mode 'raise', 'wrap', 'clip')."""
    coords = tuple(np.asarray(asarray(c).concrete().to_numpy()) for c in multi_index)
    return new_array(np.asarray(np.ravel_multi_index(coords, dims, mode, order)))


def ndenumerate(arr: Any) -> Iterator:
    """(index tuple, element) pairs of arr; the elements are 0-d Arrays (differentiable)."""
    a = asarray(arr)
    for idx in np.ndindex(*a.shape):
        yield idx, getitem(a, idx)
