"""torch.cuda.amp (deprecated in PyTorch for torch.amp): autocast and GradScaler for
"cuda", with PyTorch's FutureWarnings."""
from __future__ import annotations

import warnings
from typing import Any, Callable

from funcgrad.torch import _dtypes as D
from funcgrad.torch.amp import autocast_mode, grad_scaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(autocast_mode.autocast):
    """``torch.cuda.amp.autocast(args...)`` is ``torch.amp.autocast("cuda", args...)``."""

    def __init__(self, enabled: bool = True, dtype: Any = D.float16,
                 cache_enabled: bool = True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(grad_scaler.GradScaler):
    """``torch.cuda.amp.GradScaler(args...)`` is ``torch.amp.GradScaler("cuda", args...)``."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd: Callable | None = None, *, cast_inputs: Any = None) -> Callable:
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return autocast_mode.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd: Callable | None = None) -> Callable:
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return autocast_mode.custom_bwd(bwd, device_type="cuda")
