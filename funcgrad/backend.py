"""Backends: numpy on the CPU, cupy on NVIDIA GPUs, behind one small interface.

Primitive implementations are written with numpy's functions; cupy arrays take them over
through numpy's dispatch protocols, so the backend is picked by the inputs' array types and
never by a global switch. Moving data between devices is always explicit (`device_put`).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from funcgrad.array import Array, new_array, to_raw

__all__ = ["Backend", "backend_of", "device_of", "device_put", "devices", "cupy_available"]


class Backend:
    """A namespace of array functions (``xp``) and the name of its device kind."""

    def __init__(self, name: str, xp: Any):
        self.name = name
        self.xp = xp

    def __repr__(self) -> str:
        return f"Backend({self.name})"


NUMPY = Backend("cpu", np)


@functools.lru_cache(maxsize=None)
def _cupy() -> Any:
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None
        return cupy
    except Exception:  # not installed, no driver, no device
        return None


def cupy_available() -> bool:
    """Whether cupy is importable and sees at least one GPU."""
    return _cupy() is not None


@functools.lru_cache(maxsize=None)
def _cupy_backend() -> Backend:
    return Backend("gpu", _cupy())


def backend_of(raw: Any) -> Backend:
    """The backend owning a raw value (scalars and lists belong to numpy)."""
    if hasattr(raw, "__cuda_array_interface__"):
        return _cupy_backend()
    return NUMPY


def device_of(raw: Any) -> str:
    """'cpu', or 'gpu:N' for a cupy array on device N."""
    if hasattr(raw, "__cuda_array_interface__"):
        return f"gpu:{raw.device.id}"
    return "cpu"


def devices() -> list[str]:
    """The devices funcgrad can place arrays on: 'cpu' and one 'gpu:N' per visible GPU."""
    cp = _cupy()
    n = cp.cuda.runtime.getDeviceCount() if cp is not None else 0
    return ["cpu"] + [f"gpu:{i}" for i in range(n)]


def device_put(x: Any, device: str = "cpu") -> Any:
    """Copy an Array (or pytree of arrays) to ``device``: 'cpu', 'gpu' or 'gpu:N'.

    Differentiable: the cotangent is moved back to the input's device."""
    from funcgrad import tree_util
    from funcgrad.numpy._creation import device_put_p
    kind, _, index = device.partition(":")
    if kind not in ("cpu", "gpu"):
        raise ValueError(f"unknown device {device!r}; use 'cpu', 'gpu' or 'gpu:N' "
                         f"(available: {', '.join(devices())})")
    if kind == "gpu" and _cupy() is None:
        raise RuntimeError("device 'gpu' requested but cupy with a visible GPU is not "
                           "available; install funcgrad[cuda] on a machine with a GPU")
    target = "cpu" if kind == "cpu" else f"gpu:{index or 0}"
    return tree_util.tree_map(lambda leaf: device_put_p(leaf, device=target), x)


def to_device(raw: Any, device: str) -> Any:
    """Backend copy of a raw value onto ``device`` (used by the device_put primitive)."""
    if device == "cpu":
        return raw.get() if hasattr(raw, "__cuda_array_interface__") else np.array(raw)
    cp = _cupy()
    with cp.cuda.Device(int(device.split(":")[1])):
        return cp.asarray(raw)


def wrap_on(raw: Any, like: Any) -> Array:
    """A new Array holding ``raw`` on the same backend as ``like`` (creation helpers)."""
    return new_array(backend_of(to_raw(like)).xp.asarray(raw))
