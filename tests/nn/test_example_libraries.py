"""funcgrad.example_libraries.optimizers and stax against JAX's example libraries:
trajectories step for step (float64), layer outputs on the same parameters, output shapes,
and JAX's error texts. Keys come from funcgrad.random (or its stand-in)."""
import pickle

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.example_libraries import optimizers, stax

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
from jax.example_libraries import optimizers as joptimizers  # noqa: E402
from jax.example_libraries import stax as jstax  # noqa: E402


@pytest.fixture(autouse=True)
def _eager_jax():
    with jax.disable_jit():
        yield


def _np(tree):
    return tree_util.tree_map(lambda x: np.asarray(x), tree)


def _assert_trees_close(ours, theirs, rtol=1e-12):
    ours_leaves = tree_util.tree_leaves(_np(ours))
    theirs_leaves = jax.tree.leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves)
    for a, b in zip(ours_leaves, theirs_leaves):
        np.testing.assert_allclose(a, np.asarray(b), rtol=rtol, atol=1e-14)


PARAMS = {"w": np.array([[1.0, -2.0], [0.5, 3.0]]), "b": (np.array([0.3, -0.7]), np.array(2.0))}


def _loss(params):
    w, (b, c) = params["w"], params["b"]
    return fnp.sum(fnp.tanh(w) ** 2) + fnp.sum((b - 1.0) ** 4) + c ** 2 * fnp.sum(w)


def _jloss(params):
    w, (b, c) = params["w"], params["b"]
    return (jax.numpy.tanh(w) ** 2).sum() + ((b - 1.0) ** 4).sum() + c ** 2 * w.sum()


SCHEDULES = [0.05, ("exponential_decay", 0.1, 3, 0.5), ("inverse_time_decay", 0.1, 2, 0.3),
             ("inverse_time_decay", 0.1, 2, 0.3, True), ("polynomial_decay", 0.1, 4, 0.01, 2.0),
             ("piecewise_constant", [2, 4], [0.1, 0.05, 0.01])]
OPTIMIZERS = [("sgd", ()), ("momentum", (0.9,)), ("nesterov", (0.8,)), ("adagrad", ()),
              ("rmsprop", ()), ("rmsprop_momentum", ()), ("adam", ()), ("adamax", ()),
              ("sm3", ())]


def _schedule(lib, spec):
    if not isinstance(spec, tuple):
        return spec
    return getattr(lib, spec[0])(*spec[1:])


@pytest.mark.parametrize("name,args", OPTIMIZERS)
def test_optimizer_trajectories_match_jax(name, args):
    for spec in (SCHEDULES if name == "sgd" else SCHEDULES[:2]):
        init, update, get = getattr(optimizers, name)(_schedule(optimizers, spec), *args)
        jinit, jupdate, jget = getattr(joptimizers, name)(_schedule(joptimizers, spec), *args)
        state, jstate = init(PARAMS), jinit(jax.tree.map(jax.numpy.asarray, PARAMS))
        for i in range(6):
            state = update(i, fg.grad(_loss)(get(state)), state)
            jstate = jupdate(i, jax.grad(_jloss)(jget(jstate)), jstate)
        _assert_trees_close(get(state), jget(jstate), rtol=1e-10)


def test_optimizer_state_is_a_pytree_and_round_trips():
    init, update, get = optimizers.adam(0.1)
    state = init(PARAMS)
    leaves = tree_util.tree_leaves(state)
    assert len(leaves) == 3 * 3  # x, m, v for each of the three parameter arrays
    doubled = tree_util.tree_map(lambda x: x * 2, state)
    assert isinstance(doubled, optimizers.OptimizerState)
    packed = optimizers.pack_optimizer_state(pickle.loads(pickle.dumps(
        optimizers.unpack_optimizer_state(state))))
    _assert_trees_close(get(packed), jax.tree.map(np.asarray, PARAMS))
    with pytest.raises(TypeError, match="did not match the parameter tree structure"):
        update(0, {"w": PARAMS["w"]}, state)


def test_schedules_and_utilities_match_jax():
    for spec in SCHEDULES[1:]:
        ours, theirs = _schedule(optimizers, spec), _schedule(joptimizers, spec)
        for i in (0, 1, 2, 3, 4, 5, 9):
            np.testing.assert_allclose(np.asarray(ours(i)), np.asarray(theirs(i)), rtol=1e-12)
    assert optimizers.make_schedule(0.3)(10) == 0.3
    with pytest.raises(TypeError):
        optimizers.make_schedule([0.1, 0.2])
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [0.1, 0.2])
    np.testing.assert_allclose(np.asarray(optimizers.l2_norm(PARAMS)),
                               np.asarray(joptimizers.l2_norm(PARAMS)))
    for max_norm in (0.5, 100.0):
        _assert_trees_close(optimizers.clip_grads(PARAMS, max_norm),
                            joptimizers.clip_grads(PARAMS, max_norm))


def _to_jax(tree):
    return jax.tree.map(jax.numpy.asarray, _np(tree))


LAYERS = [
    ("mlp", lambda s: s.serial(s.Dense(7), s.Relu, s.Dense(5), s.Tanh, s.Dense(3),
                               s.LogSoftmax), (4, 6)),
    ("activations", lambda s: s.serial(s.Dense(6), s.Elu, s.LeakyRelu, s.Selu, s.Gelu,
                                       s.Softplus, s.Sigmoid, s.Exp, s.Softmax), (3, 5)),
    ("flatten", lambda s: s.serial(s.Flatten, s.Dense(2), s.Identity), (2, 3, 4)),
    ("residual", lambda s: s.serial(s.FanOut(2), s.parallel(s.Dense(4), s.Identity),
                                    s.FanInSum), (3, 4)),
    ("concat", lambda s: s.serial(s.FanOut(3), s.parallel(s.Dense(2), s.Dense(1),
                                                          s.Identity), s.FanInConcat()), (3, 4)),
    ("batchnorm", lambda s: s.serial(s.Dense(4), s.BatchNorm(axis=0),
                                     s.BatchNorm(axis=(0,), center=False),
                                     s.BatchNorm(axis=0, scale=False)), (5, 3)),
    ("shape_dependent", lambda s: s.shape_dependent(
        lambda shape: s.Dense(shape[-1] * 2)), (2, 3)),
]


@pytest.mark.parametrize("name,build,shape", LAYERS, ids=[layer[0] for layer in LAYERS])
def test_layers_match_jax(random, name, build, shape):
    init, apply = build(stax)
    _, japply = build(jstax)
    out_shape, params = init(random.PRNGKey(0), shape)
    x = np.random.RandomState(0).randn(*shape)
    ours = apply(params, x)
    _assert_trees_close(ours, japply(_to_jax(params), x), rtol=1e-10)
    assert tuple(out_shape) == tuple(ours.shape)
    # the whole network differentiates in its parameters
    g = fg.grad(lambda p: fnp.sum(fnp.asarray(tree_util.tree_leaves(apply(p, x))[0])))(params)
    jg = jax.grad(lambda p: jax.tree.leaves(japply(p, x))[0].sum())(_to_jax(params))
    _assert_trees_close(g, jg, rtol=1e-8)


def test_dense_uses_its_initializers(random):
    init, _ = stax.Dense(300)
    _, (w, b) = init(random.PRNGKey(1), (-1, 200))
    assert w.shape == (200, 300) and b.shape == (300,)
    assert abs(float(fnp.var(w)) / (2 / 500) - 1) < 0.1  # glorot_normal
    assert abs(float(fnp.std(b)) / 1e-2 - 1) < 0.2  # normal(1e-2)


def test_dropout(random):
    init, apply = stax.Dropout(0.7)
    x = fnp.ones((200, 50))
    with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG key"):
        apply((), x)
    y = np.asarray(apply((), x, rng=random.PRNGKey(0)))
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.7)
    test_mode = stax.Dropout(0.7, mode="test")[1]
    np.testing.assert_array_equal(np.asarray(test_mode((), x, rng=random.PRNGKey(0))), 1.0)
    # inside serial the key is split among the layers
    _, net = stax.serial(stax.Dense(3), stax.Dropout(0.5))
    _, params = stax.serial(stax.Dense(3), stax.Dropout(0.5))[0](random.PRNGKey(0), (4, 2))
    out = net(params, np.ones((4, 2)), rng=random.PRNGKey(3))
    assert out.shape == (4, 3)


def _has_lax():
    try:
        from funcgrad import lax  # noqa: F401
        return True
    except ImportError:
        return False


CONV_LAYERS = [
    ("conv_same", lambda s: s.Conv(3, (3, 3), padding="SAME"), (2, 6, 5, 2)),
    ("conv_strided", lambda s: s.Conv(4, (2, 3), strides=(2, 1)), (2, 7, 6, 3)),
    ("conv1d", lambda s: s.GeneralConv(("NHC", "HIO", "NHC"), 3, (3,), padding="SAME"),
     (2, 8, 2)),
    ("conv_transpose", lambda s: s.ConvTranspose(2, (3, 3), strides=(2, 2), padding="SAME"),
     (1, 3, 4, 2)),
    ("conv1d_transpose", lambda s: s.Conv1DTranspose(2, (3,), strides=(2,)), (2, 5, 3)),
    ("pools", lambda s: s.serial(s.Conv(3, (3, 3), padding="SAME"), s.Relu,
                                 s.MaxPool((2, 2), strides=(2, 2)),
                                 s.AvgPool((2, 2), padding="SAME"),
                                 s.SumPool((1, 2), strides=(1, 1))), (2, 8, 6, 1)),
    ("convnet", lambda s: s.serial(s.Conv(4, (3, 3), padding="SAME"), s.BatchNorm(),
                                   s.Relu, s.AvgPool((2, 2), (2, 2)), s.Flatten, s.Dense(3),
                                   s.LogSoftmax), (3, 6, 6, 2)),
]


@pytest.mark.parametrize("name,build,shape", CONV_LAYERS, ids=[c[0] for c in CONV_LAYERS])
def test_convolution_and_pooling_layers(random, name, build, shape):
    """Against JAX's stax when funcgrad.lax (the convolution primitives) is present;
    otherwise the layers say what they need."""
    init, apply = build(stax)
    if not _has_lax():
        with pytest.raises(ImportError, match="need funcgrad.lax"):
            _, params = init(random.PRNGKey(0), shape)  # pooling needs lax for its shapes
            apply(params, np.ones(shape))
        return
    _, japply = build(jstax)
    out_shape, params = init(random.PRNGKey(0), (-1,) + shape[1:])
    x = np.random.RandomState(0).randn(*shape)
    ours = apply(params, x)
    assert tuple(out_shape)[1:] == tuple(ours.shape)[1:] and out_shape[0] == -1
    _assert_trees_close(ours, japply(_to_jax(params), x), rtol=1e-10)
    w = np.random.RandomState(1).randn(*ours.shape)
    g = fg.grad(lambda p: fnp.sum(apply(p, x) * w))(params)
    jg = jax.grad(lambda p: (japply(p, x) * w).sum())(_to_jax(params))
    _assert_trees_close(g, jg, rtol=1e-8)
