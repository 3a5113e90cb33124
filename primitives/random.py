"""The primitives of `funcgrad.random`: the Threefry hash, the float operations whose rounding
JAX's numbers depend on, and the rejection samplers.

Everything else in funcgrad.random is a composition of these and of ordinary primitives, so
random draws trace, batch and differentiate like any other funcgrad code.

| primitive              | computes                                 | derivative               |
|------------------------|------------------------------------------|--------------------------|
| threefry2x32           | the Threefry-2x32 hash (uint32 words)    | none                     |
| bitcast_convert_type   | the same bits read as another dtype      | none                     |
| fma                    | x * y + z rounded once (XLA's fusion)    | g y, g x, g              |
| xla_log, xla_log1p     | log, log1p as XLA's CPU backend rounds   | g / x, g / (1 + x)       |
| xla_exp                | exp as XLA's CPU backend rounds it       | g out                    |
| erf_inv                | Giles' inverse error function (JAX's)    | g sqrt(pi)/2 exp(out^2)  |
| random_gamma           | Gamma(a) draws (Marsaglia-Tsang)         | none (see below)         |
| random_gamma_cdf       | P(a, x), the gamma CDF                   | none                     |
| random_gamma_quantile  | the x with P(a, x) = u, from a guess     | implicit, see below      |
| random_poisson         | Knuth / Hormann Poisson counts           | none                     |

Gamma draws differentiate by implicit reparameterisation (Figurnov et al., "Implicit
Reparameterization Gradients", 2018), as JAX's do: a draw x of Gamma(a) is read as the
quantile of its own probability u = P(a, x), so dx/da = -(dP/da) / (dP/dx) with u held
fixed. `funcgrad.random.gamma` therefore passes the draw through `random_gamma_quantile(a,
u, guess=x)`, whose value is x itself (Newton's method starts at the root) and whose rules
are that implicit derivative. dP/da has no closed form; the rules integrate it with the
quadrature the kernel uses for P (`kernels.random_rejection.GAMMA_CDF_NODES`), in funcgrad
ops, so they differentiate again. Unlike a rule attached to the sampler, this is an honest
function of (a, u): its derivatives are those of the quantile function, which is what the
registry's finite-difference tests check.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad.array import new_array
from funcgrad.core import ZERO, Primitive
from . import sampling
from .binary import greater, minimum, where
from .control import device_put
from .elementwise import abs, exp, expm1, log, sqrt, unary
from .kernels import random as K, random_rejection as R
from .reductions import reduce_sum
from .samplers import random as S
from .shape import reshape
from .special import digamma, gammaln


def _threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple:
    dtypes = [np.asarray(a).dtype if not hasattr(a, "dtype") else a.dtype
              for a in (k1, k2, x1, x2)]
    if any(d != np.uint32 for d in dtypes):
        raise TypeError(f"Arguments to threefry2x32 must have uint32 type, got "
                        f"{[str(d) for d in dtypes]}")
    return K.threefry2x32(k1, k2, x1, x2)


threefry2x32 = Primitive(
    "threefry2x32", _threefry2x32, ("k1", "k2", "x1", "x2"), multiple_results=True,
    differentiable=False,
    doc="The Threefry-2x32 hash: (y1, y2) of the uint32 counter words (x1, x2) under the "
        "key (k1, k2), all broadcast together.")


def _bitcast(x: Any, new_dtype: np.dtype) -> Any:
    new_dtype = np.dtype(new_dtype)
    if np.dtype(x.dtype).itemsize != new_dtype.itemsize:
        raise TypeError(f"bitcast_convert_type: {x.dtype} and {new_dtype} differ in width "
                        f"({np.dtype(x.dtype).itemsize} and {new_dtype.itemsize} bytes); "
                        "only same-width bitcasts are supported")
    return x.view(new_dtype)


bitcast_convert_type = Primitive(
    "bitcast_convert_type", _bitcast, params=("new_dtype",), differentiable=False,
    doc="x's bits read as new_dtype (of the same width), as lax.bitcast_convert_type.")

fma = Primitive("fma", K.fma, ("x", "y", "z"),
                sample=sampling.elementwise(3, complex_=False),
                doc="x * y + z with one rounding, as XLA's CPU backend contracts it.")
fma.defvjp(lambda g, y: g * y, lambda g, x: g * x, lambda g: g)
fma.defjvp(lambda t, y: t * y, lambda t, x: t * x, lambda t: t)

xla_log = unary("xla_log", K.xla_log, lambda g, x: g / x, domain=(0.1, 2.0), complex_=False,
                doc="The natural log, rounded as XLA's CPU backend rounds it.")
xla_log1p = unary("xla_log1p", K.xla_log1p, lambda g, x: g / (x + 1), domain=(-0.5, 2.0),
                  complex_=False, doc="log(1 + x), rounded as XLA's CPU backend rounds it.")
xla_exp = unary("xla_exp", K.xla_exp, lambda g, out: g * out, complex_=False,
                doc="exp, rounded as XLA's CPU backend rounds it.")

_HALF_SQRT_PI = math.sqrt(math.pi) / 2
erf_inv = unary("erf_inv", K.erf_inv, lambda g, out: g * _HALF_SQRT_PI * xla_exp(out * out),
                domain=(-0.9, 0.9), complex_=False,
                doc="The inverse error function, Giles' approximation as JAX computes it.")


# -- gamma ------------------------------------------------------------------------------

random_gamma = Primitive(
    "random_gamma", lambda keys, a, log_space: R.gamma(keys, a, log_space), ("keys", "a"),
    ("log_space",), differentiable=False,
    doc="Gamma(a) draws (their logs when log_space), element i from keys[i] "
        "(uint32[*a.shape, 2]), by JAX's Marsaglia-Tsang loop.")

random_gamma_cdf = Primitive(
    "random_gamma_cdf", lambda a, log_x: R.gamma_cdf(a, log_x, gammaln.impl),
    ("a", "log_x"), differentiable=False,
    doc="P(a, x) = the regularised lower incomplete gamma function at x = exp(log_x).")


def _constant(raw: np.ndarray, like: Any) -> Any:
    """A host constant on the device of ``like`` (cupy arrays do not mix with numpy's)."""
    return raw if like.device == "cpu" else device_put(new_array(raw), device=like.device)


def _expand(v: Any) -> Any:
    return reshape(v, shape=tuple(v.shape) + (1,))


def _dlog_x_da(a: Any, log_x: Any, x: Any) -> Any:
    """d log(x) / da along P(a, x) = const: -(dP/da) / (x dP/dx), by the tail quadrature of
    the kernel (lower tail where x <= a, upper above). Divided by the density, each tail's
    derivative is s sum_i w_i (log x + sigma w_i - digamma(a)) exp(a sigma w_i - x
    expm1(sigma w_i)) with w_i = s v_i, sigma = -1 (lower) or +1 (upper)."""
    dtype = np.dtype(a.dtype)
    nodes, weights = (_constant(n.astype(dtype), a) for n in R.GAMMA_CDF_NODES)
    sigma = where(greater(x, a), dtype.type(1), dtype.type(-1))
    s = 1 / (abs(a - x) + sqrt(x))
    sw = _expand(sigma * s) * nodes
    cap = dtype.type(0.95 * np.log(np.finfo(dtype).max))
    f = exp(_expand(a) * sw - _expand(x) * expm1(minimum(sw, cap)))
    terms = weights * (_expand(log_x - digamma(a)) + sw) * f
    return sigma * s * reduce_sum(terms, axis=(terms.ndim - 1,), keepdims=False)


def _quantile_parts(a: Any, out: Any, log_space: bool) -> tuple:
    """(d out / da, d out / du) of the quantile at its value ``out``; 0 where a draw has
    underflowed to x = 0."""
    if log_space:
        log_x, x, positive = out, exp(out), None
    else:
        positive = greater(out, 0)
        x = where(positive, out, 1)
        log_x = log(x)
    d_da = _dlog_x_da(a, log_x, x)
    d_du = exp(x + gammaln(a) - a * log_x)  # 1 / (x dP/dx)
    if log_space:
        return d_da, d_du
    return where(positive, x * d_da, 0), where(positive, x * d_du, 0)


random_gamma_quantile = Primitive(
    "random_gamma_quantile",
    lambda a, u, guess, log_space: R.gamma_quantile(a, u, guess, log_space, gammaln.impl),
    ("a", "u", "guess"), ("log_space",), sample=S.gamma_quantile_cases,
    doc="The x with P(a, x) = u (log x when log_space), found from guess; guess itself "
        "when P(a, guess) == u.")
random_gamma_quantile.defvjp(
    lambda g, a, out, log_space: g * _quantile_parts(a, out, log_space)[0],
    lambda g, a, out, log_space: g * _quantile_parts(a, out, log_space)[1], ZERO)
random_gamma_quantile.defjvp(
    lambda t, a, out, log_space: t * _quantile_parts(a, out, log_space)[0],
    lambda t, a, out, log_space: t * _quantile_parts(a, out, log_space)[1], ZERO)

random_poisson = Primitive(
    "random_poisson", lambda key, lam: R.poisson(key, lam, gammaln.impl), ("key", "lam"),
    differentiable=False,
    doc="Poisson(lam) counts (int64) for float32 lam from one key (uint32[2], or a key per "
        "index of lam's leading axes: uint32[*lead, 2]), by JAX's "
        "Knuth (lam < 10) and transformed-rejection (lam >= 10) loops.")

__all__ = ["threefry2x32", "bitcast_convert_type", "fma", "xla_log", "xla_log1p", "xla_exp",
           "erf_inv", "random_gamma", "random_gamma_cdf", "random_gamma_quantile",
           "random_poisson"]


# -- batching rules (vmap) ------------------------------------------------------------------
# (imported here: funcgrad.primitives.batching builds on the shape primitives)
from . import batching as B  # noqa: E402

# elementwise on their (broadcast) inputs: a batch of keys is a batch of counters' keys
for _p in (threefry2x32, bitcast_convert_type, fma, xla_log, xla_log1p, xla_exp, erf_inv,
           random_gamma_cdf, random_gamma_quantile):
    B.broadcasting(_p, same_shape=_p is threefry2x32)
B.leading(random_gamma, (1, 0))  # keys: one uint32 pair per element of a


def _batch_poisson(args: Any, dims: Any) -> tuple:
    """Each example's counts from its own key: the kernel takes a leading batch of keys
    (a shared key or lam broadcast to every example)."""
    (key, lam), (key_dim, lam_dim) = args, dims
    size = key.shape[key_dim] if key_dim is not None else lam.shape[lam_dim]
    return random_poisson(B.materialize(key, key_dim, size),
                          B.materialize(lam, lam_dim, size)), 0


random_poisson.defbatch(_batch_poisson)
