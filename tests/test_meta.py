"""The meta device (`funcgrad.meta`): arrays with a shape and a dtype and no values.

Registry-driven: every sampled primitive, run on meta arrays (`eval_shape`), gives the
shapes and dtypes its eager result has, and so does its pullback; a primitive whose result's
shape depends on values, or that communicates, refuses with a clear error instead. Then
the transforms over meta arrays, `eval_shape` against JAX's, and the refusals to read values.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import ShapeDtypeStruct, eval_shape, vjp
from funcgrad.meta import is_meta
from funcgrad.primitives import registry
from funcgrad.tree_util import tree_leaves, tree_map

SAMPLED = sorted(n for n, p in registry().items() if p.sample is not None)
# value-shaped results and copies off the meta device (the sampler's device_put is to the
# cpu) have no meta evaluation: they refuse
REFUSED = sorted([n for n, p in registry().items() if p.dynamic_shape] + ["device_put"])
FEWER = settings(max_examples=max(2, settings.default.max_examples // 2))


def structs(tree):
    return [(tuple(np.shape(x)), np.asarray(x).dtype if not hasattr(x, "dtype") else
             np.dtype(x.dtype)) for x in tree_leaves(tree)]


def _pullback(fun):
    def pullback(*args):
        out, f_vjp = vjp(fun, *args)
        return f_vjp(tree_map(fnp.ones_like, out))
    return pullback


@pytest.mark.parametrize("name", SAMPLED)
@FEWER
@given(data=st.data())
def test_primitive_on_meta_arrays_has_the_eager_shapes_and_dtypes(name, data):
    prim = registry()[name]
    for case in prim.sample(prim, data.draw):
        if name in REFUSED:
            with pytest.raises(NotImplementedError, match="Meta|meta"):
                eval_shape(case.fun, *case.args)
            continue
        eager = case.fun(*case.args)
        assert_same_structs(case.fun, case.args, eager, f"{name} {case.label}")
        if prim.differentiable and all(np.asarray(x).dtype.kind in "fc"
                                       for x in tree_leaves(eager)):
            pullback = _pullback(case.fun)
            assert_same_structs(pullback, case.args, pullback(*case.args),
                                f"{name} {case.label} pullback")


def assert_same_structs(fun, args, eager, what):
    """``eval_shape(fun, *args)`` has the shapes and dtypes of ``eager``; a collective
    that would communicate (outside vmap's named axis, where the samplers usually run it)
    may refuse instead."""
    try:
        got = eval_shape(fun, *args)
    except NotImplementedError as e:
        assert "no values to communicate" in str(e), f"{what}: {e}"
        return
    assert all(isinstance(s, ShapeDtypeStruct) for s in tree_leaves(got))
    assert structs(got) == structs(eager), what


def test_meta_arrays_cost_no_memory_and_keep_shape_and_dtype():
    x = funcgrad.device_put(fnp.ones((3, 4), dtype="float32"), "meta")
    assert (x.device, x.shape, x.dtype) == ("meta", (3, 4), np.float32)
    big = funcgrad.eval_shape(lambda a: fnp.sum(a, axis=0), ShapeDtypeStruct((10**6, 10**6),
                                                                             "float32"))
    assert big == ShapeDtypeStruct((10**6,), "float32")
    assert repr(big) == "ShapeDtypeStruct(shape=(1000000,), dtype=float32)"


def test_transforms_over_meta_arrays_give_meta_results():
    w = funcgrad.device_put(fnp.ones((4, 5)), "meta")
    x = funcgrad.device_put(fnp.ones((3, 4)), "meta")

    def loss(w, x):
        return fnp.sum(fnp.tanh(x @ w) ** 2)
    g = funcgrad.grad(loss)(w, x)
    assert is_meta(g) and g.shape == (4, 5)
    out, tangent = funcgrad.jvp(lambda w: fnp.sin(x @ w), (w,), (w,))
    assert is_meta(out) and is_meta(tangent) and tangent.shape == (3, 5)
    per_row = funcgrad.vmap(lambda r: fnp.dot(r, w))(x)
    assert is_meta(per_row) and per_row.shape == (3, 5)
    h = funcgrad.hessian(lambda v: fnp.sum(fnp.exp(v)))(funcgrad.device_put(fnp.ones(3),
                                                                            "meta"))
    assert is_meta(h) and h.shape == (3, 3)


def test_host_constants_combine_with_meta_arrays():
    x = funcgrad.device_put(fnp.ones((2, 3)), "meta")
    y = x * np.arange(3.0) + 1
    assert is_meta(y) and y.shape == (2, 3)


def test_singular_stand_ins_are_replaced_by_identities():
    a = funcgrad.device_put(fnp.ones((2, 3, 3)), "meta")
    assert funcgrad.numpy.linalg.inv(a).shape == (2, 3, 3)
    assert funcgrad.numpy.linalg.cholesky(a).shape == (2, 3, 3)


@pytest.mark.parametrize("read, error, text", [
    (float, RuntimeError, "Tensor.item() cannot be called on meta tensors"),
    (bool, RuntimeError, "Tensor.item() cannot be called on meta tensors"),
    (lambda a: a.item(), RuntimeError, "Tensor.item() cannot be called on meta tensors"),
    (np.asarray, TypeError, "can't convert meta device type tensor to numpy"),
    (lambda a: a.tolist(), NotImplementedError, "Cannot copy out of meta tensor; no data!"),
    (lambda a: funcgrad.device_put(a, "cpu"), NotImplementedError,
     "Cannot copy out of meta tensor; no data!"),
    (fnp.nonzero, NotImplementedError, "nonzero: attempted to run this operator with Meta"),
])
def test_reading_values_of_a_meta_array_raises(read, error, text):
    a = funcgrad.device_put(fnp.ones(1), "meta")
    with pytest.raises(error) as info:
        read(a)
    assert text in str(info.value)


def test_eval_shape_agrees_with_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")

    def model(ours):
        def f(w, x, scale):
            h = ours.tanh(x @ w["kernel"] + w["bias"]) * scale
            return {"out": ours.mean(h, axis=0), "norm": ours.linalg.norm(h, axis=-1)}
        return f
    params = {"kernel": ShapeDtypeStruct((8, 16), "float32"),
              "bias": ShapeDtypeStruct((16,), "float32")}
    jax_params = {k: jax.ShapeDtypeStruct(v.shape, v.dtype) for k, v in params.items()}
    x = np.zeros((4, 8), np.float32)
    ours = eval_shape(model(fnp), params, x, 2.0)
    theirs = jax.eval_shape(model(jnp), jax_params, x, 2.0)
    assert {k: (v.shape, v.dtype) for k, v in ours.items()} == \
        {k: (v.shape, np.dtype(v.dtype)) for k, v in theirs.items()}


@pytest.mark.parametrize("xs, ys", [((2, 3), (4, 5)), ((2, 2, 3), (3, 3, 4)), ((3,), (2,)),
                                    ((5, 2, 3), (4, 3, 6))])
def test_products_on_meta_arrays_raise_the_eager_errors(xs, ys):
    """matmul has a shape function of its own on meta arrays (a product of stand-ins
    would cost a real product): its refusals must still be the kernel's."""
    with pytest.raises((ValueError, TypeError)) as eager:
        fnp.matmul(np.ones(xs), np.ones(ys))
    with pytest.raises(eager.type) as meta:
        fnp.matmul(funcgrad.device_put(fnp.ones(xs), "meta"), np.ones(ys))
    assert str(meta.value) == str(eager.value)


def test_a_product_on_meta_arrays_computes_nothing():
    big = ShapeDtypeStruct((4096, 4096), "float32")
    out = eval_shape(lambda a, b: fnp.tanh(a @ b) @ a, big, big)
    assert out == big


def test_control_flow_on_meta_values():
    """A meta predicate or index picks no branch: every branch runs for its shapes (and
    they must agree, as JAX requires); a loop on a meta condition has its body's shapes."""
    lax = funcgrad.lax
    x = funcgrad.device_put(fnp.ones((2, 3)), "meta")
    out = lax.cond(fnp.sum(x) > 0, lambda a: fnp.sin(a), lambda a: a * 2, x)
    assert is_meta(out) and out.shape == (2, 3)
    out = lax.switch(fnp.astype(fnp.sum(x), "int32"), [fnp.cos, fnp.exp, fnp.tanh], x)
    assert is_meta(out) and out.shape == (2, 3)
    with pytest.raises(TypeError, match="cond branches must have equal output types"):
        lax.cond(fnp.sum(x) > 0, lambda a: a, lambda a: a[0], x)
    carry = lax.while_loop(lambda c: fnp.sum(c[1]) < 10, lambda c: (c[0] + 1, c[1] * 2),
                           (0, x))
    assert is_meta(carry[1]) and carry[1].shape == (2, 3)
    with pytest.raises(TypeError, match="while_loop body function carry input and carry output"):
        lax.while_loop(lambda c: fnp.sum(c) < 10, lambda c: fnp.sum(c), x)
    total = lax.fori_loop(0, 3, lambda i, c: c + x, fnp.zeros((2, 3)))
    assert is_meta(total) and total.shape == (2, 3)
