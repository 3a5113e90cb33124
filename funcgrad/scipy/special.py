"""funcgrad.scipy.special: differentiable versions of scipy.special functions.

Most functions are primitives (`funcgrad.primitives.special`, `.distributions`,
`.bessel`; logsumexp and log_softmax in `.reductions`) computed by scipy.special, which is
the ``scipy`` extra: erf, erfc, gammaln, digamma, polygamma, expit, xlogy, xlog1py,
gammainc, gammaincc and zeta also have pure-numpy kernels, the others raise an ImportError
naming the extra when called without scipy. The rest are composed from primitives and are
written to stay finite, values and gradients, for arguments of any size: logsumexp with
weights ``b`` shifts by the (non-differentiated) maximum, softplus is logaddexp(x, 0),
softmax is exp(log_softmax), rel_entr is xlogy(x, x / y).

Derivatives exist in every continuous argument except where noted: betainc and
betaincinv in a and b, stdtr and stdtrit in df, and the Bessel functions in their order v
raise NotImplementedError (as in JAX). gammainc/gammaincc are differentiable in a to every
order (JAX: the first), and zeta in x to every order.
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
from funcgrad.primitives.special import (beta, betaln, digamma, erf, erfc, erfcinv, erfinv,
                                         expit, gamma, gammaln, gammasgn, rgamma, spence,
                                         xlog1py, xlogy)
from funcgrad.primitives.special import polygamma as _polygamma, zeta as _zeta
from funcgrad.primitives.distributions import (betainc, betaincinv, gammaincc,
                                               gammaincinv, log_ndtr, ndtri, stdtr, stdtrit)
from funcgrad.primitives.distributions import gammainc as _gammainc
from funcgrad.primitives.bessel import i0, i0e, i1, i1e, iv, ive, j0, j1, jv, y0, y1, yv

__all__ = ["erf", "erfc", "erfinv", "erfcinv", "ndtr", "ndtri", "log_ndtr", "gamma",
           "gammaln", "gammasgn", "rgamma", "gammainc", "gammaincc", "gammaincinv", "beta",
           "betaln", "betainc", "betaincinv", "digamma", "psi", "polygamma", "multigammaln",
           "zeta", "i0", "i0e", "i1", "i1e", "iv", "ive", "j0", "j1", "jn", "jv", "y0", "y1",
           "yn", "yv", "stdtr", "stdtrit", "expit", "logit", "log_expit", "softplus",
           "logsumexp", "softmax", "log_softmax", "xlogy", "xlog1py", "entr", "rel_entr",
           "kl_div", "spence", "sinc", "factorial"]

psi = digamma
jn = jv
yn = yv
sinc = fnp.sinc  # scipy.special.sinc is numpy's


def _integer_orders(name: str, n: Any) -> None:
    if not np.issubdtype(fnp.asarray(n).dtype, np.integer):
        raise TypeError(f"{name}: n must be an integer or an integer array, got {n!r}; "
                        "the order of a derivative is a whole number")


def polygamma(n: Any, x: Any) -> Array:
    """The n-th derivative of digamma at x, for integer n >= 0 (scalar or array)."""
    _integer_orders("polygamma", n)
    return _polygamma(n, x)


def gammainc(a: Any, x: Any) -> Array:
    """The regularised lower incomplete gamma function P(a, x); differentiable in x and,
    to every order, in a."""
    return _gammainc(a, x, order=0)


def zeta(x: Any, q: Any = None) -> Array:
    """The Hurwitz zeta function sum_n (n + q)^-x; Riemann's (also for x < 1) when q is
    None. Differentiable in x (to every order) and in q."""
    return _zeta(x, 1.0 if q is None else q, order=0)


def multigammaln(a: Any, d: int) -> Array:
    """The log of the multivariate gamma function of dimension d: d (d - 1) / 4 log(pi) +
    sum_j gammaln(a - j / 2), j = 0 .. d - 1 (scipy's domain check included)."""
    if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d <= 0:
        raise ValueError(f"d should be a positive integer (dimension), got {d!r}")
    a = fnp.asarray(a)
    if bool(fnp.any(stop_gradient(a) <= 0.5 * (d - 1))):
        raise ValueError(f"condition a ({stop_gradient(a)}) > 0.5 * (d-1) ({0.5 * (d - 1)}) "
                         "not met")
    offsets = fnp.asarray(np.arange(d) * 0.5)
    terms = gammaln(fnp.expand_dims(a, -1) - offsets)
    return fnp.sum(terms, axis=-1) + d * (d - 1) / 4 * math.log(math.pi)


def factorial(n: Any, exact: bool = False) -> Array:
    """gamma(n + 1), 0 for n < 0 (scipy's convention); only ``exact=False``."""
    if exact:
        raise NotImplementedError("factorial: exact=True computes Python integers, which "
                                  "are not differentiable; use exact=False")
    n = fnp.asarray(n)
    return fnp.where(n < 0, 0.0, gamma(fnp.where(n < 0, 0.0, n) + 1))


def ndtr(x: Any) -> Array:
    """The standard normal CDF: erfc(-x / sqrt(2)) / 2."""
    return erfc(fnp.negative(x) * (1 / math.sqrt(2))) * 0.5


def logit(x: Any) -> Array:
    """log(x / (1 - x)), as log(x) - log1p(-x)."""
    return fnp.log(x) - fnp.log1p(fnp.negative(x))


def log_expit(x: Any) -> Array:
    """log(expit(x)) = -softplus(-x), finite for any x."""
    return fnp.negative(softplus(fnp.negative(x)))


def softplus(x: Any) -> Array:
    """log(1 + exp(x)) without overflow: logaddexp(x, 0); its gradient is expit(x)."""
    return fnp.logaddexp(x, 0)


def entr(x: Any) -> Array:
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0."""
    x = fnp.asarray(x)
    inside = fnp.where(x < 0, 1.0, x)  # no NaN of log(x < 0) in the derivative
    return fnp.where(x < 0, -np.inf, fnp.negative(xlogy(inside, inside)))


def rel_entr(x: Any, y: Any) -> Array:
    """x log(x / y) for x, y > 0; 0 where x == 0 and y >= 0; inf elsewhere."""
    x, y = fnp.asarray(x), fnp.asarray(y)
    both = (x > 0) & (y > 0)
    value = xlogy(x, fnp.where(both, x, 1.0) / fnp.where(both, y, 1.0))
    return fnp.where(both, value, fnp.where((x == 0) & (y >= 0), 0.0, np.inf))


def kl_div(x: Any, y: Any) -> Array:
    """x log(x / y) - x + y for x, y > 0; y where x == 0 and y >= 0; inf elsewhere."""
    x, y = fnp.asarray(x), fnp.asarray(y)
    inside = ((x > 0) & (y > 0)) | ((x == 0) & (y >= 0))
    return fnp.where(inside, rel_entr(x, y) - x + y, np.inf)


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
