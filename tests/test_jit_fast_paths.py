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


def _f(x, y):
    return fnp.sum(fnp.tanh(x * y) * fnp.exp(y))


def _xy():
    return fnp.asarray(np.linspace(0.0, 1.0, 5)), fnp.asarray(np.linspace(1.0, 2.0, 5))


def test_grad_of_jit_runs_the_saved_residuals_through_a_compiled_backward():
    jf = funcgrad.jit(_f)
    x, y = _xy()
    g, ge = funcgrad.grad(jf, argnums=(0, 1)), funcgrad.grad(_f, argnums=(0, 1))
    for _ in range(2):
        _same(g(x, y), ge(x, y))
    kinds = sorted(kind for (_, _, kind) in jf._derived)
    # one forward program returning the residuals, one backward program on them: the
    # function's VJP (which would run the forward pass again) is never compiled
    assert kinds == ["forward_saving[0, 1]", "vjp_saved0"]
    _same(funcgrad.grad(jf)(x, y), funcgrad.grad(_f)(x, y))  # another wanted set
    assert len(jf._derived) == 4


def test_grad_of_jit_differentiated_again_or_checkpointed_equals_eager():
    jf = funcgrad.jit(_f)
    x, y = _xy()
    np.testing.assert_allclose(np.asarray(funcgrad.hessian(jf)(x, y)),
                               np.asarray(funcgrad.hessian(_f)(x, y)), rtol=1e-12)
    inner, inner_e = funcgrad.grad(jf), funcgrad.grad(_f)
    np.testing.assert_allclose(
        np.asarray(funcgrad.grad(lambda x: fnp.sum(inner(x, y) ** 2))(x)),
        np.asarray(funcgrad.grad(lambda x: fnp.sum(inner_e(x, y) ** 2))(x)), rtol=1e-12)
    ck = funcgrad.checkpoint(lambda x: jf(x, y) * 2.0)
    _same(funcgrad.grad(ck)(x), funcgrad.grad(lambda x: _f(x, y) * 2.0)(x))
    # a vjp function called twice reuses the saved residuals
    out, pullback = funcgrad.vjp(jf, x, y)
    first = pullback(fnp.asarray(1.0))
    _same(pullback(fnp.asarray(1.0)), first)
    _same(first, funcgrad.vjp(_f, x, y)[1](fnp.asarray(1.0)))


def test_grad_of_jit_with_integer_and_number_inputs():
    def f(x, n, s):
        return fnp.sum(x ** 2 * n) * s
    jf = funcgrad.jit(f)
    x, n = _xy()[0], fnp.asarray(np.arange(5))
    for s in (3.0, 2.5):
        _same(funcgrad.grad(jf)(x, n, s), funcgrad.grad(f)(x, n, s))
        _same(funcgrad.grad(jf, argnums=2)(x, n, s), funcgrad.grad(f, argnums=2)(x, n, s))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.complex128])
@pytest.mark.parametrize("shapes", [((5,), (5,)), ((5000,), (5000,)), ((1,), (5000,)),
                                    ((), (5000,)), ((5000,), (1,)), ((3, 5000), (5000,))])
def test_inlined_tanh_derivative_is_the_kernels_bit_for_bit(shapes, dtype):
    from funcgrad.primitives.elementwise import tanh_backward
    rng = np.random.RandomState(0)
    g = fnp.asarray(np.asarray(rng.randn(*shapes[0])).astype(dtype))
    y = fnp.asarray(np.tanh(rng.randn(*shapes[1])).astype(dtype))
    for fun, args in ((lambda a, b: tanh_backward(a, b), (g, y)),
                      (lambda b: tanh_backward(2.0, b), (y,)),   # a Python number
                      (lambda b: tanh_backward(g, b), (y,))):    # a constant array
        jitted = funcgrad.jit(fun)
        jitted(*args)
        _same(jitted(*args), fun(*args))
        assert "tanh_backward" not in jitted.lower(*args).compile().as_text()


def test_array_calls_with_static_arguments():
    f = funcgrad.jit(lambda n, x, ys, flag: x * n + ys[0] if flag else x - n,
                     static_argnums=(0,), static_argnames=("flag",))
    x, y = fnp.asarray([1.0, 2.0]), fnp.asarray([3.0, 4.0])
    for _ in range(2):
        _same(f(2, x, [y], True), x * 2 + y)
        _same(f(3, x, [y], True), x * 3 + y)
        _same(f(3, x, [y], False), x - 3)
        _same(f(3, x, [y], flag=False), x - 3)
    assert f._cache_size() == 4  # the keyword call is a tree of its own
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        f([2], x, [y], True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # eager's overflow warnings too
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.complex64])
def test_python_number_constants_keep_numpys_weak_typing(dtype):
    x = fnp.asarray(np.linspace(-2.0, 2.0, 7).astype(dtype))
    funs = [lambda x: x * 0.1 + 3, lambda x: fnp.maximum(x.real, -0.0) * x,
            lambda x: 1e300 * x.real / 7, lambda x: x - True, lambda x: 2 ** 40 * x,
            lambda x: fnp.sum(x) / 128 - 0.5]
    for fun in funs:
        jitted = funcgrad.jit(fun)
        jitted(x)
        _same(jitted(x), fun(x))
    ints = fnp.asarray(np.arange(5))
    for fun in (lambda n: n * 0.5, lambda n: n + 3, lambda n: n / 2):  # int operands
        jitted = funcgrad.jit(fun)
        jitted(ints)
        _same(jitted(ints), fun(ints))


def test_donated_list_fast_path_matches_the_general_call():
    """A cache hit of a call donating a list of Arrays (a training step's parameters) takes
    the array shortcut: the same results as the function itself, each donated Array
    deleted; an Array passed twice (donated and not) takes the general path."""
    def step(params, x):
        return [p - 0.1 * fnp.sin(p * x) for p in params]
    jf = funcgrad.jit(step, donate_argnums=0)
    rng = np.random.RandomState(1)
    raw = [rng.randn(64, 80), rng.randn(64, 80)]
    x = fnp.asarray(rng.randn(64, 80))
    for _ in range(3):
        params = [fnp.asarray(r.copy()) for r in raw]
        want = step([fnp.asarray(r) for r in raw], x)
        _same(want, jf(params, x))
        for p in params:
            with pytest.raises(RuntimeError, match="donated"):
                np.asarray(p)
    assert jf._cache_size() == 1
    params = [fnp.asarray(r.copy()) for r in raw]
    want = step([fnp.asarray(r) for r in raw], fnp.asarray(raw[1]))
    _same(want, jf(params, params[1]))


def test_a_transpose_undoing_a_transpose_is_dropped():
    """``w.T`` used in a product, whose VJP for the other operand transposes it back: the
    compiled backward reads ``w`` itself (no transpose of a transposed value), with
    eager's bits."""
    import re
    x = fnp.asarray(np.random.RandomState(0).randn(3, 4))
    w = fnp.asarray(np.random.RandomState(1).randn(5, 4))

    def f(w, x):
        return fnp.sum(fnp.tanh(x @ w.T) ** 2)
    grad = funcgrad.grad(f, argnums=(0, 1))
    jitted = funcgrad.jit(grad)
    source = jitted.lower(w, x).compile().as_text()
    transposed = set(re.findall(r"(v\d+) = transpose_", source))
    assert transposed and not any(
        re.search(rf"= transpose_\d+\({v}\)", source) for v in transposed), source
    for a, b in zip(jitted(w, x), grad(w, x)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    inner = funcgrad.jit(lambda w: fnp.transpose(fnp.transpose(w, (1, 0)), (1, 0)) * 2.0)
    assert "transpose" not in inner.lower(w).compile().as_text()
    np.testing.assert_array_equal(np.asarray(inner(w)), np.asarray(w) * 2.0)
