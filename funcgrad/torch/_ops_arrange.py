"""The op table, part 5: arranging tensors: grids and products of tensors (meshgrid,
cartesian_prod, combinations, kron, block_diag, cross, diff), rank padding (atleast_*d),
stacking and splitting by axis name (column_stack, dstack, hsplit, tensor_split...),
rotation and flips, repetition, diagonal embedding, broadcasting helpers, vander and the
triangle index factories.

Each is a composition of the facade's own ops (so views stay views: a split gives
``SliceBackward0`` views, meshgrid ``ExpandBackward0`` views) or of funcgrad.numpy
functions, under PyTorch's node names.
"""
from __future__ import annotations

import builtins
import itertools
import warnings
from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._dispatch import apply
from funcgrad.torch._ops_basic import FUNCTIONS, METHODS, Spec, cast, op, operand, result_type
from funcgrad.torch._ops_reduce import _axes
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._factories import empty
from funcgrad.torch._ops_basic import _size_mismatch
from funcgrad.torch._factories import tensor

__all__ = ["meshgrid", "cartesian_prod", "combinations", "block_diag", "atleast_1d",
           "atleast_2d", "atleast_3d", "tensor_split", "broadcast_tensors",
           "broadcast_shapes"]


def _dim(dim: int, ndim: int) -> int:
    axes = _axes(dim, ndim)
    return axes[0] if axes else 0


def _tensors(args: tuple) -> list:
    """``f(a, b)`` and ``f([a, b])`` alike."""
    return list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else \
        list(args)


# -- grids and products ---------------------------------------------------------------

def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    """Coordinate grids of 0-d/1-d tensors: views expanding each along its own axis."""
    tensors = _tensors(tensors)
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass "
                      "the indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("xy", "ij"):
        raise RuntimeError('torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f"received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got a tensor of {t.ndim} dimensions")
    if len({t.dtype for t in tensors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    order = [1, 0, *range(2, len(tensors))] if swap else list(range(len(tensors)))
    shape = [tensors[i].numel() for i in order]
    grids = []
    for k, t in enumerate(tensors):
        axis = order.index(k)
        lined = [1] * len(tensors)
        lined[axis] = -1
        grids.append(t.reshape(*lined).expand(*shape))
    return tuple(grids)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element of each 1-D tensor, one per row."""
    tensors = _tensors(tensors)
    for k, t in enumerate(tensors):
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return FUNCTIONS["stack"]([g.flatten() for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of a 1-D tensor's elements, one per row
    (itertools.combinations' order)."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    columns = [FUNCTIONS["index_select"](input, 0, _index(rows[:, k], input))
               for k in range(r)]
    return FUNCTIONS["stack"](columns, 1)


def _index(raw: np.ndarray, like: Tensor) -> Tensor:
    return tensor(raw, dtype=D.int64, device=like.device)


@op("kron")
def _kron(input: Tensor, other: Tensor) -> Spec:
    dt = result_type(input, other).np
    return Spec("UnsafeViewBackward0", lambda a, b: fnp.kron(cast(a, dt), cast(b, dt)),
                [input, other])


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-d, 1-d as one row, 2-d) along the diagonal of a zero matrix."""
    tensors = [operand(t) for t in tensors]
    for k, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {k} has {t.ndim} dimensions")
    if not tensors:
        return FUNCTIONS["empty"](1, 0)
    dt = result_type(*tensors).np
    shapes = [(1, 1) if t.ndim == 0 else (1, t.shape[0]) if t.ndim == 1 else tuple(t.shape)
              for t in tensors]
    width = builtins.sum(s[1] for s in shapes)

    def f(*xs: Any) -> Any:
        rows, left = [], 0
        for x, (h, w) in zip(xs, shapes):
            block = fnp.reshape(cast(x, dt), (h, w))
            rows.append(fnp.concatenate([fnp.zeros((h, left), dt), block,
                                         fnp.zeros((h, width - left - w), dt)], axis=1))
            left += w
        return fnp.concatenate(rows, axis=0)
    return apply("BlockDiagBackward0", f, tensors)


def _cross_dim(input: Tensor, other: Tensor, dim: int | None) -> int:
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if dim is None:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use "
                      "torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning,
                      stacklevel=3)
        dim = next((d for d, n in enumerate(shape) if n == 3), -1)
    a, b = input.shape[dim], other.shape[dim]
    if a != 3 or b != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a} and {b}")
    return dim


@op("cross")
def _cross(input: Tensor, other: Tensor, dim: int | None = None) -> Spec:
    """The cross product of 3-vectors along ``dim`` (broadcasting)."""
    axis = _cross_dim(input, other, dim)
    dt = result_type(input, other).np
    return Spec("LinalgCrossBackward0", lambda a, b: fnp.cross(
        cast(a, dt), cast(b, dt), axis=axis), [input, other])


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """``torch.linalg.cross``: `cross` with ``dim=-1`` by default (keyword-only)."""
    return FUNCTIONS["cross"](input, other, dim)


@op("diff")
def _diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
          append: Tensor | None = None) -> Spec:
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` joined
    first); for bools, logical xor."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    axis = _dim(dim, input.ndim)
    ends = [e for e in (prepend, append) if e is not None]
    for e in ends:
        if e.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as "
                               "input")
    at_front = prepend is not None

    def f(x: Any, *joined: Any) -> Any:
        parts = ([joined[0]] if at_front else []) + [x] + (
            [joined[-1]] if append is not None else [])
        x = fnp.concatenate(parts, axis=axis) if len(parts) > 1 else x
        for _ in range(n):
            head = fnp.take(x, np.arange(1, x.shape[axis]), axis=axis)
            tail = fnp.take(x, np.arange(x.shape[axis] - 1), axis=axis)
            x = fnp.logical_xor(head, tail) if x.dtype == np.bool_ else \
                fnp.subtract(head, tail)
        return x
    return Spec("SubBackward0", f, [input, *ends])


# -- rank padding, stacking and splitting -------------------------------------------------

def _at_least(rank: int) -> Any:
    def pad(t: Tensor) -> Tensor:
        if t.ndim >= rank:
            return t
        if t.ndim == 0:
            return t.reshape(*(1,) * rank)
        if rank == 3 and t.ndim == 1:
            return t.unsqueeze(0).unsqueeze(-1)
        return t.unsqueeze(0) if rank == 2 else t.unsqueeze(-1)

    def at_least(*tensors: Any) -> Any:
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return pad(tensors[0])
        return tuple(pad(t) for t in _tensors(tensors))
    at_least.__name__ = f"atleast_{rank}d"
    at_least.__doc__ = (f"The tensor(s) with at least {rank} dimensions (a tensor that "
                        "has them is returned as it is).")
    return at_least


atleast_1d, atleast_2d, atleast_3d = _at_least(1), _at_least(2), _at_least(3)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """0-d and 1-d tensors as columns, then joined along dim 1."""
    cols = [t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in tensors]
    return FUNCTIONS["hstack"](cols)


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    return FUNCTIONS["cat"](list(atleast_3d(*tensors)), 2)


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple:
    """Views of ``input`` split along ``dim``: into ``n`` near-equal parts (the first
    ``size % n`` one longer), or at the given indices."""
    axis = _dim(dim, input.ndim)
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got "
                           "a tensor with 0 dims")
    size = input.shape[axis]
    split = indices_or_sections
    if isinstance(split, Tensor):
        if split.ndim > 1 or split.dtype is not D.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a "
                               f"tensor with {split.ndim} dims")
        split = split.item() if split.ndim == 0 else split.tolist()
    if isinstance(split, (int, np.integer)):
        if split <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {split}")
        small, extra = divmod(size, int(split))
        lengths = [small + (k < extra) for k in range(int(split))]
        bounds = list(itertools.accumulate([0] + lengths))
    else:
        bounds = [0] + [builtins.min(builtins.max(int(i), 0), size) for i in split] + [size]
    narrow = FUNCTIONS["narrow"]
    return tuple(narrow(input, axis, a, builtins.max(b - a, 0))
                 for a, b in zip(bounds[:-1], bounds[1:]))


def _named_split(name: str, axis: int, rank: int) -> Any:
    def named_split(input: Tensor, indices_or_sections: Any) -> tuple:
        if input.ndim < rank:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {rank} "
                               f"dimension, but got a tensor with {input.ndim} dimensions!")
        d = 0 if name == "hsplit" and input.ndim == 1 else axis
        if isinstance(indices_or_sections, int):
            n = input.shape[d]
            if indices_or_sections == 0 or n % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, "
                                   f"but the size of the dimension {n} is not divisible by "
                                   f"the split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    named_split.__name__ = name
    named_split.__doc__ = f"``tensor_split`` along dimension {axis} (numpy's {name})."
    return named_split


hsplit, vsplit, dsplit = (_named_split("hsplit", 1, 1), _named_split("vsplit", 0, 2),
                          _named_split("dsplit", 2, 3))


# -- rotation, flips, repetition, diagonals ----------------------------------------------

@op("rot90")
def _rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Spec:
    """A rotation by 90 degrees ``k`` times in the plane ``dims`` (from the first axis
    toward the second)."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    a, b = _dim(dims[0], input.ndim), _dim(dims[1], input.ndim)
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {a} and "
                           f"dim1 = {b}")
    return Spec("Rot90Backward0", lambda x: fnp.rot90(x, k, axes=(a, b)), [input])


def fliplr(input: Tensor) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return FUNCTIONS["flip"](input, (1,))


def flipud(input: Tensor) -> Tensor:
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return FUNCTIONS["flip"](input, (0,))


def ravel(input: Tensor) -> Tensor:
    return input.reshape(-1)


def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Each element (each slice along ``dim``; of the flattened input without ``dim``)
    repeated ``repeats`` times; ``repeat_interleave(repeats)`` alone gives the indices
    ``0, 0, 1, ...`` repeated by the 1-D tensor ``repeats``."""
    if repeats is None:  # torch.repeat_interleave(repeats_tensor)
        counts = input.detach().numpy(force=True)
        if input.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        return _index(np.repeat(np.arange(counts.size), counts.reshape(-1)), input)
    x = input.reshape(-1) if dim is None else input
    axis = 0 if dim is None else _dim(dim, input.ndim)
    if isinstance(repeats, Tensor):
        raw = repeats.detach().numpy(force=True).reshape(-1)
        if raw.size != 1 and raw.size != (x.shape[axis] if x.ndim else 1):
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {raw.size} and input.size({axis}) = "
                               f"{x.shape[axis]}")
        node, reps = "IndexSelectBackward0", raw
    else:
        node, reps = "ViewBackward0", np.asarray([int(repeats)])
    if reps.size and reps.min() < 0:
        raise RuntimeError("Repeats must be non-negative" if node == "ViewBackward0" else
                           "repeats can not be negative")
    if output_size is not None and output_size != int(np.broadcast_to(
            reps, (x.shape[axis] if x.ndim else 1,)).sum()):
        raise RuntimeError("allocated size does not match required size")
    r = reps if reps.size != 1 else int(reps[0])
    if x.ndim == 0:
        x = x.reshape(1)
    return apply(node, lambda a: fnp.repeat(a, r, axis=axis), [x])


@op("diag_embed")
def _diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Spec:
    """The last dimension of ``input`` as diagonals (at ``offset``) of new matrices in
    the dimensions ``dim1``, ``dim2`` of the result."""
    n = input.ndim + 1
    a, b = _dim(dim1, n), _dim(dim2, n)
    if a == b:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    length = input.shape[-1] if input.ndim else 1
    m = length + abs(offset)
    k = np.arange(length)
    rows, cols = (k, k + offset) if offset >= 0 else (k - offset, k)

    def f(x: Any) -> Any:
        x = fnp.reshape(x, (1,)) if x.ndim == 0 else x
        z = fnp.zeros(x.shape[:-1] + (m, m), x.dtype)
        out = z.at[..., rows, cols].set(x)
        return fnp.moveaxis(out, (-2, -1), (a, b))
    return Spec("DiagEmbedBackward0", f, [input])


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The flattened input as the diagonal (at ``offset``) of a square matrix."""
    return FUNCTIONS["diag_embed"](input.reshape(-1), offset)


# -- broadcasting, Vandermonde, triangle indices -----------------------------------------

def broadcast_shapes(*shapes: Any) -> D.Size:
    """The shape tensors of ``shapes`` broadcast to (PyTorch's error when they do not)."""
    sizes = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    result: list = []
    for k, shape in enumerate(sizes):
        if len(shape) > len(result):
            result = [1] * (len(shape) - len(result)) + result
        for d in range(-1, -len(shape) - 1, -1):
            n = shape[d]
            if n < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                                   f"{list(shape)}")
            if result[d] == 1 or n == result[d]:
                result[d] = n
            elif n != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {n} at "
                                   f"{d}! Mismatching argument at index {k} had {shape}; but "
                                   f"expected shape should be broadcastable to {result}")
    return D.Size(result)


def broadcast_tensors(*tensors: Tensor) -> tuple:
    """The tensors expanded to their common shape (a tensor of that shape as it is)."""
    tensors = _tensors(tensors)
    try:
        shape = tuple(np.broadcast_shapes(*[tuple(t.shape) for t in tensors]))
    except ValueError:
        raise _size_mismatch(tensors) from None
    return tuple(t if tuple(t.shape) == shape else t.expand(*shape) for t in tensors)


@op("vander", method=False)
def _vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Spec:
    """The Vandermonde matrix of the 1-D ``x``: its powers 0..N-1 (decreasing unless
    ``increasing``) as columns."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = (x.dtype if x.dtype.is_floating_point or x.dtype.is_complex else D.int64).np

    def f(a: Any) -> Any:
        a = cast(a, dt)
        cols = [fnp.ones_like(a)] + [a] * builtins.max(n - 1, 0)
        powers = fnp.cumprod(fnp.stack(cols[:n], axis=1), axis=1) if n else \
            fnp.zeros((a.shape[0], 0), dt)
        return powers if increasing else fnp.flip(powers, axis=1)
    return Spec("CopySlices" if increasing else "FlipBackward0", f, [x])


def _triangle_indices(upper: bool) -> Any:
    def indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                device: Any = None, layout: Any = None) -> Tensor:
        if row < 0 or col < 0:
            raise RuntimeError(f"row must be non-negative, got{row}" if row < 0 else
                               f"col must be non-negative, got{col}")
        r, c = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
        return tensor(np.stack([r, c]).reshape(2, -1), dtype=D.int64 if dtype is None
                      else dtype, device=device)
    indices.__name__ = "triu_indices" if upper else "tril_indices"
    indices.__doc__ = (f"The (row, column) indices of the {'upper' if upper else 'lower'} "
                       "triangle of a row x col matrix, as a 2 x N tensor.")
    return indices


tril_indices, triu_indices = _triangle_indices(False), _triangle_indices(True)

for _f in (meshgrid, cartesian_prod, combinations, block_diag, atleast_1d, atleast_2d,
           atleast_3d, column_stack, dstack, tensor_split, hsplit, vsplit, dsplit, fliplr,
           flipud, ravel, repeat_interleave, diagflat, broadcast_shapes, broadcast_tensors,
           tril_indices, triu_indices):
    FUNCTIONS[_f.__name__] = _f
FUNCTIONS["row_stack"] = FUNCTIONS["vstack"]
def _repeat_interleave_method(self: Tensor, repeats: Any, dim: int | None = None, *,
                              output_size: int | None = None) -> Tensor:
    return repeat_interleave(self, repeats, dim, output_size=output_size)


METHODS["repeat_interleave"] = _repeat_interleave_method
for _f in (tensor_split, hsplit, vsplit, dsplit, fliplr, flipud, ravel, diagflat):
    METHODS[_f.__name__] = _f
