"""jit on programs that once broke it: multi-output steps viewing several inputs (random
keys, while_loop carries) in the buffer-reuse pass, Python-number arguments under grad."""
import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax, random


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
