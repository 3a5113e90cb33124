"""funcgrad.debug.breakpoint (JAX's jax.debug.breakpoint): the text debugger driven through
stdin, showing runtime values of traced locals, once per call under jit (never while
tracing), per example under vmap, the primal values under grad."""
import io
import sys

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.debug as debug
import funcgrad.numpy as fnp
from funcgrad.transforms.jit_explain import internal


@pytest.fixture
def commands(monkeypatch, capsys):
    """Feed the debugger's stdin; return a function giving what it printed."""
    def feed(text):
        monkeypatch.setattr(sys, "stdin", io.StringIO(text))
        return lambda: capsys.readouterr().out
    return feed


def _f(x):
    y = x * 2.0
    debug.breakpoint()
    return fnp.sum(y)


def test_eager_breakpoint_prints_locals_and_continues(commands):
    out = commands("p y\np x + 1\nc\n")
    assert float(_f(fnp.arange(3.0))) == 6.0
    text = out()
    assert text.startswith("Entering jdb:\n(jdb) ")
    assert "Array([0., 2., 4.], dtype=float64)" in text
    assert "Array([1., 2., 3.], dtype=float64)" in text


def test_jit_fires_at_run_time_once_per_call_with_runtime_values(commands):
    out = commands("p y\nc\np y\nc\n")
    f = fg.jit(_f)
    f.lower(fnp.arange(3.0))  # tracing alone enters no debugger
    assert out() == ""
    assert float(f(fnp.arange(3.0))) == 6.0
    assert float(f(fnp.arange(3.0) + 10.0)) == 66.0
    text = out()
    assert text.count("Entering jdb:") == 2
    assert "Array([0., 2., 4.], dtype=float64)" in text
    assert "Array([20., 22., 24.], dtype=float64)" in text


def test_vmap_enters_once_per_example_and_grad_sees_primals(commands):
    out = commands("p y\nc\n" * 3)
    fg.vmap(_f)(fnp.arange(6.0).reshape(2, 3))
    text = out()
    assert text.count("Entering jdb:") == 2
    assert "Array([0., 2., 4.], dtype=float64)" in text
    assert "Array([ 6.,  8., 10.], dtype=float64)" in text
    out = commands("p y\nc\n")
    np.testing.assert_array_equal(fg.grad(_f)(fnp.arange(3.0)), [2.0, 2.0, 2.0])
    assert "Array([0., 2., 4.], dtype=float64)" in out()


def _outer(x):
    z = x + 100.0
    return _f(z)


def test_frames_commands_up_down_list_where(commands):
    out = commands("up\np z\ndown\np y\nl\nw\np nothing\nc\n")
    fg.jit(_outer)(fnp.arange(2.0))
    text = out()
    assert "Array([100., 101.], dtype=float64)" in text
    assert "Array([200., 202.], dtype=float64)" in text
    assert "->      debug.breakpoint()" in text  # the listing marks the line
    assert "Traceback:" in text and "return _f(z)" in text
    assert "*** NameError: name 'nothing' is not defined" in text
    assert "/transforms/" not in text and "/funcgrad/debug" not in text


def test_num_frames_filter_frames_and_stdio_kwargs():
    seen = []
    debug.register_debugger("record", lambda frames, thread, **kw: seen.append(frames), 10)
    try:
        fg.jit(_outer)(fnp.arange(2.0))
        assert [sorted(f.locals) for f in seen[0][:2]] == [["x", "y"], ["x", "z"]]
        seen.clear()

        def shallow(x):
            y = x + 1.0
            debug.breakpoint(num_frames=1)
            return y
        fg.jit(shallow)(fnp.arange(2.0))
        assert len(seen[0]) == 1
        assert not any(internal(f.filename) for frames in seen for f in frames)
    finally:
        debug._debugger._debuggers.pop("record")
    out = io.StringIO()

    def g(x):
        w = x - 1.0
        debug.breakpoint(backend="cli", stdin=io.StringIO("pp w\nc\n"), stdout=out)
        return w
    fg.jit(g)(fnp.ones(2))
    assert "Array([0., 0.], dtype=float64)" in out.getvalue()


def test_token_is_returned_and_exclusive_with_ordered(commands):
    out = commands("p y\nc\n")

    def h(x):
        y = x * 3.0
        return debug.breakpoint(token=y) + 1.0
    np.testing.assert_array_equal(fg.jit(h)(fnp.ones(2)), [4.0, 4.0])
    assert "Array([3., 3.], dtype=float64)" in out()
    with pytest.raises(ValueError, match="^`ordered` and `token` are mutually exclusive"):
        debug.breakpoint(token=fnp.ones(1), ordered=True)
    with pytest.raises(ValueError, match='Debugger with name "cli" already registered.'):
        debug.register_debugger("cli", print, 0)


def test_unfiltered_frames_under_pytest():
    """filter_frames=False snapshots every frame, pytest's included, whose locals hold
    self-referencing containers: their flatten once grew without end (out of memory)."""
    import io

    import funcgrad
    import funcgrad.numpy as fnp
    out = io.StringIO()

    def f(x):
        y = x * 2
        funcgrad.debug.breakpoint(filter_frames=False, stdin=io.StringIO("p y\nc\n"),
                                  stdout=out)
        return y
    funcgrad.jit(f)(fnp.ones(2))
    assert "2." in out.getvalue()
