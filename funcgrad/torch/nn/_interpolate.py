"""torch.nn.functional.interpolate: nearest, nearest-exact, (bi/tri)linear, bicubic, area;
and grid_sample, which reads an image at arbitrary points (`funcgrad.nn.grid_sample`).

Every mode but 'area' is separable: along each spatial axis, each output element is a
fixed combination of at most four input elements (1 for nearest, 2 for linear, 4 for
cubic), so the op gathers those taps along the axis (`take`) and sums them with constant
weights; its gradient is the transposed scatter, as in PyTorch's backward kernels. The
source indices and weights are computed on the host with PyTorch's formulas and in its
precision (float32 scales for nearest; the input's float type otherwise), including its
``scale_factor`` convention (the kernel uses 1 / scale_factor unless
``recompute_scale_factor``) and its nearest shortcuts for equal and doubled sizes.
'area' is adaptive average pooling.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch._dispatch import apply
from funcgrad.torch._tensor import Tensor
from funcgrad.nn import _grid
from funcgrad.torch.nn._common import const_on, scalar_name, shape_list
from funcgrad.torch.nn import _pooling
from funcgrad.torch._autocast import autocast_op

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "grid_sample"]

_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}
_NAMES = {"nearest": "UpsampleNearest{}DBackward0",
          "nearest-exact": "UpsampleNearestExact{}DBackward0",
          "linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
          "trilinear": "UpsampleTrilinear3DBackward0", "bicubic": "UpsampleBicubic2DBackward0"}
_MODES_TEXT = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def _nearest_taps(L: int, o: int, scale: float | None, exact: bool) -> tuple:
    """Source index of each output element (PyTorch's nearest_idx, in float32)."""
    dst = np.arange(o)
    if not exact and o == L:
        return dst[:, None], np.ones((o, 1))
    if not exact and o == 2 * L:
        return (dst >> 1)[:, None], np.ones((o, 1))
    s = np.float32(1.0 / scale) if scale else np.float32(L) / np.float32(o)
    pos = (dst.astype(np.float64) + 0.5) * s if exact else dst.astype(np.float32) * s
    src = np.minimum(np.floor(pos.astype(np.float32)).astype(np.int64), L - 1)
    return src[:, None], np.ones((o, 1))


def _source_positions(L: int, o: int, scale: float | None, align_corners: bool,
                      cubic: bool, dtype: np.dtype) -> np.ndarray:
    """PyTorch's area_pixel_compute_source_index for every output element."""
    dst = np.arange(o).astype(dtype)
    if align_corners:
        step = dtype.type((L - 1) / (o - 1)) if o > 1 else dtype.type(0)
        return step * dst
    step = dtype.type(1.0 / scale) if scale else dtype.type(L) / dtype.type(o)
    src = step * (dst + dtype.type(0.5)) - dtype.type(0.5)
    return src if cubic else np.maximum(src, dtype.type(0))


def _linear_taps(L: int, o: int, scale: float | None, align_corners: bool,
                 dtype: np.dtype) -> tuple:
    src = _source_positions(L, o, scale, align_corners, False, dtype)
    i0 = np.minimum(np.floor(src).astype(np.int64), L - 1)
    lam = np.clip(src - i0, 0, 1)
    i1 = i0 + (i0 < L - 1)
    return np.stack([i0, i1], 1), np.stack([1 - lam, lam], 1)


def _cubic_weights(t: np.ndarray) -> np.ndarray:
    """Keys' cubic convolution weights (A = -0.75) of the taps at -1, 0, 1, 2."""
    a = -0.75

    def near(x: np.ndarray) -> np.ndarray:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], 1)


def _cubic_taps(L: int, o: int, scale: float | None, align_corners: bool,
                dtype: np.dtype) -> tuple:
    src = _source_positions(L, o, scale, align_corners, True, dtype)
    base = np.floor(src).astype(np.int64)
    idx = np.clip(base[:, None] + np.arange(-1, 3), 0, L - 1)  # bounded reads
    return idx, _cubic_weights((src - base).astype(dtype))


def _taps(mode: str, L: int, o: int, scale: float | None, align_corners: bool,
          dtype: np.dtype) -> tuple:
    if mode in ("nearest", "nearest-exact"):
        return _nearest_taps(L, o, scale, mode == "nearest-exact")
    if mode == "bicubic":
        return _cubic_taps(L, o, scale, align_corners, dtype)
    return _linear_taps(L, o, scale, align_corners, dtype)


def _resample(x: Any, axis: int, idx: np.ndarray, weights: np.ndarray) -> Any:
    """sum over taps t of x[..., idx[:, t], ...] * weights[:, t] along ``axis``."""
    shape = [1] * x.ndim
    shape[axis] = idx.shape[0]
    out = None
    for t in range(idx.shape[1]):
        part = fnp.take(x, const_on(idx[:, t], x), axis=axis)
        if not np.all(weights[:, t] == 1):
            part = fnp.multiply(part, const_on(weights[:, t].astype(x.dtype).reshape(shape),
                                               x))
        out = part if out is None else fnp.add(out, part)
    return out


def _spatial(values: Any, n: int, name: str, input: Tensor) -> list:
    """``size`` or ``scale_factor`` as one entry per spatial axis, with PyTorch's check."""
    if isinstance(values, (list, tuple)):
        if len(values) != n:
            raise ValueError("Input and output must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{shape_list(input.shape[2:])} and output size of "
                             f"{list(values) if name == 'size' else tuple(values)}. Please "
                             "provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                             "size in (o1, o2, ...,oK) format.")
        return list(values)
    return [values] * n


def _output_geometry(input: Tensor, n: int, size: Any, scale_factor: Any,
                     recompute_scale_factor: Any) -> tuple:
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit "
                             "size.")
        return [int(s) for s in _spatial(size, n, "size", input)], [None] * n
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    scales = [float(s) for s in _spatial(scale_factor, n, "scale_factor", input)]
    out = [math.floor(float(L * s)) for L, s in zip(input.shape[2:], scales)]
    return out, ([None] * n if recompute_scale_factor else scales)


def _check_mode(mode: str, ndim: int, align_corners: Any, antialias: bool) -> None:
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    if ndim not in (3, 4, 5):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {ndim}D) for the modes: {_MODES_TEXT} (got {mode})")
    if mode in _LINEAR_MODES and ndim != _LINEAR_MODES[mode] + 2:
        raise NotImplementedError(f"Got {ndim}D input, but {mode} mode needs "
                                  f"{_LINEAR_MODES[mode] + 2}D input")
    if antialias:
        if not (mode in ("bilinear", "bicubic") and ndim == 4):
            raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes "
                             "and requires a 4-D tensor as input")
        raise NotImplementedError("interpolate: antialias=True is not supported by "
                                  "funcgrad.torch")


@autocast_op("interpolate")
def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False
                ) -> Tensor:
    """Resize the spatial axes of (N, C, ...) to ``size`` or by ``scale_factor``."""
    if mode not in _NAMES and mode != "area":
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.ndim}D) for the modes: {_MODES_TEXT} "
                                  f"(got {mode})")
    _check_mode(mode, input.ndim, align_corners, antialias)
    n = input.ndim - 2
    out, scales = _output_geometry(input, n, size, scale_factor, recompute_scale_factor)
    if mode == "area":
        return getattr(_pooling, f"adaptive_avg_pool{n}d")(input, tuple(out))
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got "
                           f"input ({', '.join(map(str, input.shape[2:]))}) and output "
                           f"({', '.join(map(str, out))})")
    corners = bool(align_corners)
    dtype = np.dtype(np.float64 if str(input.dtype) == "torch.float64" else np.float32)
    taps = [_taps(mode, L, o, s, corners, dtype)
            for L, o, s in zip(input.shape[2:], out, scales)]

    def f(x: Any) -> Any:
        for i, (idx, w) in enumerate(taps):
            x = _resample(x, 2 + i, idx, w)
        return x
    return apply(_NAMES[mode].format(n), f, [input])


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None,
             mode: str = "nearest", align_corners: bool | None = None) -> Tensor:
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


_ALIGN_CORNERS_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                          "align_corners=False since 1.3.0. Please specify align_corners=True "
                          "if the old behavior is desired. See the documentation of "
                          "grid_sample for details.")


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at ``grid``'s normalised points
    (N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3), differentiable in both."""
    problem = _grid.argument_problem(mode, padding_mode)
    if problem:
        raise ValueError(f"nn.functional.grid_sample(): {problem}")
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(input)} but found "
                           f"{scalar_name(grid)}")
    problem = _grid.shape_problem(tuple(input.shape), tuple(grid.shape), mode)
    if problem:
        raise RuntimeError(problem)
    name = f"GridSampler{input.ndim - 2}DBackward0"
    return apply(name, lambda x, g: _grid.grid_sample(x, g, mode, padding_mode,
                                                      align_corners), [input, grid])
