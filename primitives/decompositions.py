"""Matrix decompositions as primitives, with rules written in funcgrad ops.

| primitive | derivative (JAX's formulas; the VJPs are their transposes)                   |
|-----------|------------------------------------------------------------------------------|
| cholesky  | dL = L phi(L^-1 dA L^-H); phi = lower triangle with the diagonal halved       |
| eigh      | dw = Re diag(V^H dA V), dV = V (F * V^H dA V), F_ij = 1 / (w_j - w_i)         |
| eigvalsh  | dw as above (V recomputed in the rule: no 1/(w_j - w_i) terms)                |
| svd       | reduced U, s, V^H; the full_matrices derivative is not unique and raises      |
| svdvals   | ds = Re diag(U^H dA V) (U, V recomputed in the rule)                         |
| eig       | dw = diag(C), dV = V (F * C) renormalised; C = V^-1 dA V, F as for eigh       |
| eigvals   | dw as above (V recomputed in the rule)                                       |
| qr        | reduced mode; wide matrices through the square QR of their leading block      |
| pinv      | Golub & Pereyra's derivative (valid where the rank is locally constant)      |

cholesky, eigh and eigvalsh read only the lower triangle of their input, as LAPACK does:
their rules map the derivative for a Hermitian perturbation through that reading (the
`hermitian_*` pair below), so they agree with finite differences in every direction.
`funcgrad.numpy.linalg` symmetrises the input first by default (as JAX does), which gives
Hermitian gradients. Eigen- and singular vectors are unique only up to sign (phase): the
samplers check functions that do not depend on that choice.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcgrad.core import Primitive
from .linalg import (H, abs2, conj, constant, diag, diagonal_of, expand, eye_like, matmul, mT,
                     real, solve)
from .samplers import linalg as samplers
from .select import where
from .shape import concatenate


def _phi(x: Any) -> Any:
    """The lower triangle of x with its diagonal halved."""
    n, m = x.shape[-2:]
    return x * constant(x, np.tri(n, m, -1, dtype=real(x).dtype) + 0.5 * np.eye(n, m))


def hermitian_tangent(t: Any) -> Any:
    """The Hermitian matrix a lower-triangle reader sees when its input moves by t."""
    p = _phi(t)
    return p + H(p)


def hermitian_cotangent(g: Any) -> Any:
    """The transpose of `hermitian_tangent`: a cotangent back onto the lower triangle."""
    return _phi(g + H(g))


def _solve_right(a: Any, b: Any) -> Any:
    """x with x @ a = b."""
    return mT(solve(mT(a), mT(b)))


def _weights(x: Any) -> Any:
    """1, 2, ..., k along the last axis: weights that tell eigen/singular vectors apart."""
    return constant(x, np.arange(1.0, x.shape[-1] + 1, dtype=real(x).dtype))


# ---------------------------------------------------------------------------------------
# cholesky
# ---------------------------------------------------------------------------------------


def _cholesky_vjp(g: Any, out: Any) -> Any:
    inner = _phi(matmul(mT(out), g))  # L^-T phi(L^T g) conj(L)^-1
    return hermitian_cotangent(_solve_right(conj(out), solve(mT(out), inner)))


def _cholesky_jvp(t: Any, out: Any) -> Any:
    tmp = solve(out, _solve_right(H(out), hermitian_tangent(t)))
    return matmul(out, _phi(tmp))


cholesky = Primitive("cholesky", np.linalg.cholesky, ("a",),
                     sample=samplers.hermitian(lambda a: cholesky(a)),
                     doc="The lower Cholesky factor, read from the lower triangle of a.")
cholesky.defvjp(_cholesky_vjp)
cholesky.defjvp(_cholesky_jvp)

# ---------------------------------------------------------------------------------------
# eigh, eigvalsh
# ---------------------------------------------------------------------------------------


def _gaps(w: Any) -> Any:
    """F with F_ij = 1 / (w_j - w_i) off the diagonal and 0 on it."""
    eye = eye_like(w, w.shape[-1])
    return 1 / (eye + expand(w, -2) - expand(w, -1)) - eye


def _eigen_back(v: Any, inner: Any) -> Any:
    """The cotangent of a for the cotangent ``inner`` of V^H dA V."""
    return hermitian_cotangent(matmul(matmul(conj(v), inner), mT(v)))


def _eigen_forward(t: Any, v: Any) -> Any:
    """V^H dA V for the input tangent t."""
    return matmul(matmul(H(v), hermitian_tangent(t)), v)


def _eigh_vjp(g: tuple, out: tuple) -> Any:
    (gw, gv), (w, v) = g, out
    return _eigen_back(v, diag(gw) + _gaps(w) * matmul(mT(v), gv))


def _eigh_jvp(t: Any, out: tuple) -> tuple:
    w, v = out
    m = _eigen_forward(t, v)
    return real(diagonal_of(m)), matmul(v, _gaps(w) * m)


def _eigen_invariants(w: Any, v: Any) -> tuple:
    return w, abs2(v), matmul(v * _weights(w), H(v))


eigh = Primitive("eigh", lambda a: tuple(np.linalg.eigh(a)), ("a",), multiple_results=True,
                 sample=samplers.hermitian(lambda a: _eigen_invariants(*eigh(a))),
                 doc="(eigenvalues, eigenvectors) of the Hermitian matrix in a's lower "
                     "triangle.")
eigh.defvjp(_eigh_vjp)
eigh.defjvp(_eigh_jvp)

eigvalsh = Primitive("eigvalsh", np.linalg.eigvalsh, ("a",),
                     sample=samplers.hermitian(lambda a: eigvalsh(a)),
                     doc="The eigenvalues of the Hermitian matrix in a's lower triangle.")
eigvalsh.defvjp(lambda g, a: _eigen_back(eigh(a)[1], diag(g)))
eigvalsh.defjvp(lambda t, a: real(diagonal_of(_eigen_forward(t, eigh(a)[1]))))

# ---------------------------------------------------------------------------------------
# eig, eigvals (general square matrices; complex results, as in JAX)
# ---------------------------------------------------------------------------------------


def _eig_impl(a: Any) -> tuple:
    w, v = np.linalg.eig(a)
    dtype = np.result_type(a.dtype, np.complex64)
    return w.astype(dtype, copy=False), v.astype(dtype, copy=False)


def _from_eigenbasis(v: Any, x: Any) -> Any:
    """V^-T X V^T: the transpose of dA -> V^-1 dA V."""
    return solve(mT(v), matmul(x, mT(v)))


def _eig_vjp(g: tuple, out: tuple) -> Any:
    """The transpose of `_eig_jvp` (JAX's convention; the normalisation of the
    eigenvectors is the only non-holomorphic part, hence the real part below)."""
    (gw, gv), (w, v) = g, out
    vt_gv = matmul(mT(v), gv)
    keep_norm = mT(matmul(H(v), v)) * expand(real(diagonal_of(vt_gv)), -2)
    return _from_eigenbasis(v, diag(gw) + _gaps(w) * (vt_gv - keep_norm))


def _eig_jvp(t: Any, out: tuple) -> tuple:
    """dw = diag(C), dV = V (F * C) with C = V^-1 dA V, minus the part that would change
    the unit norm numpy gives each eigenvector (its phase stays a gauge choice)."""
    w, v = out
    c = solve(v, matmul(t, v))
    dv = matmul(v, _gaps(w) * c)
    return diagonal_of(c), dv - v * expand(real(diagonal_of(matmul(H(v), dv))), -2)


eig = Primitive("eig", _eig_impl, ("a",), multiple_results=True,
                sample=samplers.general(lambda a: (eig(a)[0], abs2(eig(a)[1]))),
                doc="(eigenvalues, unit eigenvectors) of square matrices, complex.")
eig.defvjp(_eig_vjp)
eig.defjvp(_eig_jvp)

eigvals = Primitive("eigvals", lambda a: _eig_impl(a)[0], ("a",),
                    sample=samplers.general(lambda a: eigvals(a)),
                    doc="The eigenvalues of square matrices, complex.")
eigvals.defvjp(lambda g, a: _from_eigenbasis(eig(a)[1], diag(g)))
eigvals.defjvp(lambda t, a: diagonal_of(solve(eig(a)[1], matmul(t, eig(a)[1]))))

# ---------------------------------------------------------------------------------------
# svd, svdvals
# ---------------------------------------------------------------------------------------


def _check_reduced(name: str, a_shape: tuple, full_matrices: bool) -> None:
    if full_matrices and a_shape[-1] != a_shape[-2]:
        raise NotImplementedError(
            f"the derivative of {name} with full_matrices=True is not implemented for "
            f"non-square matrices (here {a_shape[-2]}x{a_shape[-1]}): the extra columns "
            "are not unique. Use full_matrices=False.")


def _svd_parts(s: Any) -> tuple:
    """F_ij = 1 / (s_j^2 - s_i^2) (0 on the diagonal), 1/s as a row, diag(1/(2s))."""
    sr = expand(s, -2)
    eye = eye_like(s, s.shape[-1])
    f = 1 / (sr * sr - mT(sr) * mT(sr) + eye) - eye
    return f, 1 / sr, eye * (0.5 / sr)


def _svd_vjp(g: tuple, out: tuple, a_shape: tuple, full_matrices: bool) -> Any:
    _check_reduced("svd", a_shape, full_matrices)
    gu, gs, gvt = g
    u, s, vt = out
    m, n = a_shape[-2:]
    f, s_inv, half_inv = _svd_parts(s)
    gv = H(gvt)
    gy = matmul(mT(u), gu)
    gz = f * gy
    gw = half_inv * gy
    gx = f * matmul(conj(vt), gv)  # V^T gV, with V^T = conj(Vt)
    gamma = (diag(gs) + expand(s, -2) * (gz + H(gz)) + (gw - H(gw))
             + expand(s, -1) * (gx + H(gx)))
    ga = matmul(matmul(conj(u), gamma), conj(vt))
    if m > n:
        p = gu * s_inv
        ga = ga + matmul(p - matmul(conj(u), matmul(mT(u), p)), conj(vt))
    if n > m:
        q = gv * s_inv
        ga = ga + H(matmul(q - matmul(mT(vt), matmul(conj(vt), q)), mT(u)))
    return ga


def _svd_jvp(t: Any, out: tuple, a_shape: tuple, full_matrices: bool) -> tuple:
    _check_reduced("svd", a_shape, full_matrices)
    u, s, vt = out
    m, n = a_shape[-2:]
    f, s_inv, half_inv = _svd_parts(s)
    v = H(vt)
    ds = matmul(matmul(H(u), t), v)
    dss = ds * expand(s, -2)
    sds = expand(s, -1) * ds
    du = matmul(u, f * (dss + H(dss)) + half_inv * (ds - H(ds)))
    dv = matmul(v, f * (sds + H(sds)))
    if m > n:
        tv = matmul(t, v)
        du = du + (tv - matmul(u, matmul(H(u), tv))) * s_inv
    if n > m:
        tu = matmul(H(t), u)
        dv = dv + (tu - matmul(v, matmul(vt, tu))) * s_inv
    return du, real(diagonal_of(ds)), H(dv)


def _singular_invariants(u: Any, s: Any, vt: Any) -> tuple:
    return s, abs2(u), abs2(vt), matmul(u * _weights(s), vt)


svd = Primitive("svd", lambda a, full_matrices: tuple(np.linalg.svd(a, full_matrices)),
                ("a",), ("full_matrices",), multiple_results=True,
                sample=samplers.rectangular(lambda a: _singular_invariants(
                    *svd(a, full_matrices=False)), True),
                doc="(U, S, Vh) of numpy's svd.")
svd.defvjp(_svd_vjp)
svd.defjvp(_svd_jvp)

def _svdvals_vjp(g: Any, a: Any) -> Any:
    u, _, vt = svd(a, full_matrices=False)
    return matmul(conj(u) * expand(g, -2), conj(vt))


def _svdvals_jvp(t: Any, a: Any) -> Any:
    u, _, vt = svd(a, full_matrices=False)
    return real(diagonal_of(matmul(matmul(H(u), t), H(vt))))


svdvals = Primitive("svdvals", lambda a: np.linalg.svd(a, compute_uv=False), ("a",),
                    sample=samplers.rectangular(lambda a: svdvals(a), True),
                    doc="The singular values, descending.")
svdvals.defvjp(_svdvals_vjp)
svdvals.defjvp(_svdvals_jvp)

# ---------------------------------------------------------------------------------------
# qr (reduced)
# ---------------------------------------------------------------------------------------


def _imaginary_diagonal(x: Any) -> Any:
    """i Im(x_kk) on the diagonal, zeros elsewhere (the gauge term of complex QR)."""
    return eye_like(x, x.shape[-1]) * (x - real(x))


def _strictly_lower(x: Any) -> Any:
    """x below its diagonal, zeros elsewhere."""
    n, m = x.shape[-2:]
    return where(constant(x, np.tri(n, m, -1, dtype=bool)), x, 0)


def _qr_square_jvp(t: Any, q: Any, r: Any) -> tuple:
    """(dq, dr) for q (m, n), r (n, n), m >= n (j-towns.github.io/papers/qr-derivative)."""
    b = _solve_right(r, t)
    c = matmul(H(q), b)
    low = _strictly_lower(c)
    do = low - H(low) + _imaginary_diagonal(c)
    return matmul(q, do - c) + b, matmul(c - do, r)


def _qr_square_vjp(gq: Any, gr: Any, q: Any, r: Any) -> Any:
    gk = matmul(gr, mT(r))
    gdo = matmul(mT(q), gq) - gk
    gc = -gdo + _strictly_lower(gdo - H(gdo)) + _imaginary_diagonal(gdo)
    gb = gq + matmul(conj(q), gc)
    return mT(solve(r, mT(gb)))


def _check_qr(a_shape: tuple, full_matrices: bool) -> None:
    if full_matrices and a_shape[-2] > a_shape[-1]:
        raise NotImplementedError(
            "the derivative of qr with mode='complete' is not implemented for tall "
            f"matrices (here {a_shape[-2]}x{a_shape[-1]}): the extra columns of Q are not "
            "unique. Use mode='reduced'.")


def _qr_vjp(g: tuple, out: tuple, a_shape: tuple, full_matrices: bool) -> Any:
    _check_qr(a_shape, full_matrices)
    (gq, gr), (q, r) = g, out
    m, n = a_shape[-2:]
    if m >= n:
        return _qr_square_vjp(gq, gr, q, r)
    y = matmul(q, r[..., m:])  # a = [x | y] with x = q r_x square and r_y = q^H y
    gry = gr[..., m:]
    gx = _qr_square_vjp(gq + matmul(conj(y), H(gry)), gr[..., :m], q, r[..., :m])
    return concatenate(gx, matmul(conj(q), gry), axis=gx.ndim - 1)


def _qr_jvp(t: Any, out: tuple, a_shape: tuple, full_matrices: bool) -> tuple:
    _check_qr(a_shape, full_matrices)
    q, r = out
    m, n = a_shape[-2:]
    if m >= n:
        return _qr_square_jvp(t, q, r)
    dq, drx = _qr_square_jvp(t[..., :m], q, r[..., :m])
    dry = matmul(H(dq), matmul(q, r[..., m:])) + matmul(H(q), t[..., m:])
    return dq, concatenate(drx, dry, axis=drx.ndim - 1)


def _qr_impl(a: Any, full_matrices: bool) -> tuple:
    return tuple(np.linalg.qr(a, "complete" if full_matrices else "reduced"))


qr = Primitive("qr", _qr_impl, ("a",), ("full_matrices",), multiple_results=True,
               sample=samplers.rectangular(lambda a: qr(a, full_matrices=False), False),
               doc="(Q, R) of numpy's qr, reduced (or complete with full_matrices).")
qr.defvjp(_qr_vjp)
qr.defjvp(_qr_jvp)

# ---------------------------------------------------------------------------------------
# pinv
# ---------------------------------------------------------------------------------------


def _pinv_vjp(g: Any, a: Any, out: Any) -> Any:
    # the transpose of _pinv_jvp, term by term: -p t p, (p p^H) t^H (1 - a p) and
    # (1 - p a) t^H (p^H p)
    p, pt = out, mT(out)
    t2 = matmul(matmul(conj(p), pt), g - matmul(g, mT(matmul(a, p))))
    t3 = matmul(g - matmul(mT(matmul(p, a)), g), matmul(pt, conj(p)))
    return -matmul(matmul(pt, g), pt) + H(t2 + t3)


def _pinv_jvp(t: Any, a: Any, out: Any) -> Any:
    p, th = out, H(t)
    s = matmul(matmul(p, H(p)), th)
    u = matmul(matmul(th, H(p)), p)
    return (-matmul(matmul(p, t), p) + s - matmul(matmul(s, a), p)
            + u - matmul(matmul(p, a), u))


def _pinv_impl(a: Any, rcond: Any, hermitian: bool) -> Any:
    if rcond is None:
        return np.linalg.pinv(a, hermitian=hermitian)
    return np.linalg.pinv(a, rcond, hermitian)


pinv = Primitive("pinv", _pinv_impl, ("a",), ("rcond", "hermitian"),
                 sample=samplers.rectangular(lambda a: pinv(a, rcond=None, hermitian=False), False),
                 doc="The Moore-Penrose pseudo-inverse (numpy's pinv).")
pinv.defvjp(_pinv_vjp)
pinv.defjvp(_pinv_jvp)


# -- batching rules (vmap): one more leading dimension of matrices -----------------------------
# (imported here: funcgrad.primitives.batching builds on the shape primitives)
from . import batching as B  # noqa: E402

for _p in (cholesky, eigh, eigvalsh, eig, eigvals, svd, svdvals, qr, pinv):
    B.leading(_p)
