"""JAX's names where funcgrad's differed, compared with JAX itself: checkpoint policies (which
values each keeps), block_until_ready / device_get, lax.stop_gradient, and how often a
custom_jvp function and its rule run under each transform; forward mode of custom_vjp
functions called with Python scalars."""
import contextlib
import io
import os
import re

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as flax
import funcgrad.numpy as fnp
from funcgrad.primitives.linalg import addmm, einsum, matmul
from funcgrad.transforms.checkpoint import Aval

os.environ.setdefault("JAX_ENABLE_X64", "1")  # before jax is imported: float64 as numpy
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax.ad_checkpoint import checkpoint_name as j_name, print_saved_residuals  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _fast_compiles():
    """The programs here are tiny: optimising each compiled primitive costs more than it
    saves (and no test here compares bits)."""
    jax.config.update("jax_disable_most_optimizations", True)
    yield
    jax.config.update("jax_disable_most_optimizations", False)


PRODUCTS = ("matmul", "matmul_tn", "addmm", "einsum", "conv_general_dilated")


def _jax_saved(fun, *args, policy):
    """JAX's saved residuals of ``checkpoint(fun, policy)``: (shape, description) pairs."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_saved_residuals(jax.checkpoint(fun, policy=policy), *args)
    found = []
    for line in out.getvalue().splitlines():
        shape = re.match(r"\w+(?:<\w+>)?\[([\d,]*)\]", line).group(1)  # f32<host>[4]: offloaded
        found.append((tuple(int(n) for n in shape.split(",") if n), line))
    return found


def _ours_saved(fun, *args, policy):
    return fg.saved_residuals(fg.checkpoint(fun, policy=policy), *args)


# one product each, followed by sin (whose VJP reads the product): the product is kept iff
# the policy saves it
PRODUCT_CASES = [
    ("matmul", [(3, 4), (4, 5)]), ("matmul", [(2, 3, 4), (2, 4, 5)]),
    ("matmul", [(2, 3, 4), (4, 5)]), ("matmul", [(3, 4), (2, 4, 5)]),
    ("matmul", [(1, 3, 4), (2, 4, 5)]), ("matmul", [(1, 3, 4), (1, 4, 5)]),
    ("matmul", [(2, 1, 3, 4), (2, 4, 5)]), ("matmul", [(2, 3, 3, 4), (3, 4, 5)]),
    ("matmul", [(4,), (2, 4, 5)]), ("matmul", [(2, 3, 4), (4,)]),
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,jk->bik", [(2, 3, 4), (4, 5)]), ("i,i->i", [(3,), (3,)]), ("i,j->ij", [(3,), (4,)]),
    ("bi,bi->b", [(2, 3), (2, 3)]), ("bi,bi->b", [(1, 3), (1, 3)]),
    ("bij,bjk->bik", [(1, 3, 4), (2, 4, 5)]), ("bi,bi->", [(2, 3), (2, 3)]),
    ("ii->i", [(3, 3)]), ("ij->ji", [(3, 4)]), ("conv", [(1, 2, 5, 5), (3, 2, 3, 3)]),
]


def _product_programs(kind):
    def ours(*xs):
        if kind == "matmul":
            y = fnp.matmul(*xs)
        elif kind == "conv":
            y = flax.conv_general_dilated(*xs, (1, 1), "SAME")
        else:
            y = fnp.einsum(kind, *xs)
        return fnp.sum(fnp.sin(y))

    def theirs(*xs):
        if kind == "matmul":
            y = jnp.matmul(*xs)
        elif kind == "conv":
            y = jax.lax.conv_general_dilated(*xs, (1, 1), "SAME")
        else:
            y = jnp.einsum(kind, *xs)
        return jnp.sum(jnp.sin(y))
    return ours, theirs


@pytest.mark.parametrize("policy", ["dots_saveable", "dots_with_no_batch_dims_saveable"])
@pytest.mark.parametrize("kind,shapes", PRODUCT_CASES)
def test_dot_policies_keep_the_products_jax_keeps(kind, shapes, policy):
    rng = np.random.RandomState(0)
    args = [rng.randn(*s) for s in shapes]
    ours, theirs = _product_programs(kind)
    j_kept = [d for _, d in _jax_saved(theirs, *args,
                                       policy=getattr(jax.checkpoint_policies, policy))
              if "output of dot_general" in d or "output of conv_general_dilated" in d]
    kept = [r for r in _ours_saved(ours, *[fnp.asarray(a) for a in args],
                                   policy=getattr(fg.checkpoint_policies, policy))
            if r.primitive in PRODUCTS]
    assert len(kept) == len(j_kept), (kind, shapes, kept, j_kept)
    if policy == "dots_saveable":
        return  # the gradients: once per case
    g = fg.grad(fg.checkpoint(ours, policy=getattr(fg.checkpoint_policies, policy)),
                argnums=tuple(range(len(args))))(*[fnp.asarray(a) for a in args])
    j_g = jax.grad(theirs, argnums=tuple(range(len(args))))(*args)
    for a, b in zip(g, j_g):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)


def test_policies_have_jaxs_names_aliases_and_call_signature():
    ours, theirs = fg.checkpoint_policies, jax.checkpoint_policies
    j_names = {n for n in dir(theirs) if not n.startswith("_")}
    assert j_names <= {n for n in dir(ours) if not n.startswith("_")}
    assert ours.checkpoint_dots is ours.dots_saveable
    assert ours.checkpoint_dots_with_no_batch_dims is ours.dots_with_no_batch_dims_saveable
    # called as JAX calls a policy: (primitive, *input avals, **params)
    m = Aval((3, 4), np.dtype(float))
    b = Aval((2, 3, 4), np.dtype(float))
    assert ours.dots_with_no_batch_dims_saveable(matmul, m, Aval((4, 5), m.dtype))
    assert not ours.dots_with_no_batch_dims_saveable(matmul, b, Aval((2, 4, 5), m.dtype))
    assert ours.dots_saveable(matmul, b, Aval((2, 4, 5), m.dtype))
    assert ours.dots_with_no_batch_dims_saveable(addmm, Aval((5,), m.dtype), m,
                                                 Aval((4, 5), m.dtype))
    assert not ours.dots_saveable(einsum, m, subscripts="ij->ji")
    assert ours.everything_saveable(fg.primitives.elementwise.sin, m)
    assert not ours.nothing_saveable(matmul, m, m)
    assert repr(ours.dots_with_no_batch_dims_saveable) == "dots_with_no_batch_dims_saveable"


def _named_program(name):
    """Three named values of distinct shapes (so that a saved shape says which name)."""
    def program(x):
        a = name(np_of(x).sin(x), "a")
        b = name(np_of(x).sin(a.sum(0)), "b")
        c = name(np_of(x).sin(b.sum(0)), "c")
        return np_of(x).sum(np_of(x).sin(c))
    return program


def np_of(x):
    return fnp if isinstance(x, fg.Array) else jnp


NAME_POLICIES = [
    lambda p: p.save_only_these_names("a", "c"),
    lambda p: p.save_any_names_but_these("b"),
    lambda p: p.save_from_both_policies(p.save_only_these_names("a"),
                                        p.save_only_these_names("c")),
    lambda p: p.save_from_both_policies(p.dots_saveable, p.save_any_names_but_these("a")),
    lambda p: p.save_and_offload_only_these_names(
        names_which_can_be_saved=["a"], names_which_can_be_offloaded=["c"],
        offload_src="device", offload_dst="pinned_host"),
]


@pytest.mark.parametrize("k", range(len(NAME_POLICIES)))
def test_name_policies_keep_the_values_jax_keeps(k):
    x = np.random.RandomState(1).randn(2, 3, 4)
    j_kept = {shape for shape, d in _jax_saved(_named_program(j_name), x,
                                               policy=NAME_POLICIES[k](jax.checkpoint_policies))
              if "named" in d or "device_put" in d}
    kept = {r.shape for r in _ours_saved(_named_program(fg.checkpoint_name), fnp.asarray(x),
                                         policy=NAME_POLICIES[k](fg.checkpoint_policies))
            if r.primitive == "name"}
    assert kept == j_kept
    g = fg.grad(fg.checkpoint(_named_program(fg.checkpoint_name),
                              policy=NAME_POLICIES[k](fg.checkpoint_policies)))(fnp.asarray(x))
    np.testing.assert_allclose(np.asarray(g), jax.grad(_named_program(j_name))(x), rtol=1e-12)


def test_policy_helpers_raise_jaxs_errors():
    def message(p, call, error):
        with pytest.raises(error) as info:
            call(p)
        return str(info.value)
    overlap = lambda p: p.save_and_offload_only_these_names(  # noqa: E731
        names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"],
        offload_src="device", offload_dst="pinned_host")
    assert message(fg.checkpoint_policies, overlap, ValueError) == message(
        jax.checkpoint_policies, overlap, ValueError)
    not_bool = fg.checkpoint_policies.save_from_both_policies(
        lambda *_, **__: 1, fg.checkpoint_policies.nothing_saveable)
    with pytest.raises(ValueError, match="The return value of the policies should be a "
                                         "boolean. Got: 1 and False"):
        fg.grad(fg.checkpoint(lambda x: fnp.sum(fnp.sin(x)), policy=not_bool))(fnp.ones(2))
    with pytest.raises(TypeError, match=r"policy\(prim, \*avals, \*\*params\)"):
        fg.checkpoint(lambda x: x, policy="dots")


def test_offload_policy_saves_what_jax_would_offload():
    x, w = fnp.ones((3, 4)), fnp.ones((4, 5))
    policy = fg.checkpoint_policies.offload_dot_with_no_batch_dims("device", "pinned_host")
    assert "offload_dot_with_no_batch_dims('device', 'pinned_host')" == repr(policy)
    f = lambda x, w: fnp.sum(fnp.sin(x @ w))  # noqa: E731
    kept = [r for r in fg.saved_residuals(fg.checkpoint(f, policy=policy), x, w)
            if r.primitive == "matmul"]
    assert [r.shape for r in kept] == [(3, 5)]


def test_a_jax_style_custom_policy_decides_by_primitive_and_shape():
    def big_sins_only(prim, *avals, **params):
        return prim.name == "sin" and avals[0].shape[0] > 2

    def f(x, y):
        return fnp.sum(fnp.cos(fnp.sin(x))) + fnp.sum(fnp.cos(fnp.sin(y)))
    kept = [r for r in fg.saved_residuals(fg.checkpoint(f, policy=big_sins_only),
                                          fnp.ones(3), fnp.ones(2)) if r.primitive == "sin"]
    assert [r.shape for r in kept] == [(3,)]


# -- block_until_ready, device_get, lax.stop_gradient ---------------------------------------

def test_block_until_ready_returns_its_argument_as_jax():
    x = fnp.arange(3.0)
    assert x.block_until_ready() is x
    tree = {"a": x, "b": [1, np.ones(2)], "c": None}
    assert fg.block_until_ready(tree) is tree
    j_tree = {"a": jnp.arange(3.0), "b": [1, np.ones(2)], "c": None}
    assert jax.block_until_ready(j_tree) is j_tree
    g = fg.grad(lambda v: fnp.sum(fg.block_until_ready(v) * v.block_until_ready()))(x)
    np.testing.assert_array_equal(np.asarray(g), 2 * np.arange(3.0))


def test_device_get_gives_numpy_as_jax():
    ours = fg.device_get({"a": fnp.arange(3.0), "b": 1.0, "c": np.float32(2), "d": "s",
                          "e": [np.ones(2)], "f": None})
    theirs = jax.device_get({"a": jnp.arange(3.0), "b": 1.0, "c": np.float32(2), "d": "s",
                             "e": [np.ones(2)], "f": None})
    assert fg.tree_util.tree_structure(ours) == fg.tree_util.tree_structure(theirs)
    for a, b in zip(fg.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        assert type(a) is type(b)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.flags.writeable == b.flags.writeable
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b
    seen = []
    fg.grad(lambda v: (seen.append(fg.device_get(v)), v * 2.0)[1])(1.0)
    assert isinstance(seen[0], fg.Array)  # as in JAX, a traced value stays traced


def test_lax_stop_gradient_is_funcgrads_as_in_jax():
    assert flax.stop_gradient is fg.stop_gradient
    f = lambda x: x * flax.stop_gradient(x ** 2)  # noqa: E731
    assert float(fg.grad(f)(3.0)) == float(jax.grad(
        lambda x: x * jax.lax.stop_gradient(x ** 2))(3.0)) == 9.0


@pytest.mark.gpu
def test_block_until_ready_and_device_get_on_a_gpu():
    import cupy
    x = fg.device_put(fnp.arange(4.0), "gpu")
    y = (x * 2.0).block_until_ready()
    assert y.device == "gpu:0"
    host = fg.device_get({"y": y, "raw": cupy.arange(3.0)})
    assert type(host["y"]) is np.ndarray and type(host["raw"]) is np.ndarray
    np.testing.assert_array_equal(host["y"], 2 * np.arange(4.0))
    np.testing.assert_array_equal(host["raw"], np.arange(3.0))
    raw = cupy.ones(3)
    tree = [y, raw]
    assert fg.block_until_ready(tree) is tree


# -- how often custom rules run ---------------------------------------------------------

def _counting_custom_jvp(lib, np_lib, rule_calls_f):
    calls = {"f": 0, "rule": 0}

    @lib.custom_jvp
    def f(x):
        calls["f"] += 1
        return np_lib.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        calls["rule"] += 1
        (x,), (t,) = primals, tangents
        return (f(x) if rule_calls_f else np_lib.sin(x)), np_lib.cos(x) * t
    return f, calls


TRANSFORMS = {
    "call": lambda lib, f: f(0.5),
    "grad": lambda lib, f: lib.grad(f)(0.5),
    "vjp": lambda lib, f: lib.vjp(f, 0.5)[1](1.0),
    "jvp": lambda lib, f: lib.jvp(f, (0.5,), (1.0,)),
    "grad_of_grad": lambda lib, f: lib.grad(lib.grad(f))(0.5),
    "jacrev": lambda lib, f: lib.jacrev(f)(0.5),
    "jacfwd": lambda lib, f: lib.jacfwd(f)(0.5),
    "hessian": lambda lib, f: lib.hessian(f)(0.5),
    "linearize": lambda lib, f: lib.linearize(f, 0.5)[1](1.0),
    "grad_of_checkpoint": lambda lib, f: lib.grad(lib.checkpoint(lambda x: f(x) * 2.0))(0.5),
}


@pytest.mark.parametrize("rule_calls_f", [True, False])
@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_custom_jvp_runs_as_often_as_in_jax(transform, rule_calls_f):
    f, calls = _counting_custom_jvp(fg, fnp, rule_calls_f)
    j_f, j_calls = _counting_custom_jvp(jax, jnp, rule_calls_f)
    out = TRANSFORMS[transform](fg, f)
    j_out = TRANSFORMS[transform](jax, j_f)
    assert calls == j_calls
    for a, b in zip(fg.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(j_out)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)


def test_custom_jvp_rule_whose_primal_depends_on_the_tangent_is_refused():
    @fg.custom_jvp
    def f(x):
        return fnp.sin(x)
    f.defjvp(lambda p, t: (fnp.sin(p[0]) + 0.0 * t[0], fnp.cos(p[0]) * t[0]))
    with pytest.raises(TypeError, match="primal output that depends on the tangents"):
        fg.grad(f)(0.5)


def test_custom_jvp_with_integer_and_nondiff_arguments_under_grad():
    import functools

    @functools.partial(fg.custom_jvp, nondiff_argnums=(0,))
    def scaled(k, x, n):
        return k * x ** n

    @scaled.defjvp
    def scaled_jvp(k, primals, tangents):
        x, n = primals
        tx, _ = tangents
        return scaled(k, x, n), k * n * x ** (n - 1) * tx
    assert float(fg.grad(scaled, argnums=1)(2.0, 3.0, 2)) == 12.0
    assert float(fg.grad(fg.grad(scaled, argnums=1), argnums=1)(2.0, 3.0, 2)) == 4.0


# -- custom_vjp in forward mode with Python numbers ---------------------------------------

def _custom_vjp_product():
    @fg.custom_vjp
    def f(x, y):
        return fnp.sin(x) * y
    f.defvjp(lambda x, y: (f(x, y), (x, y)),
             lambda res, g: (g * fnp.cos(res[0]) * res[1], g * fnp.sin(res[0])))
    return f


@pytest.mark.parametrize("call", [
    lambda f: fg.jvp(f, (0.7, 2.0), (1.0, 0.0))[1],
    lambda f: fg.jvp(lambda x: f(x, 2.0), (0.7,), (1.0,))[1],
    lambda f: fg.jacfwd(lambda x: f(x, 2.0))(0.7),
    lambda f: fg.jacfwd(lambda y: f(0.7, y))(fnp.asarray(2.0)),
    lambda f: fg.jacfwd(f, argnums=(0, 1))(0.7, 2.0)[0],
    lambda f: fg.linearize(lambda x: f(x, 2), 0.7)[1](1.0),
])
def test_custom_vjp_forward_mode_with_python_scalars(call):
    """The derivative in x of sin(x) y at x=0.7, y=2 (or in y: sin(0.7)), whichever
    arguments are Python numbers."""
    got = float(call(_custom_vjp_product()))
    expected = {2 * np.cos(0.7), np.sin(0.7)}
    assert min(abs(got - e) for e in expected) < 1e-12


def test_hessian_of_custom_vjp_with_a_python_scalar_argument():
    f = _custom_vjp_product()
    h = fg.hessian(lambda x: f(x, 2.0))(fnp.asarray(0.7))
    np.testing.assert_allclose(float(h), float(jax.hessian(lambda x: jnp.sin(x) * 2.0)(0.7)),
                               rtol=1e-12)


def test_custom_rules_leave_no_reference_cycles(garbage_cycles):
    """A call of a custom function holds its tangent tape or residuals: freed by reference
    counting as soon as the gradient is done."""
    f, _ = _counting_custom_jvp(fg, fnp, rule_calls_f=True)
    g = _custom_vjp_product()
    x = fnp.asarray([0.5, 1.0])
    assert garbage_cycles(lambda: fg.grad(lambda v: fnp.sum(f(v)))(x)) == []
    x0 = fnp.asarray(0.5)  # g's bwd does not sum over broadcasting: scalars only
    assert garbage_cycles(lambda: fg.grad(lambda v: g(v, 2.0))(x0)) == []
    assert garbage_cycles(lambda: fg.jacfwd(lambda v: g(v, 2.0))(x0)) == []
