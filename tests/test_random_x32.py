"""funcgrad.random, funcgrad.nn.initializers and the stax layers with ``jax_enable_x64``
disabled: their defaults become 32-bit, as JAX's are in its default configuration, and the
draws are the ones an explicit 32-bit dtype gives with x64 on (which tests/test_random_jax.py
checks against JAX bit for bit). Found running JAX's MAML tutorial: with x64 disabled
funcgrad drew float64 weights, so the tutorial started from other weights than JAX's."""
import numpy as np
import pytest

import funcgrad.numpy as fnp
from funcgrad import config, nn, random
from funcgrad.example_libraries import stax

KEY = random.PRNGKey(0)
F32, I32 = np.dtype(np.float32), np.dtype(np.int32)

# name -> (draw with the default dtype, the same draw with its 32-bit dtype given)
DRAWS = {
    "normal": (lambda: random.normal(KEY, (50,)), lambda: random.normal(KEY, (50,), F32)),
    "uniform": (lambda: random.uniform(KEY, (50,)), lambda: random.uniform(KEY, (50,), F32)),
    "exponential": (lambda: random.exponential(KEY, (50,)),
                    lambda: random.exponential(KEY, (50,), F32)),
    "randint": (lambda: random.randint(KEY, (50,), -5, 70),
                lambda: random.randint(KEY, (50,), -5, 70, I32)),
    "bits": (lambda: random.bits(KEY, (50,)), lambda: random.bits(KEY, (50,), np.uint32)),
    "choice with p": (lambda: random.choice(KEY, 5, (20,), p=[0.1, 0.2, 0.3, 0.2, 0.2]),
                      lambda: random.choice(KEY, 5, (20,), p=np.float32([.1, .2, .3, .2, .2]))
                      .astype(I32)),
    "categorical": (lambda: random.categorical(KEY, fnp.zeros(6), shape=(20,)),
                    lambda: random.categorical(KEY, fnp.zeros(6, F32), shape=(20,))
                    .astype(I32)),
}


@pytest.mark.parametrize("name", list(DRAWS))
def test_defaults_are_32_bit_and_the_draws_those_of_the_32_bit_dtype(name):
    default, explicit = DRAWS[name]
    with config.enable_x64(False):
        got = default()
    want = explicit()
    assert got.dtype == want.dtype and got.dtype.itemsize == 4
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


# recorded from JAX 0.10.2 in its default configuration (x64 disabled), PRNGKey(0)
JAX_X32 = {
    "rademacher": (lambda: random.rademacher(KEY, (50,)), I32, [
        -1, -1, 1, 1, -1, 1, 1, -1, -1, 1, -1, 1, -1, -1, -1, -1, -1, -1, -1, 1, 1, -1, -1,
        -1, -1, -1, -1, -1, 1, 1, 1, -1, 1, -1, 1, -1, -1, 1, 1, 1, 1, 1, -1, -1, -1, 1, 1,
        1, -1, -1]),
    "bernoulli": (lambda: random.bernoulli(KEY, 0.3, (20,)), np.dtype(bool), [
        0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]),
    "poisson": (lambda: random.poisson(KEY, 3.0, (10,)), I32, [0, 0, 4, 4, 1, 2, 2, 6, 1, 4]),
}


@pytest.mark.parametrize("name", list(JAX_X32))
def test_draws_that_use_default_floats_inside_are_jaxs(name):
    """rademacher and bernoulli compare uniforms of the default float with 0.5 or p: with
    x64 disabled those are float32, as JAX's, whatever the dtype of the result."""
    draw, dtype, want = JAX_X32[name]
    with config.enable_x64(False):
        got = draw()
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.asarray(got).astype(int), want)


def test_seeds_keep_their_low_32_bits():
    with config.enable_x64(False):
        np.testing.assert_array_equal(np.asarray(random.PRNGKey(2**40 + 5)), [0, 5])
        np.testing.assert_array_equal(np.asarray(random.PRNGKey(-1)), [0, 2**32 - 1])
    np.testing.assert_array_equal(np.asarray(random.PRNGKey(2**40 + 5)), [256, 5])


@pytest.mark.parametrize("make", [nn.initializers.glorot_normal, nn.initializers.he_uniform,
                                  nn.initializers.lecun_normal, nn.initializers.zeros,
                                  nn.initializers.ones])
def test_initializers_default_to_float32(make):
    init = make() if make not in (nn.initializers.zeros, nn.initializers.ones) else make
    with config.enable_x64(False):
        got = init(KEY, (4, 3))
    want = init(KEY, (4, 3), F32)
    assert got.dtype == F32
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_one_hot_defaults_to_float32():
    with config.enable_x64(False):
        assert nn.one_hot(fnp.asarray([0, 2]), 3).dtype == F32
    assert nn.one_hot(fnp.asarray([0, 2]), 3).dtype == np.float64


def test_stax_dense_init_is_jaxs_default():
    """The first layer of JAX's MAML tutorial, ``stax.serial(Dense(2))`` initialised with
    ``PRNGKey(0)``: the values JAX 0.10.2 gives in its default (32-bit) configuration."""
    init, _ = stax.serial(stax.Dense(2))
    with config.enable_x64(False):
        _, ((w, b),) = init(KEY, (-1, 1))
    assert w.dtype == b.dtype == F32
    np.testing.assert_allclose(np.asarray(w), [[0.17612728, -0.6757422]], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(b), [-0.01335625, -0.00352563], rtol=1e-6)
