"""Shape functions of funcgrad.numpy with numpy's names and signatures.

Only reshape, broadcast_to, transpose, concatenate and pad (constant) are primitives; the
rest are compositions of them and of getitem (flip, roll and split slice; tile and repeat
broadcast and reshape; the non-constant pad modes gather along an index map that numpy
computes), so all are differentiable to any order. Each wrapper returns its input when
there is nothing to do, which keeps the tape's hot paths (unbroadcasting) cheap.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from funcgrad.array import Array
from funcgrad.primitives import shape as P
from funcgrad.primitives.indexing import NO_INDEX, Index, Slice, getitem as _getitem, \
    slice_axis
from funcgrad.numpy._creation import as_shape, asarray
from funcgrad.numpy._reductions import normalize_axis, normalize_axis_tuple

__all__ = ["reshape", "broadcast_to", "broadcast_arrays", "broadcast_shapes", "transpose",
           "swapaxes", "moveaxis", "expand_dims", "squeeze", "ravel", "concatenate",
           "stack", "hstack", "vstack", "dstack", "column_stack", "split", "array_split",
           "tile", "repeat", "flip", "fliplr", "flipud", "roll", "rot90", "pad",
           "atleast_1d", "atleast_2d", "atleast_3d", "matrix_transpose", "_T"]

broadcast_shapes = np.broadcast_shapes




def reshape(a: Any, /, shape: Any = None, order: str = "C", *, newshape: Any = None,
            copy: bool | None = None) -> Array:
    """``a`` with a new shape (one entry may be -1); only C order. ``copy`` is accepted
    for the Array API (an immutable Array never needs one)."""
    a = asarray(a)
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported; transpose the "
                                  "array first for a Fortran-order reshape")
    if shape is not None and newshape is not None:
        raise TypeError("You cannot specify 'newshape' and 'shape' arguments at the same "
                        "time.")
    if shape is None and newshape is None:
        raise TypeError("reshape() missing 1 required positional argument: 'shape'")
    target = as_shape(shape if shape is not None else newshape)
    if target == a.shape:
        return a
    out_shape = np.empty(a.shape, dtype=[]).reshape(target).shape  # resolves -1, checks size
    return a if out_shape == a.shape else P.reshape(a, shape=out_shape)


def ravel(a: Any, order: str = "C") -> Array:
    """``a`` flattened to 1-D."""
    return reshape(a, (-1,), order)


def broadcast_to(array: Any, shape: Any) -> Array:
    """``array`` broadcast to ``shape`` (a read-only view in numpy, a new Array here)."""
    a = asarray(array)
    shape = as_shape(shape)
    return a if a.shape == shape else P.broadcast_to(a, shape=shape)


def broadcast_arrays(*args: Any) -> list:
    """The arguments broadcast against each other (a list, as the Array API and JAX)."""
    arrays = [asarray(x) for x in args]
    shape = np.broadcast_shapes(*(x.shape for x in arrays))
    return [broadcast_to(x, shape) for x in arrays]


def transpose(a: Any, axes: Any = None) -> Array:
    """``a`` with its axes permuted (reversed by default)."""
    a = asarray(a)
    if axes is None:
        axes = tuple(range(a.ndim))[::-1]
    else:
        axes = normalize_axis_tuple(axes, a.ndim, "axes")
        if len(axes) != a.ndim:
            raise ValueError(f"axes {axes} don't match an array of dimension {a.ndim}: give "
                             "a permutation of all its axes")
    return a if axes == tuple(range(a.ndim)) else P.transpose(a, axes=axes)


def _T(a: Any) -> Array:
    """``a.T``: all axes reversed."""
    return transpose(a)


def matrix_transpose(x: Any) -> Array:
    """``x.mT``: the last two axes swapped."""
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs an array of at least 2 dimensions, got "
                         f"ndim={x.ndim}; use .T or reshape it first")
    return swapaxes(x, -1, -2)


def swapaxes(a: Any, axis1: int, axis2: int) -> Array:
    """``a`` with two axes interchanged."""
    a = asarray(a)
    i, j = _one(axis1, a.ndim, "axis1"), _one(axis2, a.ndim, "axis2")
    axes = list(range(a.ndim))
    axes[i], axes[j] = j, i
    return transpose(a, axes)


def moveaxis(a: Any, source: Any, destination: Any) -> Array:
    """``a`` with the axes ``source`` moved to positions ``destination``."""
    a = asarray(a)
    src = normalize_axis_tuple(source, a.ndim, "source")
    dst = normalize_axis_tuple(destination, a.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def _one(axis: Any, ndim: int, name: str = "axis") -> int:
    return normalize_axis_tuple(axis, ndim, name)[0]


def expand_dims(a: Any, axis: Any) -> Array:
    """``a`` with new axes of length 1 at the positions ``axis`` of the result."""
    a = asarray(a)
    n = len(axis) if isinstance(axis, (tuple, list)) else 1
    new = normalize_axis_tuple(axis, a.ndim + n)
    it = iter(a.shape)
    return reshape(a, tuple(1 if i in new else next(it) for i in range(a.ndim + n)))


def squeeze(a: Any, axis: Any = None) -> Array:
    """``a`` without the given axes of length 1 (all of them by default)."""
    a = asarray(a)
    if axis is None:
        axes = tuple(i for i, n in enumerate(a.shape) if n == 1)
    else:
        axes = normalize_axis_tuple(axis, a.ndim)
        for i in axes:
            if a.shape[i] != 1:
                raise ValueError(f"cannot select an axis to squeeze out which has size not "
                                 f"equal to one (axis {i} has size {a.shape[i]})")
    return reshape(a, tuple(n for i, n in enumerate(a.shape) if i not in axes))


def atleast_1d(*arys: Any) -> Any:
    """Each argument with at least one dimension."""
    out = tuple(reshape(x, (1,)) if asarray(x).ndim == 0 else asarray(x) for x in arys)
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys: Any) -> Any:
    """Each argument with at least two dimensions (a vector becomes one row)."""
    out = tuple(_lift(asarray(x), 2) for x in arys)
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys: Any) -> Any:
    """Each argument with at least three dimensions: (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    out = tuple(_lift(asarray(x), 3) for x in arys)
    return out[0] if len(out) == 1 else out


def _lift(a: Array, ndim: int) -> Array:
    if a.ndim >= ndim:
        return a
    shape = {0: (1,) * ndim, 1: (1,) + a.shape + (1,) * (ndim - 2), 2: a.shape + (1,)}
    return reshape(a, shape[a.ndim])


def concatenate(arrays: Sequence, axis: Any = 0, dtype: Any = None) -> Array:
    """The arrays joined along an existing axis (flattened first when ``axis`` is None)."""
    arrays = [asarray(x) if dtype is None else asarray(x).astype(dtype) for x in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrays, axis = [ravel(x) for x in arrays], 0
    if arrays[0].ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated; use stack, or "
                         "atleast_1d first")
    axis = _one(axis, arrays[0].ndim)
    if len(arrays) == 1:
        return arrays[0]
    return P.concatenate(*arrays, axis=axis)


def stack(arrays: Sequence, axis: int = 0) -> Array:
    """The arrays (all of one shape) joined along a new axis."""
    arrays = [asarray(x) for x in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    if len({x.shape for x in arrays}) > 1:
        raise ValueError(f"all input arrays must have the same shape, got "
                         f"{[x.shape for x in arrays]}")
    axis = _one(axis, arrays[0].ndim + 1)
    return concatenate([expand_dims(x, axis) for x in arrays], axis)


def hstack(tup: Sequence) -> Array:
    """Join horizontally: along axis 0 for 1-D arrays, axis 1 otherwise."""
    arrays = [atleast_1d(x) for x in tup]
    return concatenate(arrays, 0 if arrays and arrays[0].ndim == 1 else 1)


def vstack(tup: Sequence) -> Array:
    """Join vertically (rows): along axis 0 of the arrays made at least 2-D."""
    return concatenate([atleast_2d(x) for x in tup], 0)


def dstack(tup: Sequence) -> Array:
    """Join depth-wise: along axis 2 of the arrays made at least 3-D."""
    return concatenate([atleast_3d(x) for x in tup], 2)


def column_stack(tup: Sequence) -> Array:
    """Join 1-D arrays as columns (2-D arrays as they are) into a 2-D array."""
    cols = [asarray(x) for x in tup]
    return concatenate([reshape(c, (-1, 1)) if c.ndim < 2 else c for c in cols], 1)


def _slices(a: Array, axis: int, bounds: Sequence) -> list:
    """The pieces a[bounds[0]:bounds[1]], a[bounds[1]:bounds[2]], ... along ``axis``."""
    return [slice_axis(a, axis, lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:])]


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Split into sub-arrays along ``axis``: N parts as equal as possible, or at the given
    indices."""
    a = asarray(ary)
    axis = _one(axis, a.ndim)
    n = a.shape[axis]
    if np.ndim(indices_or_sections) == 0:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        bounds = np.cumsum([0] + extra * [each + 1] + (sections - extra) * [each])
    else:  # numpy slices between the given indices, negative ones included
        bounds = [0, *(operator.index(i) for i in indices_or_sections), n]
    return _slices(a, axis, [int(b) for b in bounds])


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Split into equal sub-arrays (an int that must divide the axis) or at indices."""
    a = asarray(ary)
    if np.ndim(indices_or_sections) == 0:
        n = a.shape[_one(axis, a.ndim)]
        if n % operator.index(indices_or_sections):
            raise ValueError(f"array split does not result in an equal division: axis of "
                             f"length {n} into {indices_or_sections} sections; use "
                             "array_split for unequal parts")
    return array_split(a, indices_or_sections, axis)


def tile(A: Any, reps: Any) -> Array:
    """``A`` repeated ``reps`` times along each axis (numpy's rules for unequal lengths)."""
    a = asarray(A)
    reps = as_shape(reps)
    d = max(len(reps), a.ndim)
    reps = (1,) * (d - len(reps)) + reps
    shape = (1,) * (d - a.ndim) + a.shape
    if all(r == 1 for r in reps):
        return reshape(a, shape)
    spread = reshape(a, tuple(x for n in shape for x in (1, n)))
    big = broadcast_to(spread, tuple(x for r, n in zip(reps, shape) for x in (r, n)))
    return reshape(big, tuple(r * n for r, n in zip(reps, shape)))


def repeat(a: Any, repeats: Any, axis: Any = None) -> Array:
    """Each element repeated ``repeats`` times (an int, or one count per element)."""
    from funcgrad.numpy._indexing import take  # late: _indexing imports this module
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _one(axis, a.ndim)
    counts = np.asarray(repeats.concrete().to_numpy() if isinstance(repeats, Array)
                        else repeats)
    if counts.size == 1:
        r = int(counts.reshape(-1)[0])
        if r < 0:
            raise ValueError(f"repeat: negative repeat count {r}")
        wide = broadcast_to(expand_dims(a, axis + 1),
                            a.shape[:axis + 1] + (r,) + a.shape[axis + 1:])
        return reshape(wide, a.shape[:axis] + (a.shape[axis] * r,) + a.shape[axis + 1:])
    return take(a, np.repeat(np.arange(a.shape[axis]), counts), axis)


def flip(m: Any, axis: Any = None) -> Array:
    """``m`` with the order of elements reversed along ``axis`` (all axes by default)."""
    m = asarray(m)
    axes = normalize_axis(axis, m.ndim)
    if not axes:
        return m
    return _getitem(m, NO_INDEX, index=Index(
        Slice(None, None, -1 if i in axes else None) for i in range(m.ndim)))


def fliplr(m: Any) -> Array:
    """Reverse the columns (axis 1) of an array of at least 2 dimensions."""
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError("fliplr: input must be at least 2-d")
    return flip(m, 1)


def flipud(m: Any) -> Array:
    """Reverse the rows (axis 0) of an array of at least 1 dimension."""
    m = asarray(m)
    if m.ndim < 1:
        raise ValueError("flipud: input must be at least 1-d")
    return flip(m, 0)


def rot90(m: Any, k: int = 1, axes: Sequence = (0, 1)) -> Array:
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``."""
    m = asarray(m)
    i, j = normalize_axis_tuple(tuple(axes), m.ndim, "axes")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, i), j)
    return flip(swapaxes(m, i, j), j) if k == 3 else swapaxes(flip(m, j), i, j)


def roll(a: Any, shift: Any, axis: Any = None) -> Array:
    """Elements shifted cyclically by ``shift`` along ``axis`` (of the flattened array by
    default)."""
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    pairs = np.broadcast(np.asarray(shift), np.asarray(axis))
    if pairs.ndim > 1:
        raise ValueError("roll: 'shift' and 'axis' should be scalars or 1D sequences")
    total: dict = {}
    for s, ax in pairs:
        ax = _one(ax, a.ndim)
        total[ax] = total.get(ax, 0) + operator.index(s)
    for ax, s in total.items():
        n = a.shape[ax]
        s = s % n if n else 0
        if s:
            a = concatenate(_slices(a, ax, [n - s, n]) + _slices(a, ax, [0, n - s]), ax)
    return a


_PAD_MODES = ("constant", "empty", "edge", "reflect", "symmetric", "wrap")


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Array:
    """``array`` padded: mode 'constant' (``constant_values``), 'edge', 'reflect',
    'symmetric' or 'wrap' (with numpy's ``reflect_type='even'``)."""
    from funcgrad.numpy._indexing import take  # late: _indexing imports this module
    a = asarray(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (a.ndim, 2))
    if (widths < 0).any():
        raise ValueError(f"pad: negative pad widths {pad_width!r}; widths must be >= 0")
    widths = tuple((int(b), int(e)) for b, e in widths)
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"pad: mode {mode!r} is not supported; use one of "
                                  f"{', '.join(_PAD_MODES)}")
    if mode in ("constant", "empty"):
        value = kwargs.pop("constant_values", 0)
        value = np.asarray(value.tolist() if isinstance(value, Array) else value).tolist()
        value = tuple(map(tuple, np.broadcast_to(value, (a.ndim, 2)).tolist())) \
            if np.ndim(value) else value
        _no_more(kwargs, mode)
        if not any(b or e for b, e in widths):
            return a
        return P.pad(a, pad_width=widths, constant_values=value)
    if kwargs.pop("reflect_type", "even") != "even":
        raise NotImplementedError("pad: only reflect_type='even' is supported")
    _no_more(kwargs, mode)
    for axis, (b, e) in enumerate(widths):
        if b or e:
            a = take(a, np.pad(np.arange(a.shape[axis]), (b, e), mode=mode), axis)
    return a


def _no_more(kwargs: dict, mode: str) -> None:
    if kwargs:
        raise TypeError(f"pad: unexpected keyword argument(s) {sorted(kwargs)} for "
                        f"mode {mode!r}")
