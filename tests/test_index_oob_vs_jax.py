"""funcgrad.numpy's defaults for indices out of bounds against JAX's, case by case: reads
(``x[idx]``, ``.at[idx].get``, take, take_along_axis) clamp or fill, updates drop, with
scalar, array, slice and negative indices; eager, under jit (the index a traced argument
where it can be) and under vmap, and the gradient (which JAX routes to the clamped element
for a dynamic slice and drops for a gather: see funcgrad/numpy/_index_modes.py)."""
import os

import numpy as np
import pytest

os.environ.setdefault("JAX_ENABLE_X64", "1")
jax = pytest.importorskip("jax")
jnp = jax.numpy

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402

X = np.arange(1.0, 4.0)                 # shape (3,)
Y = np.arange(1.0, 13.0).reshape(3, 4)  # shape (3, 4)
ARR = np.array([0, 5, -1, -4, 7])
VALS = np.array([10.0, 20.0, 30.0, 40.0, 50.0])

# name -> (operand, index, f(x, i, xnp)); the index is passed as an argument (traced
# under jit) unless it is a Python int or a tuple, which stay static
READS = {
    "int past end": (X, 5, lambda x, i, m: x[i]),
    "int before start": (X, -5, lambda x, i, m: x[i]),
    "int negative in bounds": (X, -1, lambda x, i, m: x[i]),
    "array mixed": (X, ARR, lambda x, i, m: x[i]),
    "0-d array": (X, np.array(5), lambda x, i, m: x[i]),
    "slice past end": (X, None, lambda x, i, m: x[1:10]),
    "slice before start": (X, None, lambda x, i, m: x[-10:2]),
    "2-d int row": (Y, 5, lambda x, i, m: x[i]),
    "2-d int pair": (Y, None, lambda x, i, m: x[5, 1]),
    "2-d negative column": (Y, None, lambda x, i, m: x[1, -9]),
    "2-d int and slice": (Y, None, lambda x, i, m: x[5, :2]),
    "2-d int and strided slice": (Y, None, lambda x, i, m: x[5, ::2]),
    "2-d int and array": (Y, np.array([0, 9]), lambda x, i, m: x[5, i]),
    "2-d arrays": (Y, None, lambda x, i, m: x[np.array([5, 0]), np.array([1, 9])]),
    "2-d slice and int": (Y, None, lambda x, i, m: x[:, 9]),
    "2-d ellipsis": (Y, None, lambda x, i, m: x[..., -7]),
    "2-d newaxis": (Y, None, lambda x, i, m: x[None, 5]),
    "at get": (X, ARR, lambda x, i, m: x.at[i].get()),
    "at get fill": (X, ARR, lambda x, i, m: x.at[i].get(mode="fill")),
    "at get fill_value": (X, ARR, lambda x, i, m: x.at[i].get(mode="fill", fill_value=-1.0)),
    "at get clip": (X, ARR, lambda x, i, m: x.at[i].get(mode="clip")),
    "at get promise": (X, ARR, lambda x, i, m: x.at[i].get(mode="promise_in_bounds")),
    "take": (X, ARR, lambda x, i, m: m.take(x, i)),
    "take fill_value": (X, ARR, lambda x, i, m: m.take(x, i, fill_value=0.5)),
    "take clip": (X, ARR, lambda x, i, m: m.take(x, i, mode="clip")),
    "take wrap": (X, ARR, lambda x, i, m: m.take(x, i, mode="wrap")),
    "take axis 1": (Y, np.array([5, 0, -2]), lambda x, i, m: m.take(x, i, axis=1)),
    "take_along_axis": (Y, np.array([[5], [-1], [-9]]),
                        lambda x, i, m: m.take_along_axis(x, i, axis=1)),
}
UPDATES = {
    "set array": (X, ARR, lambda x, i, v, m: x.at[i].set(v)),
    "add array": (X, ARR, lambda x, i, v, m: x.at[i].add(v)),
    # (a traced index would need its values: funcgrad refuses repeats for these)
    "multiply array": (X, None, lambda x, i, v, m: x.at[np.array([0, 5, -4])].multiply(
        v[:3], unique_indices=True)),
    "min array": (X, None, lambda x, i, v, m: x.at[np.array([0, 5, -1])].min(-v[:3])),
    "set int past end": (X, 5, lambda x, i, v, m: x.at[i].set(v[0])),
    "set int before start": (X, -4, lambda x, i, v, m: x.at[i].set(v[0])),
    "set int negative": (X, -1, lambda x, i, v, m: x.at[i].set(v[0])),
    "set 2-d pair": (Y, None, lambda x, i, v, m: x.at[1, -9].set(v[0])),
    "add 2-d row": (Y, None, lambda x, i, v, m: x.at[5, :].add(v[0])),
    "set 2-d column": (Y, None, lambda x, i, v, m: x.at[:, 9].set(v[:3])),
    "set clip": (X, ARR, lambda x, i, v, m: x.at[i].set(v, mode="clip")),
    "add clip": (X, ARR, lambda x, i, v, m: x.at[i].add(v, mode="clip")),
    "set drop": (X, ARR, lambda x, i, v, m: x.at[i].set(v, mode="drop")),
}


def _run(lib, case, how):
    """case's value (and gradient) in ``lib`` (jax or funcgrad), eager or jitted."""
    (m, g) = (jnp, jax) if lib == "jax" else (fnp, fg)
    x0, idx, f = case
    static = idx is None or isinstance(idx, int)
    fun = (lambda x: f(x, idx, m)) if static else (lambda x, i: f(x, i, m))
    args = (m.asarray(x0),) if static else (m.asarray(x0), m.asarray(idx))
    fun = g.jit(fun) if how == "jit" else fun
    value = fun(*args)
    grad = g.grad(lambda *a: m.sum(m.nan_to_num(fun(*a)) * m.arange(1.0, 1.0 + fun(*a).size)
                                   .reshape(np.shape(fun(*a)))))(*args)
    return np.asarray(value), np.asarray(grad)


def _run_update(lib, case, how):
    (m, g) = (jnp, jax) if lib == "jax" else (fnp, fg)
    x0, idx, f = case
    static = idx is None or isinstance(idx, int)
    fun = (lambda x, v: f(x, idx, v, m)) if static else (lambda x, v, i: f(x, i, v, m))
    args = (m.asarray(x0), m.asarray(VALS)) + (() if static else (m.asarray(idx),))
    fun = g.jit(fun) if how == "jit" else fun
    value = fun(*args)
    weights = m.arange(1.0, 1.0 + value.size).reshape(value.shape)
    grads = g.grad(lambda *a: m.sum(fun(*a) * weights), argnums=(0, 1))(*args)
    return (np.asarray(value),) + tuple(np.asarray(t) for t in grads)


@pytest.mark.parametrize("how", ["eager", "jit"])
@pytest.mark.parametrize("name", sorted(READS))
def test_read_matches_jax(name, how):
    want = _run("jax", READS[name], how)
    got = _run("funcgrad", READS[name], how)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("how", ["eager", "jit"])
@pytest.mark.parametrize("name", sorted(UPDATES))
def test_update_matches_jax(name, how):
    want = _run_update("jax", UPDATES[name], how)
    got = _run_update("funcgrad", UPDATES[name], how)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


def test_vmap_over_scalar_indices_matches_jax():
    idx = np.array([0, 5, -1, -4])
    for m, g in ((jnp, jax), (fnp, fg)):
        x = m.asarray(X)
        reads = g.vmap(lambda i: x[i])(m.asarray(idx))
        sets = g.vmap(lambda i: x.at[i].set(9.0))(m.asarray(idx))
        grad = g.grad(lambda x: g.vmap(lambda i: x[i])(m.asarray(idx)).sum())(x)
        if m is jnp:
            want = (reads, sets, grad)
    for w, got in zip(want, (reads, sets, grad)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(w))


def test_jit_reads_the_runtime_index_not_the_traced_one():
    """An index in bounds when traced and out of bounds on a later call is still clamped
    (the compiled program bounds it)."""
    f = fg.jit(lambda x, i: x[i])
    x = fnp.asarray(X)
    assert float(f(x, 1)) == 2.0
    assert float(f(x, 7)) == 3.0 and float(f(x, -9)) == 1.0
    g = fg.jit(lambda x, i: x.at[i].set(0.0))
    np.testing.assert_array_equal(g(x, 0), [0.0, 2.0, 3.0])
    np.testing.assert_array_equal(g(x, 7), X)


def test_errors_in_jaxs_words_and_numpys_raise_mode():
    x = fnp.asarray(X)
    with pytest.raises(IndexError, match="^index is out of bounds for axis 0 with size 0$"):
        fnp.zeros((0,))[0]
    with pytest.raises(ValueError, match="^Invalid mode 'bogus' for np.take$"):
        fnp.take(x, np.array([0]), mode="bogus")
    with pytest.raises(ValueError, match='^Unknown gather mode "bogus"$'):
        x.at[0].set(1.0, mode="bogus")
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        fnp.take(x, np.array([5]), mode="raise")
    with pytest.raises(IndexError, match="out of bounds"):
        fg.jit(lambda x: x.at[5].get(mode="raise"))(x)
