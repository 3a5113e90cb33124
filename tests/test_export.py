"""funcgrad.export (JAX's jax.export): export(jit(f))(*args) -> Exported, serialize() to
bytes that are data (JSON header + raw little-endian buffers, never pickled code),
deserialize() back; calls give identical results, differentiate, and malformed or crafted
bytes raise ExportError without running anything."""
import json
import random
import struct

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as lax
import funcgrad.numpy as fnp
from funcgrad import export as E


def _mlp(params, x):
    for w, b in params:
        x = fnp.tanh(x @ w + b)
    return {"out": x.sum(axis=-1) * 0.5, "first": x[0, 1:], "n": x.astype(np.float32)[-1]}


PARAMS = [(fnp.asarray(np.linspace(-1, 1, 12).reshape(3, 4)), fnp.zeros(4)),
          (fnp.ones((4, 2)), fnp.asarray([0.5, -0.5]))]
X = fnp.arange(6.0).reshape(2, 3)


def _unrolled(x):
    """Python control flow on static values, an index out of bounds (clamped), a where:
    straight-line equations."""
    y = x
    for i in range(3):
        y = y * 1.5 + i
    z = fnp.where(y > 2.0, y, -y)
    return z[7], fnp.take(z, np.array([0, 9]), mode="clip")


def _roundtrip(f, *args, vjp_order=0):
    exp = E.export(fg.jit(f))(*args)
    data = exp.serialize(vjp_order=vjp_order)
    assert isinstance(data, bytes) and data.startswith(b"FGEXPORT")
    return exp, E.deserialize(data)


def _control(x, k):
    """cond (a staged switch), scan and while_loop, their bodies reading a closure."""
    y = lax.cond(x.sum() > 0, lambda a: a * 2.0 + k, lambda a: a - 1.0, x)
    c, ys = lax.scan(lambda c, xs: (c + xs * k, c * xs), y[0], y)
    i, z = lax.while_loop(lambda s: fnp.abs(s[1]).sum() < 100.0,
                          lambda s: (s[0] + 1, s[1] * 1.5),
                          (0, c))
    return z + ys.sum(), i


CASES = [(_mlp, (PARAMS, X)), (_unrolled, (fnp.arange(4.0),)),
         (_control, (fnp.ones((2, 3)), 2.0)), (_control, (-fnp.ones((2, 3)), 0.5))]


@pytest.mark.parametrize("f,args", CASES)
def test_round_trip_calls_give_identical_results(f, args):
    exp, back = _roundtrip(f, *args)
    for attr in ("fun_name", "in_tree", "out_tree"):
        assert getattr(back, attr) == getattr(exp, attr)
    assert [(a.shape, a.dtype) for a in back.in_avals] == \
        [(a.shape, a.dtype) for a in exp.in_avals]
    assert [(a.shape, a.dtype) for a in back.out_avals] == \
        [(a.shape, a.dtype) for a in exp.out_avals]
    want = f(*args)
    for w, g in zip(fg.tree_util.tree_leaves(want), fg.tree_util.tree_leaves(back.call(*args))):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert back.serialize() == exp.serialize()


def test_export_from_shape_dtype_structs_and_grad_vmap_jit_of_the_call():
    specs = fg.tree_util.tree_map(lambda a: fg.ShapeDtypeStruct(a.shape, a.dtype), (PARAMS, X))
    exp = E.export(fg.jit(_mlp))(*specs)
    assert exp.fun_name == "_mlp"
    back = E.deserialize(exp.serialize(vjp_order=1))
    loss = lambda f: lambda p: f(p, X)["out"].sum()  # noqa: E731
    for g, w in zip(fg.tree_util.tree_leaves(fg.grad(loss(back.call))(PARAMS)),
                    fg.tree_util.tree_leaves(fg.grad(loss(_mlp))(PARAMS))):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12)
    xs = fnp.stack([X, X + 1.0])
    batched = fg.vmap(lambda x: back.call(PARAMS, x)["out"])(xs)
    np.testing.assert_allclose(np.asarray(batched), np.stack(
        [np.asarray(_mlp(PARAMS, x)["out"]) for x in (X, X + 1.0)]))
    np.testing.assert_array_equal(fg.jit(back.call)(PARAMS, X)["out"], _mlp(PARAMS, X)["out"])
    with pytest.raises(TypeError, match="argument 4 has shape"):
        back.call(PARAMS, fnp.ones((3, 3)))


def _cond_scan(x, k):
    """cond and scan (reverse-mode differentiable under jit, which while_loop is not, as in
    JAX), the cond's branch closing over k: an int, not differentiated (see below)."""
    y = lax.cond(x.sum() > 0, lambda a: a * 2.0 + k, lambda a: a - 1.0, x)
    c, ys = lax.scan(lambda c, xs: (c + xs * 1.5, c * xs), y[0], y)
    return c.sum() + ys.sum()


def test_control_flow_runs_on_new_values_and_differentiates():
    exp, back = _roundtrip(_control, fnp.ones((2, 3)), 2.0)
    for x in (-fnp.ones((2, 3)), fnp.full((2, 3), 3.0)):  # the other branch, other trips
        for w, g in zip(_control(x, 2.0), back.call(x, 2.0)):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    exp, back = _roundtrip(_cond_scan, fnp.ones((2, 3)), 2, vjp_order=1)
    for x in (-fnp.ones((2, 3)), fnp.full((2, 3), 3.0)):
        np.testing.assert_allclose(fg.grad(back.call)(x, 2), fg.grad(_cond_scan)(x, 2))


@pytest.mark.xfail(strict=True, raises=fg.transforms.jit_trace.StagedClosureError,
                   reason="the VJP is exported as jit(vjp(f)), and a cond branch under jit "
                   "cannot close over a value grad traces inside it (jit(grad(f)) fails "
                   "alike): cond has no closure conversion yet")
def test_vjp_of_cond_closing_over_a_differentiated_argument():
    E.export(fg.jit(_cond_scan))(fnp.ones((2, 3)), 2.0).serialize(vjp_order=1)


def test_functions_in_params_and_non_jit_functions_are_refused_clearly():
    def f(x):
        return fg.pure_callback(np.sin, fg.ShapeDtypeStruct(x.shape, x.dtype), x)
    with pytest.raises(E.ExportError, match="param 'callback' of pure_callback has a value "
                                            "of type .*, which cannot be serialized"):
        E.export(fg.jit(f))(fnp.ones(3))
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        E.export(f)


def _sin_with_rule_3t():
    """A custom_jvp function whose rule (3 t) is not its primal's derivative (cos)."""
    @fg.custom_jvp
    def f(x):
        return fnp.sin(x)
    f.defjvp(lambda p, t: (fnp.sin(p[0]), 3.0 * t[0]))
    return f


def _square_with_clipped_grad(np_):
    """A custom_vjp x**2 (sum with a scale w) whose gradient is clipped to [-1, 1]; its bwd
    is smooth in x (tanh) so that a second order exists. ``np_``: funcgrad's numpy or JAX's."""
    def f(x, w):
        return (x * x).sum() * w

    def fwd(x, w):
        return f(x, w), (x, w)

    def bwd(res, g):
        x, w = res
        return np_.tanh(2.0 * x * w) * g, (x * x).sum() * g
    return f, fwd, bwd


def _clipped(custom_vjp, np_):
    f, fwd, bwd = _square_with_clipped_grad(np_)
    f = custom_vjp(f)
    f.defvjp(fwd, bwd)
    return f


def test_custom_jvp_rule_is_kept_through_the_exported_vjp():
    f = _sin_with_rule_3t()
    exp = E.export(fg.jit(f))(fnp.ones(3))
    back = E.deserialize(exp.serialize(vjp_order=1))
    for call in (exp.call, back.call, fg.jit(back.call)):
        np.testing.assert_array_equal(fg.grad(lambda x: call(x).sum())(fnp.ones(3)), 3.0)
    assert exp.has_vjp() and back.has_vjp() and not back.vjp().has_vjp()


def _orders(f):
    """f's gradient, and the gradient of the sum of its gradient, in x."""
    g1 = fg.grad(f)
    return g1, fg.grad(lambda x, w: g1(x, w).sum())


X3, W = fnp.asarray([0.1, -0.7, 2.0]), 0.5


@pytest.mark.parametrize("order", [1, 2])
def test_custom_vjp_rule_is_kept_to_vjp_order_then_refused(order):
    f = _clipped(fg.custom_vjp, fnp)
    back = E.deserialize(E.export(fg.jit(f))(X3, W).serialize(vjp_order=order))
    for k, (want, got) in enumerate(zip(_orders(f), _orders(back.call))):
        if k < order:
            np.testing.assert_allclose(got(X3, W), want(X3, W), rtol=1e-14)
        else:
            with pytest.raises(ValueError, match="^No VJP is available"):
                got(X3, W)
    np.testing.assert_allclose(fg.grad(back.call, argnums=1)(X3, W), (X3 * X3).sum())
    with pytest.raises(E.ExportError, match="does not have vjps of high-enough order"):
        back.serialize(vjp_order=order + 1)
    with pytest.raises(ValueError, match="vjp_order must be a non-negative int"):
        back.serialize(vjp_order=-1)


def test_exported_derivatives_match_jax_export():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from jax import export as jax_export
    jf = _clipped(jax.custom_vjp, jax.numpy)
    jback = jax_export.deserialize(jax_export.export(jax.jit(jf))(
        np.asarray(X3), W).serialize(vjp_order=1))
    back = E.deserialize(E.export(fg.jit(_clipped(fg.custom_vjp, fnp)))(X3, W).serialize(
        vjp_order=1))
    np.testing.assert_allclose(fg.grad(back.call)(X3, W),
                               jax.grad(jback.call)(np.asarray(X3), W), rtol=1e-14)
    messages = []
    for grad, call in ((jax.grad, jback.call), (fg.grad, back.call)):
        with pytest.raises(ValueError) as info:
            grad(lambda x: grad(call)(x, W).sum())(np.asarray(X3))
        messages.append(str(info.value))
    assert messages[1].startswith(messages[0])


def _header_and_body(data):
    (n,) = struct.unpack("<Q", data[8:16])
    return json.loads(data[16:16 + n]), data[16 + n:]


def _pack(header, body=b""):
    text = json.dumps(header).encode()
    return b"FGEXPORT" + struct.pack("<Q", len(text)) + text + body


CRAFTED = {
    "version": (lambda h: h.update(version=2), "serialization version 2 is not supported"),
    "unknown primitive": (lambda h: h["program"]["eqns"][0].update(prim="os.system"),
                          "unknown primitive 'os.system'"),
    "param type": (lambda h: h["program"]["eqns"][-1]["params"].update(
        axis={"pickle": "cos"}),
                   "unsupported value"),
    "object dtype": (lambda h: h["buffers"][0].__setitem__(0, "object"),
                     "a buffer's description"),
    "buffer past end": (lambda h: h["buffers"][0].__setitem__(1, [10 ** 6]),
                        "past the end"),
    "bad var": (lambda h: h["program"].update(in_vars=[10 ** 9]), "in_vars"),
    "control without programs": (lambda h: h["program"]["eqns"].__setitem__(
        0, {"prim": "scan", "params": {}, "in": [], "out": []}), "the params of scan"),
    "bad tree": (lambda h: h.update(in_tree={"t": "set"}), "malformed tree"),
    "vjp not a program": (lambda h: h.update(vjp=7), "an exported program"),
    "vjp of other avals": (lambda h: h.update(vjp=dict(h)), "the VJP's avals disagree"),
}


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_crafted_payloads_are_refused(name):
    data = E.export(fg.jit(_mlp))(PARAMS, X).serialize()
    header, body = _header_and_body(data)
    edit, message = CRAFTED[name]
    edit(header)
    with pytest.raises(E.ExportError, match=message):
        E.deserialize(_pack(header, body))


def test_random_byte_flips_raise_export_errors_or_load_data_only(monkeypatch):
    """No flip ever reaches pickle or eval; each either fails with ExportError (or the
    call's own shape errors) or loads a program of registered primitives."""
    import pickle
    import builtins
    monkeypatch.setattr(pickle, "loads", lambda *a, **k: pytest.fail("unpickled"))
    monkeypatch.setattr(builtins, "eval", lambda *a, **k: pytest.fail("evaluated"))
    data = bytearray(E.export(fg.jit(_mlp))(PARAMS, X).serialize())
    rng = random.Random(0)
    loaded = 0
    for _ in range(300):
        bad = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            bad[rng.randrange(len(bad))] = rng.randrange(256)
        try:
            E.deserialize(bytes(bad))
            loaded += 1
        except E.ExportError:
            pass
    for junk in (b"", b"FGEXPORT", b"FGEXPORT" + b"\xff" * 8, b"\x80\x04pickle", 7, None):
        with pytest.raises(E.ExportError):
            E.deserialize(junk)
    assert loaded < 300
