"""Derivatives of the functions funcgrad.numpy composes (the new primitives are checked by
test_registry_grads.py): against finite differences (reverse and forward mode), and against
JAX's gradients where jax.numpy has the function."""
import numpy as np
import pytest

import funcgrad.numpy as fnp
from funcgrad import grad, jacrev
from funcgrad.test_util import check_grads

RNG = np.random.RandomState(1)
A = RNG.randn(3, 4)
V = RNG.randn(6)
XP = np.sort(RNG.rand(5)) * 2
XS = np.cumsum(RNG.rand(5) + 0.5)  # well-spaced sample coordinates
X_IN = np.array([-0.3, 0.35, 0.8, 1.3, 2.5])
SQ = RNG.randn(3, 3) + 3 * np.eye(3)

# name -> (function of float arrays, arguments); second order checked too
CASES = {
    "linspace": (lambda a, b: fnp.linspace(a, b, 5), (0.3, np.array([1.0, 2.0]))),
    "logspace": (lambda a, b: fnp.logspace(a, b, 4, base=3.0), (0.1, 0.9)),
    "geomspace": (lambda a, b: fnp.geomspace(a, b, 4), (1.5, 7.0)),
    "full": (lambda v: fnp.full((2, 3), v), (np.array([1.0, 2.0, 3.0]),)),
    "meshgrid": (lambda x, y: fnp.meshgrid(x, y)[0] * fnp.meshgrid(x, y)[1],
                 (V[:3], V[3:])),
    "vander": (lambda x: fnp.vander(x, 4), (V[:3],)),
    "insert": (lambda a, v: fnp.insert(a, [1, 2], v, axis=1), (A, np.array([[1.0], [2.0],
                                                                          [3.0]]))),
    "delete+append": (lambda a: fnp.append(fnp.delete(a, 1, axis=0), a[:1], 0), (A,)),
    "block": (lambda a, b: fnp.block([[a, b], [b, a]]), (A[:2, :2], A[1:, 2:])),
    "piecewise": (lambda x: fnp.piecewise(x, [x < 0], [lambda t: t ** 2, fnp.sin]), (V,)),
    "select": (lambda x: fnp.select([x < 0, x > 1], [x ** 2, fnp.exp(x)], 0.0), (V,)),
    "diff": (lambda a: fnp.diff(a, 2, axis=1, prepend=1.0), (A,)),
    "gradient": (lambda f, x: fnp.gradient(f, x, edge_order=2), (V[:5], XS)),
    "trapezoid": (lambda y, x: fnp.trapezoid(y, x), (RNG.randn(3, 5), XS)),
    "cross": (lambda a, b: fnp.cross(a, b), (A[:, :3], A[:, 1:])),
    "convolve": (lambda a, v: fnp.convolve(a, v, "same"), (V, V[:3])),
    "correlate": (lambda a, v: fnp.correlate(a, v, "full"), (V[:4], V[2:])),
    "interp": (lambda x, xp, fp: fnp.interp(x, xp, fp), (X_IN, XP, V[:5])),
    "unwrap": (lambda p: fnp.unwrap(p), (np.cumsum(V * 2),)),
    "quantile": (lambda a, q: fnp.quantile(a, q, axis=1), (A, np.array([0.3, 0.6]))),
    "quantile hazen": (lambda a: fnp.quantile(a, [0.2, 0.7], method="hazen"), (A,)),
    "median": (lambda a: fnp.median(a, axis=0), (A,)),
    "nanmean": (lambda a: fnp.nanmean(fnp.where(a > 1.0, np.nan, a), axis=1), (A,)),
    "nanmax": (lambda a: fnp.nanmax(fnp.where(a > 1.0, np.nan, a), axis=1), (A,)),
    "cov": (lambda a: fnp.cov(a, aweights=[1.0, 2.0, 0.5, 1.0]), (A,)),
    "corrcoef": (lambda a: fnp.corrcoef(a), (A,)),
    "histogram weights": (lambda w: fnp.histogram(V, 3, weights=w, density=True)[0],
                          (RNG.rand(6) + 0.5,)),
    "bincount weights": (lambda w: fnp.bincount([0, 2, 2, 1, 0, 4], w), (V,)),
    "sort descending": (lambda a: fnp.sort(a, axis=1, descending=True), (A,)),
    "unique values": (lambda x: fnp.unique_values(x), (np.array([3.0, 1.0, 2.0]),)),
    "polyval": (lambda p, x: fnp.polyval(p, x), (V[:4], X_IN)),
    "polyfit": (lambda x, y: fnp.polyfit(x, y, 2), (XS, V[:5])),
    "polydiv": (lambda u, v: fnp.polydiv(u, v)[0], (V[:4], np.array([2.0, 0.5]))),
    "roots": (lambda p: fnp.real(fnp.roots(p)), (np.array([2.0, -1.0, -3.0]),)),
    "eigvals": (lambda a: fnp.linalg.eigvals(a), (SQ,)),
    "lstsq": (lambda a, b: fnp.linalg.lstsq(a, b)[0], (A.T, V[:4])),
    "cond": (lambda a: fnp.linalg.cond(a), (SQ,)),
    "tensorsolve": (lambda a, b: fnp.linalg.tensorsolve(a, b),
                    (np.eye(6).reshape(2, 3, 6) + 0.1 * RNG.randn(2, 3, 6), A[:2, :3])),
    "linalg.cross": (lambda a, b: fnp.linalg.cross(a, b), (A[:, :3], V[:3])),
    "vecdot": (lambda a, b: fnp.linalg.vecdot(a, b), (A, V[:4])),
    "hfft": (lambda a: fnp.fft.hfft(a, 7), (V[:4] + 0.5j,)),
    "ihfft": (lambda a: fnp.real(fnp.fft.ihfft(a)), (V,)),
    "nan_to_num": (lambda a: fnp.nan_to_num(fnp.log(a)), (np.abs(V) + 0.1,)),
    "vectorize": (lambda a: fnp.vectorize(lambda x: x * x + 1)(a), (V[:3],)),
    "r_": (lambda a, b: fnp.r_[a, 2.0 * b, 3.0], (V[:2], V[2:4])),
    "frexp": (lambda x: fnp.frexp(x)[0], (np.array([0.3, 3.0, -7.0]),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_composed_derivatives_match_finite_differences(name):
    fun, args = CASES[name]
    check_grads(fun, args, order=1, modes=("rev", "fwd"))


@pytest.mark.parametrize("name", ["linspace", "interp", "quantile", "convolve", "polyfit",
                                  "cov", "eigvals", "gradient"])
def test_composed_second_derivatives(name):
    fun, args = CASES[name]
    check_grads(fun, args, order=2, modes=("rev",))


def test_eigenvector_derivatives_are_gauge_invariant():
    # |V|^2 and V diag(w) V^-1 do not depend on each eigenvector's phase
    check_grads(lambda a: fnp.abs(fnp.linalg.eig(a)[1]) ** 2, (SQ,), order=2,
                modes=("rev", "fwd"))
    rebuilt = grad(lambda a: fnp.real(fnp.sum(_rebuild(a) * SQ)))(SQ)
    np.testing.assert_allclose(rebuilt, SQ, atol=1e-8)  # d/dA sum(A * SQ) = SQ


def test_roots_jacobian_is_the_analytic_one():
    p = np.array([1.0, -6.0, 11.0, -6.0])  # roots 1, 2, 3: dr/dp_k = -r^(3-k) / p'(r)
    jac = np.asarray(jacrev(lambda c: fnp.real(fnp.roots(c)))(p))
    r = np.real(np.asarray(fnp.roots(p)))
    expected = np.stack([-r ** (3 - k) / np.polyval(np.polyder(p), r) for k in range(4)], 1)
    np.testing.assert_allclose(jac, expected, atol=1e-12)


def _rebuild(a):
    w, v = fnp.linalg.eig(a)
    return v @ (w[:, None] * fnp.linalg.inv(v))


jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

# the same expression with m = funcgrad.numpy and m = jax.numpy: gradients compared
JAX_CASES = {
    "linspace": (lambda m, a: m.sum(m.linspace(a, 2 * a + 1, 7) ** 2), 0.7),
    "interp": (lambda m, fp: m.sum(m.interp(X_IN, XP, fp) ** 2), V[:5]),
    "quantile": (lambda m, a: m.sum(m.quantile(a, m.asarray([0.1, 0.5, 0.9]), axis=1)), A),
    "median": (lambda m, a: m.sum(m.median(a, axis=1) ** 2), A),
    "nanmean": (lambda m, a: m.sum(m.nanmean(m.where(a > 1.0, m.nan, a), axis=0)), A),
    "cov": (lambda m, a: m.sum(m.cov(a) ** 2), A),
    "corrcoef": (lambda m, a: m.sum(m.corrcoef(a)[0]), A),
    "convolve": (lambda m, a: m.sum(m.convolve(a, a[:3], mode="valid") ** 2), V),
    "gradient": (lambda m, f: m.sum(m.gradient(f, XP) ** 2), V[:5]),
    "trapezoid": (lambda m, y: m.trapezoid(y ** 2, XP), V[:5]),
    "cross": (lambda m, a: m.sum(m.cross(a, a[::-1]) ** 2), A[:, :3]),
    "polyval": (lambda m, p: m.sum(m.polyval(p, m.asarray(X_IN))), V[:4]),
    "polyfit": (lambda m, y: m.sum(m.polyfit(m.asarray(XP), y, 2) ** 2), V[:5]),
    "eigvals": (lambda m, a: m.sum(m.real(m.linalg.eigvals(a)) ** 2), SQ),
    "unwrap": (lambda m, p: m.sum(m.unwrap(p) ** 2), np.cumsum(V * 2)),
    "vander": (lambda m, x: m.sum(m.vander(x, 4)), V[:3]),
    "diff": (lambda m, a: m.sum(m.diff(a, n=2, axis=1) ** 2), A),
    "var correction": (lambda m, a: m.var(a, correction=1), V),
    "sort descending": (lambda m, a: m.sum(m.sort(a, descending=True) * m.arange(6.0)), V),
    "nan_to_num": (lambda m, a: m.sum(m.nan_to_num(m.log(a))), np.abs(V) + 0.1),
}


@pytest.mark.parametrize("name", sorted(JAX_CASES))
def test_gradients_match_jax(name):
    fun, x = JAX_CASES[name]
    with jax.enable_x64(True):
        want = np.asarray(jax.grad(lambda v: fun(jnp, v))(jnp.asarray(x)))
    got = np.asarray(grad(lambda v: fun(fnp, v))(x))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


def test_eigvals_jacobian_matches_jax():
    with jax.enable_x64(True):
        want = np.asarray(jax.jacrev(lambda a: jnp.sort(jnp.real(jnp.linalg.eigvals(a))))(
            jnp.asarray(SQ)))
    got = np.asarray(jacrev(lambda a: fnp.sort(fnp.real(fnp.linalg.eigvals(a))))(SQ))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)
