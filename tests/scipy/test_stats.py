"""funcgrad.scipy.stats against scipy.stats: every function of every distribution on grids
that cross the support's edges (and with invalid parameters), and its derivatives to second
order (forward and reverse) in every continuous argument by finite differences."""
import numpy as np
import pytest
import scipy.stats as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import stats
from funcgrad.test_util import check_grads

# distribution: (shape parameters, loc, scale, standard grid, interior points, arguments
# in which the CDF family is not differentiable)
CONTINUOUS = {
    "norm": ((), 0.5, 2.0, np.linspace(-40, 40, 9), [-1.3, 0.4, 2.2], ()),
    "t": ((3.5,), -0.5, 1.5, np.linspace(-30, 30, 9), [-1.3, 0.4, 2.2], (1,)),
    "chi2": ((3.0,), 0.2, 1.5, np.linspace(-2, 40, 9), [0.7, 1.9, 3.4], ()),
    "gamma": ((2.5,), -1.0, 0.7, np.linspace(-2, 30, 9), [0.7, 1.9, 3.4], ()),
    "beta": ((2.0, 3.5), 0.5, 2.0, np.linspace(-0.5, 1.5, 9), [0.2, 0.45, 0.7], (1, 2)),
    "expon": ((), 0.3, 2.0, np.linspace(-2, 40, 9), [0.4, 1.1, 2.7], ()),
    "laplace": ((), 0.3, 2.0, np.linspace(-40, 40, 9), [-1.2, 0.6, 1.7], ()),
    "logistic": ((), 0.3, 2.0, np.linspace(-800, 800, 9), [-1.2, 0.6, 1.7], ()),
    "cauchy": ((), 0.3, 2.0, np.linspace(-1e6, 1e6, 9), [-1.2, 0.6, 1.7], ()),
    "uniform": ((), -1.0, 3.0, np.linspace(-0.5, 1.5, 9), [0.2, 0.45, 0.7], ()),
}
QUANTILES = np.array([0.0, 1e-12, 0.05, 0.3, 0.5, 0.8, 0.999, 1.0, -0.1, 1.2])
INTERIOR_Q = [0.15, 0.4, 0.85]
CDF_FAMILY = ("cdf", "logcdf", "sf", "logsf", "ppf", "isf")


def _functions(name):
    return [f for f in getattr(stats, name).__all__ if f != "rvs"]


def _close(actual, expected, rtol=1e-9, atol=1e-300):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_values_match_scipy(name):
    shapes, loc, scale, grid, _, _ = CONTINUOUS[name]
    mod, ref = getattr(stats, name), getattr(st, name)
    x = loc + scale * grid
    with np.errstate(all="ignore"):
        for fn in _functions(name):
            arg = QUANTILES if fn in ("ppf", "isf") else x
            expected = getattr(ref, fn)(arg, *shapes, loc, scale)
            _close(getattr(mod, fn)(arg, *shapes, loc, scale), expected, rtol=1e-8)
            # scale <= 0 is invalid: nan, as in scipy
            assert np.isnan(np.asarray(getattr(mod, fn)(arg, *shapes, loc, -1.0))).all()


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_defaults_and_broadcasting(name):
    shapes, _, _, grid, _, _ = CONTINUOUS[name]
    mod, ref = getattr(stats, name), getattr(st, name)
    x = grid[:, None]
    locs = np.array([0.0, 0.5])
    with np.errstate(all="ignore"):
        _close(mod.logpdf(x, *shapes), ref.logpdf(x, *shapes))
        _close(mod.cdf(x, *shapes, loc=locs), ref.cdf(x, *shapes, loc=locs), rtol=1e-8)
        assert mod.logpdf(np.float32(0.5), *shapes).dtype == np.float32


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_gradients_to_second_order(name):
    shapes, loc, scale, _, interior, frozen = CONTINUOUS[name]
    mod = getattr(stats, name)
    x = loc + scale * np.array(interior)
    for fn in _functions(name):
        arg = np.array(INTERIOR_Q) if fn in ("ppf", "isf") else x
        f = getattr(mod, fn)
        args = (arg, *(np.float64(s) for s in shapes), np.float64(loc), np.float64(scale))
        if fn in CDF_FAMILY and frozen:
            fixed = dict((i, args[i]) for i in frozen)
            free = [i for i in range(len(args)) if i not in fixed]

            def partial(*xs, f=f, fixed=fixed, free=free):
                full = {**fixed, **dict(zip(free, xs))}
                return f(*[full[i] for i in range(len(full))])
            check_grads(partial, [args[i] for i in free], order=2, rtol=1e-4, atol=1e-6)
        else:
            check_grads(f, args, order=2, rtol=1e-4, atol=1e-6)


def test_gradients_outside_the_support_are_finite():
    """Masked-out branches use stand-in arguments: no 0 * inf = nan leaks into gradients."""
    for name in ("chi2", "gamma", "beta", "expon", "uniform"):
        shapes = CONTINUOUS[name][0]
        for fn in ("logpdf", "cdf", "sf"):
            free = 1 if name == "beta" and fn != "logpdf" else 1 + len(shapes)
            g = fg.grad(lambda x, *s: fnp.sum(getattr(getattr(stats, name), fn)(x, *s)),
                        tuple(range(free)))(np.array([-3.0, 5.0]), *map(np.float64, shapes))
            for leaf in g:
                assert np.isfinite(np.asarray(leaf)).all(), (name, fn, g)


def test_t_cdf_is_not_differentiable_in_df_with_a_clear_error():
    with pytest.raises(NotImplementedError, match="stdtr with respect to df"):
        fg.grad(lambda df: stats.t.cdf(0.5, df))(3.0)


DISCRETE = {
    "poisson": ((3.5,), [0.4, 2.0, 6.5]),
    "bernoulli": ((0.3,), [0.2, 0.5]),
    "binom": ((7, 0.4), [0.2, 0.5, 0.8]),
}


@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_values_match_scipy(name):
    shapes, _ = DISCRETE[name]
    mod, ref = getattr(stats, name), getattr(st, name)
    k = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 6.0, 7.0, 8.0, 12.0, 40.0])
    with np.errstate(all="ignore"):
        for fn in _functions(name):
            arg = QUANTILES[QUANTILES >= 0] if fn == "ppf" else k
            for loc in (0, 2):
                # atol: our log-CDFs keep digits scipy's log(cdf) rounds to 0
                _close(getattr(mod, fn)(arg, *shapes, loc=loc),
                       getattr(ref, fn)(arg, *shapes, loc=loc), rtol=1e-9, atol=1e-20)


@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_gradients_in_the_continuous_parameter(name):
    shapes, values = DISCRETE[name]
    mod = getattr(stats, name)
    k = np.array([0.0, 1.0, 3.0]) if name != "bernoulli" else np.array([0.0, 1.0])
    for fn in _functions(name):
        if fn == "ppf":
            continue  # piecewise constant in p
        for value in values:
            if name == "binom":
                f = lambda p, f=getattr(mod, fn): f(k, shapes[0], p)  # noqa: E731
            else:
                f = lambda s, f=getattr(mod, fn): f(k, s)  # noqa: E731
            check_grads(f, (np.float64(value),), order=2, rtol=1e-4, atol=1e-6)


def test_multivariate_normal_matches_scipy_for_every_cov_form():
    rng = np.random.RandomState(0)
    a = rng.randn(3, 3)
    cov = a @ a.T + np.eye(3)
    mean = rng.randn(3)
    x = rng.randn(5, 3)
    for args in [(mean, cov), (mean, np.diag(cov)), (mean, 2.5), (None, cov)]:
        _close(stats.multivariate_normal.logpdf(x, *args),
               st.multivariate_normal.logpdf(x, *args), rtol=1e-10)
        _close(stats.multivariate_normal.pdf(x[0], *args),
               st.multivariate_normal.pdf(x[0], *args), rtol=1e-10)
    _close(stats.multivariate_normal.logpdf(np.array([0.5, 1.0]), 0, 2.0),
           st.multivariate_normal.logpdf(np.array([0.5, 1.0]), 0, 2.0))
    singular = np.outer(mean, mean) + np.diag([1.0, 1.0, 0.0])
    pts = x @ singular
    _close(stats.multivariate_normal.logpdf(pts, None, singular, allow_singular=True),
           st.multivariate_normal.logpdf(pts, None, singular, allow_singular=True),
           rtol=1e-7)
    check_grads(lambda x, m, c: stats.multivariate_normal.logpdf(x, m, c @ c.T + np.eye(3)),
                (x[:2], mean, a), order=2, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match=r"cov.*shape \(2, 2\)"):
        stats.multivariate_normal.logpdf(x, np.zeros(2), cov)


def test_dirichlet_matches_scipy_and_checks_its_input():
    alpha = np.array([1.5, 2.0, 3.0])
    x = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]).T
    _close(stats.dirichlet.logpdf(x, alpha), st.dirichlet.logpdf(x, alpha))
    _close(stats.dirichlet.pdf(x[:2, 0], alpha), st.dirichlet.pdf(x[:2, 0], alpha))
    # K - 1 free components (the last is 1 - their sum): perturbations stay on the simplex
    check_grads(stats.dirichlet.logpdf, (x[:2, 0], alpha), order=2, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="normal simplex"):
        stats.dirichlet.logpdf(np.array([0.2, 0.3, 0.6]), alpha)
    with pytest.raises(ValueError, match="greater than 0"):
        stats.dirichlet.logpdf(x[:, 0], -alpha)


def test_samplers_are_scipys():
    for name in sorted(CONTINUOUS) + sorted(DISCRETE) + ["dirichlet", "multivariate_normal"]:
        assert getattr(stats, name).rvs.__name__ == "rvs"
    np.testing.assert_array_equal(stats.norm.rvs(0.5, 2.0, size=4, random_state=3),
                                  st.norm.rvs(0.5, 2.0, size=4, random_state=3))
    np.testing.assert_array_equal(stats.t.rvs(3.0, size=2, random_state=1),
                                  st.t.rvs(3.0, size=2, random_state=1))


def test_multivariate_normal_entropy():
    a = np.random.RandomState(4).randn(3, 3)
    cov = a @ a.T + np.eye(3)
    np.testing.assert_allclose(float(stats.multivariate_normal.entropy(np.zeros(3), cov)),
                               st.multivariate_normal.entropy(np.zeros(3), cov), rtol=1e-12)
    check_grads(lambda c: stats.multivariate_normal.entropy(None, c @ c.T + np.eye(3)), (a,),
                order=2)


def test_distribution_modules_import_as_modules():
    import funcgrad.scipy.stats.norm as norm
    from funcgrad.scipy.stats import multivariate_normal as mvn
    assert norm.logpdf is stats.norm.logpdf and mvn.logpdf is stats.multivariate_normal.logpdf
