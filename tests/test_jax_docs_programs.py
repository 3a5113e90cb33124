"""What broke when JAX's documentation ran on funcgrad, each as a small program of our own
written the way the document writes it, compared with JAX itself where it is installed.

Run with ``jax`` aliased to funcgrad, these documents now run whole except for the cells
that show JAX's own errors: the autodiff cookbook (notebooks and new_docs/301),
Custom_derivative_rules, custom-jvp-vjp, gradient-checkpointing and
autodiff_remat (the cells' helper needs ``rich``), automatic-differentiation,
automatic-vectorization, higher-order, complex-differentiation, control-flow, key-concepts,
random-numbers, stateful-computations, pytrees, thinking_in_jax, external-callbacks and
vmapped_log_probs. What still differs:
- an index out of bounds raises numpy's IndexError unless a mode is given (JAX clamps);
- x.at[idx].multiply/min/max with repeated indices are refused (JAX applies each);
- APIs funcgrad does not have: sharding (``Array.sharding``, meshes) and the newest remat
  and vjp-object APIs (``custom_remat``, ``SaveOnlyTheseNames``, ``saveable_args``);
- array_refs: 26 of its 31 cells run (JAX 0.10.2: 28); not run: vmap over ref arguments,
  differentiating with respect to a ref (which JAX 0.10.2 refuses too) and
  ``Ref.unsafe_buffer_pointer``. See test_refs.py."""
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


def test_typeof_and_the_traced_programs_jaxpr():
    """new_docs/101: ``jax.typeof`` (inside vmap: one example's type; random keys' dtype)
    and ``jax.jit(g).trace(x).jaxpr``."""
    import funcgrad.random as random
    assert fg.typeof(fnp.ones((2, 3))) == fg.ShapeDtypeStruct((2, 3), np.float64)
    assert fg.typeof(1.0) == fg.ShapeDtypeStruct((), np.float64)
    assert repr(fg.typeof(random.split(random.key(0)))) == (
        "ShapeDtypeStruct(shape=(2,), dtype=key<fry>)")
    seen = []
    fg.vmap(lambda x: seen.append(fg.typeof(x)) or x)(fnp.ones((4, 3)))
    assert seen == [fg.ShapeDtypeStruct((3,), np.float64)]
    jaxpr = fg.jit(lambda x: fnp.sin(x) * 2.0).trace(1.0).jaxpr
    assert [e.primitive.name for e in jaxpr.eqns] == ["sin", "mul"]
    assert "sin" in str(jaxpr)


LINEAR = {
    "matmul and sum": (lambda x, y: (2.0 * x + fnp.sum(y), x @ np.arange(6.0).reshape(3, 2)),
                       (X[:3], W[:4])),
    "pytree in and out": (lambda t: {"s": t["a"].T @ np.ones(2) + t["b"].sum(), "d": -t["b"]},
                          ({"a": np.ones((2, 3)), "b": np.ones((2,))},)),
    "fft": (lambda x: fnp.fft.rfft(x).real, (X,)),
}


@pytest.mark.parametrize("name", LINEAR)
def test_linear_transpose_against_jax(name):
    """new_docs/301/cookbook: ``jax.linear_transpose``."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    fun, primals = LINEAR[name]
    out = fun(*primals)
    ct = tree_util.tree_map(lambda o: np.linspace(1.0, 2.0, np.size(o)).reshape(np.shape(o)),
                            out)
    got = fg.linear_transpose(fun, *primals)(ct)
    j_fun = {"matmul and sum": lambda x, y: (2.0 * x + jax.numpy.sum(y),
                                             x @ np.arange(6.0).reshape(3, 2)),
             "pytree in and out": lambda t: {"s": t["a"].T @ np.ones(2) + t["b"].sum(),
                                             "d": -t["b"]},
             "fft": lambda x: jax.numpy.fft.rfft(x).real}[name]
    want = jax.linear_transpose(j_fun, *primals)(ct)
    for g, e in zip(tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, np.asarray(e), rtol=1e-12, atol=1e-12)
    jitted = fg.jit(lambda c: fg.linear_transpose(fun, *primals)(c))(ct)
    for g, e in zip(tree_util.tree_leaves(jitted), tree_util.tree_leaves(got)):
        np.testing.assert_allclose(g, e, rtol=1e-12)


@pytest.mark.parametrize("fun", [fnp.sin, lambda x: x + 1.0, lambda x: x * x])
def test_linear_transpose_refuses_a_non_linear_function(fun):
    with pytest.raises(TypeError, match="not linear"):
        fg.linear_transpose(fun, 1.0)


def test_effects_barrier_finds_every_effect_done(capsys):
    fg.jit(lambda x: fg.debug.print("{}", x))(2.0)
    fg.effects_barrier()
    assert capsys.readouterr().out == "2.0\n"


def test_ad_checkpoint_module_has_jaxs_names():
    from funcgrad.ad_checkpoint import (checkpoint, checkpoint_name, checkpoint_policies,
                                        print_saved_residuals, remat)
    assert checkpoint is fg.checkpoint and remat is fg.remat
    assert checkpoint_name is fg.checkpoint_name
    assert checkpoint_policies is fg.checkpoint_policies
    assert print_saved_residuals is fg.print_saved_residuals


def test_staged_while_loop_closing_over_a_batched_value():
    """Custom_derivative_rules' jit(vmap(newton_sqrt)): the staged loop's body and
    condition read the batched ``a`` from their closure (they raised StagedClosureError)."""
    from funcgrad import lax

    def fixed_point(f, a, x_guess):
        def cond_fun(carry):
            x_prev, x = carry
            return fnp.abs(x_prev - x) > 1e-6

        def body_fun(carry):
            _, x = carry
            return x, f(a, x)
        return lax.while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))[1]

    def newton_sqrt(a):
        return fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)
    a = fnp.asarray([1.0, 2.0, 3.0, 4.0])
    for f in (fg.jit(fg.vmap(newton_sqrt)), fg.vmap(fg.jit(newton_sqrt)),
              fg.vmap(newton_sqrt)):
        np.testing.assert_allclose(f(a), np.sqrt(a), rtol=1e-12)
    # a cond and a scan staged the same way, against the examples one by one
    g = fg.jit(fg.vmap(lambda x, w: lax.scan(lambda c, _: (c * w + 1, c), x, None,
                                             length=3)[0]))
    np.testing.assert_allclose(g(fnp.asarray([1.0, 2.0]), fnp.asarray([2.0, 3.0])),
                               [15.0, 67.0])
    h = fg.jit(fg.vmap(lambda x, y: lax.cond(fnp.sum(x) > 0, lambda: x * y, lambda: x - y)))
    np.testing.assert_allclose(h(fnp.asarray([[1.0, 2.0], [-3.0, 1.0]]), fnp.asarray([2.0, 3.0])),
                               [[2.0, 4.0], [-6.0, -2.0]])
