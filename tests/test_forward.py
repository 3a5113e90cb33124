"""Forward mode, Jacobians, Hessians and custom rules (JAX semantics)."""
import collections
import functools

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import custom_jvp, custom_vjp, grad, hessian, jacfwd, jacrev, jvp, linearize
from funcgrad.test_util import check_grads


def f_vec(x):
    return fnp.sin(x) * fnp.sum(x ** 2)


def test_jvp_matches_finite_differences_and_checks_arguments():
    x = fnp.asarray([0.1, 0.5, -0.3])
    check_grads(f_vec, (x,), order=2, modes=("fwd", "rev"))
    with pytest.raises(TypeError, match="tuples or lists"):
        jvp(f_vec, x, x)
    with pytest.raises(TypeError, match="same tree structure"):
        jvp(lambda a, b: a * b, (x, x), (x,))
    with pytest.raises(ValueError, match=r"primal shape \(3,\) and tangent shape as \(2,\)"):
        jvp(f_vec, (x,), (fnp.ones(2),))
    with pytest.raises(TypeError, match="equal types"):
        jvp(f_vec, (x,), (fnp.ones(3, np.float32),))
    with pytest.raises(TypeError, match="float0"):
        jvp(lambda n: n * 2, (fnp.asarray(3),), (fnp.asarray(1.0),))


def test_jvp_has_aux_and_pytrees():
    p = {"a": fnp.asarray(2.0), "b": [fnp.asarray(3.0)]}
    t = {"a": fnp.asarray(1.0), "b": [fnp.asarray(0.0)]}
    out, t_out, aux = jvp(lambda p: (p["a"] * p["b"][0], p["a"]), (p,), (t,), has_aux=True)
    assert float(out) == 6.0 and float(t_out) == 3.0 and float(aux) == 2.0


def test_linearize_replays_only_tangent_operations():
    x = fnp.asarray([0.2, 0.4])
    out, f_jvp = linearize(f_vec, x)
    v = fnp.asarray([1.0, -2.0])
    np.testing.assert_allclose(np.asarray(f_jvp(v)), np.asarray(jvp(f_vec, (x,), (v,))[1]))
    assert "sin" not in f_jvp.tape.primitives  # the primal is not recomputed


def test_jacobians_pytree_layout():
    def f(p, x):
        return {"y": p["w"] @ x, "s": fnp.sum(p["w"]) * x[0]}
    p = {"w": fnp.asarray(np.arange(6.0).reshape(2, 3))}
    x = fnp.asarray([1.0, 2.0, 3.0])
    for jac in (jacfwd, jacrev):
        J = jac(f, argnums=(0, 1))(p, x)
        assert J["y"][0]["w"].shape == (2, 2, 3) and J["y"][1].shape == (2, 3)
        assert J["s"][0]["w"].shape == (2, 3) and J["s"][1].shape == (3,)
        np.testing.assert_allclose(np.asarray(J["y"][1]), np.asarray(p["w"]))
    Jf, Jr = jacfwd(f_vec)(x), jacrev(f_vec)(x)
    np.testing.assert_allclose(np.asarray(Jf), np.asarray(Jr), rtol=1e-12)
    assert fg.jacobian is jacrev


def test_jacobian_has_aux():
    jac, aux = jacrev(lambda x: (x * 2.0, x + 1.0), has_aux=True)(fnp.ones(2))
    np.testing.assert_allclose(np.asarray(jac), 2 * np.eye(2))
    jac, aux2 = jacfwd(lambda x: (x * 2.0, x + 1.0), has_aux=True)(fnp.ones(2))
    np.testing.assert_allclose(np.asarray(aux2), [2.0, 2.0])


def test_hessian_is_symmetric_and_correct():
    def f(x):
        return fnp.sum(fnp.tanh(x) * fnp.roll(x, 1)) + fnp.prod(fnp.cos(x))
    x = fnp.asarray([0.3, -0.7, 1.1, 0.2])
    H = np.asarray(hessian(f)(x))
    np.testing.assert_allclose(H, H.T, atol=1e-12)
    H_rr = np.asarray(jacrev(jacrev(f))(x))
    np.testing.assert_allclose(H, H_rr, rtol=1e-10, atol=1e-12)


def test_hessian_of_a_function_that_calls_grad_and_mixed_orders():
    g = lambda x: fnp.sum(grad(lambda y: fnp.sum(fnp.sin(y) * y))(x))
    x = fnp.asarray([0.4, 0.9])
    H = np.asarray(hessian(g)(x))
    # g(x) = sum(cos(x) x + sin(x)); g'' = -3 sin(x) - x cos(x)... diagonal
    expected = np.diag(-3 * np.sin([0.4, 0.9]) - np.asarray([0.4, 0.9]) * np.cos([0.4, 0.9]))
    np.testing.assert_allclose(H, expected, atol=1e-12)
    # jvp of grad == grad of jvp (both are Hessian-vector products)
    f = lambda x: fnp.sum(fnp.exp(x) * fnp.sin(x[::-1]))
    v = fnp.asarray([1.0, 2.0])
    hvp_fwd = jvp(grad(f), (x,), (v,))[1]
    hvp_rev = grad(lambda x: jvp(f, (x,), (v,))[1])(x)
    np.testing.assert_allclose(np.asarray(hvp_fwd), np.asarray(hvp_rev), rtol=1e-12)
    check_grads(lambda x: grad(f)(x), (x,), order=2, modes=("fwd", "rev"))


def test_no_perturbation_confusion_in_forward_mode():
    def f(x):
        return x * jvp(lambda y: x + y, (fnp.asarray(1.0),), (fnp.asarray(1.0),))[1]
    _, t = jvp(f, (fnp.asarray(3.0),), (fnp.asarray(1.0),))
    assert float(t) == 1.0


def test_every_primitive_has_forward_mode_and_the_registry_says_how():
    sources = {p.jvp_source for n, p in fg.primitives.registry().items()
               if p.differentiable and not n.startswith("test_")}  # test_*: declared by tests
    assert "none" not in sources
    assert fg.primitives.registry()["mul"].jvp_source == "jvp rules"


# -- custom rules -------------------------------------------------------------------------

def test_custom_vjp_rule_is_used_under_grad_of_grad():
    calls = collections.Counter()

    @custom_vjp
    def f(x, y):
        return fnp.sin(x) * y

    def f_fwd(x, y):
        calls["fwd"] += 1
        return fnp.sin(x) * y, (fnp.cos(x), fnp.sin(x), y)

    def f_bwd(res, g):
        calls["bwd"] += 1
        cos_x, sin_x, y = res
        return (cos_x * g * y, sin_x * g)

    f.defvjp(f_fwd, f_bwd)
    x, y = fnp.asarray(0.3), fnp.asarray(2.0)
    assert np.isclose(float(grad(f)(x, y)), np.cos(0.3) * 2)
    assert calls == {"fwd": 1, "bwd": 1}
    assert np.isclose(float(grad(grad(f))(x, y)), -np.sin(0.3) * 2)
    assert calls == {"fwd": 2, "bwd": 2}
    check_grads(f, (x, y), order=2, modes=("rev", "fwd"))


def test_custom_vjp_nondiff_argnums_and_pytrees():
    @functools.partial(custom_vjp, nondiff_argnums=(0,))
    def scale(k, p):
        return {"out": p["a"] * k}

    scale.defvjp(lambda k, p: (scale(k, p), None), lambda k, _, g: ({"a": g["out"] * k * 10},))
    g = grad(lambda a: fnp.sum(scale(3.0, {"a": a})["out"]))(fnp.ones(2))
    np.testing.assert_allclose(np.asarray(g), [30.0, 30.0])


def test_custom_vjp_bwd_errors_are_jaxs():
    @custom_vjp
    def f(x, y):
        return x * y
    f.defvjp(lambda x, y: (x * y, None), lambda _, g: (g,))
    with pytest.raises(TypeError, match=r"tuple of length equal to the number of arguments "
                       r"to the primal function, but got bwd output structure "
                       r"PyTreeDef\(\(\*,\)\) for primal input structure"):
        grad(f)(fnp.asarray(1.0), fnp.asarray(2.0))
    f.defvjp(lambda x, y: (x * y, None), lambda _, g: (fnp.ones(3), g))
    with pytest.raises(ValueError, match=r"at output\[0\] the bwd rule produced an output of "
                       r"type float64\[3\] corresponding to an input of type float64\[\], so "
                       r"the shapes do not match"):
        grad(f)(fnp.asarray(1.0), fnp.asarray(2.0))


def test_jvp_of_custom_vjp_works_through_the_vjp_rule():
    @custom_vjp
    def f(x):
        return x ** 3
    f.defvjp(lambda x: (x ** 3, x), lambda x, g: (3 * x ** 2 * g,))
    _, t = jvp(f, (fnp.asarray(2.0),), (fnp.asarray(1.0),))
    assert float(t) == 12.0
    assert np.isclose(float(jacfwd(f)(fnp.asarray(2.0))), 12.0)


def test_custom_jvp_used_in_forward_and_reverse_and_defjvps():
    calls = []

    @custom_jvp
    def safe_log1pexp(x):
        return fnp.log1p(fnp.exp(x))

    @safe_log1pexp.defjvp
    def _(primals, tangents):
        calls.append(1)
        (x,), (t,) = primals, tangents
        return safe_log1pexp(x), t * fg.scipy.special.expit(x)

    x = fnp.asarray(1000.0)  # the naive derivative exp(x)/(1+exp(x)) is nan here
    assert float(grad(safe_log1pexp)(x)) == 1.0 and calls
    assert float(jvp(safe_log1pexp, (x,), (fnp.asarray(2.0),))[1]) == 2.0
    check_grads(safe_log1pexp, (fnp.asarray(0.3),), order=2, modes=("fwd", "rev"))

    @custom_jvp
    def mul(x, y):
        return x * y
    mul.defjvps(lambda t, out, x, y: t * y * 10, lambda t, out, x, y: t * x)
    assert float(grad(mul)(fnp.asarray(2.0), fnp.asarray(3.0))) == 30.0
    with pytest.raises(AttributeError, match="No JVP defined"):
        custom_jvp(lambda x: x)(fnp.asarray(1.0))


def test_custom_vjp_bwd_returning_a_non_array_names_its_type():
    @custom_vjp
    def f(x):
        return x * 2
    f.defvjp(lambda x: (f(x), None), lambda r, g: ("bad",))
    with pytest.raises(TypeError, match="'bad' of type <class 'str'> is not a valid JAX type"):
        grad(lambda x: fnp.sum(f(x)))(fnp.ones(2))
