"""torch.linalg for funcgrad.torch: a few decompositions and norms over funcgrad.numpy.linalg
(node names as PyTorch's ``LinalgXBackward0``)."""
from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp
from funcgrad.torch._dispatch import apply
from funcgrad.torch._ops_reduce import _axes
from funcgrad.torch._tensor import Tensor

__all__ = ["vector_norm", "norm", "matrix_norm", "inv", "det", "slogdet", "solve",
           "cholesky", "qr", "eigh", "svd"]


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    axes = None if dim is None else _axes(dim, x.ndim)
    return apply("LinalgVectorNormBackward0", lambda a: fnp.linalg.vector_norm(
        a, ord=ord, axis=axes, keepdims=keepdim), [x])


def matrix_norm(A: Tensor, ord: Any = "fro", dim: tuple = (-2, -1),
                keepdim: bool = False) -> Tensor:
    return apply("LinalgMatrixNormBackward0", lambda a: fnp.linalg.matrix_norm(
        a, ord=ord, keepdims=keepdim), [A])


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False) -> Tensor:
    if dim is None and ord is None:
        return vector_norm(A.reshape(-1), 2, None, keepdim)
    if (dim is not None and not isinstance(dim, int) and len(dim) == 2) or (
            dim is None and A.ndim == 2):
        return matrix_norm(A, "fro" if ord is None else ord, keepdim=keepdim)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim)


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


inv = _single("LinalgInvExBackward0", "inv")
det = _single("LinalgDetBackward0", "det")
solve = _single("LinalgSolveExBackward0", "solve")
cholesky = _single("LinalgCholeskyExBackward0", "cholesky")
slogdet = _multi("LinalgSlogdetBackward0", "slogdet")
qr = _multi("LinalgQrBackward0", "qr")
eigh = _multi("LinalgEighBackward0", "eigh")
svd = _multi("LinalgSvdBackward0", "svd")
