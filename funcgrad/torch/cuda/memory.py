"""torch.cuda.memory for funcgrad.torch: the memory of cupy's default pool, per GPU.

"Allocated" is what live arrays use, "reserved" what the pool holds from the driver (in
use or cached); the peaks are recorded at every allocation since funcgrad loaded cupy
(`funcgrad._gpu_memory`), or since the last ``reset_peak_memory_stats``. Without a GPU
every count is 0 and ``memory_stats`` is empty, as in a PyTorch build without CUDA.
PyTorch keeps no such statistics for the CPU, so neither does the facade.
"""
from __future__ import annotations

import collections
import warnings
from typing import Any

from funcgrad import _gpu_memory
from funcgrad.backend import cupy_available
from funcgrad.torch._runtime import dtypes as D

__all__ = ["memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "empty_cache", "memory_stats", "mem_get_info"]


def _device_index(device: Any) -> int:
    """The GPU index ``device`` names (None: cupy's current device)."""
    import cupy  # only reached with a GPU present
    if device is None:
        return int(cupy.cuda.Device().id)
    if isinstance(device, int):
        return device
    d = D.device(device)
    return int(cupy.cuda.Device().id) if d.index is None else d.index


def memory_allocated(device: Any = None) -> int:
    """Bytes used by live arrays on the GPU."""
    return _gpu_memory.used(_device_index(device)) if cupy_available() else 0


def max_memory_allocated(device: Any = None) -> int:
    """The peak of `memory_allocated` since cupy was loaded or the last reset."""
    return _gpu_memory.peak_used(_device_index(device)) if cupy_available() else 0


def memory_reserved(device: Any = None) -> int:
    """Bytes cupy's pool holds on the GPU (allocated plus cached)."""
    return _gpu_memory.held(_device_index(device)) if cupy_available() else 0


def max_memory_reserved(device: Any = None) -> int:
    """The peak of `memory_reserved`."""
    return _gpu_memory.peak_held(_device_index(device)) if cupy_available() else 0


def reset_peak_memory_stats(device: Any = None) -> None:
    """Let the peaks start again from the current allocated and reserved bytes."""
    if cupy_available():
        _gpu_memory.reset_peaks(_device_index(device))


def reset_max_memory_allocated(device: Any = None) -> None:
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory "
                  "stats.", FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def empty_cache() -> None:
    """Give the blocks cupy's pools cache (not those in use) back to the driver, so that
    other processes and `memory_reserved` see them free."""
    if cupy_available():
        _gpu_memory.free_cached()


def memory_stats(device: Any = None) -> "collections.OrderedDict[str, int]":
    """PyTorch's keys for what the pool knows: allocated and reserved bytes, current and
    peak (empty without a GPU)."""
    if not cupy_available():
        return collections.OrderedDict()
    i = _device_index(device)
    return collections.OrderedDict([
        ("allocated_bytes.all.current", _gpu_memory.used(i)),
        ("allocated_bytes.all.peak", _gpu_memory.peak_used(i)),
        ("reserved_bytes.all.current", _gpu_memory.held(i)),
        ("reserved_bytes.all.peak", _gpu_memory.peak_held(i))])


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes of the GPU, as the driver reports them."""
    if not cupy_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    import cupy  # a GPU is present
    with cupy.cuda.Device(_device_index(device)):
        free, total = cupy.cuda.runtime.memGetInfo()
    return int(free), int(total)
