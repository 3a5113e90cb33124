"""Mutable array references (``funcgrad.new_ref``, ``freeze``, ``funcgrad.ref``) against
JAX (64-bit), written the way JAX's array-refs document uses them: indexed reads and writes
outside and inside ``jit`` (a closed-over or passed ref is updated each time the compiled
program runs), refs used internally by differentiated functions, JAX's errors, and
``with_refs`` on vjp functions."""
from __future__ import annotations

import os

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp

os.environ.setdefault("JAX_ENABLE_X64", "1")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


def _both(program):
    """The program's result run with (funcgrad, funcgrad.numpy) and with (jax, jax.numpy)."""
    got, want = program(funcgrad, fnp), program(jax, jnp)
    for g, w in zip(funcgrad.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12)
    return got


def _value(r):
    return r[...]


def test_jitted_closure_updates_the_ref_on_every_run():
    def program(lib, np_):
        counts = lib.new_ref(np_.zeros(3))

        @lib.jit
        def bump():
            counts[1] += 1.0
        for _ in range(3):
            bump()
        return _value(counts)
    np.testing.assert_array_equal(np.asarray(_both(program)), [0.0, 3.0, 0.0])


def test_ref_argument_is_updated_in_place_and_compiled_once():
    def program(lib, np_):
        @lib.jit
        def sin_inplace(r, scale):
            r[...] = np_.sin(r[...]) * scale
        r = lib.new_ref(np_.arange(3.0))
        sin_inplace(r, 2.0)
        sin_inplace(r, 0.5)
        return _value(r), (sin_inplace._cache_size() if lib is funcgrad else 1)
    assert _both(program)[1] == 1


def test_indexing_reads_and_writes():
    def program(lib, np_):
        r = lib.new_ref(np_.arange(12.0).reshape(3, 4))
        r[1] = r[0]
        r[2, 3] = r[1, 2]
        r[0, :3] = r[:, 1]
        vals = r[np_.array([0, 0, 1]), np_.array([1, 2, 3])]
        r[np_.array([1, 2, 1]), np_.array([0, 0, 1])] = vals
        r[1:, 2] += 10.0
        old = lib.ref.swap(r, (0, 0), 100.0)
        lib.ref.addupdate(r, 2, np_.ones(4))
        return _value(r), old, lib.ref.get(r, (slice(None), 1)), r.shape, lib.freeze(r)
    _both(program)


def test_refs_inside_differentiated_and_jitted_functions():
    def program(lib, np_):
        def g(x):
            r = lib.new_ref(0.0)
            r[...] = np_.sin(x)
            return r[...]

        @lib.jit
        def doubled(x):
            r = lib.new_ref(x)
            r[...] = r[...] + r[...] * x
            return r[...]
        return lib.grad(g)(1.0), lib.grad(doubled)(3.0), lib.jit(lib.grad(g))(0.5)
    _both(program)


def test_plumbing_ref_collects_non_differentiated_values_and_custom_vjp_stash():
    def program(lib, np_):
        def f(x, plumbing):
            y = x * x
            plumbing[...] += lib.lax.stop_gradient(y)
            return y
        plumbing = lib.new_ref(0.0)
        g = lib.grad(f)(3.0, plumbing)

        @lib.custom_vjp
        def stash(grads_ref, x):
            return x
        stash.defvjp(lambda grads_ref, x: (x, grads_ref),
                     lambda grads_ref, ct: (None, _set(grads_ref, ct)))
        grads = lib.new_ref(0.0)
        lib.grad(lambda x, r: np_.sin(stash(r, x)))(1.0, grads)
        return g, _value(plumbing), _value(grads)
    _both(program)


def _set(r, ct):
    r[...] = ct
    return ct


def test_scan_body_closing_over_a_ref():
    def program(lib, np_):
        total = lib.new_ref(0)

        def body(carry, x):
            total[...] += x
            return carry, x * 2
        ys = lib.lax.scan(body, None, np_.arange(10))[1]
        return ys, _value(total)
    _both(program)


def test_with_refs_accumulates_gradients_into_refs():
    def program(lib, np_):
        x = np_.arange(10.0)
        take = lib.jit(lambda x, i: x[i])
        acc = lib.new_ref(np_.zeros(10))
        for i in [3, 5, 3]:
            _, vjp = lib.vjp(take, x, i)
            placeholder, _ = vjp.with_refs(acc, lib.ad.GradValue())(1.0)
        _, vjp = lib.vjp(lambda W, v: W @ v, np_.ones((4, 4)), np_.ones(4))
        W_bar, skipped = vjp.with_refs(lib.ad.GradValue(), lib.ad.DontWant())(np_.ones(4))
        assert isinstance(placeholder, lib.ad.GradRef)
        assert isinstance(skipped, lib.ad.DidntWant)
        return _value(acc), W_bar
    _both(program)


def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value).replace("float32", "float64")


def test_errors_are_jaxs():
    def cases(lib, np_):
        def err1(x_ref):
            x_ref[...] = 5.0
            return x_ref

        def err2(x_ref, y_ref):
            return None

        def err6(x, r):
            r[...] += x + x
            return x

        outer = lib.new_ref(0.0)

        def err5(x):
            outer[...] = x
        shared = lib.new_ref(np_.zeros(3))

        def err7(x):  # passed as x and closed over as shared
            x[...] += 1.0
            shared[...] += 2.0
        r = lib.new_ref(0.0)
        return [lambda: lib.jit(err1)(r), lambda: lib.jit(err2)(r, r),
                lambda: lib.grad(err6)(1.0, lib.new_ref(0.0)),
                lambda: lib.vmap(err5)(np_.arange(3.0)), lambda: lib.jit(err7)(shared)]
    for ours, theirs in zip(cases(funcgrad, fnp), cases(jax, jnp)):
        (t1, m1), (t2, m2) = _message(ours), _message(theirs)
        assert t1 is t2
        strip = lambda m: m.split(" at ")[0] + m.split(":", 1)[-1].split(" ", 1)[-1]  # noqa: E731
        assert strip(m1) == strip(m2), (m1, m2)


def test_ref_is_not_an_array():
    with pytest.raises(TypeError):
        fnp.sin(funcgrad.new_ref(1.0))
    assert repr(funcgrad.new_ref(fnp.arange(2.0))) == "Ref([0., 1.], dtype=float64)"
    with pytest.raises(TypeError, match="higher-order"):
        funcgrad.new_ref(funcgrad.new_ref(1.0))


def test_writes_of_a_trace_that_fails_are_undone():
    """A jit trace runs its function's first call; a trace that fails is no call, so the
    refs keep their values (JAX runs nothing of it). Closed over and passed, and a ref
    written by a nested jit whose trace succeeded before the outer one failed."""
    def program(lib, np_):
        closed, passed = lib.new_ref(np_.zeros(3)), lib.new_ref(np_.ones(2))

        @lib.jit
        def inner(x):
            closed[1] = x.sum()

        @lib.jit
        def f(x, r):
            closed[0] = x[0]
            r[...] = x[:2] * 3.0
            inner(x)
            raise RuntimeError("fails after its writes")
        with pytest.raises(RuntimeError, match="fails after its writes"):
            f(np_.arange(1.0, 4.0), passed)
        f = lib.jit(lambda x: _set(closed, x * 2.0))  # then a trace that succeeds writes
        return _value(closed), _value(passed), f(np_.arange(3.0)), _value(closed)
    _both(program)


def test_a_ref_is_a_pytree_leaf():
    for lib, np_ in ((funcgrad, fnp), (jax, jnp)):
        r = lib.new_ref(np_.zeros(3))
        leaves, tree = lib.tree_util.tree_flatten({"a": r, "b": (r, 1.0)})
        assert leaves[0] is r and leaves[1] is r and tree.num_leaves == 3
        assert lib.tree_util.tree_leaves(r) == [r]
        assert lib.tree_util.tree_map(lambda x: 0, [r]) == [0]
