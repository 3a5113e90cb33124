"""The N-D full convolution, the primitive behind funcgrad.scipy.signal (convolve,
correlate, convolve2d, correlate2d and their 'same' and 'valid' modes are slices of it,
and the boundaries of convolve2d are paddings).

| primitive      | derivative (y = x * k, full: n + m - 1 per axis)                       |
|----------------|------------------------------------------------------------------------|
| convolve_full  | gx = the 'valid' correlation of g with k = full(g, flip(k))[m-1 : ...], |
|                | gk likewise with x; the JVP is full(tx, k) + full(x, tk)               |

The transposes use flip without conjugation (JAX's convention), so complex inputs work.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import Primitive
from . import sampling
from .kernels import signal as K
from .sampling import Case

__all__ = ["convolve_full", "flip_all", "crop"]


def flip_all(x: Any) -> Any:
    """x reversed along every axis."""
    return x[tuple(slice(None, None, -1) for _ in range(x.ndim))]


def crop(x: Any, starts: tuple, sizes: tuple) -> Any:
    """x[starts[0] : starts[0] + sizes[0], ...]."""
    return x[tuple(slice(s, s + n) for s, n in zip(starts, sizes))]


def _transpose_to(g: Any, other: Any, shape: tuple, method: str) -> Any:
    """The cotangent of one operand of shape ``shape``, the other being ``other``."""
    full = convolve_full(g, flip_all(other), method=method)
    return crop(full, tuple(m - 1 for m in other.shape), shape)


def _cases(rng: np.random.RandomState, draw: Callable) -> list:
    from hypothesis import strategies as st  # a test dependency
    ndim = draw(st.integers(1, 3))
    sx = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    sk = tuple(draw(st.integers(1, 3)) for _ in range(ndim))
    cplx = draw(st.booleans())
    method = draw(st.sampled_from(["direct", "fft"]))
    return [Case(lambda x, k: convolve_full(x, k, method=method),
                 (sampling.values(rng, sx, complex_=cplx), sampling.values(rng, sk)),
                 f"{sx} * {sk} complex={cplx} {method}")]


convolve_full = Primitive(
    "convolve_full", K.convolve_full, ("x", "k"), ("method",),
    sample=sampling.custom(_cases),
    doc="The full N-D convolution of x and k (same number of dimensions).")
convolve_full.defvjp(lambda g, k, x_shape, method: _transpose_to(g, k, x_shape, method),
                     lambda g, x, k_shape, method: _transpose_to(g, x, k_shape, method))
convolve_full.defjvp(lambda t, k, method: convolve_full(t, k, method=method),
                     lambda t, x, method: convolve_full(x, t, method=method))


# -- batching rules (vmap) ------------------------------------------------------------------
# A full convolution along the batch axis with a length-1 operand is the identity there:
# one batched operand convolves with the other given a leading axis of one. When both are
# batched each example pairs with its own kernel, which the depthwise convolution does
# (one feature group per example; a full convolution is a correlation with the flipped
# kernel, padded by its length minus one).
from . import batching as B  # noqa: E402
from .conv import ConvDimensionNumbers, conv_general_dilated  # noqa: E402
from .indexing import NO_INDEX, Index, Slice, getitem  # noqa: E402
from .shape import reshape  # noqa: E402


def _leading_one(x: Any) -> Any:
    return reshape(x, shape=(1,) + tuple(x.shape))


def _batch_convolve_full(args: tuple, dims: tuple, method: str) -> tuple:
    (x, k), (dx, dk) = args, dims
    if dk is None:
        return convolve_full(B.to_front(x, dx), _leading_one(k), method=method), 0
    if dx is None:
        return convolve_full(_leading_one(x), B.to_front(k, dk), method=method), 0
    x, k = B.to_front(x, dx), B.to_front(k, dk)
    size, nd = x.shape[0], x.ndim - 1
    flipped = getitem(k, NO_INDEX, index=Index((Slice(None, None, None),) + (
        Slice(None, None, -1),) * nd))
    spec = tuple(range(nd + 2))
    out = conv_general_dilated(
        _leading_one(x), reshape(flipped, shape=(size, 1) + tuple(k.shape[1:])),
        window_strides=(1,) * nd, padding=tuple((n - 1, n - 1) for n in k.shape[1:]),
        lhs_dilation=(1,) * nd, rhs_dilation=(1,) * nd,
        dimension_numbers=ConvDimensionNumbers(spec, spec, spec), feature_group_count=size,
        batch_group_count=1, preferred_element_type=None)
    return reshape(out, shape=tuple(out.shape[1:])), 0


convolve_full.defbatch(_batch_convolve_full)
