"""The rest of ``torch.linalg`` over `funcgrad.numpy.linalg` and `funcgrad.scipy.linalg`:
each function one node (PyTorch's ``Linalg...Backward0`` name where it has one), its
derivative funcgrad's, with PyTorch's signatures (``upper=``/``left=`` of
``solve_triangular``, ``UPLO``, the ``*_ex`` forms with their ``info`` tensor, 1-based
int32 pivots of ``lu_factor``)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
import funcgrad.scipy.linalg as sla
from funcgrad.numpy.linalg import LinAlgError
from funcgrad.torch._dispatch import apply
from funcgrad.torch._factories import zeros
from funcgrad.torch._tensor import Tensor

__all__ = ["solve_triangular", "eigvalsh", "eigvals", "eig", "pinv", "matrix_power",
           "matrix_rank", "multi_dot", "svdvals", "lstsq", "cond", "vecdot", "matmul",
           "diagonal", "tensorinv", "tensorsolve", "matrix_exp", "cholesky_ex", "inv_ex",
           "solve_ex", "lu_factor", "lu_factor_ex", "lu", "lu_solve", "vander",
           "LinAlgError"]


def _mT(a: Any) -> Any:
    return fnp.swapaxes(a, -1, -2)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out: Any = None) -> Tensor:
    """X with ``A X = B`` (``left``) or ``X A = B``, A triangular."""
    def f(a: Any, b: Any) -> Any:
        if left:
            return sla.solve_triangular(a, b, lower=not upper, unit_diagonal=unitriangular)
        return _mT(sla.solve_triangular(_mT(a), _mT(b), lower=upper,
                                        unit_diagonal=unitriangular))
    return apply("LinalgSolveTriangularBackward0", f, [A, B])


def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Tensor:
    return apply("LinalgEighBackward0", lambda a: fnp.linalg.eigvalsh(a, UPLO=UPLO), [A])


def eigvals(A: Tensor, *, out: Any = None) -> Tensor:
    return apply("LinalgEigBackward0", fnp.linalg.eigvals, [A])


def eig(A: Tensor, *, out: Any = None) -> tuple:
    return apply("LinalgEigBackward0", lambda a: tuple(fnp.linalg.eig(a)), [A], multi=True)


def pinv(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False,
         out: Any = None) -> Tensor:
    return apply("LinalgPinvBackward0", lambda a: fnp.linalg.pinv(
        a, rtol=rtol, hermitian=hermitian), [A])


def matrix_power(A: Tensor, n: int, *, out: Any = None) -> Tensor:
    return apply("LinalgMatrixPowerBackward0", lambda a: fnp.linalg.matrix_power(a, n), [A])


def matrix_rank(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False,
                out: Any = None) -> Tensor:
    return apply("LinalgMatrixRankBackward0", lambda a: fnp.linalg.matrix_rank(
        a, rtol=rtol, hermitian=hermitian).astype(np.int64), [A], differentiable=False)


def multi_dot(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    return apply("LinalgMultiDotBackward0", lambda *a: fnp.linalg.multi_dot(list(a)),
                 list(tensors))


def svdvals(A: Tensor, *, driver: Any = None, out: Any = None) -> Tensor:
    return apply("LinalgSvdBackward0", fnp.linalg.svdvals, [A])


def lstsq(A: Tensor, B: Tensor, rcond: Any = None, *, driver: Any = None) -> tuple:
    """(solution, residuals, rank, singular_values), as PyTorch's default CPU driver
    'gelsy' gives them: the ranks, and no residuals or singular values."""
    def f(a: Any, b: Any) -> Any:  # (a batch: through the pseudo-inverse)
        if a.ndim == 2:
            return fnp.linalg.lstsq(a, b, rcond=rcond)[0]
        return fnp.matmul(fnp.linalg.pinv(a), b)
    solution = apply("LinalgLstsqBackward0", f, [A, B])
    empty = zeros(0, dtype=A.dtype)
    return solution, empty, matrix_rank(A), empty


def cond(A: Tensor, p: Any = None, *, out: Any = None) -> Tensor:
    return apply("LinalgCondBackward0", lambda a: fnp.linalg.cond(a, p), [A])


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Any = None) -> Tensor:
    return apply("LinalgVecdotBackward0", lambda a, b: fnp.sum(fnp.conj(a) * b, axis=dim),
                 [x, y])


def matmul(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:
    return input @ other


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    return A.diagonal(offset, dim1, dim2)


def tensorinv(A: Tensor, ind: int = 2, *, out: Any = None) -> Tensor:
    return apply("LinalgTensorinvBackward0", lambda a: fnp.linalg.tensorinv(a, ind), [A])


def tensorsolve(A: Tensor, B: Tensor, dims: Any = None, *, out: Any = None) -> Tensor:
    return apply("LinalgTensorsolveBackward0", lambda a, b: fnp.linalg.tensorsolve(
        a, b, axes=dims), [A, B])


def matrix_exp(A: Tensor) -> Tensor:
    return apply("LinalgMatrixExpBackward0", sla.expm, [A])


def _with_info(value: Any, A: Tensor, check_errors: bool) -> tuple:
    """(value, info) of a ``*_ex`` function: info 0 (a failure raises at once, in the
    value's computation, whatever ``check_errors`` says)."""
    return value, zeros(tuple(A.shape[:-2])).int()


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False,
                out: Any = None) -> tuple:
    L = apply("LinalgCholeskyExBackward0", lambda a: fnp.linalg.cholesky(a), [A])
    return _with_info(L.mH if upper else L, A, check_errors)


def inv_ex(A: Tensor, *, check_errors: bool = False, out: Any = None) -> tuple:
    return _with_info(apply("LinalgInvExBackward0", fnp.linalg.inv, [A]), A, check_errors)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False,
             out: Any = None) -> tuple:
    return _with_info(apply("LinalgSolveExBackward0", fnp.linalg.solve, [A, B]), A,
                      check_errors)


def lu_factor(A: Tensor, *, pivot: bool = True, out: Any = None) -> tuple:
    """(LU, pivots): PyTorch's 1-based int32 pivots."""
    lu_, pivots = apply("LinalgLuFactorExBackward0", lambda a: tuple(sla.lu_factor(a)), [A],
                        multi=True)
    return lu_, (pivots + 1).int()


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False,
                 out: Any = None) -> tuple:
    return (*lu_factor(A, pivot=pivot), zeros(tuple(A.shape[:-2])).int())


def lu(A: Tensor, *, pivot: bool = True, out: Any = None) -> tuple:
    """(P, L, U) with A = P L U."""
    return apply("LinalgLuBackward0", lambda a: tuple(sla.lu(a)), [A], multi=True)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
             adjoint: bool = False, out: Any = None) -> Tensor:
    zero_based = (pivots - 1).long()

    def f(lu_: Any, b: Any) -> Any:
        return sla.lu_solve((lu_, zero_based._a), b, trans=2 if adjoint else 0)
    return apply("LinalgLuSolveBackward0", f, [LU, B])


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """Columns x^0, x^1, ..., x^(N-1) (increasing powers, as PyTorch's)."""
    n = x.shape[-1] if N is None else N
    return apply("PowBackward1" if n else "ZerosBackward0", lambda a: fnp.stack(
        [a ** k for k in range(n)], axis=-1), [x])
