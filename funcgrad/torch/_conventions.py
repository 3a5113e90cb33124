"""PyTorch's derivatives at kinks, ties, zeros and NaN, composed of funcgrad functions.

funcgrad's primitives follow JAX where a function is not differentiable (``maximum``
splits ties 0.5/0.5 and gives NaN nothing, ``clip`` is a maximum then a minimum, a norm's
square root has an infinite slope at 0). PyTorch chose differently in several places, and
a PyTorch program must get PyTorch's gradients. This module composes funcgrad functions
(``where`` selections, masked safe arguments, `stop_gradient`) whose *values* are the
plain function's and whose *derivatives*, by the rules of the pieces, are PyTorch's:

| function            | PyTorch's convention                                            |
|---------------------|-----------------------------------------------------------------|
| clamp (min, max)    | 1 for lo <= x <= hi (bounds included), 0 elsewhere and at NaN;  |
|                     | min gets it where x < min < max, max where x > max or max < min |
| hardtanh            | 1 strictly inside (lo < x < hi) and at NaN, 0 at the bounds     |
| maximum / minimum   | 0.5 each at ties, 1 to both where either is NaN                 |
| atan2               | 0 where y**2 + x**2 == 0 (the origin)                           |
| abs, sign           | sign(NaN) = 0, so abs has the gradient 0 at NaN (a factor 0)    |
| angle (real x)      | pi for x < 0, 0 for x >= 0 (-0 too), NaN at NaN; gradient 0     |
| std, 2-norms        | 0 where the result is 0 (sqrt's infinite slope masked)          |
| max() / min()       | evenly among the NaNs if there are any, else among the ties     |
| max(dim) / min(dim) | all to the index returned (the first extreme, or first NaN)     |
| vector norms        | 0 where the norm is 0; for p < 1 also 0 at zero entries         |
| remainder           | an exact multiple gives the zero of x's sign (C's fmod's; numpy |
|                     | gives y's): -3 % 0.5 is -0.0, 2 % -1 is 0.0                     |

Every function here is differentiable again (the pieces' rules are funcgrad ops). Each
takes and returns funcgrad arrays and is usable from functional code as it is.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.dtypes import LOW_FLOATS
from funcgrad.primitives.control import stop_gradient

__all__ = ["clamp", "clamp_inside", "hardtanh", "abs", "sign", "angle", "maximum",
           "minimum", "atan2", "remainder", "extreme_all", "extreme_along", "vector_norm",
           "sqrt_at_zero"]


def clamp(x: Any, lo: Any = None, hi: Any = None) -> Any:
    """``min(max(x, lo), hi)`` (either bound may be None) with PyTorch's gradients."""
    out = stop_gradient(fnp.clip(x, lo, hi))  # NaN, equal bounds: the value, no gradient
    inside = None
    if lo is not None:
        inside = fnp.greater_equal(x, lo)
        to_lo = fnp.less(x, lo) if hi is None else fnp.logical_and(fnp.less(x, lo),
                                                                   fnp.less(lo, hi))
        out = fnp.where(to_lo, lo, out)
    if hi is not None:
        below_hi = fnp.less_equal(x, hi)
        inside = below_hi if inside is None else fnp.logical_and(inside, below_hi)
        if lo is None:
            out = fnp.where(fnp.greater(x, hi), hi, out)
        else:  # max < min: max wins, even over a NaN x, which still makes the value NaN
            to_hi = fnp.logical_or(fnp.greater(x, hi), fnp.less(hi, lo))
            nan_of_x = stop_gradient(fnp.where(fnp.isnan(x), x, 0))
            out = fnp.where(to_hi, fnp.add(hi, nan_of_x), out)
    return out if inside is None else fnp.where(inside, x, out)


def clamp_inside(x: Any, lo: float, hi: float) -> Any:
    """x limited to [lo, hi] with the gradient 1 inside and at the bounds, 0 outside (the
    clamp of ``logit(x, eps)``)."""
    return fnp.where(fnp.less(x, lo), lo, fnp.where(fnp.greater(x, hi), hi, x))


def _nan_free(x: Any) -> tuple:
    """``(isnan(x), x with NaN replaced by 0)``: a function applied to the second has no
    NaN in its derivative, which a where on the first then keeps out."""
    nan = fnp.isnan(x)
    return nan, fnp.where(nan, 0, x)


def sign(x: Any) -> Any:
    """-1, 0 or 1; 0 at NaN (PyTorch's sign; numpy's is NaN there)."""
    if not np.issubdtype(fnp.asarray(x).dtype, np.floating):
        return fnp.sign(x)
    return fnp.sign(_nan_free(x)[1])


def abs(x: Any) -> Any:  # noqa: A001 - PyTorch's name
    """|x| whose gradient is sign(x): 0 at 0 and at NaN, a factor (as PyTorch's
    ``grad * sgn(x)``: a NaN or infinite cotangent at NaN still gives NaN)."""
    if not np.issubdtype(fnp.asarray(x).dtype, np.floating):
        return fnp.abs(x)
    nan, clean = _nan_free(x)
    return fnp.where(nan, fnp.multiply(x, 0), fnp.abs(clean))


def angle(x: Any) -> Any:
    """The argument of x: pi for negative reals, 0 otherwise, NaN at NaN (derivative 0);
    atan2(imag, real) for complex x."""
    if np.iscomplexobj(fnp.asarray(x)):
        return fnp.angle(x)
    negative = fnp.astype(fnp.multiply(fnp.less(x, 0), math.pi), x.dtype)
    return stop_gradient(fnp.where(fnp.isnan(x), x, negative))


def sqrt_at_zero(a: Any) -> Any:
    """sqrt(a) for a >= 0 (NaN stays NaN), with the gradient 0 where a == 0."""
    return _masked_power(a, 0.5, 0)


def hardtanh(x: Any, lo: float, hi: float) -> Any:
    """``clamp(x, lo, hi)`` whose gradient is 1 only strictly inside (and at NaN)."""
    return fnp.where(fnp.less_equal(x, lo), lo, fnp.where(fnp.greater_equal(x, hi), hi, x))


def _select_larger(x: Any, y: Any, x_wins: Any, y_wins: Any) -> Any:
    """x where ``x_wins``, y where ``y_wins``; elsewhere a tie (0.5 to each) or a NaN pair
    (1 to each: their sum is NaN). The sums only ever add a zero, so no inf - inf."""
    tie = fnp.equal(x, y)
    half = fnp.add(fnp.multiply(x, 0.5), fnp.multiply(fnp.where(tie, y, 0), 0.5))
    nan_pair = fnp.logical_or(fnp.isnan(x), fnp.isnan(y))
    both = fnp.add(x, fnp.where(nan_pair, y, 0))
    return fnp.where(x_wins, x, fnp.where(y_wins, y, fnp.where(tie, half, both)))


def maximum(x: Any, y: Any) -> Any:
    """The elementwise maximum (NaN propagates) with PyTorch's gradients."""
    if not _inexact(x, y):
        return fnp.maximum(x, y)
    return _select_larger(x, y, fnp.greater(x, y), fnp.less(x, y))


def minimum(x: Any, y: Any) -> Any:
    """The elementwise minimum (NaN propagates) with PyTorch's gradients."""
    if not _inexact(x, y):
        return fnp.minimum(x, y)
    return _select_larger(x, y, fnp.less(x, y), fnp.greater(x, y))


def remainder(x: Any, y: Any) -> Any:
    """x - floor(x / y) y with the sign of y, and PyTorch's signed zero at exact multiples
    (x's sign, as C's fmod); the derivatives are numpy's remainder's (1, -x // y). The
    zeros are built as m - m or -(m - m) of the remainder m: additive zeros lose a sign."""
    m = fnp.remainder(x, y)
    if not _inexact(x, y):
        return m
    positive_zero = fnp.subtract(m, stop_gradient(m))
    zero_of_x = fnp.where(fnp.signbit(x), fnp.negative(fnp.subtract(stop_gradient(m), m)),
                          positive_zero)
    return fnp.where(fnp.equal(m, 0), zero_of_x, m)


def _inexact(*xs: Any) -> bool:
    return any(np.issubdtype(fnp.asarray(a).dtype, np.inexact) for a in xs)


def atan2(y: Any, x: Any) -> Any:
    """``arctan2(y, x)`` whose gradient is 0 where y**2 + x**2 is 0 (PyTorch's masked
    reciprocal) instead of NaN."""
    origin = fnp.equal(fnp.add(fnp.multiply(y, y), fnp.multiply(x, x)), 0)
    safe = fnp.arctan2(fnp.where(origin, 1, y), fnp.where(origin, 1, x))
    return fnp.where(origin, stop_gradient(fnp.arctan2(y, x)), safe)


def extreme_all(x: Any, largest: bool) -> Any:
    """``max(x)`` / ``min(x)`` over all elements: NaN if there is one, and the gradient
    evenly among the NaNs; otherwise evenly among the tied extremes."""
    nan = fnp.isnan(x)
    reduce = fnp.max if largest else fnp.min
    clean = reduce(fnp.where(nan, 0, x))
    count = fnp.astype(fnp.maximum(fnp.sum(nan), 1), x.dtype)
    nans = fnp.true_divide(fnp.sum(fnp.where(nan, x, 0)), count)
    return fnp.where(fnp.any(nan), nans, clean)


def extreme_along(x: Any, axis: int | None, keepdims: bool, largest: bool) -> tuple:
    """``(values, indices)`` of ``max(x, dim)`` / ``min(x, dim)``: the first extreme (or
    first NaN) along ``axis``, which alone gets the gradient. ``axis`` None: a 0-d x."""
    if axis is None:
        return x, fnp.zeros((), np.int64)
    arg = fnp.argmax if largest else fnp.argmin
    idx = arg(x, axis=axis, keepdims=True)
    values = fnp.take_along_axis(x, idx, axis=axis)
    if not keepdims:
        values, idx = fnp.squeeze(values, axis), fnp.squeeze(idx, axis)
    return values, idx


def _masked_power(a: Any, p: float, fill: float) -> Any:
    """``a ** p`` for a >= 0 (NaN stays NaN), ``fill`` where a == 0, with gradient 0 at
    the zeros."""
    zero = fnp.equal(a, 0)
    return fnp.where(zero, fill, fnp.power(fnp.where(zero, 1, a), p))


def _extreme_magnitude(a: Any, largest: bool, axis: tuple | None, keepdims: bool) -> Any:
    """max |x| (or min): the gradient shared among the tied entries, and 0 for a group
    holding a NaN (whose value is NaN)."""
    reduce = fnp.max if largest else fnp.min
    nan, clean = _nan_free(a)
    with_nan = fnp.any(nan, axis=axis, keepdims=keepdims)
    return fnp.where(with_nan, stop_gradient(reduce(a, axis=axis, keepdims=keepdims)),
                     reduce(clean, axis=axis, keepdims=keepdims))


def vector_norm(x: Any, ord: Any, axis: tuple | None, keepdims: bool) -> Any:
    """The ``ord``-norm over ``axis`` (None: all) with PyTorch's subgradients: 0 where the
    norm is 0 (and, for ord < 1, at zero entries); inf/-inf norms share among ties and 1
    is |x|'s sign, as the pieces' own rules give."""
    if isinstance(ord, str) or ord is None:
        raise RuntimeError(f"linalg.vector_norm: Expected a numeric order, but got {ord!r}")
    shape = fnp.shape(x)
    reduced = range(len(shape)) if axis is None else axis
    if (ord < 0 or ord == math.inf) and any(shape[d] == 0 for d in reduced):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty "
                           "tensor because the operation does not have an identity")
    if x.dtype in LOW_FLOATS:  # PyTorch accumulates 16-bit norms in float32, rounds once
        return fnp.astype(vector_norm(fnp.astype(x, np.float32), ord, axis, keepdims),
                          x.dtype)
    a = fnp.abs(x)
    if ord == 1:  # sign(x): 0 at 0 and, as PyTorch's sgn, at NaN
        return fnp.sum(a if np.iscomplexobj(x) else abs(x), axis=axis, keepdims=keepdims)
    if ord in (math.inf, -math.inf):
        return _extreme_magnitude(a if np.iscomplexobj(x) else abs(x), ord > 0, axis,
                                  keepdims)
    if ord == 0:
        return stop_gradient(fnp.astype(fnp.sum(fnp.not_equal(a, 0), axis=axis,
                                                keepdims=keepdims), a.dtype))
    if ord == 2:  # real or complex: |x|**2 without the square root of |x|
        squares = fnp.real(fnp.multiply(x, fnp.conj(x))) if np.iscomplexobj(x) else \
            fnp.multiply(x, x)
        total = fnp.sum(squares, axis=axis, keepdims=keepdims)
        return _masked_power(total, 0.5, 0)
    # a zero entry adds 0 to the sum of |x|**p for p > 0 and makes it inf for p < 0
    total = fnp.sum(_masked_power(a, ord, math.inf if ord < 0 else 0), axis=axis,
                    keepdims=keepdims)
    return _masked_power(total, 1.0 / ord, math.inf if ord < 0 else 0)
