"""The op table, part 3: shapes, joining and indexing (matrix products: part 3b,
`_ops_matmul`).

View ops (``view``, ``transpose``, slicing, ``split``...) return tensors sharing their
input's memory (funcgrad's view primitives keep it; `funcgrad.torch._dispatch.output` makes
them views). ``x[idx] = v`` is an in-place op like the others: a functional update
(``.at[].set``) written into the tensor's memory, its ``grad_fn`` ``CopySlices``.

Node names follow the aten op PyTorch dispatches to, e.g. ``x[0]`` is ``SelectBackward0``,
``x[1:]`` ``SliceBackward0``, ``x[idx_tensor]`` ``IndexBackward0``.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch._runtime import dtypes as D, storage as _storage
from funcgrad.numpy._indexing import parse_index
from funcgrad.primitives import conv as conv_prims, elementwise as elementwise_prims, \
    indexing as index_prims, shape as shape_prims
from funcgrad.primitives.indexing import NO_INDEX
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._dispatch import PrimCall, apply, const_like
from funcgrad.torch._runtime.layouts import dims_order
from funcgrad.torch._views import as_view
from funcgrad.torch._ops_basic import FUNCTIONS, METHODS, Spec, cast, op, operand, result_type
from funcgrad.torch._ops_reduce import _axes
from funcgrad.torch._tensor import Tensor, _size_args

__all__ = ["cat", "stack", "split", "chunk", "unbind"]


def _dim(dim: int, ndim: int) -> int:
    axes = _axes(dim, ndim)
    return axes[0] if axes else 0


def _resolve(shape: tuple, numel: int) -> tuple:
    """``shape`` (Python ints) with its -1 inferred from ``numel``; PyTorch's errors where
    it does not fit. (``math.prod``: exact, and numpy's prod costs ~1.5us a call.)"""
    if -1 not in shape:
        if math.prod(shape) != numel:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return shape
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    rest = math.prod([s for s in shape if s != -1])
    if rest == 0 or numel % rest:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    shape[shape.index(-1)] = numel // rest
    if math.prod(shape) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


@op("view", function=False)
def _view(input: Tensor, *shape: Any) -> Spec:
    """``input`` in another shape, sharing its memory (PyTorch's error where the strides
    cannot express the shape without a copy: `reshape` copies there)."""
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        raise NotImplementedError("view(dtype) reinterprets memory, which funcgrad.torch "
                                  "does not support; use .to(dtype)")
    target = _resolve(_size_args(shape), input.numel())
    if not _storage.viewable(input._a, target):
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.")
    return _reshape_to(input, target)


@op("reshape")
def _reshape(input: Tensor, *shape: Any) -> Spec:
    """``input`` in another shape: a view where its strides allow, else a copy."""
    return _reshape_to(input, _resolve(_size_args(shape), input.numel()))


def _reshape_to(input: Tensor, target: tuple, node: str = "ViewBackward0") -> Spec:
    """The spec of `_reshape` to a resolved ``target`` shape."""
    return _to_shape(node, shape_prims.reshape, input, target)


def _to_shape(node: str, prim: Any, input: Tensor, target: tuple) -> Spec:
    """The spec of ``prim`` (reshape, broadcast_to) to shape ``target``: one primitive call
    (recorded without a trace), or the identity where ``input`` has that shape already."""
    if target == input._a.shape:
        return Spec(node, lambda x: x, [input])
    return Spec(node, PrimCall(prim, {"shape": target}), [input])


METHODS["view_as"] = lambda self, other: _view_fn(self, *other.shape)
METHODS["reshape_as"] = lambda self, other: METHODS["reshape"](self, *other.shape)
_view_fn = METHODS["view"]


@op("flatten")
def _flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Spec:
    if input.ndim == 0:
        return _view(input, 1)
    s, e = _dim(start_dim, input.ndim), _dim(end_dim, input.ndim)
    shape = input.shape
    target = tuple(shape[:s]) + (math.prod(shape[s:e + 1]),) + tuple(shape[e + 1:])
    return _reshape_to(input, target)


@op("unflatten")
def _unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Spec:
    d = _dim(dim, input.ndim)
    shape = tuple(input.shape)
    sizes = _resolve(tuple(sizes), shape[d])
    return _view(input, *(shape[:d] + sizes + shape[d + 1:]))


@op("squeeze")
def _squeeze(input: Tensor, dim: Any = None) -> Spec:
    shape = tuple(input.shape)
    if dim is None:
        node, axes = "SqueezeBackward0", tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        node = "SqueezeBackward1" if isinstance(dim, int) else "SqueezeBackward2"
        axes = tuple(a for a in _axes(dim, input.ndim) if shape[a] == 1)
    target = tuple(s for i, s in enumerate(shape) if i not in axes)
    return Spec(node, lambda x: fnp.reshape(x, target), [input])


@op("unsqueeze")
def _unsqueeze(input: Tensor, dim: int) -> Spec:
    n = input.ndim + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                         f"{n - 1}], but got {dim})")
    d = dim % n
    target = tuple(input.shape[:d]) + (1,) + tuple(input.shape[d:])
    return _reshape_to(input, target, "UnsqueezeBackward0")


@functools.lru_cache(maxsize=256)
def _perm(axes: tuple) -> Any:
    """The function permuting an array's axes by ``axes`` (normalized: 0 <= axis < ndim);
    made once per permutation."""
    if axes == tuple(range(len(axes))):
        return lambda x: x  # nothing to permute: the node passes gradients through
    return PrimCall(shape_prims.transpose, {"axes": axes})


@op("t")
def _t(input: Tensor) -> Spec:
    ndim = input._a.ndim
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{ndim}D")
    return Spec("TBackward0", _perm((1, 0) if ndim == 2 else (0,) * ndim), [input])


@op("transpose", "swapaxes", "swapdims")
def _transpose(input: Tensor, dim0: int, dim1: int) -> Spec:
    axes = list(range(input.ndim))
    if input.ndim:
        a, b = _dim(dim0, input.ndim), _dim(dim1, input.ndim)
        axes[a], axes[b] = axes[b], axes[a]
    return Spec("TransposeBackward0", _perm(tuple(axes)), [input])


@op("permute")
def _permute(input: Tensor, *dims: Any) -> Spec:
    dims = _size_args(dims)
    if sorted(d % max(input.ndim, 1) for d in dims) != list(range(input.ndim)):
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input "
                           "does not match the length of the desired ordering of dimensions "
                           f"i.e. input.dim() = {input.ndim} is not equal to len(dims) = "
                           f"{len(dims)}")
    return Spec("PermuteBackward0", _perm(tuple(d % max(input.ndim, 1) for d in dims)),
                [input])


@op("movedim", "moveaxis")
def _movedim(input: Tensor, source: Any, destination: Any) -> Spec:
    n = max(input.ndim, 1)
    src = [s % n for s in ([source] if isinstance(source, int) else source)]
    dst = [d % n for d in ([destination] if isinstance(destination, int) else destination)]
    order = [i for i in range(input.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return Spec("PermuteBackward0", _perm(tuple(order)), [input])


Tensor.T = property(lambda self: FUNCTIONS["permute"](self, *range(self.ndim)[::-1]))
Tensor.mT = property(lambda self: FUNCTIONS["transpose"](self, -2, -1))
Tensor.H = property(lambda self: FUNCTIONS["permute"](self, *range(self.ndim)[::-1]).conj())


@op("expand", function=False)
def _expand(input: Tensor, *sizes: Any) -> Spec:
    sizes = _size_args(sizes)
    lead = len(sizes) - input.ndim
    target = tuple(s if s != -1 else input.shape[i - lead] for i, s in enumerate(sizes))
    for i, n in reversed(list(enumerate(input.shape))):  # PyTorch reports the last one
        if n != 1 and n != target[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({target[lead + i]}) must "
                               f"match the existing size ({n}) at non-singleton dimension "
                               f"{lead + i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(input.shape)}")
    return _to_shape("ExpandBackward0", shape_prims.broadcast_to, input, target)


METHODS["expand_as"] = lambda self, other: METHODS["expand"](self, *other.shape)
FUNCTIONS["broadcast_to"] = METHODS["broadcast_to"] = lambda self, size: METHODS["expand"](
    self, *size)


@op("repeat", function=False)
def _repeat(input: Tensor, *sizes: Any) -> Spec:
    reps = _size_args(sizes)
    return Spec("RepeatBackward0", lambda x: fnp.tile(x, reps), [input])


@op("tile")
def _tile(input: Tensor, dims: Sequence[int]) -> Spec:
    reps = tuple(dims)
    reps = (1,) * (input.ndim - len(reps)) + reps
    return _repeat(input, *reps)


@op("flip")
def _flip(input: Tensor, dims: Any) -> Spec:
    axes = _axes(dims, input.ndim)
    return Spec("FlipBackward0", lambda x: fnp.flip(x, axis=axes), [input])


@op("roll")
def _roll(input: Tensor, shifts: Any, dims: Any = None) -> Spec:
    return Spec("RollBackward0", lambda x: fnp.roll(x, shifts, axis=dims), [input])


@op("clone")
def _clone(input: Tensor, *, memory_format: Any = None) -> Spec:
    """A copy in new memory, with the same strides (PyTorch's ``preserve_format``)."""
    return Spec("CloneBackward0", PrimCall(elementwise_prims.copy, {"order": "K"}), [input])


def contiguous(input: Tensor, memory_format: Any = None) -> Tensor:
    """``input`` itself if its memory is in ``memory_format``'s order (row-major by
    default), else a copy in that order (channels last: the NHWC strides of an NCHW
    tensor, as PyTorch's)."""
    order = dims_order(memory_format, input.ndim)
    if input.is_contiguous(memory_format):
        return input
    if order is None:
        return apply("CloneBackward0", PrimCall(elementwise_prims.copy, {"order": "C"}),
                     [input])
    back = tuple(order.index(d) for d in range(input.ndim))
    return apply("CloneBackward0", lambda a: fnp.transpose(elementwise_prims.copy.bind(
        fnp.transpose(a, order), order="C"), back), [input])


METHODS["contiguous"] = contiguous


@op("tril", inplace=True)
def _tril(input: Tensor, diagonal: int = 0) -> Spec:
    return Spec("TrilBackward0", lambda x: fnp.tril(x, k=diagonal), [input])


@op("triu", inplace=True)
def _triu(input: Tensor, diagonal: int = 0) -> Spec:
    return Spec("TriuBackward0", lambda x: fnp.triu(x, k=diagonal), [input])


@op("diagonal")
def _diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Spec:
    return Spec("DiagonalBackward0", lambda x: fnp.diagonal(x, offset, dim1, dim2), [input])


@op("diag")
def _diag(input: Tensor, diagonal: int = 0) -> Spec:
    """The diagonal of a matrix, or the matrix of a vector (PyTorch's nodes: a copy of
    ``diagonal``, ``diag_embed``)."""
    node = "DiagonalBackward0_copy" if input.ndim == 2 else "DiagEmbedBackward0"
    return Spec(node, lambda x: fnp.diag(x, k=diagonal), [input])


@op("trace")
def _trace(input: Tensor) -> Spec:
    return Spec("TraceBackward0", lambda x: fnp.trace(x), [input])


@op("unfold", function=False)
def _unfold(input: Tensor, dimension: int, size: int, step: int) -> Spec:
    """The slices of length ``size`` every ``step`` along ``dimension``, as a new last
    dimension: a view (windows of funcgrad's `sliding_windows`, sharing the memory)."""
    d = _dim(dimension, max(input.ndim, 1))
    length = input.shape[d] if input.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size "
                           f"is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    n = max(input.ndim, 1)
    window = tuple(size if k == d else 1 for k in range(n))
    strides = tuple(step if k == d else 1 for k in range(n))
    shape = tuple(input.shape) if input.ndim else (1,)

    def f(x: Any) -> Any:
        w = conv_prims.sliding_windows(
            fnp.reshape(x, shape), window_dimensions=window, window_strides=strides,
            padding=((0, 0),) * n, base_dilation=(1,) * n, window_dilation=(1,) * n,
            fill=0)
        out = fnp.reshape(w, w.shape[:n] + (size,))
        return fnp.reshape(out, (size,)) if not input.ndim else out
    return Spec("UnfoldBackward0", f, [input])


def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> Tensor:
    """The elements of ``input``'s storage at ``storage_offset + sum(i_k * stride_k)``, as a
    view of it (AsStridedBackward0: the gather of those elements, for the gradient)."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    base = input._base if input._base is not None else input
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    item = input.element_size()
    stored = base.untyped_storage().nbytes() // item if base._raw() is not None else \
        base.numel()
    need = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else 0
    if need > stored:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size "
                           f"of {need * item} are out of bounds for storage of size "
                           f"{stored * item}")
    grid = np.full(size, offset - base.storage_offset(), dtype=np.intp)
    for axis, (n, s) in enumerate(zip(size, stride)):
        grid = grid + (np.arange(n) * s).reshape((n,) + (1,) * (len(size) - axis - 1))
    if not base.is_contiguous() or (grid.size and (grid.min() < 0 or
                                                   grid.max() >= base.numel())):
        raise NotImplementedError("as_strided: funcgrad.torch reads the storage through the "
                                  "tensor's base, which must be contiguous and hold every "
                                  "element asked for; make it .contiguous() first")
    where = const_like(grid, base)
    fn = lambda b: fnp.reshape(b, (-1,))[where]  # noqa: E731  (the view, as a gather)
    result = apply("AsStridedBackward0", fn, [base])
    if base._raw() is None:
        return result  # a traced base: the gathered values are the view
    return as_view(result, base, fn, _storage.strided(base._a, grid.flat[0] if grid.size
                                                      else 0, size, stride))


METHODS["as_strided"] = FUNCTIONS["as_strided"] = as_strided


@op("narrow")
def _narrow(input: Tensor, dim: int, start: int, length: int) -> Spec:
    d = _dim(dim, input.ndim)
    idx = (slice(None),) * d + (slice(start, start + length),)
    return Spec("SliceBackward0", lambda x: x[idx], [input])


@op("select")
def _select(input: Tensor, dim: int, index: Any) -> Spec:
    """``input`` indexed by ``index`` along ``dim`` (that dimension removed)."""
    if isinstance(index, bool) or not isinstance(index, (int, np.integer, Tensor)):
        raise TypeError("select(): argument 'index' (position 3) must be int, not "
                        f"{type(index).__name__}")
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, input.ndim)
    index, size = int(index), input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    idx = (slice(None),) * d + (index % size,)
    return Spec("SelectBackward0", basic_index_call(idx, input), [input])


_BASIC_PARTS = frozenset((int, slice, type(None), type(Ellipsis)))


def basic_index_call(data: Any, x: Tensor) -> Callable:
    """``x[data]`` as one getitem primitive call (recorded without a trace) for a basic
    index (ints, slices, None, ...), the commonest; any other as a function (traced). Both
    raise numpy's IndexError out of bounds (PyTorch raises; funcgrad.numpy would clamp)."""
    parts = data if type(data) is tuple else (data,)
    if parts and all(type(p) in _BASIC_PARTS for p in parts):
        index, stacked = parse_index(data, x._a)
        if stacked is NO_INDEX:
            return PrimCall(index_prims.getitem, {"index": index}, (NO_INDEX,))
    return lambda a: a.at[data].get(mode="raise")



# -- joining and splitting ----------------------------------------------------------------

def _joinable(tensors: Sequence[Tensor]) -> tuple:
    tensors = [operand(t) for t in tensors]
    if not tensors:
        raise RuntimeError("expected a non-empty list of Tensors")
    return tensors, result_type(*tensors).np


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenate along ``dim`` (CatBackward0); 1-d empty tensors are skipped."""
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    tensors, dt = _joinable(tensors)
    ref = next((t for t in tensors if not (t.ndim == 1 and t.numel() == 0)), tensors[0])
    axis = _dim(dim, ref.ndim)
    kept = [t for t in tensors if not (t.ndim == 1 and t.numel() == 0) or t is ref]
    _check_joined(kept, ref, axis)
    if len(kept) > 1 and ref.ndim and all(t._a.dtype == dt for t in kept):
        # one primitive call (no cast), recorded without a trace
        return apply("CatBackward0", PrimCall(shape_prims.concatenate, {"axis": axis}), kept)
    return apply("CatBackward0", lambda *xs: fnp.concatenate([cast(x, dt) for x in xs],
                                                             axis=axis), kept)


def _check_joined(tensors: Sequence[Tensor], ref: Tensor, axis: int) -> None:
    """PyTorch's errors for tensors that cannot be concatenated along ``axis``."""
    for k, t in enumerate(tensors):
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got "
                               f"{ref.ndim} and {t.ndim}")
        for d, (n, m) in enumerate(zip(ref.shape, t.shape)):
            if d != axis and n != m:
                raise RuntimeError(f"Sizes of tensors must match except in dimension "
                                   f"{axis}. Expected size {n} but got size {m} for tensor "
                                   f"number {k} in the list.")


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Stack along a new ``dim`` (StackBackward0)."""
    tensors, dt = _joinable(tensors)
    n = tensors[0].ndim + 1
    axis = dim % n
    return apply("StackBackward0", lambda *xs: fnp.stack([cast(x, dt) for x in xs], axis=axis),
                 tensors)


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    """Pieces of size ``split_size`` (SplitBackward0) or of the given sizes
    (SplitWithSizesBackward0) along ``dim``."""
    axis = _dim(dim, tensor.ndim)
    n = tensor.shape[axis]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        sizes = [min(size, n - i) for i in range(0, n, size)] if size else [n]
        node = "SplitBackward0"
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {axis}), but got "
                               f"split_sizes={sizes}")
        node = "SplitWithSizesBackward0"
    bounds = np.cumsum([0] + sizes)

    def f(x: Any) -> tuple:
        pre = (slice(None),) * axis
        return tuple(x[pre + (slice(int(a), int(b)),)] for a, b in zip(bounds[:-1],
                                                                        bounds[1:]))
    return apply(node, f, [tensor], multi=True)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    n = input.shape[_dim(dim, input.ndim)]
    return split(input, max(1, -(-n // chunks)), dim)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    axis = _dim(dim, input.ndim)
    return apply("UnbindBackward0", lambda x: tuple(
        fnp.take(x, i, axis=axis) for i in range(x.shape[axis])), [input], multi=True)


for _f in (cat, stack, split, chunk, unbind):
    FUNCTIONS[_f.__name__] = autocast_op(_f.__name__)(_f)  # cat, stack: autocast promotes
for _f in (split, chunk, unbind):
    METHODS[_f.__name__] = _f
FUNCTIONS["concat"] = FUNCTIONS["concatenate"] = FUNCTIONS["cat"]


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    return cat(tensors, 0 if all(t.ndim == 1 for t in tensors) else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in tensors], 0)


FUNCTIONS["hstack"], FUNCTIONS["vstack"] = hstack, vstack


# -- gather, scatter, masks --------------------------------------------------------------

def _checked_index(fn: str, index: Tensor, size: int, axis: int) -> None:
    """An index tensor of gather/scatter: integers within ``size`` (PyTorch's errors)."""
    if index.dtype.np.kind not in "iu":
        raise RuntimeError(f"{fn}(): Expected dtype int32/int64 for index")
    if index.is_meta:  # no values to check
        return
    raw = index.detach().numpy(force=True)
    bad = raw[(raw < -size) | (raw >= size)] if raw.size else raw
    if bad.size:
        raise RuntimeError(f"index {int(bad.flat[0])} is out of bounds for dimension "
                           f"{axis} with size {size}")


@op("gather")
def _gather(input: Tensor, dim: int, index: Tensor) -> Spec:
    _checked_index("gather", index, input.shape[_dim(dim, input.ndim)], _dim(dim, input.ndim))
    axis, idx = _dim(dim, input.ndim), index._a
    return Spec("GatherBackward0", lambda x: fnp.take_along_axis(x, idx, axis=axis), [input])


@op("index_select")
def _index_select(input: Tensor, dim: int, index: Tensor) -> Spec:
    axis, idx = _dim(dim, input.ndim), index._a
    if input.ndim and not index.ndim:  # PyTorch reads a 0-d index as one entry: dim kept
        idx = idx.reshape(1)
    return Spec("IndexSelectBackward0", lambda x: fnp.take(x, idx, axis=axis), [input])


@op("masked_fill", inplace=True)
def _masked_fill(input: Tensor, mask: Tensor, value: Any) -> Spec:
    m = mask._a
    if isinstance(value, Tensor):
        return Spec("MaskedFillBackward1", lambda x, v: fnp.where(m, cast(v, x.dtype), x),
                    [input, value])
    return Spec("MaskedFillBackward0", lambda x: fnp.where(m, value, x), [input])


@op("masked_select")
def _masked_select(input: Tensor, mask: Tensor) -> Spec:
    shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(mask.shape)))
    m = const_like(np.broadcast_to(mask._host(), shape), input)
    return Spec("MaskedSelectBackward0", lambda x: fnp.broadcast_to(x, shape)[m], [input])


def _along_axis(index: Tensor, dim: int, like: Tensor) -> tuple:
    """Full index arrays addressing, along ``dim``, the positions ``index`` names."""
    raw = index._host()
    grids = list(np.indices(raw.shape, sparse=True))
    grids[_dim(dim, like.ndim)] = raw
    return tuple(const_like(g, like) for g in grids)


@op("scatter", inplace=True, broadcasts=False)
def _scatter(input: Tensor, dim: int, index: Tensor, src: Any) -> Spec:
    _checked_index("scatter", index, input.shape[_dim(dim, input.ndim)], _dim(dim, input.ndim))
    idx = _along_axis(index, dim, input)
    if isinstance(src, Tensor):
        return Spec("ScatterBackward0", lambda x, s: x.at[idx].set(s[tuple(
            slice(0, n) for n in index.shape)]), [input, src])
    return Spec("ScatterBackward1", lambda x: x.at[idx].set(src), [input])


@op("scatter_add", inplace=True, broadcasts=False)
def _scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Spec:
    _checked_index("scatter_add", index, input.shape[_dim(dim, input.ndim)],
                   _dim(dim, input.ndim))
    idx = _along_axis(index, dim, input)
    return Spec("ScatterAddBackward0", lambda x, s: x.at[idx].add(s[tuple(
        slice(0, n) for n in index.shape)]), [input, src])
