"""Comparisons of whole arrays and numpy's numerical helpers: isclose, allclose,
array_equal, array_equiv, diff, ediff1d, gradient, trapezoid, cross, convolve, correlate,
interp, unwrap.

The helpers are compositions of slicing, arithmetic and gathers, so they are
differentiable in every floating argument: ``gradient`` and ``trapezoid`` also in the
sample coordinates, ``interp`` in x, xp and fp, ``convolve`` in both signals.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from funcgrad._promotion import INEXACT
from funcgrad.array import Array
from funcgrad.numpy._creation import asarray, astype, full, promote_dtypes
from funcgrad.numpy._elementwise import (abs, clip, conj, equal, isfinite, isnan, less,
                                         less_equal, logical_and, logical_or, mod, not_equal,
                                         where)
from funcgrad.numpy._indexing import getitem, take
from funcgrad.numpy._reductions import all, axis_index, cumsum, normalize_axis_tuple, sum
from funcgrad.numpy._shape import (broadcast_arrays, broadcast_to, concatenate, flip,
                                   moveaxis, pad, ravel, reshape, stack)
from funcgrad.numpy._sorting import searchsorted

__all__ = ["isclose", "allclose", "array_equal", "array_equiv", "diff", "ediff1d",
           "gradient", "trapezoid", "cross", "convolve", "correlate", "interp", "unwrap"]


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Array:
    """Whether ``|a - b| <= atol + rtol * |b|`` elementwise; infinities are close only to
    themselves, NaNs to nothing (to each other with ``equal_nan``)."""
    a, b = promote_dtypes(a, b, rule=INEXACT)
    with np.errstate(invalid="ignore"):
        finite = logical_and(isfinite(a), isfinite(b))
        close = less_equal(abs(a - b), atol + rtol * abs(b))
        out = where(finite, close, equal(a, b))
        if equal_nan:
            out = logical_or(out, logical_and(isnan(a), isnan(b)))
    return out


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether every pair of elements is `isclose`."""
    return bool(all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    """Whether the arrays have one shape and equal elements."""
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return False
    same = equal(a1, a2)
    if equal_nan and a1.dtype.kind in "fc" and a2.dtype.kind in "fc":
        same = logical_or(same, logical_and(isnan(a1), isnan(a2)))
    return bool(all(same))


def array_equiv(a1: Any, a2: Any) -> bool:
    """Whether the arrays broadcast together and are equal elementwise."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return False
    return bool(all(equal(a1, a2)))


# -- differences and derivatives of samples ---------------------------------------------------

def _along(x: Array, axis: int, start: Any, stop: Any) -> Array:
    return getitem(x, (slice(None),) * axis + (slice(start, stop),))


def _edge(value: Any, like: Array, axis: int) -> Array:
    """A prepend/append value broadcast to like's shape with length 1 along axis (an
    array keeps its length)."""
    v = asarray(value)
    if v.ndim == 0:
        shape = like.shape[:axis] + (1,) + like.shape[axis + 1:]
        return broadcast_to(v, shape)
    return v


def diff(a: Any, n: Any = 1, axis: Any = -1, prepend: Any = None,
         append: Any = None) -> Array:
    """The n-th discrete difference ``a[1:] - a[:-1]`` along ``axis`` (``not_equal`` for
    booleans), after adding ``prepend``/``append`` to the ends."""
    a = asarray(a)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis_tuple(axis, a.ndim)[0]
    parts = [_edge(p, a, axis) for p in (prepend,) if p is not None] + [a] + [
        _edge(p, a, axis) for p in (append,) if p is not None]
    if len(parts) > 1:
        a = concatenate(promote_dtypes(*parts), axis)
    for _ in range(n):
        hi, lo = _along(a, axis, 1, None), _along(a, axis, None, -1)
        a = not_equal(hi, lo) if a.dtype == np.bool_ else hi - lo
    return a


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Array:
    """The differences of the flattened array, with ``to_begin``/``to_end`` around them."""
    d = diff(ravel(asarray(ary)))
    parts = [ravel(asarray(p)) for p in (to_begin,) if p is not None] + [d] + [
        ravel(asarray(p)) for p in (to_end,) if p is not None]
    return concatenate([astype(p, d.dtype) for p in parts]) if len(parts) > 1 else d


def _spacings(f: Array, axes: tuple, varargs: Sequence) -> list:
    """One spacing per axis: a scalar step or a coordinate Array (numpy's rules)."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    out = []
    for ax, h in zip(axes, varargs):
        if np.ndim(h) == 0:
            out.append(h)
            continue
        h = asarray(h)
        if h.ndim != 1:
            raise ValueError("distances must be either scalars or 1d")
        if h.shape[0] != f.shape[ax]:
            raise ValueError("when 1d, distances must match the length of the "
                             "corresponding dimension")
        out.append(h)
    return out


def _line(v: Array, ndim: int, axis: int) -> Array:
    """A 1-D Array shaped to broadcast along ``axis`` of an ndim-dimensional array."""
    return reshape(v, tuple(-1 if i == axis else 1 for i in range(ndim)))


def _gradient_axis(f: Array, axis: int, h: Any, edge_order: int) -> Array:
    """numpy's second-order accurate central differences, one- or two-sided edges."""
    s = lambda start, stop=None: _along(f, axis, start, stop)  # noqa: E731
    if isinstance(h, Array):
        dx = diff(h)
        d1, d2 = _line(dx[:-1], f.ndim, axis), _line(dx[1:], f.ndim, axis)
        interior = (-d2 / (d1 * (d1 + d2)) * s(None, -2) + (d2 - d1) / (d1 * d2) *
                    s(1, -1) + d1 / (d2 * (d1 + d2)) * s(2))
        first, last = _edges_nonuniform(f, axis, dx, edge_order)
    else:
        interior = (s(2) - s(None, -2)) / (2.0 * h)
        if edge_order == 1:
            first, last = (s(1, 2) - s(0, 1)) / h, (s(-1) - s(-2, -1)) / h
        else:
            first = (-1.5 * s(0, 1) + 2.0 * s(1, 2) - 0.5 * s(2, 3)) / h
            last = (0.5 * s(-3, -2) - 2.0 * s(-2, -1) + 1.5 * s(-1)) / h
    return concatenate([first, interior, last], axis)


def _edges_nonuniform(f: Array, axis: int, dx: Array, edge_order: int) -> tuple:
    s = lambda start, stop=None: _along(f, axis, start, stop)  # noqa: E731
    if edge_order == 1:
        return (s(1, 2) - s(0, 1)) / dx[0], (s(-1) - s(-2, -1)) / dx[-1]
    a1, a2 = dx[0], dx[1]
    first = (-(2.0 * a1 + a2) / (a1 * (a1 + a2)) * s(0, 1) + (a1 + a2) / (a1 * a2) *
             s(1, 2) - a1 / (a2 * (a1 + a2)) * s(2, 3))
    b1, b2 = dx[-2], dx[-1]
    last = (b2 / (b1 * (b1 + b2)) * s(-3, -2) - (b2 + b1) / (b1 * b2) * s(-2, -1) +
            (2.0 * b2 + b1) / (b2 * (b1 + b2)) * s(-1))
    return first, last


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """The gradient of sampled values ``f``: central differences inside, one-sided ones
    (first or second order, ``edge_order``) at the boundaries; spacings are scalars or
    coordinate arrays, one per axis. One Array per axis (a tuple for several)."""
    f, = promote_dtypes(f, rule=INEXACT)
    axes = tuple(range(f.ndim)) if axis is None else normalize_axis_tuple(axis, f.ndim)
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    out = []
    for ax, h in zip(axes, _spacings(f, axes, varargs)):
        if f.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        out.append(_gradient_axis(f, ax, h, edge_order))
    return out[0] if len(out) == 1 and (axis is None or np.ndim(axis) == 0) else tuple(out)


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: Any = -1) -> Array:
    """The integral of sampled values by the trapezoidal rule, at coordinates ``x`` (or
    spacing ``dx``)."""
    y, *xs = promote_dtypes(y, *(() if x is None else (x,)), rule=INEXACT)
    x = xs[0] if xs else None
    axis = normalize_axis_tuple(axis, y.ndim)[0]
    mid = (_along(y, axis, 1, None) + _along(y, axis, None, -1)) / 2.0
    if x is None:
        return sum(mid, axis) * dx
    d = diff(x) if x.ndim == 1 else diff(x, axis=axis)
    if d.ndim == 1:
        d = _line(d, y.ndim, axis)
    return sum(d * mid, axis)


# -- products of vectors and signals ---------------------------------------------------------

def cross(a: Any, b: Any, axisa: Any = -1, axisb: Any = -1, axisc: Any = -1,
          axis: Any = None) -> Array:
    """The cross product of (arrays of) 3-vectors, or the z component for 2-vectors."""
    a, b = asarray(a), asarray(b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, normalize_axis_tuple(axisa, a.ndim, "axisa")[0], -1)
    b = moveaxis(b, normalize_axis_tuple(axisb, b.ndim, "axisb")[0], -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 "
                         "or 3)")
    ax = [getitem(a, (Ellipsis, i)) for i in range(na)] + [0] * (3 - na)
    bx = [getitem(b, (Ellipsis, i)) for i in range(nb)] + [0] * (3 - nb)
    z = ax[0] * bx[1] - ax[1] * bx[0]
    if na == 2 and nb == 2:
        return asarray(z)
    comps = broadcast_arrays(ax[1] * bx[2] - ax[2] * bx[1], ax[2] * bx[0] - ax[0] * bx[2], z)
    out = stack(comps, -1)
    return moveaxis(out, -1, normalize_axis_tuple(axisc, out.ndim, "axisc")[0])


def convolve(a: Any, v: Any, mode: str = "full") -> Array:
    """The discrete linear convolution of two 1-D signals; ``mode`` 'full' (length
    n + m - 1), 'same' (max(n, m), centred) or 'valid' (where they overlap fully).
    Differentiable in both (a sum of shifted copies of the longer signal)."""
    a, v = (ravel(x) for x in promote_dtypes(a, v, rule=INEXACT))
    if a.size == 0 or v.size == 0:
        raise ValueError("v cannot be empty" if v.size == 0 else "a cannot be empty")
    if v.size > a.size:
        a, v = v, a
    n, m = a.size, v.size
    total = None
    for j in range(m):  # out[k] += v[j] * a[k - j]
        term = pad(a, ((j, m - 1 - j),)) * getitem(v, j)
        total = term if total is None else total + term
    if mode == "full":
        return total
    if mode == "same":
        start = (m - 1) // 2
        return total[start:start + n]
    if mode == "valid":
        return total[m - 1:n]
    raise ValueError(f"mode must be one of 'full', 'same', or 'valid' (got {mode!r})")


def correlate(a: Any, v: Any, mode: str = "valid") -> Array:
    """The cross-correlation ``c[k] = sum_n a[n + k] conj(v[n])`` of two 1-D signals."""
    a, v = ravel(asarray(a)), ravel(asarray(v))
    if v.size > a.size:
        return conj(flip(correlate(v, a, mode)))
    return convolve(a, conj(flip(v)), mode)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Array:
    """Piecewise-linear interpolation of the points (xp, fp) (xp increasing) at x; beyond
    the ends ``left``/``right`` (default fp[0], fp[-1]); ``period`` wraps x and xp."""
    (x, xp), (fp,) = promote_dtypes(x, xp, rule=INEXACT), promote_dtypes(fp, rule=INEXACT)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError("Data points must be 1-D sequences")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError("fp and xp are not of the same length")
    if xp.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        return _periodic_interp(x, xp, fp, period)
    if xp.shape[0] == 1:
        y = broadcast_to(fp[0], x.shape)
    else:
        # the segment of each x, in funcgrad ops (no host read: it works under jit, vmap)
        k = clip(searchsorted(xp, x, side="right") - 1, 0, xp.shape[0] - 2)
        x0, x1, f0, f1 = take(xp, k), take(xp, k + 1), take(fp, k), take(fp, k + 1)
        slope = (f1 - f0) / (x1 - x0)
        # exactly fp[-1] at the last point, with the last segment's slope (as at the first)
        y = where(equal(x, xp[-1]), f1 + (x - x1) * slope, f0 + (x - x0) * slope)
    y = where(less(xp[-1], x), fp[-1] if right is None else right, y)
    return where(less(x, xp[0]), fp[0] if left is None else left, y)


def _periodic_interp(x: Array, xp: Array, fp: Array, period: Any) -> Array:
    if period == 0:
        raise ValueError("period must be a non-zero value")
    period = math.fabs(float(period))
    x = mod(x, period)
    xp = mod(xp, period)
    order = np.argsort(np.asarray(xp.concrete().to_numpy()), kind="stable")
    xp, fp = take(xp, order), take(fp, order)
    xp = concatenate([xp[-1:] - period, xp, xp[0:1] + period])
    fp = concatenate([fp[-1:], fp, fp[0:1]])
    return interp(x, xp, fp)


def unwrap(p: Any, discont: Any = None, axis: Any = -1, *,
           period: float = 2 * math.pi) -> Array:
    """Phases ``p`` with jumps larger than ``discont`` (default period / 2) along ``axis``
    replaced by their complement modulo ``period``."""
    p = asarray(p)
    axis = axis_index(axis)
    discont = period / 2 if discont is None else discont
    dd = diff(p, axis=axis)
    half = period / 2
    if p.dtype.kind in "iu" and float(period).is_integer():
        half = int(half)  # integer phases stay integers (numpy)
        ddmod = mod(dd + half, int(period)) - half
        boundary = int(period) % 2 == 0
    else:
        ddmod = mod(dd + half, period) - half
        boundary = True
    if boundary:
        ddmod = where(logical_and(equal(ddmod, -half), less(0, dd)), half, ddmod)
    correct = where(less(abs(dd), discont), 0, ddmod - dd)
    ax = normalize_axis_tuple(axis, p.ndim)[0]
    zero = full(tuple(1 if i == ax else n for i, n in enumerate(p.shape)), 0,
                correct.dtype)
    return p + concatenate([zero, cumsum(correct, ax)], ax)

