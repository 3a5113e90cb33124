"""The CDFs of the common distributions and their inverses: incomplete gamma and beta
functions, Student's t, the normal's log-CDF and quantile.

| primitive           | derivative                                                    |
|---------------------|---------------------------------------------------------------|
| gammainc(a, x)      | x: the gamma density p(a, x) = x^(a-1) e^-x / gamma(a);       |
|   (order k in a)    | a: gammainc(order=k+1) (Taylor kernel); x at order k:         |
|                     | d^k/da^k p(a, x) = p * Bell_k(log x - psi(a), -psi'(a), ...)  |
| gammaincc(a, x)     | the negatives of gammainc's                                   |
| gammaincinv(a, p)   | p: 1 / p(a, out); a: -dP/da / p(a, out) (implicit function)   |
| betainc(a, b, x)    | x: x^(a-1) (1-x)^(b-1) / B(a, b); a, b: not implemented (JAX) |
| betaincinv(a, b, y) | y: 1 / that density at out                                    |
| stdtr(df, t)        | t: Student's t density; df: not implemented                   |
| stdtrit(df, p)      | p: 1 / the density at out                                     |
| ndtri               | sqrt(2 pi) exp(out^2 / 2)                                     |
| log_ndtr            | exp(-x^2 / 2 - out) / sqrt(2 pi): the ratio of density and    |
|                     | CDF, finite in both tails                                     |

The derivative of P(a, x) in a has no closed form: `kernels.special.gammainc_taylor`
evaluates the series (x < a + 1) or continued fraction that computes P in truncated-Taylor
arithmetic in a, which gives every order (JAX's igamma_grad_a gives the first).
"""
from __future__ import annotations

import math
from typing import Any

from funcgrad.core import Primitive
from . import sampling
from .elementwise import exp, log, log1p, unary
from .kernels import special as K
from .samplers import special as samples
from .special import (_impl, backend_impl, betaln, digamma, float_dtype, gammaln,
                      not_implemented, polygamma, xlog1py, xlogy)
from .batching import broadcasting
from .promotion import INEXACT_OPS

_SQRT_2PI = math.sqrt(2 * math.pi)
_NOT_IN_JAX = " (JAX does not differentiate it there either)"


def _declare(name: str, impl: Any, inputs: tuple, rules: tuple, sample: Any,
             doc: str) -> Primitive:
    """A primitive whose VJP rules (one per input) serve as its JVP rules too."""
    p = Primitive(name, impl, inputs, sample=sample, doc=doc, promote=INEXACT_OPS)
    p.defvjp(*rules)
    p.defjvp(*rules)
    return p


def _gamma_log_density(a: Any, x: Any) -> Any:
    return xlogy(a - 1, x) - x - gammaln(a)


def _gamma_density_derivative(a: Any, x: Any, order: int) -> Any:
    """d^order/da^order of x^(a-1) e^-x / gamma(a): exp(E) times the complete Bell
    polynomial of E's a-derivatives E' = log x - psi(a), E^(j) = -psi^(j-1)(a)."""
    density = exp(_gamma_log_density(a, x))
    if order == 0:
        return density
    slopes = [log(x) - digamma(a)] + [-polygamma(j - 1, a) for j in range(2, order + 1)]
    bell = [1.0]
    for n in range(order):
        bell.append(sum(math.comb(n, i) * bell[n - i] * slopes[i] for i in range(n + 1)))
    return density * bell[order]


def _gammainc_impl(a: Any, x: Any, order: int) -> Any:
    if order == 0:
        return backend_impl("gammainc", lambda a, x: K.gammainc_taylor(a, x, 0))(a, x)
    return K.gammainc_taylor(a, x, order).astype(float_dtype((a, x)), copy=False)


gammainc = Primitive("gammainc", _gammainc_impl, ("a", "x"), ("order",), promote=INEXACT_OPS,
                     sample=sampling.custom(samples.gammainc_cases),
                     doc="The regularised lower incomplete gamma P(a, x), or its order-th "
                         "derivative in a.")
gammainc.defvjp(lambda g, a, x, order: g * gammainc(a, x, order=order + 1),
                lambda g, a, x, order: g * _gamma_density_derivative(a, x, order))
gammainc.defjvp(lambda t, a, x, order: t * gammainc(a, x, order=order + 1),
                lambda t, a, x, order: t * _gamma_density_derivative(a, x, order))

gammaincc = _declare(
    "gammaincc", backend_impl("gammaincc", lambda a, x: 1 - K.gammainc_taylor(a, x, 0)),
    ("a", "x"), (lambda g, a, x: -g * gammainc(a, x, order=1),
                 lambda g, a, x: -g * exp(_gamma_log_density(a, x))),
    samples.with_prim(samples.gamma_pair_cases),
    "The regularised upper incomplete gamma Q(a, x) = 1 - P(a, x).")


def _gammaincinv_da(g: Any, a: Any, out: Any) -> Any:
    return -g * gammainc(a, out, order=1) * exp(-_gamma_log_density(a, out))


gammaincinv = _declare(
    "gammaincinv", _impl("gammaincinv"), ("a", "p"),
    (_gammaincinv_da, lambda g, a, out: g * exp(-_gamma_log_density(a, out))),
    samples.with_prim(samples.gammaincinv_cases), "x with gammainc(a, x) = p.")


def _beta_log_density(a: Any, b: Any, x: Any) -> Any:
    return xlogy(a - 1, x) + xlog1py(b - 1, -x) - betaln(a, b)


betainc = _declare(
    "betainc", _impl("betainc"), ("a", "b", "x"),
    (not_implemented("betainc", "a", _NOT_IN_JAX),
     not_implemented("betainc", "b", _NOT_IN_JAX),
     lambda g, a, b, x: g * exp(_beta_log_density(a, b, x))),
    samples.fixed_leading(2, (0.8, 4.0), (0.1, 0.9)),
    "The regularised incomplete beta function I_x(a, b).")
betaincinv = _declare(
    "betaincinv", _impl("betaincinv"), ("a", "b", "y"),
    (not_implemented("betaincinv", "a", _NOT_IN_JAX),
     not_implemented("betaincinv", "b", _NOT_IN_JAX),
     lambda g, a, b, out: g * exp(-_beta_log_density(a, b, out))),
    samples.fixed_leading(2, (0.8, 4.0), (0.1, 0.9)), "x with betainc(a, b, x) = y.")


def student_log_density(df: Any, t: Any) -> Any:
    """log of Student's t density with ``df`` degrees of freedom."""
    half = (df + 1) * 0.5
    return (gammaln(half) - gammaln(df * 0.5) - 0.5 * log(df * math.pi)
            - half * log1p(t * t / df))


stdtr = _declare(
    "stdtr", _impl("stdtr"), ("df", "t"),
    (not_implemented("stdtr", "df"), lambda g, df, t: g * exp(student_log_density(df, t))),
    samples.fixed_leading(1, (1.5, 8.0), (-3.0, 3.0)),
    "The CDF of Student's t distribution with df degrees of freedom.")
stdtrit = _declare(
    "stdtrit", _impl("stdtrit"), ("df", "p"),
    (not_implemented("stdtrit", "df"),
     lambda g, df, out: g * exp(-student_log_density(df, out))),
    samples.fixed_leading(1, (1.5, 8.0), (0.1, 0.9)), "t with stdtr(df, t) = p.")

ndtri = unary("ndtri", _impl("ndtri"),
              lambda g, out: g * _SQRT_2PI * exp(out * out * 0.5), domain=(0.05, 0.95),
              complex_=False)
log_ndtr = unary("log_ndtr", _impl("log_ndtr"),
                 lambda g, x, out: g * exp(-x * x * 0.5 - out) / _SQRT_2PI, domain=(-4.0, 4.0),
                 complex_=False)

__all__ = ["gammainc", "gammaincc", "gammaincinv", "betainc", "betaincinv", "stdtr",
           "stdtrit", "ndtri", "log_ndtr", "student_log_density"]


# -- batching rules (vmap): see funcgrad.primitives.batching ------------------------------
for _p in (gammainc, gammaincc, gammaincinv, betainc, betaincinv, stdtr, stdtrit, ndtri,
           log_ndtr):
    broadcasting(_p)
