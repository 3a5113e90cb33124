"""``torch.svd_lowrank`` and ``torch.pca_lowrank``: Halko, Martinsson and Tropp's randomized
range finder (a random projection, ``niter`` power iterations re-orthonormalised by QR),
then the SVD of the small projected matrix. Compositions of the facade's ops, so gradients
flow as through PyTorch's; the random projection draws from the default generator."""
from __future__ import annotations

from funcgrad.torch import linalg
from funcgrad.torch._factories import randn
from funcgrad.torch._tensor import Tensor

__all__ = ["svd_lowrank", "pca_lowrank"]


def _approximate_basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    """Q with q orthonormal columns whose span nearly holds the range of A - M."""
    R = randn(*A.shape[:-2], A.shape[-1], q, dtype=A.dtype)
    X = A @ R if M is None else A @ R - M @ R
    Q = linalg.qr(X).Q
    for _ in range(niter):
        X = A.mH @ Q if M is None else A.mH @ Q - M.mH @ Q
        Q = linalg.qr(X).Q
        X = A @ Q if M is None else A @ Q - M @ Q
        Q = linalg.qr(X).Q
    return Q


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,
                M: Tensor | None = None) -> tuple:
    """(U, S, V): a rank-q approximation of the SVD of A - M (exact when its rank is at
    most q)."""
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mH @ A if M is None else Q.mH @ (A - M)
    U, S, Vh = linalg.svd(B, full_matrices=False)
    return Q @ U, S, Vh.mH


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,
                niter: int = 2) -> tuple:
    """(U, S, V) of the (column-centred) data matrix A: V's columns are the principal
    directions."""
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    if not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter)
    mean = A.mean(-2, keepdim=True)
    return svd_lowrank(A - mean, q, niter)
