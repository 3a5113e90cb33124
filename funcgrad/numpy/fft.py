"""funcgrad.numpy.fft: numpy.fft, differentiable.

The one-axis transforms are primitives (`funcgrad.primitives.fft`) that keep the length of
their axis; numpy's ``n`` pads with zeros or truncates before them, through the
differentiable shape functions. The n-dimensional transforms apply them axis by axis.
Gradients of complex values follow JAX's convention (the VJP is the transpose).
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad._config import default_float
from funcgrad._promotion import INEXACT, computed_dtype
from funcgrad.array import Array, new_array
from funcgrad.primitives import fft as F
from funcgrad.numpy._creation import asarray
from funcgrad.numpy._reductions import normalize_axis

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "fftn", "ifftn", "rfft2",
           "irfft2", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")


def _norm(norm: str | None) -> str:
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f"Invalid norm value {norm!r}; should be 'backward', 'ortho' or "
                         "'forward' (or None, meaning 'backward')")
    return norm


def _resize(x: Array, n: int, axis: int) -> Array:
    """x zero-padded or truncated to length n along axis."""
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    have = x.shape[axis]
    if n < have:
        return x[(slice(None),) * axis + (slice(0, n),)]
    if n > have:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (0, n - have)
        return fnp.pad(x, widths)
    return x


def _prepare(a: Any, n: int | None, axis: int, name: str, real: bool = False
             ) -> tuple[Array, int]:
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError(f"{name}: needs an array of at least one dimension")
    if real and np.issubdtype(a.dtype, np.complexfloating):
        raise TypeError(f"{name} takes a real input, got {a.dtype}; use fft for complex "
                        "signals (or pass the real part)")
    if not np.issubdtype(a.dtype, np.inexact):  # jax.numpy's dtype: float32 from int32
        a = a.astype(computed_dtype(a, rule=INEXACT))
    axis = normalize_axis(axis, a.ndim)[0]
    return (a if n is None else _resize(a, operator.index(n), axis)), axis


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The one-dimensional DFT, padded or truncated to length n."""
    a, axis = _prepare(a, n, axis, "fft")
    return F.fft(a, axis=axis, norm=_norm(norm))


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The one-dimensional inverse DFT, padded or truncated to length n."""
    a, axis = _prepare(a, n, axis, "ifft")
    return F.ifft(a, axis=axis, norm=_norm(norm))


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The DFT of a real signal: the n // 2 + 1 non-negative frequency terms."""
    a, axis = _prepare(a, n, axis, "rfft", real=True)
    return F.rfft(a, axis=axis, norm=_norm(norm))


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The real signal of length n (default 2 (m - 1)) with DFT terms a."""
    a = asarray(a)
    axis = normalize_axis(axis, max(a.ndim, 1))[0]
    n = 2 * (a.shape[axis] - 1) if n is None else operator.index(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    a, axis = _prepare(a, n // 2 + 1, axis, "irfft")
    return F.irfft(a, n=n, axis=axis, norm=_norm(norm))


_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The DFT of a signal with Hermitian symmetry, given by its n // 2 + 1 first terms
    (a real spectrum of length n, default 2 (m - 1)): irfft of conj(a), norms swapped."""
    return irfft(fnp.conj(asarray(a)), n, axis, _SWAPPED[_norm(norm)])


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of hfft for a real signal: conj(rfft(a)), norms swapped."""
    return fnp.conj(rfft(a, n, axis, _SWAPPED[_norm(norm)]))


def _plan(a: Array, s: Sequence[int] | None, axes: Sequence[int] | None) -> tuple[list, list]:
    """numpy's (s, axes) for the n-dimensional transforms, axes non-negative."""
    if axes is None:
        axes = list(range(-len(s), 0)) if s is not None else list(range(a.ndim))
    axes = [normalize_axis(ax, a.ndim)[0] for ax in axes]
    if s is None:
        s = [None] * len(axes)
    if len(s) != len(axes):
        raise ValueError(f"Shape s={tuple(s)} and axes={tuple(axes)} have different lengths")
    return list(s), axes


def _along(transform: Any, a: Array, s: list, axes: list, norm: str | None) -> Array:
    for n, ax in zip(s, axes):
        a = transform(a, n, ax, norm)
    return a


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Array:
    """The n-dimensional DFT over ``axes`` (default all), with lengths ``s``."""
    a = asarray(a)
    s, axes = _plan(a, s, axes)
    return _along(fft, a, s, axes, norm)


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    """The n-dimensional inverse DFT."""
    a = asarray(a)
    s, axes = _plan(a, s, axes)
    return _along(ifft, a, s, axes, norm)


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    """The n-dimensional DFT of a real array: rfft over the last axis, fft over the
    others."""
    a = asarray(a)
    s, axes = _plan(a, s, axes)
    a = rfft(a, s[-1], axes[-1], norm)
    return _along(fft, a, s[:-1], axes[:-1], norm)


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Array:
    """The inverse of rfftn: ifft over all axes but the last, irfft over the last."""
    a = asarray(a)
    s, axes = _plan(a, s, axes)
    a = _along(ifft, a, s[:-1], axes[:-1], norm)
    return irfft(a, s[-1], axes[-1], norm)


def _two_axes(transform: Any, name: str, doc: str) -> Any:
    def two(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
            norm: str | None = None) -> Array:
        return transform(a, s, axes, norm)
    two.__name__ = two.__qualname__ = name
    two.__doc__ = doc
    return two


fft2 = _two_axes(fftn, "fft2", "The two-dimensional DFT (fftn over the last two axes).")
ifft2 = _two_axes(ifftn, "ifft2", "The two-dimensional inverse DFT.")
rfft2 = _two_axes(rfftn, "rfft2", "The two-dimensional DFT of a real array.")
irfft2 = _two_axes(irfftn, "irfft2", "The inverse of rfft2.")


def _frequencies(raw: np.ndarray, dtype: Any, device: Any) -> Array:
    dtype = default_float() if dtype is None else np.dtype(dtype)
    return fnp.asarray(new_array(raw.astype(dtype)), device=device)


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of an n-point DFT (a constant; float64 by default)."""
    return _frequencies(np.fft.fftfreq(operator.index(n), d), dtype, device)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of an n-point rfft (a constant; float64 by default)."""
    return _frequencies(np.fft.rfftfreq(operator.index(n), d), dtype, device)


def _shift(x: Any, axes: Any, sign: int) -> Array:
    x = asarray(x)
    axes = normalize_axis(axes, x.ndim)
    return fnp.roll(x, tuple(sign * (x.shape[ax] // 2) for ax in axes), axes)


def fftshift(x: Any, axes: Any = None) -> Array:
    """The zero frequency moved to the centre."""
    return _shift(x, axes, 1)


def ifftshift(x: Any, axes: Any = None) -> Array:
    """The inverse of fftshift."""
    return _shift(x, axes, -1)
