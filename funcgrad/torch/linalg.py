"""torch.linalg for funcgrad.torch: a few decompositions and norms over funcgrad.numpy.linalg
(node names as PyTorch's ``LinalgXBackward0``; a matrix norm PyTorch composes is named by
the node its composition ends in, e.g. ``'nuc'``: ``SumBackward1``)."""
from __future__ import annotations

import math
from typing import Any

import funcgrad.numpy as fnp
from funcgrad.torch import _conventions as conventions
from funcgrad.torch._dispatch import apply
from funcgrad.torch._runtime.dtypes import to_torch_dtype
from funcgrad.torch._ops_basic import cast
from funcgrad.torch._ops_reduce import _axes, _return_type, return_types
from funcgrad.torch._tensor import Tensor, _type_word
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._ops_arrange import linalg_cross
from funcgrad.torch import _linalg_more as _more
from funcgrad.torch._linalg_more import *  # noqa: F401,F403  (solve_triangular, pinv, ...)

__all__ = ["vector_norm", "norm", "matrix_norm", "inv", "det", "slogdet", "solve",
           "cholesky", "qr", "eigh", "svd", "cross", *_more.__all__]


def _checked_float(x: Tensor, fn: str, dtype: Any) -> Any:
    """The numpy dtype to compute ``fn`` in: ``dtype`` if given, else x's own, which must
    be floating or complex (PyTorch's error otherwise)."""
    if dtype is not None:
        return to_torch_dtype(dtype).np
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {_type_word(x.dtype)}")
    return x.dtype.np


@autocast_op("linalg.vector_norm")
def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """The ``ord``-norm of x over ``dim`` (all of x by default), with PyTorch's gradient
    at zero (0, not NaN; see `funcgrad.torch._conventions.vector_norm`)."""
    dt = _checked_float(x, "linalg.vector_norm", dtype)
    axes = None if dim is None else _axes(dim, x.ndim)
    return apply("LinalgVectorNormBackward0", lambda a: conventions.vector_norm(
        cast(a, dt), ord, axes, keepdim), [x])


# the node PyTorch's composition of each matrix norm ends in
_MATRIX_NORM_NODES = {"fro": "LinalgVectorNormBackward0", "nuc": "SumBackward1",
                      2: "AmaxBackward0", -2: "AminBackward0", 1: "AmaxBackward0",
                      -1: "AminBackward0", math.inf: "AmaxBackward0",
                      -math.inf: "AminBackward0"}


def matrix_norm_spec(A: Tensor, ord: Any, dim: Any, keepdim: bool) -> tuple:
    """``(node, f, slots)`` of the matrix norm of A over the two axes ``dim``."""
    if ord not in _MATRIX_NORM_NODES:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    axes = tuple(_axes(d, A.ndim)[0] for d in dim)
    if ord == "fro":
        return (_MATRIX_NORM_NODES[ord], lambda a: conventions.vector_norm(
            a, 2, tuple(sorted(axes)), keepdim), [A])
    return (_MATRIX_NORM_NODES[ord], lambda a: fnp.linalg.norm(
        a, ord, axis=axes, keepdims=keepdim), [A])


@autocast_op("linalg.matrix_norm")
def matrix_norm(A: Tensor, ord: Any = "fro", dim: tuple = (-2, -1),
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The matrix norm of A over ``dim`` ('fro', 'nuc', ±1, ±2, ±inf)."""
    dt = _checked_float(A, "linalg.matrix_norm", dtype)
    node, f, slots = matrix_norm_spec(A, ord, dim, keepdim)
    return apply(node, lambda a: f(cast(a, dt)), slots)


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """``torch.linalg.norm``: the 2-norm of the flattened A without ``ord`` and ``dim``;
    a matrix norm for two dims (or a 2-D A with ``ord``); a vector norm otherwise."""
    if dim is None and ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    two = dim is not None and not isinstance(dim, int) and len(dim) == 2
    if two or (dim is None and A.ndim == 2):
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim,
                           keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def _single(node: str, fn: str) -> Any:
    def f(A: Tensor, *args: Any, **kwargs: Any) -> Any:
        return apply(node, lambda a, *rest: getattr(fnp.linalg, fn)(a, *rest, **kwargs),
                     [A, *args])
    f.__name__ = fn
    return f


def _multi(node: str, fn: str) -> Any:
    def f(A: Tensor, **kwargs: Any) -> Any:
        return apply(node, lambda a: tuple(getattr(fnp.linalg, fn)(a, **kwargs)), [A],
                     multi=True)
    f.__name__ = fn
    return f


inv = autocast_op("linalg.inv")(_single("LinalgInvExBackward0", "inv"))
det = _single("LinalgDetBackward0", "det")
solve = _single("LinalgSolveExBackward0", "solve")
cholesky = autocast_op("linalg.cholesky")(_single("LinalgCholeskyExBackward0", "cholesky"))
slogdet = _multi("LinalgSlogdetBackward0", "slogdet")
qr = _multi("LinalgQrBackward0", "qr")
eigh = _multi("LinalgEighBackward0", "eigh")
svd = _multi("LinalgSvdBackward0", "svd")
cross = autocast_op("linalg.cross")(linalg_cross)


# PyTorch's named results (``torch.return_types.linalg_qr(Q=..., R=...)``): ``.Q``,
# ``.eigenvalues``... as well as unpacking
_NAMED = {"qr": ("Q", "R"), "svd": ("U", "S", "Vh"), "eigh": ("eigenvalues", "eigenvectors"),
          "eig": ("eigenvalues", "eigenvectors"), "slogdet": ("sign", "logabsdet"),
          "lu_factor": ("LU", "pivots"), "lu_factor_ex": ("LU", "pivots", "info"),
          "lu": ("P", "L", "U"), "lstsq": ("solution", "residuals", "rank", "singular_values"),
          "inv_ex": ("inverse", "info"), "cholesky_ex": ("L", "info"),
          "solve_ex": ("result", "info")}


def _named(fn: Any, kind: type) -> Any:
    def named(*args: Any, **kwargs: Any) -> Any:
        return kind(*fn(*args, **kwargs))
    named.__name__ = named.__qualname__ = fn.__name__
    named.__doc__ = fn.__doc__
    return named


for _name, _fields in _NAMED.items():
    _kind = getattr(return_types, f"linalg_{_name}", None) or _return_type(
        f"linalg_{_name}", _fields)
    setattr(return_types, f"linalg_{_name}", _kind)
    globals()[_name] = _named(globals()[_name], _kind)
