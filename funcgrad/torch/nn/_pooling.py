"""torch.nn.functional pooling: max (with indices), average and adaptive pools.

Max pooling is `funcgrad.lax.reduce_window_max_with_indices` over the spatial axes: the
first maximum of each window (row-major window order, as PyTorch scans it) is gathered from
the input by index, so the gradient goes to that one element, and the indices come out
flat over each (H, W) plane as PyTorch returns them. Average pooling is a window sum
divided by PyTorch's per-window divisor (a constant computed from the shapes:
``count_include_pad``, ``ceil_mode``, ``divisor_override``). Adaptive average pooling is
one averaging matrix per axis (the windows are intervals, so the mean over a window is a
product of 1-D means); adaptive max pooling gathers each window, padded to the longest
by repeating its last element (which changes neither the maximum nor the first argmax).
1-D pools run as 2-D pools on an unsqueezed input, as PyTorch's do (``SqueezeBackward1``).
A window holding NaN pools to NaN; its index is its first NaN (PyTorch's is its last).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import funcgrad.lax as lax
import funcgrad.numpy as fnp
from funcgrad.torch._dispatch import apply
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._common import const_on, ntuple, shape_list
from funcgrad.torch._autocast import autocast_op

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d"]


def _pool_geometry(n: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any,
                   dilation: Any, ceil_mode: bool, op: str) -> tuple:
    """(kernel, strides, (lo, hi) pads, dilations, output sizes) of a max/avg pool, with
    PyTorch's checks; ``ceil_mode`` pads the high side enough for the last window, which
    must start inside the input or its low padding."""
    k = ntuple(kernel_size, n, "kernel_size", op)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        ntuple(stride, n, "stride", op)
    p = ntuple(padding, n, "padding", op)
    d = ntuple(dilation, n, "dilation", op)
    if any(v == 0 for v in s):
        raise RuntimeError("stride should not be zero")
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel_size must be greater than zero, but got {k}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got {d}")
    for pi, ki, di in zip(p, k, d):
        if pi < 0 or pi > ((ki - 1) * di + 1) / 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               f"pad={pi}, kernel_size={ki} and dilation={di}")
    sizes = tuple(input.shape[-n:])
    out, pads = [], []
    for L, ki, si, pi, di in zip(sizes, k, s, p, d):
        span = di * (ki - 1) + 1
        num = L + 2 * pi - span
        o = (-(-num // si) if ceil_mode else num // si) + 1
        if ceil_mode and (o - 1) * si >= L + pi:
            o -= 1
        out.append(o)
        pads.append((pi, max(pi, (o - 1) * si + span - L - pi)))
    if any(o < 1 for o in out):
        lead = [input.shape[-n - 1]] if input.ndim > n else []
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, lead + list(sizes)))}). "
                           f"Calculated output size: "
                           f"({'x'.join(map(str, lead + out))}). Output size is too small")
    return k, s, tuple(pads), d, tuple(out)


def _check_input(n: int, input: Tensor, op: str) -> None:
    if input.ndim not in (n + 1, n + 2) or 0 in tuple(input.shape)[1:]:
        dims = {1: "2D or 3D", 2: "3D or 4D", 3: "4D or 5D"}[n]
        raise RuntimeError(f"non-empty {dims} (batch mode) tensor expected for input")


def _max_pool(n: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any,
              dilation: Any, ceil_mode: bool, return_indices: bool) -> Any:
    op = f"max_pool{n}d"
    _check_input(n, input, op)
    k, s, pads, d, _ = _pool_geometry(n, input, kernel_size, stride, padding, dilation,
                                      ceil_mode, op)
    lead = input.ndim - n
    plane = math.prod(input.shape[-n:])

    geometry = ((1,) * lead + k, (1,) * lead + s, ((0, 0),) * lead + pads)

    def f(x: Any) -> Any:
        if not return_indices:
            return lax.reduce_window(x, -np.inf, lax.max, *geometry,
                                     window_dilation=(1,) * lead + d)
        values, index = lax.reduce_window_max_with_indices(
            x, *geometry, window_dilation=(1,) * lead + d)
        return values, index % plane
    return apply(f"MaxPool{n}DWithIndicesBackward0", f, [input], multi=return_indices)


def _via_2d(input: Tensor, fn: Any, *args: Any) -> Any:
    """A 1-D pool as the 2-D pool of ``input.unsqueeze(-2)``, squeezed back."""
    out = fn(input.unsqueeze(-2), *args)
    if isinstance(out, tuple):
        return tuple(o.squeeze(-2) for o in out)
    return out.squeeze(-2)


def _first(v: Any) -> Any:
    return v[0] if isinstance(v, (list, tuple)) and len(v) == 1 else v


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """Max over windows of the last axis of (N, C, L) or (C, L)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"max_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{shape_list(input.shape)}")
    stride = None if stride is None or stride == [] else (1, _first(stride))
    if not return_indices and _first(padding) > _first(kernel_size) / 2:
        # PyTorch's own max_pool1d kernel: half the kernel itself, not the dilated span
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={_first(padding)} and kernel_size="
                           f"{_first(kernel_size)}")
    return _via_2d(input, lambda x: _max_pool(2, x, (1, _first(kernel_size)), stride,
                                              (0, _first(padding)), (1, _first(dilation)),
                                              ceil_mode, return_indices))


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """Max over (kH, kW) windows of (N, C, H, W) or (C, H, W); ``return_indices`` also
    gives each maximum's flat index in its (H, W) plane."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


@autocast_op("max_pool3d")
def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """Max over (kD, kH, kW) windows of (N, C, D, H, W) or (C, D, H, W)."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple:
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple:
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple:
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


# -- average pooling ---------------------------------------------------------------------------

def _divisors(sizes: Sequence[int], k: tuple, s: tuple, pads: tuple, out: tuple,
              count_include_pad: bool) -> np.ndarray:
    """PyTorch's divisor of each window: its size clipped to the padded input
    (``count_include_pad``) or to the input itself; a product over the axes."""
    total = np.ones((), np.float64)
    for L, ki, si, (lo, _), o in zip(sizes, k, s, pads, out):
        start = np.arange(o) * si - lo
        end = np.minimum(start + ki, L + lo)
        count = end - start if count_include_pad else (
            np.minimum(end, L) - np.maximum(start, 0))
        total = total[..., None] * count
    return total


def _avg_pool(n: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any,
              ceil_mode: bool, count_include_pad: bool, divisor_override: Any) -> Tensor:
    op = f"avg_pool{n}d"
    _check_input(n, input, op)
    k, s, pads, _, out = _pool_geometry(n, input, kernel_size, stride, padding, 1,
                                        ceil_mode, op)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    divisor = (np.array(float(divisor_override)) if divisor_override is not None else
               _divisors(tuple(input.shape[-n:]), k, s, pads, out, count_include_pad))
    lead = input.ndim - n

    def f(x: Any) -> Any:
        sums = lax.reduce_window(x, 0.0, lax.add, (1,) * lead + k, (1,) * lead + s,
                                 ((0, 0),) * lead + pads)
        return fnp.true_divide(sums, const_on(divisor.astype(x.dtype), x))
    return apply(f"AvgPool{n}DBackward0", f, [input])


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """Mean over windows of the last axis of (N, C, L) or (C, L)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{shape_list(input.shape)}")
    stride = None if stride is None or stride == [] else (1, _first(stride))
    return _via_2d(input, lambda x: _avg_pool(2, x, (1, _first(kernel_size)), stride,
                                              (0, _first(padding)), ceil_mode,
                                              count_include_pad, None))


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """Mean over (kH, kW) windows of (N, C, H, W) or (C, H, W)."""
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


@autocast_op("avg_pool3d")
def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """Mean over (kD, kH, kW) windows of (N, C, D, H, W) or (C, D, H, W)."""
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """(sum of x ** p over each window) ** (1 / p), PyTorch's composition."""
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    k = _first(kernel_size)
    return (out.sign() * out.abs().relu()).mul(k).pow(1.0 / norm_type)


def _lp_pool(n: int, input: Tensor, norm_type: float, kernel_size: Any, stride: Any,
             ceil_mode: bool) -> Tensor:
    kernel = ntuple(kernel_size, n, "kernel_size", f"lp_pool{n}d")
    out = (avg_pool2d if n == 2 else avg_pool3d)(input.pow(norm_type), kernel, stride, 0,
                                                 ceil_mode)
    return (out.sign() * out.abs().relu()).mul(math.prod(kernel)).pow(1.0 / norm_type)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


# -- adaptive pooling --------------------------------------------------------------------------

def _adaptive_sizes(n: int, input: Tensor, output_size: Any, op: str) -> tuple:
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{op}(): Expected {n + 1}D or {n + 2}D tensor, but got "
                           f"{shape_list(input.shape)}")
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size,) * n
    sizes = tuple(output_size)
    if len(sizes) != n:
        raise RuntimeError(f"{op}: output_size must be {n}")
    out = tuple(int(L) if o is None else int(o) for o, L in zip(sizes, input.shape[-n:]))
    if any(o < 0 for o in out):
        raise RuntimeError(f"{op}: elements of output_size must be greater than or equal to "
                           f"0 but received {out}")
    return out


def _bounds(L: int, o: int) -> tuple:
    """PyTorch's adaptive windows: [floor(i L / o), ceil((i + 1) L / o))."""
    i = np.arange(o)
    return (i * L) // o, -((-(i + 1) * L) // o)


def _averaging_matrix(L: int, o: int) -> np.ndarray:
    start, end = _bounds(L, o)
    cols = np.arange(L)
    inside = (cols >= start[:, None]) & (cols < end[:, None])
    return inside / (end - start)[:, None]


def _along(x: Any, matrix: Any, axis: int) -> Any:
    """``matrix`` (o, L) applied along ``axis`` of x (length L -> o)."""
    moved = fnp.moveaxis(x, axis, -1)
    return fnp.moveaxis(fnp.matmul(moved, fnp.transpose(matrix)), -1, axis)


def _adaptive_avg(n: int, input: Tensor, output_size: Any) -> Tensor:
    op = f"adaptive_avg_pool{n}d"
    out = _adaptive_sizes(n, input, output_size, op)
    if n > 1 and out == (1,) * n:  # PyTorch's shortcut (MeanBackward1)
        return input.mean(tuple(range(-n, 0)), keepdim=True)
    mats = [_averaging_matrix(L, o) for L, o in zip(input.shape[-n:], out)]

    def f(x: Any) -> Any:
        for i, m in enumerate(mats):
            x = _along(x, const_on(m.astype(x.dtype), x), x.ndim - n + i)
        return x
    return apply(f"AdaptiveAvgPool{n}DBackward0", f, [input])


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Means over PyTorch's adaptive windows of the last axis, ``output_size`` of them."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got "
                           f"{shape_list(input.shape)}")
    return _via_2d(input, lambda x: _adaptive_avg(2, x, (1, _first(output_size))))


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Means over adaptive windows giving an (oH, oW) output (None keeps a size)."""
    return _adaptive_avg(2, input, output_size)


@autocast_op("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    return _adaptive_avg(3, input, output_size)


def _window_table(sizes: Sequence[int], out: Sequence[int]) -> np.ndarray:
    """Flat plane indices of every adaptive window, (out..., longest window), each window
    padded by repeating its last element."""
    strides = np.cumprod((1,) + tuple(sizes[::-1]))[:-1][::-1]
    table = np.zeros(tuple(out) + (1,) * len(out), np.int64)
    for axis, (L, o, st) in enumerate(zip(sizes, out, strides)):
        start, end = _bounds(L, o)
        longest = int((end - start).max()) if o else 1
        idx = np.minimum(start[:, None] + np.arange(longest), end[:, None] - 1) * st
        shape = [1] * (2 * len(out))
        shape[axis], shape[len(out) + axis] = o, longest
        table = table + idx.reshape(shape)
    return table.reshape(tuple(out) + (-1,))


def _adaptive_max(n: int, input: Tensor, output_size: Any, return_indices: bool) -> Any:
    op = f"adaptive_max_pool{n}d"
    out = _adaptive_sizes(n, input, output_size, op)
    sizes = tuple(input.shape[-n:])
    table = _window_table(sizes, out)
    plane = math.prod(sizes)

    def f(x: Any) -> Any:
        lead = x.shape[:x.ndim - n]
        flat = fnp.reshape(x, lead + (plane,))
        t = const_on(table, x)
        candidates = fnp.take(flat, t, axis=-1)                 # lead + out + (window,)
        best = fnp.argmax(candidates, axis=-1)
        index = fnp.take_along_axis(fnp.broadcast_to(t, candidates.shape),
                                    fnp.expand_dims(best, -1), -1)[..., 0]
        values = fnp.take_along_axis(flat, fnp.reshape(index, lead + (-1,)), -1)
        values = fnp.reshape(values, lead + out)
        return (values, index) if return_indices else values
    return apply(f"AdaptiveMaxPool{n}DBackward0", f, [input], multi=return_indices)


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d(): Expected 2D or 3D tensor, but got "
                           f"{shape_list(input.shape)}")
    return _via_2d(input, lambda x: _adaptive_max(2, x, (1, _first(output_size)),
                                                  return_indices))


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Maxima over adaptive windows (and, with ``return_indices``, their plane indices)."""
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Maxima over adaptive (oD, oH, oW) windows (indices flat over each volume)."""
    return _adaptive_max(3, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> tuple:
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> tuple:
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> tuple:
    return adaptive_max_pool3d(input, output_size, True)
