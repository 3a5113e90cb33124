"""JAX's type promotion, registry-driven: every elementwise primitive, called on a grid of
operand dtypes and Python numbers (weakly typed), gives the result dtype jax.numpy gives,
with x64 enabled and disabled (JAX's answers come from ``jax.eval_shape``: traced, not
run). Every elementwise primitive of the registry is in `JAX_FUNCTIONS` or in
`NO_COUNTERPART` with the reason, so a new one has to be classified. Where JAX refuses an
operand dtype (``neg`` of a bool, bit operations on floats) there is no dtype to compare:
those cases are not compared (`_table` counts those funcgrad accepts).

Also the issue's examples (x32: ``log(exp(100.0))`` is inf, ``float32 * (1 - bool)`` is
float32, a bool with an int32 literal is int32), the lattice queries
(``result_type``/``promote_types``), and that jit, vmap and grad give eager's dtypes.
"""
import contextlib
import itertools
import os
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import config
from funcgrad.meta import ELEMENTWISE

os.environ.setdefault("JAX_ENABLE_X64", "1")  # before jax is imported: float64 as numpy
jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special as jsp  # noqa: E402

# primitive name -> (JAX's function of the operands, funcgrad's params, number of operands)
JAX_FUNCTIONS = {
    **{n: (getattr(jnp, n), {}, 1) for n in (
        "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
        "arcsinh", "arccosh", "arctanh", "exp", "exp2", "expm1", "log", "log2", "log10",
        "log1p", "sqrt", "cbrt", "square", "reciprocal", "abs", "real", "imag", "conj",
        "sign", "floor", "ceil", "trunc", "rint", "spacing", "isfinite", "isnan", "isinf",
        "signbit", "logical_not", "invert", "bitwise_count", "i0")},
    "neg": (jnp.negative, {}, 1),
    "copy": (jnp.copy, {"order": "K"}, 1),
    "sinc": (jnp.sinc, {"order": 0}, 1),
    "round": (jnp.round, {"decimals": 0}, 1),
    "modf": (jnp.modf, {}, 1),
    "frexp_exponent": (lambda x: jnp.frexp(x)[1], {}, 1),
    **{n: (getattr(jnp, n), {}, 2) for n in (
        "add", "power", "floor_divide", "fmod", "maximum", "minimum", "arctan2", "hypot",
        "logaddexp", "logaddexp2", "copysign", "nextafter", "heaviside", "ldexp", "equal",
        "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
        "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
        "left_shift", "right_shift", "gcd", "lcm")},
    "sub": (jnp.subtract, {}, 2),
    "mul": (jnp.multiply, {}, 2),
    "div": (jnp.true_divide, {}, 2),
    "mod": (jnp.remainder, {}, 2),
    "where": (lambda x, y: jnp.where(jnp.array([True, False]), x, y), {}, 2),
    "relu": (jax.nn.relu, {}, 1),
    **{n: (getattr(jsp, n), {}, 1) for n in (
        "digamma", "erf", "erfc", "erfinv", "expit", "gamma", "gammaln", "gammasgn", "i0e",
        "i1", "i1e", "log_ndtr", "ndtri", "spence")},
    **{n: (getattr(jsp, n), {}, 2) for n in (
        "beta", "betaln", "gammaincc", "xlog1py", "xlogy", "polygamma")},
    "gammainc": (jsp.gammainc, {"order": 0}, 2),
    "zeta": (jsp.zeta, {"order": 0}, 2),
}

# elementwise primitives with no jax.numpy / jax.scipy.special function of the same
# operands to compare with, and why
NO_COUNTERPART = {
    "tanh_backward": "tanh's VJP kernel (g * (1 - out**2)), called by its rule only",
    "max_share": "maximum's VJP kernel (the cotangent share at ties), called by rules only",
    "floored_quotient": "mod's derivative kernel (numpy's x // y), called by rules only",
    "clamp": "PyTorch's clamp with number bounds (the facade's, with PyTorch's dtypes)",
    "bitcast_convert_type": "a reinterpretation of bits into a dtype given as a param",
    "fma": "XLA's fused multiply-add, used by funcgrad.random's samplers only",
    "xla_exp": "exp as XLA's CPU backend rounds it, for funcgrad.random's samplers only",
    "xla_log": "log as XLA's CPU backend rounds it, for funcgrad.random's samplers only",
    "xla_log1p": "log1p as XLA's CPU backend rounds it, for funcgrad.random's samplers only",
    "erf_inv": "lax.erf_inv on floats, for funcgrad.random's samplers only",
    "random_gamma_cdf": "a kernel of funcgrad.random.gamma",
    "random_gamma_quantile": "a kernel of funcgrad.random.gamma",
    "erfcinv": "jax.scipy.special has no erfcinv",
    "gammaincinv": "jax.scipy.special has no gammaincinv",
    "betaincinv": "jax.scipy.special has no betaincinv",
    "betainc": "three operands (a, b, x): the pairs grid does not cover it",
    "stdtr": "jax.scipy.special has no stdtr",
    "rgamma": "jax.scipy.special has no rgamma",
    "stdtrit": "jax.scipy.special has no stdtrit",
    "iv": "jax.scipy.special has no iv", "ive": "jax.scipy.special has no ive",
    "jv": "jax.scipy.special has no jv", "yv": "jax.scipy.special has no yv",
    "j0": "jax.scipy.special has no j0", "j1": "jax.scipy.special has no j1",
    "y0": "jax.scipy.special has no y0", "y1": "jax.scipy.special has no y1",
}

# operand dtypes by mode: with x64 disabled JAX has no 64-bit arrays
DTYPES = {
    True: ["bool", "int8", "uint8", "int16", "int32", "int64", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128"],
    False: ["bool", "int8", "uint8", "int16", "int32", "uint32", "float16", "float32",
            "complex64"],
}
NUMBERS = [3, 0.5, 0.5 + 0.5j]  # Python int, float, complex: weakly typed


@contextlib.contextmanager
def x64(enabled: bool):
    """funcgrad's and JAX's x64 flag set for the block, both restored after it."""
    old_jax = jax.config.read("jax_enable_x64")
    with config.enable_x64(enabled):
        jax.config.update("jax_enable_x64", enabled)
        try:
            yield
        finally:
            jax.config.update("jax_enable_x64", old_jax)


def _operands(mode: bool, arity: int) -> list:
    """The grid: every dtype and Python number, alone or in pairs (pairs of two numbers
    are left out: their dtype is a Python number's, not a promotion)."""
    items = DTYPES[mode] + NUMBERS
    if arity == 1:
        return [(i,) for i in items]
    return [p for p in itertools.product(items, repeat=2)
            if not all(isinstance(v, (int, float, complex)) for v in p)]


def _jax_dtype(fn, operands) -> object:
    """JAX's result dtype(s) (traced with eval_shape), or the exception it raises."""
    arrays = [jax.ShapeDtypeStruct((2,), np.dtype(v)) if isinstance(v, str) else None
              for v in operands]

    def call(*xs):
        it = iter(xs)
        return fn(*(next(it) if a is not None else v for a, v in zip(arrays, operands)))
    try:
        out = jax.eval_shape(call, *(a for a in arrays if a is not None))
    except Exception as e:  # noqa: BLE001 (JAX's refusal is the answer)
        return e
    return tuple(o.dtype for o in out) if isinstance(out, (tuple, list)) else out.dtype


def _ours_dtype(prim, params, operands) -> object:
    args = [fnp.asarray(np.ones(2, v)) if isinstance(v, str) else v for v in operands]
    if prim.name == "where":
        args = [fnp.asarray(np.array([True, False]))] + args
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = prim(*args, **params)
    except Exception as e:  # noqa: BLE001
        return e
    return tuple(o.dtype for o in out) if isinstance(out, tuple) else out.dtype


def _table(name: str, mode: bool, gaps: bool = False) -> tuple:
    """(mismatches, compared, refused by JAX and accepted by funcgrad) of one primitive,
    on the grid without its known gaps (``gaps``: on those alone)."""
    fn, params, arity = JAX_FUNCTIONS[name]
    prim = fg.primitives.registry()[name]
    in_gap = GAPS.get(name, (lambda ops: False,))[0]
    mismatches, compared, refused = [], 0, []
    with x64(mode):
        for operands in _operands(mode, arity):
            if in_gap(operands) != gaps:
                continue
            theirs = _jax_dtype(fn, operands)
            ours = _ours_dtype(prim, params, operands)
            if isinstance(theirs, Exception):
                if not isinstance(ours, Exception):
                    refused.append(operands)
                continue
            compared += 1
            if isinstance(ours, Exception) or ours != theirs:
                mismatches.append((operands, str(theirs),
                                   repr(ours) if isinstance(ours, Exception) else str(ours)))
    return mismatches, compared, refused


def _complex(operands) -> bool:
    return any(isinstance(v, complex) or (isinstance(v, str) and v.startswith("complex"))
               for v in operands)


# known, named gaps: primitive -> (the cases, why funcgrad differs); these cases are
# left out of `test_result_dtype_is_jax` and kept by `test_known_gaps` (strict xfail)
GAPS: dict = {
    **{n: (_complex, "funcgrad's kernel (numpy's or scipy's ufunc) is real-only: complex "
                     "operands raise TypeError where JAX computes")
       for n in ("arctan2", "logaddexp", "logaddexp2", "expit")},
    "ldexp": (lambda ops: ops[1] == "uint64",
              "numpy's ldexp has no uint64 exponent loop (TypeError); JAX converts it"),
    "conj": (lambda ops: ops == ("bool",),
             "numpy's conjugate of bool is int8; funcgrad.numpy.conj returns a real input "
             "itself (bool), the primitive does not"),
    "power": (lambda ops: ops == ("bool", 3),
              "JAX computes x ** <Python int> as integer_pow of x alone (bool -> int32), "
              "not as the promotion of x with a weak int (int64 with x64)"),
    "relu": (lambda ops: ops == ("bool",),
             "relu is the PyTorch facade's (no promotion of its own); jax.nn.relu of bool "
             "is int32"),
}


def test_every_elementwise_primitive_is_classified():
    names = {p.name for p in ELEMENTWISE}
    assert not set(JAX_FUNCTIONS) & set(NO_COUNTERPART)
    assert names - set(JAX_FUNCTIONS) - set(NO_COUNTERPART) == set()
    assert set(JAX_FUNCTIONS) | set(NO_COUNTERPART) <= names


@pytest.mark.parametrize("mode", [True, False], ids=["x64", "x32"])
@pytest.mark.parametrize("name", sorted(JAX_FUNCTIONS))
def test_result_dtype_is_jax(name, mode):
    mismatches, compared, _ = _table(name, mode)
    assert compared > 0
    assert not mismatches, f"{len(mismatches)} of {compared}: {mismatches[:8]}"


@pytest.mark.parametrize("name", sorted(GAPS))
def test_known_gaps(name):
    """Each named gap still differs (strict: a gap that closes must leave `GAPS`)."""
    mismatches = [m for mode in (True, False) for m in _table(name, mode, gaps=True)[0]]
    if mismatches:
        pytest.xfail(f"{GAPS[name][1]} ({len(mismatches)} cases)")
    pytest.fail(f"the gap of {name} is closed: remove it from GAPS")


# -- the examples ----------------------------------------------------------------

def test_x32_python_float_is_float32():
    with x64(False):
        with np.errstate(over="ignore"):
            big = fnp.exp(100.0)
        assert big.dtype == np.float32
        assert np.isinf(float(fnp.log(big)))
        assert fnp.log(fnp.exp(1.0)).dtype == np.float32
    with x64(True):
        assert float(fnp.log(fnp.exp(100.0))) == 100.0


def test_x32_float32_times_one_minus_bool():
    with x64(False):
        mask = fnp.array([True, False, True])
        out = fnp.ones(3, np.float32) * (1 - mask)
        assert (1 - mask).dtype == np.int32
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out, [0, 1, 0])


@pytest.mark.parametrize("mode", [True, False], ids=["x64", "x32"])
def test_bool_with_int32_literal_stays_int32(mode):
    with x64(mode):
        assert (fnp.array([True, False]) + np.int32(1)).dtype == np.int32
        assert (fnp.array([True, False]) * fnp.int32(3)).dtype == np.int32


def test_lattice_queries():
    with x64(True):
        assert fnp.promote_types(np.int64, np.float32) == np.float32
        assert fnp.promote_types(np.int32, np.float16) == np.float16
        assert fnp.promote_types(np.uint64, np.int64) == np.float64
        assert fnp.result_type(np.int8, 1) == np.int8
        assert fnp.result_type(1.0) == np.float64
        assert fnp.result_type(fnp.ones(2, np.float32), 2.0) == np.float32
        assert fnp.result_type(3, return_weak_type_flag=True) == (np.int64, True)
    with x64(False):
        assert fnp.result_type(np.float64) == np.float32
        assert fnp.result_type(np.uint32, np.int32) == np.int32
        assert fnp.promote_types(np.int64, np.float64) == np.float64  # not canonicalized


def test_no_promotion_path_is_jax_error():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from funcgrad._promotion import TypePromotionError
    with pytest.raises(TypePromotionError, match="8-bit floats do not support implicit"):
        fnp.promote_types(ml_dtypes.float8_e4m3fn, np.float32)


# -- transforms keep eager's dtypes ------------------------------------------------------

def _mixed(x):
    return fnp.sin(x * fnp.arange(3)) * 0.5 + fnp.asarray(np.ones(3, np.int64)) - (1 - (x > 0))


@pytest.mark.parametrize("mode", [True, False], ids=["x64", "x32"])
def test_transforms_give_eager_dtypes(mode):
    with x64(mode):
        x = fnp.asarray(np.array([0.3, -1.2, 2.0], np.float32))
        eager = _mixed(x)
        assert eager.dtype == np.float32
        jitted = fg.jit(_mixed)(x)
        assert jitted.dtype == eager.dtype
        np.testing.assert_array_equal(np.asarray(jitted), np.asarray(eager))
        batched = fg.vmap(_mixed)(fnp.stack([x, 2 * x]))
        assert batched.dtype == eager.dtype
        np.testing.assert_array_equal(np.asarray(batched[0]), np.asarray(eager))
        g = fg.grad(lambda v: _mixed(v).sum())(x)
        assert g.dtype == np.float32
        assert fg.jit(fg.grad(lambda v: _mixed(v).sum()))(x).dtype == np.float32


@pytest.mark.parametrize("mode", [True, False], ids=["x64", "x32"])
def test_jit_python_number_argument_is_weak(mode):
    with x64(mode):
        x = fnp.ones(3, np.float32)
        f = lambda a, s: a * s - s  # noqa: E731
        assert fg.jit(f)(x, 2.0).dtype == f(x, 2.0).dtype == np.float32
        assert fg.jit(lambda s: fnp.exp(s))(2.0).dtype == fnp.exp(2.0).dtype
