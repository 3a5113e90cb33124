"""Checks and wrapping of what a backend implementation returned (below `funcgrad.core`,
whose `bind` runs them for every primitive call).

`wrap_raw` makes a backend array an Array with the common case inlined; `check_floats` is
``jax_debug_nans`` / ``jax_debug_infs``; `check_same_device` refuses operands on different
devices with the fix in the message.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from funcgrad._config import float_checks
from funcgrad.array import Array, new_array
from funcgrad.backend import device_of

__all__ = ["check_floats", "wrap_raw", "check_same_device"]

_new = object.__new__


def check_floats(where: str, outs: Sequence) -> None:
    """FloatingPointError if a result holds a NaN (with ``jax_debug_nans``) or an infinity
    (``jax_debug_infs``), as JAX's message has it."""
    for o in outs:
        raw = o._value if isinstance(o, Array) else o
        if getattr(raw, "dtype", None) is None or raw.dtype.kind not in "fc":
            continue
        if float_checks.nans and bool(np.isnan(raw).any()):
            raise FloatingPointError(f"invalid value (nan) encountered in {where}")
        if float_checks.infs and bool(np.isinf(raw).any()):
            raise FloatingPointError(f"invalid value (inf) encountered in {where}")


def wrap_raw(out: Any) -> Array:
    """A backend result as an Array (`new_array`, with the common case inlined)."""
    if type(out) is np.ndarray:
        result = _new(Array)
        result._value = out
        result.shape = out.shape
        result.dtype = out.dtype
        result.ndim = out.ndim
        return result
    return new_array(out)


def check_same_device(prim: Any, raw: Sequence) -> None:
    devices = {device_of(r) for r in raw if hasattr(r, "shape")}
    if len(devices) > 1:
        raise ValueError(f"primitive {prim.name!r} got arrays on different devices: "
                         f"{' and '.join(sorted(devices))}. Move them to one device first "
                         "with funcgrad.device_put(x, device).")
