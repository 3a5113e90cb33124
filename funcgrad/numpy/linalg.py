"""funcgrad.numpy.linalg: numpy.linalg, differentiable.

Solvers and decompositions are primitives (`funcgrad.primitives.linalg` and
`decompositions`); norms, powers and chains of products are composed from them.

As in JAX, `cholesky`, `eigh` and `eigvalsh` symmetrise their input by default
(``symmetrize_input=True``: they factor (a + a^H) / 2, equal to a for the Hermitian inputs
they are meant for), which makes their gradients Hermitian; with
``symmetrize_input=False`` they read one triangle, as numpy does. `svd` with
``full_matrices=True`` (numpy's default) on a non-square matrix has no unique derivative:
differentiating it raises and says to pass ``full_matrices=False``.
"""
from __future__ import annotations

import operator
from typing import Any, NamedTuple, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad._promotion import INEXACT, computed_dtype
from funcgrad.core import is_inexact
from funcgrad.primitives import decompositions as D, linalg as P
from funcgrad.numpy._creation import asarray
from funcgrad.numpy._linalg import (diagonal as _diagonal, matmul, outer as _outer, tensordot,
                                    vecdot)
from funcgrad.numpy._reductions import axis_index, normalize_axis

__all__ = ["LinAlgError", "solve", "inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh",
           "eig", "eigvals", "svd", "svdvals", "qr", "pinv", "lstsq", "matrix_rank", "cond",
           "tensorinv", "tensorsolve", "norm", "vector_norm", "matrix_norm", "matrix_power",
           "multi_dot", "matmul", "tensordot", "outer", "trace", "diagonal", "vecdot",
           "cross", "matrix_transpose", "SlogdetResult", "EighResult", "EigResult",
           "SVDResult", "QRResult", "LstsqResult"]

LinAlgError = np.linalg.LinAlgError


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class LstsqResult(NamedTuple):
    x: Array
    residuals: Array
    rank: Array
    singular_values: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


def _matrices(a: Any, name: str, square: bool = True) -> Array:
    """a as an Array of (stacks of) matrices, square if asked, else a clear error."""
    a = asarray(a)
    if a.ndim < 2:
        raise LinAlgError(f"{name}: expected a matrix (or a stack of matrices in the last "
                          f"two axes), got an array of shape {a.shape}")
    if square and a.shape[-1] != a.shape[-2]:
        hint = "; for a non-square matrix use pinv" if name in ("inv", "solve") else ""
        raise LinAlgError(f"{name}: expected square matrices in the last two axes, got "
                          f"shape {a.shape}{hint}")
    return a


def _hermitian(a: Array, symmetrize: bool) -> Array:
    return (a + P.H(a)) * 0.5 if symmetrize else a


def solve(a: Any, b: Any) -> Array:
    """x with a @ x = b. b is a vector (M,) or a stack of matrices (..., M, K) (numpy 2's
    rule); batch dimensions broadcast."""
    a, b = _matrices(a, "solve"), asarray(b)
    n = a.shape[-1]
    vector = b.ndim == 1
    if vector:
        b = fnp.reshape(b, (-1, 1))
    if b.ndim < 2 or b.shape[-2] != n:
        raise ValueError(f"solve: a of shape {a.shape} needs b of shape ({n},) or "
                         f"(..., {n}, K), got {b.shape if not vector else (b.shape[0],)}")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = fnp.broadcast_to(a, batch + a.shape[-2:])
    b = fnp.broadcast_to(b, batch + b.shape[-2:])
    x = P.solve(a, b)
    return P.squeeze(x, -1) if vector else x


def inv(a: Any) -> Array:
    """The inverse of square matrices."""
    return P.inv(_matrices(a, "inv"))


def _inexact(x: Array) -> Array:
    """``x`` in the dtype jax.numpy computes it in: integers and booleans as the default
    inexact dtype (float32 from int32 with x64 off), half floats as they are."""
    return x if is_inexact(x.dtype) else x.astype(computed_dtype(x, rule=INEXACT))


def det(a: Any) -> Array:
    """The determinant of square matrices (half floats computed in float32, as LAPACK has
    no half-precision routines, and rounded back)."""
    a = _inexact(_matrices(a, "det"))
    if a.dtype.itemsize < 4:
        return P.det(a.astype(np.float32)).astype(a.dtype)
    return P.det(a)


def slogdet(a: Any) -> SlogdetResult:
    """(sign, log|det|): the determinant without overflow."""
    return SlogdetResult(*P.slogdet(_matrices(a, "slogdet")))


def cholesky(a: Any, /, *, upper: bool = False, symmetrize_input: bool = True) -> Array:
    """The Cholesky factor L (a = L L^H), or U = L^H with ``upper``."""
    a = _hermitian(_matrices(a, "cholesky"), symmetrize_input)
    if not upper:
        return D.cholesky(a)
    return P.H(D.cholesky(P.H(a)))


def _one_triangle(a: Any, UPLO: str, symmetrize: bool, name: str) -> Array:
    if UPLO not in ("L", "U"):
        raise ValueError(f"{name}: UPLO must be 'L' or 'U', got {UPLO!r}")
    a = _hermitian(_matrices(a, name), symmetrize)
    return P.H(a) if UPLO == "U" else a


def eigh(a: Any, UPLO: str = "L", symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of Hermitian matrices."""
    return EighResult(*D.eigh(_one_triangle(a, UPLO, symmetrize_input, "eigh")))


def eigvalsh(a: Any, UPLO: str = "L", symmetrize_input: bool = True) -> Array:
    """The eigenvalues (ascending) of Hermitian matrices."""
    return D.eigvalsh(_one_triangle(a, UPLO, symmetrize_input, "eigvalsh"))


def eig(a: Any) -> EigResult:
    """Eigenvalues and unit eigenvectors (columns) of general square matrices, always
    complex (as in JAX). Differentiable where the eigenvalues are distinct; each
    eigenvector's phase is a convention, so differentiate functions that do not depend on
    it (e.g. abs(v), or v v^-1 products)."""
    return EigResult(*D.eig(_matrices(a, "eig")))


def eigvals(a: Any) -> Array:
    """The eigenvalues of general square matrices (complex)."""
    return D.eigvals(_matrices(a, "eigvals"))


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> SVDResult | Array:
    """(U, S, Vh) with a = U diag(S) Vh, S descending; S alone without ``compute_uv``.
    ``hermitian`` is accepted for numpy compatibility (the general algorithm runs)."""
    a = _matrices(a, "svd", square=False)
    if not compute_uv:
        return D.svdvals(a)
    full = bool(full_matrices) and a.shape[-1] != a.shape[-2]
    return SVDResult(*D.svd(a, full_matrices=full))


def svdvals(x: Any, /) -> Array:
    """The singular values, descending."""
    return D.svdvals(_matrices(x, "svdvals", square=False))


def qr(a: Any, mode: str = "reduced") -> QRResult | Array:
    """The QR factorisation: mode 'reduced' (default), 'complete' or 'r'."""
    a = _matrices(a, "qr", square=False)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    q, r = D.qr(a, full_matrices=mode == "complete" and a.shape[-2] > a.shape[-1])
    return r if mode == "r" else QRResult(q, r)


_UNSET: Any = object()


def _cutoff(rtol: Any) -> Any:
    """A relative cut-off as the pinv primitive's hashable param: a float, or a nested
    tuple for one per matrix of a stack (numpy broadcasts it against the batch)."""
    if isinstance(rtol, Array):
        rtol = rtol.concrete().to_numpy()
    rtol = np.asarray(rtol, dtype=np.float64)
    return float(rtol) if rtol.ndim == 0 else tuple(rtol.tolist())


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _UNSET) -> Array:
    """The Moore-Penrose pseudo-inverse; singular values at most ``rcond`` (or the Array
    API's ``rtol``, which may hold one value per matrix of a stack) times the largest
    count as zero. Defaults: numpy's 1e-15, or max(M, N) * eps when rtol=None is passed."""
    a = _matrices(a, "pinv", square=False)
    if rcond is not None and rtol is not _UNSET and rtol is not None:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    cut = rcond if rcond is not None else (None if rtol is _UNSET else rtol)
    if cut is None:
        cut = 1e-15 if rtol is _UNSET else max(a.shape[-2:]) * np.finfo(a.dtype).eps
    return D.pinv(a, rcond=_cutoff(cut), hermitian=bool(hermitian))


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *,
                rtol: Any = None) -> Array:
    """The number of singular values above ``tol`` (absolute) or ``rtol`` (relative to the
    largest; default max(M, N) * eps), per matrix."""
    A = asarray(A)
    if A.ndim < 2:
        return fnp.asarray(int(bool(fnp.any(A != 0))))
    if tol is not None and rtol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    s = D.svdvals(A)
    if tol is None:
        rel = max(A.shape[-2:]) * np.finfo(s.dtype).eps if rtol is None else rtol
        limit = fnp.max(s, axis=-1, keepdims=True, initial=0) * fnp.expand_dims(
            asarray(rel), -1)
    else:
        limit = fnp.expand_dims(asarray(tol), -1)
    return fnp.count_nonzero(s > limit, axis=-1)


def lstsq(a: Any, b: Any, rcond: Any = None) -> LstsqResult:
    """The least-squares solution x of a @ x = b (a 2-D; b (M,) or (M, K)), with the
    residuals (when a has full column rank and M > N), the rank of a and its singular
    values. x is differentiable in a and b (through the pseudo-inverse)."""
    a, b = _matrices(a, "lstsq", square=False), asarray(b)
    if a.ndim != 2:
        raise LinAlgError(f"lstsq: a must be 2-D, got shape {a.shape}")
    m, n = a.shape
    if b.ndim not in (1, 2) or b.shape[0] != m:
        raise LinAlgError(f"Incompatible dimensions: a is {a.shape}, b is {b.shape}")
    dtype = np.result_type(a.dtype, b.dtype, np.float32 if a.dtype == np.float32 else 1.0)
    a, b = a.astype(dtype), b.astype(dtype)
    cut = max(m, n) * np.finfo(dtype).eps if rcond is None else rcond
    x = matmul(D.pinv(a, rcond=_cutoff(cut), hermitian=False), b)
    s = D.svdvals(a)
    s_raw = np.asarray(s.concrete().to_numpy())
    rank = int(np.count_nonzero(s_raw > cut * (s_raw.max() if s_raw.size else 0.0)))
    if rank == n and m > n:
        resid = fnp.sum(P.abs2(b - matmul(a, x)), axis=0)
        resid = fnp.reshape(resid, (1,)) if b.ndim == 1 else resid
    else:
        resid = fnp.zeros((0,), P.real(x).dtype)
    return LstsqResult(x, resid, fnp.asarray(rank), s)


def cond(x: Any, p: Any = None) -> Array:
    """The condition number of matrices in the norm ``p`` (None/2: the ratio of the
    extreme singular values; -2 its inverse; others norm(x) * norm(inv(x)))."""
    x = _matrices(x, "cond", square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = D.svdvals(x)
        big, small = s[..., 0], s[..., -1]
        return big / small if p != -2 else small / big
    return norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))


def tensorinv(a: Any, ind: int = 2) -> Array:
    """The inverse of a tensor under tensordot over its first ``ind`` axes."""
    a = asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    old = a.shape
    rows = int(np.prod(old[:ind]))
    return fnp.reshape(inv(fnp.reshape(a, (rows, -1))), old[ind:] + old[:ind])


def tensorsolve(a: Any, b: Any, axes: Any = None) -> Array:
    """x with tensordot(a, x, x.ndim) = b; ``axes`` of a are moved to the end first."""
    a, b = asarray(a), asarray(b)
    if axes is not None:
        order = [k for k in range(a.ndim) if k not in normalize_axis(axes, a.ndim)]
        a = fnp.transpose(a, order + list(normalize_axis(axes, a.ndim)))
    old = a.shape[-(a.ndim - b.ndim):] if a.ndim > b.ndim else ()
    size = int(np.prod(old))
    if a.size != size * size:
        raise LinAlgError("Input arrays must satisfy the requirement "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    x = solve(fnp.reshape(a, (size, size)), fnp.ravel(b))
    return fnp.reshape(x, old)


# -- norms -------------------------------------------------------------------------------

def _vector_norm(x: Array, ord: Any, axis: tuple, keepdims: bool) -> Array:
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
    if ord is None or ord == 2:
        return fnp.sqrt(fnp.sum(P.abs2(x), axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return fnp.amax(fnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return fnp.amin(fnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return fnp.sum(x != 0, axis=axis, keepdims=keepdims).astype(P.real(x).dtype)
    if ord == 1:
        return fnp.sum(fnp.abs(x), axis=axis, keepdims=keepdims)
    return fnp.sum(fnp.abs(x) ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _matrix_norm(x: Array, ord: Any, axes: tuple, keepdims: bool) -> Array:
    r, c = axes
    kept = list(x.shape)
    kept[r] = kept[c] = 1
    if ord in (None, "fro"):
        out = fnp.sqrt(fnp.sum(P.abs2(x), axis=axes, keepdims=True))
    elif ord in ("nuc", 2, -2):
        s = D.svdvals(fnp.moveaxis(x, (r, c), (-2, -1)))
        pick = {"nuc": fnp.sum, 2: fnp.amax, -2: fnp.amin}[ord]
        out = fnp.reshape(pick(s, axis=-1), tuple(kept))
    elif ord in (1, -1, np.inf, -np.inf):
        summed, picked = (r, c) if ord in (1, -1) else (c, r)
        pick = fnp.amax if ord > 0 else fnp.amin
        out = pick(fnp.sum(fnp.abs(x), axis=summed, keepdims=True), axis=picked,
                   keepdims=True)
    else:
        raise ValueError(f"norm: invalid norm order {ord!r} for matrices")
    if keepdims:
        return out
    return fnp.reshape(out, tuple(n for i, n in enumerate(x.shape) if i not in axes))


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Array:
    """numpy's norm: vector norms (ord None/2, 1, inf, -inf, 0, any p) over one axis and
    matrix norms ('fro', 'nuc', 1, -1, 2, -2, inf, -inf) over two."""
    x = _inexact(asarray(x))
    if axis is None:
        if ord is None:
            out = _vector_norm(fnp.ravel(x), None, (0,), False)
            return fnp.reshape(out, (1,) * x.ndim) if keepdims else out
        if x.ndim not in (1, 2):
            raise ValueError(f"norm: with ord={ord!r} and no axis, x must be 1-D or 2-D, "
                             f"got shape {x.shape}")
        axis = tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    norm_axes = tuple(normalize_axis(a, x.ndim)[0] for a in axes)
    if len(norm_axes) == 1:
        return _vector_norm(x, ord, norm_axes, keepdims)
    if len(norm_axes) == 2 and norm_axes[0] != norm_axes[1]:
        return _matrix_norm(x, ord, norm_axes, keepdims)
    raise ValueError(f"norm: axis must name one axis (vector norm) or two different axes "
                     f"(matrix norm), got {axis!r}")


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False,
                ord: Any = 2) -> Array:
    """The vector norm over ``axis`` (None: all axes, as one vector)."""
    x = _inexact(asarray(x))
    axes = normalize_axis(axis, x.ndim)
    if axis is None and not keepdims:
        return _vector_norm(fnp.ravel(x), ord, (0,), False)
    return _vector_norm(x, ord, axes, keepdims)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Array:
    """The matrix norm of the last two axes."""
    x = _matrices(x, "matrix_norm", square=False)
    return norm(x, ord, (-2, -1), keepdims)


# -- products ------------------------------------------------------------------------------

def matrix_power(a: Any, n: int) -> Array:
    """a @ a @ ... (n times); n = 0 gives identities, n < 0 powers of inv(a)."""
    a = _matrices(a, "matrix_power")
    n = operator.index(n)
    if n == 0:
        eye = P.constant(a, np.eye(a.shape[-1], dtype=a.dtype))
        return fnp.broadcast_to(eye, a.shape)
    base = inv(a) if n < 0 else a
    n = abs(n)
    result = None
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def multi_dot(arrays: Sequence) -> Array:
    """matmul of a chain of 2-D arrays (the first and last may be 1-D)."""
    arrays = [asarray(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError("multi_dot: expecting at least two arrays")
    first, last = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first:
        arrays[0] = fnp.reshape(arrays[0], (1, -1))
    if last:
        arrays[-1] = fnp.reshape(arrays[-1], (-1, 1))
    for k, x in enumerate(arrays):
        if x.ndim != 2:
            raise ValueError(f"multi_dot: array {k} has shape {x.shape}; only the first "
                             "and last may be 1-D, the others must be 2-D")
    out = arrays[0]
    for x in arrays[1:]:
        out = matmul(out, x)
    if first:
        out = P.squeeze(out, 0)
    if last:
        out = P.squeeze(out, -1)
    return out


def outer(x1: Any, x2: Any, /) -> Array:
    """The outer product of two vectors (numpy.linalg's 1-D form)."""
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer: expected 1-D inputs, got shapes {x1.shape} and {x2.shape}")
    return _outer(x1, x2)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """The traces of the last two axes."""
    return fnp.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def diagonal(x: Any, /, *, offset: int = 0) -> Array:
    """The diagonals of the last two axes."""
    return _diagonal(x, offset, -2, -1)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Array:
    """The cross product of 3-vectors along ``axis``, broadcasting the other axes."""
    x1, x2 = asarray(x1), asarray(x2)
    ax = axis_index(axis)
    for x in (x1, x2):
        if not -x.ndim <= ax < x.ndim or x.shape[ax] != 3:
            raise ValueError(f"cross: both inputs need length 3 along axis {axis}, got "
                             f"shapes {x1.shape} and {x2.shape}")
    if ax >= 0 and x1.ndim != x2.ndim:
        raise ValueError("cross: a non-negative axis needs inputs of one number of "
                         "dimensions; use a negative axis")
    return fnp.cross(x1, x2, axisa=ax, axisb=ax, axisc=ax)


def matrix_transpose(x: Any, /) -> Array:
    """x with its last two axes swapped."""
    return fnp.matrix_transpose(x)
