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
from funcgrad.primitives import decompositions as D, linalg as P
from funcgrad.numpy._creation import asarray
from funcgrad.numpy._linalg import diagonal as _diagonal, matmul, outer as _outer, tensordot
from funcgrad.numpy._reductions import normalize_axis

__all__ = ["LinAlgError", "solve", "inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh",
           "svd", "svdvals", "qr", "pinv", "norm", "vector_norm", "matrix_norm",
           "matrix_power", "multi_dot", "matmul", "tensordot", "outer", "trace", "diagonal",
           "vecdot", "SlogdetResult", "EighResult", "SVDResult", "QRResult"]

LinAlgError = np.linalg.LinAlgError


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


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


def det(a: Any) -> Array:
    """The determinant of square matrices."""
    return P.det(_matrices(a, "det"))


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


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Array:
    """The Moore-Penrose pseudo-inverse; singular values below ``rcond`` (or ``rtol``)
    times the largest count as zero."""
    cut = rcond if rcond is not None else rtol
    return D.pinv(_matrices(a, "pinv", square=False),
                  rcond=None if cut is None else float(cut), hermitian=bool(hermitian))


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
    x = asarray(x)
    if not np.issubdtype(x.dtype, np.inexact):
        x = x.astype(float)
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
    x = asarray(x)
    if not np.issubdtype(x.dtype, np.inexact):
        x = x.astype(float)
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


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Array:
    """sum(conj(x1) * x2) over ``axis``, broadcasting the others."""
    return fnp.sum(P.conj(asarray(x1)) * x2, axis=axis)
