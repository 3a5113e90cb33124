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
    from hypothesis import strategies as st
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
