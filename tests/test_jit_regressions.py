"""jit on programs that once broke it: multi-output steps viewing several inputs (random
keys, while_loop carries) in the buffer-reuse pass, Python-number arguments under grad."""
import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax, random
from funcgrad.transforms.jit_trace import StagedClosureError


def _same(a, b):
    for x, y in zip(funcgrad.tree_util.tree_leaves(a), funcgrad.tree_util.tree_leaves(b)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_random_draws_under_jit_equal_eager():
    key = random.key(0)
    draws = [lambda k, mu: random.normal(k, (3,)) * 2 + mu,
             lambda k, mu: random.uniform(k, (2, 2)) + mu,
             lambda k, mu: random.split(k, 3)]
    for f in draws:
        _same(funcgrad.jit(f)(key, 1.0), f(key, 1.0))


def test_reparameterised_gradient_under_jit_with_a_python_number():
    key = random.key(0)
    f = funcgrad.grad(lambda a, k: random.gamma(k, a, (5,)).mean())
    _same(funcgrad.jit(f)(2.0, key), f(2.0, key))
    g = funcgrad.grad(lambda a: fnp.sin(a) * 3.0)
    _same(funcgrad.jit(g)(2.0), g(2.0))


def test_while_loop_carries_from_fresh_results_under_jit():
    def f(x):
        return lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] + 1.0, c[1] * 1.5),
                              (x + 1.0, fnp.abs(x) + 0.1))
    x = fnp.asarray(2.0)
    _same(funcgrad.jit(f)(x), f(x))


def test_while_loop_whose_condition_closes_over_a_traced_value():
    count_to = lambda n: lax.while_loop(lambda c: c < n, lambda c: c + 1, 0)  # noqa: E731
    assert int(funcgrad.jit(count_to)(10)) == 10
    step_by = lambda n: lax.while_loop(lambda c: c < 10, lambda c: c + n, 0)  # noqa: E731
    assert int(funcgrad.jit(step_by)(fnp.asarray(3))) == 12 == int(step_by(3))
    ns = fnp.arange(4)
    for f in (funcgrad.vmap(count_to), funcgrad.vmap(funcgrad.jit(count_to))):
        np.testing.assert_array_equal(np.asarray(f(ns)), [0, 1, 2, 3])
    # a vmap inside the jitted function: the staged loop reads its batched value as the
    # examples' own
    np.testing.assert_array_equal(np.asarray(funcgrad.jit(funcgrad.vmap(count_to))(ns)),
                                  [0, 1, 2, 3])
    assert int(funcgrad.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0))(5)) == 10


def test_poisson_draws_under_vmap_are_each_keys_own():
    keys = random.split(random.key(3), 4)
    lam = fnp.asarray(np.array([0.5, 4.0, 15.0, 60.0], np.float32))
    batched = funcgrad.vmap(lambda k: random.poisson(k, lam))(keys)
    singles = [random.poisson(keys[i], lam) for i in range(4)]
    np.testing.assert_array_equal(np.asarray(batched), np.stack([np.asarray(s) for s in singles]))
    per_lam = funcgrad.vmap(lambda k, l: random.poisson(k, l))(keys, lam)
    np.testing.assert_array_equal(
        np.asarray(per_lam), [np.asarray(random.poisson(keys[i], lam[i])) for i in range(4)])


def test_interp_under_vmap_and_jit_equals_numpy():
    xp, fp = fnp.asarray([0.0, 1.0, 2.0]), fnp.asarray([0.0, 10.0, 40.0])
    x = np.array([[-1.0, 0.5, 1.5], [2.0, 2.5, 1.0]])
    f = lambda v: fnp.interp(v, xp, fp)  # noqa: E731
    want = np.interp(x, np.asarray(xp), np.asarray(fp))
    np.testing.assert_array_equal(np.asarray(funcgrad.vmap(f)(fnp.asarray(x))), want)
    np.testing.assert_array_equal(np.asarray(funcgrad.jit(f)(fnp.asarray(x))), want)

