"""funcgrad.scipy.special: differentiable versions of scipy.special functions.

erf, erfc, gammaln, digamma (psi), polygamma and expit are primitives (see
`funcgrad.primitives.special`; scipy is used when installed, a pure-numpy fallback
otherwise), and so are logsumexp and log_softmax (`funcgrad.primitives.reductions`). The
rest are composed from primitives and are written to stay finite, values and gradients, for
arguments of any size: logsumexp with weights ``b`` shifts by the (non-differentiated)
maximum, softplus is logaddexp(x, 0), softmax is exp(log_softmax).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.primitives import reductions as P
from funcgrad.array import Array
from funcgrad.numpy._reductions import normalize_axis_tuple
from funcgrad.primitives.control import stop_gradient
from funcgrad.primitives.special import digamma, erf, erfc, expit, gammaln
from funcgrad.primitives.special import polygamma as _polygamma

__all__ = ["erf", "erfc", "ndtr", "gammaln", "digamma", "psi", "polygamma", "expit",
           "logit", "softplus", "logsumexp", "softmax", "log_softmax", "xlogy", "xlog1py"]

psi = digamma


def polygamma(n: Any, x: Any) -> Array:
    """The n-th derivative of digamma at x, for integer n >= 0 (scalar or array)."""
    if not np.issubdtype(fnp.asarray(n).dtype, np.integer):
        raise TypeError(f"polygamma: n must be an integer or an integer array, got {n!r}; "
                        "the order of a derivative is a whole number")
    return _polygamma(n, x)


def ndtr(x: Any) -> Array:
    """The standard normal CDF: erfc(-x / sqrt(2)) / 2."""
    return erfc(fnp.negative(x) * (1 / math.sqrt(2))) * 0.5


def logit(x: Any) -> Array:
    """log(x / (1 - x)), as log(x) - log1p(-x)."""
    return fnp.log(x) - fnp.log1p(fnp.negative(x))


def softplus(x: Any) -> Array:
    """log(1 + exp(x)) without overflow: logaddexp(x, 0); its gradient is expit(x)."""
    return fnp.logaddexp(x, 0)


def xlogy(x: Any, y: Any) -> Array:
    """x log(y), and 0 where x == 0 (even where y == 0); the gradient in y is x/y there
    too, so it is 0 where x == 0 (JAX)."""
    return _x_times(fnp.log, x, y)


def xlog1py(x: Any, y: Any) -> Array:
    """x log1p(y), and 0 where x == 0."""
    return _x_times(fnp.log1p, x, y)


def _x_times(f: Any, x: Any, y: Any) -> Array:
    zero = fnp.equal(x, 0)
    safe_y = fnp.where(zero, 1, y)
    return fnp.where(zero, 0, fnp.multiply(x, f(safe_y)))


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False) -> Any:
    """log(sum(b * exp(a))) over ``axis``, computed as m + log(sum(b * exp(a - m))) with
    m the maximum of a (not differentiated: it cancels out), so no exp overflows.

    With ``b`` the sum may be negative: it is nan unless ``return_sign``, which returns
    (log|sum|, sign of sum)."""
    a = fnp.asarray(a)
    if b is None and not return_sign:  # the common case is a primitive of its own
        return P.logsumexp(a, axis=_axes(axis, a.ndim), keepdims=bool(keepdims))
    peak: Any = 0  # an empty a sums to 0 whatever the shift
    if a.size:
        peak = fnp.max(stop_gradient(a), axis=axis, keepdims=True)  # a constant: untraced
        peak = fnp.where(fnp.isfinite(peak), peak, 0)  # all -inf: log(0) + 0 = -inf
    terms = fnp.exp(a - peak)
    total = fnp.sum(terms if b is None else terms * b, axis=axis, keepdims=keepdims)
    if not keepdims and a.size:
        peak = fnp.squeeze(peak, tuple(range(a.ndim)) if axis is None else axis)
    if not return_sign:
        return fnp.log(total) + peak
    return fnp.log(fnp.abs(total)) + peak, stop_gradient(fnp.sign(total))


def _axes(axis: Any, ndim: int) -> tuple:
    return tuple(range(ndim)) if axis is None else normalize_axis_tuple(axis, ndim)


def softmax(x: Any, axis: Any = None) -> Array:
    """exp(x) / sum(exp(x)) over ``axis`` (all axes for None), via logsumexp."""
    return fnp.exp(log_softmax(x, axis))


def log_softmax(x: Any, axis: Any = None) -> Array:
    """x - logsumexp(x) over ``axis`` (all axes for None): finite for any finite x."""
    x = fnp.asarray(x)
    return P.log_softmax(x, axis=_axes(axis, x.ndim))
