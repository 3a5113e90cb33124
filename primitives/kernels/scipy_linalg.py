"""Kernels of the scipy.linalg primitives: LAPACK through scipy when it is installed (one
call per matrix of a batch), numpy fallbacks otherwise.

The fallbacks are the textbook algorithms, vectorised over batches: a triangular system is
solved as a dense one on the masked triangle, LU is Doolittle's elimination with partial
pivoting, expm is Higham's scaling and squaring with the [13/13] Pade approximant
(Higham 2005), sqrtm goes through an eigendecomposition (so it needs a diagonalisable
matrix), Sylvester's equation through its Kronecker form. They are for environments
without scipy; scipy's LAPACK routines are faster and more robust.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .special import on_host

try:
    import scipy.linalg as _scipy_linalg
except ImportError:  # scipy is optional: the numpy fallbacks take over
    _scipy_linalg = None

__all__ = ["per_matrix", "triangular_solve", "lu", "pivots_to_permutation",
           "permutation_to_pivots", "expm", "sqrtm", "solve_sylvester", "solve_banded"]


def per_matrix(fn: Callable, *mats: np.ndarray, outputs: int = 1) -> Any:
    """``fn`` applied to each matrix of broadcast batches (the last two axes are the
    matrices), results stacked back into the batch shape."""
    batch = np.broadcast_shapes(*(m.shape[:-2] for m in mats))
    mats = [np.broadcast_to(m, batch + m.shape[-2:]) for m in mats]
    if not batch:
        return fn(*mats)
    if 0 in batch:  # no matrices: the shapes of the results, from identity stand-ins
        probe = fn(*(np.eye(*m.shape[-2:], dtype=m.dtype) for m in mats))
        probes = (probe,) if outputs == 1 else probe
        empty = tuple(np.empty(batch + p.shape, dtype=p.dtype) for p in probes)
        return empty[0] if outputs == 1 else empty
    results = [fn(*(m[i] for m in mats)) for i in np.ndindex(batch)]
    if outputs == 1:
        return np.stack(results).reshape(batch + results[0].shape)
    return tuple(np.stack([r[k] for r in results]).reshape(batch + results[0][k].shape)
                 for k in range(outputs))


# -- triangular solves --------------------------------------------------------------------

def _triangle(a: np.ndarray, lower: bool, unit_diagonal: bool) -> np.ndarray:
    n = a.shape[-1]
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - t * np.eye(n, dtype=a.dtype) + np.eye(n, dtype=a.dtype)
    return t


def _triangular_solve(a: np.ndarray, b: np.ndarray, lower: bool, transpose_a: bool,
                      conjugate_a: bool, unit_diagonal: bool) -> np.ndarray:
    """x with op(A) x = b, A the lower (or upper) triangle of a, op(A) one of A, A^T,
    conj(A), A^H."""
    if _scipy_linalg is None:
        t = _triangle(a, lower, unit_diagonal)
        t = np.conj(t) if conjugate_a else t
        return np.linalg.solve(np.swapaxes(t, -1, -2) if transpose_a else t, b)
    trans = (2 if conjugate_a else 1) if transpose_a else 0
    base = np.conj(a) if conjugate_a and not transpose_a else a
    dtype = np.result_type(a, b)

    def one(m: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        return _scipy_linalg.solve_triangular(m, rhs, trans=trans, lower=lower,
                                              unit_diagonal=unit_diagonal)
    return per_matrix(one, base, b).astype(dtype, copy=False)


triangular_solve = on_host(_triangular_solve)


# -- LU with partial pivoting ---------------------------------------------------------------

def pivots_to_permutation(piv: np.ndarray, m: int) -> np.ndarray:
    """LAPACK's row interchanges (row i swapped with row piv[i], in turn) as the
    permutation perm with a[perm] = L U."""
    piv = np.asarray(piv)
    perm = np.empty(piv.shape[:-1] + (m,), dtype=np.intp)
    for idx in np.ndindex(piv.shape[:-1]):
        order = list(range(m))
        for i, j in enumerate(piv[idx]):
            order[i], order[j] = order[j], order[i]
        perm[idx] = order
    return perm


def permutation_to_pivots(perm: np.ndarray, k: int) -> np.ndarray:
    """The inverse of `pivots_to_permutation`: k LAPACK interchanges producing ``perm``."""
    perm = np.asarray(perm)
    m = perm.shape[-1]
    piv = np.empty(perm.shape[:-1] + (k,), dtype=np.int32)
    for idx in np.ndindex(perm.shape[:-1]):
        order = list(range(m))  # order[i]: the original row now at position i
        where = list(range(m))  # where[r]: the position of original row r
        for i in range(k):
            j = where[perm[idx][i]]
            piv[idx][i] = j
            order[i], order[j] = order[j], order[i]
            where[order[i]], where[order[j]] = i, j
    return piv


def _lu_doolittle(a: np.ndarray) -> tuple:
    """(L, U, perm) by elimination with partial pivoting, over the batch at once."""
    a = np.array(a, dtype=a.dtype if a.dtype.kind in "fc" else np.float64)
    *batch, m, n = a.shape
    k = min(m, n)
    perm = np.broadcast_to(np.arange(m), (*batch, m)).copy()
    rows = tuple(np.indices(batch)) if batch else ()
    for j in range(k):
        p = j + np.argmax(np.abs(a[..., j:, j]), axis=-1)
        pj = np.full_like(p, j)
        a[(*rows, pj)], a[(*rows, p)] = a[(*rows, p)].copy(), a[(*rows, pj)].copy()
        perm[(*rows, pj)], perm[(*rows, p)] = perm[(*rows, p)].copy(), perm[(*rows, pj)].copy()
        pivot = a[..., j, j]
        safe = np.where(pivot == 0, 1, pivot)
        column = a[..., j + 1:, j] / safe[..., None]
        a[..., j + 1:, j] = np.where(pivot[..., None] == 0, 0, column)
        a[..., j + 1:, j + 1:] -= a[..., j + 1:, j, None] * a[..., j, None, j + 1:]
    lower = np.tril(a[..., :, :k], -1) + np.eye(m, k, dtype=a.dtype)
    return lower, np.triu(a[..., :k, :]), perm


def _lu(a: np.ndarray) -> tuple:
    """(L, U, perm) with a[..., perm, :] = L U: L (m, k) unit lower, U (k, n) upper."""
    if _scipy_linalg is None or a.size == 0:
        return _lu_doolittle(a)
    m, n = a.shape[-2:]
    k = min(m, n)

    def one(mat: np.ndarray) -> tuple:
        packed, piv = _scipy_linalg.lu_factor(mat, check_finite=False)
        return (np.tril(packed[:, :k], -1) + np.eye(m, k, dtype=packed.dtype),
                np.triu(packed[:k, :]), pivots_to_permutation(piv[:k], m))
    return per_matrix(one, a, outputs=3)


lu = on_host(_lu)


# -- the matrix exponential, square root and Sylvester's equation -------------------------

_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152


def _expm_pade(a: np.ndarray) -> np.ndarray:
    """Scaling and squaring with the [13/13] Pade approximant (Higham 2005)."""
    a = np.asarray(a, dtype=np.result_type(a, np.float64))
    norm = np.max(np.sum(np.abs(a), axis=-2), axis=-1, initial=0.0)
    s = int(max(0, math.ceil(math.log2(np.max(norm, initial=0.0) / _THETA13)))) \
        if np.max(norm, initial=0.0) > _THETA13 else 0
    a = a / 2.0 ** s
    b = _PADE13
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4
             + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * eye
    out = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        out = out @ out
    return out


def _expm(a: np.ndarray) -> np.ndarray:
    if _scipy_linalg is None or a.size == 0:
        return _expm_pade(a)
    return per_matrix(_scipy_linalg.expm, a)


expm = on_host(_expm)


def _sqrtm(a: np.ndarray) -> np.ndarray:
    """The principal square root; real for a real matrix without negative real
    eigenvalues (complex otherwise, as scipy's)."""
    if _scipy_linalg is not None and a.size:
        return per_matrix(lambda m: np.asarray(_scipy_linalg.sqrtm(m)), a)
    w, v = np.linalg.eig(a)
    out = (v * np.sqrt(w.astype(complex))[..., None, :]) @ np.linalg.inv(v)
    scale = max(1.0, float(np.abs(out).max(initial=0.0)))
    if a.dtype.kind != "c" and np.abs(out.imag).max(initial=0.0) <= 1e-12 * scale:
        return out.real.astype(np.result_type(a.dtype, np.float64))
    return out


sqrtm = on_host(_sqrtm)


def _solve_sylvester(a: np.ndarray, b: np.ndarray, q: np.ndarray) -> np.ndarray:
    """x with a x + x b = q (Bartels-Stewart through scipy, else the Kronecker system)."""
    dtype = np.result_type(a, b, q, np.float64)
    if _scipy_linalg is not None and q.size:
        return per_matrix(_scipy_linalg.solve_sylvester, a, b, q).astype(dtype, copy=False)
    n, m = q.shape[-2:]
    # vec(a x + x b) = (I_m (x) a + b^T (x) I_n) vec(x), vec stacking columns
    big = (np.kron(np.eye(m), a) + np.kron(np.swapaxes(b, -1, -2), np.eye(n)))
    vec = np.swapaxes(q, -1, -2).reshape(q.shape[:-2] + (n * m, 1))
    x = np.linalg.solve(big, vec).reshape(q.shape[:-2] + (m, n))
    return np.swapaxes(x, -1, -2).astype(dtype, copy=False)


solve_sylvester = on_host(_solve_sylvester)


def band_to_dense(ab: np.ndarray, lower: int, upper: int) -> np.ndarray:
    """The (n, n) matrix whose band is stored in ab: a[i, j] = ab[upper + i - j, j]."""
    n = ab.shape[-1]
    a = np.zeros((n, n), dtype=ab.dtype)
    for r in range(lower + upper + 1):
        offset = upper - r  # the diagonal j - i of band row r
        j = np.arange(max(0, offset), min(n, n + offset))
        a[j - offset, j] = ab[r, j]
    return a


def _solve_banded(ab: np.ndarray, b: np.ndarray, lower: int, upper: int) -> np.ndarray:
    dtype = np.result_type(ab, b, np.float64)
    if _scipy_linalg is not None:
        return _scipy_linalg.solve_banded((lower, upper), ab, b).astype(dtype, copy=False)
    return np.linalg.solve(band_to_dense(ab, lower, upper), b).astype(dtype, copy=False)


solve_banded = on_host(_solve_banded)
