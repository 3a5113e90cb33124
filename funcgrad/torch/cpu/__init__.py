"""torch.cpu for funcgrad.torch: the CPU device module (its ``amp``; the device queries
PyTorch has: one CPU device, always available)."""
from __future__ import annotations

from typing import Any

from funcgrad.torch.cpu import amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device: Any = None) -> None:
    """Nothing to wait for: CPU work is done when a call returns."""
