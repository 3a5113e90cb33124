"""funcgrad.random without JAX: JAX's recorded numbers, keys, argument errors, gradients,
tracing, and the primitives' own facts (Threefry's published test vectors, the exactly
rounded fma). tests/test_random_jax.py compares with JAX itself when it is installed,
tests/test_random_distributions.py checks the distributions."""
from fractions import Fraction

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import random
from funcgrad.primitives import random as P
from funcgrad.primitives.kernels import random as K
from funcgrad.test_util import check_grads, numpy_uses_svml
from funcgrad.tree_util import tree_flatten, tree_unflatten

# Each case is written once for both modules: RECORDED[name](jax.random) produced
# RECORDED_VALUES[name] with JAX 0.10.2 (CPU, jax_enable_x64=True); floats are stored as
# their bit patterns. tests/test_random_jax.py reruns the cases against JAX itself.
RECORDED = {
    "PRNGKey(0)": lambda r: r.PRNGKey(0),
    "PRNGKey(-1)": lambda r: r.PRNGKey(-1),
    "PRNGKey(2**40+7)": lambda r: r.PRNGKey(2**40 + 7),
    "split(PRNGKey(0), 3)": lambda r: r.split(r.PRNGKey(0), 3),
    "split(PRNGKey(42), (2, 2))": lambda r: r.split(r.PRNGKey(42), (2, 2)),
    "fold_in(PRNGKey(0), 7)": lambda r: r.fold_in(r.PRNGKey(0), 7),
    "fold_in(PRNGKey(42), 2**32-1)": lambda r: r.fold_in(r.PRNGKey(42), 2**32 - 1),
    "bits uint32 (5,)": lambda r: r.bits(r.PRNGKey(0), (5,), np.uint32),
    "bits uint64 (3,)": lambda r: r.bits(r.PRNGKey(1), (3,), np.uint64),
    "bits uint8 (6,)": lambda r: r.bits(r.PRNGKey(2), (6,), np.uint8),
    "uniform float32 (2, 3)": lambda r: r.uniform(r.PRNGKey(0), (2, 3), np.float32),
    "uniform float64 (4,)": lambda r: r.uniform(r.PRNGKey(42), (4,), np.float64),
    "uniform float32 [-2, 5)": lambda r: r.uniform(r.PRNGKey(3), (4,), np.float32, -2.0, 5.0),
    "normal float32 (5,)": lambda r: r.normal(r.PRNGKey(0), (5,), np.float32),
    "normal float64 (4,)": lambda r: r.normal(r.PRNGKey(7), (4,), np.float64),
    "normal complex64 (2,)": lambda r: r.normal(r.PRNGKey(1), (2,), np.complex64),
    "randint int32 [-5, 100)": lambda r: r.randint(r.PRNGKey(0), (6,), -5, 100, np.int32),
    "randint int64 [0, 2**40)": lambda r: r.randint(r.PRNGKey(5), (3,), 0, 2**40, np.int64),
    "bernoulli p=0.3 (8,)": lambda r: r.bernoulli(r.PRNGKey(0), 0.3, (8,)),
    "permutation(10)": lambda r: r.permutation(r.PRNGKey(0), 10),
    "choice(5, (4,), p)": lambda r: r.choice(
        r.PRNGKey(1), 5, (4,), p=np.array([0.1, 0.2, 0.3, 0.3, 0.1])
    ),
    "categorical (2, 4)": lambda r: r.categorical(
        r.PRNGKey(2), np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]]))
    ),
    "gumbel float32 (3,)": lambda r: r.gumbel(r.PRNGKey(0), (3,), np.float32),
    "exponential float64 (3,)": lambda r: r.exponential(r.PRNGKey(0), (3,), np.float64),
    "gamma float64 a=(0.3, 1, 4.5)": lambda r: r.gamma(r.PRNGKey(0), np.array([0.3, 1.0, 4.5])),
    "beta float64 (3,)": lambda r: r.beta(r.PRNGKey(4), 0.5, 2.0, (3,)),
    "poisson lam=(0.5, 4, 30, 1e3)": lambda r: r.poisson(
        r.PRNGKey(0), np.array([0.5, 4.0, 30.0, 1e3])
    ),
    "laplace float32 (3,)": lambda r: r.laplace(r.PRNGKey(9), (3,), np.float32),
    "loggamma float64 a=(0.01, 0.5, 3)": lambda r: r.loggamma(
        r.PRNGKey(1), np.array([0.01, 0.5, 3.0])
    ),
    "t float64 df=(0.5, 3, 30)": lambda r: r.t(r.PRNGKey(2), np.array([0.5, 3.0, 30.0])),
    "chisquare float64 df=(0.5, 3, 30)": lambda r: r.chisquare(
        r.PRNGKey(3), np.array([0.5, 3.0, 30.0])
    ),
    "f float64 (3,)": lambda r: r.f(r.PRNGKey(4), np.array([1.0, 5.0, 20.0]), 4.0),
    "dirichlet float64 (2, 3)": lambda r: r.dirichlet(
        r.PRNGKey(5), np.array([0.2, 1.0, 4.0]), (2,)
    ),
    "generalized_normal p=1.5 (3,)": lambda r: r.generalized_normal(r.PRNGKey(6), 1.5, (3,)),
    "ball d=3 (2, 3)": lambda r: r.ball(r.PRNGKey(7), 3, 2, (2,)),
    "pareto float64 (3,)": lambda r: r.pareto(r.PRNGKey(8), np.array([0.5, 2.0, 9.0])),
    "lognormal float64 (3,)": lambda r: r.lognormal(r.PRNGKey(9), 0.5, (3,)),
    "truncated_normal float64 (3,)": lambda r: r.truncated_normal(
        r.PRNGKey(10), -0.5, 2.0, (3,)
    ),
    "orthogonal float64 (3, 3)": lambda r: r.orthogonal(r.PRNGKey(11), 3),
    "cauchy float64 (3,)": lambda r: r.cauchy(r.PRNGKey(12), (3,)),
    "logistic float64 (3,)": lambda r: r.logistic(r.PRNGKey(13), (3,)),
    "rademacher (6,)": lambda r: r.rademacher(r.PRNGKey(14), (6,)),
}

RECORDED_VALUES = {
    "PRNGKey(0)": ("uint32", (2,), [0, 0]),
    "PRNGKey(-1)": ("uint32", (2,), [4294967295, 4294967295]),
    "PRNGKey(2**40+7)": ("uint32", (2,), [256, 7]),
    "split(PRNGKey(0), 3)": ("uint32", (3, 2), [1797259609, 2579123966, 928981903, 3453687069,
        4146024105, 2718843009]),
    "split(PRNGKey(42), (2, 2))": ("uint32", (2, 2, 2), [1832780943, 270669613, 64467757,
        2916123636, 2465931498, 255383827, 3134548294, 894150801]),
    "fold_in(PRNGKey(0), 7)": ("uint32", (2,), [2716826189, 292468403]),
    "fold_in(PRNGKey(42), 2**32-1)": ("uint32", (2,), [2398536845, 3890976714]),
    "bits uint32 (5,)": ("uint32", (5,), [4070199207, 4202968722, 1427181096, 2012915765,
        2447653815]),
    "bits uint64 (3,)": ("uint64", (3,), [2179487362436112514, 8370371427069427784,
        10487943526538222699]),
    "bits uint8 (6,)": ("uint8", (6,), [105, 100, 233, 201, 29, 180]),
    "uniform float32 (2, 3)": ("float32", (2, 3), [0x3f729a4e, 0x3f7a8436, 0x3eaa221c,
        0x3eeff550, 0x3f11e43a, 0x3e2979a0]),
    "uniform float64 (4,)": ("float64", (4,), [0x3fdb4f8123c40884, 0x3f8ebd996d6e8400,
        0x3fe25f641d41e71a, 0x3fe75aad28c6a974]),
    "uniform float32 [-2, 5)": ("float32", (4,), [0xbfbda61e, 0x409224f3, 0x4022bb95,
        0x409a8a02]),
    "normal float32 (5,)": ("float32", (5,), [0x3fcfb2bd, 0x40019df0, 0xbede0017, 0xbda10222,
        0x3e34512c]),
    "normal float64 (4,)": ("float64", (4,), [0x3ff02f070d8bd9d2, 0xbffb0e95e22ccc17,
        0xbfe82cc7a417f69a, 0xbff84daea4a150cc]),
    "normal complex64 (2,)": ("complex64", (2,), [0x3ec094f7, 0xbe309df1, 0xbf02e14c,
        0x3db1ef59]),
    "randint int32 [-5, 100)": ("int32", (6,), [59, 25, 57, 53, 36, 7]),
    "randint int64 [0, 2**40)": ("int64", (3,), [576183698055, 258976753532, 92141544162]),
    "bernoulli p=0.3 (8,)": ("bool", (8,), [0, 1, 0, 0, 0, 0, 0, 0]),
    "permutation(10)": ("int64", (10,), [0, 1, 8, 5, 6, 4, 3, 2, 7, 9]),
    "choice(5, (4,), p)": ("int64", (4,), [3, 2, 2, 1]),
    "categorical (2, 4)": ("int64", (2,), [2, 2]),
    "gumbel float32 (3,)": ("float32", (3,), [0x403b1889, 0x4075499c, 0xbdc66ff7]),
    "exponential float64 (3,)": ("float64", (3,), [0x3fe158a45952b5d7, 0x3fcf3252427a18a6,
        0x400ae4a080aa735f]),
    "gamma float64 a=(0.3, 1, 4.5)": ("float64", (3,), [0x3f9265539f668e6f, 0x3fd64e458cd61186,
        0x401c70f9daf2982e]),
    "beta float64 (3,)": ("float64", (3,), [0x3fcd22e3d714e477, 0x3fa6d467f9963fda,
        0x3fc4ecb1f242b37c]),
    "poisson lam=(0.5, 4, 30, 1e3)": ("int64", (4,), [0, 1, 23, 1031]),
    "laplace float32 (3,)": ("float32", (3,), [0x402069e6, 0xc02f0ed8, 0x3e32e634]),
    "loggamma float64 a=(0.01, 0.5, 3)": ("float64", (3,), [0xc0411fd33ff929e7,
        0xbfbd244522083b8e, 0x3fe8aa12412a2443]),
    "t float64 df=(0.5, 3, 30)": ("float64", (3,), [0xbfcbc8b9c3a36283, 0xbfec01d95ef1ac86,
        0x3ff374df936268b2]),
    "chisquare float64 df=(0.5, 3, 30)": ("float64", (3,), [0x3ff15d4368a95ad8,
        0x3ff2f6d8e04958d8, 0x403138cc2114312d]),
    "f float64 (3,)": ("float64", (3,), [0x3fe21a7d187c119f, 0x3fe2352960a379af,
        0x3fe4875ed50d57a2]),
    "dirichlet float64 (2, 3)": ("float64", (2, 3), [0x3ed3bb5ede23a6fd, 0x3fd8bfe6cb2c1ee9,
        0x3fe3a002bcba817a, 0x3ee4a7ef0dc09cbf, 0x3f96affc6dbb665c, 0x3fef4a6b74a3170d]),
    "generalized_normal p=1.5 (3,)": ("float64", (3,), [0x3fe4b9ae62684e63, 0xbfc9574cf477999b,
        0x3fa43e05ca497fe2]),
    "ball d=3 (2, 3)": ("float64", (2, 3), [0xbfe0306230e8abdf, 0x3fb4718eaa5f1a1d,
        0x3fe8adc04a8a1ca8, 0xbfc03e081b50b632, 0x3feac78399793496, 0xbfce46ea8957c13b]),
    "pareto float64 (3,)": ("float64", (3,), [0x40601bc162b796bc, 0x400d05148ae7ccf4,
        0x3ff17f61af760dca]),
    "lognormal float64 (3,)": ("float64", (3,), [0x3ff39662e73dfcfd, 0x3fd9945c1c8a22c3,
        0x3ff2b7f7a96aac42]),
    "truncated_normal float64 (3,)": ("float64", (3,), [0xbfd58667a7bd336a, 0xbfa091dbeb152761,
        0x3ff63df176f9e1c5]),
    "orthogonal float64 (3, 3)": ("float64", (3, 3), [0xbfb3db4f89c423c0, 0x3fe335e9862d2c18,
        0x3fe978adc9dc01f8, 0x3fdd6c5711683ba5, 0x3fe75bf039286ba1, 0xbfe02f1618826048,
        0xbfec4f2483bd9fb0, 0x3fd4e8e231801a5f, 0xbfd549915424251e]),
    "cauchy float64 (3,)": ("float64", (3,), [0xbfe6acd7577239a3, 0x3fdf363cba54ad18,
        0xc00a107d0430cd57]),
    "logistic float64 (3,)": ("float64", (3,), [0x3ff81d20ae601796, 0x3fd1fb547f14e008,
        0x3fe808faa5937abe]),
    "rademacher (6,)": ("int64", (6,), [1, 1, -1, -1, 1, -1]),
}

# name -> (loss(r, *params), params); RECORDED_GRAD_VALUES[name] is JAX's gradient
RECORDED_GRADS = {
    "gamma": (lambda r, a: r.gamma(r.PRNGKey(0), a).sum(), (np.array([0.05, 0.7, 3.0, 40.0]),)),
    "loggamma": (
        lambda r, a: r.loggamma(r.PRNGKey(1), a).sum(),
        (np.array([0.05, 0.7, 3.0, 40.0]),),
    ),
    "beta": (
        lambda r, a, b: r.beta(r.PRNGKey(2), a, b).sum(),
        (np.array([0.3, 2.0]), np.array([1.5, 0.4])),
    ),
    "dirichlet": (
        lambda r, al: (r.dirichlet(r.PRNGKey(3), al, (2,)) * np.arange(3.0)).sum(),
        (np.array([0.2, 1.0, 4.0]),),
    ),
    "t": (lambda r, df: r.t(r.PRNGKey(4), df).sum(), (np.array([0.5, 3.0, 30.0]),)),
    "chisquare": (
        lambda r, df: r.chisquare(r.PRNGKey(5), df).sum(),
        (np.array([0.5, 3.0, 30.0]),),
    ),
}

RECORDED_GRAD_VALUES = {
    "gamma": [[5.0618479478156856e-08, 0.1784241189721568, 1.3658239239316323,
        0.8458446498381818]],
    "loggamma": [[121.83192408392033, 1.4328861029902868, 0.41303473451139494,
        0.02685715500357472]],
    "beta": [[0.003138631881066197, 0.1269830011544407], [-7.72792070158551e-05,
        -0.43717762756635464]],
    "dirichlet": [[-3.1795599346865018, -0.2236048699140822, 0.264342250349501]],
    "t": [[1.5884105996341038, 0.007797089726115733, -0.001099608884417734]],
    "chisquare": [[0.00995484105024827, 1.5557138965959547, 1.417037277456178]],
}

def as_recorded(out):
    """An output in the form RECORDED_VALUES stores: (dtype, shape, ints or bit patterns)."""
    out = np.asarray(out)
    flat = np.ascontiguousarray(out).reshape(-1)
    if out.dtype.kind in "fc":
        width = out.dtype.itemsize * 8 // (2 if out.dtype.kind == "c" else 1)
        flat = flat.view(np.dtype(f"uint{width}"))
    return str(out.dtype), tuple(out.shape), [int(v) for v in flat]


# within a few ulp: the draws that sum a few terms, which XLA adds in its own order, and
# truncated_normal, whose bounds go through erf (scipy's here, XLA's own there)
RECORDED_ULPS = {"ball d=3 (2, 3)": 2, "dirichlet float64 (2, 3)": 2,
                 "truncated_normal float64 (3,)": 64}
# where numpy runs its AVX-512 loops (tan: Intel's SVML) and OpenBLAS its AVX-512 kernels
# (orthogonal's QR), the values recorded on a CPU without them are a few ulp away
if numpy_uses_svml():
    RECORDED_ULPS.update({"cauchy float64 (3,)": 2, "orthogonal float64 (3, 3)": 8})


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_jax_values_bit_for_bit(name):
    dtype, shape, values = as_recorded(RECORDED[name](random))
    assert (dtype, shape) == RECORDED_VALUES[name][:2]
    if name not in RECORDED_ULPS:
        assert values == RECORDED_VALUES[name][2]
        return
    signed = np.dtype(dtype.replace("float", "int"))
    ours, theirs = (np.array(v, np.uint64).astype(signed) for v in (values,
                                                                     RECORDED_VALUES[name][2]))
    assert np.all(np.abs(ours - theirs) <= RECORDED_ULPS[name])  # same signs: ulp distance


@pytest.mark.parametrize("name", sorted(RECORDED_GRADS))
def test_recorded_jax_gradients(name):
    loss, params = RECORDED_GRADS[name]
    grads = funcgrad.grad(lambda *p: loss(random, *p), tuple(range(len(params))))(*params)
    for ours, theirs in zip(grads, RECORDED_GRAD_VALUES[name]):
        np.testing.assert_allclose(np.asarray(ours), theirs, rtol=1e-8)


# -- the primitives ------------------------------------------------------------------------

# Salmon et al.'s known-answer vectors for Threefry-2x32 with 20 rounds (Random123's kat)
THREEFRY_KAT = [((0x0, 0x0), (0x0, 0x0), (0x6b200159, 0x99ba4efe)),
                ((0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff), (0x1cb996fc, 0xbb002be7)),
                ((0x13198a2e, 0x03707344), (0x243f6a88, 0x85a308d3), (0xc4923a9c, 0x483df7a0))]


@pytest.mark.parametrize("key,count,expected", THREEFRY_KAT)
def test_threefry_known_answers(key, count, expected):
    words = [np.uint32(w) for w in (*key, *count)]
    y1, y2 = P.threefry2x32(*words)
    assert (int(y1), int(y2)) == expected


def test_threefry_broadcasts_and_checks_dtypes():
    k1, k2 = np.uint32(0x13198a2e), np.uint32(0x03707344)
    x = np.array([0x243f6a88, 0x243f6a88], np.uint32)
    y1, y2 = P.threefry2x32(k1, k2, x, np.uint32(0x85a308d3))
    assert y1.shape == (2,) and int(y1[1]) == 0xc4923a9c and int(y2[0]) == 0x483df7a0
    with pytest.raises(TypeError, match="Arguments to threefry2x32 must have uint32 type"):
        P.threefry2x32(np.int32(1), k2, x, x)
    assert not P.threefry2x32.differentiable


def test_fma_rounds_once():
    rng = np.random.RandomState(0)
    for dtype in (np.float32, np.float64):
        a, b, c = (rng.standard_normal(300).astype(dtype) for _ in range(3))
        c = c * dtype(1e-3)  # cancellation-prone sums, where one rounding shows
        exact = [dtype(float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))))
                 for x, y, z in zip(a, b, c)]
        got = np.asarray(P.fma(a, b, c))
        assert got.dtype == dtype and np.array_equal(got, np.array(exact, dtype))
        assert not np.array_equal(got, a * b + c)  # it is not the twice-rounded value
    halfway = (np.float32(1 + 2 ** -23), np.float32(1 + 2 ** -23), np.float32(-1 - 2 ** -22))
    assert K.fma(*halfway) == np.float32(2 ** -46)  # exact, tiny: a double-rounding trap


def test_erf_inv_is_giles_approximation_of_the_inverse():
    x = np.linspace(-0.999, 0.999, 2001)
    for dtype, rtol in ((np.float64, 1e-14), (np.float32, 1e-6)):
        y = np.asarray(P.erf_inv(x.astype(dtype)))
        from math import erf
        back = np.array([erf(float(v)) for v in y])
        np.testing.assert_allclose(back, x.astype(dtype), rtol=rtol, atol=rtol)
    edges = np.asarray(P.erf_inv(np.array([-1.0, 1.0, 0.0, 1.5])))
    assert edges[0] == -np.inf and edges[1] == np.inf and edges[2] == 0 and np.isnan(edges[3])


def test_xla_log_family_is_close_to_numpy_and_flushes_subnormals():
    x = np.geomspace(1e-30, 1e30, 1001).astype(np.float32)
    for ours, theirs, arg in ((P.xla_log, np.log, x), (P.xla_log1p, np.log1p, x - 0.5),
                              (P.xla_exp, np.exp, np.log(x))):
        np.testing.assert_allclose(np.asarray(ours(arg)), theirs(arg), rtol=3e-7, atol=1e-30)
    assert np.asarray(P.xla_log(np.float32(1e-40))) == -np.inf  # a subnormal reads as 0
    assert np.asarray(P.xla_exp(np.float32(-87.5))) == 0  # a subnormal result flushes


def test_gamma_quantile_returns_the_draw_itself():
    key = random.PRNGKey(0)
    a = np.array([0.01, 0.5, 1.0, 3.0, 250.0])
    for log_space in (False, True):
        draw = P.random_gamma(random.key_data(random.split(key, 5)), a, log_space=log_space)
        u = P.random_gamma_cdf(a, draw if log_space else fnp.log(draw))
        same = P.random_gamma_quantile(a, u, draw, log_space=log_space)
        assert np.array_equal(np.asarray(same), np.asarray(draw))


# -- keys ----------------------------------------------------------------------------------

def test_typed_and_raw_keys():
    k = random.key(42)
    assert k.shape == () and k.ndim == 0 and str(k.dtype) == "key<fry>"
    assert random.key_impl(k) == random.key_impl(random.PRNGKey(42)) == "threefry2x32"
    data = random.key_data(k)
    assert data.dtype == np.uint32 and np.array_equal(np.asarray(data), [0, 42])
    assert np.array_equal(np.asarray(random.PRNGKey(42)), np.asarray(data))
    assert bool(random.wrap_key_data(data) == k) and not bool(random.split(k)[0] == k)
    keys = random.split(k, (2, 3))
    assert isinstance(keys, random.KeyArray) and keys.shape == (2, 3) and len(keys) == 2
    assert keys[1, 2].shape == () and keys[:, 0].shape == (2,) and keys[..., 1].shape == (2,)
    assert keys.reshape(6).shape == (6,) and keys.ravel().shape == (6,) and keys.T.shape == (3, 2)
    assert [kk.shape for kk in keys] == [(3,), (3,)]
    assert np.array_equal(np.asarray(random.key_data(keys[1, 2])),
                          np.asarray(random.split(random.PRNGKey(42), (2, 3))[1, 2]))
    assert "key<fry>" in repr(k) and "overlaying" in repr(k)
    raw_keys = random.split(random.PRNGKey(42), 3)  # raw in, raw out
    assert isinstance(raw_keys, funcgrad.Array) and raw_keys.shape == (3, 2)
    assert isinstance(random.fold_in(k, 3), random.KeyArray)
    assert random.clone(k) is k


def test_keys_are_pytrees_and_immutable():
    keys = random.split(random.key(0), 4)
    leaves, tree = tree_flatten({"keys": keys})
    assert len(leaves) == 1 and leaves[0].shape == (4, 2)
    back = tree_unflatten(tree, leaves)["keys"]
    assert bool(fnp.all(back == keys))
    with pytest.raises(TypeError, match="immutable"):
        random.key_data(keys)[0] = 1
    with pytest.raises(AttributeError):
        keys.shape = (2, 2)


def test_same_key_same_numbers_and_splits_differ():
    k = random.PRNGKey(7)
    assert np.array_equal(np.asarray(random.normal(k, (4,))), np.asarray(random.normal(k, (4,))))
    k1, k2 = random.split(k)
    assert not np.array_equal(np.asarray(random.uniform(k1, (4,))),
                              np.asarray(random.uniform(k2, (4,))))
    keys = np.asarray(random.split(k, 1000))
    assert len({tuple(r) for r in keys}) == 1000
    assert random.split(k, 0).shape == (0, 2) and random.uniform(k, (0, 3)).shape == (0, 3)


def test_seeds_are_64_bit():
    assert np.asarray(random.PRNGKey(np.uint64(2 ** 64 - 1))).tolist() == [2 ** 32 - 1] * 2
    assert np.asarray(random.PRNGKey(np.int32(-1))).tolist() == [0, 2 ** 32 - 1]
    assert np.asarray(random.PRNGKey(True)).tolist() == [0, 1]
    with pytest.raises(OverflowError, match="does not fit in an int64"):
        random.PRNGKey(2 ** 64)


# -- argument errors (JAX's texts) ---------------------------------------------------------

K0 = random.PRNGKey(0)
ERRORS = [
    (lambda: random.split(fnp.zeros((3, 2), np.uint32)), ValueError,
     r"split accepts a single key, but was given a key array of shape \(3, 2\) != \(\)"),
    (lambda: random.normal(random.split(random.key(0)), (2,)), ValueError,
     r"normal accepts a single key, but was given a key array of shape \(2,\)"),
    (lambda: random.bits(fnp.zeros(3, np.uint32)), TypeError,
     r"expected key_data.shape to end with \(2,\); got shape=\(3,\)"),
    (lambda: random.bits(fnp.zeros(2, np.int32)), TypeError, "expected key_data.dtype = uint32"),
    (lambda: random.uniform(123), TypeError, "expected key_data to have ndim, shape, and dtype"),
    (lambda: random.uniform([0, 1]), TypeError, "unexpected PRNG key type"),
    (lambda: random.wrap_key_data(fnp.zeros((), np.uint32)), TypeError, "key_data.ndim >= 1"),
    (lambda: random.bits(K0, (2,), np.int32), ValueError,
     "dtype argument to `bits` must be an unsigned int dtype, got int32"),
    (lambda: random.uniform(K0, (2,), np.int32), ValueError,
     "dtype argument to `uniform` must be a float dtype, got int32"),
    (lambda: random.normal(K0, (2,), np.int32), ValueError,
     "dtype argument to `normal` must be a float or complex dtype, got int32"),
    (lambda: random.gamma(K0, 1.0, (3,), np.int32), ValueError,
     "dtype argument to `gamma` must be a float dtype, got int32"),
    (lambda: random.randint(K0, (2,), 0, 3, np.float32), TypeError,
     "randint only accepts integer dtypes, got float32"),
    (lambda: random.poisson(K0, 3.0, (2,), np.float32), ValueError,
     "dtype argument to `poisson` must be an integer dtype"),
    (lambda: random.uniform(K0, (2.5,)), TypeError,
     r"Shapes must be 1D sequences of concrete values of integer type, got \(2.5,\)"),
    (lambda: random.uniform(K0, (-1,)), ValueError, "non-negative dimensions"),
    (lambda: random.uniform(K0, (2,), minval=fnp.zeros((3, 2))), ValueError,
     "uniform parameter shapes must be broadcast-compatible with shape argument"),
    (lambda: random.gamma(K0, fnp.ones(3), (2,)), ValueError, "Incompatible shapes"),
    (lambda: random.fold_in(K0, fnp.array([1, 2])), TypeError,
     r"fold_in accepts a scalar, but was given an array of shape \(2,\)"),
    (lambda: random.fold_in(K0, -1), OverflowError, "out of bounds for uint32"),
    (lambda: random.key(fnp.array([1, 2])), TypeError,
     r"key accepts a scalar seed, but was given an array of shape \(2,\)"),
    (lambda: random.key(1.5), TypeError, "PRNG key seed must be an integer"),
    (lambda: random.key(random.key(0)), TypeError,
     "accepts a scalar seed, but was given a PRNG key"),
    (lambda: random.key(0, impl="foo"), ValueError, 'unrecognized PRNG implementation "foo"'),
    (lambda: random.key(0, impl="rbg"), NotImplementedError, '"rbg" is not available'),
    (lambda: random.choice(K0, 3, (5,), replace=False), ValueError,
     r"Cannot take a larger sample \(size 5\) than population \(size 3\) when 'replace=False'"),
    (lambda: random.choice(K0, 0, (5,)), ValueError,
     "a must be greater than 0 unless no samples are taken"),
    (lambda: random.choice(K0, 3, 5), TypeError, "shape argument of funcgrad.random.choice"),
    (lambda: random.choice(K0, 3, (2,), p=np.ones(4)), ValueError,
     r"p has shape \(4,\) and a.shape\[axis\] is 3"),
    (lambda: random.permutation(K0, 2.5), TypeError,
     "x must be an integer or at least 1-dimensional"),
    (lambda: random.permutation(K0, fnp.ones((2, 3)), axis=2), np.exceptions.AxisError,
     "axis 2 is out of bounds for array of dimension 2"),
    (lambda: random.bernoulli(K0, 0.5, mode="x"), ValueError,
     "got mode='x', expected 'high' or 'low'"),
    (lambda: random.bernoulli(K0, 1), TypeError,
     "bernoulli probability `p` must have a floating dtype, got int64"),
    (lambda: random.gumbel(K0, mode="x"), ValueError, "Must provide valid mode for gumbel got: x"),
    (lambda: random.categorical(K0, fnp.zeros((3,)), shape=(4,), replace=False), ValueError,
     r"Number of samples without replacement \(4\) cannot exceed number of categories \(3\)"),
    (lambda: random.multivariate_normal(K0, np.zeros(2), np.eye(2), method="x"), ValueError,
     "method must be one of"),
    (lambda: random.multivariate_normal(K0, np.zeros(2), np.eye(3)), ValueError,
     r"requires cov.shape == \(..., n, n\) for n=2, but got cov.shape == \(3, 3\)"),
    (lambda: random.multivariate_normal(K0, np.zeros(()), np.eye(2)), ValueError,
     "requires mean.ndim >= 1"),
    (lambda: random.dirichlet(K0, 1.0), ValueError, "dirichlet requires alpha.ndim >= 1"),
    (lambda: random.t(K0, np.ones(2), dtype=np.float32), ValueError,
     "In arguments to t, cannot safely cast argument of type float64 to float32"),
]


@pytest.mark.parametrize("call,error,message", ERRORS, ids=[m[:40] for *_, m in ERRORS])
def test_errors_name_the_problem(call, error, message):
    with pytest.raises(error, match=message):
        call()


# -- gradients and tracing -------------------------------------------------------------------

def test_reparameterised_draws_differentiate():
    k = random.PRNGKey(1)
    check_grads(lambda mu, sigma: random.normal(k, (4,)) * sigma + mu, (0.5, 2.0), order=2)
    check_grads(lambda lo, hi: random.uniform(k, (3,), minval=lo, maxval=hi), (0.5, 2.0),
                order=2)
    check_grads(lambda lo, hi: random.truncated_normal(k, lo, hi, (3,)), (-0.3, 1.2), order=2)
    check_grads(lambda m, c: random.multivariate_normal(k, m, c @ c.T + np.eye(2)),
                (np.array([0.5, -1.0]), np.array([[1.0, 0.2], [0.3, 0.8]])), order=1)
    check_grads(lambda b: random.pareto(k, b, (3,)), (1.5,), order=2)


def _mean_gradient(sample, *params):
    """The mean over many draws of d draw / d params: by implicit reparameterisation it is
    the derivative of the distribution's mean."""
    return funcgrad.grad(lambda *p: fnp.mean(sample(*p)), argnums=tuple(range(len(params))))(
        *params)


def test_gamma_family_gradients_are_those_of_the_mean():
    k = random.PRNGKey(2)
    n = 4000
    for a in (0.3, 2.0, 15.0):  # E[x] = a
        (g,) = _mean_gradient(lambda a: random.gamma(k, a, (n,)), a)
        assert abs(float(g) - 1) < 0.05, (a, g)
    ga, gb = _mean_gradient(lambda a, b: random.beta(k, a, b, (n,)), 1.5, 3.0)
    np.testing.assert_allclose([float(ga), float(gb)], [3 / 4.5 ** 2, -1.5 / 4.5 ** 2], rtol=0.1)
    alpha = np.array([0.5, 1.0, 2.5])
    (g,) = _mean_gradient(lambda al: random.dirichlet(k, al, (n,))[:, 0], alpha)
    total = alpha.sum()  # E[x_0] = alpha_0 / total
    np.testing.assert_allclose(np.asarray(g), [(total - alpha[0]) / total ** 2,
                                               -alpha[0] / total ** 2, -alpha[0] / total ** 2],
                               rtol=0.1, atol=0.005)
    (g,) = _mean_gradient(lambda df: random.chisquare(k, df, (n,)), 3.0)  # E = df
    assert abs(float(g) - 1) < 0.05


def test_gamma_gradient_with_broadcast_shape_parameter():
    k = random.PRNGKey(3)
    alpha = np.array([0.3, 1.0, 2.5, 7.0])
    g_broadcast = funcgrad.grad(lambda al: fnp.sum(random.loggamma(k, al, (6, 4))))(alpha)
    g_full = funcgrad.grad(lambda a: fnp.sum(random.loggamma(k, a)))(np.tile(alpha, (6, 1)))
    np.testing.assert_allclose(np.asarray(g_broadcast), np.asarray(g_full).sum(0), rtol=1e-12)


def test_draws_trace_under_forward_mode_too():
    k = random.PRNGKey(4)
    a = np.array([0.5, 2.0])
    _, t_fwd = funcgrad.jvp(lambda a: random.gamma(k, a), (a,), (np.ones(2),))
    g_rev = funcgrad.jacrev(lambda a: random.gamma(k, a))(a)
    np.testing.assert_allclose(np.asarray(t_fwd), np.diag(np.asarray(g_rev)), rtol=1e-10)
    _, t = funcgrad.jvp(lambda lo: random.uniform(k, (3,), minval=lo, maxval=2.0), (0.5,), (1.0,))
    u = np.asarray(random.uniform(k, (3,)))
    np.testing.assert_allclose(np.asarray(t), 1 - u, rtol=1e-12)


def test_discrete_draws_are_constants_under_grad():
    k = random.PRNGKey(5)

    def f(logits):
        picks = random.categorical(k, logits, shape=(10,))
        return fnp.sum(logits[picks])
    g = funcgrad.grad(f)(np.log(np.array([0.2, 0.3, 0.5])))
    picks = np.asarray(random.categorical(k, np.log(np.array([0.2, 0.3, 0.5])), shape=(10,)))
    np.testing.assert_array_equal(np.asarray(g), np.bincount(picks, minlength=3))


@pytest.mark.gpu
def test_gpu_keys_draw_the_cpu_numbers():
    for typed in (False, True):
        k = random.key(3) if typed else random.PRNGKey(3)
        k_gpu = random.wrap_key_data(funcgrad.device_put(random.key_data(k), "gpu")) if typed \
            else funcgrad.device_put(k, "gpu")
        for draw in (lambda k: random.uniform(k, (100,), minval=-1.0, maxval=3.0),
                     lambda k: random.normal(k, (100,), np.float32),
                     lambda k: random.gamma(k, np.linspace(0.1, 5, 100)),
                     lambda k: random.randint(k, (100,), 0, 17),
                     lambda k: random.permutation(k, 50)):
            on_gpu = draw(k_gpu)
            assert on_gpu.device.startswith("gpu")
            np.testing.assert_array_equal(funcgrad.device_put(on_gpu, "cpu").to_numpy(),
                                          np.asarray(draw(k)))
