"""JAX's "JAX Internals: primitives" document (docs/jax-primitives.md), its multiply_add
primitive defined as the document defines it, with ``jax`` replaced by funcgrad, under
every transform; and the same definitions run by JAX itself where it is installed."""
import numpy as np
import pytest

import funcgrad as fg
from funcgrad import core as fg_core
from funcgrad import lax
from funcgrad.extend import core
from funcgrad.interpreters import ad, batching, mlir


def define(name="multiply_add", *, impl=True, abstract=True, lowering=True, jvp=True,
           transpose=True, batch=True, api=None):
    """The document's multiply_add, its rules defined as far as asked (``api``: a module
    with jax's names for the Primitive and the rule tables: funcgrad's by default)."""
    api = api or _FUNCGRAD
    p = api["Primitive"](name)

    def prim(x, y, z):
        return p.bind(x, y, z)
    if impl:
        p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
    if abstract:
        def abstract_eval(xs, ys, zs):
            assert xs.shape == ys.shape == zs.shape
            return api["ShapedArray"](xs.shape, xs.dtype)
        p.def_abstract_eval(abstract_eval)
    if lowering:
        api["register_lowering"](p, api["lowering"], platform="cpu")
    ad_ = api["ad"]
    lax_ = api["lax"]
    if jvp:
        def value_and_jvp(arg_values, arg_tangents):
            x, y, z = arg_values
            xt, yt, zt = arg_tangents
            primal_out = prim(x, y, z)

            def make_zero(tan):
                return lax_.full_like(x, 0) if type(tan) is ad_.Zero else tan
            return primal_out, prim(make_zero(xt), y, prim(x, make_zero(yt), make_zero(zt)))
        ad_.primitive_jvps[p] = value_and_jvp
    if transpose:
        def transpose_rule(ct, x, y, z):
            if not ad_.is_undefined_primal(x):
                assert ad_.is_undefined_primal(y)
                ct_y = (ad_.Zero(y.aval) if type(ct) is ad_.Zero
                        else prim(x, ct, lax_.full_like(x, 0)))
                return None, ct_y, ct
            assert ad_.is_undefined_primal(x)
            ct_x = (ad_.Zero(x.aval) if type(ct) is ad_.Zero
                    else prim(ct, y, lax_.full_like(y, 0)))
            return ct_x, None, ct
        ad_.primitive_transposes[p] = transpose_rule
    if batch:
        def batch_rule(vector_arg_values, batch_axes):
            assert batch_axes[0] == batch_axes[1] == batch_axes[2]
            return prim(*vector_arg_values), batch_axes[0]
        api["batching"].primitive_batchers[p] = batch_rule
    return p, prim


_FUNCGRAD = {"Primitive": core.Primitive, "ShapedArray": fg_core.ShapedArray, "ad": ad,
             "batching": batching, "lax": lax, "register_lowering": mlir.register_lowering,
             "lowering": lambda ctx, x, y, z: [np.add(np.multiply(x, y), z)]}


def _programs(api, prim):
    """Every transform and composition of the document's square_add, on ``api``."""
    def square_add(a, b):
        return prim(a, a, b)
    x, y = np.array([2., 3.]), np.array([10., 20.])
    return {
        "eval": lambda: square_add(2., 10.),
        "jit": lambda: api.jit(lambda a, b: square_add(a, b))(2., 10.),
        "jit static": lambda: api.jit(square_add, static_argnums=1)(2., 10.),
        "jvp": lambda: api.jvp(square_add, (2., 10.), (1., 1.)),
        "jit of jvp": lambda: api.jit(lambda p, t: api.jvp(square_add, p, t))(
            (2., 10.), (1., 1.)),
        "grad": lambda: api.grad(square_add)(2., 10.),
        "grad both": lambda: api.grad(square_add, argnums=(0, 1))(2., 10.),
        "vjp": lambda: api.vjp(square_add, 2., 10.)[1](1.),
        "jit of grad": lambda: api.jit(api.grad(square_add))(2., 10.),
        "grad of jit": lambda: api.grad(api.jit(square_add))(2., 10.),
        "grad of grad": lambda: api.grad(api.grad(square_add))(2., 10.),
        "jvp of grad": lambda: api.jvp(api.grad(square_add), (2., 10.), (1., 0.)),
        "vmap": lambda: api.vmap(square_add, in_axes=0, out_axes=0)(x, y),
        "jit of vmap": lambda: api.jit(api.vmap(square_add))(x, y),
        "grad of vmap": lambda: api.grad(
            lambda a, b: api.numpy.sum(api.vmap(square_add)(a, b)), argnums=(0, 1))(x, y),
        "checkpoint grad": lambda: api.grad(api.checkpoint(square_add))(2., 10.),
        "jit grad checkpoint": lambda: api.jit(api.grad(api.checkpoint(square_add)))(2., 10.),
        "value_and_grad": lambda: api.value_and_grad(lambda a: square_add(a, a) ** 2)(3.),
    }


PROGRAMS = list(_programs(fg, None))
# JAX's run of the document's rules stops at grad of grad (its transpose rule asserts that
# one of x, y is a constant, which the second derivative's transposition breaks); funcgrad
# transposes only the tangent map, whose uses of multiply_add have a constant x or y.
# (The document's batching rule needs every argument batched on one axis: so do both.)
JAX_PROGRAMS = [p for p in PROGRAMS if p != "grad of grad"]
WANT = {"eval": 14., "jit": 14., "jit static": 14., "jvp": (14., 5.), "jit of jvp": (14., 5.),
        "grad": 4., "grad both": (4., 1.), "vjp": (4., 1.), "jit of grad": 4.,
        "grad of jit": 4., "grad of grad": 2., "jvp of grad": (4., 2.),
        "vmap": [14., 29.], "jit of vmap": [14., 29.], "grad of vmap": ([4., 6.], [1., 1.]), "checkpoint grad": 4., "jit grad checkpoint": 4.,
        "value_and_grad": (144., 168.)}


def _close(got, want):
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
    else:
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


@pytest.mark.parametrize("program", PROGRAMS)
def test_multiply_add_under_every_transform(program):
    _, prim = define()
    _close(_programs(fg, prim)[program](), WANT[program])


@pytest.mark.parametrize("program", JAX_PROGRAMS)
def test_multiply_add_against_jax(program):
    """The same definitions on JAX itself give the same numbers (the lowering there is
    the document's, in XLA's ops)."""
    jax = pytest.importorskip("jax")
    from jax._src.lib.mlir.dialects import hlo
    from jax.extend import core as jcore
    from jax.interpreters import ad as jad, batching as jbatching, mlir as jmlir
    jax.config.update("jax_enable_x64", True)
    api = {"Primitive": jcore.Primitive, "ShapedArray": jax.core.ShapedArray, "ad": jad,
           "batching": jbatching, "lax": jax.lax, "register_lowering": jmlir.register_lowering,
           "lowering": lambda ctx, xc, yc, zc: [hlo.AddOp(hlo.MulOp(xc, yc), zc).result]}
    _, j_prim = define("multiply_add_jax_test", api=api)
    _, prim = define()
    want = _programs(jax, j_prim)[program]()
    got = _programs(fg, prim)[program]()
    _close(got, jax.tree_util.tree_map(np.asarray, want) if isinstance(want, tuple)
           else np.asarray(want))


def test_make_jaxpr_shows_the_primitive():
    p, prim = define()
    jaxpr = fg.make_jaxpr(lambda a, b: prim(a, a, b))(2., 10.)
    assert [e.primitive for e in jaxpr.eqns] == [p]
    assert "multiply_add" in str(jaxpr)
    # the JVP: the primal and the document's two uses in the tangent
    jvp_jaxpr = fg.make_jaxpr(lambda a, t: fg.jvp(lambda x: prim(x, x, 1.), (a,), (t,)))(
        2., 1.)
    assert [e.primitive for e in jvp_jaxpr.eqns].count(p) == 3
    # the transposed uses appear in the gradient's program
    grad_jaxpr = fg.make_jaxpr(fg.grad(lambda a: prim(a, a, 1.)))(2.)
    assert p in [e.primitive for e in grad_jaxpr.eqns]


def test_abstract_eval_gives_shapes():
    _, prim = define()
    out = fg.eval_shape(prim, fg.ShapeDtypeStruct((3,), np.float32),
                        fg.ShapeDtypeStruct((3,), np.float32),
                        fg.ShapeDtypeStruct((3,), np.float32))
    assert out.shape == (3,) and out.dtype == np.float32
    assert repr(fg_core.ShapedArray((2, 2), np.float32)) == "ShapedArray(float32[2,2])"


def test_one_argument_core_primitive_is_the_jax_kind():
    """``funcgrad.core.Primitive(name)`` (older JAX code's ``jax.core.Primitive``) and
    ``funcgrad.extend.core.Primitive`` are one class; one argument makes the JAX kind, a
    registry primitive all the same."""
    p = fg_core.Primitive("one_arg_kind")
    assert isinstance(p, fg_core.Primitive) and core.Primitive is fg_core.Primitive
    assert fg_core.registry()["one_arg_kind"] is p
    with pytest.raises(ValueError, match="of its own"):
        core.Primitive("add")


@pytest.mark.parametrize("missing, run, message", [
    ("impl", lambda prim: prim(2., 2., 10.), "Evaluation rule for 'multiply_add' not"),
    ("abstract", lambda prim: fg.jit(prim)(2., 2., 10.),
     "Abstract evaluation for 'multiply_add' not implemented"),
    ("lowering", lambda prim: fg.jit(prim)(2., 2., 10.),
     "MLIR translation rule for primitive 'multiply_add' not found"),
    ("jvp", lambda prim: fg.jvp(prim, (2., 2., 10.), (1., 1., 1.)),
     "Differentiation rule for 'multiply_add' not implemented"),
    ("jvp", lambda prim: fg.grad(prim)(2., 2., 10.),
     "Differentiation rule for 'multiply_add' not implemented"),
    ("transpose", lambda prim: fg.grad(prim)(2., 2., 10.),
     r"Transpose rule \(for reverse-mode differentiation\) for 'multiply_add' not"),
    ("batch", lambda prim: fg.vmap(prim)(np.ones(2), np.ones(2), np.ones(2)),
     "Batching rule for 'multiply_add' not implemented"),
])
def test_missing_rules_raise_as_jax(missing, run, message):
    """Each rule left out raises NotImplementedError with JAX's message, as the
    document's ``expectNotImplementedError`` cells show."""
    _, prim = define(**{missing: False})
    with pytest.raises(NotImplementedError, match=message):
        run(prim)


def test_an_xla_lowering_is_refused_naming_the_fix():
    p, prim = define(lowering=False)

    def multiply_add_lowering(ctx, xc, yc, zc):
        return [hlo.AddOp(hlo.MulOp(xc, yc), zc).result]  # noqa: F821  (XLA's, absent)
    mlir.register_lowering(p, multiply_add_lowering, platform="cpu")
    with pytest.raises(NotImplementedError, match="builds XLA operations.*lower_fun"):
        fg.jit(prim)(2., 2., 10.)
    mlir.register_lowering(p, mlir.lower_fun(lambda x, y, z: x * y + z, False))
    assert fg.jit(prim)(np.ones(3), np.ones(3), np.ones(3)).tolist() == [2., 2., 2.]


def test_defjvp_deflinear_and_multiple_results():
    """The other ways to declare rules: defjvp (per input), defjvp2 (with the output),
    deflinear (a linear primitive transposed), and a primitive with two results."""
    sin_p = core.Primitive("my_sin")
    sin_p.def_impl(np.sin)
    ad.defjvp(sin_p, lambda t, x: t * fg.numpy.cos(x))
    np.testing.assert_allclose(fg.grad(fg.grad(sin_p.bind))(0.3), -np.sin(0.3))
    exp_p = core.Primitive("my_exp")
    exp_p.def_impl(np.exp)
    ad.defjvp2(exp_p, lambda t, out, x: t * out)
    np.testing.assert_allclose(fg.grad(exp_p.bind)(0.5), np.exp(0.5))
    double_p = core.Primitive("my_double")
    double_p.def_impl(lambda x: 2 * x)
    ad.deflinear(double_p, lambda ct: [2 * ct])
    np.testing.assert_allclose(fg.grad(lambda x: double_p.bind(x) ** 2)(3.), 24.)
    split_p = core.Primitive("my_sincos")
    split_p.multiple_results = True
    split_p.def_impl(lambda x: (np.sin(x), np.cos(x)))
    ad.defjvp(split_p, lambda t, x: (t * fg.numpy.cos(x), -t * fg.numpy.sin(x)))
    f = lambda x: sum(split_p.bind(x))  # noqa: E731
    np.testing.assert_allclose(fg.grad(f)(0.4), np.cos(0.4) - np.sin(0.4))
    assert batching.not_mapped is None and exp_p in ad.primitive_jvps
