"""Discrete Fourier transforms along one axis, as linear primitives.

The primitives keep the length of the transformed axis (``irfft`` takes the output length
``n`` and an input of length n // 2 + 1); `funcgrad.numpy.fft` pads or truncates to numpy's
``n`` around them, so that step differentiates through the shape functions.

| primitive | VJP (the transpose; the DFT matrix is symmetric)                            |
|-----------|-----------------------------------------------------------------------------|
| fft, ifft | the same transform with the same norm                                       |
| rfft      | fft of the cotangent zero-padded to the input length (the tape takes Re)     |
| irfft     | conj(mask * rfft(g)) with the dual norm; mask 2 on the folded frequencies    |

Being linear, each primitive's JVP is the primitive itself. ``norm`` is one of "backward",
"ortho", "forward" and ``axis`` is non-negative.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcgrad.core import Primitive
from .linalg import conj, constant
from .samplers import linalg as samplers
from .shape import pad

_DUAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _transform(name: str, np_fn: Callable, **kwargs: Any) -> Primitive:
    p = Primitive(name, lambda x, axis, norm: np_fn(x, axis=axis, norm=norm), ("x",),
                  ("axis", "norm"), **kwargs)
    p.sample = samplers.fourier(real_input=name == "rfft")
    p.defjvp(lambda t, axis, norm: p(t, axis=axis, norm=norm))
    return p


fft = _transform("fft", np.fft.fft, doc="The DFT along ``axis``.")
ifft = _transform("ifft", np.fft.ifft, doc="The inverse DFT along ``axis``.")
rfft = _transform("rfft", np.fft.rfft, doc="The DFT of a real signal: n // 2 + 1 terms.")
fft.defvjp(lambda g, axis, norm: fft(g, axis=axis, norm=norm))
ifft.defvjp(lambda g, axis, norm: ifft(g, axis=axis, norm=norm))


def _rfft_vjp(g: Any, x_shape: tuple, axis: int, norm: str) -> Any:
    widths = [(0, 0)] * g.ndim
    widths[axis] = (0, x_shape[axis] - g.shape[axis])
    return fft(pad(g, pad_width=tuple(widths), constant_values=0), axis=axis, norm=norm)


def _irfft_vjp(g: Any, n: int, axis: int, norm: str) -> Any:
    half = n // 2 + 1
    mask = np.full(half, 2.0)
    mask[0] = 1.0
    if n % 2 == 0:
        mask[-1] = 1.0
    mask = constant(g, mask.reshape((half,) + (1,) * (g.ndim - axis - 1)).astype(g.dtype))
    return conj(mask * rfft(g, axis=axis, norm=_DUAL[norm]))


rfft.defvjp(_rfft_vjp)

irfft = Primitive("irfft", lambda x, n, axis, norm: np.fft.irfft(x, n, axis, norm), ("x",),
                  ("n", "axis", "norm"), sample=samplers.fourier(half=True),
                  doc="The real signal of length n from its n // 2 + 1 DFT terms.")
irfft.defvjp(_irfft_vjp)
irfft.defjvp(lambda t, n, axis, norm: irfft(t, n=n, axis=axis, norm=norm))


# -- batching rules (vmap): the batch axis in front, the transformed axis one further ---------
# (imported here: funcgrad.primitives.batching builds on the shape primitives)
from . import batching as B  # noqa: E402

for _p in (fft, ifft, rfft, irfft):
    B.broadcasting(_p, axes=("axis",))
