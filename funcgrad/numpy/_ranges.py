"""Ranges and grids: arange, linspace, logspace, geomspace, meshgrid, indices, vander and
the window functions.

With plain numbers these are numpy's constants. Given Arrays, the ranges are compositions
of funcgrad ops and so differentiable in their arguments: ``linspace`` in ``start`` and
``stop`` (the last point is exactly ``stop``, as numpy makes it), ``logspace`` also in
``base``, ``geomspace`` in its endpoints, ``arange`` in ``start`` and ``step`` (``stop``
only sets the length). ``meshgrid`` and ``vander`` are differentiable in their inputs.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from funcgrad._config import canonical_dtype, default_float, requested_dtype
from funcgrad._promotion import INEXACT, computed_dtype
from funcgrad.array import Array, new_array, to_raw
from funcgrad.core import Tracer, is_inexact
from funcgrad.numpy._creation import _placed, as_shape, asarray, astype, promote_dtypes
from funcgrad.numpy._elementwise import floor, power, where
from funcgrad.numpy._shape import (broadcast_arrays, broadcast_to, expand_dims, moveaxis,
                                   ravel, reshape)

__all__ = ["arange", "linspace", "logspace", "geomspace", "meshgrid", "indices", "vander",
           "bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _plain(x: Any) -> Any:
    """A 0-d non-traced Array as a Python number (numpy's range functions take those)."""
    if isinstance(x, Array) and not isinstance(x, Tracer):
        return x.item() if x.ndim == 0 else x.to_numpy()
    return x


def _traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) and is_inexact(x.dtype) for x in xs)


def _constant(raw: np.ndarray, dtype: Any, device: Any) -> Array:
    """A numpy result as an Array: ``dtype`` if given (already `requested_dtype`), else
    raw's narrowed by the config."""
    dtype = canonical_dtype(raw.dtype) if dtype is None else dtype
    return _placed(new_array(np.asarray(raw, dtype=dtype)), device)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *,
           device: Any = None) -> Array:
    """Evenly spaced values in [start, stop) (``arange(n)``: 0 .. n-1). Traced float
    ``start`` or ``step`` make it differentiable in them."""
    dtype = requested_dtype(dtype, "arange")
    if _traced(start, stop, step):
        return _traced_arange(start, stop, step, dtype, device)
    start, stop, step = _plain(start), _plain(stop), _plain(step)
    if stop is None:
        start, stop = 0, start
    raw = np.arange(start, stop, 1 if step is None else step, dtype=dtype)
    return _constant(raw, dtype, device)


def _traced_arange(start: Any, stop: Any, step: Any, dtype: Any, device: Any) -> Array:
    """start + k * step, k = 0 .. n - 1, with numpy's n = ceil((stop - start) / step)."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    lo, hi, st = (float(asarray(v).concrete().item()) for v in (start, stop, step))
    if st == 0:
        raise ZeroDivisionError("arange: step must not be zero")
    n = max(int(math.ceil((hi - lo) / st)), 0)
    k = new_array(np.arange(n, dtype=np.result_type(default_float(), asarray(start).dtype,
                                                     asarray(step).dtype)))
    out = asarray(start) + k * step
    return _placed(out if dtype is None else astype(out, dtype), device)


def _sample_count(num: Any) -> int:
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    return num


def _grid(start: Any, stop: Any, num: int, endpoint: bool, axis: int,
          point: Any) -> tuple[Array, Any]:
    """The points ``point(start, stop, k, div)`` for k = 0 .. num - 1 along a new axis
    ``axis`` of start and stop broadcast together, the last one exactly ``stop`` when
    ``endpoint``; returns (points, div)."""
    start, stop = broadcast_arrays(start, stop)
    div = num - 1 if endpoint else num
    k = reshape(new_array(np.arange(num, dtype=start.dtype if is_inexact(start.dtype)
                                    else np.float64)), (num,) + (1,) * start.ndim)
    y = point(start, stop, k, div)
    if endpoint and num > 1:
        y = where(new_array(np.arange(num).reshape(k.shape) == num - 1), stop, y)
    axis = operator.index(axis)
    return moveaxis(y, 0, axis if axis >= 0 else axis + y.ndim), div


def _finish(y: Array, dtype: Any, device: Any) -> Array:
    if dtype is not None:
        if dtype.kind in "iub":
            y = floor(y)
        y = astype(y, dtype)
    return _placed(y, device)


def linspace(start: Any, stop: Any, num: Any = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: Any = 0, *,
             device: Any = None) -> Any:
    """``num`` evenly spaced values from start to stop (stop excluded without
    ``endpoint``); array endpoints give one range per element along ``axis``."""
    num = _sample_count(num)
    dtype = requested_dtype(dtype, "linspace")
    if not isinstance(start, Array) and not isinstance(stop, Array):
        raw, step = np.linspace(to_raw(start), to_raw(stop), num, endpoint, retstep=True,
                                dtype=computed_dtype(start, stop, rule=INEXACT)
                                if dtype is None else dtype, axis=axis)
        out = _constant(raw, dtype, device)
        return (out, step) if retstep else out
    start, stop = promote_dtypes(start, stop, rule=INEXACT)
    dt = start.dtype

    def point(a: Array, b: Array, k: Array, div: int) -> Array:
        return a + k * ((b - a) / div) if div > 0 else a + k * (b - a)

    y, div = _grid(start, stop, num, endpoint, axis, point)
    out = _finish(y, dtype, device)
    if not retstep:
        return out
    return out, ((stop - start) / div if div > 0 else new_array(np.asarray(np.nan, dt)))


def logspace(start: Any, stop: Any, num: Any = 50, endpoint: bool = True,
             base: Any = 10.0, dtype: Any = None, axis: Any = 0, *,
             device: Any = None) -> Array:
    """``base ** linspace(start, stop, num)``; an array ``base`` broadcasts against the
    endpoints."""
    dtype = requested_dtype(dtype, "logspace")
    if not any(isinstance(v, Array) for v in (start, stop, base)):
        raw = np.logspace(to_raw(start), to_raw(stop), num, endpoint, to_raw(base),
                          dtype, axis)
        return _constant(raw, dtype, device)
    y = linspace(start, stop, num, endpoint, axis=axis)
    base = asarray(base)
    if base.ndim:
        base = expand_dims(base, operator.index(axis))
    return _finish(power(base, y), dtype, device)


def geomspace(start: Any, stop: Any, num: Any = 50, endpoint: bool = True,
              dtype: Any = None, axis: Any = 0, *, device: Any = None) -> Array:
    """Values spaced evenly on a log scale from start to stop:
    ``start * (stop / start) ** (k / div)``, with both endpoints exact."""
    num = _sample_count(num)
    dtype = requested_dtype(dtype, "geomspace")
    if not isinstance(start, Array) and not isinstance(stop, Array):
        raw = np.geomspace(to_raw(start), to_raw(stop), num, endpoint, dtype, axis)
        return _constant(raw, dtype, device)
    start, stop = asarray(start), asarray(stop)
    if not bool(np.all(start.concrete().to_numpy() != 0)) or not bool(
            np.all(stop.concrete().to_numpy() != 0)):
        raise ValueError("Geometric sequence cannot include zero")
    dt = computed_dtype(start, stop, rule=INEXACT)
    start, stop = astype(start, dt), astype(stop, dt)

    def point(a: Array, b: Array, k: Array, div: int) -> Array:
        return a * (b / a) ** (k / div) if div > 0 else a * k ** 0

    y, _ = _grid(start, stop, num, endpoint, axis, point)
    return _finish(y, dtype, device)


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> list:
    """Coordinate arrays from 1-D coordinate vectors (``indexing`` 'xy': Cartesian, the
    first two axes swapped; 'ij': matrix), as a list (the Array API's and JAX's type).
    Differentiable in the vectors."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    vectors = [ravel(asarray(x)) for x in xi]
    n = len(vectors)
    shapes = []
    for i, v in enumerate(vectors):
        pos = (1, 0)[i] if indexing == "xy" and n > 1 and i < 2 else i
        shapes.append(tuple(-1 if j == pos else 1 for j in range(n)))
    grids = [reshape(v, s) for v, s in zip(vectors, shapes)]
    if sparse:
        return grids
    full = np.broadcast_shapes(*(g.shape for g in grids))
    return [broadcast_to(g, full) for g in grids]


def indices(dimensions: Sequence, dtype: Any = int, sparse: bool = False) -> Any:
    """The index of each position of a grid of shape ``dimensions`` (a constant)."""
    raw = np.indices(as_shape(dimensions), requested_dtype(dtype, "indices"), sparse)
    if sparse:
        return tuple(new_array(np.array(r, copy=True)) for r in raw)
    return new_array(raw)


def vander(x: Any, N: Any = None, increasing: bool = False) -> Array:
    """The Vandermonde matrix: columns x**(N-1), ..., x, 1 (reversed with
    ``increasing``); differentiable in x."""
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = x.shape[0] if N is None else operator.index(N)
    powers = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    return power(reshape(x, (-1, 1)), new_array(powers.astype(
        x.dtype if x.dtype.kind in "iu" else np.int64)))


def _window(np_fn: Any, name: str) -> Any:
    def window(M: Any, *args: Any) -> Array:
        return _constant(np_fn(operator.index(M), *(_plain(a) for a in args)), None, None)
    window.__name__ = window.__qualname__ = name
    window.__doc__ = f"numpy.{name}: the window of M points (a constant)."
    return window


bartlett = _window(np.bartlett, "bartlett")
blackman = _window(np.blackman, "blackman")
hamming = _window(np.hamming, "hamming")
hanning = _window(np.hanning, "hanning")
kaiser = _window(np.kaiser, "kaiser")
