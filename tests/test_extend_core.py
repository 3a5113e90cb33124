"""Programs as objects with JAX's names (``funcgrad.extend.core``): ``eval_jaxpr``,
``jaxpr_as_fun``, ``Var``/``Literal`` in equations, primitives as ``lax.<name>_p``, and the
custom-interpreter pattern of JAX's documentation running on funcgrad's programs."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import Primitive
from funcgrad.extend import core

X = fnp.asarray([0.1, 0.2, 0.35])
UNARY = ["exp_p", "log_p", "sin_p", "cos_p", "tan_p", "tanh_p", "neg_p", "sqrt_p", "abs_p",
         "floor_p", "ceil_p", "erf_p", "logistic_p", "expm1_p", "square_p"]
BINARY = ["add_p", "mul_p", "sub_p", "div_p", "max_p", "min_p", "pow_p", "atan2_p", "eq_p",
          "ne_p", "gt_p", "lt_p", "ge_p", "le_p"]


def f(x):
    return fnp.exp(fnp.tanh(x)) * 2.0 + x


def test_a_program_is_walked_and_evaluated_with_jaxs_names():
    closed = funcgrad.make_jaxpr(f)(X)
    jaxpr = closed.jaxpr
    assert [e.primitive for e in jaxpr.eqns] == [lax.tanh_p, lax.exp_p, lax.mul_p, lax.add_p]
    assert jaxpr.invars == [core.Var(0)] and not jaxpr.constvars
    literal = jaxpr.eqns[2].invars[1]
    assert type(literal) is core.Literal and float(np.asarray(literal.val)) == 2.0
    out, = core.eval_jaxpr(jaxpr, closed.consts, X)
    np.testing.assert_allclose(np.asarray(out), np.asarray(f(X)))
    as_fun = core.jaxpr_as_fun(closed)
    np.testing.assert_allclose(np.asarray(funcgrad.grad(lambda x: as_fun(x)[0].sum())(X)),
                               np.asarray(funcgrad.grad(lambda x: f(x).sum())(X)))
    np.testing.assert_allclose(np.asarray(funcgrad.jit(as_fun)(X)[0]), np.asarray(f(X)))
    batch = fnp.stack([X, X * 2])
    np.testing.assert_allclose(np.asarray(funcgrad.vmap(as_fun)(batch)[0]),
                               np.asarray(f(batch)))


def test_the_documentations_inverse_interpreter_runs():
    """JAX's "Writing custom Jaxpr interpreters" inverse: a registry keyed by primitives,
    the equations walked backwards."""
    registry = {lax.exp_p: fnp.log, lax.tanh_p: fnp.arctanh}

    def inverse_jaxpr(jaxpr, consts, *args):
        env = {}

        def read(var):
            return var.val if type(var) is core.Literal else env[var]
        for v, a in zip(jaxpr.outvars, args):
            env[v] = a
        for eqn in jaxpr.eqns[::-1]:
            env[eqn.invars[0]] = registry[eqn.primitive](*map(read, eqn.outvars))
        return [read(v) for v in jaxpr.invars]

    def g(x):
        return fnp.exp(fnp.tanh(x))
    closed = funcgrad.make_jaxpr(g)(X)
    got, = inverse_jaxpr(closed.jaxpr, closed.literals, g(X))
    np.testing.assert_allclose(np.asarray(got), np.asarray(X))


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_every_jax_named_primitive_binds_traces_and_evaluates(name):
    prim = getattr(lax, name)
    assert isinstance(prim, Primitive)
    args = (X,) if name in UNARY else (X, X[::-1])
    closed = funcgrad.make_jaxpr(lambda *a: prim.bind(*a))(*args)
    assert closed.eqns[0].primitive is prim
    out, = core.eval_jaxpr(closed.jaxpr, [], *args)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(prim.bind(*args)))
