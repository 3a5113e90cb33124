"""funcgrad.random's distributions: Kolmogorov-Smirnov tests against scipy.stats for the
continuous ones, chi-square tests of frequencies for the discrete ones, and moments. The
keys are fixed, so the p-values are too: a failure is a wrong distribution, not bad luck."""
import numpy as np
import pytest

import funcgrad.numpy as fnp
from funcgrad import random

stats = pytest.importorskip("scipy.stats")

N = 20000
P_MIN = 1e-3


def draws(fn, *args, **kwargs):
    return np.asarray(fn(random.PRNGKey(11), *args, **kwargs))


CONTINUOUS = [
    ("uniform", lambda: draws(random.uniform, (N,), minval=-2.0, maxval=5.0),
     stats.uniform(-2, 7)),
    ("uniform float32", lambda: draws(random.uniform, (N,), np.float32), stats.uniform()),
    ("normal", lambda: draws(random.normal, (N,)), stats.norm()),
    ("normal float32", lambda: draws(random.normal, (N,), np.float32), stats.norm()),
    ("truncated_normal", lambda: draws(random.truncated_normal, -0.5, 1.5, (N,)),
     stats.truncnorm(-0.5, 1.5)),
    ("truncated_normal tail", lambda: draws(random.truncated_normal, 2.0, 4.0, (N,)),
     stats.truncnorm(2.0, 4.0)),
    ("exponential", lambda: draws(random.exponential, (N,)), stats.expon()),
    ("laplace", lambda: draws(random.laplace, (N,)), stats.laplace()),
    ("logistic", lambda: draws(random.logistic, (N,)), stats.logistic()),
    ("cauchy", lambda: draws(random.cauchy, (N,)), stats.cauchy()),
    ("gumbel", lambda: draws(random.gumbel, (N,)), stats.gumbel_r()),
    ("gumbel high", lambda: draws(random.gumbel, (N,), mode="high"), stats.gumbel_r()),
    ("gumbel highest float32", lambda: draws(random.gumbel, (N,), np.float32, "highest"),
     stats.gumbel_r()),
    ("gamma a=0.1", lambda: draws(random.gamma, 0.1, (N,)), stats.gamma(0.1)),
    ("gamma a=1", lambda: draws(random.gamma, 1.0, (N,)), stats.gamma(1.0)),
    ("gamma a=5.5", lambda: draws(random.gamma, 5.5, (N,)), stats.gamma(5.5)),
    ("gamma a=300 float32", lambda: draws(random.gamma, 300.0, (N,), np.float32),
     stats.gamma(300.0)),
    ("exp(loggamma) a=0.05", lambda: np.exp(draws(random.loggamma, 0.05, (N,))),
     stats.gamma(0.05)),
    ("beta", lambda: draws(random.beta, 0.4, 2.5, (N,)), stats.beta(0.4, 2.5)),
    ("t df=2.5", lambda: draws(random.t, 2.5, (N,)), stats.t(2.5)),
    ("chisquare df=3", lambda: draws(random.chisquare, 3.0, (N,)), stats.chi2(3.0)),
    ("f", lambda: draws(random.f, 4.0, 9.0, (N,)), stats.f(4.0, 9.0)),
    ("pareto", lambda: draws(random.pareto, 2.5, (N,)), stats.pareto(2.5)),
    ("lognormal", lambda: draws(random.lognormal, 0.7, (N,)), stats.lognorm(0.7)),
    ("generalized_normal p=1.5", lambda: draws(random.generalized_normal, 1.5, (N,)),
     stats.gennorm(1.5)),
    ("dirichlet marginal", lambda: draws(random.dirichlet, np.array([0.5, 2.0, 3.0]), (N,))[:, 0],
     stats.beta(0.5, 5.0)),
    ("orthogonal first column", lambda: draws(random.orthogonal, 3, (N,))[:, 0, 0] ** 2,
     stats.beta(0.5, 1.0)),  # uniform on the sphere: x^2 ~ Beta(1/2, (n-1)/2)
    ("ball radius", lambda: np.linalg.norm(draws(random.ball, 3, 2, (N,)), axis=-1) ** 3,
     stats.uniform()),  # P(|x| < r) = r^d
    ("ball L1 radius", lambda: np.abs(draws(random.ball, 2, 1, (N,))).sum(-1) ** 2,
     stats.uniform()),
]


@pytest.mark.parametrize("name,sample,dist", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_distributions_pass_kolmogorov_smirnov(name, sample, dist):
    x = sample()
    assert np.all(np.isfinite(x))
    assert stats.kstest(x, dist.cdf).pvalue > P_MIN


def test_bounds_are_respected():
    assert np.all(draws(random.uniform, (N,), np.float32) < 1)
    t = draws(random.truncated_normal, 0.0, 1e-3, (N,))
    assert np.all((t > 0) & (t < 1e-3))
    assert np.all(draws(random.beta, 0.05, 0.05, (N,)) <= 1)
    assert np.all(draws(random.gamma, 0.001, (N,)) >= 0)
    assert np.all(np.linalg.norm(draws(random.ball, 5, 2, (1000,)), axis=-1) <= 1)
    np.testing.assert_allclose(draws(random.dirichlet, np.ones(4), (100,)).sum(-1), 1, rtol=1e-14)


def test_complex_normal_has_independent_halves():
    z = draws(random.normal, (N,), np.complex128)
    assert stats.kstest(z.real * np.sqrt(2), stats.norm().cdf).pvalue > P_MIN
    assert stats.kstest(z.imag * np.sqrt(2), stats.norm().cdf).pvalue > P_MIN
    assert abs(np.corrcoef(z.real, z.imag)[0, 1]) < 0.03


def test_multivariate_normal_moments():
    mean = np.array([1.0, -2.0, 0.5])
    cov = np.array([[2.0, 0.6, 0.1], [0.6, 1.0, -0.3], [0.1, -0.3, 0.5]])
    for method in ("cholesky", "svd", "eigh"):
        x = draws(random.multivariate_normal, mean, cov, (N,), method=method)
        np.testing.assert_allclose(x.mean(0), mean, atol=0.04)
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)


def test_orthogonal_matrices_are_orthogonal():
    q = draws(random.orthogonal, 4, (50,))
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), q.shape),
                               atol=1e-12)
    wide = draws(random.orthogonal, 2, (5,), m=4)
    np.testing.assert_allclose(wide @ np.swapaxes(wide, -1, -2),
                               np.broadcast_to(np.eye(2), (5, 2, 2)), atol=1e-12)
    u = draws(random.orthogonal, 3, (), np.complex128)
    np.testing.assert_allclose(u @ u.conj().T, np.eye(3), atol=1e-12)


def chi_square_p(observed, expected):
    keep = expected > 5
    return stats.chisquare(observed[keep], expected[keep] * observed[keep].sum() /
                           expected[keep].sum()).pvalue


@pytest.mark.parametrize("lam", [0.7, 4.0, 25.0, 300.0])
def test_poisson_frequencies(lam):
    k = draws(random.poisson, lam, (N,))
    values = np.arange(k.max() + 1)
    assert k.min() >= 0
    assert chi_square_p(np.bincount(k), N * stats.poisson(lam).pmf(values)) > P_MIN


def test_randint_frequencies_and_ranges():
    x = draws(random.randint, (N,), -3, 10)
    assert x.min() == -3 and x.max() == 9
    assert chi_square_p(np.bincount(x + 3), np.full(13, N / 13)) > P_MIN
    full = draws(random.randint, (N,), 0, 256, np.uint8)
    assert full.max() == 255 and chi_square_p(np.bincount(full), np.full(256, N / 256)) > P_MIN
    assert np.all(draws(random.randint, (100,), 5, 5) == 5)  # an empty range gives minval


def test_bernoulli_rademacher_and_bits():
    assert abs(draws(random.bernoulli, 0.3, (N,)).mean() - 0.3) < 0.015
    assert abs(draws(random.bernoulli, 0.3, (N,), mode="high").mean() - 0.3) < 0.015
    r = draws(random.rademacher, (N,))
    assert set(np.unique(r)) == {-1, 1} and abs(r.mean()) < 0.03
    bits = np.unpackbits(draws(random.bits, (N,), np.uint32).view(np.uint8)).reshape(N, 32)
    assert np.all(np.abs(bits.mean(0) - 0.5) < 0.02)


def test_categorical_and_choice_frequencies():
    p = np.array([0.05, 0.15, 0.3, 0.5])
    for sample in (draws(random.categorical, np.log(p), shape=(N,)),
                   draws(random.choice, 4, (N,), p=p),
                   draws(random.categorical, np.log(np.tile(p, (N, 1))), axis=1)):
        assert chi_square_p(np.bincount(sample, minlength=4), N * p) > P_MIN
    batch = draws(random.categorical, np.log(np.tile(p, (N, 1))), shape=(3, N), replace=False)
    assert np.all(np.sort(batch, axis=0)[1:] != np.sort(batch, axis=0)[:-1])  # distinct
    first = batch[0]  # the first of a sample without replacement is a categorical draw
    assert chi_square_p(np.bincount(first, minlength=4), N * p) > P_MIN
    picked = draws(random.choice, 10, (4,), replace=False, p=np.arange(1.0, 11.0))
    assert len(set(picked.tolist())) == 4


def test_permutations_are_uniform():
    rows = np.tile(np.arange(4), (N, 1))
    perms = draws(random.permutation, rows, 1, True)
    assert np.all(np.sort(perms, axis=1) == rows)
    codes = perms @ np.array([64, 16, 4, 1])
    assert chi_square_p(np.bincount(codes)[np.unique(codes)], np.full(24, N / 24)) > P_MIN
    p = draws(random.permutation, 1000)
    assert sorted(p.tolist()) == list(range(1000))
    x = np.arange(12.0).reshape(3, 4)
    shuffled = draws(random.permutation, x, 1)  # whole columns move together
    assert np.all(np.sort(shuffled, axis=1) == x) and np.all(np.diff(shuffled, axis=0) == 4)
    chosen = draws(random.choice, x, (2,), replace=False, axis=1)
    assert chosen.shape == (3, 2) and np.all(np.diff(chosen, axis=0) == 4)


def test_split_keys_give_independent_streams():
    keys = random.split(random.PRNGKey(0), 2)
    a, b = (np.asarray(random.normal(k, (N,))) for k in keys)
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.03
    folded = [np.asarray(random.uniform(random.fold_in(random.PRNGKey(0), i), (N,)))
              for i in range(3)]
    assert all(abs(np.corrcoef(folded[i], folded[j])[0, 1]) < 0.03 for i, j in
               ((0, 1), (0, 2), (1, 2)))
    assert fnp.asarray(folded[0]).shape == (N,)
