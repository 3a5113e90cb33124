"""torch.cpu.amp (deprecated in PyTorch for torch.amp): autocast and GradScaler for "cpu",
with PyTorch's FutureWarnings."""
from __future__ import annotations

from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch.amp.deprecated import device_classes

__all__ = ["autocast", "GradScaler"]

autocast, GradScaler = device_classes("cpu", D.bfloat16)
