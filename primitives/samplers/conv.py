"""Samplers of the convolution family: small random convolutions and window gathers.

Every case draws its geometry per spatial axis (size, kernel or window, stride, both
dilations, padding that may be negative) and fixes the high padding so that at least one
output position exists; convolutions also draw feature or batch groups and a random
layout (dimension numbers) for each operand.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from funcgrad.primitives import sampling
from funcgrad.primitives.kernels.conv import dilate_dim, padded_shape, window_out_shape

__all__ = ["conv_cases", "windows_cases", "windows_transpose_cases", "window_gather_cases",
           "window_scatter_cases"]


def _ints(draw: Callable, lo: int, hi: int) -> int:
    from hypothesis import strategies as st  # a test dependency
    return draw(st.integers(lo, hi))


def _axis(draw: Callable, size: tuple, window: tuple) -> tuple:
    """(length, window, stride, base dilation, window dilation, (lo, hi)) of one axis,
    with at least one window position."""
    h, k = _ints(draw, *size), _ints(draw, *window)
    s, a, r = _ints(draw, 1, 2), _ints(draw, 1, 2), _ints(draw, 1, 2)
    lo, hi = _ints(draw, -1, 2), _ints(draw, -1, 2)
    lo = max(lo, -dilate_dim(h, a))
    hi = max(hi, dilate_dim(k, r) - dilate_dim(h, a) - lo)
    return h, k, s, a, r, (lo, hi)


def _layout(draw: Callable, canonical_shape: tuple) -> tuple:
    """A random spec (which array axis holds each canonical axis) and the array shape."""
    from hypothesis import strategies as st  # a test dependency
    spec = tuple(draw(st.permutations(range(len(canonical_shape)))))
    shape = [0] * len(canonical_shape)
    for role, axis in enumerate(spec):
        shape[axis] = canonical_shape[role]
    return spec, tuple(shape)


def conv_cases(conv: Callable) -> Callable:
    """Sampler for conv_general_dilated (1 or 2 spatial axes, groups, layouts)."""
    def cases(rng: np.random.RandomState, draw: Callable) -> list:
        from hypothesis import strategies as st  # a test dependency
        n_sp = _ints(draw, 1, 2)
        mode = draw(st.sampled_from(["plain", "feature", "batch"]))
        groups = 1 if mode == "plain" else _ints(draw, 2, 3)
        fg, bg = (groups, 1) if mode == "feature" else (1, groups)
        n, c, o = _ints(draw, 1, 2) * bg, _ints(draw, 1, 2) * fg, _ints(draw, 1, 2) * groups
        axes = [_axis(draw, (1, 4 if n_sp == 1 else 3), (1, 3 if n_sp == 1 else 2))
                for _ in range(n_sp)]
        hs, ks, strides, lhs_dil, rhs_dil, pads = (tuple(v) for v in zip(*axes))
        lhs_spec, lhs_shape = _layout(draw, (n, c) + hs)
        rhs_spec, rhs_shape = _layout(draw, (o, c // fg) + ks)
        out_spec = tuple(draw(st.permutations(range(n_sp + 2))))
        params = dict(window_strides=strides, padding=pads, lhs_dilation=lhs_dil,
                      rhs_dilation=rhs_dil, dimension_numbers=(lhs_spec, rhs_spec, out_spec),
                      feature_group_count=fg, batch_group_count=bg,
                      preferred_element_type=None)
        return [sampling.Case(lambda x, w: conv(x, w, **params),
                              (sampling.values(rng, lhs_shape), sampling.values(rng, rhs_shape)),
                              f"{lhs_shape} * {rhs_shape} {params}")]
    return sampling.custom(cases)


def _window_params(draw: Callable) -> tuple:
    shape = sampling.draw_shape(draw, min_dims=1, max_dims=3, min_side=0, max_side=4)
    axes = [_axis(draw, (h, h), (1, 3)) for h in shape]
    _, window, strides, base, rates, pads = (tuple(v) for v in zip(*axes))
    params = dict(window_dimensions=window, window_strides=strides, padding=pads,
                  base_dilation=base, window_dilation=rates)
    return shape, params


def windows_cases(windows: Callable) -> Callable:
    """Sampler for sliding_windows (fill 0 or -1.5)."""
    def cases(rng: np.random.RandomState, draw: Callable) -> list:
        from hypothesis import strategies as st  # a test dependency
        shape, params = _window_params(draw)
        params["fill"] = draw(st.sampled_from([0.0, -1.5]))
        return [sampling.Case(lambda x: windows(x, **params), (sampling.values(rng, shape),),
                              f"{shape} {params}")]
    return sampling.custom(cases)


def windows_transpose_cases(windows_transpose: Callable) -> Callable:
    """Sampler for sliding_windows_transpose (cotangents of the windows' shape)."""
    def cases(rng: np.random.RandomState, draw: Callable) -> list:
        shape, params = _window_params(draw)
        padded = padded_shape(shape, params["padding"], params["base_dilation"])
        out = window_out_shape(padded, params["window_dimensions"], params["window_strides"],
                               params["window_dilation"])
        g_shape = out + params["window_dimensions"]
        return [sampling.Case(lambda g: windows_transpose(g, shape=shape, **params),
                              (sampling.values(rng, g_shape),), f"{g_shape} -> {shape} {params}")]
    return sampling.custom(cases)


def _choice(rng: np.random.RandomState, shape: tuple, params: dict) -> tuple:
    """Random window offsets (any offset, padding included) and the windows' shape."""
    padded = padded_shape(shape, params["padding"], params["base_dilation"])
    out = window_out_shape(padded, params["window_dimensions"], params["window_strides"],
                           params["window_dilation"])
    size = int(np.prod(params["window_dimensions"]))
    return rng.randint(0, max(size, 1), out).astype(np.int64), out


def window_gather_cases(gather: Callable) -> Callable:
    """Sampler for window_gather: random offsets into random window geometries."""
    def cases(rng: np.random.RandomState, draw: Callable) -> list:
        from hypothesis import strategies as st  # a test dependency
        shape, params = _window_params(draw)
        choice, _ = _choice(rng, shape, params)
        params["fill"] = draw(st.sampled_from([0.0, -1.5]))
        return [sampling.Case(lambda x: gather(x, choice, **params),
                              (sampling.values(rng, shape),), f"{shape} {params}")]
    return sampling.custom(cases)


def window_scatter_cases(scatter: Callable) -> Callable:
    """Sampler for window_scatter: cotangents of the windows' count, random offsets."""
    def cases(rng: np.random.RandomState, draw: Callable) -> list:
        shape, params = _window_params(draw)
        choice, out = _choice(rng, shape, params)
        return [sampling.Case(lambda g: scatter(g, choice, shape=shape, **params),
                              (sampling.values(rng, out),), f"{out} -> {shape} {params}")]
    return sampling.custom(cases)
