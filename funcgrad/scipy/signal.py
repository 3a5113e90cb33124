"""funcgrad.scipy.signal: convolution and correlation (scipy.signal's), differentiable in
both operands.

Every mode is a slice of the full N-D convolution (`funcgrad.primitives.signal`):
'full' (n + m - 1 per axis), 'same' (the size of in1, centred on 'full' as scipy does) and
'valid' (|n - m| + 1, where one operand must be at least as large as the other in every
axis; convolve2d and correlate2d then extend the larger one, as scipy does).
correlate(in1, in2) is convolve(in1, in2 reversed and conjugated). convolve2d's
boundaries 'fill' (with ``fillvalue``), 'wrap' and 'symm' pad in1 before a 'valid'
convolution. ``method`` ('auto', 'direct', 'fft') picks scipy's evaluation.
"""
from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.primitives.signal import convolve_full, crop, flip_all

__all__ = ["convolve", "correlate", "fftconvolve", "convolve2d", "correlate2d"]

_MODES = ("full", "same", "valid")
_METHODS = ("auto", "direct", "fft")
_BOUNDARIES = {"fill": "constant", "wrap": "wrap", "symm": "symmetric"}


def _operands(in1: Any, in2: Any, name: str, mode: str) -> tuple:
    if mode not in _MODES:
        raise ValueError(f"{name}: acceptable mode flags are 'valid', 'same', or 'full', got "
                         f"{mode!r}")
    in1, in2 = fnp.asarray(in1), fnp.asarray(in2)
    if in1.ndim != in2.ndim:
        raise ValueError(f"{name}: in1 and in2 should have the same dimensionality, got "
                         f"shapes {in1.shape} and {in2.shape}")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"{name}: inputs cannot be empty (shapes {in1.shape} and "
                         f"{in2.shape})")
    return in1, in2


def _sliced(full: Array, s1: tuple, s2: tuple, mode: str, name: str,
            same_start: tuple | None = None) -> Array:
    """The 'full', 'same' (centred as scipy: from (m - 1) // 2, or ``same_start``) or
    'valid' part of a full convolution of operands of shapes s1 and s2."""
    if mode == "full":
        return full
    if mode == "same":
        return crop(full, same_start or tuple((m - 1) // 2 for m in s2), s1)
    if not (all(a >= b for a, b in zip(s1, s2)) or all(a <= b for a, b in zip(s1, s2))):
        raise ValueError(f"{name}: for 'valid' mode, one must be at least as large as the "
                         f"other in every dimension (shapes {s1} and {s2})")
    return crop(full, tuple(min(a, b) - 1 for a, b in zip(s1, s2)),
                tuple(abs(a - b) + 1 for a, b in zip(s1, s2)))


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Array:
    """The N-D convolution of in1 and in2 (same number of dimensions)."""
    in1, in2 = _operands(in1, in2, "convolve", mode)
    if method not in _METHODS:
        raise ValueError(f"convolve: acceptable method flags are 'auto', 'direct', or 'fft', "
                         f"got {method!r}")
    full = convolve_full(in1, in2, method=method)
    return _sliced(full, in1.shape, in2.shape, mode, "convolve")


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Array:
    """The N-D cross-correlation: convolve(in1, conj(in2) reversed)."""
    in1, in2 = _operands(in1, in2, "correlate", mode)
    return convolve(in1, flip_all(fnp.conj(in2)), mode, method)


def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Any = None) -> Array:
    """convolve with method='fft' (over all axes)."""
    if axes is not None:
        raise NotImplementedError("fftconvolve: axes other than None (all axes) are not "
                                  "implemented")
    return convolve(in1, in2, mode, method="fft")


def _two_d(in1: Any, in2: Any, name: str, mode: str, boundary: str) -> tuple:
    in1, in2 = _operands(in1, in2, name, mode)
    if in1.ndim != 2:
        raise ValueError(f"{name} inputs must both be 2-D arrays, got shapes {in1.shape} and "
                         f"{in2.shape}")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"{name}: acceptable boundary flags are 'fill', 'wrap' and 'symm', "
                         f"got {boundary!r}")
    return in1, in2


def _full_2d(in1: Array, in2: Array, boundary: str, fillvalue: Any) -> Array:
    """The 'full' 2-D convolution with in1 extended past its edges by ``boundary``: pad by
    m - 1 on each side, convolve, keep the n + m - 1 outputs around in1."""
    if boundary == "fill" and _is_zero(fillvalue):
        return convolve_full(in1, in2, method="direct")
    pads = tuple((m - 1, m - 1) for m in in2.shape)
    if boundary == "fill":
        padded = fnp.pad(in1, pads, constant_values=fillvalue)
    else:
        padded = fnp.pad(in1, pads, mode=_BOUNDARIES[boundary])
    return crop(convolve_full(padded, in2, method="direct"), tuple(m - 1 for m in in2.shape),
                tuple(n + m - 1 for n, m in zip(in1.shape, in2.shape)))


def _is_zero(value: Any) -> bool:
    return not isinstance(value, Array) and value == 0


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
               fillvalue: Any = 0) -> Array:
    """The 2-D convolution, in1 extended past its edges by ``boundary``."""
    in1, in2 = _two_d(in1, in2, "convolve2d", mode, boundary)
    if _swapped(mode, in1.shape, in2.shape, "convolve2d"):
        in1, in2 = in2, in1  # scipy extends the larger operand in 'valid' mode
    return _sliced(_full_2d(in1, in2, boundary, fillvalue), in1.shape, in2.shape, mode,
                   "convolve2d")


def _swapped(mode: str, s1: tuple, s2: tuple, name: str) -> bool:
    """Whether scipy swaps the operands: in 'valid' mode when in2 is the larger."""
    if mode != "valid" or all(a >= b for a, b in zip(s1, s2)):
        return False
    if not all(a <= b for a, b in zip(s1, s2)):
        raise ValueError(f"{name}: for 'valid' mode, one must be at least as large as the "
                         f"other in every dimension (shapes {s1} and {s2})")
    return True


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
                fillvalue: Any = 0) -> Array:
    """The 2-D cross-correlation: convolve2d with conj(in2) rotated by 180 degrees; its
    'same' output starts at m // 2 of the full one (scipy's centring for correlate2d)."""
    in1, in2 = _two_d(in1, in2, "correlate2d", mode, boundary)
    if _swapped(mode, in1.shape, in2.shape, "correlate2d"):  # scipy: reversed, not conjugated
        return flip_all(correlate2d(in2, in1, mode, boundary, fillvalue))
    full = _full_2d(in1, flip_all(fnp.conj(in2)), boundary, fillvalue)
    return _sliced(full, in1.shape, in2.shape, mode, "correlate2d",
                   same_start=tuple(m // 2 for m in in2.shape))
