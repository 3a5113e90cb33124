"""`funcgrad.jit`: composition with the other transforms, signatures and the cache,
static and donated arguments, the errors a traced value raises, and the inspectable
programs (make_jaxpr, lower().as_text(), the generated source)."""
import re
import warnings

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import (checkpoint, grad, hessian, jacfwd, jit, jvp, make_jaxpr,
                      value_and_grad, vjp)
from funcgrad.core import ConcretizationTypeError


def f(x, y):
    return fnp.sum(fnp.tanh(x * y + 1.0) * fnp.exp(-x))


X = np.linspace(-1.0, 1.0, 5)
Y = np.linspace(0.5, 2.0, 5)


def identical(a, b):
    for u, v in zip(funcgrad.tree_util.tree_leaves(a), funcgrad.tree_util.tree_leaves(b)):
        u, v = np.asarray(u), np.asarray(v)
        assert u.dtype == v.dtype and u.shape == v.shape
        assert np.array_equal(u, v, equal_nan=True), (u, v)


# ---------------------------------------------------------------------------------------
# composition
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("calls", [1, 2, 3])
def test_jit_of_grad_equals_eager(calls):
    g = jit(grad(f, argnums=(0, 1)))
    for _ in range(calls):
        identical(grad(f, argnums=(0, 1))(X, Y), g(X, Y))


def test_grad_of_jit_is_one_node_and_equals_eager():
    jf = jit(f)
    identical(grad(f)(X, Y), grad(jf)(X, Y))
    identical(grad(f)(X, Y), grad(jf)(X, Y))  # compiled VJP from the cache
    tape = funcgrad.make_tape(jf)(X, Y)
    assert tape.primitives == ["jit_call"]


def test_jit_of_jvp_and_jvp_of_jit():
    t = np.ones(5)

    def push(x, t):
        return jvp(lambda x: f(x, Y), (x,), (t,))
    expected = push(X, t)
    identical(expected, jit(push)(X, t))
    identical(expected, jit(push)(X, t))
    jf = jit(lambda x: f(x, Y))
    identical(expected, jvp(jf, (X,), (t,)))


def test_jit_of_checkpoint_and_checkpoint_of_jit():
    def body(x):
        return fnp.sin(fnp.cos(x) * x)

    def loss(x):
        return fnp.sum(checkpoint(body)(x) ** 2)
    identical(grad(loss)(X), jit(grad(loss))(X))
    identical(grad(loss)(X), jit(grad(loss))(X))
    identical(grad(loss)(X), grad(lambda x: fnp.sum(checkpoint(jit(body))(x) ** 2))(X))


def test_nested_jit_is_inlined():
    inner = jit(lambda x: fnp.sin(x) * 2.0)
    outer = jit(lambda x: inner(x) + inner(x + 1.0))
    expected = np.sin(X) * 2.0 + np.sin(X + 1.0) * 2.0
    identical(expected, outer(X))
    identical(expected, outer(X))
    assert "jit_call" not in make_jaxpr(outer)(X).primitives


def test_hessian_of_jit_and_jit_of_hessian():
    def g(x):
        return fnp.sum(fnp.sin(x) * x ** 3)
    expected = hessian(g)(X)
    np.testing.assert_allclose(hessian(jit(g))(X), expected, rtol=1e-14, atol=1e-14)
    identical(expected, jit(hessian(g))(X))
    identical(expected, jit(hessian(g))(X))
    identical(jacfwd(grad(g))(X), jit(jacfwd(grad(g)))(X))


def test_value_and_grad_with_aux_and_pytrees():
    def loss(params, batch):
        pred = fnp.tanh(batch["x"] @ params["w"] + params["b"])
        err = pred - batch["y"]
        return fnp.mean(err ** 2), {"pred": pred, "n": batch["x"].shape[0]}
    rng = np.random.RandomState(0)
    params = {"w": rng.randn(3, 2), "b": rng.randn(2)}
    batch = {"x": rng.randn(4, 3), "y": rng.randn(4, 2)}
    vg = value_and_grad(loss, has_aux=True)
    jvg = jit(vg)
    for _ in range(2):
        (value, aux), grads = jvg(params, batch)
        (e_value, e_aux), e_grads = vg(params, batch)
        identical(e_value, value)
        identical(e_aux["pred"], aux["pred"])
        identical(e_grads, grads)
        assert set(grads) == {"w", "b"} and int(aux["n"]) == 4
    assert jvg._cache_size() == 1


def test_outputs_of_any_structure_and_constants():
    @jit
    def h(x):
        return {"a": (x, 2 * x), "const": fnp.ones(2), "none": None}
    for _ in range(2):
        out = h(X)
        identical(X, out["a"][0])
        identical(2 * X, out["a"][1])
        identical(np.ones(2), out["const"])
        assert out["none"] is None and isinstance(out["a"][0], funcgrad.Array)


def test_a_jitted_identity_returns_its_input_values():
    ident = jit(lambda x: x)
    a = fnp.asarray(X)
    identical(X, ident(a))
    identical(X, ident(a))


# ---------------------------------------------------------------------------------------
# static arguments and the cache
# ---------------------------------------------------------------------------------------

def power(x, n):
    out = x
    for _ in range(n - 1):
        out = out * x
    return out


def test_static_argnums_and_argnames():
    by_num = jit(power, static_argnums=1)
    by_name = jit(power, static_argnames="n")
    identical(X ** 3, by_num(X, 3))
    identical(X * X * X, by_name(X, n=3))
    identical(X * X * X, by_name(X, 3))  # positional, named static
    identical(X * X, by_num(X, 2))
    assert by_num._cache_size() == 2
    by_num(X, 3)
    assert by_num._cache_size() == 2


def test_unhashable_static_argument_is_a_clear_error():
    jitted = jit(lambda x, shape: fnp.reshape(x, shape), static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        jitted(X, [5, 1])
    assert jitted(X, (5, 1)).shape == (5, 1)


def test_a_traced_value_as_shape_is_a_concretization_error():
    jitted = jit(lambda x, n: fnp.zeros(n) + x)
    with pytest.raises(ConcretizationTypeError):
        jitted(1.0, np.asarray(3))


def test_retracing_rules():
    jf = jit(lambda x: x * 2)
    jf(np.ones(3))
    jf(np.ones(3))
    assert jf._cache_size() == 1                 # same signature: a hit
    jf(np.zeros(3))
    assert jf._cache_size() == 1                 # values do not matter
    jf(np.ones(4))
    assert jf._cache_size() == 2                 # shape
    jf(np.ones(3, np.float32))
    assert jf._cache_size() == 3                 # dtype
    jf(2.0)
    assert jf._cache_size() == 4                 # a weak Python float
    jf(3.0)
    assert jf._cache_size() == 4                 # another float: same program
    jf(np.float64(2.0))
    assert jf._cache_size() == 5                 # a strong 0-d float64 is not weak
    jf(2)
    assert jf._cache_size() == 6                 # a Python int
    jf((np.ones(3),)[0])
    assert jf._cache_size() == 6


def test_weak_python_scalars_keep_the_arrays_dtype():
    jf = jit(lambda x, s: x * s)
    x32 = np.ones(3, np.float32)
    for s in (2.0, 3.0):
        out = jf(x32, s)
        assert out.dtype == np.float32
        identical(x32 * s, out)


def test_retrace_warning_names_the_changing_argument():
    jf = jit(lambda x, y: x + y)
    y = np.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, jf.RETRACE_WARNING + 3):
            jf(np.ones(n), 1.0)
    texts = [str(w.message) for w in caught]
    assert len(texts) == 1, texts
    assert "argument leaf 0" in texts[0] and "keeps changing" in texts[0]
    del y


def test_donated_argument_is_reused_and_deleted():
    jf = jit(lambda x, y: fnp.sin(x) * y + 1.0, donate_argnums=0)
    big_x, big_y = np.linspace(-1, 1, 10_000), np.linspace(0, 1, 10_000)
    for _ in range(2):
        x = fnp.asarray(big_x.copy())
        out = jf(x, big_y)
        identical(np.sin(big_x) * big_y + 1.0, out)
        with pytest.raises(RuntimeError, match="donated"):
            np.asarray(x)
    source = jf.lower(fnp.asarray(big_x), big_y).compile().as_text()
    assert "out=v0" in source, source
    # small arrays: out= costs more than a fresh buffer, so none is used
    assert "out=" not in jf.lower(fnp.asarray(X), Y).compile().as_text()


def test_transposed_column_major_product_is_computed_row_major():
    """A weight read as ``w.T`` gets its gradient from one row-major ``matmul_tn`` (the
    column-major product and the transpose back folded), bit for bit eager's, also where
    the function reads ``w.T`` once more."""
    x, w = np.linspace(-1, 1, 12).reshape(3, 4), np.linspace(0, 1, 8).reshape(2, 4)
    g = funcgrad.grad(lambda w, x: fnp.sum(fnp.tanh(x @ w.T)))
    jg = jit(g)
    source = jg.lower(fnp.asarray(w), x).compile().as_text()
    assert "matmul_tn" in source and source.count("transpose") == 1, source  # the w.T
    identical(g(fnp.asarray(w), x), jg(fnp.asarray(w), x))
    both = jit(funcgrad.grad(lambda w, x: fnp.sum(fnp.tanh(x @ w.T)) + fnp.sum(w.T * 0)))
    identical(g(fnp.asarray(w), x), both(fnp.asarray(w), x))


def test_small_donated_buffer_takes_a_returned_result_only():
    """A result the program returns is written into a dead donated input of its aval
    whatever the size (a training step's small bias update: its caller would copy it
    there); a small intermediate value never is, nor a returned one into another
    input that is not donated."""
    jf = jit(lambda w, g: w - 0.1 * g, donate_argnums=0)
    w, g = np.linspace(-1, 1, 10), np.full(10, 0.5)
    source = jf.lower(fnp.asarray(w), g).compile().as_text()
    assert "out=v0" in source and source.count("out=") == 1, source
    donated = fnp.asarray(w.copy())
    identical(w - 0.1 * g, jf(donated, g))
    jf = jit(lambda w, g: fnp.sin(w) * g, donate_argnums=0)
    assert "out=" not in jf.lower(fnp.asarray(w), g).compile().as_text()
    jf = jit(lambda w, g: g - 0.1 * w, donate_argnums=0)  # g is not donated
    assert "out=" not in jf.lower(fnp.asarray(w), g).compile().as_text()


def test_donated_buffer_is_reused_after_its_views_die_and_only_then():
    """A donated matrix read through a transpose (a layer's ``w.T``) is still its own
    memory: the update is written into it once the view is dead, never while it lives."""
    big_w, big_g = np.linspace(-1, 1, 10_000).reshape(100, 100), np.full((100, 100), 0.5)
    x = np.linspace(0, 1, 100)

    def step(w, g):
        return x @ w.T, w - 0.1 * g
    jf = jit(step, donate_argnums=0)
    source = jf.lower(fnp.asarray(big_w), big_g).compile().as_text()
    assert "out=v0" in source, source
    y, new = jf(fnp.asarray(big_w.copy()), big_g)
    identical(x @ big_w.T, y)
    identical(big_w - 0.1 * big_g, new)

    def late_view(w, g):  # the view is read after the update: w's buffer stays
        t = w.T
        return w - 0.1 * g, x @ t
    jf = jit(late_view, donate_argnums=0)
    assert "out=v0" not in jf.lower(fnp.asarray(big_w), big_g).compile().as_text()
    new, y = jf(fnp.asarray(big_w.copy()), big_g)
    identical(big_w - 0.1 * big_g, new)
    identical(x @ big_w.T, y)


def test_inputs_are_never_overwritten_without_donation():
    jf = jit(lambda x: fnp.exp(fnp.sin(x)) + 1.0)
    x = fnp.asarray(X.copy())
    for _ in range(3):
        jf(x)
    identical(X, x)


# ---------------------------------------------------------------------------------------
# traced values in Python control flow
# ---------------------------------------------------------------------------------------

def _bool_branch(x):
    if x > 0:  # the line the error names
        return x
    return -x


def test_python_if_on_a_traced_value():
    with pytest.raises(ConcretizationTypeError) as info:
        jit(_bool_branch)(1.0)
    text = str(info.value)
    line = _bool_branch.__code__.co_firstlineno + 1
    assert f"test_jit.py:{line}" in text, text
    assert "Abstract tracer value encountered where concrete value is expected" in text
    assert "static_argnums" in text and "funcgrad.lax.cond" in text


@pytest.mark.parametrize("convert", [float, int, bool, lambda x: x.item(),
                                     lambda x: np.asarray(x), lambda x: range(x)])
def test_conversions_of_traced_values(convert):
    with pytest.raises(ConcretizationTypeError, match="test_jit.py:[0-9]+"):
        jit(lambda x: convert(x))(fnp.asarray(3))


def test_escaped_tracer():
    leaked = []

    @jit
    def leak(x):
        leaked.append(x * 2)
        return x
    leak(X)
    with pytest.raises(Exception, match="(?i)escaped|leaked"):
        fnp.sin(leaked[0])


def test_value_dependent_shapes_are_refused():
    with pytest.raises(ConcretizationTypeError, match="where"):
        jit(lambda x: x[x > 0])(X)


def test_non_array_arguments_are_a_clear_error():
    with pytest.raises(TypeError, match="static_argnums"):
        jit(lambda x, s: x)(X, "text")


# ---------------------------------------------------------------------------------------
# inspection
# ---------------------------------------------------------------------------------------

def test_make_jaxpr_prints_the_forward_program():
    text = str(make_jaxpr(lambda x, y: fnp.sin(x) * y)(X, Y))
    assert text.startswith("{ lambda a:f64[5] b:f64[5]. let"), text
    assert "sin" in text and "mul" in text and "in (" in text


def test_lower_as_text_and_compiled_source():
    jf = jit(lambda x, y: fnp.sum(fnp.exp(x) * y + fnp.exp(x)))
    lowered = jf.lower(X, Y)
    text = lowered.as_text()
    assert text.count("exp") == 2  # the traced program is not optimised
    program = lowered.compile()
    source = program.as_text()
    assert source.startswith("def program(")
    assert source.count("(v0") + source.count("(v0,") >= 1
    assert len(re.findall(r"= exp_\d+\(v0\)", source)) == 1, source  # CSE: one exp
    assert "return (" in source and "del " in source
    identical(np.sum(np.exp(X) * Y + np.exp(X)), program(X, Y))  # what jf returns
    assert repr(jf) == "<jitted function <lambda>>"


def test_dead_code_and_no_ops_are_removed():
    def g(x):
        unused = fnp.cos(x) * 3.0  # noqa: F841
        return fnp.reshape(fnp.reshape(x, (5,)), (5,)) + 1.0
    source = jit(g).lower(X).compile().as_text()
    assert re.findall(r" = (\w+)_\d+\(", source) == ["add"], source


def test_a_device_transfer_of_unchanged_shape_and_dtype_stays_in_the_program():
    """Shape and dtype equal do not make device_put a no-op: the program would hand back
    the array on the device it came from (a silent wrong answer on a GPU machine)."""
    source = jit(lambda x: funcgrad.device_put(x * 2.0, "cpu")).lower(X).compile().as_text()
    assert re.findall(r" = (\w+)_\d+\(", source) == ["mul", "device_put"], source


def test_jit_as_decorator_with_options_and_methods():
    @jit(static_argnames=("n",))
    def p(x, n=2):
        return power(x, n)
    identical(X * X, p(X))
    identical(X * X * X, p(X, n=3))

    class Model:
        scale = 3.0

        @jit(static_argnums=0)
        def apply(self, x):
            return x * self.scale
    identical(X * 3.0, Model().apply(X))
    assert jit(p) is p
