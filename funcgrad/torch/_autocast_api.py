"""The autocast state functions of the ``torch`` namespace (``torch.is_autocast_enabled``,
``torch.get_autocast_dtype``...), PyTorch's current and deprecated spellings."""
from __future__ import annotations

from typing import Any

from funcgrad.torch import _autocast as A
from funcgrad.torch._runtime import dtypes as D

__all__ = ["is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
           "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "clear_autocast_cache", "is_autocast_cpu_enabled", "set_autocast_cpu_enabled",
           "get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "get_autocast_gpu_dtype",
           "set_autocast_gpu_dtype", "autocast_increment_nesting",
           "autocast_decrement_nesting"]


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` (no argument: "cuda", as in PyTorch)."""
    return A.is_enabled("cuda" if device_type is None else device_type)


def set_autocast_enabled(device_type: Any, enabled: Any = None) -> None:
    """``set_autocast_enabled(device_type, enabled)`` (or the old ``(enabled)`` for cuda)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    A.set_enabled(device_type, enabled)


def get_autocast_dtype(device_type: str) -> D.dtype:
    """The low dtype autocast uses on ``device_type`` (bfloat16 on cpu, float16 on cuda,
    unless a region or `set_autocast_dtype` changed it)."""
    return A.get_dtype(device_type)


def set_autocast_dtype(device_type: str, dtype: D.dtype) -> None:
    A.set_dtype(device_type, dtype)


def is_autocast_cache_enabled() -> bool:
    return A.state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    A.state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    A.state.cache.clear()


def autocast_increment_nesting() -> int:
    A.state.nesting += 1
    return A.state.nesting


def autocast_decrement_nesting() -> int:
    A.state.nesting -= 1
    return A.state.nesting


def is_autocast_cpu_enabled() -> bool:
    return A.is_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    A.set_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> D.dtype:
    return A.get_dtype("cpu")


def set_autocast_cpu_dtype(dtype: D.dtype) -> None:
    A.set_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> D.dtype:
    return A.get_dtype("cuda")


def set_autocast_gpu_dtype(dtype: D.dtype) -> None:
    A.set_dtype("cuda", dtype)
