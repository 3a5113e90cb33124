"""Floating dtypes beyond numpy's own: bfloat16 and the float8 formats, from the optional
``ml_dtypes`` package.

numpy has float16 but no bfloat16 (8 exponent bits like float32, 7 mantissa bits). The
``ml_dtypes`` package (JAX's) registers one with numpy: ufunc loops, casts and promotion
(bfloat16 with float16 or float32 gives float32). It is optional (the ``lowp`` extra);
without it funcgrad works as before and asking for bfloat16 raises an error saying what to
install.

numpy gives ml_dtypes' types the dtype kind "V", so ``dtype.kind in "fc"`` (how funcgrad
asks whether a value carries a derivative) is false for them: `is_inexact`,
`is_floating` and `issubdtype` answer for them too, and the hot paths test
``dtype.kind in "fc" or dtype in EXTENDED_FLOATS``.

This module sits at the bottom of the import order (numpy only), beside `funcgrad.backend`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad._config import default_int

__all__ = ["EXTENDED_FLOATS", "FLOAT8", "LOW_FLOATS", "FLOAT8_NAMES", "is_inexact",
           "is_floating", "issubdtype", "bfloat16_available", "require_bfloat16",
           "require_ml_dtype", "canonical_dtype", "finfo", "TypePromotionError"]


class TypePromotionError(ValueError):
    """Operands whose dtypes have no common type on JAX's lattice (JAX's
    ``jax.dtypes.TypePromotionError``; raised by `funcgrad._promotion`)."""

try:
    import ml_dtypes as _ml_dtypes  # optional: the `lowp` extra
except ImportError:  # funcgrad works without it; only bfloat16 is missing
    _ml_dtypes = None

_BFLOAT16 = None if _ml_dtypes is None else np.dtype(_ml_dtypes.bfloat16)

# the 8-bit floating formats of ml_dtypes that JAX and PyTorch both name (storage formats:
# PyTorch converts them and little else; numpy computes in them through float32)
FLOAT8_NAMES = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")
_FLOAT8 = () if _ml_dtypes is None else tuple(np.dtype(getattr(_ml_dtypes, name))
                                              for name in FLOAT8_NAMES)

# the floating dtypes numpy gives kind "V" (ml_dtypes'), that funcgrad computes in
EXTENDED_FLOATS: frozenset = frozenset(() if _BFLOAT16 is None else (_BFLOAT16,) + _FLOAT8)
# every 8-bit float of ml_dtypes: on JAX's promotion lattice (`funcgrad._promotion`) with no
# implicit promotion to any other type
FLOAT8: frozenset = frozenset() if _ml_dtypes is None else frozenset(
    np.dtype(getattr(_ml_dtypes, n)) for n in dir(_ml_dtypes) if n.startswith("float8_"))
# the 16-bit floating dtypes, whose matrix products the kernels accumulate in float32
LOW_FLOATS: frozenset = frozenset([np.dtype(np.float16)]) | EXTENDED_FLOATS

_MISSING = ("{} needs the ml_dtypes package, which is not installed: pip install "
            "'funcgrad[lowp]' (or pip install ml_dtypes)")


def bfloat16_available() -> bool:
    """Whether the ml_dtypes package is installed (so bfloat16 can be used)."""
    return _BFLOAT16 is not None


def require_bfloat16() -> np.dtype:
    """numpy's bfloat16 dtype, or an ImportError saying how to get it."""
    return require_ml_dtype("bfloat16")


def require_ml_dtype(name: str) -> np.dtype:
    """numpy's dtype for ml_dtypes' format ``name`` (bfloat16, float8_e4m3fn...), or an
    ImportError saying how to get it."""
    if _ml_dtypes is None:
        raise ImportError(_MISSING.format(name))
    return np.dtype(getattr(_ml_dtypes, name))


def finfo(dtype: Any) -> Any:
    """numpy's finfo, or ml_dtypes' for its floats (numpy's own refuses them)."""
    d = np.dtype(dtype)
    return _ml_dtypes.finfo(d) if d in EXTENDED_FLOATS else np.finfo(d)


def __getattr__(name: str) -> Any:
    if name == "bfloat16":  # the scalar type, as jax.dtypes.bfloat16 / ml_dtypes.bfloat16
        return require_bfloat16().type
    raise AttributeError(f"module 'funcgrad.dtypes' has no attribute {name!r}")


def canonical_dtype(dtype: Any) -> np.dtype:
    """``np.dtype(dtype)``, where the string 'bfloat16' also works before ml_dtypes has
    been imported by anyone else (and raises the install hint without it)."""
    if isinstance(dtype, str) and (dtype == "bfloat16" or dtype in FLOAT8_NAMES):
        return require_ml_dtype(dtype)
    return np.dtype(dtype)


def is_floating(dtype: Any) -> bool:
    """Whether ``dtype`` is a real floating dtype (float16/32/64, longdouble, bfloat16)."""
    d = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
    return d.kind == "f" or d in EXTENDED_FLOATS


def is_inexact(dtype: Any) -> bool:
    """Whether values of ``dtype`` carry derivatives: floating (bfloat16 too) or complex."""
    d = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
    return d.kind == "f" or d.kind == "c" or d in EXTENDED_FLOATS


_FLOAT_ABSTRACT = (np.floating, np.inexact, np.number, np.generic)


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """numpy's ``issubdtype``, with ml_dtypes' floats (bfloat16, float8) sub-dtypes of
    ``np.floating`` (and so of ``np.inexact`` and ``np.number``), as in jax.numpy."""
    if (EXTENDED_FLOATS and isinstance(arg2, type) and arg2 in _FLOAT_ABSTRACT
            and _is_extended_float(arg1)):
        return True
    return bool(np.issubdtype(arg1, arg2))


def _is_extended_float(x: Any) -> bool:
    try:
        return np.dtype(x) in EXTENDED_FLOATS
    except TypeError:
        return False


# dtypes that hold no numbers: objects, strings, bytes, dates and times (a 'V' dtype may be
# a number format of ml_dtypes: bfloat16, float8)
_NON_NUMERIC = "OSUMm"


def check_python_int(value: int) -> None:
    """OverflowError (JAX's text) for a Python int outside the default integer dtype: numpy
    would keep it as an object (or an unsigned) array instead of refusing it."""
    bounds = np.iinfo(default_int())
    if not bounds.min <= value <= bounds.max:
        raise OverflowError(f"Python int {value} too large to convert to {bounds.dtype.name}")


def check_numeric(raw: Any) -> None:
    """Refuse an array that holds no numbers (JAX's texts: ValueError for a None in it,
    OverflowError for a Python int too large, TypeError otherwise), before it reaches an
    operation or a compiled program that would fail inside, far from the cause."""
    dtype = getattr(raw, "dtype", None)
    if dtype is None or dtype.kind not in _NON_NUMERIC:
        return
    if dtype.kind == "O":
        for v in np.asarray(raw).flat:
            if v is None:
                raise ValueError("None is not a valid value for jnp.array")
            if type(v) is int:
                check_python_int(v)
    raise TypeError(f"Value {raw!r} with dtype {dtype} is not a valid JAX array type. Only "
                    "arrays of numeric types are supported by JAX.")
