"""Normalisation modules: BatchNorm1d/2d/3d (running statistics, momentum or a cumulative
average when momentum is None, train/eval, ``track_running_stats``, ``affine``),
InstanceNorm1d/2d/3d, LayerNorm, GroupNorm and RMSNorm, with PyTorch's parameters,
buffers (``num_batches_tracked`` included, so state_dict keys match), checks and reprs."""
from __future__ import annotations

from typing import Any

from funcgrad.torch import _factories
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.nn import functional as F
from funcgrad.torch.nn import init
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "LayerNorm", "GroupNorm", "RMSNorm"]


class _NormBase(Module):
    """Parameters (weight = 1, bias = 0) and running statistics of batch/instance norms."""
    _dims: tuple = (2, 3)
    _affine_default = True
    _track_default = True

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool | None = None, track_running_stats: bool | None = None,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine = self._affine_default if affine is None else affine
        self.track_running_stats = (self._track_default if track_running_stats is None
                                    else track_running_stats)
        kw = dict(device=device, dtype=dtype)
        self.weight = Parameter(_factories.empty(num_features, **kw)) if self.affine else None
        self.bias = (Parameter(_factories.empty(num_features, **kw)) if self.affine and bias
                     else None)
        if self.track_running_stats:
            self.register_buffer("running_mean", _factories.zeros(num_features, **kw))
            self.register_buffer("running_var", _factories.ones(num_features, **kw))
            self.register_buffer("num_batches_tracked",
                                 _factories.tensor(0, dtype=D.int64, device=device))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    _version = 2  # (version 2 added num_batches_tracked)

    def _upgrade_state(self, state_dict: dict, prefix: str, version: int | None) -> None:
        """A state dict from before ``num_batches_tracked`` (version 1 or none) gets this
        module's own count, as PyTorch fills it in."""
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and \
                key not in state_dict:
            state_dict[key] = (self.num_batches_tracked if not self.num_batches_tracked.is_meta
                               else _factories.tensor(0, dtype=D.int64))

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with grad_mode.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {want} input (got {input.ndim}D input)")

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        return self._normalize(input, self._count_batch())

    def _count_batch(self) -> float:
        """Count a training batch; the running statistics' update factor (PyTorch's
        ``exponential_average_factor``)."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and \
                self.num_batches_tracked is not None:
            with grad_mode.no_grad():
                self.num_batches_tracked.add_(1)
            factor = (1.0 / float(self.num_batches_tracked) if self.momentum is None
                      else self.momentum)
        return factor

    def _normalize(self, input: Tensor, factor: float) -> Tensor:
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            use_batch, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L)."""
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W)."""
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    _dims = (5,)


class _InstanceNorm(_NormBase):
    _affine_default = False
    _track_default = False

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        unbatched = input.ndim == self._dims[0]
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    _dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    _dims = (4, 5)


def _shape(normalized_shape: Any) -> tuple:
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(
        normalized_shape)


class LayerNorm(Module):
    """Normalisation over the last dims ``normalized_shape``, elementwise weight (1) and
    bias (0)."""

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        kw = dict(device=device, dtype=dtype)
        if elementwise_affine:
            self.weight = Parameter(_factories.empty(*self.normalized_shape, **kw))
            if bias:
                self.bias = Parameter(_factories.empty(*self.normalized_shape, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalisation over groups of channels, per-channel weight and bias."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        kw = dict(device=device, dtype=dtype)
        self.weight = Parameter(_factories.empty(num_channels, **kw)) if affine else None
        self.bias = Parameter(_factories.empty(num_channels, **kw)) if affine and bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """x / rms(x) over the last dims, elementwise weight (1); ``eps`` None: the dtype's
    machine epsilon."""

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_factories.empty(*self.normalized_shape, device=device,
                                                     dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
