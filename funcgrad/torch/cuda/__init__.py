"""torch.cuda for funcgrad.torch: cupy stands behind "cuda" devices.

The memory statistics (`memory`: allocated, reserved, their peaks, ``empty_cache``) are
cupy's default pool's. ``memory_summary()`` reports what live autograd graphs keep for
backward (on any device), followed by cupy's pool usage when a GPU is present. ``amp``:
the deprecated ``torch.cuda.amp`` spellings of `funcgrad.torch.amp`.
"""
from __future__ import annotations

from typing import Any

from funcgrad.backend import cupy_available
from funcgrad.torch._factories import manual_seed as seed_all
from funcgrad.torch.autograd.graph import memory_summary as graph_memory_summary
from funcgrad.torch.cuda import amp, memory
from funcgrad.torch.cuda.memory import (empty_cache, max_memory_allocated,
                                        max_memory_reserved, mem_get_info, memory_allocated,
                                        memory_reserved, memory_stats,
                                        reset_max_memory_allocated, reset_peak_memory_stats)

__all__ = ["is_available", "device_count", "current_device", "synchronize",
           "memory_summary", "empty_cache", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
           "reset_max_memory_allocated", "memory_stats", "mem_get_info", "get_device_name",
           "manual_seed", "manual_seed_all", "is_bf16_supported", "amp", "memory"]


def is_available() -> bool:
    """Whether cupy sees a GPU (funcgrad's cuda backend)."""
    return cupy_available()


def device_count() -> int:
    if not cupy_available():
        return 0
    import cupy  # only reached with a GPU present
    return int(cupy.cuda.runtime.getDeviceCount())


def current_device() -> int:
    if not cupy_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    import cupy  # only reached with a GPU present
    return int(cupy.cuda.Device().id)


def get_device_name(device: Any = None) -> str:
    import cupy  # only reached with a GPU present
    props = cupy.cuda.runtime.getDeviceProperties(0 if device is None else int(device))
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def synchronize(device: Any = None) -> None:
    if cupy_available():
        import cupy  # only reached with a GPU present
        cupy.cuda.Device().synchronize()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: cupy, funcgrad's CUDA backend, has no bfloat16 arrays (use float16)."""
    return False


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    out = graph_memory_summary()
    if cupy_available():
        import cupy  # only reached with a GPU present
        pool = cupy.get_default_memory_pool()
        out += (f"\ncupy memory pool: {pool.used_bytes()} bytes used, "
                f"{pool.total_bytes()} bytes held")
    return out


def manual_seed(seed: int) -> None:
    seed_all(seed)


manual_seed_all = manual_seed
