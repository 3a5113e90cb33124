"""The elementwise family: unary and binary functions, where/clip, comparisons and bit
logic, the Array operators, and funcgrad.scipy.special.

Values are checked against numpy (and scipy) on scalars, broadcasting and empty arrays;
dtypes (float32 stays float32 through forward and backward); JAX's conventions for complex
inputs and for ties; stability at +-1000; the pure-numpy special-function fallbacks against
scipy. Derivatives of every primitive against finite differences are in
test_registry_grads.py.
"""
import math

import numpy as np
import pytest
import scipy.special as ss
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.primitives import special as special_prims
from funcgrad.scipy import special as S

# name -> (domain of real test values, accepts complex)
UNARY = {
    "negative": ((-2, 2), True), "positive": ((-2, 2), True), "sin": ((-2, 2), True),
    "cos": ((-2, 2), True), "tan": ((-1.2, 1.2), True), "arcsin": ((-0.9, 0.9), True),
    "arccos": ((-0.9, 0.9), True), "arctan": ((-2, 2), True), "sinh": ((-2, 2), True),
    "cosh": ((-2, 2), True), "tanh": ((-2, 2), True), "arcsinh": ((-2, 2), True),
    "arccosh": ((1.1, 3), True), "arctanh": ((-0.9, 0.9), True), "exp": ((-2, 2), True),
    "exp2": ((-2, 2), True), "expm1": ((-2, 2), True), "log": ((0.1, 2), True),
    "log2": ((0.1, 2), True), "log10": ((0.1, 2), True), "log1p": ((-0.5, 2), True),
    "sqrt": ((0.1, 2), True), "cbrt": ((-2, 2), False), "square": ((-2, 2), True),
    "reciprocal": ((0.3, 2), True), "abs": ((-2, 2), True), "absolute": ((-2, 2), True),
    "fabs": ((-2, 2), False), "sign": ((-2, 2), True), "floor": ((-3, 3), False),
    "ceil": ((-3, 3), False), "trunc": ((-3, 3), False), "fix": ((-3, 3), False),
    "rint": ((-3, 3), True), "round": ((-3, 3), True), "around": ((-3, 3), True),
    "sinc": ((-2, 2), True), "deg2rad": ((-200, 200), False),
    "rad2deg": ((-4, 4), False), "real": ((-2, 2), True), "imag": ((-2, 2), True),
    "conj": ((-2, 2), True), "conjugate": ((-2, 2), True), "angle": ((-2, 2), True),
    "isfinite": ((-2, 2), True), "isnan": ((-2, 2), True), "isinf": ((-2, 2), True),
    "signbit": ((-2, 2), False), "logical_not": ((-2, 2), True),
}
# name -> (domains of x and y, accepts complex)
BINARY = {
    "add": (((-2, 2), (-2, 2)), True), "subtract": (((-2, 2), (-2, 2)), True),
    "multiply": (((-2, 2), (-2, 2)), True), "divide": (((-2, 2), (0.3, 2)), True),
    "true_divide": (((-2, 2), (0.3, 2)), True), "power": (((0.1, 2), (-2, 2)), True),
    "float_power": (((0.1, 2), (-2, 2)), True), "floor_divide": (((-5, 5), (0.3, 2)), False),
    "mod": (((-5, 5), (-2, -0.3)), False), "remainder": (((-5, 5), (0.3, 2)), False),
    "fmod": (((-5, 5), (0.3, 2)), False), "maximum": (((-2, 2), (-2, 2)), False),
    "minimum": (((-2, 2), (-2, 2)), False), "fmax": (((-2, 2), (-2, 2)), False),
    "fmin": (((-2, 2), (-2, 2)), False), "arctan2": (((-2, 2), (-2, 2)), False),
    "hypot": (((-2, 2), (-2, 2)), False), "logaddexp": (((-2, 2), (-2, 2)), False),
    "logaddexp2": (((-2, 2), (-2, 2)), False), "copysign": (((-2, 2), (-2, 2)), False),
    "equal": (((-2, 2), (-2, 2)), True), "not_equal": (((-2, 2), (-2, 2)), True),
    "less": (((-2, 2), (-2, 2)), False), "less_equal": (((-2, 2), (-2, 2)), False),
    "greater": (((-2, 2), (-2, 2)), False), "greater_equal": (((-2, 2), (-2, 2)), False),
    "logical_and": (((-1, 1), (-1, 1)), False), "logical_or": (((-1, 1), (-1, 1)), False),
    "logical_xor": (((-1, 1), (-1, 1)), False),
}
# differentiable unary functions whose derivative is not identically zero
SMOOTH = [n for n in UNARY if n not in {
    "sign", "floor", "ceil", "trunc", "fix", "rint", "round", "around", "isfinite",
    "isnan", "isinf", "signbit", "logical_not", "imag", "angle"}]


def values(rng, shape, domain, dtype=np.float64):
    lo, hi = domain
    x = rng.uniform(lo, hi, shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.uniform(0.1, 0.9, shape)
    return x.astype(dtype)


def assert_like(actual, expected, rtol=1e-6):
    expected = np.asarray(expected)
    assert isinstance(actual, fg.Array)
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    np.testing.assert_allclose(actual.to_numpy(), expected, rtol=rtol, atol=1e-7)


# -- values against numpy ---------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
       seed=st.integers(0, 2**16))
def test_unary_values_match_numpy(name, dtype, shape, seed):
    domain, complex_ok = UNARY[name]
    if np.issubdtype(dtype, np.complexfloating) and not complex_ok:
        return
    x = values(np.random.RandomState(seed), shape, domain, dtype)
    with np.errstate(all="ignore"):
        assert_like(getattr(fnp, name)(x), getattr(np, name)(x),
                    rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_python_scalars_and_integers(name):
    domain, _ = UNARY[name]
    value = int(max(domain[0], 1.0)) if name != "arccosh" else 2
    if name in ("arcsin", "arccos", "arctanh"):
        value = 0
    # JAX's reciprocal of integers is a float (numpy's is an integer)
    as_expected = float if name == "reciprocal" else (lambda v: v)
    with np.errstate(all="ignore"):
        assert_like(getattr(fnp, name)(value), getattr(np, name)(as_expected(value)))
        ints = np.array([value, value])
        expected = ints.astype(float) if name == "reciprocal" else ints
        assert_like(getattr(fnp, name)(ints), getattr(np, name)(expected))


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3,
                                                min_side=0, max_side=3),
       seed=st.integers(0, 2**16))
def test_binary_values_match_numpy_with_broadcasting(name, dtype, shapes, seed):
    (dx, dy), complex_ok = BINARY[name]
    if np.issubdtype(dtype, np.complexfloating) and not complex_ok:
        return
    rng = np.random.RandomState(seed)
    x = values(rng, shapes.input_shapes[0], dx, dtype)
    y = values(rng, shapes.input_shapes[1], dy, dtype)
    with np.errstate(all="ignore"):
        assert_like(getattr(fnp, name)(x, y), _as_jax(name, getattr(np, name)(x, y), x),
                    rtol=1e-5 if dtype == np.float32 else 1e-12)


def _as_jax(name, expected, x):
    """numpy's result in JAX's dtype: float_power keeps the inputs' inexact type (numpy
    computes it in float64)."""
    if name != "float_power":
        return expected
    return np.asarray(expected).astype(np.result_type(x.dtype, np.float16))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_with_python_scalars_keeps_the_array_dtype(name):
    (dx, dy), _ = BINARY[name]
    x = np.array([dx[1] * 0.7, dx[0] * 0.4], np.float32)
    y = dy[1] * 0.6
    with np.errstate(all="ignore"):
        assert_like(getattr(fnp, name)(x, y), _as_jax(name, getattr(np, name)(x, y), x),
                    rtol=1e-5)
        assert_like(getattr(fnp, name)(y, x), _as_jax(name, getattr(np, name)(y, x), x),
                    rtol=1e-5)


def test_empty_arrays_forward_and_backward():
    empty = np.zeros((0, 3), np.float32)
    for name in UNARY:
        with np.errstate(all="ignore"):
            assert_like(getattr(fnp, name)(empty), getattr(np, name)(empty))
    for name in BINARY:
        assert_like(getattr(fnp, name)(empty[:, :1], np.ones(3, np.float32)),
                    _as_jax(name, getattr(np, name)(empty[:, :1], np.ones(3, np.float32)),
                            empty))
    for name in SMOOTH:
        g = fg.grad(lambda x: fnp.sum(getattr(fnp, name)(x)))(empty)
        assert g.shape == (0, 3) and g.dtype == np.float32
    gx, gy = fg.grad(lambda x, y: fnp.sum(fnp.maximum(x, y) * fnp.power(x, y)), (0, 1))(
        empty[:, :1], np.ones(3, np.float32))
    assert gx.shape == (0, 1) and gy.shape == (3,) and not gy.to_numpy().any()


def test_integer_arithmetic_follows_numpy():
    a, b = np.array([7, -7, 3, 0]), np.array([2, 2, -2, 5])
    for name in ["add", "subtract", "multiply", "floor_divide", "mod", "fmod", "power",
                 "maximum", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
                 "right_shift", "true_divide"]:
        assert_like(getattr(fnp, name)(a, np.abs(b) if name == "power" or "shift" in name
                                       else b),
                    getattr(np, name)(a, np.abs(b) if name == "power" or "shift" in name
                                      else b))
    assert_like(fnp.invert(a), np.invert(a))
    assert_like(fnp.square(a), np.square(a))
    q, r = fnp.divmod(a, b)
    assert_like(q, a // b) and assert_like(r, a % b)


def test_round_decimals_sinc_at_zero_and_angle_in_degrees():
    x = np.array([1.2345, -2.5, 2.5, 0.5])
    assert_like(fnp.round(x, 2), np.round(x, 2))
    assert_like(fnp.around(x), np.round(x))
    assert_like(fnp.sinc(np.array([0.0, 1e-9, 0.5])), np.sinc([0.0, 1e-9, 0.5]))
    z = np.array([1 + 1j, -1, 2j])
    assert_like(fnp.angle(z, deg=True), np.angle(z, deg=True))
    assert_like(fnp.angle(np.array([-1.0, 2.0]), deg=True), np.angle([-1.0, 2.0], True))


def test_where_clip_and_their_forms():
    x = np.array([-1.5, 0.0, 0.5, 2.0], np.float32)
    assert_like(fnp.where(x > 0, x, 0), np.where(x > 0, x, 0))
    assert_like(fnp.where(x > 0, x, x[:, None]), np.where(x > 0, x, x[:, None]))
    assert_like(fnp.clip(x, 0, 1), np.clip(x, 0, 1))
    assert_like(fnp.clip(x, None, 1), np.clip(x, None, 1))
    assert_like(fnp.clip(x, min=-1), np.clip(x, -1, None))
    assert_like(fnp.clip(x, np.zeros(4, np.float32), 1), np.clip(x, 0, 1))
    assert_like(fnp.where(np.zeros((2, 0)) > 0, 1.0, 2.0), np.where(np.zeros((2, 0)) > 0,
                                                                     1.0, 2.0))
    with pytest.raises(ValueError, match="either only the condition"):
        fnp.where(x > 0, x)


@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
       dtype=st.sampled_from([np.float16, np.float32, np.float64]),
       zero=st.sampled_from([0, 0.0]), seed=st.integers(0, 2**16))
def test_where_against_a_zero_gives_numpys_exact_bits(shape, dtype, zero, seed):
    """The bitwise select behind where(c, x, 0) (every select and ReLU VJP on arrays of
    2048 elements or more) must equal np.where bit for bit: +0.0 where not selected, infs
    and nans kept where selected. Checked on the select itself and through where, on the
    drawn shape and on it repeated up to the size where the select takes over."""
    from funcgrad.primitives.kernels.elementwise import _bit_select, where as _where_impl
    rng = np.random.RandomState(seed)
    c = np.asarray(rng.uniform(size=shape) < 0.5)
    x = np.asarray(rng.choice([-1.5, -0.0, 2.0, np.inf, -np.inf, np.nan], size=shape), dtype)
    big = (2048 // max(c.size, 1) + 1,) + (1,) * c.ndim
    for c, x in [(c, x), (np.tile(c, big), np.tile(x, big))]:
        for keep in (True, False):
            want = np.where(c, x, zero) if keep else np.where(c, zero, x)
            got = _bit_select(c, x, keep)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
        for args in [(c, x, zero), (c, zero, x), (c, x.T, zero) if c.shape == x.T.shape else
                     (c, x, zero)]:
            got, want = _where_impl(*args), np.where(*args)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == np.ascontiguousarray(want).tobytes()



@pytest.mark.parametrize("n", [10, 5000])
def test_tanh_backward_in_place_path_equals_the_expression(n):
    """tanh's VJP is the tanh_backward primitive, which from 4096 elements up computes in
    one temporary: it must give the bits of ``g * (1 - out**2)`` for same-shaped g, and
    fall back to a fresh array for a broadcast or other-dtype g (and never write into g or
    out). The registry's samples are too small to reach the in-place path."""
    from funcgrad.primitives.elementwise import tanh_backward
    rng = np.random.RandomState(0)
    out = np.tanh(rng.randn(n))
    for g in (rng.randn(n), rng.randn(1), rng.randn(n).astype(np.float32), 2.0):
        g_before, out_before = np.copy(g), out.copy()
        got = tanh_backward(fnp.asarray(g), fnp.asarray(out))
        want = np.asarray(g) * (1 - out * out)
        assert got.dtype == want.dtype and np.asarray(got).tobytes() == want.tobytes()
        np.testing.assert_array_equal(out, out_before)
        np.testing.assert_array_equal(g, g_before)
    x = fnp.asarray(rng.randn(n))
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(fnp.tanh(x)))(x),
                               1 - np.tanh(np.asarray(x)) ** 2, rtol=1e-12)

def test_errors_name_the_problem():
    with pytest.raises(TypeError, match="fabs is not defined for complex"):
        fnp.fabs(np.array([1j]))
    with pytest.raises(TypeError, match="polygamma: n must be an integer"):
        S.polygamma(1.5, 2.0)


# -- the Array operators ------------------------------------------------------------------

def test_array_operators():
    xv = np.array([0.5, -1.5, 2.0], np.float32)
    yv = np.array([1.0, -1.5, 3.0], np.float32)
    x, y = fnp.asarray(xv), fnp.asarray(yv)
    assert_like(x + 1, xv + 1) and assert_like(1 - x, 1 - xv)
    assert_like(x * y, xv * yv) and assert_like(x / y, xv / yv) and assert_like(2 / x, 2 / xv)
    assert_like(x ** 2, xv ** 2) and assert_like(2 ** x, 2 ** xv)
    assert_like(x // 2, xv // 2) and assert_like(x % 3, xv % 3) and assert_like(7 % y, 7 % yv)
    assert_like(-x, -xv) and assert_like(+x, +xv) and assert_like(abs(x), abs(xv))
    for op in ["__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"]:
        assert_like(getattr(x, op)(y), getattr(xv, op)(yv))
    assert_like(xv + x, xv + xv)  # a numpy array on the left defers to the Array
    q, r = divmod(x, 2)
    assert_like(q, xv // 2) and assert_like(r, xv % 2)
    b, c = fnp.asarray([True, False, True]), fnp.asarray([True, True, False])
    assert_like(~b, ~b.to_numpy()) and assert_like(b & c, b.to_numpy() & c.to_numpy())
    assert_like(b | c, b.to_numpy() | c.to_numpy())
    assert_like(b ^ c, b.to_numpy() ^ c.to_numpy())
    ints = fnp.asarray([5, 6])
    assert_like(ints & 3, np.array([5, 6]) & 3) and assert_like(~ints, ~np.array([5, 6]))
    z = fnp.asarray(np.array([1 + 2j, -3j]))
    assert_like(z.real, z.to_numpy().real) and assert_like(z.imag, z.to_numpy().imag)
    assert_like(z.conj(), z.to_numpy().conj()) and assert_like(x.real, xv)
    assert_like(x.imag, np.zeros(3, np.float32))
    assert_like(x.round(), xv.round()) and assert_like(x.clip(0, 1), xv.clip(0, 1))


def test_numpy_ufuncs_on_arrays_run_funcgrad():
    x = fnp.asarray([0.5, 1.0])
    out = fg.grad(lambda x: fnp.sum(np.sin(x) * np.exp(x)))(x)
    xv = x.to_numpy()
    np.testing.assert_allclose(out.to_numpy(), np.cos(xv) * np.exp(xv) + np.sin(xv) * np.exp(xv))


# -- derivatives ----------------------------------------------------------------------------

def numerical_grad(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps)
                     for e in np.eye(x.size).reshape((x.size,) + x.shape)]).reshape(x.shape)


@pytest.mark.parametrize("name", SMOOTH)
def test_float32_stays_float32_through_grad(name):
    domain, _ = UNARY[name]
    x64 = values(np.random.RandomState(0), (4,), domain)
    if name in ("abs", "absolute", "fabs", "cbrt", "reciprocal"):
        x64 = np.where(np.abs(x64) < 0.3, 0.5, x64)
    f = getattr(fnp, name)
    g32 = fg.grad(lambda x: fnp.sum(f(x)))(x64.astype(np.float32))
    assert g32.dtype == np.float32
    expected = numerical_grad(lambda v: np.sum(getattr(np, name)(v)), x64)
    np.testing.assert_allclose(g32.to_numpy(), expected, rtol=2e-3, atol=1e-4)
    gg32 = fg.grad(lambda x: fnp.sum(fg.grad(lambda y: fnp.sum(f(y)))(x)))(
        x64.astype(np.float32))
    assert gg32.dtype == np.float32


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "power",
                                  "maximum", "minimum", "arctan2", "hypot", "logaddexp",
                                  "logaddexp2", "copysign", "mod", "fmod", "fmax", "fmin"])
def test_binary_float32_grads_stay_float32(name):
    x = np.array([0.7, 1.3, 1.9], np.float32)
    y = np.array([1.1, 0.4, 1.7], np.float32)
    gx, gy = fg.grad(lambda a, b: fnp.sum(getattr(fnp, name)(a, b)), (0, 1))(x, y)
    assert gx.dtype == gy.dtype == np.float32
    f = getattr(np, name)
    np.testing.assert_allclose(gx.to_numpy(), numerical_grad(
        lambda v: np.sum(f(v, y.astype(np.float64))), x), rtol=2e-3, atol=1e-4)
    np.testing.assert_allclose(gy.to_numpy(), numerical_grad(
        lambda v: np.sum(f(x.astype(np.float64), v)), y), rtol=2e-3, atol=1e-4)


def test_piecewise_constant_functions_have_zero_gradient():
    x = np.array([-1.3, 0.2, 2.7])
    for name in ["floor", "ceil", "trunc", "rint", "round", "sign"]:
        g = fg.grad(lambda v: fnp.sum(getattr(fnp, name)(v) * v))(x)
        np.testing.assert_allclose(g.to_numpy(), getattr(np, name)(x))
    g = fg.grad(lambda v: fnp.sum(fnp.floor_divide(v, 0.7)), allow_int=True)(x)
    np.testing.assert_array_equal(g.to_numpy(), 0.0)


def test_comparisons_carry_no_gradient_and_where_routes_it():
    x = np.array([-1.0, 0.5, 2.0])
    g = fg.grad(lambda v: fnp.sum(fnp.where(v > 0, v, 0)))(x)
    np.testing.assert_array_equal(g.to_numpy(), [0.0, 1.0, 1.0])
    g = fg.grad(lambda v: fnp.sum(fnp.where(v > 0, v * v, -v)))(x)
    np.testing.assert_array_equal(g.to_numpy(), [-1.0, 1.0, 4.0])
    for name in ["less", "equal", "isnan", "isfinite", "isinf", "signbit", "logical_and"]:
        prim_out = fg.vjp(lambda v: getattr(fnp, name)(v, v) if name in ("less", "equal",
                          "logical_and") else getattr(fnp, name)(v), x)[0]
        assert prim_out.dtype == np.bool_ and not isinstance(prim_out, fg.core.Tracer)


def test_ties_split_the_gradient_as_jax():
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, 3.0, 2.0])
    gx, gy = fg.grad(lambda a, b: fnp.sum(fnp.maximum(a, b)), (0, 1))(x, y)
    np.testing.assert_array_equal(gx.to_numpy(), [0.5, 0.0, 1.0])
    np.testing.assert_array_equal(gy.to_numpy(), [0.5, 1.0, 0.0])
    gx, gy = fg.grad(lambda a, b: fnp.sum(fnp.minimum(a, b)), (0, 1))(x, y)
    np.testing.assert_array_equal(gx.to_numpy(), [0.5, 1.0, 0.0])
    g = fg.grad(lambda a: fnp.sum(fnp.clip(a, 0.0, 1.0)))(np.array([-1.0, 0.0, 0.5, 1.0, 2.0]))
    np.testing.assert_array_equal(g.to_numpy(), [0.0, 0.5, 1.0, 0.5, 0.0])
    gx, gy = fg.grad(lambda a, b: fnp.sum(fnp.fmax(a, b)), (0, 1))(x, y)
    np.testing.assert_array_equal(gx.to_numpy(), [0.0, 0.0, 1.0])  # ties go to x2 (JAX)
    np.testing.assert_array_equal(gy.to_numpy(), [1.0, 1.0, 0.0])
    g = fg.grad(lambda a: fnp.sum(fnp.abs(a)))(np.array([-2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(g.to_numpy(), [-1.0, 0.0, 1.0])


def test_power_edge_cases_follow_jax():
    g = fg.grad(lambda x: fnp.sum(x ** 3))(np.array([-2.0, 0.0, 1.5]))
    np.testing.assert_allclose(g.to_numpy(), [12.0, 0.0, 6.75])
    g = fg.grad(lambda x: fnp.sum(x ** 0))(np.array([0.0, 2.0]))  # no 0 * inf
    np.testing.assert_array_equal(g.to_numpy(), [0.0, 0.0])
    gx, gy = fg.grad(lambda x, y: fnp.sum(x ** y), (0, 1))(np.array([0.0, 2.0]),
                                                          np.array([2.0, 0.0]))
    np.testing.assert_allclose(gx.to_numpy(), [0.0, 0.0])
    np.testing.assert_allclose(gy.to_numpy(), [0.0, math.log(2.0)])  # log(0) read as 0
    g = fg.grad(lambda y: fnp.sum(fnp.power(-2.0, y)))(np.array([2.0]))
    assert np.isnan(g.to_numpy()).all()  # a real log of a negative base, as JAX
    g = fg.grad(fg.grad(lambda x: x ** 4))(-1.5)
    np.testing.assert_allclose(g.to_numpy(), 12 * 1.5 ** 2)


def test_sinc_is_differentiable_at_zero_to_any_order():
    d1 = fg.grad(fnp.sinc)
    d2 = fg.grad(d1)
    d3 = fg.grad(d2)
    d4 = fg.grad(d3)
    np.testing.assert_allclose([float(d(0.0)) for d in (d1, d2, d3, d4)],
                               [0.0, -math.pi ** 2 / 3, 0.0, math.pi ** 4 / 5], atol=1e-12)
    x = 0.37
    expected = (math.cos(math.pi * x) * math.pi * x - math.sin(math.pi * x)) / (
        math.pi * x * x)
    np.testing.assert_allclose(float(d1(x)), expected, rtol=1e-12)


# -- complex inputs: JAX's convention ----------------------------------------------------------

Z = np.array([1.0 + 2.0j, -0.5 + 0.3j, 3.0 - 4.0j])


def test_grad_of_real_functions_of_complex_inputs_follows_jax():
    def g(f):
        return fg.grad(lambda z: fnp.sum(f(z)))(Z).to_numpy()
    np.testing.assert_allclose(g(lambda z: fnp.abs(z) ** 2), 2 * np.conj(Z))
    np.testing.assert_allclose(g(fnp.abs), np.conj(Z) / np.abs(Z))
    np.testing.assert_allclose(g(fnp.real), np.ones(3))
    np.testing.assert_allclose(g(fnp.imag), -1j * np.ones(3))
    np.testing.assert_allclose(g(fnp.angle), -1j * np.conj(Z) / np.abs(Z) ** 2)
    np.testing.assert_allclose(g(lambda z: fnp.real(z * fnp.conj(z))), 2 * np.conj(Z))
    np.testing.assert_allclose(g(lambda z: fnp.real(fnp.exp(z))), np.exp(Z))
    np.testing.assert_allclose(fg.grad(lambda z: fnp.sum(fnp.abs(z)))(np.zeros(2, complex))
                               .to_numpy(), 0)


@pytest.mark.parametrize("name", ["sin", "exp", "log", "sqrt", "tanh", "arcsinh", "square",
                                  "reciprocal", "sinc"])
def test_holomorphic_grads_are_the_complex_derivative(name):
    f = getattr(fnp, name)
    z = 0.6 + 0.4j
    h = 1e-7
    derivative = (getattr(np, name)(z + h) - getattr(np, name)(z - h)) / (2 * h)
    np.testing.assert_allclose(complex(fg.grad(f, holomorphic=True)(z)), derivative,
                               rtol=1e-6)
    assert fg.grad(f, holomorphic=True)(np.complex64(z)).dtype == np.complex64


def test_forward_mode_of_non_holomorphic_functions():
    t = np.array([0.3 - 0.2j, 1.0, 1j])
    for f, expected in [(fnp.abs, np.real(np.conj(Z) * t) / np.abs(Z)),
                        (fnp.real, t.real), (fnp.imag, t.imag), (fnp.conj, np.conj(t))]:
        out, tangent = fg.jvp(f, (Z,), (t,))
        np.testing.assert_allclose(tangent.to_numpy(), expected)


# -- stability at +-1000 ------------------------------------------------------------------------

BIG = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0])


@pytest.mark.parametrize("f", [
    S.softplus, S.expit, lambda x: S.logsumexp(x), lambda x: S.log_softmax(x),
    lambda x: S.softmax(x), lambda x: fnp.logaddexp(x, -x), lambda x: fnp.logaddexp2(x, 0),
    lambda x: S.logsumexp(fnp.stack([x, x]), axis=0), lambda x: fnp.tanh(x)],
    ids=["softplus", "expit", "logsumexp", "log_softmax", "softmax", "logaddexp",
         "logaddexp2", "logsumexp_axis", "tanh"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stable_at_large_arguments(f, dtype):
    x = BIG.astype(dtype)
    value = f(x)
    g = fg.grad(lambda v: fnp.sum(f(v) * fnp.arange(1, 1 + v.size).reshape(v.shape)))(x)
    assert np.isfinite(value.to_numpy()).all() and np.isfinite(g.to_numpy()).all()
    assert value.dtype == g.dtype == dtype


def test_stable_values_match_scipy():
    np.testing.assert_allclose(S.softplus(BIG).to_numpy(), np.logaddexp(BIG, 0))
    np.testing.assert_allclose(S.expit(BIG).to_numpy(), ss.expit(BIG))
    np.testing.assert_allclose(S.log_softmax(BIG).to_numpy(), ss.log_softmax(BIG))
    np.testing.assert_allclose(S.softmax(BIG).to_numpy(), ss.softmax(BIG))
    np.testing.assert_allclose(fg.grad(lambda x: fnp.sum(S.softplus(x)))(BIG).to_numpy(),
                               ss.expit(BIG))
    np.testing.assert_allclose(fg.grad(S.logsumexp)(BIG).to_numpy(), ss.softmax(BIG))


# -- funcgrad.scipy.special -------------------------------------------------------------------

X = np.linspace(0.15, 6.0, 9)


@pytest.mark.parametrize("name,x", [("erf", X - 3), ("erfc", X - 3), ("gammaln", X),
                                    ("digamma", X), ("psi", X), ("expit", X - 3),
                                    ("logit", X / 7), ("ndtr", X - 3)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_special_values_match_scipy(name, x, dtype):
    assert_like(getattr(S, name)(x.astype(dtype)), getattr(ss, name)(x.astype(dtype)),
                rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_special_integer_inputs_give_float64():
    assert_like(S.erf(np.array([0, 1])), ss.erf(np.array([0, 1])))
    assert_like(S.gammaln(3), ss.gammaln(3))


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_polygamma_and_its_derivatives(n):
    np.testing.assert_allclose(S.polygamma(n, X).to_numpy(), ss.polygamma(n, X), rtol=1e-12)
    g = fg.grad(lambda x: fnp.sum(S.polygamma(n, x)))(X)
    np.testing.assert_allclose(g.to_numpy(), ss.polygamma(n + 1, X), rtol=1e-12)
    np.testing.assert_allclose(S.polygamma(np.array([n, n + 1]), 1.5).to_numpy(),
                               ss.polygamma([n, n + 1], 1.5), rtol=1e-12)


def test_special_derivatives_chain():
    d2 = fg.grad(fg.grad(S.gammaln))
    np.testing.assert_allclose(float(d2(2.5)), ss.polygamma(1, 2.5), rtol=1e-12)
    d = fg.grad(S.erf)
    np.testing.assert_allclose(float(d(0.3)), 2 / math.sqrt(math.pi) * math.exp(-0.09))
    np.testing.assert_allclose(float(fg.grad(S.logit)(0.3)), 1 / (0.3 * 0.7))


def test_xlogy_is_zero_where_x_is_zero_and_its_x_derivative_is_log_y():
    """x log(y) is linear in x: its x-derivative is log(y) also at x = 0 (issue 15: it was
    0 there); the y-derivative x / y is 0 where x == 0 (also at y = 0)."""
    x, y = np.array([0.0, 2.0, 0.0]), np.array([0.0, 3.0, 2.0])
    np.testing.assert_allclose(S.xlogy(x, y).to_numpy(), ss.xlogy(x, y))
    np.testing.assert_allclose(S.xlog1py(x, y).to_numpy(), ss.xlog1py(x, y))
    gx, gy = fg.grad(lambda a, b: fnp.sum(S.xlogy(a, b)), (0, 1))(x, y)
    np.testing.assert_allclose(gx.to_numpy(), [-np.inf, math.log(3.0), math.log(2.0)])
    np.testing.assert_allclose(gy.to_numpy(), [0.0, 2 / 3, 0.0])
    gx, gy = fg.grad(lambda a, b: fnp.sum(S.xlog1py(a, b)), (0, 1))(x, y - 1)
    np.testing.assert_allclose(gx.to_numpy(), [-np.inf, math.log(3.0), math.log(2.0)])
    np.testing.assert_allclose(gy.to_numpy(), [0.0, 2 / 3, 0.0])
    # the mixed second derivative d2/dxdy = 1/y, also at x = 0
    mixed = fg.grad(lambda b: fg.grad(lambda a: S.xlogy(a, b))(0.0))(2.0)
    np.testing.assert_allclose(float(mixed), 0.5)


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_matches_scipy(axis, keepdims):
    a = np.random.RandomState(0).randn(2, 3) * 300
    assert_like(S.logsumexp(a, axis=axis, keepdims=keepdims),
                ss.logsumexp(a, axis=axis, keepdims=keepdims))
    b = np.array([1.0, -2.0, 0.5])
    out, sign = S.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    e_out, e_sign = ss.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    assert_like(out, e_out)
    assert_like(sign, e_sign)
    out, sign = S.logsumexp(a, axis=axis, keepdims=keepdims, return_sign=True)
    e_out, e_sign = ss.logsumexp(a, axis=axis, keepdims=keepdims, return_sign=True)
    assert_like(out, e_out)
    assert_like(sign, e_sign)
    assert_like(S.logsumexp(np.full(3, -np.inf)), ss.logsumexp(np.full(3, -np.inf)))
    assert_like(S.softmax(a, axis=axis), ss.softmax(a, axis=axis))
    assert_like(S.log_softmax(a, axis=axis), ss.log_softmax(a, axis=axis))


def test_fallbacks_match_scipy(monkeypatch):
    """Without scipy the primitives use the pure-numpy fallbacks (~1e-12)."""
    rng = np.random.RandomState(1)
    x = np.concatenate([rng.uniform(0.01, 40, 300), [1e-6, 0.5, 1, 2, 19.999, 20, 1e5]])
    xs = np.concatenate([x, -x[:-1] - 0.5, -x[:-1] + 1e-3])
    monkeypatch.setattr(special_prims, "_scipy_special", None)
    for name, grid, rtol in [("erf", xs, 1e-14), ("erfc", x - 3, 1e-12),
                             ("gammaln", xs, 1e-12), ("digamma", x, 1e-12),
                             ("expit", xs, 1e-14)]:
        np.testing.assert_allclose(getattr(S, name)(grid).to_numpy(),
                                   getattr(ss, name)(grid), rtol=rtol, atol=1e-13)
    psi, expected = S.digamma(xs).to_numpy(), ss.digamma(xs)  # negative x: reflection
    assert (np.isnan(psi) == np.isnan(expected)).all()
    assert np.nanmax(np.abs(psi - expected) / np.maximum(1, np.abs(expected))) < 1e-11
    for n in range(1, 6):
        np.testing.assert_allclose(S.polygamma(n, x).to_numpy(), ss.polygamma(n, x),
                                   rtol=1e-13)
        np.testing.assert_allclose(S.polygamma(n, -x[:50] - 0.25).to_numpy(),
                                   ss.polygamma(n, -x[:50] - 0.25), rtol=1e-10)
    assert_like(S.digamma(np.array([0.0, -2.0])), ss.digamma([0.0, -2.0]))
    assert_like(S.gammaln(np.array([0.0, -3.0, np.inf])), ss.gammaln([0.0, -3.0, np.inf]))
    assert S.erf(np.float32(0.5)).dtype == np.float32
    np.testing.assert_allclose(float(fg.grad(fg.grad(S.gammaln))(3.5)),
                               ss.polygamma(1, 3.5), rtol=1e-12)
