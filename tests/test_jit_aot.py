"""JAX's ahead-of-time path: ``jit(f).lower(*args).compile()`` is called as ``jit(f)`` is
and returns what it returns; `ShapeDtypeStruct` arguments lower without values; the
single-device API (``device_count``, ``local_devices``, ``Array.sharding``); ``dot``'s
shape error is JAX's TypeError."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.example_libraries import stax


def test_compiled_is_called_as_the_jitted_function():
    def f(x, d, scale):
        return {"y": fnp.sin(x) * d["k"] * scale, "n": x.sum()}
    jitted = funcgrad.jit(f, static_argnums=2)
    x, d = fnp.ones(3), {"k": fnp.asarray(2.0)}
    compiled = jitted.lower(x, d, 3).compile()
    got, expected = compiled(x, {"k": fnp.asarray(5.0)}, 3), jitted(x, {"k": fnp.asarray(5.0)}, 3)
    assert set(got) == {"y", "n"}
    np.testing.assert_array_equal(np.asarray(got["y"]), np.asarray(expected["y"]))
    assert "def program(" in compiled.as_text()
    with pytest.raises(TypeError, match="Argument types differ from the types for which "
                                        "this computation was compiled"):
        compiled(fnp.ones(4), d, 3)
    with pytest.raises(TypeError, match="another structure"):
        compiled(x, {"other": fnp.asarray(1.0)}, 3)
    single = funcgrad.jit(lambda x: x * 2).lower(x).compile()
    assert isinstance(single(x), funcgrad.Array)  # not a one-element tuple


def test_shape_dtype_structs_lower_without_values():
    spec = funcgrad.ShapeDtypeStruct((1000, 3000), fnp.float32)
    lowered = funcgrad.jit(lambda a: a @ a.T).lower(spec)
    assert "f32[1000,1000]" in lowered.as_text()
    compiled = lowered.compile()
    small = funcgrad.jit(lambda a: a @ a.T).lower(
        funcgrad.ShapeDtypeStruct((2, 3), fnp.float32)).compile()
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(np.asarray(small(fnp.asarray(a))), a @ a.T)
    assert compiled is not None


def test_single_device_api():
    assert funcgrad.device_count() >= 1 and "cpu" in funcgrad.local_devices()
    x = fnp.ones(2)
    assert x.sharding.device_set == {"cpu"} and x.sharding.num_devices == 1
    assert x.sharding == fnp.zeros(3).sharding
    np.testing.assert_allclose(np.asarray(stax.logsoftmax(fnp.asarray([0.0, 0.0]))),
                               np.log([0.5, 0.5]))


def test_dot_shape_errors_are_jaxs():
    jnp = pytest.importorskip("jax.numpy")
    for a, b in (((2, 3), (2, 3)), ((3,), (4,)), ((2, 3), (4,))):
        with pytest.raises(TypeError) as theirs:
            jnp.dot(jnp.ones(a), jnp.ones(b))
        with pytest.raises(TypeError) as ours:
            fnp.dot(fnp.ones(a), fnp.ones(b))
        assert str(ours.value).startswith(str(theirs.value))


def test_cost_analysis_counts_as_jax_does():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    a, b = np.ones((4, 8), np.float32), np.ones((8, 3), np.float32)
    theirs = jax.jit(lambda a, b: jnp.tanh(a @ b).sum()).lower(a, b).cost_analysis()
    lowered = funcgrad.jit(lambda a, b: fnp.tanh(a @ b).sum()).lower(fnp.asarray(a),
                                                                    fnp.asarray(b))
    ours = lowered.cost_analysis()
    assert ours["flops"] == theirs["flops"] == 203.0  # 2*4*8*3 for the product, 11 adds
    assert ours["transcendentals"] == theirs["transcendentals"] == 12.0
    assert ours["bytes accessed"] > 0 and lowered.compile().cost_analysis() == ours


def test_trace_gives_jaxs_traced_stage():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")

    def f(x, d, scale):
        return {"a": x * scale, "b": (x.sum(), d["k"] * x)}
    x = np.arange(3, dtype=np.float32)
    theirs = jax.jit(f, static_argnums=2).trace(jnp.asarray(x), {"k": 1.0}, 2.0)
    jitted = funcgrad.jit(f, static_argnums=2)
    ours = jitted.trace(fnp.asarray(x), {"k": 1.0}, 2.0)
    assert ours.fun_name == theirs.fun_name == "f"
    assert str(ours.jaxpr) == str(funcgrad.make_jaxpr(f, static_argnums=2)(
        fnp.asarray(x), {"k": 1.0}, 2.0))
    assert "reduce_sum" in {e.primitive.name for e in ours.jaxpr.eqns} & {
        e.primitive.name for e in theirs.jaxpr.eqns}
    got = funcgrad.tree_util.tree_map(lambda s: (s.shape, np.dtype(s.dtype).name),
                                      ours.out_info)
    want = jax.tree_util.tree_map(lambda s: (s.shape, np.dtype(s.dtype).name),
                                  theirs.out_info)
    assert got == want
    def avals(tree_map, avals):  # (a weak Python float's width is each library's default)
        return tree_map(lambda a: (a.shape, a.weak_type, a.weak_type or a.dtype.name), avals)
    assert avals(funcgrad.tree_util.tree_map, ours.in_avals) == avals(
        jax.tree_util.tree_map, theirs.in_avals)
    lowered = ours.lower()
    assert lowered.as_text() == jitted.lower(fnp.asarray(x), {"k": 1.0}, 2.0).as_text()
    out = lowered.compile()(fnp.asarray(x), {"k": 3.0}, 2.0)
    np.testing.assert_allclose(np.asarray(out["b"][1]), 3.0 * x)


def test_trace_accepts_shape_dtype_structs():
    jax = pytest.importorskip("jax")
    spec = funcgrad.ShapeDtypeStruct((2, 5), fnp.int32)
    ours = funcgrad.jit(lambda a: (a.T @ a, a.astype(fnp.float32))).trace(spec)
    theirs = jax.jit(lambda a: (a.T @ a, a.astype("float32"))).trace(
        jax.ShapeDtypeStruct((2, 5), "int32"))
    assert [(s.shape, np.dtype(s.dtype)) for s in ours.out_info] == [
        (s.shape, np.dtype(s.dtype)) for s in theirs.out_info]
