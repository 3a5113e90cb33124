"""funcgrad.nn against jax.nn (values and gradients, float64) on grids that reach +-1e4,
finite gradients there, derivatives to second order by finite differences, and the
reductions' axis/where/keepdims handling."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import nn
from funcgrad.test_util import check_grads

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnn = jax.nn
jnp = jax.numpy


@pytest.fixture(autouse=True)
def _eager_jax():
    """JAX op by op: compiling each jitted reference costs more than running it here."""
    with jax.disable_jit():
        yield

GRID = np.array([-1e4, -50.0, -6.0, -3.1, -1.0, -0.4, 0.0, 0.3, 1.0, 2.7, 6.0, 8.0, 50.0, 1e4])
# points away from the kinks (0, +-1, +-3, 6) for the finite differences
SMOOTH = np.array([-7.3, -2.2, -0.6, 0.45, 1.7, 4.1, 9.0])

ELEMENTWISE = ["relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "soft_sign", "silu",
               "swish", "gelu", "elu", "celu", "selu", "leaky_relu", "hard_tanh",
               "hard_sigmoid", "hard_silu", "hard_swish", "mish", "squareplus", "identity",
               "tanh"]
VARIANTS = {"gelu": [dict(approximate=True), dict(approximate=False)],
            "elu": [dict(), dict(alpha=0.5)], "celu": [dict(), dict(alpha=2.0)],
            "leaky_relu": [dict(), dict(negative_slope=0.2)],
            "squareplus": [dict(), dict(b=0.5)]}


def _close(actual, expected, rtol=1e-12, atol=1e-300):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_activation_values_and_gradients_match_jax(name):
    for kw in VARIANTS.get(name, [{}]):
        ours = lambda x: getattr(nn, name)(x, **kw)  # noqa: E731
        theirs = lambda x: getattr(jnn, name)(x, **kw)  # noqa: E731
        # rtol 1e-6: where JAX's formula cancels (gelu's lower tail, squareplus at -1e4,
        # tanh's derivative near 1) ours keeps more digits (test_tails_are_accurate)
        _close(ours(GRID), theirs(jnp.asarray(GRID)), rtol=1e-6, atol=1e-13)
        g = fg.grad(lambda x: fnp.sum(ours(x)))(GRID)
        assert np.isfinite(np.asarray(g)).all(), (name, kw, g)
        _close(g, jax.grad(lambda x: theirs(x).sum())(jnp.asarray(GRID)), rtol=1e-6, atol=1e-13)


def test_tails_are_accurate():
    """Against 40-digit arithmetic, where the textbook formulas cancel."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    x = [-1e4, -30.0, -6.0, -1.0, 2.0, 30.0]
    exact = {
        "gelu": lambda v: v / (1 + mpmath.exp(-2 * mpmath.sqrt(2 / mpmath.pi)
                                              * (v + mpmath.mpf("0.044715") * v ** 3))),
        "squareplus": lambda v: (v + mpmath.sqrt(v * v + 4)) / 2,
        "log_sigmoid": lambda v: -mpmath.log(1 + mpmath.exp(-v)),
        "softplus": lambda v: mpmath.log(1 + mpmath.exp(v)),
        "silu": lambda v: v / (1 + mpmath.exp(-v)),
        "mish": lambda v: v * mpmath.tanh(mpmath.log(1 + mpmath.exp(v))),
    }
    for name, f in exact.items():
        expected = np.array([float(f(mpmath.mpf(v))) for v in x])
        _close(getattr(nn, name)(np.array(x)), expected, rtol=1e-14, atol=1e-300)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_activation_derivatives_to_second_order(name):
    for kw in VARIANTS.get(name, [{}]):
        check_grads(lambda x: getattr(nn, name)(x, **kw), (SMOOTH,), order=2)


def test_log1mexp():
    x = np.array([1e-12, 1e-3, 0.5, np.log(2.0), 3.0, 40.0, 1e4])
    _close(nn.log1mexp(x), jnn.log1mexp(jnp.asarray(x)))
    check_grads(nn.log1mexp, (np.array([0.1, 0.5, 0.8, 3.0]),), order=2)


def test_activations_keep_float32():
    x = np.array([-2.0, 0.5], np.float32)
    for name in ELEMENTWISE:
        assert getattr(nn, name)(x).dtype == np.float32, name


X = np.random.RandomState(0).randn(3, 4) * 3
X[0] += 1e4
X[1] -= 1e4


@pytest.mark.parametrize("axis", [-1, 0, (0, 1), None])
def test_softmax_family_matches_scipy(axis):
    import scipy.special as ss
    for name in ("softmax", "log_softmax"):
        _close(getattr(nn, name)(X, axis=axis), getattr(ss, name)(X, axis=axis), rtol=1e-11,
               atol=1e-300)
        check_grads(lambda x: getattr(nn, name)(x, axis=axis),
                    (X - np.mean(X, axis=1, keepdims=True),), order=2)
    for keepdims in (False, True):
        _close(nn.logsumexp(X, axis=axis, keepdims=keepdims),
               ss.logsumexp(X, axis=axis, keepdims=keepdims))
    out, sign = nn.logsumexp(X, axis=axis, b=-np.ones(4), return_sign=True)
    e_out, e_sign = ss.logsumexp(X, axis=axis, b=-np.ones(4), return_sign=True)
    _close(out, e_out)
    _close(sign, e_sign)


def test_where_masks_match_jax():
    mask = np.random.RandomState(1).uniform(size=X.shape) < 0.7
    mask[:, 0] = True
    w = np.random.RandomState(2).randn(*X.shape)
    for name in ("softmax", "log_softmax"):
        _close(getattr(nn, name)(X, where=mask),
               getattr(jnn, name)(jnp.asarray(X), where=mask), rtol=1e-11)
    grad = fg.grad(lambda x: fnp.sum(nn.softmax(x, where=mask) * w))(X)
    _close(grad, jax.grad(lambda x: (jnn.softmax(x, where=mask) * w).sum())(jnp.asarray(X)),
           rtol=1e-10, atol=1e-12)
    _close(nn.logsumexp(X, axis=1, where=mask),
           jnn.logsumexp(jnp.asarray(X), axis=1, where=mask))


def _standardize_reference(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None,
                           algorithm="fast"):
    """jax.nn.standardize's formula in numpy (long double)."""
    x = np.asarray(x, np.longdouble)
    if mean is None:
        mean = np.mean(x, axis, keepdims=True, where=True if where is None else where)
    if variance is None:
        w = True if where is None else where
        if algorithm == "stable":
            variance = np.mean((x - mean) ** 2, axis, keepdims=True, where=w)
        else:
            variance = np.maximum(np.mean(x * x, axis, keepdims=True, where=w) - mean ** 2, 0)
    return ((x - mean) / np.sqrt(variance + epsilon)).astype(np.float64)


@pytest.mark.parametrize("algorithm", ["fast", "stable"])
def test_standardize(algorithm):
    mask = np.random.RandomState(1).uniform(size=X.shape) < 0.7
    mask[:, :2] = True
    small = X - np.array([[1e4], [-1e4], [0.0]])
    for kw in (dict(), dict(axis=0), dict(where=mask), dict(mean=1.0, variance=4.0),
               dict(epsilon=0.1)):
        _close(nn.standardize(small, algorithm=algorithm, **kw),
               _standardize_reference(small, algorithm=algorithm, **kw), rtol=1e-9, atol=1e-12)
    _close(nn.standardize(small, algorithm=algorithm),
           jnn.standardize(jnp.asarray(small), algorithm=algorithm), rtol=1e-9, atol=1e-12)
    out = np.asarray(nn.standardize(X, algorithm=algorithm))
    assert np.isfinite(out).all()
    if algorithm == "stable":  # the two-pass variance is exact at an offset of 1e4
        _close(out, _standardize_reference(X, algorithm="stable"), rtol=1e-8, atol=1e-10)
    check_grads(lambda x: nn.standardize(x, algorithm=algorithm), (small,), order=2)
    with pytest.raises(ValueError, match="Unknown algorithm"):
        nn.standardize(X, algorithm="exact")


def test_glu_and_one_hot():
    x = np.random.RandomState(3).randn(2, 6)
    for axis in (-1, 1):
        _close(nn.glu(x, axis), jnn.glu(jnp.asarray(x), axis))
    check_grads(nn.glu, (x,), order=2)
    with pytest.raises(ValueError, match="divisible by 2"):
        nn.glu(x[:, :5])
    labels = np.array([[0, 2], [3, -1]])
    for axis in (-1, 0, 1):
        _close(nn.one_hot(labels, 3, axis=axis), jnn.one_hot(labels, 3, axis=axis))
    assert nn.one_hot(labels, 3, dtype=np.float32).dtype == np.float32
    with pytest.raises(TypeError, match="num_classes"):
        nn.one_hot(labels, 3.0)
