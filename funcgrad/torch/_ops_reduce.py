"""The op table, part 2: reductions, scans, softmax, sorting and selection.

Torch's ``dim``/``keepdim`` become funcgrad's ``axis``/``keepdims``. Node names follow the
overload PyTorch picks: the full reduction and the ``dim`` form differ (``SumBackward0``
vs ``SumBackward1``, ``MaxBackward1`` vs ``MaxBackward0``). Ops returning values and
indices return PyTorch's named tuples (``torch.return_types.max(values=..., indices=...)``).
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.meta import dynamic_shape_error
from funcgrad.torch import _conventions as conventions
from funcgrad.torch._runtime import dtypes as D
from funcgrad.primitives import reductions as reduction_prims
from funcgrad.torch._dispatch import PrimCall, apply
from funcgrad.torch._ops_basic import FUNCTIONS, METHODS, Spec, cast, np_fn, op, sp_fn
from funcgrad.torch._tensor import Tensor, _type_word
from funcgrad.torch._factories import tensor

__all__ = ["return_types", "nonzero", "max", "min"]


class _ReturnType(tuple):
    _fields: tuple = ()
    _name = ""

    def __repr__(self) -> str:
        body = ",\n".join(f"{k}={v!r}" for k, v in zip(self._fields, self))
        return f"torch.return_types.{self._name}(\n{body})"


def _return_type(name: str, fields: tuple) -> type:
    attrs = {"_fields": fields, "_name": name, "__slots__": ()}
    for i, f in enumerate(fields):
        attrs[f] = property(lambda self, i=i: self[i])
    cls = type(name, (_ReturnType,), attrs)
    cls.__new__ = lambda c, *values: tuple.__new__(c, values)
    return cls


class return_types:
    """PyTorch's named tuples of (values, indices), and the histogram's."""
    histogram = _return_type("histogram", ("hist", "bin_edges"))
    max = _return_type("max", ("values", "indices"))
    min = _return_type("min", ("values", "indices"))
    sort = _return_type("sort", ("values", "indices"))
    topk = _return_type("topk", ("values", "indices"))
    kthvalue = _return_type("kthvalue", ("values", "indices"))


def _axes(dim: Any, ndim: int) -> tuple:
    """torch ``dim`` (int, tuple or list; negative allowed) as a sorted tuple of axes."""
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    if ndim == 0:
        for d in dims:
            if d not in (0, -1):
                raise IndexError(f"Dimension out of range (expected to be in range of [-1, "
                                 f"0], but got {d})")
        return ()
    out = []
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-ndim}, {ndim - 1}], but got {d})")
        out.append(int(d) % ndim)
    return tuple(sorted(out))


def _sum_dtype(input: Tensor, dtype: Any) -> np.dtype:
    if dtype is not None:
        return D.to_torch_dtype(dtype).np
    dt = input.dtype
    return (dt if dt.is_floating_point or dt.is_complex else D.int64).np


def _reduction(node: str, fn: Any, input: Tensor, dim: Any, keepdim: bool,
               dt: np.dtype, prim: Any = None) -> Spec:
    """The full reduction (``<node>Backward0``) or the ``dim`` form (``<node>Backward1``).
    ``prim``: the primitive ``fn`` is (with ``axis`` and ``keepdims``), used directly when
    no cast is needed."""
    if dim is None:
        name, axes, keepdim = f"{node}Backward0", tuple(range(input.ndim)), False
    else:
        name, axes = f"{node}Backward1", _axes(dim, input.ndim)
    if prim is not None and input._a.dtype == dt:
        return Spec(name, PrimCall(prim, {"axis": axes, "keepdims": bool(keepdim)}), [input])
    if dim is None:
        return Spec(name, lambda x: fn(cast(x, dt)), [input])
    return Spec(name, lambda x: fn(cast(x, dt), axis=axes, keepdims=keepdim), [input])


@op("sum")
def _sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Spec:
    return _reduction("Sum", fnp.sum, input, dim, keepdim, _sum_dtype(input, dtype),
                      reduction_prims.reduce_sum)


@op("nansum")
def _nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *,
            dtype: Any = None) -> Spec:
    axes = None if dim is None else _axes(dim, input.ndim)
    dt = _sum_dtype(input, dtype)
    return Spec("NansumBackward0", lambda x: fnp.sum(fnp.where(fnp.isnan(x), 0, cast(x, dt)),
                                                     axis=axes, keepdims=keepdim), [input])


def _float_input(input: Tensor, fn: str, dtype: Any) -> np.dtype:
    dt = input.dtype if dtype is None else D.to_torch_dtype(dtype)
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fn}(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: {_type_word(dt)}")
    return dt.np


@op("mean")
def _mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Spec:
    return _reduction("Mean", fnp.mean, input, dim, keepdim, _float_input(input, "mean", dtype))


@op("prod")
def _prod(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Spec:
    return _reduction("Prod", fnp.prod, input, dim, keepdim, _sum_dtype(input, dtype))


def _correction(dim: Any, unbiased: Any, correction: Any) -> tuple:
    if isinstance(dim, bool):  # var(x, unbiased)
        dim, unbiased = None, dim
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return dim, correction


def _std(x: Any, axis: Any, ddof: int, keepdims: bool) -> Any:
    """The standard deviation whose gradient is 0 where it is 0 (PyTorch's masked
    ``grad / (2 std)``), not NaN."""
    return conventions.sqrt_at_zero(fnp.var(x, axis=axis, ddof=ddof, keepdims=keepdims))


def _spread(node: str, fn: Callable) -> Callable:
    """torch.var / torch.std: ``fn`` (variance or standard deviation) with torch's
    arguments."""
    def spec(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> Spec:
        if not (input.dtype.is_floating_point or input.dtype.is_complex):
            raise RuntimeError("std and var only support floating point and complex dtypes")
        dim, ddof = _correction(dim, unbiased, correction)
        axes = None if dim is None else _axes(dim, input.ndim)
        return Spec(node, lambda x: fn(x, axis=axes, ddof=ddof, keepdims=keepdim), [input])
    return spec


op("var")(_spread("VarBackward0", fnp.var))
op("std")(_spread("StdBackward0", _std))


def _extreme(kind: str):  # noqa: ANN202
    pair = "maximum" if kind == "max" else "minimum"
    largest = kind == "max"
    node = kind.capitalize()
    result = getattr(return_types, kind)

    def extreme(input: Tensor, dim: Any = None, keepdim: bool = False, *,
                out: Any = None) -> Any:
        if dim is None:
            if input.numel() == 0:
                raise RuntimeError(f"{kind}(): Expected reduction dim to be specified for "
                                   "input.numel() == 0. Specify the reduction dim with the "
                                   "'dim' argument.")
            if not input.dtype.is_floating_point:  # no NaN, no gradient: the plain max
                return apply(f"{node}Backward1", np_fn(kind), [input])
            return apply(f"{node}Backward1", lambda x: conventions.extreme_all(x, largest),
                         [input])
        if isinstance(dim, Tensor):
            return FUNCTIONS[pair](input, dim)
        axis = _axes(dim, input.ndim)
        axis = axis[0] if axis else None
        if axis is not None and input.shape[axis] == 0:
            raise IndexError(f"{kind}(): Expected reduction dim {axis} to have non-zero "
                             "size.")
        return result(*apply(f"{node}Backward0", lambda x: conventions.extreme_along(
            x, axis, keepdim, largest), [input], multi=True))
    extreme.__name__ = kind
    extreme.__doc__ = (f"``{kind}(input)`` (a scalar), ``{kind}(input, dim, keepdim)`` "
                       f"(values and indices) or ``{kind}(input, other)`` ({pair}). The "
                       "gradient follows PyTorch: evenly among NaNs or ties for the "
                       "scalar, to the returned index for the ``dim`` form.")
    return extreme


max = _extreme("max")  # noqa: A001
min = _extreme("min")  # noqa: A001
FUNCTIONS["max"] = METHODS["max"] = max
FUNCTIONS["min"] = METHODS["min"] = min


@op("amax")
def _amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Spec:
    axes = _axes(dim, input.ndim) if dim != () else None
    return Spec("AmaxBackward0", lambda x: fnp.max(x, axis=axes, keepdims=keepdim), [input])


@op("amin")
def _amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Spec:
    axes = _axes(dim, input.ndim) if dim != () else None
    return Spec("AminBackward0", lambda x: fnp.min(x, axis=axes, keepdims=keepdim), [input])


def _index_reduction(name: str, one_axis: bool) -> None:
    """argmax/argmin (one axis; over the flattened tensor without ``dim``) and all/any
    (any axes): reductions without gradient."""
    fn = np_fn(name)

    def spec(input: Tensor, dim: Any = None, keepdim: bool = False) -> Spec:
        if dim is None:
            if one_axis and input.numel() == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                                 "input.numel() == 0.")
            f = (lambda x: fn(fnp.ravel(x))) if one_axis else fn
        else:
            axes = _axes(dim, input.ndim)
            if one_axis and axes and input.shape[axes[0]] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {axes[0]} to have "
                                 "non-zero size.")
            axis = (axes[0] if axes else None) if one_axis else axes
            f = lambda x: fn(x, axis=axis, keepdims=keepdim)  # noqa: E731
        return Spec(name, f, [input], differentiable=False)
    spec.__name__ = name
    op(name)(spec)


for _name, _one in [("argmax", True), ("argmin", True), ("all", False), ("any", False)]:
    _index_reduction(_name, _one)


@op("count_nonzero")
def _count_nonzero(input: Tensor, dim: Any = None) -> Spec:
    axes = None if dim is None else _axes(dim, input.ndim)
    return Spec("count_nonzero", lambda x: fnp.sum(fnp.not_equal(x, 0), axis=axes,
                                                   dtype=np.int64), [input],
                differentiable=False)


def _scan(node: str, fn: Callable, input: Tensor, dim: int, dtype: Any) -> Spec:
    """A cumulative op along ``dim``; a 0-d tensor stays 0-d (its scan is itself)."""
    dt, axis = _sum_dtype(input, dtype), _axes(dim, input.ndim)
    if not axis:
        return Spec(node, lambda x: cast(x, dt), [input])
    return Spec(node, lambda x: fn(cast(x, dt), axis=axis[0]), [input])


@op("cumsum", inplace=True, broadcasts=False)
def _cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Spec:
    return _scan("CumsumBackward0", fnp.cumsum, input, dim, dtype)


@op("cumprod", inplace=True, broadcasts=False)
def _cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Spec:
    return _scan("CumprodBackward0", fnp.cumprod, input, dim, dtype)


@op("logsumexp")
def _logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Spec:
    axes = _axes(dim, input.ndim)
    dt = input.dtype if input.dtype.is_floating_point else D.get_default_dtype()
    return Spec("LogsumexpBackward0", lambda x: sp_fn("logsumexp")(
        cast(x, dt.np), axis=axes, keepdims=keepdim), [input])


def _softmax_dtype(input: Tensor, dtype: Any) -> np.dtype:
    return (input.dtype if dtype is None else D.to_torch_dtype(dtype)).np


@op("softmax")
def _softmax(input: Tensor, dim: int | None = None, dtype: Any = None) -> Spec:
    dt, axis = _softmax_dtype(input, dtype), _softmax_dim(input, dim)
    return Spec("SoftmaxBackward0", lambda x: sp_fn("softmax")(cast(x, dt), axis=axis),
                [input])


@op("log_softmax")
def _log_softmax(input: Tensor, dim: int | None = None, dtype: Any = None) -> Spec:
    dt, axis = _softmax_dtype(input, dtype), _softmax_dim(input, dim)
    if input._a.dtype == dt:  # no cast: the primitive itself (axis None: a 0-d input)
        axes = () if axis is None else (axis,)
        return Spec("LogSoftmaxBackward0",
                    PrimCall(reduction_prims.log_softmax, {"axis": axes}), [input])
    return Spec("LogSoftmaxBackward0",
                lambda x: sp_fn("log_softmax")(cast(x, dt), axis=axis), [input])


def _softmax_dim(input: Tensor, dim: int | None) -> int | None:
    if dim is None:  # PyTorch's legacy implicit choice (with a warning)
        warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the "
                      "call to include dim=X as an argument.", UserWarning, stacklevel=4)
        dim = 0 if input.ndim in (0, 1, 3) else 1
    axes = _axes(dim, input.ndim)
    return axes[0] if axes else None


@op("norm")
def _norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
          dtype: Any = None) -> Spec:
    """``torch.norm``: a vector norm over ``dim`` (all of it by default); ``'nuc'`` (and
    ``'fro'`` over two dims) are matrix norms, as in PyTorch."""
    if p == "nuc" or (p == "fro" and dim is not None and not isinstance(dim, int)
                      and len(dim) == 2):
        from funcgrad.torch import linalg  # in the call: linalg imports this module
        return Spec(*linalg.matrix_norm_spec(input, p, (-2, -1) if dim is None else dim,
                                             keepdim))
    ord_ = 2 if p in ("fro", None) else p
    axes = None if dim is None else _axes(dim, input.ndim)
    return Spec("LinalgVectorNormBackward0", lambda x: conventions.vector_norm(
        x, ord_, axes, keepdim), [input])


# -- sorting and selection ----------------------------------------------------------------

def _axis1(dim: int, ndim: int) -> int:
    axes = _axes(dim, ndim)
    return axes[0] if axes else -1


def _order(x: Any, axis: int, descending: bool) -> Any:
    """The stable sorting permutation along ``axis``, PyTorch's way with NaN: it counts as
    the largest value (last ascending, first descending, NaNs in their original order)."""
    if x.ndim == 0:
        return fnp.zeros((), np.int64)
    if not descending:
        return fnp.argsort(x, axis=axis, kind="stable")  # (numpy also puts NaN last)
    if not fnp.issubdtype(x.dtype, fnp.inexact):  # (~x reverses the order, never overflows)
        return fnp.argsort(fnp.invert(x), axis=axis, kind="stable")
    by_value = fnp.argsort(fnp.negative(x), axis=axis, kind="stable")  # NaNs last
    nan_first = fnp.argsort(fnp.logical_not(fnp.isnan(
        fnp.take_along_axis(x, by_value, axis=axis))), axis=axis, kind="stable")
    return fnp.take_along_axis(by_value, nan_first, axis=axis)


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """Sorted values and their indices along ``dim`` (SortBackward0)."""
    axis = _axis1(dim, input.ndim)

    def f(x: Any) -> tuple:
        idx = _order(x, axis, descending)
        vals = x if x.ndim == 0 else fnp.take_along_axis(x, idx, axis=axis)
        return (vals, idx)
    return return_types.sort(*apply("SortBackward0", f, [input], multi=True))


def argsort(input: Tensor, dim: int = -1, descending: bool = False,
            stable: bool = False) -> Tensor:
    axis = _axis1(dim, input.ndim)
    return apply("argsort", lambda x: _order(x, axis, descending), [input],
                 differentiable=False)


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True) -> Any:  # noqa: A002
    """The ``k`` largest (or smallest) values along ``dim`` and their indices."""
    axis = _axis1(dim, input.ndim)

    def f(x: Any) -> tuple:
        idx = fnp.take(_order(x, axis, largest), np.arange(k), axis=axis)
        return (fnp.take_along_axis(x, idx, axis=axis), idx)
    return return_types.topk(*apply("TopkBackward0", f, [input], multi=True))


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """Indices of the non-zero elements: an (n, ndim) int64 tensor, or a tuple per dim."""
    if input.is_meta:
        raise dynamic_shape_error("nonzero")
    idx = np.nonzero(input._host())
    if as_tuple:
        return tuple(tensor(i, dtype=D.int64, device=input.device) for i in idx)
    return tensor(np.stack(idx, axis=1) if idx else np.zeros((0, 0)), dtype=D.int64,
                  device=input.device)


for _f in (sort, argsort, topk, nonzero):
    FUNCTIONS[_f.__name__] = METHODS[_f.__name__] = _f
