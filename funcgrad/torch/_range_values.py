"""The values of ``torch.linspace``, computed as PyTorch's CPU kernel computes them.

PyTorch fills the first half from ``start`` and the second half from ``end`` (``start +
step * i`` and ``end - step * (steps - 1 - i)``) in the output's precision, with a fused
multiply-add (one rounding). numpy's linspace (one formula in float64, then a cast) gives
values a unit in the last place away from PyTorch's here and there, which shows wherever a
value is near zero (``sin(linspace(0, 2 * pi, 25))``). Here the product is exact (a float32
product in float64; a float64 one as two exact halves, summed in extended precision, which
agrees with PyTorch's fused sum but for a few values in 10^4) and the sum is rounded once
to the output's precision. Half and bfloat16 round after each operation, as PyTorch's
``c10::Half`` arithmetic does; integers are the float64 values truncated.
"""
from __future__ import annotations

import numpy as np

__all__ = ["linspace_values"]

# the precision float64 sums are made in: numpy's longdouble where it has 64 mantissa bits
# (x86), float64 elsewhere
_WIDE = np.longdouble if np.finfo(np.longdouble).nmant >= 63 else np.float64


def linspace_values(start: float, end: float, steps: int, np_dtype: np.dtype) -> np.ndarray:
    """``steps`` values from ``start`` to ``end`` of numpy dtype ``np_dtype``, as PyTorch's
    linspace makes them."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = np.dtype(np_dtype)
    if dt.kind == "c" or steps <= 1:  # complex: no fused kernel to match
        return np.linspace(start, end, steps).astype(dt)
    lo, hi = np.array([start, end]).astype(dt)
    if dt.kind in "fV" and dt.itemsize == 2:
        return _half_precision(lo, hi, steps, dt)
    if dt.kind == "f" and dt.itemsize <= 4:  # a float32 product is exact in float64
        work = np.float64
        step = work(np.array((hi - lo) / dt.type(steps - 1)).astype(dt))  # in dt
    elif dt.kind == "f":
        work, step = _WIDE, (hi - lo) / dt.type(steps - 1)
    else:  # integers: a float64 step from the integer end points
        work, step = _WIDE, (np.float64(hi) - np.float64(lo)) / (steps - 1)
    i = np.arange(steps, dtype=np.float64)
    half = steps // 2
    first = _fused(work(lo), step, i[:half], work)
    second = _fused(work(hi), -step, steps - 1 - i[half:], work)
    return np.concatenate([first, second]).astype(np.float64).astype(dt)


def _fused(base: np.generic, step: np.float64, k: np.ndarray, work: type) -> np.ndarray:
    """``base + step * k`` with the product exact: ``step`` split in halves of 26 bits
    (Veltkamp), each half times an index exact in float64, summed in ``work``."""
    if work is np.float64:
        return base + step * k
    c = np.float64(134217729.0) * step
    high = c - (c - step)
    return (base + work(high * k)) + work((step - high) * k)


def _half_precision(lo: np.generic, hi: np.generic, steps: int, dt: np.dtype) -> np.ndarray:
    """Half / bfloat16: each operation in float32 rounded to ``dt`` (the index too)."""
    f = np.float32

    def rounded(x: np.ndarray) -> np.ndarray:
        return np.asarray(x).astype(dt).astype(f)
    step = rounded(rounded(f(hi) - f(lo)) / rounded(f(steps - 1)))

    def times_step(k: np.ndarray) -> np.ndarray:
        return rounded(step * rounded(k))
    i = np.arange(steps)
    half = steps // 2
    first = f(lo) + times_step(i[:half])
    second = f(hi) - times_step(steps - 1 - i[half:])
    return np.concatenate([first, second]).astype(dt)
