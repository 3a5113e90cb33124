"""torch.cuda.amp (deprecated in PyTorch for torch.amp): autocast and GradScaler for
"cuda", with PyTorch's FutureWarnings."""
from __future__ import annotations

import warnings
from typing import Any, Callable

from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch.amp import autocast_mode
from funcgrad.torch.amp.deprecated import device_classes

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


autocast, GradScaler = device_classes("cuda", D.float16)


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
