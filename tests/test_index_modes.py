"""``x.at[idx]`` with JAX's out-of-bounds modes ("clip", "fill", "drop"; Common Gotchas in
JAX: out-of-bounds indexing), against JAX itself, with gradients and under jit and vmap;
funcgrad's mode "raise" keeps numpy's IndexError. The defaults: tests/test_index_oob_vs_jax.py."""
import os

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

os.environ.setdefault("JAX_ENABLE_X64", "1")

X = np.arange(12.0).reshape(3, 4) + 1.0
INDICES = {
    "int past the end": (5,),
    "negative past the start": (-4,),
    "array, both ends": (np.array([0, 3, -1, -7, 2]),),
    "array and slice": (np.array([[0], [5]]), slice(1, None)),
    "ellipsis and array": (Ellipsis, np.array([3, 4, -5])),
    "two arrays": (np.array([0, 2, 9]), np.array([1, 4, 3])),
    "in bounds": (np.array([2, 0]), 1),
}
GET_MODES = [("clip", None), ("fill", None), ("fill", -1.0), ("drop", 0.5)]
UPDATES = ["set", "add", "multiply", "min", "max"]


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.mark.parametrize("mode, fill", GET_MODES)
@pytest.mark.parametrize("name", INDICES)
def test_get_against_jax(jax, name, mode, fill):
    idx = INDICES[name]
    want = jax.numpy.asarray(X).at[idx].get(mode=mode, fill_value=fill)
    got = fnp.asarray(X).at[idx].get(mode=mode, fill_value=fill)
    np.testing.assert_array_equal(got, np.asarray(want))
    # its gradient (a weighted sum, so that each position counts differently)
    weights = np.arange(1.0, np.size(want) + 1).reshape(np.shape(want))

    def loss(at, x):
        return (x.at[idx].get(mode=mode, fill_value=0.0 if fill is None else fill)
                * weights).sum()
    j_grad = jax.grad(lambda x: loss(None, x))(jax.numpy.asarray(X))
    np.testing.assert_array_equal(fg.grad(lambda x: loss(None, x))(X), np.asarray(j_grad))
    np.testing.assert_array_equal(fg.jit(fg.grad(lambda x: loss(None, x)))(X),
                                  np.asarray(j_grad))


@pytest.mark.parametrize("mode, how", [("drop", how) for how in UPDATES]
                         + [("clip", "set"), ("clip", "add")])
@pytest.mark.parametrize("name", [n for n in INDICES if n != "array, both ends"])
def test_updates_against_jax(jax, name, how, mode):
    """(Indices that select an element twice are left out for multiply, min and max, and
    so is clip there, which makes such repeats: funcgrad refuses them with an error naming
    the fix, where JAX applies every update.)"""
    idx = INDICES[name]
    values = 7.5
    want = getattr(jax.numpy.asarray(X).at[idx], how)(values, mode=mode)
    got = getattr(fnp.asarray(X).at[idx], how)(values, mode=mode)
    np.testing.assert_array_equal(got, np.asarray(want))


def test_repeated_out_of_bounds_updates_are_all_dropped():
    got = fnp.asarray(X).at[np.array([7, 0, 9])].multiply(2.0, mode="drop")
    np.testing.assert_array_equal(got, np.concatenate([X[:1] * 2, X[1:]]))


def test_default_fill_values_follow_the_dtype():
    for dtype, fill in [(np.float32, np.nan), (np.int32, np.iinfo(np.int32).min),
                        (np.uint8, 255), (np.bool_, True)]:
        got = fnp.asarray(np.zeros(3, dtype)).at[5].get(mode="fill")
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, np.asarray(fill, dtype))


def test_traced_indices_under_jit_and_vmap():
    x = fnp.asarray(X[0])
    gather = fg.jit(lambda x, i: x.at[i].get(mode="fill", fill_value=-1.0))
    np.testing.assert_array_equal(gather(x, np.array([1, 9])), [2.0, -1.0])
    np.testing.assert_array_equal(gather(x, np.array([3, -9])), [4.0, -1.0])
    batched = fg.vmap(lambda i: x.at[i].set(0.0, mode="drop"))(np.array([1, 4]))
    np.testing.assert_array_equal(batched, [[1.0, 0.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]])


def test_raise_mode_keeps_numpys_error_and_unknown_modes_are_named():
    x = fnp.asarray(X)
    for ref in (x.at[5], x.at[0, 9], x.at[np.array([0, 5])]):
        with pytest.raises(IndexError, match="out of bounds"):
            ref.get(mode="raise")
        with pytest.raises(IndexError, match="out of bounds"):
            ref.set(0.0, mode="raise")
    with pytest.raises(ValueError, match='Unknown gather mode "wrap"'):
        x.at[5].get(mode="wrap")
