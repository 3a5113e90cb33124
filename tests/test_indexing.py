"""Indexing: x[idx] against numpy (basic, advanced, masks, mixed), scatter-add accumulation
in the gradient, functional x.at[idx] updates and their gradients, traced integer
indices, take / take_along_axis / sort / nonzero, and error messages."""
import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import grad, make_tape, vjp
from funcgrad.test_util import check_grads

RNG = np.random.RandomState(0)
X = RNG.randn(2, 3, 4)

INDICES = [
    0, -1, (1, 2), (1, 2, 3), (slice(None), 1), (Ellipsis, 1), (None, 0), (Ellipsis, None),
    (slice(None, None, -1),), (slice(1, None), slice(None, None, 2), slice(-1, 0, -1)),
    ([0, 1, 1],), ([], ), ([0, 1], [2, 0]), (slice(None), [0, 0, 2], slice(1, 3)),
    ([[0], [1]], slice(None), [0, 3]), (0, slice(None), [1, 1]), (1, Ellipsis, [3, -1]),
    (np.array([[0, 1]]), np.array([[1], [2]])), (np.array(1),), (X > 0,),
    (X[:, :, 0] > 0,), (1, X[0, :, 0] > 0), (np.array([[True, False, True], [False, True, False]]), [0, 1, 1]), True, False, (),
]


def ids(idx):
    return repr(idx).replace("\n", "")[:60]


@pytest.mark.parametrize("idx", INDICES, ids=[ids(i) for i in INDICES])
def test_getitem_matches_numpy(idx):
    got = fnp.asarray(X)[idx]
    want = X[idx]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("idx", INDICES, ids=[ids(i) for i in INDICES])
def test_getitem_derivatives(idx):
    check_grads(lambda x: x[idx], (X,), modes=("fwd", "rev"))


def test_indexing_scalars_and_empty_arrays():
    s = fnp.asarray(2.5)
    assert s[()] is s
    assert s[None].shape == (1,) and s[...].shape == ()
    e = fnp.zeros((0, 3))
    assert e[:, 1].shape == (0,) and e[[], 0].shape == (0,)
    check_grads(lambda x: x[None, ..., None], (np.float64(2.0),), modes=("fwd", "rev"))


def test_integer_arrays_and_lists_as_indices():
    x = fnp.asarray(X)
    for idx in (fnp.asarray([1, 0]), [1, 0], np.array([1, 0]), (fnp.asarray(1), 2)):
        np.testing.assert_array_equal(np.asarray(x[idx]), X[idx if not isinstance(
            idx, tuple) else (1, 2)] if not isinstance(idx, funcgrad.Array) else X[[1, 0]])


def test_repeated_indices_accumulate_in_the_gradient():
    x = fnp.asarray([1.0, 2.0, 3.0])
    g = grad(lambda v: fnp.sum(v[[0, 0, 2, 0]] * fnp.asarray([1.0, 2.0, 3.0, 4.0])))(x)
    np.testing.assert_allclose(np.asarray(g), [7.0, 0.0, 3.0])
    m = fnp.asarray(X)
    g = grad(lambda v: fnp.sum(v[:, [1, 1], [2, 2]]))(m)
    expected = np.zeros_like(X)
    expected[:, 1, 2] = 2.0
    np.testing.assert_allclose(np.asarray(g), expected)


def test_mask_gradient():
    x = fnp.asarray(X)
    g = grad(lambda v: fnp.sum(v[v > 0] ** 2))(x)
    np.testing.assert_allclose(np.asarray(g), np.where(X > 0, 2 * X, 0.0))


def test_traced_integer_index_is_a_non_differentiable_input():
    def f(x, i):
        return fnp.sum(x[i] * 2.0)
    i = fnp.asarray([2, 2, 0])
    g = grad(f)(fnp.asarray([1.0, 2.0, 3.0]), i)
    np.testing.assert_allclose(np.asarray(g), [2.0, 0.0, 4.0])
    out, f_vjp = vjp(f, fnp.asarray([1.0, 2.0, 3.0]), i)
    assert f_vjp(fnp.asarray(1.0))[1].dtype == funcgrad.float0
    tape = make_tape(lambda x, j: x[j])(fnp.asarray([1.0, 2.0, 3.0]), fnp.asarray([0, 1]))
    assert "getitem" in tape.primitives
    np.testing.assert_allclose(np.asarray(tape(fnp.asarray([4.0, 5.0, 6.0]),
                                               fnp.asarray([2, 2]))), [6.0, 6.0])


def test_index_computed_inside_the_function():
    x = fnp.asarray([3.0, 1.0, 2.0])
    g = grad(lambda v: v[fnp.argsort(v)][0] * 10.0 + v[fnp.argmax(v)])(x)
    np.testing.assert_allclose(np.asarray(g), [1.0, 10.0, 0.0])


def test_iteration_uses_getitem():
    rows = list(fnp.asarray(X[0]))
    assert len(rows) == 3 and all(r.shape == (4,) for r in rows)
    g = grad(lambda v: sum(r[0] * k for k, r in enumerate(v)))(fnp.asarray(X[0]))
    np.testing.assert_allclose(np.asarray(g)[:, 0], [0.0, 1.0, 2.0])


# -- x.at[idx] ------------------------------------------------------------------------------

def test_at_returns_new_arrays_and_leaves_the_original_untouched():
    x = fnp.asarray([1.0, 2.0, 3.0])
    ops = {"set": [1.0, 9.0, 3.0], "add": [1.0, 11.0, 3.0], "multiply": [1.0, 18.0, 3.0],
           "divide": [1.0, 2 / 9, 3.0], "min": [1.0, 2.0, 3.0], "max": [1.0, 9.0, 3.0]}
    for op, expected in ops.items():
        y = getattr(x.at[1], op)(9.0)
        assert y is not x
        np.testing.assert_allclose(np.asarray(y), expected)
    np.testing.assert_array_equal(np.asarray(x), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(x.at[1:].get()), [2.0, 3.0])


def test_at_with_advanced_and_mixed_indices_matches_numpy():
    for idx in ([0, 1], (slice(None), [2, 0]), (X[:, :, 0] > 0, 1), (1, Ellipsis, [0, 3])):
        want = X.copy()
        want[idx] = 7.0
        np.testing.assert_array_equal(np.asarray(fnp.asarray(X).at[idx].set(7.0)), want)
        want = X.copy()
        np.add.at(want, idx, 1.5)
        np.testing.assert_allclose(np.asarray(fnp.asarray(X).at[idx].add(1.5)), want)


def test_at_add_accumulates_repeated_indices():
    x = fnp.zeros(3)
    y = x.at[[0, 0, 2, 0]].add(fnp.asarray([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(np.asarray(y), [7.0, 0.0, 3.0])
    gx, gv = grad(lambda u, v: fnp.sum(u.at[[0, 0, 2]].add(v) * fnp.asarray([1.0, 2.0, 3.0])),
                  (0, 1))(fnp.ones(3), fnp.asarray([5.0, 6.0, 7.0]))
    np.testing.assert_allclose(np.asarray(gx), [1.0, 2.0, 3.0])
    np.testing.assert_allclose(np.asarray(gv), [1.0, 1.0, 3.0])


def test_at_set_gradients():
    w = fnp.asarray([1.0, 2.0, 3.0, 4.0])

    def f(x, v):
        return fnp.sum(x.at[1:3].set(v) * w)
    gx, gv = grad(f, (0, 1))(fnp.ones(4), fnp.asarray([5.0, 6.0]))
    np.testing.assert_allclose(np.asarray(gx), [1.0, 0.0, 0.0, 4.0])
    np.testing.assert_allclose(np.asarray(gv), [2.0, 3.0])
    gs = grad(lambda s: fnp.sum(fnp.ones(4).at[1:3].set(s) * w))(fnp.asarray(5.0))
    assert float(gs) == 5.0  # a broadcast value gets the sum over its positions
    # repeated indices: the last write wins, and only it gets a derivative
    gv = grad(lambda v: fnp.sum(fnp.zeros(3).at[[0, 0]].set(v) * w[:3]))(fnp.asarray([5.0, 6.0]))
    np.testing.assert_allclose(np.asarray(gv), [0.0, 1.0])
    m = RNG.randn(3, 3)
    check_grads(lambda x, v: fnp.asarray(x).at[[2, 0, 2], 1:].set(v), (m, m[:, 1:]),
                modes=("fwd", "rev"))


@pytest.mark.parametrize("op", ["multiply", "divide", "min", "max"])
def test_at_multiply_divide_min_max_gradients(op):
    rng = np.random.RandomState(1)
    x = rng.uniform(1.0, 2.0, (3, 4))
    v = x[[2, 0]] + rng.choice([-0.5, 0.5], (2, 4))  # no ties for min and max
    check_grads(lambda a, b: getattr(fnp.asarray(a).at[[2, 0]], op)(b), (x, v), modes=("fwd", "rev"))


@pytest.mark.parametrize("op", ["multiply", "divide", "min", "max"])
def test_at_update_with_repeated_indices_raises_with_a_fix(op):
    with pytest.raises(ValueError, match="more than once.*unique"):
        getattr(fnp.ones(3).at[[0, 0]], op)(2.0)


def test_at_keeps_dtype_and_errors_on_unknown_mode():
    x = fnp.zeros(3, dtype=np.float32)
    assert x.at[0].set(1.0).dtype == np.float32
    assert fnp.zeros(3, dtype=np.int64).at[0].add(2.7).dtype == np.int64
    with pytest.raises(ValueError, match="unknown index update"):
        fnp._indexing.index_update(x, 0, 1.0, "bitwise_xor")


def test_item_assignment_raises_type_error_pointing_to_at():
    with pytest.raises(TypeError, match=r"\.at\[idx\]\.set"):
        fnp.zeros(3)[0] = 1.0


# -- take, sort, nonzero ---------------------------------------------------------------------

def test_take_and_take_along_axis():
    for args in (([0, 5, 5, 23],), ([0, 2, 2], 1), ([[0, 1]], -1)):
        np.testing.assert_array_equal(np.asarray(fnp.take(X, *args)), np.take(X, *args))
    for mode in ("wrap", "clip"):
        np.testing.assert_array_equal(np.asarray(fnp.take(X, [0, 7, -9], 1, mode=mode)),
                                      np.take(X, [0, 7, -9], 1, mode=mode))
    order = np.argsort(X, axis=1)
    np.testing.assert_array_equal(np.asarray(fnp.take_along_axis(X, order, 1)),
                                  np.take_along_axis(X, order, 1))
    check_grads(lambda x: fnp.take(x, [1, 1, 0], axis=2), (X,), modes=("fwd", "rev"))
    check_grads(lambda x: fnp.take_along_axis(x, order[:, :1], 1), (X,), modes=("fwd", "rev"))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_and_argsort(axis):
    np.testing.assert_array_equal(np.asarray(fnp.sort(X, axis)), np.sort(X, axis))
    np.testing.assert_array_equal(np.asarray(fnp.argsort(X, axis)), np.argsort(X, axis))
    check_grads(lambda x: fnp.sort(x, axis), (X,), modes=("fwd", "rev"))


def test_sort_gradient_follows_the_permutation():
    g = grad(lambda v: fnp.sum(fnp.sort(v) * fnp.asarray([1.0, 2.0, 3.0])))(
        fnp.asarray([3.0, 1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(g), [3.0, 1.0, 2.0])


def test_nonzero_argwhere_flatnonzero_where():
    got = fnp.nonzero(X > 0)
    assert isinstance(got, tuple) and len(got) == 3
    for a, b in zip(got, np.nonzero(X > 0)):
        np.testing.assert_array_equal(np.asarray(a), b)
    np.testing.assert_array_equal(np.asarray(fnp.argwhere(X > 0)), np.argwhere(X > 0))
    np.testing.assert_array_equal(np.asarray(fnp.flatnonzero(X > 0)), np.flatnonzero(X > 0))
    np.testing.assert_array_equal(np.asarray(fnp.where(X > 0)[1]), np.where(X > 0)[1])
    with pytest.raises(ValueError, match="0d"):
        fnp.nonzero(fnp.asarray(1.0))


def test_float32_is_preserved():
    x = fnp.asarray(X.astype(np.float32))
    assert x[0, [1, 1]].dtype == np.float32
    assert grad(lambda v: fnp.sum(v[:, [1, 1]]))(x).dtype == np.float32
    assert grad(lambda v: fnp.sum(v.at[0].set(2.0)))(x).dtype == np.float32


# -- errors --------------------------------------------------------------------------------

def test_indexing_errors_follow_numpy():
    x = fnp.asarray(X)
    with pytest.raises(IndexError, match="out of bounds"):
        x.at[5].get(mode="raise")  # out of bounds clamps by default, as in JAX
    with pytest.raises(IndexError, match="out of bounds"):
        x.at[[0, 7]].get(mode="raise")
    with pytest.raises(IndexError, match="dtype float64"):
        x[fnp.asarray([0.0, 1.0])]
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[X[0] > 0]
    with pytest.raises(IndexError, match="could not be broadcast"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="boolean scalar index"):
        x[True, 0]
