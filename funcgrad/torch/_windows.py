"""The window functions of ``torch.*_window``: Hann, Hamming, Blackman, Bartlett, Kaiser.

A periodic window of length L is the symmetric window of length L + 1 without its last
point (what spectral analysis wants); a window of length 1 is ``[1.]``, as PyTorch's. The
values are computed in float64 and rounded once to the requested dtype.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._factories import finish
from funcgrad.torch._tensor import Tensor

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


def _window(name: str, length: int, periodic: bool, dtype: Any, device: Any,
            requires_grad: bool, shape: Callable[[np.ndarray, int], np.ndarray]) -> Tensor:
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={length}")
    dtype = D.get_default_dtype() if dtype is None else D.to_torch_dtype(dtype)
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if length <= 1:
        values = np.ones(length)
    else:
        n = length if periodic else length - 1  # the denominator: L + 1 points, less one
        values = shape(np.arange(length, dtype=np.float64), n)
    return finish(values, dtype, device, requires_grad)


def _cosine_sum(*coefficients: float) -> Callable:
    """sum_k (-1)^k a_k cos(2 pi k i / n)."""
    def shape(i: np.ndarray, n: int) -> np.ndarray:
        return sum((-1) ** k * a * np.cos(2 * np.pi * k * i / n)
                   for k, a in enumerate(coefficients))
    return shape


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.5, 0.5))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False) -> Tensor:
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(alpha, beta))


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None,
                    requires_grad: bool = False) -> Tensor:
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.42, 0.5, 0.08))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None,
                    requires_grad: bool = False) -> Tensor:
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda i, n: 1 - np.abs(2 * i / n - 1))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda i, n: np.i0(beta * np.sqrt(np.clip(1 - ((i - n / 2) / (n / 2)) ** 2,
                                                             0, None))) / np.i0(beta))
