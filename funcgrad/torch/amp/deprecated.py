"""The deprecated spellings ``torch.cpu.amp`` and ``torch.cuda.amp``: torch.amp's autocast
and GradScaler for one device, each warning with PyTorch's FutureWarning when made."""
from __future__ import annotations

import warnings
from typing import Any

from funcgrad.torch.amp import autocast_mode, grad_scaler

__all__ = ["device_classes"]


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"`{old}(args...)` is deprecated. Please use `{new}` instead.",
                  FutureWarning, stacklevel=3)


def device_classes(device: str, default_dtype: Any) -> tuple[type, type]:
    """(autocast, GradScaler) of ``torch.<device>.amp``."""
    prefix = f"torch.{device}.amp"

    class autocast(autocast_mode.autocast):
        __doc__ = f"``{prefix}.autocast(args...)`` is ``torch.amp.autocast('{device}', ...)``."

        def __init__(self, enabled: bool = True, dtype: Any = default_dtype,
                     cache_enabled: bool = True):
            _deprecated(f"{prefix}.autocast", f"torch.amp.autocast('{device}', args...)")
            super().__init__(device, dtype=dtype, enabled=enabled,
                             cache_enabled=cache_enabled)

    class GradScaler(grad_scaler.GradScaler):
        __doc__ = (f"``{prefix}.GradScaler(args...)`` is "
                   f"``torch.amp.GradScaler('{device}', ...)``.")

        def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                     backoff_factor: float = 0.5, growth_interval: int = 2000,
                     enabled: bool = True) -> None:
            _deprecated(f"{prefix}.GradScaler", f"torch.amp.GradScaler('{device}', args...)")
            super().__init__(device, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval,
                             enabled=enabled)

    for cls in (autocast, GradScaler):
        cls.__module__ = f"funcgrad.{prefix}"
        cls.__qualname__ = cls.__name__
    return autocast, GradScaler
