"""Kernels of elementwise primitives whose special values differ from numpy's.

The Array API standard fixes results at infinities and NaNs that numpy's ufuncs compute
otherwise; these kernels call the ufunc and repair those elements, so ordinary values cost
one extra pass over a mask at most.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def _kind(*xs: Any) -> str:
    """The dtype kind numpy's promotion gives the operands (Python scalars weak)."""
    return np.result_type(*(x.dtype if hasattr(x, "dtype") else x for x in xs)).kind


def floor_divide(x: Any, y: Any) -> Any:
    """``floor(x / y)``, with the standard's values where exactly one operand is infinite:
    ``inf // 2 == inf`` and ``1 // -inf == -0.0`` (numpy gives nan and -1.0), which is
    ``x / y`` there."""
    if _kind(x, y) != "f":
        return np.floor_divide(x, y)
    with np.errstate(invalid="ignore"):  # inf // 2: repaired below, not invalid
        out = np.floor_divide(x, y)
        one_infinite = np.isinf(x) ^ np.isinf(y)
        fix = one_infinite & ~np.isnan(x) & ~np.isnan(y)
        if not np.any(fix):
            return out
        return np.where(fix, np.true_divide(x, y), out)


def expm1(x: Any) -> Any:
    """``exp(x) - 1`` without cancellation; for complex z = a + ib it is
    ``expm1(a) cos b - 2 sin^2(b/2) + i e^a sin b``, with the standard's special values
    (an imaginary +0 stays 0, a = -inf gives -1 + 0j, a = +inf with b not finite gives
    inf + nan j)."""
    out = np.expm1(x)
    if out.dtype.kind != "c":
        return out
    a, b = np.real(x), np.imag(x)
    with np.errstate(invalid="ignore", over="ignore"):
        half = np.sin(b / 2)
        re = np.expm1(a) * np.cos(b) - 2 * half * half + 0.0  # -0 - 0 is +0 here
        im = np.exp(a) * np.sin(b)
        im = np.where(b == 0, b, im)
        minus_inf = a == -np.inf
        re = np.where(minus_inf, -1.0, re)
        im = np.where(minus_inf, np.where(np.isfinite(b), 0.0 * np.sin(b), 0.0), im)
        wild = (a == np.inf) & ~np.isfinite(b)
        re = np.where(wild, np.inf, re)
        im = np.where(wild, np.nan, im)
    return _complex(re, im, x)


def _complex(re: Any, im: Any, like: Any) -> Any:
    """re + i im without the NaNs of ``re + 1j * im`` (inf * 0j), shaped like ``like``."""
    out = np.empty_like(np.asarray(like) if np.ndim(like) == 0 else like)
    out.real = re
    out.imag = im
    return out
