"""``fwd_and_bwd`` and ``vjp(...)[1].args_res`` against JAX (64-bit): the forward returns
the output and residuals that cross a jit boundary, the backward compiles once and returns
JAX's cotangents; ``args_res`` holds each input the backward keeps, NotNeeded() otherwise."""
from __future__ import annotations

import os

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp

os.environ.setdefault("JAX_ENABLE_X64", "1")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


def _close(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), funcgrad.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=1e-12)


def _f(np_):
    def f(x, W, scale):
        return np_.tanh(x @ W).sum(axis=0) * scale
    return f


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0), (0, 2)])
@pytest.mark.parametrize("jitted", [True, False])
def test_fwd_and_bwd_matches_jax(argnums, jitted):
    rng = np.random.default_rng(0)
    x, W, ct = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=2)
    args = (x, W, 1.5)
    fwd, bwd = funcgrad.fwd_and_bwd(_f(fnp), argnums, jitted=jitted)
    jfwd, jbwd = jax.fwd_and_bwd(_f(jnp), argnums, jitted=jitted)
    out, res = fwd(*args)
    jout, jres = jfwd(*args)
    _close(jout, out)
    got, expected = bwd(res, ct), jbwd(jres, ct)
    assert isinstance(got, tuple) == isinstance(expected, tuple)
    _close(expected, got)


def test_fwd_and_bwd_has_aux():
    def f(np_):
        return lambda x: (np_.sin(x).sum(), {"n": x.shape[0], "c": np_.cos(x)})
    x = np.linspace(0.0, 1.0, 5)
    out, res, aux = funcgrad.fwd_and_bwd(f(fnp), 0, has_aux=True)[0](x)
    jout, jres, jaux = jax.fwd_and_bwd(f(jnp), 0, has_aux=True)[0](x)
    _close(jout, out)
    _close(jaux, aux)
    _close(jax.fwd_and_bwd(f(jnp), 0, has_aux=True)[1](jres, 2.0),
           funcgrad.fwd_and_bwd(f(fnp), 0, has_aux=True)[1](res, 2.0))


def test_bwd_compiles_once_for_new_residuals():
    traces = []

    def f(x, W):
        traces.append(1)
        return x @ W
    fwd, bwd = funcgrad.fwd_and_bwd(f, argnums=(0, 1))
    x = W = ct = fnp.ones((4, 4))
    for i in range(3):
        out, res = fwd(x * i, W)
        gx, gW = bwd(res, ct)
    np.testing.assert_allclose(np.asarray(gW), 2 * 4 * np.ones((4, 4)))  # (x = 2 last)
    assert bwd._cache_size() == 1 and fwd._cache_size() == 1


def test_residuals_are_a_pytree_of_arrays():
    _, res = funcgrad.fwd_and_bwd(lambda x: fnp.sin(x) * 2, 0)[0](fnp.ones(3))
    leaves = funcgrad.tree_util.tree_leaves(res)
    assert leaves and all(isinstance(v, funcgrad.Array) for v in leaves)


def test_args_res_holds_kept_inputs_and_not_needed():
    x, w = fnp.ones(3), fnp.asarray(2.0)
    _, f_vjp = funcgrad.vjp(lambda d, w: fnp.sin(d["a"][0]) * w, {"a": (x, 1.0)}, w)
    (a,), kept_w = f_vjp.args_res
    assert a[0] is x and isinstance(a[1], funcgrad.NotNeeded) and kept_w is w
    # JAX's layout: one entry per primal, containers as tuples
    _, j_vjp = jax.vjp(lambda d, w: jnp.sin(d["a"][0]) * w, {"a": (np.ones(3), 1.0)}, 2.0)
    assert [type(e) for e in j_vjp.args_res] == [tuple, type(j_vjp.args_res[1])]
    assert type(j_vjp.args_res[0][0]) is tuple and len(j_vjp.args_res[0][0]) == 2
    _, g = funcgrad.vjp(lambda x: x * 3.0, x)
    assert isinstance(g.args_res[0], funcgrad.NotNeeded)
    assert funcgrad.tree_util.tree_leaves(funcgrad.NotNeeded()) == []


def test_args_res_after_jit_are_the_new_values():
    def fwd(x):
        return funcgrad.vjp(lambda x: fnp.sin(x), x)
    _, f_vjp = funcgrad.jit(fwd)(fnp.ones(2))
    np.testing.assert_allclose(np.asarray(f_vjp.args_res[0]), np.ones(2))
