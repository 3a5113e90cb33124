"""What broke when JAX's documentation ran on funcgrad (docs/gradient-checkpointing.md,
docs/notebooks/autodiff_remat.md, the autodiff cookbook), each as a small program of our own
written the way the document writes it, compared with JAX itself where it is installed."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import tree_util

X = np.linspace(0.1, 1.0, 5)
W = np.linspace(1.0, 2.0, 5)


def _plain(x, w):
    return fnp.sum(fnp.sin(fnp.sin(x * w)) * w)


def _checkpointed(policy=None):
    """The chain with its layer checkpointed, closing over ``w`` (not passing it)."""
    def f(x, w):
        layer = fg.checkpoint(lambda a: fnp.sin(fnp.sin(a * w)), policy=policy)
        return fnp.sum(layer(x) * w)
    return f


POLICIES = [None, fg.checkpoint_policies.everything_saveable,
            fg.checkpoint_policies.dots_with_no_batch_dims_saveable]


@pytest.mark.parametrize("policy", POLICIES)
def test_checkpoint_of_a_closure_over_a_differentiated_value(policy):
    """The closed-over ``w`` becomes an input of the checkpoint (closure conversion): its
    derivative flows through the checkpoint's VJP and the backward pass, run after the
    forward trace has ended, finds no tracer of it (it raised EscapedTracerError)."""
    f = _checkpointed(policy)
    want = fg.grad(_plain, argnums=(0, 1))(X, W)
    for got in (fg.grad(f, argnums=(0, 1))(X, W), fg.jit(fg.grad(f, argnums=(0, 1)))(X, W)):
        for g, e in zip(got, want):
            np.testing.assert_allclose(g, e, rtol=1e-12)
    np.testing.assert_allclose(fg.hessian(f, argnums=1)(X, W),
                               fg.hessian(_plain, argnums=1)(X, W), rtol=1e-12)
    # the checkpoint's record reads w as an input; a replay takes the replayed w
    tape = fg.make_tape(f)(X, W)
    assert tape.primitives.count("checkpoint") == 1
    np.testing.assert_allclose(tape(X * 2, W * 3), _plain(X * 2, W * 3), rtol=1e-12)


def test_checkpoint_closure_gradient_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def j_f(x, w):
        layer = jax.checkpoint(lambda a: jnp.sin(jnp.sin(a * w)))
        return jnp.sum(layer(x) * w)
    want = jax.grad(j_f, argnums=(0, 1))(X, W)
    got = fg.grad(_checkpointed(), argnums=(0, 1))(X, W)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(e), rtol=1e-12)


def _scaled_square():
    @fg.custom_vjp
    def f(x):
        return x ** 2

    def fwd(x):
        return x ** 2, (x, {"two": 2.0 * fnp.ones_like(x)})

    def bwd(res, g):
        x, extra = res
        return (g * extra["two"] * x,)
    f.defvjp(fwd, bwd)
    return f


@pytest.mark.parametrize("fun", [_plain, _checkpointed(),
                                 lambda x, w: fnp.sum(_scaled_square()(x) * w)],
                         ids=["plain", "checkpoint", "custom_vjp"])
def test_a_vjp_function_is_a_pytree_of_its_residuals(fun):
    """As JAX's: flattening a vjp function gives its residuals (a checkpoint's sub-tape's
    and a custom rule's included); putting other values in their places gives a vjp
    function of those; so it can be returned from jit."""
    y, f_vjp = fg.vjp(fun, X, W)
    leaves, tree = tree_util.tree_flatten(f_vjp)
    assert leaves and all(isinstance(v, (fg.Array, np.ndarray, float)) for v in leaves)
    want = f_vjp(1.0)
    again = tree_util.tree_unflatten(tree, leaves)
    for g, e in zip(again(1.0), want):
        np.testing.assert_array_equal(g, e)
    # other residuals: the vjp function at other inputs, with the same structure
    _, other = fg.vjp(fun, X * 2, W)
    swapped = tree_util.tree_unflatten(tree, tree_util.tree_leaves(other))
    for g, e in zip(swapped(1.0), other(1.0)):
        np.testing.assert_allclose(g, e, rtol=1e-12)
    for g, e in zip(f_vjp(1.0), want):  # the original is unchanged
        np.testing.assert_array_equal(g, e)
    jitted = fg.jit(lambda x, w: fg.vjp(fun, x, w))
    for _ in range(2):  # traced, then the compiled program's outputs
        y_j, vjp_j = jitted(X, W)
        np.testing.assert_allclose(y_j, y, rtol=1e-12)
        for g, e in zip(vjp_j(1.0), want):
            np.testing.assert_allclose(g, e, rtol=1e-12)


def test_print_fwd_bwd_of_the_remat_documents():
    """The documents' helper, without its table: make_jaxpr of a vjp (the residuals are
    outputs of the forward program), then of the vjp function rebuilt from them."""
    def print_fwd_bwd(f, *args):
        args, in_tree = tree_util.tree_flatten(args)

        def f_(*args):
            return f(*tree_util.tree_unflatten(in_tree, args))
        fwd = fg.make_jaxpr(lambda *args: fg.vjp(f_, *args))(*args).jaxpr
        y, f_vjp = fg.vjp(f_, *args)
        res, vjp_tree = tree_util.tree_flatten(f_vjp)

        def g_(*args):
            *res, y = args
            return tree_util.tree_unflatten(vjp_tree, res)(y)
        bwd = fg.make_jaxpr(g_)(*res, y).jaxpr
        return fwd, bwd, len(res)

    fwd, bwd, n_res = print_fwd_bwd(_checkpointed(), X, W)
    assert len(fwd.out_avals) == 1 + n_res  # the output, then every residual
    assert [e.primitive.name for e in fwd.eqns] == fwd.primitives
    # the residuals: the checkpoint's inputs x and w, its output (read by the product's
    # VJP) and w again; not the intermediate sin(x * w), which the backward pass recomputes
    assert str(fwd).splitlines()[-1].strip() == "in (g, a, b, e, b) }"
    assert "sin" in str(bwd) and "cos" in str(bwd)  # the checkpointed layer runs again
    assert [a.shape for a in bwd.in_avals] == [np.shape(v) for v in
                                               tree_util.tree_leaves(fg.vjp(
                                                   _checkpointed(), X, W)[1])] + [()]


def test_make_jaxpr_reads_as_a_closed_jaxpr():
    closed = fg.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(X)
    assert closed.jaxpr is closed
    assert [e.primitive.name for e in closed.eqns] == ["sin", "mul"]
    assert [(a.shape, a.dtype) for a in closed.in_avals] == [((5,), np.dtype(float))]
    assert [(a.shape, a.dtype) for a in closed.out_avals] == [((5,), np.dtype(float))]


def test_ad_checkpoint_module_has_jaxs_names():
    from funcgrad.ad_checkpoint import (checkpoint, checkpoint_name, checkpoint_policies,
                                        print_saved_residuals, remat)
    assert checkpoint is fg.checkpoint and remat is fg.remat
    assert checkpoint_name is fg.checkpoint_name
    assert checkpoint_policies is fg.checkpoint_policies
    assert print_saved_residuals is fg.print_saved_residuals
