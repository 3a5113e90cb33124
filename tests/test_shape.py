"""Shape functions: values against numpy, derivatives of the composed ones (forward and
reverse, second order), identity fast paths, float32, and error messages."""
import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import grad
from funcgrad.test_util import check_grads

RNG = np.random.RandomState(0)
X = RNG.randn(2, 3, 4)
M = RNG.randn(3, 4)
V = RNG.randn(5)

# (label, function of one array, input): each function has the same name in numpy
CASES = [
    ("reshape", lambda m, x: m.reshape(x, (4, -1)), X),
    ("reshape kw", lambda m, x: m.reshape(x, shape=(24,)), X),
    ("ravel", lambda m, x: m.ravel(x), X),
    ("transpose", lambda m, x: m.transpose(x), X),
    ("transpose axes", lambda m, x: m.transpose(x, (-1, 0, 1)), X),
    ("swapaxes", lambda m, x: m.swapaxes(x, 0, -1), X),
    ("moveaxis", lambda m, x: m.moveaxis(x, 0, -1), X),
    ("moveaxis many", lambda m, x: m.moveaxis(x, (0, 1), (-1, -2)), X),
    ("expand_dims", lambda m, x: m.expand_dims(x, -1), X),
    ("expand_dims tuple", lambda m, x: m.expand_dims(x, (0, 3)), X),
    ("squeeze", lambda m, x: m.squeeze(x), X[:1, :, :1]),
    ("squeeze axis", lambda m, x: m.squeeze(x, -1), X[:, :, :1]),
    ("broadcast_to", lambda m, x: m.broadcast_to(x, (2, 3, 4)), M[0]),
    ("concatenate", lambda m, x: m.concatenate([x, x[:1]], axis=0), X),
    ("concatenate -1", lambda m, x: m.concatenate([x, x], axis=-1), X),
    ("concatenate None", lambda m, x: m.concatenate([x, M], axis=None), X),
    ("stack", lambda m, x: m.stack([x, x], axis=1), X),
    ("stack last", lambda m, x: m.stack([x, x, x], axis=-1), M),
    ("hstack", lambda m, x: m.hstack([x, x]), V),
    ("hstack 2d", lambda m, x: m.hstack([x, x]), M),
    ("vstack", lambda m, x: m.vstack([x, x]), V),
    ("dstack", lambda m, x: m.dstack([x, x]), M),
    ("column_stack", lambda m, x: m.column_stack([x, x]), V),
    ("split", lambda m, x: m.split(x, 2, axis=0), X),
    ("split at", lambda m, x: m.split(x, [1, -1], axis=2), X),
    ("array_split", lambda m, x: m.array_split(x, 3), V),
    ("tile", lambda m, x: m.tile(x, 2), M),
    ("tile more", lambda m, x: m.tile(x, (2, 1, 3)), M),
    ("repeat", lambda m, x: m.repeat(x, 2), M),
    ("repeat axis", lambda m, x: m.repeat(x, 3, axis=1), X),
    ("repeat counts", lambda m, x: m.repeat(x, [1, 0, 2], axis=1), X),
    ("flip", lambda m, x: m.flip(x), X),
    ("flip axis", lambda m, x: m.flip(x, (0, -1)), X),
    ("fliplr", lambda m, x: m.fliplr(x), M),
    ("flipud", lambda m, x: m.flipud(x), M),
    ("rot90", lambda m, x: m.rot90(x), M),
    ("rot90 k", lambda m, x: m.rot90(x, 3, (0, 2)), X),
    ("roll", lambda m, x: m.roll(x, 2), X),
    ("roll axis", lambda m, x: m.roll(x, -1, axis=1), X),
    ("roll axes", lambda m, x: m.roll(x, (1, 5), axis=(0, 2)), X),
    ("pad", lambda m, x: m.pad(x, 1), X),
    ("pad widths", lambda m, x: m.pad(x, ((0, 1), (2, 0), (1, 1)), constant_values=2.5), X),
    ("pad edge", lambda m, x: m.pad(x, (1, 2), mode="edge"), M),
    ("pad reflect", lambda m, x: m.pad(x, 5, mode="reflect"), M),
    ("pad symmetric", lambda m, x: m.pad(x, ((4, 1), (0, 2)), mode="symmetric"), M),
    ("pad wrap", lambda m, x: m.pad(x, (2, 7), mode="wrap"), V),
    ("atleast_1d", lambda m, x: m.atleast_1d(x), np.float64(2.0)),
    ("atleast_2d", lambda m, x: m.atleast_2d(x), V),
    ("atleast_3d", lambda m, x: m.atleast_3d(x), M),
    ("atleast_3d vec", lambda m, x: m.atleast_3d(x), V),
    ("broadcast_arrays", lambda m, x: m.broadcast_arrays(x, M[:, :1]), V[:4]),
]


@pytest.mark.parametrize("label,fun,x", CASES, ids=[c[0] for c in CASES])
def test_values_match_numpy(label, fun, x):
    got, want = fun(fnp, x), fun(np, x)
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
    else:
        got, want = [got], [want]
    for g, w in zip(got, want):
        assert isinstance(g, funcgrad.Array)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(g), w)


@pytest.mark.parametrize("label,fun,x", CASES, ids=[c[0] for c in CASES])
def test_derivatives_forward_and_reverse(label, fun, x):
    check_grads(lambda v: fun(fnp, v), (x,), modes=("fwd", "rev"))


def test_size_zero_and_scalar_inputs():
    e = np.zeros((0, 3))
    for f in (lambda m, x: m.concatenate([x, x]), lambda m, x: m.pad(x, 1),
              lambda m, x: m.flip(x), lambda m, x: m.roll(x, 1, 1), lambda m, x: m.tile(x, 2),
              lambda m, x: m.transpose(x), lambda m, x: m.reshape(x, (3, 0))):
        assert fun_shape(f, e)
    s = np.float64(1.5)
    for f in (lambda m, x: m.reshape(x, (1, 1)), lambda m, x: m.pad(x, 2),
              lambda m, x: m.flip(x), lambda m, x: m.expand_dims(x, 0),
              lambda m, x: m.tile(x, 3), lambda m, x: m.broadcast_to(x, (2,))):
        assert fun_shape(f, s)


def fun_shape(f, x):
    return f(fnp, x).shape == f(np, x).shape


def test_float32_is_preserved():
    x = fnp.asarray(X.astype(np.float32))
    for f in (lambda v: fnp.pad(v, 1, mode="reflect"), lambda v: fnp.roll(v, 1),
              lambda v: fnp.tile(v, 2), lambda v: fnp.concatenate([v, v])):
        assert f(x).dtype == np.float32
        assert grad(lambda v: fnp.sum(f(v)))(x).dtype == np.float32


def test_nothing_to_do_returns_the_input():
    x = fnp.asarray(X)
    assert fnp.reshape(x, (2, 3, 4)) is x
    assert fnp.reshape(x, (2, -1, 4)) is x
    assert fnp.transpose(x, (0, 1, 2)) is x
    assert fnp.broadcast_to(x, (2, 3, 4)) is x
    assert fnp.concatenate([x]) is x
    assert fnp.squeeze(x) is x
    assert fnp.pad(x, 0) is x
    assert fnp.flip(x, ()) is x
    assert fnp.roll(x, 4, axis=2) is x


def test_array_properties_and_methods():
    x = fnp.asarray(X)
    assert np.array_equal(np.asarray(x.T), X.T)
    assert np.array_equal(np.asarray(x.mT), np.swapaxes(X, -1, -2))
    assert np.array_equal(np.asarray(x.reshape(6, 4)), X.reshape(6, 4))
    assert np.array_equal(np.asarray(x.reshape((6, 4))), X.reshape(6, 4))
    assert np.array_equal(np.asarray(x.transpose(2, 0, 1)), X.transpose(2, 0, 1))
    assert np.array_equal(np.asarray(x.swapaxes(0, 1)), X.swapaxes(0, 1))
    assert np.array_equal(np.asarray(x.flatten()), X.flatten())


def test_concatenate_gradient_goes_to_each_input():
    a, b = fnp.asarray(M), fnp.asarray(M[:2] * 0.5)
    ga, gb = grad(lambda u, w: fnp.sum(fnp.concatenate([u, w]) * fnp.arange(5.0)[:, None]),
                  (0, 1))(a, b)
    np.testing.assert_allclose(np.asarray(ga), np.broadcast_to([[0.0], [1], [2]], (3, 4)))
    np.testing.assert_allclose(np.asarray(gb), np.broadcast_to([[3.0], [4]], (2, 4)))
    check_grads(lambda u, w: fnp.concatenate([u, w], axis=0), (M, M[:2].astype(np.float32)),
                modes=("fwd", "rev"), atol=1e-3, rtol=1e-3)


# -- errors --------------------------------------------------------------------------------

def test_errors_name_the_problem():
    x = fnp.asarray(X)
    with pytest.raises(fnp.AxisError, match="axis 5 is out of bounds"):
        fnp.expand_dims(x, 5)
    with pytest.raises(fnp.AxisError, match="axis1 3 is out of bounds"):
        fnp.swapaxes(x, 3, 0)
    with pytest.raises(ValueError, match="squeeze.*axis 1 has size 3"):
        fnp.squeeze(x, 1)
    with pytest.raises(ValueError, match="cannot reshape"):
        fnp.reshape(x, (5, 5))
    with pytest.raises(ValueError, match="axes .* don't match"):
        fnp.transpose(x, (1, 0))
    with pytest.raises(ValueError, match="zero-dimensional"):
        fnp.concatenate([1.0, 2.0])
    with pytest.raises(ValueError, match="same shape"):
        fnp.stack([M, M[:2]])
    with pytest.raises(ValueError, match="equal division"):
        fnp.split(V, 2)
    with pytest.raises(ValueError, match="matrix_transpose.*ndim=1"):
        fnp.asarray(V).mT
    with pytest.raises(NotImplementedError, match="mode 'mean'.*constant, empty, edge"):
        fnp.pad(x, 1, mode="mean")
    with pytest.raises(ValueError, match="negative"):
        fnp.pad(x, -1)
    with pytest.raises(NotImplementedError, match="order='C'"):
        fnp.reshape(x, (24,), order="F")
