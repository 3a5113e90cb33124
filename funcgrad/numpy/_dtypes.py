"""Data types, their inspection functions and the Array API's namespace attributes.

The dtype objects are numpy's (``fnp.float32 is np.float32``), so that numpy code and
funcgrad code compare and mix dtypes freely; ``bfloat16`` is ml_dtypes' (the optional
``lowp`` extra; `funcgrad.dtypes`), which numpy promotes as it does float16 (bfloat16 with
float16 or float32 is float32, with a Python float bfloat16), and which `issubdtype` and
`isdtype` count as a real floating dtype, as jax.numpy does. `result_type` and
`promote_types` follow JAX's promotion lattice, not numpy's. `finfo`/`iinfo`, `can_cast`,
`result_type` accept Arrays (traced ones too: only the dtype is read). `__array_namespace_info__` answers
the Array API's inspection questions; devices are the strings `funcgrad.devices()` lists
('cpu', 'gpu:0', ...).
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from funcgrad import _promotion, dtypes as _lowp
from funcgrad._config import default_complex, default_float, default_int
from funcgrad.array import Array
from funcgrad.backend import devices as _devices

__all__ = [
    "bool", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "float16", "float32", "float64", "complex64", "complex128", "int_", "intc",
    "intp", "uint", "uintc", "uintp", "byte", "ubyte", "short", "ushort", "long", "ulong",
    "longlong", "ulonglong", "half", "single", "double", "longdouble", "csingle", "cdouble",
    "clongdouble", "float_", "complex_", "generic", "number", "integer", "signedinteger",
    "unsignedinteger", "inexact", "floating", "complexfloating", "flexible", "character",
    "dtype", "finfo", "iinfo", "result_type", "promote_types", "can_cast", "isdtype",
    "issubdtype", "min_scalar_type", "common_type", "mintypecode", "typename",
    "sctypeDict", "typecodes", "ScalarType", "True_", "False_", "little_endian",
    "ComplexWarning", "pi", "e", "inf", "nan", "newaxis", "euler_gamma",
    "__array_api_version__", "__array_namespace_info__", "ArrayNamespaceInfo",
]

from numpy import (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                   float16, float32, float64, complex64, complex128, int_, intc, intp, uint,
                   uintc, uintp, byte, ubyte, short, ushort, long, ulong, longlong,
                   ulonglong, half, single, double, longdouble, csingle, cdouble,
                   clongdouble, generic, number, integer, signedinteger, unsignedinteger,
                   inexact, floating, complexfloating, flexible, character, dtype,
                   min_scalar_type, mintypecode, typename,
                   sctypeDict, typecodes, ScalarType, True_, False_, little_endian, pi, e,
                   inf, nan, newaxis, euler_gamma)
from numpy.exceptions import ComplexWarning

bool = np.bool_  # the Array API's name (numpy 2's np.bool)
float_, complex_ = float64, complex128  # JAX's aliases
if _lowp.bfloat16_available():
    bfloat16 = _lowp.require_bfloat16().type  # ml_dtypes.bfloat16
    __all__.append("bfloat16")

__array_api_version__ = "2024.12"


def _dtype_of(x: Any) -> Any:
    """The dtype of an Array (traced or not); anything else as it is."""
    return x.dtype if isinstance(x, Array) else x


class finfo:
    """Machine limits of a floating-point (or complex) dtype, given as a dtype or an array.
    ``bits``, ``eps``, ``max``, ``min``, ``smallest_normal``, ``tiny``, ``resolution`` and
    ``epsneg`` are Python numbers (the Array API's contract); every other attribute of
    numpy's finfo is available too."""

    def __init__(self, type: Any):
        self._np = np.finfo(_dtype_of(type))
        self.dtype = self._np.dtype
        self.bits = int(self._np.bits)
        for name in ("eps", "max", "min", "smallest_normal", "tiny", "resolution", "epsneg"):
            setattr(self, name, float(getattr(self._np, name)))

    def __getattr__(self, name: str) -> Any:
        if name == "_np":
            raise AttributeError(name)
        return getattr(self._np, name)

    def __repr__(self) -> str:
        return repr(self._np)


def iinfo(int_type: Any) -> np.iinfo:
    """Machine limits of an integer dtype, given as a dtype or an array."""
    return np.iinfo(_dtype_of(int_type))


def result_type(*args: Any, return_weak_type_flag: builtins.bool = False) -> Any:
    """The dtype JAX's promotion gives arrays, dtypes and Python numbers (weakly typed),
    canonicalized (32-bit with x64 disabled): what an elementwise function computes in
    (`funcgrad._promotion`; int64 with float32 is float32, where numpy says float64)."""
    return _promotion.result_type(*args, return_weak_type_flag=return_weak_type_flag)


def promote_types(type1: Any, type2: Any) -> np.dtype:
    """The promoted dtype of two dtypes on JAX's lattice (not canonicalized, as
    ``jnp.promote_types``): int32 with float16 is float16, uint64 with int64 float64."""
    return _promotion.promote_types(type1, type2)


def can_cast(from_: Any, to: Any, casting: str = "safe") -> builtins.bool:
    """Whether a cast from ``from_`` (a dtype or an array) to ``to`` is allowed by
    ``casting`` ('safe' by default, the Array API's meaning)."""
    return builtins.bool(np.can_cast(_dtype_of(from_), to, casting))


def isdtype(dtype: Any, kind: Any) -> builtins.bool:
    """Whether ``dtype`` is of ``kind``: a dtype, one of 'bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric', or a
    tuple of these (bfloat16 is 'real floating' and 'numeric', as in jax.numpy)."""
    if _lowp.EXTENDED_FLOATS and np.dtype(dtype) in _lowp.EXTENDED_FLOATS:
        kinds = kind if isinstance(kind, tuple) else (kind,)
        return builtins.any(k in ("real floating", "numeric") or (
            not isinstance(k, str) and np.dtype(k) == np.dtype(dtype)) for k in kinds)
    return builtins.bool(np.isdtype(dtype, kind))


def issubdtype(arg1: Any, arg2: Any) -> builtins.bool:
    """numpy's issubdtype, with bfloat16 under ``floating``, ``inexact`` and ``number``
    (jax.numpy's answer; numpy files ml_dtypes' types elsewhere)."""
    return _lowp.issubdtype(_dtype_of(arg1), arg2)


def common_type(*arrays: Any) -> type:
    """The inexact scalar type common to the arrays (numpy's rule)."""
    return np.common_type(*(np.empty(0, a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype)
                            for a in arrays))


_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]


class ArrayNamespaceInfo:
    """The Array API's inspection object, ``fnp.__array_namespace_info__()``."""

    def capabilities(self) -> dict:
        """Boolean indexing and data-dependent shapes work (transforms are eager); numpy's
        limit of 64 dimensions applies."""
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 64}

    def default_device(self) -> str:
        return "cpu"

    def devices(self) -> list:
        return list(_devices())

    def default_dtypes(self, *, device: Any = None) -> dict:
        """64-bit defaults, or 32-bit ones when ``jax_enable_x64`` is off."""
        self._check(device)
        return {"real floating": default_float(), "complex floating": default_complex(),
                "integral": default_int(), "indexing": default_int()}

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict:
        """The dtypes of ``kind`` (None: all), by name."""
        self._check(device)
        kinds = (kind,) if kind is None or isinstance(kind, str) else tuple(kind)
        names: list = []
        for k in kinds:
            if k is None:
                group = ("bool",) + _KINDS["numeric"]
            elif k in _KINDS:
                group = _KINDS[k]
            else:
                raise ValueError(f"unknown dtype kind {k!r}; use one of {sorted(_KINDS)}")
            names.extend(n for n in group if n not in names)
        return {n: np.dtype(n) for n in names}

    def _check(self, device: Any) -> None:
        if device is not None and str(device) not in self.devices():
            raise ValueError(f"unknown device {device!r}; devices: {self.devices()}")

    def __repr__(self) -> str:
        return "funcgrad.numpy.__array_namespace_info__()"


__array_namespace_info__ = ArrayNamespaceInfo
