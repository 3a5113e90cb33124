"""Sampling an image at arbitrary points: the array form of torch's ``grid_sample``.

``grid_sample(x, grid)`` reads ``x`` of shape (N, C, *spatial) at the points of ``grid``
(N, *out, ndim), whose last axis holds normalised coordinates in [-1, 1], last spatial axis
first (x, then y, then z), as PyTorch's spatial-transformer op does. Every output element
is a fixed combination of input elements at integer positions (1 tap for 'nearest', 2 per
axis for 'bilinear', 4 per axis for 'bicubic'): the positions come from `floor`/`rint` of
the coordinates (no derivative), the weights are functions of the coordinates (derivative
to the grid), and the values are gathered with `take_along_axis` (derivative to ``x``: its
scatter-add). Everything is a funcgrad op, so it differentiates to any order, runs under
`jit` and `vmap`, and the facade's ``F.grid_sample`` is this function on its tensors.

The formulas are PyTorch's (aten's GridSampler): un-normalisation by ``align_corners``,
'border' clipping and 'reflection' folding of the coordinate (for 'bicubic', of each tap's
position), zeros outside for 'zeros', nearest as round-half-to-even, and the cubic
convolution kernel with A = -0.75.
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Sequence

import funcgrad.numpy as fnp

__all__ = ["grid_sample"]

_CUBIC_A = -0.75


def _unnormalize(coord: Any, size: int, align_corners: bool) -> Any:
    """[-1, 1] to pixel positions: corner pixels' centres (align_corners) or their edges."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _clip(coord: Any, size: int) -> Any:
    """Clip to [0, size - 1] with PyTorch's derivative: zero at and beyond either end."""
    high = size - 1
    return fnp.where(coord <= 0, 0.0 * coord, fnp.where(coord >= high, 0.0 * coord + high,
                                                        coord))


def _reflect(coord: Any, twice_low: int, twice_high: int) -> Any:
    """Fold ``coord`` into [twice_low / 2, twice_high / 2] by reflecting at both ends."""
    if twice_low == twice_high:
        return 0.0 * coord
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    distance = fnp.abs(coord - low)
    extra = fnp.fmod(distance, span)
    even_flips = fnp.fmod(fnp.floor(distance / span), 2) == 0
    return fnp.where(even_flips, extra + low, span - extra + low)


def _pad(coord: Any, size: int, padding_mode: str, align_corners: bool) -> Any:
    """The position 'border' or 'reflection' reads for ``coord`` ('zeros': itself)."""
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        folded = (_reflect(coord, 0, 2 * (size - 1)) if align_corners
                  else _reflect(coord, -1, 2 * size - 1))
        return _clip(folded, size)
    return coord


def _gather(x: Any, positions: Sequence[Any]) -> tuple:
    """x[n, :, p0, p1, ...] for integer position arrays of shape (N, *out), as (N, C, *out),
    and the mask of positions inside ``x`` (outside ones read element 0)."""
    n, c, *spatial = x.shape
    out_shape = positions[0].shape[1:]
    inside = None
    flat = None
    for p, size in zip(positions, spatial):
        ok = (p >= 0) & (p < size)
        inside = ok if inside is None else inside & ok
        p = fnp.clip(p, 0, size - 1)
        flat = p if flat is None else flat * size + p
    index = fnp.reshape(flat, (n, 1, math.prod(out_shape)))
    values = fnp.take_along_axis(fnp.reshape(x, (n, c, math.prod(spatial))), index, axis=2)
    return fnp.reshape(values, (n, c, *out_shape)), inside


def _weighted_sum(x: Any, taps: list) -> Any:
    """sum of weight * x[position] over ``taps`` [(positions, weight)], zero outside."""
    out = None
    for positions, weight in taps:
        values, inside = _gather(x, positions)
        weight = fnp.where(inside, weight, 0.0 * weight)
        part = values * fnp.expand_dims(weight, 1)
        out = part if out is None else out + part
    return out


def _cubic_coefficients(t: Any) -> list:
    """The four cubic-convolution weights of the taps at -1, 0, 1, 2 for fraction ``t``."""
    a = _CUBIC_A

    def near(s: Any) -> Any:  # |s| <= 1
        return ((a + 2) * s - (a + 3)) * s * s + 1

    def far(s: Any) -> Any:  # 1 < |s| < 2
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def argument_problem(mode: str, padding_mode: str) -> str | None:
    """What is wrong with ``mode`` or ``padding_mode``, in PyTorch's words (None: nothing)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        return f"expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'"
    if padding_mode not in ("zeros", "border", "reflection"):
        return ("expected padding_mode to be 'zeros', 'border', or 'reflection', but got: "
                f"'{padding_mode}'")
    return None


def shape_problem(x_shape: tuple, grid_shape: tuple, mode: str) -> str | None:
    """What is wrong with the shapes of an input and a grid, in PyTorch's (aten's) words,
    checked in its order (None: nothing)."""
    sizes = f"input with sizes {list(x_shape)} and grid with sizes {list(grid_shape)}"
    if x_shape[0] != grid_shape[0]:
        return f"grid_sampler(): expected grid and input to have same batch size, but got {sizes}"
    if grid_shape[-1] != len(x_shape) - 2:
        return (f"grid_sampler(): expected grid to have size {len(x_shape) - 2} in last "
                f"dimension, but got grid with sizes {list(grid_shape)}")
    for d in range(2, len(x_shape)):
        if x_shape[d] == 0:
            return (f"grid_sampler(): expected input to have non-empty spatial dimensions, "
                    f"but input has sizes {list(x_shape)} with dimension {d} being empty")
    expected = 4 if len(x_shape) == 4 else 5  # aten takes a 4-D input as 2-D, others as 3-D
    if len(x_shape) != expected or len(grid_shape) != expected:
        return (f"grid_sampler(): expected {expected}D input and grid with same number of "
                f"dimensions, but got {sizes}")
    if mode == "bicubic" and len(x_shape) != 4:
        return "grid_sampler(): bicubic interpolation only supports 4D input"
    return None


def grid_sample(x: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool = False) -> Any:
    """Sample ``x`` (N, C, H, W) or (N, C, D, H, W) at the normalised points ``grid``
    (N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3): see the module docstring."""
    x, grid = fnp.asarray(x), fnp.asarray(grid)
    problem = argument_problem(mode, padding_mode)
    if problem:
        raise ValueError(f"grid_sample(): {problem}")
    problem = shape_problem(x.shape, grid.shape, mode)
    if problem:
        raise ValueError(problem)
    spatial = x.shape[2:]
    nd = len(spatial)
    # grid's last axis lists x (the last spatial axis) first
    coords = [_unnormalize(grid[..., nd - 1 - d], size, align_corners)
              for d, size in enumerate(spatial)]
    if mode == "bicubic":
        return _bicubic(x, coords, padding_mode, align_corners)
    coords = [_pad(c, size, padding_mode, align_corners) for c, size in zip(coords, spatial)]
    if mode == "nearest":
        return _weighted_sum(x, [([fnp.rint(c).astype("int64") for c in coords],
                                  fnp.ones_like(coords[0]))])
    low = [fnp.floor(c) for c in coords]
    frac = [c - f for c, f in zip(coords, low)]
    taps = []
    for corner in itertools.product((0, 1), repeat=nd):
        weight = None
        for up, t in zip(corner, frac):
            w = t if up else 1 - t
            weight = w if weight is None else weight * w
        taps.append(([(f + up).astype("int64") for f, up in zip(low, corner)], weight))
    return _weighted_sum(x, taps)


def _bicubic(x: Any, coords: list, padding_mode: str, align_corners: bool) -> Any:
    """4 x 4 taps around each point; each tap's position is padded on its own."""
    spatial = x.shape[2:]
    low = [fnp.floor(c) for c in coords]
    weights = [_cubic_coefficients(c - f) for c, f in zip(coords, low)]
    taps = []
    for offsets in itertools.product(range(4), repeat=2):
        positions, weight = [], None
        for d, k in enumerate(offsets):
            at = _pad(low[d] + (k - 1), spatial[d], padding_mode, align_corners)
            positions.append(at.astype("int64"))
            weight = weights[d][k] if weight is None else weight * weights[d][k]
        taps.append((positions, weight))
    return _weighted_sum(x, taps)
