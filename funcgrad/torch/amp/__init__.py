"""torch.amp for funcgrad.torch: automatic mixed precision.

`autocast` runs listed ops in lower precision inside a region (PyTorch's per-device op
lists), `GradScaler` scales the loss so that float16 gradients do not underflow, and
`custom_fwd`/`custom_bwd` make custom autograd Functions autocast-aware. The functional
counterparts for funcgrad code are in `funcgrad.amp` (precision policies, loss scales).
"""
from funcgrad.torch.amp.autocast_mode import (autocast, custom_bwd, custom_fwd,
                                              is_autocast_available)
from funcgrad.torch.amp.grad_scaler import GradScaler
from funcgrad.torch.amp import autocast_mode, grad_scaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available",
           "autocast_mode", "grad_scaler"]
