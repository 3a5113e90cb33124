"""checkpoint: equal gradients, policies, nesting, higher order, pytrees, custom rules,
randomness, tape display, residual reports — and the memory saving, measured."""
import tracemalloc

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import checkpoint, checkpoint_policies as policies, grad
from funcgrad.test_util import check_grads

N, LAYERS = 100_000, 64


def _layers(n, depth, seed=0, kind="array"):
    """``depth`` layers tanh(h * w + b) closing over parameters that are funcgrad Arrays,
    plain numpy arrays (research code closes over those all the time) or Python numbers."""
    rng = np.random.RandomState(seed)
    make = {"array": fnp.asarray, "numpy": np.asarray, "scalar": lambda a: float(a[0])}[kind]
    params = [(make(rng.randn(n) * 0.5), make(rng.randn(n) * 0.1)) for _ in range(depth)]
    return [(lambda w, b: (lambda h: fnp.tanh(h * w + b)))(w, b) for w, b in params]


def _peak(fun, *args):
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = fun(*args)
        return out, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", ["array", "numpy", "scalar"])
def test_checkpoint_sequential_cuts_peak_memory_to_a_third(kind):
    """Measured with every kind of parameter: constants are referenced by the tape, never
    copied per use, so numpy parameters cost what Arrays cost, and a checkpointed segment
    keeps no copy of them either."""
    layers = _layers(N, LAYERS, kind=kind)
    x = fnp.asarray(np.random.RandomState(1).randn(N))

    def plain(x):
        for f in layers:
            x = f(x)
        return fnp.sum(x)

    g_plain, peak_plain = _peak(grad(plain), x)
    g_ckpt, peak_ckpt = _peak(grad(lambda x: fnp.sum(fg.checkpoint_sequential(layers, 8, x))), x)
    layer_bytes = N * 8
    assert peak_plain >= 60 * layer_bytes  # ~64 activations kept alive without checkpoints
    assert peak_plain <= 70 * layer_bytes, peak_plain / layer_bytes  # and no copies
    assert peak_ckpt <= peak_plain / 3, (peak_ckpt / layer_bytes, peak_plain / layer_bytes)
    np.testing.assert_array_equal(np.asarray(g_plain), np.asarray(g_ckpt))


@pytest.mark.parametrize("policy", [None, policies.everything_saveable, policies.dots_saveable,
                                    policies.save_only_these_names("h"),
                                    policies.save_anything_except_these_names("h"),
                                    lambda prim, *avals, **params: prim.name == "sin"])
def test_gradients_equal_under_every_policy(policy):
    w = fnp.asarray(np.random.RandomState(0).randn(3, 3))

    def block(x):
        h = fg.checkpoint_name(fnp.sin(x @ w), "h")
        return fnp.tanh(h * x) @ w

    f_plain = lambda x: fnp.sum(block(block(x)) ** 2)
    f_ckpt = lambda x: fnp.sum(checkpoint(block, policy=policy)(
        checkpoint(block, policy=policy)(x)) ** 2)
    x = fnp.asarray([0.1, -0.4, 0.7])
    np.testing.assert_allclose(np.asarray(grad(f_ckpt)(x)), np.asarray(grad(f_plain)(x)),
                               rtol=1e-12)
    check_grads(f_ckpt, (x,), order=2, modes=("rev", "fwd"))


def test_policies_decide_what_is_kept():
    def f(x):
        a = fg.checkpoint_name(fnp.sin(x), "a")
        return fnp.sum(a * fnp.cos(x))  # the product reads a and cos(x)

    x = fnp.ones(1000)
    sizes = {}
    for name, pol in [("nothing", policies.nothing_saveable),
                      ("everything", policies.everything_saveable),
                      ("only_a", policies.save_only_these_names("a")),
                      ("except_a", policies.save_anything_except_these_names("a"))]:
        res = fg.saved_residuals(checkpoint(f, policy=pol), x)
        sizes[name] = sum(r.nbytes for r in res)
    assert sizes == {"nothing": 8000,      # the input only
                     "everything": 24000,  # the input, a and cos(x)
                     "only_a": 16000,      # the input and a
                     "except_a": 16000}    # the input and cos(x)


def test_nested_checkpoint_and_grad_of_grad():
    inner = checkpoint(lambda x: fnp.sin(x) * x)
    outer = checkpoint(lambda x: fnp.exp(inner(x)))
    f = lambda x: fnp.sum(outer(x))
    x = fnp.asarray([0.3, -0.2])
    ref = lambda x: fnp.sum(fnp.exp(fnp.sin(x) * x))
    np.testing.assert_allclose(np.asarray(grad(f)(x)), np.asarray(grad(ref)(x)))
    h = fg.hessian(f)(x)
    np.testing.assert_allclose(np.asarray(h), np.asarray(fg.hessian(ref)(x)), rtol=1e-10)
    d2 = grad(lambda x: fnp.sum(grad(f)(x)))(x)
    np.testing.assert_allclose(np.asarray(d2), np.asarray(grad(lambda x: fnp.sum(grad(ref)(x)))(x)))


def test_pytrees_static_args_and_decorator_form():
    @fg.checkpoint(static_argnums=(1,))
    def layer(params, activation, x):
        out = activation(x @ params["w"] + params["b"])
        return {"out": out, "pre": x}

    params = {"w": fnp.eye(2) * 0.5, "b": fnp.asarray([0.1, 0.2])}
    loss = lambda p, x: fnp.sum(layer(p, fnp.tanh, x)["out"])
    ref = lambda p, x: fnp.sum(fnp.tanh(x @ p["w"] + p["b"]))
    x = fnp.asarray([1.0, 2.0])
    g, g_ref = grad(loss)(params, x), grad(ref)(params, x)
    for k in ("w", "b"):
        np.testing.assert_allclose(np.asarray(g[k]), np.asarray(g_ref[k]))


def test_custom_vjp_inside_checkpoint_uses_its_rule():
    calls = []

    @fg.custom_vjp
    def clip_grad(x):
        return x

    clip_grad.defvjp(lambda x: (x, None), lambda _, g: (calls.append(1) or fnp.clip(g, -1, 1),))
    f = checkpoint(lambda x: fnp.sum(clip_grad(x * 10.0)))
    np.testing.assert_allclose(np.asarray(grad(f)(fnp.ones(3))), [10.0, 10.0, 10.0])
    assert calls == [1]


def test_recomputation_sees_the_forward_randomness():
    key = np.random.RandomState(42)

    def noisy(x):
        mask = fnp.asarray(key.rand(*x.shape) > 0.5)  # drawn once, in the forward pass
        return fnp.sum(fnp.where(mask, fnp.sin(x), 0.0))

    x = fnp.linspace(0.0, 1.0, 50)
    g = grad(checkpoint(noisy))(x)
    mask = np.random.RandomState(42).rand(50) > 0.5
    np.testing.assert_allclose(np.asarray(g), np.where(mask, np.cos(np.asarray(x)), 0.0))


def test_backward_leaves_no_reference_cycles(garbage_cycles):
    """The tape record keeps the checkpointed function; that function must not keep the
    record's trace alive through the traced arguments (a cycle holding every residual
    until the garbage collector runs)."""
    def loss(w, x):
        return fnp.sum(checkpoint(lambda w, x: fnp.tanh(x @ w))(w, x))
    w, x = fnp.ones((3, 2)), fnp.ones((4, 3))
    assert garbage_cycles(lambda: grad(loss)(w, x)) == []


def test_tape_shows_one_record_holding_the_sub_tape_and_policy():
    f = checkpoint(lambda x: fnp.tanh(fnp.sin(x) * 2.0), policy=policies.dots_saveable)
    text = str(fg.make_tape(lambda x: fnp.sum(f(x)))(fnp.ones(2)))
    assert "checkpoint[call=<lambda>, policy=dots_saveable]" in text
    assert "        c:f64[2] = mul b 2.0:f64" in text  # the sub-tape, indented


def test_saved_residuals_reports_producer_and_source_line():
    def f(x):
        return fnp.sum(fnp.tanh(x))  # tanh keeps its output

    rows = fg.saved_residuals(f, fnp.ones(10))
    assert [(r.shape, r.primitive, r.nbytes) for r in rows] == [((10,), "tanh", 80)]
    assert rows[0].source.endswith(f"test_checkpoint.py:{f.__code__.co_firstlineno + 1}")


def test_print_saved_residuals(capsys):
    fg.print_saved_residuals(lambda x: fnp.sum(fnp.exp(x)), fnp.ones(4))
    out = capsys.readouterr().out
    assert "exp" in out and "1 residuals, 32 bytes" in out


def test_checkpoint_sequential_segments():
    layers = _layers(4, 9)
    x = fnp.ones(4)
    ref = x
    for f in layers:
        ref = f(ref)
    for segments in (None, 1, 3, 9, 20):
        out = fg.checkpoint_sequential(layers, segments, x)
        np.testing.assert_allclose(np.asarray(out), np.asarray(ref))
    tape = fg.make_tape(lambda x: fg.checkpoint_sequential(layers, None, x))(x)
    assert tape.primitives == ["checkpoint"] * 3  # sqrt(9) segments


def test_nested_checkpoints_keep_only_the_outer_input():
    """An inner checkpoint recorded inside an outer one is recomputed with it: its sub-tape
    keeps no reference to its input (the outer's intermediate), and the report lists the
    outer's argument once."""
    inner = checkpoint(lambda y: fnp.sin(y) * y)
    outer = checkpoint(lambda x: inner(x * 3) * 2)
    report = fg.saved_residuals(lambda x: fnp.sum(outer(x)), fnp.ones(3))
    assert [(r.shape, r.primitive) for r in report] == [((3,), "argument")]
    x = 1.0
    want = 2 * (9 * np.cos(3 * x) * x + 3 * np.sin(3 * x))
    np.testing.assert_allclose(np.asarray(grad(lambda x: fnp.sum(outer(x)))(fnp.ones(3))),
                               [want] * 3)
