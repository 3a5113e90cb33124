"""The op table, part 3: shapes, joining, indexing, and matrix products.

View ops (``view``, ``transpose``, slicing...) return new tensors: the core's arrays are
immutable, so a "view" never aliases its base (writing into it in place does not change the
base). ``x[idx] = v`` on a tensor itself works: it is a functional update (``.at[].set``)
and the tensor's ``grad_fn`` becomes ``CopySlices``, as in PyTorch.

Node names follow the aten op PyTorch dispatches to, e.g. ``x[0]`` is ``SelectBackward0``,
``x[1:]`` ``SliceBackward0``, ``x[idx_tensor]`` ``IndexBackward0``, ``a @ b`` on matrices
``MmBackward0`` and ``nn.Linear`` ``AddmmBackward0``.
"""
from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch import _dtypes as D
from funcgrad.primitives import linalg as linalg_prims, shape as shape_prims
from funcgrad.torch._dispatch import PrimCall, apply, const_like, inplace
from funcgrad.torch._ops_basic import FUNCTIONS, METHODS, Spec, cast, op, operand, result_type
from funcgrad.torch._ops_reduce import _axes
from funcgrad.torch._tensor import Tensor, _size_args

__all__ = ["getitem", "setitem", "cat", "stack", "split", "chunk", "unbind", "matmul"]


def _dim(dim: int, ndim: int) -> int:
    axes = _axes(dim, ndim)
    return axes[0] if axes else 0


def _resolve(shape: tuple, numel: int) -> tuple:
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        rest = int(np.prod([s for s in shape if s != -1]))
        if rest == 0 or numel % rest:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // rest
    if int(np.prod(shape)) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


@op("view", function=False)
def _view(input: Tensor, *shape: Any) -> Spec:
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        raise NotImplementedError("view(dtype) reinterprets memory, which funcgrad's "
                                  "immutable arrays do not expose; use .to(dtype)")
    target = _resolve(_size_args(shape), input.numel())
    if target == tuple(input.shape):
        return Spec("ViewBackward0", lambda x: x, [input])
    return Spec("ViewBackward0", PrimCall(shape_prims.reshape, {"shape": target}), [input])


@op("reshape")
def _reshape(input: Tensor, *shape: Any) -> Spec:
    return _view(input, *shape)


METHODS["view_as"] = lambda self, other: _view_fn(self, *other.shape)
METHODS["reshape_as"] = METHODS["view_as"]
_view_fn = METHODS["view"]


@op("flatten")
def _flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Spec:
    if input.ndim == 0:
        return _view(input, 1)
    s, e = _dim(start_dim, input.ndim), _dim(end_dim, input.ndim)
    shape = input.shape
    target = tuple(shape[:s]) + (int(np.prod(shape[s:e + 1])),) + tuple(shape[e + 1:])
    return _view(input, *target)


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
    return Spec("UnsqueezeBackward0", lambda x: fnp.reshape(x, target), [input])


@functools.lru_cache(maxsize=256)
def _perm(axes: tuple) -> Any:
    """The function permuting an array's axes by ``axes`` (normalized: 0 <= axis < ndim);
    made once per permutation."""
    if axes == tuple(range(len(axes))):
        return lambda x: x  # nothing to permute: the node passes gradients through
    return PrimCall(shape_prims.transpose, {"axes": axes})


@op("t")
def _t(input: Tensor) -> Spec:
    ndim = input._st.a.ndim
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
    for i, n in enumerate(input.shape):
        if n != 1 and n != target[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({target[lead + i]}) must "
                               f"match the existing size ({n}) at non-singleton dimension "
                               f"{lead + i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(input.shape)}")
    return Spec("ExpandBackward0", lambda x: fnp.broadcast_to(x, target), [input])


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
    return Spec("CloneBackward0", lambda x: x, [input])


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


@op("narrow")
def _narrow(input: Tensor, dim: int, start: int, length: int) -> Spec:
    d = _dim(dim, input.ndim)
    idx = (slice(None),) * d + (slice(start, start + length),)
    return Spec("SliceBackward0", lambda x: x[idx], [input])


# -- joining and splitting ----------------------------------------------------------------

def _joinable(tensors: Sequence[Tensor]) -> tuple:
    tensors = [operand(t) for t in tensors]
    if not tensors:
        raise RuntimeError("expected a non-empty list of Tensors")
    return tensors, result_type(*tensors).np


def cat(tensors: Sequence[Tensor], dim: int = 0, *, out: Any = None) -> Tensor:
    """Concatenate along ``dim`` (CatBackward0); 1-d empty tensors are skipped."""
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    tensors, dt = _joinable(tensors)
    ref = next((t for t in tensors if not (t.ndim == 1 and t.numel() == 0)), tensors[0])
    axis = _dim(dim, ref.ndim)
    kept = [t for t in tensors if not (t.ndim == 1 and t.numel() == 0) or t is ref]
    _check_joined(kept, ref, axis)
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


def stack(tensors: Sequence[Tensor], dim: int = 0, *, out: Any = None) -> Tensor:
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
    FUNCTIONS[_f.__name__] = _f
for _f in (split, chunk, unbind):
    METHODS[_f.__name__] = _f
FUNCTIONS["concat"] = FUNCTIONS["concatenate"] = cat


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
    raw = index.detach().numpy(force=True)
    bad = raw[(raw < -size) | (raw >= size)] if raw.size else raw
    if bad.size:
        raise RuntimeError(f"index {int(bad.flat[0])} is out of bounds for dimension "
                           f"{axis} with size {size}")


@op("gather")
def _gather(input: Tensor, dim: int, index: Tensor) -> Spec:
    _checked_index("gather", index, input.shape[_dim(dim, input.ndim)], _dim(dim, input.ndim))
    axis, idx = _dim(dim, input.ndim), index._st.a
    return Spec("GatherBackward0", lambda x: fnp.take_along_axis(x, idx, axis=axis), [input])


@op("index_select")
def _index_select(input: Tensor, dim: int, index: Tensor) -> Spec:
    axis, idx = _dim(dim, input.ndim), index._st.a
    return Spec("IndexSelectBackward0", lambda x: fnp.take(x, idx, axis=axis), [input])


@op("masked_fill", inplace=True)
def _masked_fill(input: Tensor, mask: Tensor, value: Any) -> Spec:
    m = mask._st.a
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


# -- indexing -----------------------------------------------------------------------------

def _index_data(idx: Any) -> Any:
    if isinstance(idx, Tensor):
        return idx._st.a
    if isinstance(idx, tuple):
        return tuple(_index_data(i) for i in idx)
    if isinstance(idx, list) and any(isinstance(i, Tensor) for i in idx):
        return [_index_data(i) for i in idx]
    return idx


def _index_node(idx: Any) -> str:
    parts = idx if isinstance(idx, tuple) else (idx,)
    if any(isinstance(p, (Tensor, list, np.ndarray)) for p in parts):
        return "IndexBackward0"
    last = "AliasBackward0"
    for p in parts:
        if isinstance(p, (int, np.integer)):
            last = "SelectBackward0"
        elif isinstance(p, slice) and p != slice(None):
            last = "SliceBackward0"
        elif p is None:
            last = "UnsqueezeBackward0"
    return last


def getitem(self: Tensor, idx: Any) -> Tensor:
    """``x[idx]`` with basic and advanced (tensor, list, bool mask) indexing."""
    data = _index_data(idx)
    return apply(_index_node(idx), lambda x: x[data], [self])


def setitem(self: Tensor, idx: Any, value: Any) -> None:
    """``x[idx] = value``: a functional update rebinding ``x`` (grad_fn CopySlices, or
    IndexPutBackward0 for an advanced index, as PyTorch's index_put_)."""
    data = _index_data(idx)
    dtype = self._st.a.dtype
    node = "IndexPutBackward0" if _index_node(idx) == "IndexBackward0" else "CopySlices"
    if isinstance(value, Tensor):
        inplace(self, node, lambda x, v: x.at[data].set(cast(v, dtype)), [value])
    else:
        value = operand(value)
        inplace(self, node, lambda x: x.at[data].set(value))


Tensor.__getitem__ = getitem
Tensor.__setitem__ = setitem


def _iter(self: Tensor) -> Any:
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(unbind(self, 0))


Tensor.__iter__ = _iter


# -- matrix products ---------------------------------------------------------------------

def _matmul_node(a: int, b: int) -> str:
    """The node of the aten op PyTorch's matmul dispatches to for these ranks."""
    return {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (2, 2): "MmBackward0",
            (1, 2): "SqueezeBackward4"}.get((a, b), "UnsafeViewBackward0")


# the C++ names of dtypes in PyTorch's matmul messages
_C_TYPES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}


def _check_matmul_dtypes(name: str, input: Tensor, other: Tensor) -> None:
    """PyTorch's products do not promote: operands of different dtypes raise."""
    if input.dtype is other.dtype:
        return
    from funcgrad.torch._tensor import _type_word
    words = _type_word(input.dtype), _type_word(other.dtype)
    if name in ("dot", "inner") or (name == "matmul" and input.ndim == other.ndim == 1):
        msg = ("both inputs should have same dtype" if name == "inner" else
               f"dot : expected both vectors to have same dtype, but found {words[0]} and "
               f"{words[1]}")
    elif name == "mv" or (name == "matmul" and (input.ndim, other.ndim) == (2, 1)):
        msg = (f"addmv input tensors must have the same dtype, but got {words[1]}, "
               f"{words[0]}, and {words[1]}")
    elif name == "bmm" or (name == "matmul" and max(input.ndim, other.ndim) > 2):
        msg = f"expected scalar type {words[0]} but found {words[1]}"
    else:
        msg = (f"expected m1 and m2 to have the same dtype, but got: "
               f"{_C_TYPES[input.dtype.name]} != {_C_TYPES[other.dtype.name]}")
    raise RuntimeError(msg)


def _check_matmul(name: str, input: Tensor, other: Tensor) -> None:
    """PyTorch's shape and dtype errors of mm, bmm, mv, dot and matmul."""
    _check_matmul_dtypes(name, input, other)
    a, b = tuple(input.shape), tuple(other.shape)
    if name in ("mm", "matmul") and len(a) == 2 and len(b) == 2 and a[1] != b[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and "
                           f"{b[0]}x{b[1]})")
    if name in ("dot", "inner", "matmul") and len(a) == 1 and len(b) == 1 and a != b:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a[0]}] and src "
                           f"[{b[0]}] to have the same number of elements, but got {a[0]} "
                           f"and {b[0]} elements respectively")
    if name == "mv" and len(a) == 2 and len(b) == 1 and a[1] != b[0]:
        raise RuntimeError(f"size mismatch, got input ({a[0]}), mat ({a[0]}x{a[1]}), vec "
                           f"({b[0]})")
    if name == "bmm" and len(a) == 3 and len(b) == 3 and b[:2] != (a[0], a[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a[0]}, {a[2]}] but got: [{b[0]}, {b[1]}].")


@op("matmul")
def _matmul(input: Tensor, other: Tensor) -> Spec:
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{input.ndim}D and {other.ndim}D")
    _check_matmul("matmul", input, other)
    dt = result_type(input, other).np
    return Spec(_matmul_node(input.ndim, other.ndim),
                lambda a, b: fnp.matmul(cast(a, dt), cast(b, dt)), [input, other])


# PyTorch's rank errors of the fixed-rank products
_RANK_ERRORS = {
    "mm": lambda a, b: "self must be a matrix" if a != 2 else "mat2 must be a matrix",
    "bmm": lambda a, b: "batch1 must be a 3D tensor" if a != 3 else
    "batch2 must be a 3D tensor",
    "mv": lambda a, b: f"vector + matrix @ vector expected, got 1, {a}, {b}",
    "dot": lambda a, b: f"1D tensors expected, but got {a}D and {b}D tensors",
}


def _checked(name: str, node: str, nd: tuple) -> None:
    def spec(input: Tensor, other: Tensor) -> Spec:
        if (input.ndim, other.ndim) != nd:
            raise RuntimeError(_RANK_ERRORS[name](input.ndim, other.ndim))
        _check_matmul(name, input, other)
        s = _matmul(input, other)
        return s._replace(name=node)
    spec.__name__ = name
    op(name)(spec)


_checked("mm", "MmBackward0", (2, 2))
_checked("bmm", "BmmBackward0", (3, 3))
_checked("mv", "MvBackward0", (2, 1))
_checked("dot", "DotBackward0", (1, 1))


@op("inner")
def _inner(input: Tensor, other: Tensor) -> Spec:
    """The inner product over the last axes (PyTorch's composition ends in a view)."""
    _check_matmul("inner", input, other)
    dt = result_type(input, other).np
    return Spec("ViewBackward0", lambda a, b: fnp.inner(cast(a, dt), cast(b, dt)),
                [input, other])


@op("addmm")
def _addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1,
           alpha: Any = 1) -> Spec:
    if input.dtype is not mat2.dtype:
        from funcgrad.torch._tensor import _type_word
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_type_word(input.dtype)} and {_type_word(mat2.dtype)}")
    _check_matmul("mm", mat1, mat2)
    if beta == 1 and alpha == 1:
        return Spec("AddmmBackward0", _ADDMM, [input, mat1, mat2])

    def f(c: Any, a: Any, b: Any) -> Any:
        ab = fnp.matmul(a, b)
        return fnp.add(c if beta == 1 else fnp.multiply(c, beta),
                       ab if alpha == 1 else fnp.multiply(ab, alpha))
    return Spec("AddmmBackward0", f, [input, mat1, mat2])


_ADDMM = PrimCall(linalg_prims.addmm)


@op("outer", "ger")
def _outer(input: Tensor, vec2: Tensor) -> Spec:
    return Spec("MulBackward0", lambda a, b: fnp.multiply(fnp.reshape(a, (-1, 1)), b),
                [input, vec2])


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation (funcgrad.numpy.einsum)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    dtypes = {t.dtype for t in operands if isinstance(t, Tensor)}
    if len(dtypes) > 1:
        from funcgrad.torch._tensor import _type_word
        first, *rest = [t.dtype for t in operands]
        other = next(d for d in rest if d is not first)
        raise RuntimeError(f"expected scalar type {_type_word(first)} but found "
                           f"{_type_word(other)}")
    dt = result_type(*operands).np
    return apply("EinsumBackward0", lambda *xs: fnp.einsum(equation, *[cast(x, dt)
                                                                       for x in xs]),
                 list(operands))


FUNCTIONS["einsum"] = einsum
matmul = FUNCTIONS["matmul"]
