"""``torch.autograd.grad_mode``: the grad-mode switches under PyTorch's module path (they
live in the runtime floor, `funcgrad.torch._runtime.grad_mode`, since tensors read them)."""
from funcgrad.torch._runtime.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                               is_inference_mode_enabled, no_grad,
                                               set_grad_enabled)

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled"]
