"""torch.nn.functional normalisations: batch, layer, group, instance and RMS norm.

batch_norm, layer_norm and group_norm are one node each (``NativeBatchNormBackward0``,
``NativeLayerNormBackward0``, ``NativeGroupNormBackward0``) whose function normalises
with the biased variance and applies the affine weight and bias, so their gradients
come from the mean/var/sqrt rules. In training, batch_norm also returns the batch mean
and variance from the same op and updates the running statistics in place, outside
autograd: ``running = (1 - momentum) * running + momentum * batch`` with the unbiased
variance, as PyTorch does. rms_norm is PyTorch's composition of tensor ops (its output
node is ``MulBackward0``). For float16 and bfloat16 inputs every norm computes in float32
and rounds its result once, as PyTorch's kernels accumulate in float32: statistics in a
16-bit float lose the digits a row of nearly equal values is normalised by.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.dtypes import LOW_FLOATS
from funcgrad.torch._dispatch import apply
from funcgrad.torch._runtime.dtypes import bfloat16, float16
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.nn._common import array_of, shape_list
from funcgrad.torch._autocast import autocast_op

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm"]


def _in_float32(f: Any) -> Any:
    """``f`` on arrays, computed in float32 when its first input is a 16-bit float; its
    first output is cast back to that dtype (the others, statistics, stay float32)."""
    def run(x: Any, *rest: Any) -> Any:
        low = np.dtype(x.dtype)
        if low not in LOW_FLOATS:
            return f(x, *rest)
        out = f(x.astype(np.float32), *[a.astype(np.float32) for a in rest])
        if isinstance(out, tuple):
            return (out[0].astype(low), *out[1:])
        return out.astype(low)
    return run


def _normalise(x: Any, axes: tuple, eps: float) -> tuple:
    """(x - mean) / sqrt(var + eps) over ``axes`` (biased variance), and mean, var."""
    mean = fnp.mean(x, axis=axes, keepdims=True)
    centred = fnp.subtract(x, mean)
    var = fnp.mean(fnp.square(centred), axis=axes, keepdims=True)
    return fnp.true_divide(centred, fnp.sqrt(fnp.add(var, eps))), mean, var


def _affine(y: Any, wb: tuple, shape: tuple) -> Any:
    """y * weight + bias, the parameters reshaped to ``shape`` for broadcasting."""
    weight, bias = wb
    if weight is not None:
        y = fnp.multiply(y, fnp.reshape(weight, shape))
    if bias is not None:
        y = fnp.add(y, fnp.reshape(bias, shape))
    return y


def _optional_inputs(weight: Tensor | None, bias: Tensor | None) -> tuple:
    """The op inputs for optional weight and bias, and a function splitting them back."""
    present = [t for t in (weight, bias) if t is not None]

    def split(rest: tuple) -> tuple:
        it = iter(rest)
        return (next(it) if weight is not None else None,
                next(it) if bias is not None else None)
    return present, split


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (axis 1) over the batch and spatial axes: with the batch's
    statistics in training (updating the running ones), else with the running ones."""
    channels = input.shape[1] if input.ndim > 1 else 0
    if training:
        count = math.prod(input.shape) // max(channels, 1)
        if count <= 1:
            raise ValueError("Expected more than 1 value per channel when training, got "
                             f"input size {input.size()}")
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    axes = (0,) + tuple(range(2, input.ndim))
    shape = (1, channels) + (1,) * (input.ndim - 2)
    present, split = _optional_inputs(weight, bias)
    if not training:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation "
                               "mode")
        # the running statistics are constants of the op: gradients flow to x, w, b only
        rm, rv = array_of(running_mean.detach()), array_of(running_var.detach())

        def f_eval(x: Any, *wb: Any) -> Any:
            y = fnp.true_divide(fnp.subtract(x, fnp.reshape(rm, shape)),
                                fnp.sqrt(fnp.add(fnp.reshape(rv, shape), eps)))
            return _affine(y, split(wb), shape)
        return apply("NativeBatchNormBackward0", _in_float32(f_eval), [input, *present])

    def f_train(x: Any, *wb: Any) -> tuple:
        y, mean, var = _normalise(x, axes, eps)
        return _affine(y, split(wb), shape), fnp.reshape(mean, (-1,)), fnp.reshape(var, (-1,))
    out, mean, var = apply("NativeBatchNormBackward0", _in_float32(f_train), [input, *present],
                           multi=True)
    if running_mean is not None or running_var is not None:
        n = math.prod(input.shape) // channels
        with grad_mode.no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype),
                                                     alpha=momentum)
            if running_var is not None:
                unbiased = var * (n / (n - 1))
                running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype),
                                                    alpha=momentum)
    return out


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each (sample, channel) over its spatial axes: batch_norm of the input
    seen as one sample of N * C channels (weight and bias repeated per sample), viewed
    back, as PyTorch computes it; running statistics are averaged over the samples."""
    n, c = input.shape[:2]
    folded = input.reshape(1, n * c, *input.shape[2:])
    rm = None if running_mean is None else running_mean.repeat(n)
    rv = None if running_var is None else running_var.repeat(n)
    w = None if weight is None else weight.repeat(n)
    b = None if bias is None else bias.repeat(n)
    out = batch_norm(folded, rm, rv, w, b, use_input_stats, momentum, eps)
    with grad_mode.no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.view(n, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.view(n, c).mean(0))
    return out.view(*input.shape)


def _normalized_axes(input: Tensor, normalized_shape: Any, star: str) -> tuple:
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(
        normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape or len(shape) > input.ndim:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[{star}{', '.join(map(str, shape))}], but got input of size"
                           f"{shape_list(input.shape)}")
    return shape, tuple(range(input.ndim - len(shape), input.ndim))


@autocast_op("layer_norm")
def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` axes, then weight and bias."""
    shape, axes = _normalized_axes(input, normalized_shape, "*, ")
    present, split = _optional_inputs(weight, bias)
    return apply("NativeLayerNormBackward0",
                 _in_float32(lambda x, *wb: _affine(_normalise(x, axes, eps)[0], split(wb),
                                                    shape)),
                 [input, *present])


@autocast_op("group_norm")
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each group of ``C / num_groups`` channels over them and the spatial axes."""
    if input.ndim < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[:2]
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {shape_list(input.shape)} and "
                           f"num_groups={num_groups}")
    present, split = _optional_inputs(weight, bias)
    affine_shape = (1, c) + (1,) * (input.ndim - 2)

    def f(x: Any, *wb: Any) -> Any:
        grouped = fnp.reshape(x, (n, num_groups, -1))
        y = fnp.reshape(_normalise(grouped, (2,), eps)[0], x.shape)
        return _affine(y, split(wb), affine_shape)
    return apply("NativeGroupNormBackward0", _in_float32(f), [input, *present])


@autocast_op("rms_norm")
def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x ** 2) + eps) over the last axes, times weight; ``eps`` defaults to
    the machine epsilon of the dtype it is computed in (float32 for 16-bit inputs)."""
    shape, axes = _normalized_axes(input, normalized_shape, "*")
    low = input.dtype in (float16, bfloat16)
    x = input.float() if low else input
    if eps is None:
        eps = float(np.finfo(str(x.dtype).replace("torch.", "")).eps)
    out = x * x.pow(2).mean(axes, keepdim=True).add(eps).rsqrt()
    if low:
        out = out.type_as(input)
    return out if weight is None else out * weight
