"""funcgrad.scipy.linalg against scipy.linalg (values, every flag), derivatives to second
order by finite differences (the registry tests check the primitives themselves on random
batches; these check the scipy-level compositions), and without scipy (the numpy
fallbacks)."""
import numpy as np
import pytest
import scipy.linalg as sl

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.primitives.kernels import scipy_linalg as kernels
from funcgrad.scipy import linalg as L
from funcgrad.test_util import check_grads

RNG = np.random.RandomState(0)
A = RNG.randn(4, 4)
SPD = A @ A.T + 4 * np.eye(4)
TRI = A + 5 * np.eye(4)
B = RNG.randn(4, 2)
V = RNG.randn(4)


def _close(actual, expected, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol, atol=atol)


def _grads(f, *args):
    check_grads(f, args, order=2, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit_diagonal", [False, True])
def test_solve_triangular(trans, lower, unit_diagonal):
    kw = dict(trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    for b in (B, V):
        _close(L.solve_triangular(TRI, b, **kw), sl.solve_triangular(TRI, b, **kw))
    c = TRI + 1j * RNG.randn(4, 4)
    _close(L.solve_triangular(c, B, **kw), sl.solve_triangular(c, B, **kw))


@pytest.mark.parametrize("kw", [dict(trans=0, lower=True), dict(trans="T", unit_diagonal=True),
                                dict(trans=2, lower=True, unit_diagonal=True)])
def test_solve_triangular_derivatives(kw):
    _grads(lambda a, b: L.solve_triangular(a, b, **kw), TRI[:3, :3], B[:3])


def test_solve_triangular_batches_and_errors():
    a = np.stack([TRI, TRI.T])
    out = L.solve_triangular(a, np.stack([B, 2 * B]), lower=True)
    _close(out[1], sl.solve_triangular(TRI.T, 2 * B, lower=True))
    with pytest.raises(ValueError, match="trans"):
        L.solve_triangular(TRI, B, trans=3)
    with pytest.raises(ValueError, match="incompatible"):
        L.solve_triangular(TRI, np.ones(3))


@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_and_cho_solve(lower):
    _close(L.cholesky(SPD, lower=lower), sl.cholesky(SPD, lower=lower))
    c, low = L.cho_factor(SPD, lower=lower)
    assert low is lower
    for b in (B, V):
        _close(L.cho_solve((c, low), b), sl.cho_solve(sl.cho_factor(SPD, lower=lower), b))
    _grads(lambda m, b: L.cho_solve(L.cho_factor(m @ m.T + 4 * np.eye(4), lower=lower), b),
           A, B)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_lu_family(shape):
    m = RNG.randn(*shape)
    for ours, theirs in [(L.lu(m), sl.lu(m)), (L.lu(m, permute_l=True), sl.lu(m, permute_l=True)),
                         (L.lu(m, p_indices=True), sl.lu(m, p_indices=True)),
                         (L.lu_factor(m), sl.lu_factor(m))]:
        for x, y in zip(ours, theirs):
            _close(x, y)
    _grads(lambda a: L.lu(a)[1:], m)


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_lu_solve(trans):
    c = A + 1j * RNG.randn(4, 4)
    for a in (A, c):
        for b in (B, V):
            _close(L.lu_solve(L.lu_factor(a), b, trans=trans),
                   sl.lu_solve(sl.lu_factor(a), b, trans=trans))
    _grads(lambda a, b: L.lu_solve(L.lu_factor(a), b, trans=trans), TRI, B)


def test_expm_and_its_frechet_derivative():
    _close(L.expm(A), sl.expm(A))
    _close(L.expm(np.stack([A, -A])), np.stack([sl.expm(A), sl.expm(-A)]))
    e = RNG.randn(4, 4)
    for x, y in zip(L.expm_frechet(A, e), sl.expm_frechet(A, e)):
        _close(x, y, rtol=1e-9)
    _close(L.expm_frechet(A, e, compute_expm=False), sl.expm_frechet(A, e)[1], rtol=1e-9)
    _close(fg.jvp(L.expm, (A,), (e,))[1], sl.expm_frechet(A, e)[1], rtol=1e-9)
    _grads(L.expm, A * 0.5)
    # third order through the doubling block matrices
    check_grads(lambda a: L.expm(a)[0, 1], (A[:2, :2] * 0.5,), order=3, modes=("rev",),
                rtol=1e-5, atol=1e-7)


def test_sqrtm_and_sylvester():
    x = L.sqrtm(SPD)
    _close(x, sl.sqrtm(SPD))
    _close(fnp.matmul(x, x), SPD)
    root, err = L.sqrtm(SPD, disp=False)
    assert float(err) < 1e-12
    _grads(L.sqrtm, SPD + 0.3 * A)
    q = RNG.randn(4, 3)
    small = SPD[:3, :3]
    _close(L.solve_sylvester(SPD, small, q), sl.solve_sylvester(SPD, small, q))
    _grads(L.solve_sylvester, SPD, small, q)
    with pytest.raises(ValueError, match="q must have shape"):
        L.solve_sylvester(SPD, small, q.T)


@pytest.mark.parametrize("l_and_u", [(0, 0), (1, 0), (0, 2), (1, 2), (3, 3)])
def test_solve_banded(l_and_u):
    lower, upper = l_and_u
    ab = RNG.randn(lower + upper + 1, 5)
    ab[upper] += 6
    for b in (RNG.randn(5), RNG.randn(5, 2)):
        _close(L.solve_banded(l_and_u, ab, b), sl.solve_banded(l_and_u, ab, b))
    _grads(lambda ab, b: L.solve_banded(l_and_u, ab, b), ab, RNG.randn(5, 2))
    with pytest.raises(ValueError, match="l\\+u\\+1"):
        L.solve_banded((lower + 1, upper), ab, np.ones(5))


def test_block_diag():
    blocks = (np.ones(2), 3.0, np.ones((0, 2)), A[:2, :3])
    _close(L.block_diag(*blocks), sl.block_diag(*blocks))
    _close(L.block_diag(), sl.block_diag())
    _grads(lambda x, y: L.block_diag(x, y), A[:2, :3], V)
    with pytest.raises(ValueError, match="dimension greater than 2"):
        L.block_diag(np.ones((2, 2, 2)))


def test_eigh_standard_and_generalised():
    w, v = L.eigh(SPD)
    ew, ev = sl.eigh(SPD)
    _close(w, ew)
    _close(np.abs(v), np.abs(ev))
    bm = A.T @ A + np.eye(4)
    w, v = L.eigh(SPD, bm)
    ew, ev = sl.eigh(SPD, bm)
    _close(w, ew)
    _close(np.abs(v), np.abs(ev))
    _close(L.eigh(SPD, subset_by_index=(1, 2), eigvals_only=True),
           sl.eigh(SPD, subset_by_index=(1, 2), eigvals_only=True))
    _grads(lambda a, b: L.eigh(a @ a.T + 4 * np.eye(4), b @ b.T + np.eye(4),
                               eigvals_only=True), A, A.T)
    with pytest.raises(NotImplementedError, match="type=1"):
        L.eigh(SPD, bm, type=2)


@pytest.mark.parametrize("assume_a", ["gen", "sym", "her", "pos", "lower triangular",
                                      "upper triangular", "diagonal"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_assume_a(assume_a, lower):
    m = TRI if "triangular" in assume_a else SPD + 0.5 * np.tril(A, -1) * (assume_a == "gen")
    for b in (B, V):
        _close(L.solve(m, b, assume_a=assume_a, lower=lower),
               sl.solve(m, b, assume_a=assume_a, lower=lower))
    _close(L.solve(A, V, transposed=True), sl.solve(A, V, transposed=True))


def test_det_inv_svd_qr_match_scipy():
    _close(L.det(A), sl.det(A))
    _close(L.inv(A), sl.inv(A))
    _close(L.svd(A, compute_uv=False), sl.svd(A, compute_uv=False))
    for mode in ("full", "economic"):
        for x, y in zip(L.qr(A[:, :3], mode=mode), sl.qr(A[:, :3], mode=mode)):
            _close(np.abs(x), np.abs(y))
    _close(np.abs(L.qr(A, mode="r")[0]), np.abs(sl.qr(A, mode="r")[0]))


def test_numpy_fallbacks_without_scipy(monkeypatch):
    monkeypatch.setattr(kernels, "_scipy_linalg", None)
    _close(L.solve_triangular(TRI, B, lower=True, trans=1),
           sl.solve_triangular(TRI, B, lower=True, trans=1))
    for x, y in zip(L.lu(A), sl.lu(A)):
        _close(x, y)
    _close(L.expm(3 * A), sl.expm(3 * A), rtol=1e-9)
    _close(L.sqrtm(SPD), sl.sqrtm(SPD))
    q = RNG.randn(4, 3)
    _close(L.solve_sylvester(SPD, SPD[:3, :3], q), sl.solve_sylvester(SPD, SPD[:3, :3], q))
    ab = RNG.randn(3, 5)
    ab[1] += 6
    b = RNG.randn(5)
    _close(L.solve_banded((1, 1), ab, b), sl.solve_banded((1, 1), ab, b))
