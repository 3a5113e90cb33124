"""torch.nn.functional convolutions, unfold/fold and pad, as facade ops.

Each convolution is one ``ConvolutionBackward0`` node over `funcgrad.lax`'s
``conv_general_dilated`` (its bias added inside the same op, as PyTorch's node has input,
weight and bias as its inputs); a transposed convolution is the same primitive with the
input dilated by the stride and the kernel flipped, with its in/out features swapped per
group. ``unfold``/``fold`` are the `sliding_windows` gather and its transpose (im2col and
col2im). Unbatched inputs get a batch axis and lose it again (``SqueezeBackward1``, as in
PyTorch). The checks raise PyTorch's messages.
"""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import funcgrad.lax as lax
import funcgrad.numpy as fnp
from funcgrad.primitives import conv as conv_prims
from funcgrad.torch._dispatch import apply
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._common import ntuple, scalar_name, shape_list
from funcgrad.torch._autocast import autocast_op

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "unfold", "fold", "pad"]

_TYPE_WORDS = {"float64": "double", "float32": "float", "float16": "c10::Half"}


def _check_dtypes(input: Tensor, weight: Tensor, bias: Tensor | None, batched: bool) -> None:
    """PyTorch's dtype checks: a batched float32 input goes to its MKLDNN path, which
    names both tensor types; other inputs to the one that names the expected scalar."""
    if input.dtype != weight.dtype and batched and str(input.dtype) == "torch.float32":
        raise RuntimeError(f"Input type ({input.type()}) and weight type ({weight.type()}) "
                           "should be the same or input should be a MKLDNN tensor and weight "
                           "is a dense tensor")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(input)} but found "
                           f"{scalar_name(weight)}")
    if bias is not None and bias.dtype != input.dtype:
        words = [_TYPE_WORDS.get(str(t.dtype).replace("torch.", ""), scalar_name(t))
                 for t in (input, bias)]
        raise RuntimeError(f"Input type ({words[0]}) and bias type ({words[1]}) should be "
                           "the same")


def _geometry(n: int, stride: Any, padding: Any, dilation: Any, kernel: Sequence[int],
              op: str = "convolution") -> tuple:
    """(strides, (lo, hi) pads, dilations) with PyTorch's checks; padding may be 'same'
    or 'valid'."""
    strides = ntuple(stride, n, "stride", op)
    dilations = ntuple(dilation, n, "dilation", op)
    if any(s <= 0 for s in strides):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilations):
        raise RuntimeError("non-positive dilation is not supported")
    if isinstance(padding, str):
        if padding == "valid":
            return strides, ((0, 0),) * n, dilations
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if any(s != 1 for s in strides):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for d, k in zip(dilations, kernel)]
        if any(t % 2 for t in totals):
            warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                          "require a zero-padded copy of the input be created", UserWarning,
                          stacklevel=4)
        return strides, tuple((t // 2, t - t // 2) for t in totals), dilations
    pads = ntuple(padding, n, "padding", op)
    if any(p < 0 for p in pads):
        raise RuntimeError("negative padding is not supported")
    return strides, tuple((p, p) for p in pads), dilations


def _batched(input: Tensor, n: int, op: str) -> bool:
    if input.ndim == n + 2:
        return True
    if input.ndim == n + 1:
        return False
    raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {op}, "
                       f"but got input of size: {shape_list(input.shape)}")


def _check_sizes(input_sp: Sequence[int], pads: tuple, kernel: Sequence[int],
                 dilations: Sequence[int], out_sp: Sequence[int]) -> None:
    padded = [d + lo + hi for d, (lo, hi) in zip(input_sp, pads)]
    spans = [dl * (k - 1) + 1 for dl, k in zip(dilations, kernel)]
    if any(p < s for p, s in zip(padded, spans)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, spans))}). Kernel size can't be greater "
                           "than actual input size")
    if any(o <= 0 for o in out_sp):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, input_sp))})."
                           f" Calculated output size per channel: "
                           f"({' x '.join(map(str, out_sp))}). Output size is too small")


def _check_bias(weight: Tensor, bias: Tensor | None, out_channels: int) -> None:
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given weight of size {shape_list(weight.shape)}, expected bias to "
                           f"be 1-dimensional with {out_channels} elements, but got bias of "
                           f"size {shape_list(bias.shape)} instead")


def _with_bias(out: Any, b: Any, n: int) -> Any:
    return fnp.add(out, fnp.reshape(b, (1, -1) + (1,) * n))


def _conv(n: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
          padding: Any, dilation: Any, groups: int) -> Tensor:
    op = f"conv{n}d"
    batched = _batched(input, n, op)
    if weight.ndim != n + 2:
        raise RuntimeError(f"Expected {n + 2}-dimensional weight for {n + 2}-dimensional "
                           f"input {shape_list(input.shape)}, but got {weight.ndim}-dimensional"
                           f" weight of size {shape_list(weight.shape)} instead")
    x = input if batched else input.unsqueeze(0)
    kernel = tuple(weight.shape[2:])
    strides, pads, dilations = _geometry(n, stride, padding, dilation, kernel)
    out_ch, in_per_group = weight.shape[0], weight.shape[1]
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if out_ch % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size "
                           f"[{shape_list(weight.shape)}] instead")
    if x.shape[1] != in_per_group * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {shape_list(weight.shape)}, "
                           f"expected input{shape_list(x.shape)} to have "
                           f"{in_per_group * groups} channels, but got {x.shape[1]} channels "
                           "instead")
    _check_bias(weight, bias, out_ch)
    _check_dtypes(input, weight, bias, batched)
    in_sp = tuple(x.shape[2:])
    out_sp = [(d + lo + hi - dl * (k - 1) - 1) // s + 1 for d, (lo, hi), dl, k, s in
              zip(in_sp, pads, dilations, kernel, strides)]
    _check_sizes(in_sp, pads, kernel, dilations, out_sp)

    def f(x: Any, w: Any, *b: Any) -> Any:
        out = lax.conv_general_dilated(x, w, strides, pads, rhs_dilation=dilations,
                                       feature_group_count=groups)
        return _with_bias(out, b[0], n) if b else out
    out = apply("ConvolutionBackward0", f, [x, weight] + ([bias] if bias is not None else []))
    return out if batched else out.squeeze(0)


@autocast_op("conv1d")
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D convolution of (N, C, L) or (C, L) by weight (O, C / groups, K)."""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv2d")
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D convolution of (N, C, H, W) or (C, H, W) by weight (O, C / groups, kH, kW);
    padding an int, a pair, 'valid' or 'same'."""
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv3d")
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D convolution of (N, C, D, H, W) or (C, D, H, W)."""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def _transposed_kernel(w: Any, groups: int, n: int) -> Any:
    """weight (C_in, C_out / g, K...) as a forward kernel (C_out, C_in / g, K...), flipped."""
    c_in, c_out_g = w.shape[:2]
    k = tuple(w.shape[2:])
    w = fnp.reshape(w, (groups, c_in // groups, c_out_g) + k)
    w = fnp.transpose(w, (0, 2, 1) + tuple(range(3, 3 + n)))
    w = fnp.reshape(w, (groups * c_out_g, c_in // groups) + k)
    return fnp.flip(w, tuple(range(2, 2 + n)))


def _conv_transpose(n: int, input: Tensor, weight: Tensor, bias: Tensor | None,
                    stride: Any, padding: Any, output_padding: Any, groups: int,
                    dilation: Any) -> Tensor:
    op = f"conv_transpose{n}d"
    batched = _batched(input, n, op)
    x = input if batched else input.unsqueeze(0)
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        raise RuntimeError(f"{op}: padding must be an int or a tuple of ints, got "
                           f"'{padding}' (string padding is for convolutions only)")
    strides, pads, dilations = _geometry(n, stride, padding, dilation, kernel)
    extra = ntuple(output_padding, n, "output_padding", "convolution")
    if any(o >= s and o >= d for o, s, d in zip(extra, strides, dilations)):
        names = ("depth", "height", "width")[3 - max(n, 2):]
        if n == 1:  # PyTorch checks a 1-D transposed convolution as a 2-D one of height 1
            extra, strides, dilations = (0,) + extra, (1,) + strides, (1,) + dilations
        parts = ([f"output_padding_{a}: {o}" for a, o in zip(names, extra)]
                 + [f"stride_{a}: {s}" for a, s in zip(names, strides)]
                 + [f"dilation_{a}: {d}" for a, d in zip(names, dilations)])
        raise RuntimeError("output padding must be smaller than either stride or dilation, "
                           f"but got {' '.join(parts)}")
    if weight.shape[0] != x.shape[1]:
        raise RuntimeError(f"Given transposed=1, weight of size {shape_list(weight.shape)}, "
                           f"expected input{shape_list(x.shape)} to have {weight.shape[0]} "
                           f"channels, but got {x.shape[1]} channels instead")
    if groups <= 0 or weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size "
                           f"[{shape_list(weight.shape)}] instead")
    out_ch = weight.shape[1] * groups
    _check_bias(weight, bias, out_ch)
    _check_dtypes(input, weight, bias, batched)
    in_sp = tuple(x.shape[2:])
    out_sp = [(d - 1) * s - 2 * p + dl * (k - 1) + o + 1 for d, s, (p, _), dl, k, o in
              zip(in_sp, strides, pads, dilations, kernel, extra)]
    if any(o <= 0 for o in out_sp):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, in_sp))}). "
                           f"Calculated output size per channel: "
                           f"({' x '.join(map(str, out_sp))}). Output size is too small")
    dilated_pads = tuple((dl * (k - 1) - p, dl * (k - 1) - p + o) for dl, k, (p, _), o in
                         zip(dilations, kernel, pads, extra))

    def f(x: Any, w: Any, *b: Any) -> Any:
        out = lax.conv_general_dilated(x, _transposed_kernel(w, groups, n), (1,) * n,
                                       dilated_pads, lhs_dilation=strides,
                                       rhs_dilation=dilations, feature_group_count=groups)
        return _with_bias(out, b[0], n) if b else out
    out = apply("ConvolutionBackward0", f, [x, weight] + ([bias] if bias is not None else []))
    return out if batched else out.squeeze(0)


@autocast_op("conv_transpose1d")
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """Transposed 1-D convolution; weight (C_in, C_out / groups, K)."""
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


@autocast_op("conv_transpose2d")
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """Transposed 2-D convolution (the gradient of conv2d with respect to its input);
    weight (C_in, C_out / groups, kH, kW)."""
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


@autocast_op("conv_transpose3d")
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """Transposed 3-D convolution; weight (C_in, C_out / groups, kD, kH, kW)."""
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


# -- unfold / fold -----------------------------------------------------------------------------

def _block_geometry(kernel_size: Any, dilation: Any, padding: Any, stride: Any,
                    op: str) -> tuple:
    k = ntuple(kernel_size, 2, "kernel_size", op)
    d = ntuple(dilation, 2, "dilation", op)
    p = ntuple(padding, 2, "padding", op)
    s = ntuple(stride, 2, "stride", op)
    if any(v <= 0 for v in k + d + s) or any(v < 0 for v in p):
        raise RuntimeError(f"{op}: kernel_size, dilation and stride must be greater than zero "
                           f"and padding non-negative, but got kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}")
    return k, d, p, s


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """The sliding blocks of (N, C, H, W) as columns (N, C * kH * kW, L) (im2col)."""
    if input.ndim not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported "
                                  f"(got {input.ndim}D)")
    k, d, p, s = _block_geometry(kernel_size, dilation, padding, stride, "unfold")
    batched = input.ndim == 4

    def f(x: Any) -> Any:
        x = x if batched else fnp.expand_dims(x, 0)
        cols = lax.conv_general_dilated_patches(x, k, s, ((p[0], p[0]), (p[1], p[1])),
                                                rhs_dilation=d)
        cols = fnp.reshape(cols, cols.shape[:2] + (-1,))
        return cols if batched else cols[0]
    return apply("Im2ColBackward0", f, [input])


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """Columns (N, C * kH * kW, L) summed back into (N, C, H, W) (col2im), the transpose
    of `unfold`."""
    if input.ndim not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input "
                                  f"Tensors are supported (got {input.ndim}D)")
    size = ntuple(output_size, 2, "output_size", "fold")
    k, d, p, s = _block_geometry(kernel_size, dilation, padding, stride, "fold")
    batched = input.ndim == 3
    rows, length = input.shape[-2:]
    if rows % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension {1 if batched else 0} to be "
                           f"divisible by the product of kernel_size, but got "
                           f"input.size({1 if batched else 0})={rows} and "
                           f"kernel_size=({k[0]}, {k[1]}).")
    blocks = [(size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    if blocks[0] * blocks[1] != length:
        raise RuntimeError(f"Given output_size=({size[0]}, {size[1]}), kernel_size=({k[0]}, "
                           f"{k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), "
                           f"stride=({s[0]}, {s[1]}), expected size of input's dimension "
                           f"{2 if batched else 1} to match the calculated number of sliding "
                           f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but "
                           f"got input.size({2 if batched else 1})={length}.")
    channels = rows // (k[0] * k[1])

    def f(cols: Any) -> Any:
        cols = cols if batched else fnp.expand_dims(cols, 0)
        n = cols.shape[0]
        g = fnp.reshape(cols, (n, channels, k[0], k[1], blocks[0], blocks[1]))
        g = fnp.reshape(fnp.transpose(g, (0, 1, 4, 5, 2, 3)),
                        (n, channels, blocks[0], blocks[1], 1, 1, k[0], k[1]))
        out = conv_prims.sliding_windows_transpose(
            g, window_dimensions=(1, 1) + k, window_strides=(1, 1) + s,
            padding=((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])), base_dilation=(1,) * 4,
            window_dilation=(1, 1) + d, shape=(n, channels) + size)
        return out if batched else out[0]
    return apply("Col2ImBackward0", f, [input])


# -- pad -------------------------------------------------------------------------------------

_NON_CONSTANT_HELP = ("Supported combinations for non-constant padding:\n"
                      "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                      "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                      "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
_NUMPY_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _widths(input: Tensor, pad: Sequence[int]) -> list:
    """(before, after) per axis of ``input`` from PyTorch's last-axis-first pad list."""
    widths = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        widths[input.ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    return widths


def _constant_pad(x: Any, widths: list, value: float) -> Any:
    """Positive widths pad with ``value``, negative ones crop."""
    crop = tuple(slice(-lo if lo < 0 else None, hi if hi < 0 else None) for lo, hi in widths)
    if any(lo < 0 or hi < 0 for lo, hi in widths):
        x = x[crop]
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    if any(lo or hi for lo, hi in grow):
        x = fnp.pad(x, grow, mode="constant", constant_values=value)
    return x


@autocast_op("pad")
def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    """Pad the last ``len(pad) // 2`` axes: 'constant' (``value``; negative pads crop),
    'reflect', 'replicate' or 'circular'."""
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           "input dimension but got padding length "
                           f"{len(pad)} and input of dimension {input.ndim}")
    widths = _widths(input, pad)
    if mode == "constant":
        for axis, (lo, hi) in enumerate(widths):
            if input.shape[axis] + min(lo, 0) + min(hi, 0) < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
        fill = 0.0 if value is None else value
        return apply("ConstantPadNdBackward0", lambda x: _constant_pad(x, widths, fill),
                     [input])
    n = len(pad) // 2
    _check_non_constant_pad(input, widths, mode, value, n)
    name = ("CopySlices" if mode == "circular" else
            f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{n}DBackward0")
    return apply(name, lambda x: fnp.pad(x, widths, mode=_NUMPY_MODES[mode]), [input])


def _check_non_constant_pad(input: Tensor, widths: list, mode: str, value: Any,
                            n: int) -> None:
    """PyTorch's refusals of a 'reflect', 'replicate' or 'circular' pad of ``n`` axes."""
    if mode not in _NUMPY_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if n not in (1, 2, 3) or input.ndim not in (n + 1, n + 2):
        raise NotImplementedError(f"Padding size {2 * n} is not supported for "
                                  f"{input.ndim}D input tensor.\n{_NON_CONSTANT_HELP}")
    for axis in reversed(range(input.ndim - n, input.ndim)):  # PyTorch checks the last first
        size, (lo, hi) = input.shape[axis], widths[axis]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({lo}, {hi})"
                               f" at dimension {axis} of input {shape_list(input.shape)}")
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if lo < 0 or hi < 0:
            raise RuntimeError(f"{mode} padding does not support negative widths, got "
                               f"({lo}, {hi}) at dimension {axis}")

