"""Convolution, pooling, padding, fold/unfold and upsampling modules: PyTorch's
constructors, checks, initialisation (``kaiming_uniform_(a=sqrt(5))``, bias from
U(-1/sqrt(fan_in), 1/sqrt(fan_in))) and reprs, each a thin Module around
`funcgrad.torch.nn.functional`."""
from __future__ import annotations

import math
from typing import Any

from funcgrad.torch import _factories
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn import functional as F
from funcgrad.torch.nn import init
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d",
           "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d",
           "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "Unfold", "Fold",
           "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "ZeroPad1d",
           "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
           "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d",
           "CircularPad3d"]


def _tuple(value: Any, n: int) -> tuple:
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    """What Conv*d and ConvTranspose*d share: parameters, checks, init and repr."""

    _n = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
                 output_padding: Any = 0) -> None:
        super().__init__()
        n = self._n
        kernel_size, stride = _tuple(kernel_size, n), _tuple(stride, n)
        dilation, output_padding = _tuple(dilation, n), _tuple(output_padding, n)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            strings = {"same", "valid"}  # a set, formatted as PyTorch's message shows it
            if padding not in strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _tuple(padding, n)
        modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in modes:
            raise ValueError(f"padding_mode must be one of {modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.transposed = dilation, self._transposed
        self.output_padding, self.groups = output_padding, groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = self._pad_list()
        shape = ((in_channels, out_channels // groups) if self._transposed else
                 (out_channels, in_channels // groups)) + kernel_size
        self.weight = Parameter(_factories.empty(*shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_factories.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _pad_list(self) -> list:
        """F.pad's list (last axis first) of the padding, for the non-zero padding modes."""
        n = self._n
        if isinstance(self.padding, str):
            out = [0, 0] * n
            if self.padding == "same":
                for i, (d, k) in enumerate(zip(self.dilation, self.kernel_size)):
                    total = d * (k - 1)
                    j = n - 1 - i
                    out[2 * j], out[2 * j + 1] = total // 2, total - total // 2
            return out
        return [p for p in reversed(self.padding) for _ in range(2)]

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        conv = getattr(F, f"conv{self._n}d")
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, self.weight, self.bias, self.stride, 0, self.dilation,
                        self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                    self.groups)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L)."""
    _n = 1


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W)."""
    _n = 2


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W)."""
    _n = 3


class _ConvTranspose(_ConvNd):
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple:
        """The output_padding giving ``output_size`` (PyTorch's rule and messages)."""
        n = self._n
        if output_size is None:
            return self.output_padding
        batched = input.ndim == n + 2
        lead = 2 if batched else 1
        sizes = output_size
        if len(sizes) == lead + n:
            sizes = sizes[lead:]
        if len(sizes) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must "
                             f"have {n} or {lead + n} elements (got {len(sizes)})")
        lows = [(input.shape[lead + d] - 1) * self.stride[d] - 2 * self.padding[d]
                + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        highs = [lo + s - 1 for lo, s in zip(lows, self.stride)]
        for size, lo, hi in zip(sizes, lows, highs):
            if size < lo or size > hi:
                raise ValueError(f"requested an output size of {sizes}, but valid sizes range "
                                 f"from {lows} to {highs} (for an input of "
                                 f"{input.shape[2:]})")
        return tuple(int(s) - lo for s, lo in zip(sizes, lows))

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        extra = self._output_padding(input, output_size)
        return getattr(F, f"conv_transpose{self._n}d")(
            input, self.weight, self.bias, self.stride, self.padding, extra, self.groups,
            self.dilation)


class ConvTranspose1d(_ConvTranspose):
    _n = 1


class ConvTranspose2d(_ConvTranspose):
    """Transposed 2-D convolution (the gradient of Conv2d with respect to its input)."""
    _n = 2


class ConvTranspose3d(_ConvTranspose):
    _n = 3


# -- pooling -----------------------------------------------------------------------------------

class _MaxPoolNd(Module):
    _n = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Any:
        return getattr(F, f"max_pool{self._n}d")(input, self.kernel_size, self.stride,
                                                 self.padding, self.dilation,
                                                 ceil_mode=self.ceil_mode,
                                                 return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _n = 1


class MaxPool2d(_MaxPoolNd):
    """Max over (kH, kW) windows; ``return_indices`` for MaxUnpool-style indices."""
    _n = 2


class MaxPool3d(_MaxPoolNd):
    _n = 3


class AvgPool1d(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _tuple(kernel_size, 1)
        self.stride = _tuple(stride if stride is not None else kernel_size, 1)
        self.padding = _tuple(padding, 1)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                            self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    _n = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, f"avg_pool{self._n}d")(input, self.kernel_size, self.stride,
                                                 self.padding, self.ceil_mode,
                                                 self.count_include_pad,
                                                 self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    _n = 2


class AvgPool3d(_AvgPoolNd):
    _n = 3


class _AdaptiveAvgPool(Module):
    _fn = "adaptive_avg_pool2d"

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _AdaptiveMaxPool(_AdaptiveAvgPool):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        return getattr(F, self._fn)(input, self.output_size, self.return_indices)


class AdaptiveAvgPool1d(_AdaptiveAvgPool):
    _fn = "adaptive_avg_pool1d"


class AdaptiveAvgPool2d(_AdaptiveAvgPool):
    """Average pooling to a fixed output size (oH, oW); None keeps a size."""
    _fn = "adaptive_avg_pool2d"


class AdaptiveAvgPool3d(_AdaptiveAvgPool):
    _fn = "adaptive_avg_pool3d"


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    _fn = "adaptive_max_pool1d"


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    _fn = "adaptive_max_pool2d"


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    _fn = "adaptive_max_pool3d"


class _LPPool(Module):
    _n = 2

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, f"lp_pool{self._n}d")(input, float(self.norm_type),
                                                self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPool):
    _n = 1


class LPPool2d(_LPPool):
    _n = 2


class LPPool3d(_LPPool):
    _n = 3


class _MaxUnpoolNd(Module):
    """The partial inverse of MaxPoolNd: ``forward(input, indices, output_size=None)``."""
    _n = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self._n)
        self.stride = _tuple(stride if stride is not None else kernel_size, self._n)
        self.padding = _tuple(padding, self._n)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return getattr(F, f"max_unpool{self._n}d")(input, indices, self.kernel_size,
                                                   self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    _n = 3


# -- fold / unfold / upsampling ----------------------------------------------------------------

class Unfold(Module):
    """Sliding blocks as columns (im2col), F.unfold."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Columns summed back into an image (col2im), F.fold."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1,
                 padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Upsample(Module):
    """F.interpolate as a module."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode,
                             self.align_corners, recompute_scale_factor=
                             self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else
                f"size={self.size!r}")
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


# -- padding modules ---------------------------------------------------------------------------

class _PadNd(Module):
    """F.pad over the last ``_n`` axes; ``padding`` an int (every side) or 2n ints, in
    F.pad's order (last axis first)."""
    _n = 2
    _mode = "reflect"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _tuple(padding, 2 * self._n)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


def _pad_class(base: type, n: int, mode: str, name: str) -> type:
    return type(name, (base,), {"_n": n, "_mode": mode,
                                "__doc__": f"F.pad with mode '{mode}' over {n} axes."})


ZeroPad1d, ZeroPad2d, ZeroPad3d = (_pad_class(_ZeroPadNd, n, "constant", f"ZeroPad{n}d")
                                   for n in (1, 2, 3))
ConstantPad1d, ConstantPad2d, ConstantPad3d = (
    _pad_class(_ConstantPadNd, n, "constant", f"ConstantPad{n}d") for n in (1, 2, 3))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (
    _pad_class(_PadNd, n, "reflect", f"ReflectionPad{n}d") for n in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (
    _pad_class(_PadNd, n, "replicate", f"ReplicationPad{n}d") for n in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (
    _pad_class(_PadNd, n, "circular", f"CircularPad{n}d") for n in (1, 2, 3))
