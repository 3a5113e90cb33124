"""funcgrad.autograph: Python if/for/while on traced values staged as lax control flow,
against the plain-Python results and JAX's own lax versions."""
import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.core import ConcretizationTypeError

jax = pytest.importorskip("jax")
jnp = jax.numpy


def branchy(x, n):
    y = x * 2.0
    if x.sum() > 0:
        y = y + 1.0
        z = y * x
    elif x.sum() > -3:
        z = y - 1.0
    else:
        z = -y
    for i in range(n):
        z = z * 0.5 + fnp.sin(x) * i
    return z


def sign_scale(x):
    if x > 1.0:
        return x * x
    return -x * 3.0


def collatz(x):
    steps = 0.0
    while x > 1.0:
        x = x / 2.0
        steps = steps + 1.0
    return steps + x


def jax_branchy(x, n):
    y = x * 2.0
    z = jax.lax.cond(x.sum() > 0, lambda: (y + 1.0) * x, lambda: jax.lax.cond(
        x.sum() > -3, lambda: y - 1.0, lambda: -y))
    return jax.lax.fori_loop(0, n, lambda i, z: z * 0.5 + jnp.sin(x) * i, z)


@pytest.mark.parametrize("v", [[0.5, 1.0], [-1.0, -0.5], [-4.0, -3.0]])
def test_if_and_for_match_python_and_jax(v):
    x = np.array(v, np.float32)
    ag = funcgrad.autograph(branchy)
    expect = branchy(fnp.asarray(x), 3)
    np.testing.assert_allclose(ag(fnp.asarray(x), 3), expect, rtol=1e-6)
    with pytest.raises(ConcretizationTypeError):
        funcgrad.jit(branchy)(fnp.asarray(x), 3)
    jitted = funcgrad.jit(ag)
    np.testing.assert_allclose(jitted(fnp.asarray(x), 3), expect, rtol=1e-6)
    traced_n = funcgrad.jit(lambda x, n: ag(x, n))
    np.testing.assert_allclose(traced_n(fnp.asarray(x), fnp.asarray(3)), expect, rtol=1e-6)
    g = funcgrad.grad(lambda x: funcgrad.jit(ag)(x, 3).sum())(fnp.asarray(x))
    rg = jax.grad(lambda x: jax.jit(jax_branchy, static_argnums=1)(x, 3).sum())(jnp.asarray(x))
    np.testing.assert_allclose(g, rg, rtol=1e-5)


@pytest.mark.parametrize("v", [0.5, 3.0])
def test_if_returning_in_both_branches(v):
    ag = funcgrad.jit(funcgrad.autograph(sign_scale))
    np.testing.assert_allclose(ag(fnp.asarray(v)), sign_scale(v), rtol=1e-6)
    g = funcgrad.grad(ag)(fnp.asarray(v))
    rg = jax.grad(lambda x: jax.lax.cond(x > 1.0, lambda: x * x, lambda: -x * 3.0))(v)
    np.testing.assert_allclose(g, rg, rtol=1e-6)


def test_while_on_a_traced_condition_and_reverse_mode_error():
    ag = funcgrad.autograph(collatz)
    for v in (1.5, 40.0):
        np.testing.assert_allclose(funcgrad.jit(ag)(fnp.asarray(v)), collatz(v), rtol=1e-6)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                       "lax.while_loop"):
        funcgrad.grad(funcgrad.jit(ag))(fnp.asarray(5.0))
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                       "lax.while_loop"):
        jax.grad(jax.jit(lambda x: jax.lax.while_loop(lambda s: s[0] > 1.0, lambda s: (
            s[0] / 2.0, s[1] + 1.0), (x, 0.0))[0]))(5.0)


def early_break(x):
    for i in range(3):
        if x > 2.0:
            break
        x = x + 1.0
    return x


def one_sided(x):
    if x > 0:
        y = x
    return y


def test_unsupported_constructs_name_the_line():
    ag = funcgrad.autograph(early_break)
    assert ag(0.5) == early_break(0.5)
    line = early_break.__code__.co_firstlineno + 2
    with pytest.raises(ValueError, match=f"line {line}: an if containing return, "
                       "break or continue cannot be staged"):
        funcgrad.jit(ag)(fnp.asarray(0.5))
    line = one_sided.__code__.co_firstlineno + 1
    with pytest.raises(ValueError, match=f"line {line}: 'y' is not assigned in the false "
                       "branch"):
        funcgrad.jit(funcgrad.autograph(one_sided))(fnp.asarray(0.5))
