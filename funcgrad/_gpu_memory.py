"""Memory statistics of cupy's default pool, with the peaks it does not keep itself.

cupy's pool knows how many bytes its live arrays use (``used_bytes``) and how many it
holds from the driver (``total_bytes``), for the current device, but no peak. `track`
(called by `funcgrad.backend` when it first loads cupy) routes cupy's allocations
through a function that, after each one, records the highest used and held byte counts
per device: a peak can only be reached at an allocation, so the record is exact for
every allocation made through cupy's default allocator from then on. `funcgrad.torch.cuda`
answers ``max_memory_allocated`` and friends from here.
"""
from __future__ import annotations

import threading
from typing import Any

__all__ = ["track", "used", "held", "peak_used", "peak_held", "reset_peaks", "free_cached"]

_lock = threading.Lock()
_peaks: dict = {}  # device index -> [peak used bytes, peak held bytes]
_cupy: list = []   # the cupy module, once tracking is installed


def track(cupy: Any) -> None:
    """Make cupy's default allocator record peaks (once)."""
    if _cupy:
        return
    pool = cupy.get_default_memory_pool()
    runtime = cupy.cuda.runtime

    def malloc(nbytes: int) -> Any:
        memory = pool.malloc(nbytes)
        device = runtime.getDevice()
        used_now, held_now = pool.used_bytes(), pool.total_bytes()
        with _lock:
            peak = _peaks.setdefault(device, [0, 0])
            peak[0] = max(peak[0], used_now)
            peak[1] = max(peak[1], held_now)
        return memory

    cupy.cuda.set_allocator(malloc)
    _cupy.append(cupy)


def _on(device: int, what: str) -> int:
    cupy = _cupy[0]
    with cupy.cuda.Device(device):
        pool = cupy.get_default_memory_pool()
        return int(pool.used_bytes() if what == "used" else pool.total_bytes())


def used(device: int) -> int:
    """Bytes in use by live arrays on ``device`` (0 before cupy is loaded)."""
    return _on(device, "used") if _cupy else 0


def held(device: int) -> int:
    """Bytes cupy's pool holds on ``device`` (in use or cached for reuse)."""
    return _on(device, "held") if _cupy else 0


def peak_used(device: int) -> int:
    with _lock:
        return max(_peaks.get(device, [0, 0])[0], used(device))


def peak_held(device: int) -> int:
    with _lock:
        return max(_peaks.get(device, [0, 0])[1], held(device))


def reset_peaks(device: int) -> None:
    """Start the peaks of ``device`` again from what is in use and held now."""
    current = [used(device), held(device)]
    with _lock:
        _peaks[device] = current


def free_cached() -> None:
    """Give the pool's cached blocks (not those of live arrays) back to the driver."""
    if _cupy:
        _cupy[0].get_default_memory_pool().free_all_blocks()
        _cupy[0].get_default_pinned_memory_pool().free_all_blocks()
