"""Host callbacks (JAX's pure_callback and io_callback; docs/external-callbacks.md): results
of declared shapes under jit, vmap (each vmap_method) and custom_jvp; a pure call whose
results are unused is dropped by a compiled program, an io call never is; clear errors for
vmap without a method, ordered io under vmap, differentiation and wrong results."""
import functools

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.experimental import io_callback


def _counting(fn):
    calls = []

    def host(*args):
        calls.append([np.shape(a) for a in args])
        return fn(*args)
    return host, calls


def test_pure_callback_eager_and_jit_with_pytrees():
    host, calls = _counting(lambda t: {"s": np.sin(t["x"]), "n": (t["x"] * t["y"]).sum()})

    def f(x, y):
        out = fg.pure_callback(host, {"s": fg.ShapeDtypeStruct.like(x),
                                      "n": fg.ShapeDtypeStruct((), x.dtype)},
                               {"x": x, "y": y})
        return out["s"] + out["n"]
    x, y = np.linspace(0, 1, 4), np.arange(4.0)
    want = np.sin(x) + (x * y).sum()
    jitted = fg.jit(f)
    for got in (f(x, y), jitted(x, y), jitted(x, y)):
        np.testing.assert_allclose(got, want)
    assert jitted._cache_size() == 1 and len(calls) == 3


def test_a_pure_call_with_unused_results_is_dropped_and_an_io_call_is_not():
    pure, pure_calls = _counting(lambda x: x * 2)
    io, io_calls = _counting(lambda x: x * 2)

    @fg.jit
    def f(x):
        fg.pure_callback(pure, fg.ShapeDtypeStruct.like(x), x)
        io_callback(io, fg.ShapeDtypeStruct.like(x), x)
        return x + 1
    f(np.ones(3))  # traced: both run
    f(np.ones(3))  # compiled: the pure call is gone
    assert len(pure_calls) == 1 and len(io_calls) == 2


@pytest.mark.parametrize("method, shapes", [
    ("sequential", [[(), (2,)]] * 3),
    ("expand_dims", [[(3,), (1, 2)]]),
    ("broadcast_all", [[(3,), (3, 2)]])])
def test_vmap_methods(method, shapes):
    host, calls = _counting(lambda x, w: (np.asarray(x)[..., None] * w).sum(-1))

    def f(x, w):
        return fg.pure_callback(host, fg.ShapeDtypeStruct((), np.float64), x, w,
                                vmap_method=method)
    x, w = np.arange(3.0), np.array([1.0, 10.0])
    np.testing.assert_allclose(fg.vmap(f, in_axes=(0, None))(x, w), x * 11.0)
    assert calls == shapes
    np.testing.assert_allclose(fg.jit(fg.vmap(f, in_axes=(0, None)))(x, w), x * 11.0)


def test_io_callback_runs_once_per_example_in_order():
    seen = []

    def host(x):
        seen.append(float(x))
        return np.float64(len(seen))
    out = fg.vmap(lambda x: io_callback(host, fg.ShapeDtypeStruct((), np.float64), x))(
        np.array([5.0, 6.0, 7.0]))
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])
    assert seen == [5.0, 6.0, 7.0]


def test_refusals_name_the_fix():
    sds = fg.ShapeDtypeStruct((), np.float64)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        fg.vmap(lambda x: fg.pure_callback(np.sin, sds, x))(np.ones(2))
    with pytest.raises(ValueError, match="ordered=False"):
        fg.vmap(lambda x: io_callback(np.sin, sds, x, ordered=True))(np.ones(2))
    for call in (fg.pure_callback, io_callback):
        with pytest.raises(TypeError, match="custom_jvp"):
            fg.grad(lambda x: call(np.sin, sds, x))(1.0)
        with pytest.raises(TypeError, match="custom_jvp"):
            fg.jvp(lambda x: call(np.sin, sds, x), (1.0,), (1.0,))
    # a tape records the call (and replays it); differentiating the tape refuses
    tape = fg.make_tape(lambda x: fg.pure_callback(np.sin, sds, x))(1.0)
    np.testing.assert_allclose(tape(2.0), np.sin(2.0))
    with pytest.raises(TypeError, match="custom_jvp"):
        tape.backward([1.0])
    with pytest.raises(TypeError, match=r"shape \(2,\).*declares \(\)"):
        fg.pure_callback(lambda x: np.ones(2), sds, 1.0)
    with pytest.raises(TypeError, match="dtype float32.*float64"):
        fg.pure_callback(lambda x: np.float32(1), sds, 1.0)
    with pytest.raises(TypeError, match="structure"):
        fg.pure_callback(lambda x: (x, x), sds, 1.0)
    with pytest.raises(ValueError, match="unknown vmap_method"):
        fg.pure_callback(np.sin, sds, 1.0, vmap_method="loop")


def test_the_documents_bessel_function_with_custom_jvp():
    """A scipy function made differentiable: pure_callback inside custom_jvp, its
    derivative the recurrence J_v' = (J_{v-1} - J_{v+1}) / 2 (docs/external-callbacks)."""
    special = pytest.importorskip("scipy.special")

    @functools.partial(fg.custom_jvp, nondiff_argnums=(0,))
    def jv(v, z):
        z = fnp.asarray(z)
        return fg.pure_callback(lambda z: special.jv(v, z).astype(z.dtype),
                                fg.ShapeDtypeStruct.like(z), z,
                                vmap_method="broadcast_all")

    @jv.defjvp
    def _(v, primals, tangents):
        z, = primals
        z_dot, = tangents
        return jv(v, z), z_dot * (jv(v - 1, z) - jv(v + 1, z)) / 2
    z = np.arange(5.0)
    np.testing.assert_allclose(fg.vmap(functools.partial(jv, 1))(z), special.jv(1, z))
    np.testing.assert_allclose(fg.grad(functools.partial(jv, 1))(2.0),
                               special.jvp(1, 2.0), rtol=1e-12)
    np.testing.assert_allclose(fg.hessian(functools.partial(jv, 1))(2.0),
                               special.jvp(1, 2.0, 2), rtol=1e-12)
