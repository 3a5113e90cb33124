"""`funcgrad.vmap` against `jax.vmap`: in_axes/out_axes semantics (pytree prefixes, None,
negative axes, keyword arguments), nesting, JAX's error texts, and the composition with
every transform (grad, jvp, vjp, linearize, hessian, jacfwd/jacrev, checkpoint, jit,
custom rules) and with lax control flow, in both orders."""
import numpy as np
import pytest

import funcgrad
import funcgrad.distributed as dist
import funcgrad.numpy as fnp
from funcgrad import lax

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)

RNG = np.random.RandomState(0)
X = RNG.uniform(-1, 1, (4, 3))
Y = RNG.uniform(-1, 1, (3,))
M = RNG.uniform(-1, 1, (4, 3, 2))


def close(a, b):
    a_leaves, b_leaves = funcgrad.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(a_leaves) == len(b_leaves)
    for u, v in zip(a_leaves, b_leaves):
        assert np.shape(u) == np.shape(v), (np.shape(u), np.shape(v))
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-10, atol=1e-12)


def both(f_fg, f_jax, *args, **kw):
    """The same program under funcgrad.vmap and jax.vmap, compared."""
    close(funcgrad.vmap(f_fg, **kw)(*args), jax.vmap(f_jax, **kw)(*args))


# -- axes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("in_axes, out_axes", [
    (0, 0), ((0, None), 0), ((1, 0), 1), ((-1, None), -1), ((None, 0), 0), ([1, 0], 0)])
def test_in_and_out_axes(in_axes, out_axes):
    x = X if not isinstance(in_axes, (tuple, list)) or in_axes[0] in (0, None) else X.T
    y = Y if not isinstance(in_axes, (tuple, list)) or in_axes[1] is None else np.stack([Y] * (
        3 if in_axes[0] is None else 4))
    if in_axes == 0:
        y = np.stack([Y] * 4)
    if isinstance(in_axes, (tuple, list)) and in_axes[0] is None:
        x = X[0]
    both(lambda a, b: fnp.sin(a) * b + fnp.sum(a), lambda a, b: jnp.sin(a) * b + jnp.sum(a),
         x, y, in_axes=in_axes, out_axes=out_axes)


def test_pytree_prefix_axes_and_outputs():
    args = ({"w": X, "b": Y}, (M, 2.0))

    def f(p, rest):
        m, s = rest
        return {"out": p["w"] @ m[..., 0] * s + p["b"][0], "aux": (p["b"], m.sum())}
    fj = f
    in_axes = ({"w": 0, "b": None}, (0, None))
    out_axes = {"out": 0, "aux": (None, 0)}
    got = funcgrad.vmap(f, in_axes=in_axes, out_axes=out_axes)(*args)
    want = jax.vmap(fj, in_axes=in_axes, out_axes=out_axes)(*args)
    close(got, want)


def test_keyword_arguments_are_mapped_over_axis_0():
    got = funcgrad.vmap(lambda a, b=None: a + b, in_axes=(None,))(Y, b=X)
    want = jax.vmap(lambda a, b=None: a + b, in_axes=(None,))(Y, b=X)
    close(got, want)


def test_axis_size_without_mapped_inputs():
    got = funcgrad.vmap(lambda a: a * 2, in_axes=None, axis_size=3)(Y)
    close(got, jax.vmap(lambda a: a * 2, in_axes=None, axis_size=3)(Y))


def test_nested_vmap_maps_two_axes():
    f = lambda a, b: a @ b  # noqa: E731
    got = funcgrad.vmap(funcgrad.vmap(f, in_axes=(None, 1)), in_axes=(0, None))(X, M[0])
    want = jax.vmap(jax.vmap(f, in_axes=(None, 1)), in_axes=(0, None))(X, M[0])
    close(got, want)


def test_python_scalar_outputs_and_shared_outputs_broadcast():
    close(funcgrad.vmap(lambda a: (a, 1.0, Y))(X), jax.vmap(lambda a: (a, 1.0, Y))(X))


# -- errors (JAX's texts) -------------------------------------------------------------------

def _both_raise(fg_call, jax_call, exc=ValueError):
    with pytest.raises(exc) as ours:
        fg_call()
    with pytest.raises(exc) as theirs:
        jax_call()
    return str(ours.value), str(theirs.value)


def test_inconsistent_sizes_error_matches_jax():
    ours, theirs = _both_raise(lambda: funcgrad.vmap(lambda a, b: a + b)(X, Y),
                               lambda: jax.vmap(lambda a, b: a + b)(X, Y))
    assert ours == theirs


def test_inconsistent_sizes_error_with_many_axes():
    ours, theirs = _both_raise(
        lambda: funcgrad.vmap(lambda a, b, c: a, axis_size=5)(X, X, Y),
        lambda: jax.vmap(lambda a, b, c: a, axis_size=5)(X, X, Y))
    assert ours == theirs


def test_in_axes_structure_errors_match_jax():
    ours, theirs = _both_raise(lambda: funcgrad.vmap(lambda a: a, in_axes=(0, 0))(X),
                               lambda: jax.vmap(lambda a: a, in_axes=(0, 0))(X))
    assert ours == theirs
    ours, theirs = _both_raise(lambda: funcgrad.vmap(lambda a, b: a, in_axes=(0, (0,)))(X, X),
                               lambda: jax.vmap(lambda a, b: a, in_axes=(0, (0,)))(X, X))
    assert ours.split("\n")[:4] == theirs.split("\n")[:4]
    ours, theirs = _both_raise(lambda: funcgrad.vmap(lambda a: a, in_axes=1.5),
                               lambda: jax.vmap(lambda a: a, in_axes=1.5), TypeError)
    assert ours == theirs
    ours, theirs = _both_raise(lambda: funcgrad.vmap(lambda a: a, in_axes=({"a": 0.5},)),
                               lambda: jax.vmap(lambda a: a, in_axes=({"a": 0.5},)), TypeError)
    assert ours == theirs


def test_rank_and_no_mapped_axis_errors_match_jax():
    ours, theirs = _both_raise(lambda: funcgrad.vmap(lambda a: a, in_axes=2)(X),
                               lambda: jax.vmap(lambda a: a, in_axes=2)(X))
    assert ours == theirs
    ours, theirs = _both_raise(lambda: funcgrad.vmap(lambda a: a, in_axes=None)(X),
                               lambda: jax.vmap(lambda a: a, in_axes=None)(X))
    assert ours == theirs


def test_out_axes_none_for_a_mapped_output_matches_jax():
    ours, theirs = _both_raise(lambda: funcgrad.vmap(lambda a: a, out_axes=None)(X),
                               lambda: jax.vmap(lambda a: a, out_axes=None)(X))
    assert ours == theirs
    ours, theirs = _both_raise(
        lambda: funcgrad.vmap(lambda a: a, out_axes=None, axis_name="i")(X),
        lambda: jax.vmap(lambda a: a, out_axes=None, axis_name="i")(X))
    assert ours == theirs


def test_python_control_flow_on_a_batched_value_is_refused():
    with pytest.raises(funcgrad.core.ConcretizationTypeError, match="batched by `vmap`"):
        funcgrad.vmap(lambda a: a if a[0] > 0 else -a)(X)
    with pytest.raises(funcgrad.core.ConcretizationTypeError, match="batched by `vmap`"):
        funcgrad.vmap(lambda a: float(a[0]))(X)


# -- composition with the transforms ------------------------------------------------------------

def loss(w, x, y):
    return fnp.sum((fnp.tanh(x @ w) - y) ** 2)


def loss_j(w, x, y):
    return jnp.sum((jnp.tanh(x @ w) - y) ** 2)


W = RNG.uniform(-1, 1, (3, 2))
T = RNG.uniform(-1, 1, (4, 2))


def test_per_example_gradients():
    got = funcgrad.vmap(funcgrad.grad(loss), in_axes=(None, 0, 0))(W, X, T)
    close(got, jax.vmap(jax.grad(loss_j), in_axes=(None, 0, 0))(W, X, T))


def test_grad_of_vmap():
    f = lambda w: fnp.sum(funcgrad.vmap(loss, in_axes=(None, 0, 0))(w, X, T))  # noqa: E731
    fj = lambda w: jnp.sum(jax.vmap(loss_j, in_axes=(None, 0, 0))(w, X, T))  # noqa: E731
    close(funcgrad.grad(f)(W), jax.grad(fj)(W))
    close(funcgrad.hessian(f)(W), jax.hessian(fj)(W))


def test_forward_modes_under_vmap():
    close(funcgrad.vmap(lambda x: funcgrad.jvp(fnp.sin, (x,), (fnp.cos(x),)))(X),
          jax.vmap(lambda x: jax.jvp(jnp.sin, (x,), (jnp.cos(x),)))(X))
    close(funcgrad.vmap(lambda x: funcgrad.linearize(fnp.tanh, x)[1](x))(X),
          jax.vmap(lambda x: jax.linearize(jnp.tanh, x)[1](x))(X))
    close(funcgrad.vmap(lambda x: funcgrad.vjp(fnp.tanh, x)[1](x))(X),
          jax.vmap(lambda x: jax.vjp(jnp.tanh, x)[1](x))(X))
    close(funcgrad.jvp(funcgrad.vmap(fnp.sin), (X,), (X,)),
          jax.jvp(jax.vmap(jnp.sin), (X,), (X,)))


def test_vmap_of_hessian_and_jacobians():
    f = lambda x: fnp.sum(fnp.sin(x) ** 3) * fnp.prod(x)  # noqa: E731
    fj = lambda x: jnp.sum(jnp.sin(x) ** 3) * jnp.prod(x)  # noqa: E731
    close(funcgrad.vmap(funcgrad.hessian(f))(X), jax.vmap(jax.hessian(fj))(X))
    g = lambda x: fnp.tanh(W.T @ x)  # noqa: E731
    gj = lambda x: jnp.tanh(W.T @ x)  # noqa: E731
    close(funcgrad.vmap(funcgrad.jacrev(g))(X), jax.vmap(jax.jacrev(gj))(X))
    close(funcgrad.vmap(funcgrad.jacfwd(g))(X), jax.vmap(jax.jacfwd(gj))(X))


def test_jacobians_of_pytrees_match_jax():
    f = lambda p: {"a": fnp.sin(p[0]) * p[1][0], "b": fnp.outer(p[0], p[1])}  # noqa: E731
    fj = lambda p: {"a": jnp.sin(p[0]) * p[1][0], "b": jnp.outer(p[0], p[1])}  # noqa: E731
    args = ((Y, X[0]),)
    close(funcgrad.jacrev(f)(*args), jax.jacrev(fj)(*args))
    close(funcgrad.jacfwd(f)(*args), jax.jacfwd(fj)(*args))


def test_checkpoint_and_jit_in_both_orders():
    body = lambda x: fnp.sin(fnp.sin(x)) * x  # noqa: E731
    body_j = lambda x: jnp.sin(jnp.sin(x)) * x  # noqa: E731
    want = jax.grad(lambda x: jnp.sum(jax.vmap(body_j)(x)))(X)
    close(funcgrad.grad(lambda x: fnp.sum(funcgrad.vmap(funcgrad.checkpoint(body))(x)))(X),
          want)
    jitted = funcgrad.jit(body)
    close(funcgrad.vmap(jitted)(X), jax.vmap(body_j)(X))
    close(funcgrad.vmap(jitted)(X), jax.vmap(body_j)(X))  # the cached batched program
    close(funcgrad.jit(funcgrad.vmap(body))(X), jax.vmap(body_j)(X))
    close(funcgrad.grad(lambda x: fnp.sum(funcgrad.vmap(jitted)(x)))(X), want)


def test_custom_rules_keep_their_rules_under_vmap():
    @funcgrad.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (fnp.clip(g, -0.1, 0.1),))

    @jax.custom_vjp
    def clip_gradient_j(x):
        return x

    clip_gradient_j.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -0.1, 0.1),))
    f = lambda x: fnp.sum(funcgrad.vmap(clip_gradient)(x) ** 2)  # noqa: E731
    fj = lambda x: jnp.sum(jax.vmap(clip_gradient_j)(x) ** 2)  # noqa: E731
    close(funcgrad.grad(f)(X), jax.grad(fj)(X))
    close(funcgrad.vmap(funcgrad.grad(lambda x: fnp.sum(clip_gradient(x) ** 2)))(X),
          jax.vmap(jax.grad(lambda x: jnp.sum(clip_gradient_j(x) ** 2)))(X))

    @funcgrad.custom_jvp
    def f_jvp(x):
        return fnp.sin(x)

    f_jvp.defjvp(lambda p, t: (f_jvp(p[0]), 2.0 * t[0]))

    @jax.custom_jvp
    def f_jvp_j(x):
        return jnp.sin(x)

    f_jvp_j.defjvp(lambda p, t: (f_jvp_j(p[0]), 2.0 * t[0]))
    close(funcgrad.grad(lambda x: fnp.sum(funcgrad.vmap(f_jvp)(x)))(X),
          jax.grad(lambda x: jnp.sum(jax.vmap(f_jvp_j)(x)))(X))


# -- control flow -----------------------------------------------------------------------------

def test_cond_with_a_batched_predicate_selects():
    f = lambda x: lax.cond(fnp.sum(x) > 0, fnp.sin, lambda v: v * 3, x)  # noqa: E731
    fj = lambda x: jax.lax.cond(jnp.sum(x) > 0, jnp.sin, lambda v: v * 3, x)  # noqa: E731
    both(f, fj, X)
    close(funcgrad.jit(funcgrad.vmap(f))(X), jax.vmap(fj)(X))
    close(funcgrad.grad(lambda x: fnp.sum(funcgrad.vmap(f)(x)))(X),
          jax.grad(lambda x: jnp.sum(jax.vmap(fj)(x)))(X))


def test_switch_with_batched_and_shared_indices():
    branches = [lambda v: v, lambda v: v * 2, fnp.cos]
    branches_j = [lambda v: v, lambda v: v * 2, jnp.cos]
    idx = np.array([0, 2, 7, -3])
    both(lambda i, x: lax.switch(i, branches, x), lambda i, x: jax.lax.switch(i, branches_j, x),
         idx, X)
    both(lambda i, x: lax.switch(i, branches, x), lambda i, x: jax.lax.switch(i, branches_j, x),
         1, X, in_axes=(None, 0))
    close(funcgrad.jit(funcgrad.vmap(lambda i, x: lax.switch(i, branches, x),
                                     in_axes=(None, 0)))(1, X),
          jax.vmap(lambda i, x: jax.lax.switch(i, branches_j, x), in_axes=(None, 0))(1, X))


def test_while_loop_with_a_batched_condition_runs_every_example_to_its_end():
    def f(x):
        return lax.while_loop(lambda c: c[1] < 2.0 + c[0], lambda c: (c[0] + 0.5, c[1] * 1.5),
                              (fnp.sum(x), fnp.abs(x[0]) + 0.1))

    def fj(x):
        return jax.lax.while_loop(lambda c: c[1] < 2.0 + c[0],
                                  lambda c: (c[0] + 0.5, c[1] * 1.5),
                                  (jnp.sum(x), jnp.abs(x[0]) + 0.1))
    both(f, fj, X)


def _count_up(x):
    return lax.while_loop(lambda c: c[0] < 10 * c[1][0] + 5, lambda c: (c[0] + 1, c[1] * 1.1),
                          (0, x))


def _count_up_j(x):
    return jax.lax.while_loop(lambda c: c[0] < 10 * c[1][0] + 5,
                              lambda c: (c[0] + 1, c[1] * 1.1), (0, x))


def test_staged_while_loop_with_a_batched_condition():
    close(funcgrad.jit(funcgrad.vmap(_count_up))(X), jax.vmap(_count_up_j)(X))
    close(funcgrad.vmap(funcgrad.jit(_count_up))(X), jax.vmap(_count_up_j)(X))


def test_staged_while_loop_from_reduced_carries():
    def f(x):
        return lax.while_loop(lambda c: c[1] < 2.0 + c[0], lambda c: (c[0] + 0.5, c[1] * 1.5),
                              (fnp.sum(x), fnp.abs(x[0]) + 0.1))
    close(funcgrad.jit(funcgrad.vmap(f))(X), funcgrad.vmap(f)(X))


def test_scan_and_fori_loop_under_vmap():
    s = lambda x: lax.scan(lambda c, v: (c * v + 1, c), 1.0, x)  # noqa: E731
    sj = lambda x: jax.lax.scan(lambda c, v: (c * v + 1, c), 1.0, x)  # noqa: E731
    both(s, sj, X)
    close(funcgrad.jit(funcgrad.vmap(s))(X), jax.vmap(sj)(X))
    close(funcgrad.vmap(funcgrad.grad(lambda x: s(x)[0]))(X),
          jax.vmap(jax.grad(lambda x: sj(x)[0]))(X))
    both(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x + i, x),
         lambda x: jax.lax.fori_loop(0, 3, lambda i, c: c * x + i, x), X)


# -- collectives over vmap's axis_name ---------------------------------------------------------

def test_collectives_over_the_vmapped_axis():
    def f(x):
        return (dist.psum(x, "i"), dist.pmean(x, "i"), dist.pmax(x, "i"), dist.pmin(x, "i"),
                dist.all_gather(x, "i"), dist.all_gather(x, "i", axis=0, tiled=True),
                dist.axis_index("i"), dist.psum(1.0, "i"), dist.pbroadcast(x, "i", 2))

    def fj(x):
        return (jax.lax.psum(x, "i"), jax.lax.pmean(x, "i"), jax.lax.pmax(x, "i"),
                jax.lax.pmin(x, "i"), jax.lax.all_gather(x, "i"),
                jax.lax.all_gather(x, "i", axis=0, tiled=True), jax.lax.axis_index("i"),
                jax.lax.psum(1.0, "i"), jax.lax.all_gather(x, "i")[2])
    close(funcgrad.vmap(f, axis_name="i")(X), jax.vmap(fj, axis_name="i")(X))


def test_collectives_are_differentiable_under_vmap():
    f = lambda x: fnp.sum(dist.psum(x, "i") ** 2 + dist.pmean(x * x, "i"))  # noqa: E731
    fj = lambda x: jnp.sum(jax.lax.psum(x, "i") ** 2 + jax.lax.pmean(x * x, "i"))  # noqa: E731
    close(funcgrad.vmap(funcgrad.grad(f), axis_name="i")(X),
          jax.vmap(jax.grad(fj), axis_name="i")(X))
    g = lambda x: fnp.sum(funcgrad.vmap(lambda v: v * dist.psum(v, "i") - dist.pmean(v, "i"),  # noqa
                                        axis_name="i")(x))
    gj = lambda x: jnp.sum(jax.vmap(lambda v: v * jax.lax.psum(v, "i") - jax.lax.pmean(v, "i"),  # noqa
                                    axis_name="i")(x))
    close(funcgrad.grad(g)(X), jax.grad(gj)(X))


def test_psum_scatter_and_ppermute_over_the_vmapped_axis():
    x = RNG.uniform(-1, 1, (4, 8))
    close(funcgrad.vmap(lambda v: dist.psum_scatter(v, "i", tiled=True), axis_name="i")(x),
          jax.vmap(lambda v: jax.lax.psum_scatter(v, "i", tiled=True), axis_name="i")(x))
    perm = [(0, 1), (1, 2), (2, 3), (3, 0)]
    close(funcgrad.vmap(lambda v: dist.ppermute(v, "i", perm), axis_name="i")(x),
          jax.vmap(lambda v: jax.lax.ppermute(v, "i", perm), axis_name="i")(x))


def test_nested_axis_names():
    def f(x):
        return dist.psum(x, "outer") - dist.psum(x, "inner") * dist.axis_index("outer")

    def fj(x):
        return jax.lax.psum(x, "outer") - jax.lax.psum(x, "inner") * jax.lax.axis_index("outer")
    close(funcgrad.vmap(funcgrad.vmap(f, axis_name="inner"), axis_name="outer")(X),
          jax.vmap(jax.vmap(fj, axis_name="inner"), axis_name="outer")(X))


def test_unbound_axis_name_outside_vmap_is_an_error():
    with pytest.raises(NameError, match="unbound axis name"):
        funcgrad.vmap(lambda v: dist.psum(v, "j"), axis_name="i")(X)


def test_per_example_gradients_example():
    """examples/per_example_gradients.py: the batched gradients are the loop's, and DP-SGD
    on them learns."""
    import pathlib
    import runpy
    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "per_example_gradients.py"
    result = runpy.run_path(str(path))["main"](verbose=False)
    assert result["max_gap"] < 1e-12
    assert result["accuracy"] > 0.9


def test_vmap_benchmark_smoke():
    """benchmarks/vmap.py at tiny sizes: every implementation agrees (checked inside) and
    the table has its rows and targets (nothing here asserts on time)."""
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from benchmarks import vmap as bench
    from benchmarks.harness import Config
    report = bench.run(Config.make(True))
    impls = {r.impl for r in report.rows}
    assert {"funcgrad vmap(grad)", "funcgrad grad of the mean", "funcgrad jacrev",
            "funcgrad jacrev, basis loop", "funcgrad jacfwd", "funcgrad one vjp"} <= impls
    assert len(report.targets) == 4


def test_fori_loop_with_per_example_trip_counts():
    f = lambda n, x: lax.fori_loop(0, n, lambda i, c: c * 1.5 + i, x)  # noqa: E731
    fj = lambda n, x: jax.lax.fori_loop(0, n, lambda i, c: c * 1.5 + i, x)  # noqa: E731
    both(f, fj, np.array([0, 3, 1, 5]), X)


@pytest.mark.parametrize("draw", ["normal", "uniform", "randint", "split", "gamma",
                                  "bernoulli", "permutation", "categorical"])
def test_random_over_a_batch_of_keys_gives_jax_numbers(draw):
    from funcgrad import random
    calls = {"normal": lambda r, k: r.normal(k, (3,)),
             "uniform": lambda r, k: r.uniform(k, (2, 2)),
             "randint": lambda r, k: r.randint(k, (3,), 0, 10),
             "split": lambda r, k: r.split(k),
             "gamma": lambda r, k: r.gamma(k, 2.0, (3,)),
             "bernoulli": lambda r, k: r.bernoulli(k, 0.3, (5,)),
             "permutation": lambda r, k: r.permutation(k, 5),
             "categorical": lambda r, k: r.categorical(k, np.zeros(4))}
    keys = random.split(random.PRNGKey(0), 4)
    jkeys = jax.random.split(jax.random.PRNGKey(0), 4)
    ours = funcgrad.vmap(lambda k: calls[draw](random, k))(keys)
    theirs = jax.vmap(lambda k: calls[draw](jax.random, k))(jkeys)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
