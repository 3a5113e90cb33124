"""Triangular and banded solvers and the LU factorisation (scipy.linalg's), as primitives.

| primitive         | derivative (VJP: JAX's transpose convention, no conjugation)          |
|-------------------|-----------------------------------------------------------------------|
| triangular_solve  | x = op(A)^-1 b: gb = op(A)^-T g, gA = op(-gb x^T) on A's triangle      |
| lu                | a[perm] = L U; X = L^-1 da[perm] U^-1: dL = L tril(X, -1),             |
|                   | dU = triu(X) U (tall and wide matrices: the square leading block, then |
|                   | the remaining rows of L or columns of U)                              |
| solve_banded      | as solve, with A^T and the cotangent of A kept in band storage         |

``op(A)`` is A, A^T, conj(A) or A^H (params ``transpose_a``, ``conjugate_a``); A is the
lower or upper triangle of ``a`` (with ones on the diagonal for ``unit_diagonal``), so the
cotangent of ``a`` is zero outside that triangle. The permutation of `lu` is an integer
output, not differentiated; where two pivot candidates tie, the derivative is the one of
the pivoting LAPACK chose.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.core import Primitive
from .arrays import (concat, expand_dims, permute_rows, pad_axis, stack, sum_last, tril,
                     triu, unpermute_rows)
from .kernels import scipy_linalg as K
from .linalg import conj, constant, matmul, mT
from .samplers import scipy_linalg as samplers
from .select import where

__all__ = ["triangular_solve", "lu", "solve_banded", "solve_triangular_of", "band_transpose"]


# ---------------------------------------------------------------------------------------
# triangular_solve
# ---------------------------------------------------------------------------------------


def _op(m: Any, transpose_a: bool, conjugate_a: bool) -> Any:
    """op(m): m, m^T, conj(m) or m^H. Being an involution up to transposition, op is also
    its own transpose as a linear map (what the VJP of a needs)."""
    m = conj(m) if conjugate_a else m
    return mT(m) if transpose_a else m


def _triangle_mask(a: Any, lower: bool, unit_diagonal: bool) -> Any:
    n = a.shape[-1]
    k = -1 if unit_diagonal else 0
    mask = np.tri(n, n, k, dtype=bool) if lower else ~np.tri(n, n, -k - 1, dtype=bool)
    return constant(a, mask)


def _ts_b(g: Any, a: Any, lower: bool, transpose_a: bool, conjugate_a: bool,
          unit_diagonal: bool) -> Any:
    """op(A)^-T g: the transposed system, with op's transpose flag flipped."""
    return triangular_solve(a, g, lower=lower, transpose_a=not transpose_a,
                            conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)


def _ts_a(g: Any, a: Any, out: Any, lower: bool, transpose_a: bool, conjugate_a: bool,
          unit_diagonal: bool) -> Any:
    gb = _ts_b(g, a, lower, transpose_a, conjugate_a, unit_diagonal)
    ga = _op(-matmul(gb, mT(out)), transpose_a, conjugate_a)
    return where(_triangle_mask(a, lower, unit_diagonal), ga, 0)


def _ts_jvp_a(t: Any, a: Any, out: Any, lower: bool, transpose_a: bool, conjugate_a: bool,
              unit_diagonal: bool) -> Any:
    dm = _op(where(_triangle_mask(a, lower, unit_diagonal), t, 0), transpose_a,
             conjugate_a)
    return -triangular_solve(a, matmul(dm, out), lower=lower, transpose_a=transpose_a,
                             conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)


def _ts_jvp_b(t: Any, a: Any, lower: bool, transpose_a: bool, conjugate_a: bool,
              unit_diagonal: bool) -> Any:
    return triangular_solve(a, t, lower=lower, transpose_a=transpose_a,
                            conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)


triangular_solve = Primitive(
    "triangular_solve", K.triangular_solve, ("a", "b"),
    ("lower", "transpose_a", "conjugate_a", "unit_diagonal"),
    sample=samplers.triangular_solve,
    doc="x with op(A) x = b for the triangle A of a (scipy's solve_triangular).")
triangular_solve.defvjp(_ts_a, _ts_b)
triangular_solve.defjvp(_ts_jvp_a, _ts_jvp_b)


def solve_triangular_of(m: Any, b: Any, lower: bool, transpose: bool = False,
                        unit_diagonal: bool = False) -> Any:
    """m^-1 b (or m^-T b) for a triangular m: the helper the rules below use."""
    return triangular_solve(m, b, lower=lower, transpose_a=transpose, conjugate_a=False,
                            unit_diagonal=unit_diagonal)


# ---------------------------------------------------------------------------------------
# lu
# ---------------------------------------------------------------------------------------


def _right_solve_upper(y: Any, u: Any) -> Any:
    """y U^-1."""
    return mT(solve_triangular_of(u, mT(y), lower=False, transpose=True))


def _square_tangent(da: Any, l: Any, u: Any) -> tuple:
    """(dL, dU) for L U = A, both k x k, and the tangent dA."""
    x = _right_solve_upper(solve_triangular_of(l, da, lower=True, unit_diagonal=True), u)
    return matmul(l, tril(x, -1)), matmul(triu(x), u)


def _square_cotangent(gl: Any, gu: Any, l: Any, u: Any) -> Any:
    """The transpose of `_square_tangent`: L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T."""
    gx = tril(matmul(mT(l), gl), -1) + triu(matmul(gu, mT(u)))
    y = solve_triangular_of(l, gx, lower=True, transpose=True, unit_diagonal=True)
    return mT(solve_triangular_of(u, mT(y), lower=False))


def _lu_jvp(t: Any, a_shape: tuple, out: tuple) -> tuple:
    l, u, perm = out
    m, n = a_shape[-2:]
    da = permute_rows(t, perm)
    if m == n:
        dl, du = _square_tangent(da, l, u)
    elif m > n:  # L = [L1; L2]: L2 U = A2
        dl1, du = _square_tangent(da[..., :n, :], l[..., :n, :], u)
        dl2 = _right_solve_upper(da[..., n:, :] - matmul(l[..., n:, :], du), u)
        dl = concat([dl1, dl2], axis=-2)
    else:  # U = [U1 U2]: L U2 = A2
        dl, du1 = _square_tangent(da[..., :m], l, u[..., :m])
        du2 = solve_triangular_of(l, da[..., m:] - matmul(dl, u[..., m:]), lower=True,
                                  unit_diagonal=True)
        du = concat([du1, du2], axis=-1)
    return dl, du, None


def _lu_vjp(g: tuple, a_shape: tuple, out: tuple) -> Any:
    gl, gu = g[0], g[1]
    l, u, perm = out
    m, n = a_shape[-2:]
    if m == n:
        ga = _square_cotangent(gl, gu, l, u)
    elif m > n:
        ga2 = mT(solve_triangular_of(u, mT(gl[..., n:, :]), lower=False))  # gL2 U^-T
        gu = gu - matmul(mT(l[..., n:, :]), ga2)
        ga = concat([_square_cotangent(gl[..., :n, :], gu, l[..., :n, :], u), ga2], axis=-2)
    else:
        ga2 = solve_triangular_of(l, gu[..., m:], lower=True, transpose=True,
                                  unit_diagonal=True)  # L^-T gU2
        gl = gl - matmul(ga2, mT(u[..., m:]))
        ga = concat([_square_cotangent(gl, gu[..., :m], l, u[..., :m]), ga2], axis=-1)
    return unpermute_rows(ga, perm)


lu = Primitive("lu", K.lu, ("a",), multiple_results=True, sample=samplers.lu,
               doc="(L, U, perm) with a[..., perm, :] = L @ U (partial pivoting).")
lu.defvjp(_lu_vjp)
lu.defjvp(_lu_jvp)


# ---------------------------------------------------------------------------------------
# solve_banded: a[i, j] = ab[upper + i - j, j]
# ---------------------------------------------------------------------------------------


def _shift_rows(x: Any, s: int) -> Any:
    """y[i] = x[i + s] (zero where i + s is outside), along the first axis."""
    n = x.shape[0]
    if s == 0:
        return x
    return pad_axis(x, 0, max(-s, 0), max(s, 0))[max(s, 0):max(s, 0) + n]


def band_transpose(ab: Any, lower: int, upper: int) -> Any:
    """The band storage of a^T (``upper`` and ``lower`` swapped): abT[r, j] =
    ab[lower + upper - r, j + r - lower]."""
    return stack([_shift_rows(ab[lower + upper - r], r - lower)
                  for r in range(lower + upper + 1)])


def _band_matvec(dab: Any, x: Any, upper: int) -> Any:
    """da @ x for da in band storage: sum_r (dab[r] * x)[i + upper - r]."""
    return sum(_shift_rows(expand_dims(dab[r], -1) * x, upper - r)
               for r in range(dab.shape[0]))


def _banded_b(g: Any, ab: Any, lower: int, upper: int) -> Any:
    return solve_banded(band_transpose(ab, lower, upper), g, lower=upper, upper=lower)


def _banded_ab(g: Any, ab: Any, out: Any, lower: int, upper: int) -> Any:
    gb = _banded_b(g, ab, lower, upper)
    return -stack([sum_last(_shift_rows(gb, r - upper) * out)
                   for r in range(lower + upper + 1)])


solve_banded = Primitive(
    "solve_banded", lambda ab, b, lower, upper: K.solve_banded(ab, b, lower, upper),
    ("ab", "b"), ("lower", "upper"), sample=samplers.solve_banded,
    doc="x with a @ x = b, a (n, n) given by its band ab (lower + upper + 1, n).")
solve_banded.defvjp(_banded_ab, _banded_b)
solve_banded.defjvp(
    lambda t, ab, out, lower, upper: -solve_banded(ab, _band_matvec(t, out, upper),
                                                   lower=lower, upper=upper),
    lambda t, ab, lower, upper: solve_banded(ab, t, lower=lower, upper=upper))


# -- batching rules (vmap) ------------------------------------------------------------------
# (imported here: funcgrad.primitives.batching builds on the shape primitives)
from . import batching as B  # noqa: E402
from .indexing import Index, Ref, Slice, getitem  # noqa: E402
from .linalg import solve  # noqa: E402
from .shape import reshape  # noqa: E402


def _as_columns(b: Any, db: Any) -> tuple[Any, bool]:
    """b with a one-example vector made a column (numpy's batched solves read a stack of
    vectors as one matrix)."""
    vector = b.ndim - (db is not None) == 1
    return (expand_dims(b, -1) if vector else b), vector


def _batch_triangular_solve(args: tuple, dims: tuple, **params: Any) -> tuple:
    (a, b), (da, db) = args, dims
    b, vector = _as_columns(b, db)
    out = triangular_solve(*B.leading_args((a, b), (da, db), (2, 2)), **params)
    return (_drop_last(out) if vector else out), 0


def _drop_last(x: Any) -> Any:
    """x without its last (size-1) axis."""
    return reshape(x, shape=tuple(x.shape[:-1]))


def _batch_solve_banded(args: tuple, dims: tuple, lower: int, upper: int) -> tuple:
    """The band of each example read into its dense matrix (a gather), then one batched
    dense solve: the banded kernel solves one system at a time."""
    (ab, b), (dab, db) = args, dims
    size = ab.shape[dab] if dab is not None else b.shape[db]
    ab = B.materialize(ab, dab, size)
    n = ab.shape[-1]
    i, j = np.indices((n, n))
    rows = upper + i - j
    inside = (rows >= 0) & (rows <= lower + upper)
    idx = constant(ab, np.stack([np.clip(rows, 0, lower + upper), j]).astype(np.intp))
    band = getitem(ab, idx, index=Index((Slice(None, None, None), Ref(0), Ref(1))))
    dense = where(constant(ab, inside), band, 0)
    b, vector = _as_columns(b, db)
    out = solve(*B.leading_args((dense, b), (0, db), (2, 2)))
    return (_drop_last(out) if vector else out), 0


triangular_solve.defbatch(_batch_triangular_solve)
B.leading(lu)
solve_banded.defbatch(_batch_solve_banded)
