"""Constants for rules: arrays that depend only on the shape, dtype and device of a value
(never on its data), placed on that value's device. Reading metadata keeps rules pure, so
they trace under every transform (jit included)."""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.array import Array, new_array
from funcgrad.backend import device_of, on_device_of

__all__ = ["device_of_value", "constant", "zeros_like", "ones_like"]


def device_of_value(x: Any) -> str:
    """'cpu' or 'gpu:N': where an Array, tracer or raw array lives."""
    if isinstance(x, Array):
        return x.device
    return device_of(x)


def constant(like: Any, raw: Any) -> Array:
    """A host (numpy) constant placed on the device of ``like`` (no copy on the CPU)."""
    return new_array(on_device_of(np.asarray(raw), device_of_value(like)))


def zeros_like(x: Any, dtype: Any = None, shape: tuple | None = None) -> Array:
    """Zeros with x's shape (or ``shape``), dtype (or ``dtype``) and device."""
    return constant(x, np.zeros(tuple(x.shape) if shape is None else shape,
                                x.dtype if dtype is None else dtype))


def ones_like(x: Any, dtype: Any = None, shape: tuple | None = None) -> Array:
    return constant(x, np.ones(tuple(x.shape) if shape is None else shape,
                               x.dtype if dtype is None else dtype))
