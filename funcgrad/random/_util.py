"""Argument checking and small array helpers shared by the samplers of funcgrad.random.

Everything here reads only static facts (shapes, dtypes, Python numbers), never array
values, so the samplers stay traceable.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad._config import canonical_dtype, config, default_float
from funcgrad.array import Array
from funcgrad.primitives.control import stop_gradient
from funcgrad.primitives.random import bitcast_convert_type



def default_uint() -> np.dtype:
    """uint64, or uint32 with x64 disabled: `bits`' default, as `default_float` and
    `default_int` are the other samplers' (funcgrad.random gives JAX's numbers for JAX's
    setting of ``jax_enable_x64``: 64-bit by default, as numpy, 32-bit when disabled)."""
    return np.dtype(np.uint64 if config.x64_enabled else np.uint32)


class TypePromotionError(ValueError):
    """An argument cannot be cast to the requested dtype without losing precision."""


def canonical_shape(shape: Any) -> tuple:
    """``shape`` as a tuple of non-negative Python ints (an int is a 1-d shape)."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        dims = None
    if dims is None or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                               for d in dims):
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.")
    dims = tuple(int(d) for d in dims)
    if any(d < 0 for d in dims):
        raise ValueError(f"Shapes must have non-negative dimensions, got {dims}.")
    return dims


def broadcast_shapes(*shapes: Sequence[int]) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError("Incompatible shapes for broadcasting: shapes="
                         f"{[tuple(s) for s in shapes]}") from None


def check_shape(name: str, shape: tuple, *param_shapes: Sequence[int]) -> None:
    """The parameters must broadcast to exactly ``shape`` (JAX's rule and message)."""
    if param_shapes:
        result = broadcast_shapes(shape, *param_shapes)
        if result != tuple(shape):
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                             "argument, and the result of broadcasting the shapes must equal "
                             f"the shape argument, but got result {result} for shape argument "
                             f"{shape}.")


def check_broadcast_shapes(name: str, shape: Any, *args: Any) -> tuple:
    """``shape`` checked against the arguments, or their broadcast shape when None."""
    arg_shapes = [np.shape(a) if not isinstance(a, Array) else a.shape for a in args]
    if shape is None:
        return broadcast_shapes(*arg_shapes) if arg_shapes else ()
    shape = canonical_shape(shape)
    check_shape(name, shape, *arg_shapes)
    return shape


def shape_of(x: Any) -> tuple:
    return tuple(x.shape) if isinstance(x, Array) else np.shape(x)


def dtype_of(x: Any) -> np.dtype:
    """The dtype funcgrad gives x: an Array's own; for Python numbers the default float or
    int (`canonical_dtype`), or bool."""
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    return canonical_dtype(np.asarray(x).dtype)


def float_dtype(name: str, dtype: Any, kinds: str = "f", what: str = "a float") -> np.dtype:
    """The requested dtype (the default float when None), which must be of ``kinds``."""
    dtype = default_float() if dtype is None else np.dtype(dtype)
    if dtype.kind not in kinds:
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")
    return dtype


def check_all_safe_to_cast(name: str, dtype: np.dtype, *args: Any) -> None:
    """Python numbers always cast; arrays only to a dtype at least as wide of their kind
    (integers and booleans to any float), JAX's ``safe_to_cast``."""
    for arg in args:
        if not hasattr(arg, "dtype"):
            continue
        src = np.dtype(arg.dtype)
        safe = (src.kind in "biu" and dtype.kind in "fc") or (
            src.kind == dtype.kind and src.itemsize <= dtype.itemsize) or (
            src.kind == "f" and dtype.kind == "c" and 2 * src.itemsize <= dtype.itemsize)
        if not safe:
            raise TypePromotionError(f"In arguments to {name}, cannot safely cast argument of "
                                     f"type {src} to {dtype}")


def as_dtype(x: Any, dtype: np.dtype) -> Array:
    """x as an Array of dtype (differentiable for float x)."""
    return fnp.astype(fnp.asarray(x), dtype)


def broadcast_to_rank(x: Array, rank: int) -> Array:
    """x with leading axes of size 1 up to ``rank`` dimensions."""
    return x if x.ndim >= rank else fnp.reshape(x, (1,) * (rank - x.ndim) + tuple(x.shape))


def next_after(x: Any, up: bool) -> Array:
    """The float next to x toward +inf (``up``) or -inf, without derivative (lax.nextafter
    of stop_gradient(x)); composed of bit operations on x's integer view."""
    x = stop_gradient(fnp.asarray(x))
    info = np.finfo(x.dtype)
    signed = np.dtype(f"int{info.bits}")
    bits = bitcast_convert_type(x, new_dtype=signed)
    one, smallest = signed.type(1), signed.type(np.iinfo(signed).min)
    if up:  # magnitude grows above +0, shrinks below; -0 goes to the smallest positive
        moved = fnp.where(bits >= 0, bits + one, fnp.where(bits == smallest, one, bits - one))
        fixed = fnp.isnan(x) | (x == np.inf)
    else:  # +0 goes to the smallest negative (bits of -0 plus one)
        moved = fnp.where(bits > 0, bits - one,
                          fnp.where(bits == 0, smallest + one, bits + one))
        fixed = fnp.isnan(x) | (x == -np.inf)
    return fnp.where(fixed, x, bitcast_convert_type(moved, new_dtype=x.dtype))


def normalize_axis(axis: Any, ndim: int) -> int:
    """``axis`` in [0, ndim), numpy's AxisError otherwise."""
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim
