"""The shortcuts jit takes on its hot paths (a cache hit of a call of Arrays and lists of
Arrays, the generated program's fusions, the jitted call's saved residuals) give what the
general path gives, and step aside for every call they do not cover."""
import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp


def _same(a, b):
    la, lb = funcgrad.tree_util.tree_leaves(a), funcgrad.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
        assert np.asarray(x).dtype == np.asarray(y).dtype


def _chain(x, ws, bs):
    h = x
    for w, b in zip(ws, bs):
        h = fnp.tanh(h * w + b)
    return fnp.sum(h)


def _problem(n=5, depth=3, dtype=np.float64):
    rng = np.random.RandomState(0)
    return (fnp.asarray(rng.randn(n).astype(dtype)),
            [fnp.asarray((rng.randn(n) * 0.5).astype(dtype)) for _ in range(depth)],
            (fnp.asarray((rng.randn(n) * 0.1).astype(dtype)),) * depth)


def test_array_calls_hit_the_cache_and_retrace_on_a_new_signature():
    g = funcgrad.grad(_chain)
    jitted = funcgrad.jit(g)
    x, ws, bs = _problem()
    for _ in range(3):
        _same(jitted(x, ws, bs), g(x, ws, bs))
    assert jitted._cache_size() == 1
    x32, ws32, bs32 = _problem(dtype=np.float32)
    _same(jitted(x32, ws32, bs32), g(x32, ws32, bs32))
    assert jitted._cache_size() == 2
    _same(jitted(x, ws[:2], bs[:2]), g(x, ws[:2], bs[:2]))  # another list length
    assert jitted._cache_size() == 3
    x7, ws7, bs7 = _problem(n=7)
    _same(jitted(x7, ws7, bs7), g(x7, ws7, bs7))  # another shape
    assert jitted._cache_size() == 4
    _same(jitted(x, list(ws), list(bs)), g(x, ws, bs))  # a list for the tuple: a new tree
    assert jitted._cache_size() == 5


def test_calls_outside_the_array_shortcut_take_the_general_path():
    f = funcgrad.jit(lambda x, ys: x * ys[0] + ys[1])
    x, y = fnp.asarray([1.0, 2.0]), fnp.asarray([3.0, 4.0])
    _same(f(x, [y, y]), x * y + y)
    _same(f(np.asarray([1.0, 2.0]), [y, y]), x * y + y)       # a numpy leaf
    _same(f(x, [y, 2.0]), x * y + 2.0)                         # a Python number leaf
    _same(f(x, ys=[y, y]), x * y + y)                          # a keyword
    _same(f(x, {0: y, 1: y}), x * y + y)                       # a dict
    # under an outer transform the call is one traced node, not a cache hit
    _same(funcgrad.grad(lambda x: fnp.sum(f(x, [y, y])))(x), y)


def test_a_cached_program_is_not_reused_for_another_dtype_in_a_list():
    f = funcgrad.jit(lambda xs: xs[0] + xs[1])
    a64, b64 = fnp.asarray([1.0, 2.0]), fnp.asarray([0.5, 0.25])
    a32 = fnp.asarray(np.asarray([1.0, 2.0], np.float32))
    assert f([a64, b64]).dtype == np.float64
    assert f([a32, a32]).dtype == np.float32
    assert f([a64, b64]).dtype == np.float64
