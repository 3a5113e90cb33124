"""funcgrad.scipy.linalg: scipy.linalg, differentiable.

The solvers and factorisations new here are primitives (`funcgrad.primitives.triangular`:
triangular_solve, lu, solve_banded; `.matrix_functions`: expm, solve_sylvester, sqrtm);
det, inv, solve, eigh, svd, qr and cholesky are `funcgrad.numpy.linalg`'s with scipy's
signatures. Batch dimensions (leading axes) broadcast as in numpy.

scipy's conventions are kept: `cholesky` returns the upper factor by default and reads one
triangle of its input (no symmetrisation, as JAX's), `lu` returns (P, L, U) with a = P L U,
`cho_factor`/`lu_factor` return what `cho_solve`/`lu_solve` take (their unused triangle is
zero rather than scipy's leftover data). ``overwrite_*`` and ``check_finite`` are accepted
and ignored (Arrays are immutable; values are not checked).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.numpy import linalg as _np_linalg
from funcgrad.primitives import arrays as A, matrix_functions as M, triangular as T
from funcgrad.primitives.kernels.scipy_linalg import (permutation_to_pivots,
                                                      pivots_to_permutation)
from funcgrad.primitives.control import stop_gradient
from funcgrad.primitives.linalg import mT

__all__ = ["LinAlgError", "solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu",
           "lu_factor", "lu_solve", "expm", "expm_frechet", "sqrtm", "solve_sylvester",
           "solve_banded", "block_diag", "eigh", "eigvalsh", "svd", "svdvals", "det", "inv",
           "solve", "qr", "pinv", "norm"]

LinAlgError = np.linalg.LinAlgError
det = _np_linalg.det
inv = _np_linalg.inv
pinv = _np_linalg.pinv
norm = _np_linalg.norm
svdvals = _np_linalg.svdvals

_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


def _square(a: Any, name: str) -> Array:
    a = fnp.asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: expected square matrices (..., M, M), got shape {a.shape}")
    return a


def _as_columns(a: Array, b: Any, name: str) -> tuple:
    """(b as (..., M, K), whether it was a vector): a vector when b.ndim == a.ndim - 1,
    as in JAX (scipy: b of shape (M,))."""
    b = fnp.asarray(b)
    vector = b.ndim == a.ndim - 1
    if vector:
        b = fnp.expand_dims(b, -1)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ValueError(f"{name}: shapes of a {a.shape} and b "
                         f"{b.shape[:-1] if vector else b.shape} are incompatible: b needs "
                         f"{a.shape[-1]} rows")
    return b, vector


def _back(x: Array, vector: bool) -> Array:
    return fnp.squeeze(x, -1) if vector else x


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = True) -> Array:
    """x with op(a) x = b for the lower (or upper) triangle of a; op is a (trans 0 or 'N'),
    a^T (1, 'T') or a^H (2, 'C'). Only that triangle is read (and differentiated)."""
    if trans not in _TRANS:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2 or 'N', 'T', 'C', got "
                         f"{trans!r}")
    a = _square(a, "solve_triangular")
    b, vector = _as_columns(a, b, "solve_triangular")
    transpose, conjugate = _TRANS[trans]
    return _back(T.triangular_solve(a, b, lower=bool(lower), transpose_a=transpose,
                                    conjugate_a=conjugate, unit_diagonal=bool(unit_diagonal)),
                 vector)


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Array:
    """The Cholesky factor: upper U with a = U^H U (default), or lower L with a = L L^H;
    reads the corresponding triangle of a."""
    return _np_linalg.cholesky(_square(a, "cholesky"), upper=not lower,
                               symmetrize_input=False)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple:
    """(c, lower) for `cho_solve`: c the Cholesky factor (zero in its other triangle)."""
    return cholesky(a, lower=lower), bool(lower)


def cho_solve(c_and_lower: tuple, b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Array:
    """x with a x = b, given ``(c, lower) = cho_factor(a)``."""
    c, lower = c_and_lower
    c = _square(c, "cho_solve")
    b, vector = _as_columns(c, b, "cho_solve")
    if lower:  # a = L L^H
        y = T.triangular_solve(c, b, lower=True, transpose_a=False, conjugate_a=False,
                               unit_diagonal=False)
        x = T.triangular_solve(c, y, lower=True, transpose_a=True, conjugate_a=True,
                               unit_diagonal=False)
    else:  # a = U^H U
        y = T.triangular_solve(c, b, lower=False, transpose_a=True, conjugate_a=True,
                               unit_diagonal=False)
        x = T.triangular_solve(c, y, lower=False, transpose_a=False, conjugate_a=False,
                               unit_diagonal=False)
    return _back(x, vector)


def _permutation_matrix(perm: Array, dtype: Any) -> Array:
    """P with P[perm[i], i] = 1: a = P L U when a[perm] = L U."""
    m = perm.shape[-1]
    rows = np.asarray(perm.to_numpy())[..., :, None] == np.arange(m)
    return fnp.asarray(np.swapaxes(rows, -1, -2).astype(dtype))


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True, p_indices: bool = False) -> tuple:
    """(P, L, U) with a = P @ L @ U, L unit lower (M, K), U upper (K, N), K = min(M, N);
    (P @ L, U) with ``permute_l``; with ``p_indices`` P is the row-index vector p with
    a = (L @ U)[p]."""
    a = fnp.asarray(a)
    if a.ndim < 2:
        raise ValueError(f"lu: expected a matrix (..., M, N), got shape {a.shape}")
    l, u, perm = T.lu(a)
    if permute_l:
        return A.unpermute_rows(l, perm), u
    if p_indices:
        return fnp.argsort(perm, axis=-1), l, u
    return _permutation_matrix(perm, l.dtype), l, u


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple:
    """(lu, piv) as LAPACK's getrf: L's strict lower triangle and U packed in one (M, N)
    matrix, and the row interchanges piv (row i was swapped with row piv[i])."""
    a = fnp.asarray(a)
    if a.ndim < 2:
        raise ValueError(f"lu_factor: expected a matrix (..., M, N), got shape {a.shape}")
    l, u, perm = T.lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    strict = fnp.tril(l, -1)
    if n > k:
        strict = fnp.concatenate([strict, fnp.zeros_like(u[..., :, k:])], axis=-1)
    if m > k:
        u = fnp.concatenate([u, fnp.zeros_like(strict[..., k:, :])], axis=-2)
    piv = permutation_to_pivots(np.asarray(perm.to_numpy()), k)
    return strict + u, fnp.asarray(piv)


def lu_solve(lu_and_piv: tuple, b: Any, trans: Any = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Array:
    """x with a x = b (trans 0), a^T x = b (1) or a^H x = b (2), given
    ``(lu, piv) = lu_factor(a)`` of a square a."""
    if trans not in _TRANS:
        raise ValueError(f"lu_solve: trans must be 0, 1, 2 or 'N', 'T', 'C', got {trans!r}")
    packed, piv = lu_and_piv
    packed = _square(packed, "lu_solve")
    b, vector = _as_columns(packed, b, "lu_solve")
    perm = fnp.asarray(pivots_to_permutation(np.asarray(fnp.asarray(piv).to_numpy()),
                                             packed.shape[-1]))
    transpose, conjugate = _TRANS[trans]
    flags = dict(transpose_a=transpose, conjugate_a=conjugate)
    if not transpose:  # L U x = b[perm]
        y = T.triangular_solve(packed, A.permute_rows(b, perm), lower=True,
                               unit_diagonal=True, **flags)
        x = T.triangular_solve(packed, y, lower=False, unit_diagonal=False, **flags)
    else:  # op(U) op(L) P^T x = b
        y = T.triangular_solve(packed, b, lower=False, unit_diagonal=False, **flags)
        x = A.unpermute_rows(T.triangular_solve(packed, y, lower=True, unit_diagonal=True,
                                                 **flags), perm)
    return _back(x, vector)


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Array:
    """The matrix exponential; its derivative is the Frechet derivative (`expm_frechet`).
    ``upper_triangular`` and ``max_squarings`` (JAX's) are accepted and not needed."""
    return M.expm(_square(A, "expm"))


def expm_frechet(A: Any, E: Any, method: Any = None, compute_expm: bool = True,
                 check_finite: bool = True) -> Any:
    """(expm(A), L(A, E)) or, without ``compute_expm``, the Frechet derivative L(A, E) of
    expm at A in the direction E alone."""
    A, E = _square(A, "expm_frechet"), _square(E, "expm_frechet")
    frechet = M.expm_frechet(A, E)
    return (M.expm(A), frechet) if compute_expm else frechet


def sqrtm(A: Any, disp: bool = True, blocksize: int = 64) -> Any:
    """The principal square root; with ``disp=False`` also scipy's error estimate
    ||X @ X - A||_F / ||A||_F (not differentiated)."""
    A = _square(A, "sqrtm")
    x = M.sqrtm(A)
    if disp:
        return x
    residual = fnp.linalg.norm(fnp.matmul(x, x) - A) / fnp.linalg.norm(A)
    return x, stop_gradient(residual)


def solve_sylvester(a: Any, b: Any, q: Any) -> Array:
    """X with a X + X b = q (a (M, M), b (N, N), q (M, N))."""
    a, b, q = _square(a, "solve_sylvester"), _square(b, "solve_sylvester"), fnp.asarray(q)
    if q.ndim < 2 or q.shape[-2:] != (a.shape[-1], b.shape[-1]):
        raise ValueError(f"solve_sylvester: q must have shape ({a.shape[-1]}, "
                         f"{b.shape[-1]}) for a {a.shape} and b {b.shape}, got {q.shape}")
    return M.solve_sylvester(a, b, q)


def solve_banded(l_and_u: Sequence[int], ab: Any, b: Any, overwrite_ab: bool = False,
                 overwrite_b: bool = False, check_finite: bool = True) -> Array:
    """x with a x = b for the banded a stored as ab: a[i, j] = ab[u + i - j, j]."""
    lower, upper = (int(v) for v in l_and_u)
    ab, b = fnp.asarray(ab), fnp.asarray(b)
    if ab.ndim != 2 or lower + upper + 1 != ab.shape[0]:
        raise ValueError("invalid values for the number of lower and upper diagonals: "
                         f"l+u+1 ({lower + upper + 1}) does not equal ab.shape[0] "
                         f"({ab.shape[0] if ab.ndim else ab.shape})")
    vector = b.ndim == 1
    if vector:
        b = fnp.expand_dims(b, -1)
    if b.ndim != 2 or b.shape[0] != ab.shape[-1]:
        raise ValueError(f"shapes of ab {ab.shape} and b {b.shape} are incompatible")
    return _back(T.solve_banded(ab, b, lower=lower, upper=upper), vector)


def block_diag(*arrs: Any) -> Array:
    """The block-diagonal matrix of the given blocks (0-D and 1-D arguments are rows)."""
    blocks = [fnp.atleast_2d(fnp.asarray(a)) for a in arrs]
    high = [k for k, blk in enumerate(blocks) if blk.ndim > 2]
    if high:
        raise ValueError(f"arguments in the following positions have dimension greater "
                         f"than 2: {high}")
    if not blocks:
        return fnp.zeros((1, 0))
    width = sum(blk.shape[1] for blk in blocks)
    rows, left = [], 0
    for blk in blocks:
        right = width - left - blk.shape[1]
        rows.append(fnp.pad(blk, ((0, 0), (left, right))))
        left += blk.shape[1]
    dtype = np.result_type(*[blk.dtype for blk in blocks])
    return fnp.concatenate([r.astype(dtype) for r in rows], axis=0)


def eigh(a: Any, b: Any = None, *, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, type: int = 1,
         check_finite: bool = True, subset_by_index: Any = None, subset_by_value: Any = None,
         driver: Any = None, symmetrize_input: bool = True) -> Any:
    """Eigenvalues (ascending) and eigenvectors of a Hermitian a, or of the generalised
    problem a v = w b v (type 1) for a positive definite b, with v^H b v = I.
    ``subset_by_index=(lo, hi)`` keeps eigenvalues lo..hi inclusive."""
    if type != 1:
        raise NotImplementedError(f"eigh: only type=1 (a v = w b v) is implemented, got "
                                  f"type={type}")
    if subset_by_value is not None:
        raise NotImplementedError("eigh: subset_by_value selects a data-dependent number of "
                                  "eigenvalues; use subset_by_index")
    uplo = "L" if lower else "U"
    a = _square(a, "eigh")
    if b is None:
        w, v = _np_linalg.eigh(a, UPLO=uplo, symmetrize_input=symmetrize_input)
    else:
        chol = _np_linalg.cholesky(_square(b, "eigh"), symmetrize_input=symmetrize_input)
        left = T.solve_triangular_of(chol, a, lower=True)  # L^-1 a
        c = fnp.conj(mT(T.solve_triangular_of(chol, fnp.conj(mT(left)), lower=True)))
        w, v = _np_linalg.eigh(c, UPLO=uplo, symmetrize_input=symmetrize_input)
        v = T.triangular_solve(chol, v, lower=True, transpose_a=True, conjugate_a=True,
                               unit_diagonal=False)
    if subset_by_index is not None:
        lo, hi = (int(i) for i in subset_by_index)
        w, v = w[..., lo:hi + 1], v[..., lo:hi + 1]
    return w if eigvals_only else (w, v)


def eigvalsh(a: Any, b: Any = None, *, lower: bool = True, **kwargs: Any) -> Array:
    """The eigenvalues of `eigh` alone."""
    return eigh(a, b, lower=lower, eigvals_only=True, **kwargs)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Any:
    """(U, s, Vh) with a = U diag(s) Vh; s alone without ``compute_uv``."""
    out = _np_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> Any:
    """(Q, R) with mode 'full' (Q square, scipy's default) or 'economic'; R alone with
    'r'. Column pivoting is not implemented (its permutation is data-dependent)."""
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not implemented")
    modes = {"full": "complete", "economic": "reduced", "r": "r"}
    if mode not in modes:
        raise ValueError(f"qr: mode must be 'full', 'economic' or 'r', got {mode!r}")
    out = _np_linalg.qr(a, mode=modes[mode] if mode != "r" else "complete")
    return (out[1],) if mode == "r" else tuple(out)


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, check_finite: bool = True, assume_a: Any = None,
          transposed: bool = False) -> Array:
    """x with a x = b (a^T x = b with ``transposed``). ``assume_a``: 'gen' (default),
    'sym'/'her'/'pos' (only the ``lower`` (or upper) triangle is read, 'pos' through
    Cholesky), 'lower triangular'/'upper triangular', 'diagonal'."""
    a = _square(a, "solve")
    b, vector = _as_columns(a, b, "solve")
    if transposed:
        a = mT(a)
    kind = assume_a or "gen"
    if kind in ("gen", "general"):
        x = _np_linalg.solve(a, b)
    elif kind in ("sym", "symmetric", "her", "hermitian", "pos", "positive definite"):
        x = _solve_hermitian(a, b, lower, conjugate=kind in ("her", "hermitian", "pos",
                                                             "positive definite"),
                             positive=kind in ("pos", "positive definite"))
    elif kind in ("lower triangular", "upper triangular"):
        x = T.triangular_solve(a, b, lower=kind.startswith("lower"), transpose_a=False,
                               conjugate_a=False, unit_diagonal=False)
    elif kind == "diagonal":
        x = b / fnp.expand_dims(fnp.diagonal(a, 0, -2, -1), -1)
    else:
        raise ValueError(f"solve: assume_a {assume_a!r} is not one of 'gen', 'sym', 'her', "
                         "'pos', 'lower triangular', 'upper triangular', 'diagonal'")
    return _back(x, vector)


def _solve_hermitian(a: Array, b: Array, lower: bool, conjugate: bool,
                     positive: bool) -> Array:
    """Solve with the symmetric (Hermitian) matrix held in one triangle of a."""
    tri = fnp.tril(a) if lower else fnp.triu(a)
    other = mT(fnp.tril(a, -1) if lower else fnp.triu(a, 1))
    full = tri + (fnp.conj(other) if conjugate else other)
    if positive:
        return cho_solve(cho_factor(full, lower=True), b)
    return _np_linalg.solve(full, b)
