"""funcgrad.debug (JAX's jax.debug): print and callback see concrete values eagerly, on every
run of a compiled program, once per example under vmap (in order), and the primal values
under grad and jvp; bad format strings are refused at the call. And jax_debug_nans /
jax_debug_infs: the operation making a NaN or an infinity raises, also inside a compiled
program (run again without jit to find it) and in a backward pass."""
import functools

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _logged():
    seen = []

    def f(x, y):
        fg.debug.callback(lambda a, b: seen.append((a.tolist(), b.tolist())), x, y)
        return fnp.sin(x) * y
    return f, seen


def test_eager_and_every_run_of_the_compiled_program():
    f, seen = _logged()
    jitted = fg.jit(f)
    jitted(1.0, 2.0)
    jitted(3.0, 4.0)  # the compiled program, not a retrace
    jitted(5.0, 6.0)
    assert jitted._cache_size() == 1
    f(7.0, 8.0)
    assert seen == [(1.0, 2.0), (3.0, 4.0), (5.0, 6.0), (7.0, 8.0)]


@pytest.mark.parametrize("jitted", [False, True])
def test_once_per_example_under_vmap_in_order(jitted):
    f, seen = _logged()
    batched = fg.vmap(fg.vmap(f, in_axes=(0, None)), in_axes=(1, None))
    if jitted:
        batched = fg.jit(batched)
    x = np.arange(6.0).reshape(2, 3)
    out = batched(x, 10.0)
    np.testing.assert_allclose(out, np.sin(x.T) * 10.0)
    assert seen == [(x[i, j], 10.0) for j in range(3) for i in range(2)]


def test_primal_values_under_grad_and_jvp_and_no_derivative_through_it():
    f, seen = _logged()
    g = fg.grad(f)(0.5, 2.0)
    np.testing.assert_allclose(g, np.cos(0.5) * 2.0)
    y, t = fg.jvp(f, (0.5, 2.0), (1.0, 0.0))
    np.testing.assert_allclose(t, np.cos(0.5) * 2.0)
    np.testing.assert_allclose(fg.jit(fg.grad(f))(0.5, 2.0), g)
    assert seen == [(0.5, 2.0)] * 3
    assert all(type(a) is float for a, _ in seen)  # values, not tracers


def test_print_formats_fields_and_pytrees(capsys):
    @fg.jit
    def f(x, tree):
        fg.debug.print("x={x} first={} tree={t}", x + 1, x=x, t=tree)
        return x
    f(fnp.asarray([1.0, 2.0]), {"a": 3.0})
    f(fnp.asarray([4.0, 5.0]), {"a": 6.0})
    out = capsys.readouterr().out.splitlines()
    assert out == ["x=[1. 2.] first=[2. 3.] tree={'a': Array(3., dtype=float64)}",
                   "x=[4. 5.] first=[5. 6.] tree={'a': Array(6., dtype=float64)}"]


@pytest.mark.parametrize("fmt, args, kwargs, field", [
    ("{z}", (), {"x": 1.0}, "z=..."), ("{} {}", (1.0,), {}, "a positional argument"),
    ("{2}", (1.0, 2.0), {}, "a positional argument")])
def test_print_refuses_fields_no_argument_fills(fmt, args, kwargs, field):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        fg.debug.print(fmt, *args, **kwargs)


def test_the_call_shows_in_the_program_text():
    text = str(fg.make_jaxpr(lambda x: (fg.debug.print("{}", x), x * 2)[1])(1.0))
    assert "\n    debug_callback[" in text


def _log_sum(x):
    return fnp.sum(fnp.log(x) * 2.0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_debug_nans_names_the_operation_eagerly_in_jit_and_in_backward():
    bad, good = np.array([1.0, -1.0]), np.array([1.0, 2.0])
    assert np.isnan(_log_sum(bad))  # off by default
    jitted = fg.jit(_log_sum)
    jitted(good)
    with fg.debug_nans(True):
        for f in (_log_sum, fg.grad(_log_sum), fg.jit(_log_sum)):
            with pytest.raises(FloatingPointError,
                               match=r"invalid value \(nan\) encountered in log"):
                f(bad)
        with pytest.raises(FloatingPointError, match="in log"):
            jitted(bad)  # the compiled program, then the function without jit
        np.testing.assert_allclose(jitted(good), _log_sum(good))
        # a NaN made only by the backward pass (the VJP of sqrt at 0 is inf * 0)
        with pytest.raises(FloatingPointError, match="nan"):
            fg.grad(lambda x: fnp.sum(fnp.sqrt(x) * 0.0))(np.zeros(2))
    assert not fg.config.jax_debug_nans
    assert np.isnan(jitted(bad))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_debug_infs_and_the_config_option():
    fg.config.update("jax_debug_infs", True)
    try:
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in div"):
            fnp.asarray(1.0) / 0.0
        assert fnp.asarray(2.0) / 1.0 == 2.0
        assert int(fnp.asarray(1) // 1) == 1  # integers are not checked
    finally:
        fg.config.update("jax_debug_infs", False)
    assert np.isinf(fnp.asarray(1.0) / 0.0)
    with pytest.raises(TypeError, match="takes a bool"):
        fg.config.update("jax_debug_nans", "yes")


def test_effects_inside_staged_constructs_happen_once_per_run():
    """A loop's body or a branch is recorded as a sub-program without making its calls;
    each run of it makes them: no first iteration twice, the taken branch only, and an
    io_callback's result in the first call is its own (not the recording's zeros)."""
    from funcgrad import lax
    from funcgrad.experimental import io_callback
    seen = []
    log = functools.partial(fg.debug.callback, lambda *v: seen.append(tuple(map(float, v))))

    def scanned(x):
        return lax.scan(lambda c, xi: (log(c, xi), (c + xi, c))[1], 0.0, x)[0]

    def counted(n):
        return lax.while_loop(lambda c: c < n, lambda c: (log(c), c + 1)[1], 0)

    def branched(x):
        return lax.cond(x > 0, lambda: (log(x), x)[1], lambda: (log(-x), -x)[1])
    jitted = [fg.jit(f) for f in (scanned, counted, branched)]
    for _ in range(2):  # traced, then compiled
        seen.clear()
        jitted[0](np.arange(3.0))
        jitted[1](3)
        jitted[2](2.0)
        assert seen == [(0.0, 0.0), (0.0, 1.0), (1.0, 2.0), (0.0,), (1.0,), (2.0,), (2.0,)]
    tenfold = fg.jit(lambda x: lax.cond(x > 0, lambda: io_callback(
        lambda v: np.float64(v * 10), fg.ShapeDtypeStruct((), np.float64), x), lambda: x))
    assert [float(tenfold(v)) for v in (2.0, 3.0, -1.0)] == [20.0, 30.0, -1.0]

