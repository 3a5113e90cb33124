"""``torch.signal.windows``: SciPy-style window functions (``sym=True``: symmetric, for
filter design; ``sym=False``: periodic, for spectral analysis), by PyTorch's formulas in
float64, rounded once to the requested dtype."""
from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from funcgrad.torch._factories import finish
from funcgrad.torch._runtime import dtypes as D, layouts
from funcgrad.torch._tensor import Tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _make(name: str, M: int, values: Any, dtype: Any, layout: Any, device: Any,
          requires_grad: bool) -> Tensor:
    """Check the arguments as PyTorch's ``_window_function_checks`` does; ``values`` is
    called for M > 1 (M == 1 gives [1.], M == 0 an empty window)."""
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout is not layouts.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    dtype = D.get_default_dtype() if dtype is None else D.to_torch_dtype(dtype)
    if dtype not in (D.float32, D.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    out = np.ones(M) if M <= 1 else values()
    return finish(out, dtype, device, requires_grad)


def _span(M: int, sym: bool) -> int:
    """The denominator of a window's phase: M - 1 points apart (symmetric), or M (the
    periodic window is the symmetric one of M + 1 points without its last)."""
    return M - 1 if sym else M


def general_cosine(M: int, *, a: Iterable[float], sym: bool = True, dtype: Any = None,
                   layout: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
    """sum_i (-1)^i a_i cos(2 pi i k / (M - 1))."""
    a = list(a)
    if not a:
        raise ValueError("Coefficients cannot be empty")

    def values() -> np.ndarray:
        k = np.arange(M) * (2 * math.pi / _span(M, sym))
        return sum((-1) ** i * w * np.cos(i * k) for i, w in enumerate(a))
    return _make("general_cosine", M, values, dtype, layout, device, requires_grad)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype: Any = None,
                    layout: Any = None, device: Any = None,
                    requires_grad: bool = False) -> Tensor:
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False) -> Tensor:
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    return _make("bartlett", M, lambda: 1 - np.abs(np.arange(M) * (2 / _span(M, sym)) - 1),
                 dtype, layout, device, requires_grad)


def cosine(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """sin(pi (k + 1/2) / M)."""
    return _make("cosine", M, lambda: np.sin((np.arange(M) + 0.5) * math.pi / (
        M if sym else M + 1)), dtype, layout, device, requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype: Any = None, layout: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    """exp(-|k - center| / tau), centred by default."""
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")

    def values() -> np.ndarray:
        c = _span(M, sym) / 2.0 if center is None else center
        return np.exp(-np.abs(np.arange(M) - c) / tau)
    return _make("exponential", M, values, dtype, layout, device, requires_grad)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """exp(-(k - (M - 1) / 2)^2 / (2 std^2))."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    return _make("gaussian", M, lambda: np.exp(-((np.arange(M) - _span(M, sym) / 2.0) / std)
                                                 ** 2 / 2), dtype, layout, device,
                 requires_grad)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype: Any = None,
           layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """I0(beta sqrt(1 - (2k / (M - 1) - 1)^2)) / I0(beta)."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")

    def values() -> np.ndarray:
        k = -beta + np.arange(M) * (2.0 * beta / _span(M, sym))
        k = np.minimum(k, beta)
        return np.i0(np.sqrt(np.maximum(beta * beta - k ** 2, 0))) / np.i0(beta)
    return _make("kaiser", M, values, dtype, layout, device, requires_grad)
