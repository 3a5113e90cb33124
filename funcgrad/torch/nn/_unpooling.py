"""torch.nn.functional max unpooling: the partial inverse of max pooling.

``max_unpoolNd(input, indices, ...)`` puts each pooled value back where ``max_poolNd(...,
return_indices=True)`` found it (``indices`` are flat over each spatial plane or volume)
and zeros everywhere else. It is one scatter along the flattened plane, composed of
funcgrad.numpy ops, so its gradient is the gather of the output's gradient at the indices
(MaxUnpool2DBackward0). The output size and the error texts are PyTorch's.
"""
from __future__ import annotations

import math
from typing import Any, Sequence


import funcgrad.numpy as fnp
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._dispatch import apply
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._common import array_of, host, ntuple

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _output_size(input: Tensor, kernel: tuple, stride: tuple, padding: tuple,
                 output_size: Sequence[int] | None) -> tuple:
    """PyTorch's ``_unpool_output_size``: (L - 1) * stride + kernel - 2 * padding per axis,
    or ``output_size`` (its last n entries) when within a stride of that."""
    n = len(kernel)
    default = [(input.shape[-n + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(n)]
    if output_size is None:
        return tuple(default)
    output_size = tuple(output_size)
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(n):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f'{low} and {high})')
    return tuple(int(s) for s in output_size)


def _unpool(n: int, input: Tensor, indices: Tensor, size: tuple, node: str) -> Tensor:
    if indices.dtype is not D.int64:
        raise RuntimeError("elements in indices should be type int64 but got: "
                           f"{indices.dtype.scalar_name}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input "
                           f"tensor ({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    plane = math.prod(size)
    if indices.numel():
        worst = host(indices)
        bad = worst[(worst < 0) | (worst >= plane)]
        if bad.size:
            raise RuntimeError(f"Found an invalid max index: {int(bad.flat[0])} (output "
                               f"volumes are of size {'x'.join(map(str, size))})")
    idx = array_of(indices)

    def f(x: Any) -> Any:
        lead = tuple(x.shape[:x.ndim - n])
        flat = fnp.reshape(x, lead + (-1,))
        where = fnp.reshape(idx, lead + (-1,))
        rows = tuple(fnp.reshape(fnp.arange(k), (k,) + (1,) * (len(lead) - i))
                     for i, k in enumerate(lead))
        out = fnp.zeros(lead + (plane,), x.dtype).at[rows + (where,)].set(flat)
        return fnp.reshape(out, lead + size)
    return apply(node, f, [input])


def _geometry(n: int, kernel_size: Any, stride: Any, padding: Any, op: str) -> tuple:
    kernel = ntuple(kernel_size, n, "kernel_size", op)
    steps = kernel if stride is None else ntuple(stride, n, "stride", op)
    return kernel, steps, ntuple(padding, n, "padding", op)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Sequence[int] | None = None) -> Tensor:
    """The inverse of ``max_pool1d`` (through 2-D, as PyTorch's: an unsqueezed last axis)."""
    kernel, steps, pads = _geometry(1, kernel_size, stride, padding, "max_unpool1d")
    size = _output_size(input, kernel, steps, pads, output_size) + (1,)
    return _unpool(2, input.unsqueeze(-1), indices.unsqueeze(-1), size,
                   "MaxUnpool2DBackward0").squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Sequence[int] | None = None) -> Tensor:
    """Scatter (N, C, H, W) pooled values into zeros of the unpooled size."""
    kernel, steps, pads = _geometry(2, kernel_size, stride, padding, "max_unpool2d")
    size = _output_size(input, kernel, steps, pads, output_size)
    return _unpool(2, input, indices, size, "MaxUnpool2DBackward0")


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Sequence[int] | None = None) -> Tensor:
    kernel, steps, pads = _geometry(3, kernel_size, stride, padding, "max_unpool3d")
    size = _output_size(input, kernel, steps, pads, output_size)
    return _unpool(3, input, indices, size, "MaxUnpool3DBackward0")
