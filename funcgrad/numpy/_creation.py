"""Array creation: asarray/array and the constant factories (not differentiable: their
results are constants; ``*_like`` take only the shape, dtype and device of their argument)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from funcgrad.array import Array, new_array, to_raw
from funcgrad.backend import backend_of
from funcgrad.core import Tracer
from funcgrad.primitives.control import convert_element_type, device_put

__all__ = ["asarray", "array", "zeros", "ones", "empty", "full", "zeros_like", "ones_like",
           "empty_like", "full_like", "arange", "linspace", "logspace", "eye", "identity",
           "astype", "float32", "float64", "complex64", "complex128", "int32", "int64",
           "bool_", "float16", "uint8", "int8", "int16", "dtype", "finfo", "iinfo",
           "result_type", "pi", "e", "inf", "nan", "newaxis", "ndim", "shape", "size",
           "issubdtype", "floating", "integer", "inexact", "complexfloating", "number",
           "signedinteger", "unsignedinteger"]

from numpy import (float16, float32, float64, complex64, complex128, int8, int16, int32,
                   int64, uint8, bool_, dtype, finfo, iinfo, result_type, pi, e, inf, nan,
                   newaxis, issubdtype, floating, integer, inexact, complexfloating, number,
                   signedinteger, unsignedinteger)


def _contains_array(x: Any) -> bool:
    if isinstance(x, Array):
        return True
    return isinstance(x, (list, tuple)) and any(_contains_array(e) for e in x)


def asarray(a: Any, dtype: Any = None) -> Array:
    """``a`` as an Array (no copy for an Array; numpy input is copied, so that changing it
    later cannot change the Array). Lists holding Arrays are stacked, differentiably."""
    if isinstance(a, Array):
        return a if dtype is None or a.dtype == np.dtype(dtype) else astype(a, dtype)
    if isinstance(a, (list, tuple)) and _contains_array(a):
        from funcgrad.numpy._shape import stack
        out = stack([asarray(e) for e in a])
        return out if dtype is None else astype(out, dtype)
    raw = to_raw(a)
    return new_array(backend_of(raw).xp.array(raw, dtype=dtype, copy=True))


def array(object: Any, dtype: Any = None, copy: bool = True, ndmin: int = 0) -> Array:
    """numpy.array: like `asarray` (Arrays are immutable, so a copy is never needed)."""
    out = asarray(object, dtype)
    if out.ndim < ndmin:
        from funcgrad.numpy._shape import reshape
        out = reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


def astype(x: Any, dtype: Any) -> Array:
    """x cast to dtype; differentiable between float and complex dtypes."""
    x = asarray(x)
    dtype = np.dtype(dtype)
    return x if x.dtype == dtype else convert_element_type(x, new_dtype=dtype)


def _shape(shape: int | Sequence[int]) -> tuple:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def _xp_like(a: Any) -> Any:
    if isinstance(a, Tracer):
        a = a.concrete()
    return backend_of(a._value if isinstance(a, Array) else to_raw(a)).xp


def _placed(raw: np.ndarray, device: str | None) -> Array:
    """A new Array of ``raw`` on ``device`` (None or 'cpu': stays in host memory)."""
    if device is None or device == "cpu":
        return new_array(raw)
    return device_put(new_array(raw), device)


def zeros(shape: int | Sequence[int], dtype: Any = float, device: str | None = None) -> Array:
    return _placed(np.zeros(_shape(shape), dtype), device)


def ones(shape: int | Sequence[int], dtype: Any = float, device: str | None = None) -> Array:
    return _placed(np.ones(_shape(shape), dtype), device)


def empty(shape: int | Sequence[int], dtype: Any = float, device: str | None = None) -> Array:
    """Zeros (an immutable array has no use for uninitialised memory)."""
    return zeros(shape, dtype, device)


def full(shape: int | Sequence[int], fill_value: Any, dtype: Any = None,
         device: str | None = None) -> Array:
    return _placed(np.full(_shape(shape), to_raw(fill_value), dtype), device)


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Array:
    xp = _xp_like(a)
    a_shape = np.shape(a) if not isinstance(a, Array) else a.shape
    a_dtype = a.dtype if isinstance(a, Array) else np.asarray(a).dtype
    return new_array(xp.full(a_shape if shape is None else _shape(shape), fill_value,
                             a_dtype if dtype is None else dtype))


def zeros_like(a: Any, dtype: Any = None, shape: Any = None) -> Array:
    return full_like(a, 0, dtype, shape)


def ones_like(a: Any, dtype: Any = None, shape: Any = None) -> Array:
    return full_like(a, 1, dtype, shape)


def empty_like(a: Any, dtype: Any = None, shape: Any = None) -> Array:
    return zeros_like(a, dtype, shape)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Array:
    return new_array(np.arange(start, stop, step, dtype=dtype) if stop is not None else
                     np.arange(start, dtype=dtype) if step is None else
                     np.arange(0, start, step, dtype=dtype))


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             dtype: Any = None) -> Array:
    return new_array(np.linspace(to_raw(start), to_raw(stop), num, endpoint=endpoint,
                                 dtype=dtype))


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             base: float = 10.0, dtype: Any = None) -> Array:
    return new_array(np.logspace(start, stop, num, endpoint=endpoint, base=base, dtype=dtype))


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = float,
        device: str | None = None) -> Array:
    return _placed(np.eye(N, M, k, dtype), device)


def identity(n: int, dtype: Any = float) -> Array:
    return eye(n, dtype=dtype)


def ndim(a: Any) -> int:
    return a.ndim if isinstance(a, Array) else np.ndim(a)


def shape(a: Any) -> tuple:
    return tuple(a.shape) if isinstance(a, Array) else np.shape(a)


def size(a: Any, axis: int | None = None) -> int:
    s = shape(a)
    return int(np.prod(s)) if axis is None else s[axis]
