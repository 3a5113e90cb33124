"""Primitives that steer differentiation or move data rather than compute.

| primitive            | derivative                                            |
|----------------------|-------------------------------------------------------|
| stop_gradient        | none: its output is a constant to every transform     |
| convert_element_type | the cotangent cast back to the input's dtype          |
| device_put           | the cotangent moved back to the input's device        |
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import tree_util
from funcgrad.array import new_array, weakened
from funcgrad.backend import check_device, device_of, to_device
from funcgrad.core import Primitive
from funcgrad.meta import to_meta
from . import sampling
from .batching import passthrough


def _identity(x: Any) -> Any:
    return x


stop_gradient = Primitive(
    "stop_gradient", _identity, differentiable=False, keeps_weak=True,
    doc="The value of x, treated as a constant by every transform (zero derivative).")


def _convert(x: Any, new_dtype: np.dtype, weak_type: bool = False) -> Any:
    """x as ``new_dtype``, the raw array (what compiled programs run: dtypes are fixed
    there, and weak types matter only to the promotion done while tracing)."""
    if np.iscomplexobj(x) and not np.issubdtype(new_dtype, np.complexfloating):
        x = x.real  # as JAX: converting complex to real keeps the real part
    return x.astype(new_dtype, copy=False) if hasattr(x, "astype") else np.asarray(
        x, dtype=new_dtype)


def _convert_eager(x: Any, new_dtype: np.dtype, weak_type: bool = False) -> Any:
    """`_convert`, weakly typed with ``weak_type`` (JAX's parameter: the promotion's cast
    of ``int32 * 2.0``'s int32 to a weak float): a `WeakArray`, which `bind` passes on
    as it is (its results are otherwise strong: ``keeps_weak`` is off)."""
    out = _convert(x, new_dtype)
    return weakened(new_array(out)) if weak_type else out


convert_element_type = Primitive(
    "convert_element_type", _convert_eager, params=("new_dtype", "weak_type"),
    sample=sampling.custom(lambda rng, draw: [sampling.Case(
        lambda x: convert_element_type(x, new_dtype=np.dtype(np.complex128)),
        (sampling.values(rng, sampling.draw_shape(draw)),), "float64 -> complex128")]),
    doc="x cast to new_dtype (complex to real keeps the real part).")
convert_element_type.defvjp(lambda g: g)  # the tape casts g back to x's dtype
convert_element_type.defjvp(lambda t, new_dtype: convert_element_type(t, new_dtype=new_dtype))
convert_element_type.lowering = _convert


def _device_put(x: Any, device: str) -> Any:
    if device == "meta":  # the shape and dtype alone (off the meta device: MetaTrace refuses)
        return to_meta(x)
    return x if device_of(x) == device else to_device(x, device)


device_put_p = Primitive(
    "device_put", _device_put, params=("device",), keeps_weak=True,
    sample=sampling.custom(lambda rng, draw: [sampling.Case(
        lambda x: device_put_p(x, device="cpu"),
        (sampling.values(rng, sampling.draw_shape(draw)),), "cpu -> cpu")]),
    doc="x copied to device ('cpu', 'gpu:N' or 'meta').")
device_put_p.defvjp(lambda g, x: device_put_p(g, device=x.device))
device_put_p.defjvp(lambda t, device: device_put_p(t, device=device))


def device_put(x: Any, device: str = "cpu") -> Any:
    """Copy an Array (or pytree of arrays) to ``device``: 'cpu', 'gpu', 'gpu:N', or 'meta'
    (its shape and dtype only, see `funcgrad.meta`; nothing can be copied off it).

    Differentiable: the cotangent is moved back to the input's device."""
    target = check_device(device)
    return tree_util.tree_map(lambda leaf: device_put_p(leaf, device=target), x)


# -- batching rules (vmap): see funcgrad.primitives.batching ------------------------------
# elementwise: the batch axis stays where it is
for _p in (stop_gradient, convert_element_type, device_put_p):
    passthrough(_p)
