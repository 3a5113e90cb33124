"""torch.accelerator for funcgrad.torch: the one accelerator funcgrad has is cupy's GPU.

``is_available()`` is true exactly when cupy sees a GPU (then the accelerator is
``device('cuda')``); without one, the device queries raise PyTorch's error.
"""
from __future__ import annotations

from typing import Any

from funcgrad.backend import cupy_available
from funcgrad.torch._runtime import dtypes as D

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "current_device_idx", "set_device_index", "set_device_idx", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    """Whether cupy sees a GPU."""
    return cupy_available()


def current_accelerator(check_available: bool = False) -> D.device | None:
    """``device('cuda')`` when cupy is usable, else None."""
    return D.device("cuda") if cupy_available() else None


def device_count() -> int:
    if not cupy_available():
        return 0
    import cupy  # optional dependency: only imported once cupy is known to work
    return int(cupy.cuda.runtime.getDeviceCount())


def current_device_index() -> int:
    _require()
    import cupy  # optional dependency: only imported once cupy is known to work
    return int(cupy.cuda.Device().id)


def set_device_index(device: Any, /) -> None:
    """Make GPU ``device`` (an index, 'cuda:N' or a device) cupy's current device."""
    _require()
    import cupy  # optional dependency: only imported once cupy is known to work
    cupy.cuda.Device(_index(device)).use()


def synchronize(device: Any = None, /) -> None:
    """Wait for the work queued on the GPU (all of cupy's current device)."""
    _require()
    import cupy  # optional dependency: only imported once cupy is known to work
    cupy.cuda.Device(_index(device)).synchronize()


current_device_idx = current_device_index
set_device_idx = set_device_index


def _require() -> None:
    if not cupy_available():
        raise RuntimeError(_NONE)


def _index(device: Any) -> int:
    if device is None:
        return current_device_index()
    if isinstance(device, int):
        return device
    d = D.device(device)
    return d.index if d.index is not None else current_device_index()
