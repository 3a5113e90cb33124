"""numpy's polynomial functions on coefficient arrays (highest power first): polyval,
polyadd, polysub, polymul, polydiv, polyder, polyint, polyfit, poly and roots.

All are compositions (Horner's rule, convolution, long division, a least-squares solve, the
eigenvalues of the companion matrix), so each is differentiable in its coefficients and
points; ``roots`` (complex, as in JAX) is differentiable where the roots are simple.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from funcgrad._promotion import COMPLEX, INEXACT, computed_dtype
from funcgrad.array import Array, new_array
from funcgrad.numpy._creation import asarray, astype, eye, promote_dtypes, zeros
from funcgrad.numpy._elementwise import abs, conj, real, sqrt
from funcgrad.numpy._numeric import allclose, convolve
from funcgrad.numpy._reductions import sum
from funcgrad.numpy._shape import atleast_1d, concatenate, pad, reshape, stack
from funcgrad.numpy._ranges import vander

__all__ = ["polyval", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint",
           "polyfit", "poly", "roots"]


def _coefficients(p: Any) -> Array:
    p = atleast_1d(asarray(p))
    if p.ndim != 1:
        raise ValueError("polynomial coefficients must be a 1-D sequence")
    return p


def polyval(p: Any, x: Any) -> Array:
    """The polynomial with coefficients p (highest first) at x, by Horner's rule."""
    p, x = promote_dtypes(_coefficients(p), x)
    y = zeros(x.shape, x.dtype)
    for c in p:
        y = y * x + c
    return y


def _aligned(a1: Any, a2: Any) -> tuple[Array, Array]:
    a1, a2 = _coefficients(a1), _coefficients(a2)
    n = max(a1.shape[0], a2.shape[0])
    return (pad(a1, ((n - a1.shape[0], 0),)), pad(a2, ((n - a2.shape[0], 0),)))


def polyadd(a1: Any, a2: Any) -> Array:
    """The sum of two polynomials."""
    x, y = _aligned(a1, a2)
    return x + y


def polysub(a1: Any, a2: Any) -> Array:
    """The difference of two polynomials."""
    x, y = _aligned(a1, a2)
    return x - y


def polymul(a1: Any, a2: Any) -> Array:
    """The product of two polynomials (the convolution of their coefficients)."""
    return convolve(_coefficients(a1), _coefficients(a2))


def polydiv(u: Any, v: Any) -> tuple:
    """(quotient, remainder) of polynomial long division u / v."""
    u, v = promote_dtypes(_coefficients(u), _coefficients(v), rule=INEXACT)
    dtype = u.dtype
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = zeros((max(m - n + 1, 1),), dtype)
    r = u
    for k in range(m - n + 1):
        d = scale * r[k]
        q = q.at[k].set(d)
        r = r.at[k:k + n + 1].add(-d * v)
    while r.shape[0] > 1 and allclose(r[0], 0, rtol=1e-14):
        r = r[1:]
    return q, r


def polyder(p: Any, m: Any = 1) -> Array:
    """The m-th derivative of a polynomial (no coefficients left once m passes its degree,
    as numpy)."""
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p, = promote_dtypes(_coefficients(p), rule=INEXACT)
    for _ in range(m):
        n = max(p.shape[0] - 1, 0)
        p = p[:-1] * new_array(np.arange(n, 0, -1, dtype=p.dtype))
    return p


def polyint(p: Any, m: Any = 1, k: Any = None) -> Array:
    """The m-th antiderivative of a polynomial, with integration constants k (zeros by
    default; one per integration, the first used first)."""
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    p, consts = promote_dtypes(_coefficients(p), 0 if k is None else atleast_1d(k),
                               rule=INEXACT)
    consts = zeros((m,), p.dtype) if k is None else consts
    if consts.shape[0] == 1 and m > 1:
        consts = consts * new_array(np.ones(m, consts.dtype))
    if consts.shape[0] < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    for i in range(m):
        n = p.shape[0]
        p = concatenate([p / new_array(np.arange(n, 0, -1, dtype=p.dtype)),
                         reshape(consts[i], (1,))])
    return p


def polyfit(x: Any, y: Any, deg: Any, rcond: Any = None, full: bool = False, w: Any = None,
            cov: Any = False) -> Any:
    """The least-squares polynomial of degree ``deg`` through (x, y) (y may hold several
    columns), optionally weighted by ``w``; ``full`` adds the residuals, rank, singular
    values and rcond, ``cov`` the covariance of the coefficients. Differentiable in x, y
    and w."""
    from funcgrad.numpy.linalg import lstsq  # linalg imports the namespace (and so this)
    deg = operator.index(deg)
    x, y = asarray(x), asarray(y)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1 or x.shape[0] == 0 or y.ndim not in (1, 2) or x.shape[0] != y.shape[0]:
        raise TypeError("expected non-empty 1-D x and y (or 2-D y) of the same length")
    x, = promote_dtypes(x, rule=INEXACT)
    order = deg + 1
    rcond = x.shape[0] * np.finfo(x.dtype).eps if rcond is None else rcond
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = asarray(w)
        lhs = lhs * reshape(w, (-1, 1))
        rhs = rhs * (w if y.ndim == 1 else reshape(w, (-1, 1)))
    scale = sqrt(sum(abs(lhs) ** 2, axis=0))
    scale = scale + (scale == 0)  # numpy's guard: unscaled columns of zeros
    c, resids, rank, s = lstsq(lhs / scale, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, rcond
    if cov:
        return c, _coefficient_cov(lhs, scale, resids, x.shape[0], order, cov, y.ndim)
    return c


def _coefficient_cov(lhs: Array, scale: Array, resids: Array, n: int, order: int,
                     cov: Any, ydim: int) -> Array:
    from funcgrad.numpy.linalg import inv  # linalg imports the namespace (and so this)
    lhs_s = lhs / scale
    base = inv(lhs_s.T @ conj(lhs_s)) / reshape(scale, (-1, 1)) / reshape(scale, (1, -1))
    if cov == "unscaled":
        fac = 1.0
    else:
        if n <= order:
            raise ValueError("the number of data points must exceed order to scale the "
                             "covariance matrix")
        fac = resids / (n - order)
    if ydim == 1:
        return base * fac
    return reshape(base, base.shape + (1,)) * fac


def poly(seq_of_zeros: Any) -> Array:
    """The coefficients (highest first, leading 1) of the monic polynomial with the given
    roots, or of the characteristic polynomial of a square matrix."""
    from funcgrad.numpy.linalg import eigvals  # linalg imports the namespace
    z = asarray(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        z = eigvals(z)
    elif z.ndim != 1 and z.size != 0:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    z = reshape(z, (-1,))
    a = new_array(np.ones(1, computed_dtype(z, rule=INEXACT)))
    for r in z:
        a = convolve(a, stack([asarray(1).astype(r.dtype), -r]))
    if a.dtype.kind == "c":
        raw = z.concrete().to_numpy()
        pos = np.sort_complex(raw[raw.imag > 0])
        neg = np.sort_complex(np.conj(raw[raw.imag < 0]))
        if pos.shape == neg.shape and np.all(pos == neg):
            a = real(a)  # conjugate pairs: a real result
    return a


def roots(p: Any) -> Array:
    """The roots of the polynomial p (highest coefficient first): the eigenvalues of its
    companion matrix, complex; leading zeros are dropped, trailing ones give zero roots."""
    from funcgrad.numpy.linalg import eigvals  # linalg imports the namespace
    p = _coefficients(p)
    dtype = computed_dtype(p, rule=COMPLEX)
    raw = np.asarray(p.concrete().to_numpy())
    nz = np.flatnonzero(raw)
    if nz.size == 0:
        return new_array(np.zeros(0, dtype))
    trailing = raw.shape[0] - nz[-1] - 1
    p = p[int(nz[0]):int(nz[-1]) + 1]
    n = p.shape[0]
    zero_roots = zeros((trailing,), dtype)
    if n < 2:
        return zero_roots
    first_row = reshape(-p[1:] / p[0], (1, -1))
    companion = concatenate([first_row, eye(n - 2, n - 1, dtype=first_row.dtype)]) \
        if n > 2 else first_row
    found = eigvals(companion)
    return concatenate([astype(found, dtype), zero_roots])

