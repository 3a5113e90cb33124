"""`nn.SyncBatchNorm`: batch norm whose training statistics would be reduced over a process
group.

As in PyTorch, the statistics are synchronised only in training, when torch.distributed is
initialised; otherwise (a single process, or eval mode) the module is BatchNorm over any
input of 2 or more dimensions. With distributed initialised, a CPU input raises PyTorch's
error (its synchronised kernel is for accelerators only); an accelerator input in a group
of more than one process raises an error naming what the facade lacks: the synchronised
kernel itself. ``convert_sync_batchnorm`` swaps every BatchNorm*d of a model for one,
sharing its parameters and buffers.
"""
from __future__ import annotations

from typing import Any

from funcgrad.torch import distributed
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._norm_modules import _BatchNorm
from funcgrad.torch.nn.module import Module

__all__ = ["SyncBatchNorm"]

_SYNC_DEVICES = ("cuda", "hpu", "xpu", "privateuseone")


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over (N, C, ...) whose training statistics span ``process_group``."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input: Tensor) -> None:
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def _needs_sync(self, input: Tensor) -> bool:
        """PyTorch's rule: sync in training with distributed initialised, over a group of
        more than one process, and only for an accelerator input."""
        if not (self.training and distributed.is_available() and distributed.is_initialized()):
            return False
        if input.device.type not in _SYNC_DEVICES:
            raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or "
                             "privateuseone")
        group = self.process_group or distributed.group.WORLD
        return distributed.get_world_size(group) > 1

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor = self._count_batch()
        if self._needs_sync(input):
            raise NotImplementedError("SyncBatchNorm: the synchronised batch-norm kernel "
                                      "(sync_batch_norm over a process group of more than "
                                      "one process) is not implemented in funcgrad.torch")
        return self._normalize(input, factor)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every BatchNorm*d replaced, recursively, by a SyncBatchNorm holding
        the same parameters, buffers and training flag."""
        out = module
        if isinstance(module, _BatchNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                module.affine, module.track_running_stats, process_group,
                                bias=module.bias is not None)
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
