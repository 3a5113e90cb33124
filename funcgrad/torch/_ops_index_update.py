"""The op table, part 6: writes at indices, out of place and in place: index_add,
index_copy, index_fill, scatter_reduce, select/slice/diagonal_scatter, index_put, put,
masked_scatter; and the gathers take, take_along_dim.

Each is a functional update (funcgrad's ``x.at[idx].set/add/multiply``) at index arrays
made from the index tensor, so gradients are the update's own: the overwritten positions
get none, the source gets the gathered cotangent. scatter_reduce's ``amax``/``amin`` share
the gradient evenly among the elements equal to the result, as PyTorch's; ``prod`` with
repeated targets multiplies in rounds of distinct targets (``at[].multiply`` needs them).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.primitives.control import stop_gradient
from funcgrad.torch._dispatch import const_like
from funcgrad.torch._ops_basic import Spec, cast, op, operand
from funcgrad.torch._ops_reduce import _axes
from funcgrad.torch._tensor import Tensor, _type_word

__all__: list = []


def _dim(dim: int, ndim: int) -> int:
    axes = _axes(dim, ndim)
    return axes[0] if axes else 0


def _index_along(fn: str, input: Tensor, dim: int, index: Tensor, dtype_error: str) -> tuple:
    """``(axis, index tuple)`` addressing ``index``'s entries along ``dim``, checked."""
    if index.dtype.np.kind not in "iu":
        raise (IndexError if fn != "index_add_" else RuntimeError)(dtype_error.format(
            _type_word(index.dtype)))
    if index.ndim > 1:
        raise IndexError(f"{fn}(): Index is supposed to be a vector")
    axis = _dim(dim, input.ndim)
    size = input.shape[axis] if input.ndim else 1
    raw = index.detach().numpy(force=True).reshape(-1)
    bad = raw[(raw < -size) | (raw >= size)]
    if bad.size:
        raise (IndexError if fn == "index_fill_" else RuntimeError)(
            f"index {int(bad[0])} is out of bounds for dimension {axis} with size {size}")
    return axis, (slice(None),) * axis + (const_like(raw % max(size, 1), input),)


def _source_for(fn: str, input: Tensor, axis: int, count: int, source: Tensor,
                sep: str) -> None:
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{fn}(): self ({_type_word(input.dtype)}) and source "
                           f"({_type_word(source.dtype)}) must have the same scalar type")
    got = source.shape[axis] if source.ndim else 1
    if got != count:
        error = IndexError if fn == "index_copy_" else RuntimeError
        raise error(f"{fn}(): Number of indices ({count}) should be equal to source.size"
                    f"(dim){sep} ({got}){', for dim: ' + str(axis) if sep == ':' else ''}")


@op("index_add", inplace=True, broadcasts=False)
def _index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
               alpha: Any = 1) -> Spec:
    """``input`` with ``alpha * source`` added at ``index`` along ``dim`` (repeats add)."""
    axis, idx = _index_along("index_add_", input, dim, index,
                             "index_add_(): Expected dtype int32/int64 for index but got: {}")
    _source_for("index_add_", input, axis, index.numel(), source, ":")
    scale = (lambda s: s) if alpha == 1 else (lambda s: fnp.multiply(s, alpha))
    return Spec("IndexAddBackward0", lambda x, s: _flat0(x).at[idx].add(
        scale(_flat0(s))).reshape(x.shape), [input, source])


def _flat0(x: Any) -> Any:
    """A 0-d array as 1-d (PyTorch indexes a scalar as a one-element vector)."""
    return fnp.reshape(x, (1,)) if x.ndim == 0 else x


@op("index_copy", inplace=True, broadcasts=False)
def _index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Spec:
    """``input`` with the slices of ``source`` written at ``index`` along ``dim``."""
    axis, idx = _index_along("index_copy_", input, dim, index,
                             "index_copy_(): Expected a long tensor for index, but got {}")
    _source_for("index_copy_", input, axis, index.numel(), source, "")
    return Spec("IndexCopyBackward0", lambda x, s: _flat0(x).at[idx].set(
        _flat0(s)).reshape(x.shape), [input, source])


@op("index_fill", inplace=True, broadcasts=False)
def _index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Spec:
    """``input`` with ``value`` (a number or a 0-d tensor) at ``index`` along ``dim``."""
    if index.dtype.name != "int64":
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    _, idx = _index_along("index_fill_", input, dim, index, "{}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        return Spec("IndexFillBackward1", lambda x, v: _flat0(x).at[idx].set(
            cast(v, x.dtype)).reshape(x.shape), [input, value])
    return Spec("IndexFillBackward0", lambda x: _flat0(x).at[idx].set(value).reshape(
        x.shape), [input])


# -- scatter_reduce ---------------------------------------------------------------------

_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _targets(input: Tensor, dim: int, index: Tensor) -> tuple:
    """The positions of ``input`` that index's entries address (flat numpy arrays, one
    per dimension, in index's row-major order)."""
    raw = index.detach().numpy(force=True)
    axis = _dim(dim, input.ndim)
    size = input.shape[axis] if input.ndim else 1
    bad = raw[(raw < -size) | (raw >= size)]
    if bad.size:
        raise RuntimeError(f"index {int(bad.flat[0])} is out of bounds for dimension {axis} "
                           f"with size {size}")
    grids = list(np.indices(raw.shape))
    grids[axis] = raw % max(size, 1)
    return tuple(g.reshape(-1) for g in grids)


def _rounds(targets: tuple, shape: tuple) -> list:
    """The source positions split into rounds in which no target repeats."""
    flat = np.ravel_multi_index(targets, shape) if targets[0].size else targets[0]
    order = np.argsort(flat, kind="stable")
    ranked = flat[order]
    starts = np.searchsorted(ranked, ranked, side="left")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size) - starts
    return [np.nonzero(rank == r)[0] for r in range(int(rank.max()) + 1 if rank.size else 0)]


@op("scatter_reduce", inplace=True, broadcasts=False)
def _scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Spec:
    """``input`` with ``src``'s elements reduced into the positions ``index`` names
    along ``dim`` (sum, prod, mean, amax, amin; ``include_self``: input's value too)."""
    if reduce not in _REDUCTIONS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    if index.dtype.np.kind not in "iu":
        raise RuntimeError("scatter_reduce(): Expected dtype int32/int64 for index")
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter_reduce(): Expected self.dtype to be equal to src.dtype")
    shape = tuple(input.shape)
    targets = _targets(input, dim, index)
    trim = tuple(slice(0, n) for n in index.shape)
    touched = np.zeros(shape, dtype=bool)
    touched[targets] = True
    counts = np.zeros(shape, dtype=np.int64)
    np.add.at(counts, targets, 1)
    consts = dict(touched=const_like(touched, input), counts=counts, targets=targets)
    if reduce in ("amax", "amin"):
        consts["result"] = _extreme_result(input, src, reduce, include_self, consts, trim)
    elif reduce == "prod":
        consts["rounds"] = _rounds(targets, shape)

    def f(x: Any, s: Any) -> Any:
        s = fnp.reshape(s[trim], (-1,))
        return _REDUCERS[reduce](x, s, include_self, consts)
    return Spec("ScatterReduceBackward0", f, [input, src])


def _tgt(consts: dict) -> tuple:
    return tuple(fnp.asarray(t) for t in consts["targets"])


def _reduce_sum(x: Any, s: Any, include_self: bool, consts: dict) -> Any:
    base = x if include_self else fnp.where(consts["touched"], fnp.zeros((), x.dtype), x)
    return base.at[_tgt(consts)].add(s)


def _reduce_mean(x: Any, s: Any, include_self: bool, consts: dict) -> Any:
    total = _reduce_sum(x, s, include_self, consts)
    count = consts["counts"] + (1 if include_self else 0)
    count = fnp.asarray(np.maximum(count, 1).astype(x.dtype))
    if not fnp.issubdtype(x.dtype, np.inexact):
        return fnp.floor_divide(total, count)
    return fnp.where(consts["touched"], fnp.true_divide(total, count), x)


def _reduce_prod(x: Any, s: Any, include_self: bool, consts: dict) -> Any:
    out = x if include_self else fnp.where(consts["touched"], fnp.ones((), x.dtype), x)
    for positions in consts["rounds"]:
        where = tuple(fnp.asarray(t[positions]) for t in consts["targets"])
        out = out.at[where].multiply(fnp.take(s, fnp.asarray(positions)))
    return out


def _extreme_result(input: Tensor, src: Tensor, reduce: str, include_self: bool,
                    consts: dict, trim: tuple) -> np.ndarray:
    """The values of an amax/amin scatter (no gradient: `_reduce_extreme` adds it)."""
    result = input.detach().numpy(force=True).copy()
    values = src.detach().numpy(force=True)[trim].reshape(-1)
    if not include_self:
        info = np.finfo if result.dtype.kind == "f" else np.iinfo
        result[consts["targets"]] = (info(result.dtype).min if reduce == "amax" else
                                     info(result.dtype).max)
    (np.maximum if reduce == "amax" else np.minimum).at(result, consts["targets"], values)
    return result


def _reduce_extreme(x: Any, s: Any, include_self: bool, consts: dict) -> Any:
    """The amax/amin result whose gradient is shared evenly among the elements (of
    input, where it takes part, and of src) equal to it."""
    result = fnp.asarray(consts["result"])
    if not fnp.issubdtype(x.dtype, np.inexact):
        return result
    tgt = _tgt(consts)
    own = fnp.equal(x, result)
    if not include_self:
        own = fnp.logical_and(own, fnp.logical_not(consts["touched"]))
    hit = fnp.equal(s, result[tgt])
    share = fnp.where(own, fnp.subtract(x, stop_gradient(x)), 0).at[tgt].add(
        fnp.where(hit, fnp.subtract(s, stop_gradient(s)), 0))
    count = fnp.astype(own, x.dtype).at[tgt].add(fnp.astype(hit, x.dtype))
    return fnp.add(result, fnp.true_divide(share, fnp.maximum(count, 1)))


_REDUCERS = {"sum": _reduce_sum, "mean": _reduce_mean, "prod": _reduce_prod,
             "amax": _reduce_extreme, "amin": _reduce_extreme}


# -- scatters of slices, diagonals, masks and flat indices ---------------------------

@op("select_scatter")
def _select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Spec:
    """``input`` with ``src`` written at ``index`` along ``dim``."""
    axis = _dim(dim, input.ndim)
    idx = (slice(None),) * axis + (index,)
    _same_shape("select_scatter", input, idx, src)
    return Spec("SelectScatterBackward0", lambda x, s: x.at[idx].set(cast(s, x.dtype)),
                [input, src])


@op("slice_scatter")
def _slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                   end: int | None = None, step: int = 1) -> Spec:
    """``input`` with ``src`` written over ``input[start:end:step]`` along ``dim``."""
    axis = _dim(dim, input.ndim)
    idx = (slice(None),) * axis + (slice(start, end, step),)
    _same_shape("slice_scatter", input, idx, src)
    return Spec("SliceScatterBackward0", lambda x, s: x.at[idx].set(cast(s, x.dtype)),
                [input, src])


@op("diagonal_scatter")
def _diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                      dim2: int = 1) -> Spec:
    """``input`` with ``src`` written over its diagonal (``offset``, ``dim1``, ``dim2``)."""
    a, b = _dim(dim1, input.ndim), _dim(dim2, input.ndim)
    want = tuple(input.diagonal(offset, a, b).shape)
    if tuple(src.shape) != want:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src "
                           f"size = {list(src.shape)}, slice size = {list(want)}")
    k = np.arange(want[-1])
    rows, cols = (k, k + offset) if offset >= 0 else (k - offset, k)

    def f(x: Any, s: Any) -> Any:
        moved = fnp.moveaxis(x, (a, b), (-2, -1))
        return fnp.moveaxis(moved.at[..., rows, cols].set(cast(s, x.dtype)), (-2, -1), (a, b))
    return Spec("DiagonalScatterBackward0", f, [input, src])


def _same_shape(fn: str, input: Tensor, idx: tuple, src: Tensor) -> None:
    want = tuple(input[idx].shape)
    if tuple(src.shape) != want:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src "
                           f"size = {list(src.shape)}, slice size = {list(want)}")


@op("index_put", inplace=True, broadcasts=False)
def _index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Spec:
    """``input[indices] = values`` (``+=`` with ``accumulate``, repeats adding up)."""
    for k, i in enumerate(indices):
        if i is not None and not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got "
                            f"{type(i).__name__}")
    idx = tuple(None if i is None else i._a for i in indices)
    values = operand(values)
    if accumulate:
        return Spec("IndexPutBackward0", lambda x, v: x.at[idx].add(cast(v, x.dtype)),
                    [input, values])
    return Spec("IndexPutBackward0", lambda x, v: x.at[idx].set(cast(v, x.dtype)),
                [input, values])


@op("put", inplace=True, broadcasts=False)
def _put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Spec:
    """``input`` seen flat, with ``source`` written (added) at ``index``."""
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source.numel()}, "
                           f"index.numel() = {index.numel()}")
    raw = _flat_index("put", input, index)
    idx = const_like(raw.reshape(-1), input)

    def f(x: Any, s: Any) -> Any:
        flat, values = fnp.reshape(x, (-1,)), fnp.reshape(cast(s, x.dtype), (-1,))
        out = flat.at[idx].add(values) if accumulate else flat.at[idx].set(values)
        return fnp.reshape(out, x.shape)
    return Spec("PutBackward0", f, [input, source])


def _flat_index(fn: str, input: Tensor, index: Tensor) -> np.ndarray:
    n = input.numel()
    raw = index.detach().numpy(force=True)
    bad = raw[(raw < -n) | (raw >= n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad.flat[0])} on a "
                         f"tensor of {n} elements.")
    return raw % max(n, 1)


@op("masked_scatter", inplace=True, broadcasts=False)
def _masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Spec:
    """``input`` with the first elements of ``source`` (in order) where ``mask`` is
    true (the mask broadcast to input's shape)."""
    if mask.dtype.name != "bool":
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_type_word(mask.dtype)}")
    shape = tuple(input.shape)
    m = np.broadcast_to(mask.detach().numpy(force=True), shape)
    count = int(m.sum())
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    where = tuple(const_like(i, input) for i in np.nonzero(m))

    def f(x: Any, s: Any) -> Any:
        return x.at[where].set(fnp.reshape(cast(s, x.dtype), (-1,))[:count])
    return Spec("MaskedScatterBackward0", f, [input, source])


# -- gathers -------------------------------------------------------------------------

@op("take")
def _take(input: Tensor, index: Tensor) -> Spec:
    """The elements of ``input`` seen flat, at ``index`` (the result has index's shape)."""
    if index.dtype.name != "int64":
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_type_word(index.dtype)}")
    idx = const_like(_flat_index("take", input, index), input)
    return Spec("TakeBackward0", lambda x: fnp.reshape(x, (-1,))[idx], [input])


@op("take_along_dim")
def _take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Spec:
    """``gather`` with broadcasting of input and indices (of both seen flat without
    ``dim``)."""
    if indices.dtype.np.kind not in "iu":
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be int64 but "
                           f"got {_type_word(indices.dtype)} instead")
    if dim is None:
        flat = indices._a.reshape(-1)
        return Spec("GatherBackward0", lambda x: fnp.take_along_axis(
            fnp.reshape(x, (-1,)), flat, axis=0), [input])
    axis = _dim(dim, input.ndim)
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    for k, (a, b) in enumerate(zip(input.shape, indices.shape)):
        if k != axis and a != b and 1 not in (a, b):
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b "
                               f"({b}) at non-singleton dimension {k}")
    lead = [max(a, b) for a, b in zip(input.shape, indices.shape)]
    x_shape = tuple(n if k != axis else input.shape[axis] for k, n in enumerate(lead))
    i_shape = tuple(n if k != axis else indices.shape[axis] for k, n in enumerate(lead))
    idx = fnp.broadcast_to(indices._a, i_shape)
    return Spec("GatherBackward0", lambda x: fnp.take_along_axis(
        fnp.broadcast_to(x, x_shape), idx, axis=axis), [input])
