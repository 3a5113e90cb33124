"""``jax_numpy_dtype_promotion=strict`` against JAX's: operands of different dtypes have no
common type (JAX's TypePromotionError text), Python numbers still promote, and the option
is set like JAX's (``config.update``, the ``numpy_dtype_promotion`` block)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "uint32", "float16", "bfloat16",
          "float32", "float64", "complex64", "int64"]
SCALARS = [True, 2, 2.5, 1 + 2j]


def _outcome(fn):
    """The dtype name of ``fn()``, or its error's type and text after the operand list
    (JAX's names operands in the order its internals pass them, a Python number by its
    class's repr)."""
    try:
        out = fn()
        return np.dtype(getattr(out, "dtype", out)).name
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        return type(e).__name__, str(e).split(") have no", 1)[-1]


@pytest.mark.parametrize("a,b", list(itertools.product(DTYPES, DTYPES)))
def test_promote_types_strict_matches_jax(a, b):
    with jax.numpy_dtype_promotion("strict"), funcgrad.numpy_dtype_promotion("strict"):
        theirs = _outcome(lambda: jnp.promote_types(a, b))
        ours = _outcome(lambda: fnp.promote_types(a, b))
    assert ours == theirs


@pytest.mark.parametrize("dtype,scalar", list(itertools.product(
    [d for d in DTYPES if "64" not in d] + ["complex64"], SCALARS)))
def test_python_numbers_promote_in_strict_mode_as_in_jax(dtype, scalar):
    x = np.ones(3).astype(dtype)
    with jax.numpy_dtype_promotion("strict"), funcgrad.numpy_dtype_promotion("strict"):
        theirs = _outcome(lambda: jnp.asarray(x) * scalar)
        ours = _outcome(lambda: fnp.asarray(x) * scalar)
    assert ours == theirs


@pytest.mark.parametrize("a,b", [("int32", "float32"), ("float16", "float32"),
                                 ("int8", "int16"), ("float32", "float32")])
def test_binary_operations_refuse_mixed_dtypes(a, b):
    x, y = np.ones(2, a), np.ones(2, b)
    with jax.numpy_dtype_promotion("strict"), funcgrad.numpy_dtype_promotion("strict"):
        theirs = _outcome(lambda: jnp.add(jnp.asarray(x), jnp.asarray(y)))
        ours = _outcome(lambda: fnp.add(fnp.asarray(x), fnp.asarray(y)))
        jitted = _outcome(lambda: funcgrad.jit(fnp.add)(fnp.asarray(x), fnp.asarray(y)))
    assert ours == theirs == jitted
    assert fnp.add(fnp.asarray(x), fnp.asarray(y)).dtype == jnp.add(x, y).dtype  # standard


def test_config_option_and_block():
    assert funcgrad.config.jax_numpy_dtype_promotion == "standard"
    funcgrad.config.update("jax_numpy_dtype_promotion", "strict")
    try:
        with pytest.raises(funcgrad.dtypes.TypePromotionError,
                           match="jax_numpy_dtype_promotion=strict"):
            fnp.ones(2, dtype="float32") + fnp.ones(2, dtype="float64")
        with funcgrad.numpy_dtype_promotion("standard"):
            assert (fnp.ones(2, dtype="float32") + fnp.ones(2, dtype="float64")).dtype == \
                np.float64
        assert funcgrad.config.jax_numpy_dtype_promotion == "strict"
    finally:
        funcgrad.config.update("jax_numpy_dtype_promotion", "standard")
    with pytest.raises(ValueError, match="not a valid value"):
        funcgrad.config.update("jax_numpy_dtype_promotion", "loose")


def test_error_text_is_jaxs():
    with jax.numpy_dtype_promotion("strict"), funcgrad.numpy_dtype_promotion("strict"):
        with pytest.raises(jax.dtypes.TypePromotionError) as theirs:
            jnp.promote_types("int32", "float32")
        with pytest.raises(funcgrad.dtypes.TypePromotionError) as ours:
            fnp.promote_types("int32", "float32")
    assert str(ours.value) == str(theirs.value)
