"""Backends: numpy on the CPU, cupy on NVIDIA GPUs, behind one small interface.

This is the bottom layer: it deals in raw backend arrays only and knows nothing of funcgrad's
Arrays. Primitive implementations are written with numpy's functions; cupy arrays take them
over through numpy's dispatch protocols, so the backend is picked by the inputs' array types
and never by a global switch. Moving data between devices is always explicit
(`funcgrad.device_put`).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from funcgrad import _gpu_memory

__all__ = ["Backend", "backend_of", "device_of", "devices", "cupy_available", "to_device",
           "on_device_of", "check_device", "synchronize"]


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
        import cupy  # optional: the `cuda` extra
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None
    except Exception:  # not installed, no driver, no device
        return None
    _gpu_memory.track(cupy)  # record the peaks of cupy's pool (torch.cuda.max_memory_*)
    return cupy


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


def device_count() -> int:
    """How many devices the default backend has (JAX's ``device_count``): the visible GPUs
    where there are any, else the one CPU."""
    return max(len(devices()) - 1, 1)


def local_devices() -> list[str]:
    """The devices of this process (one process: all of them)."""
    return devices()


def check_device(device: str) -> str:
    """The canonical name ('cpu', 'gpu:N' or 'meta') of a device given as 'cpu', 'gpu',
    'gpu:N' or 'meta' (shapes without values: `funcgrad.meta`), or a clear error when there
    is no such device."""
    kind, _, index = str(device).partition(":")
    if kind == "meta" and not index:
        return "meta"
    if kind not in ("cpu", "gpu"):
        raise ValueError(f"unknown device {device!r}; use 'cpu', 'gpu', 'gpu:N' or 'meta' "
                         f"(available: {', '.join(devices())}, meta)")
    if kind == "gpu" and _cupy() is None:
        raise RuntimeError("device 'gpu' requested but cupy with a visible GPU is not "
                           "available; install funcgrad[cuda] on a machine with a GPU")
    return "cpu" if kind == "cpu" else f"gpu:{index or 0}"


def to_device(raw: Any, device: str) -> Any:
    """Backend copy of a raw value onto ``device`` ('cpu' or 'gpu:N')."""
    if device == "cpu":
        return raw.get() if hasattr(raw, "__cuda_array_interface__") else np.array(raw)
    cp = _cupy()
    with cp.cuda.Device(int(device.split(":")[1])):
        return cp.asarray(raw)


def on_device_of(raw: Any, device: str) -> Any:
    """A host constant ``raw`` placed on ``device`` (itself on the CPU, no copy; also for
    the meta device, whose arrays combine with host constants into meta arrays)."""
    return raw if device == "cpu" or device == "meta" else to_device(raw, device)


def synchronize(raw: Any) -> None:
    """Wait until the work queued for ``raw`` is done: a cupy array's kernels run
    asynchronously on its device's current stream; numpy has nothing to wait for."""
    if hasattr(raw, "__cuda_array_interface__"):
        cp = _cupy()
        with cp.cuda.Device(raw.device.id):
            cp.cuda.get_current_stream().synchronize()
