"""The kernel of the N-D full convolution: scipy.signal.convolve (which picks direct or FFT
evaluation by its cost model) when scipy is installed, else the direct sum over the
elements of the smaller operand, one shifted, scaled copy of the larger per element."""
from __future__ import annotations

from typing import Any

import numpy as np

from .special import on_host

try:
    import scipy.signal as _scipy_signal
except ImportError:  # scipy is optional: the direct sum takes over
    _scipy_signal = None

__all__ = ["convolve_full"]


def _direct(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    if k.size > x.size:
        x, k = k, x
    out = np.zeros(tuple(a + b - 1 for a, b in zip(x.shape, k.shape)),
                   dtype=np.result_type(x, k))
    for idx in np.ndindex(k.shape):
        out[tuple(slice(i, i + n) for i, n in zip(idx, x.shape))] += k[idx] * x
    return out


def _convolve_full(x: Any, k: Any, method: str) -> np.ndarray:
    """sum_j x[i - j] k[j] over every i where the two overlap (output n + m - 1 per axis)."""
    x, k = np.asarray(x), np.asarray(k)
    if x.size == 0 or k.size == 0:
        return np.zeros(tuple(max(a + b - 1, 0) for a, b in zip(x.shape, k.shape)),
                        dtype=np.result_type(x, k))
    if _scipy_signal is None:
        return _direct(x, k)
    return _scipy_signal.convolve(x, k, mode="full", method=method).astype(
        np.result_type(x, k), copy=False)


convolve_full = on_host(_convolve_full)
