"""The gamma family: gamma, loggamma, beta, Student's t, chi-square, F, generalized normal.

A gamma draw is the `random_gamma` primitive (JAX's Marsaglia-Tsang loop, one key per
element); under a transform that differentiates ``a`` it is passed through
`random_gamma_quantile` at its own CDF value, which leaves the value unchanged and gives it
the implicit-reparameterisation derivative (see funcgrad.primitives.random). Everything
else here is built on gamma draws with funcgrad ops, so it differentiates too.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.core import Tracer
from funcgrad.primitives.control import stop_gradient
from funcgrad.primitives.random import (random_gamma, random_gamma_cdf,
                                        random_gamma_quantile, xla_exp)

from ._continuous import exponential, normal_data
from ._discrete import rademacher
from ._keys import check_prng_key, split_data
from ._util import (as_dtype, canonical_shape, check_all_safe_to_cast, check_broadcast_shapes,
                    check_shape, float_dtype, shape_of)


def gamma_data(data: Array, a: Any, shape: tuple | None, dtype: np.dtype,
               log_space: bool) -> Array:
    """Gamma(a) draws (their logs when ``log_space``) of ``shape`` (a's when None)."""
    if shape is None:
        shape = shape_of(a)
    else:
        check_shape("gamma", shape, shape_of(a))
    a = fnp.broadcast_to(as_dtype(a, dtype), shape)
    keys = fnp.reshape(split_data(data, (a.size,)), tuple(shape) + (2,))
    draw = random_gamma(keys, a, log_space=log_space)
    if not isinstance(a, Tracer):
        return draw
    # the draw as the quantile of its own probability: same value, implicit derivative
    u = random_gamma_cdf(stop_gradient(a), draw if log_space else fnp.log(draw))
    return random_gamma_quantile(a, u, draw, log_space=log_space)


def _gamma(name: str, key: Any, a: Any, shape: Any, dtype: Any, log_space: bool) -> Array:
    data, _ = check_prng_key(name, key)
    dtype = float_dtype("gamma", dtype)
    shape = None if shape is None else canonical_shape(shape)
    return gamma_data(data, a, shape, dtype, log_space)


def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Gamma(a, 1) floats, differentiable in a (implicit reparameterisation)."""
    return _gamma("gamma", key, a, shape, dtype, log_space=False)


def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """log of Gamma(a, 1) draws, computed in log space (accurate for a << 1, where the
    draws themselves underflow)."""
    return _gamma("loggamma", key, a, shape, dtype, log_space=True)


def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None,
         dtype: Any = None) -> Array:
    """Beta(a, b) floats: G_a / (G_a + G_b) from two log-gamma draws, scaled by their
    maximum so that nothing underflows; differentiable in a and b."""
    data, _ = check_prng_key("beta", key)
    dtype = float_dtype("beta", dtype)
    check_all_safe_to_cast("beta", dtype, a, b)
    shape = check_broadcast_shapes("beta", shape, a, b)
    keys = split_data(data, (2,))
    a = fnp.broadcast_to(as_dtype(a, dtype), shape)
    b = fnp.broadcast_to(as_dtype(b, dtype), shape)
    log_a = gamma_data(keys[0], a, shape, dtype, log_space=True)
    log_b = gamma_data(keys[1], b, shape, dtype, log_space=True)
    log_max = fnp.maximum(log_a, log_b)
    scaled_a, scaled_b = xla_exp(log_a - log_max), xla_exp(log_b - log_max)
    return scaled_a / (scaled_a + scaled_b)


def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None,
              dtype: Any = None) -> Array:
    """Dirichlet(alpha) vectors along the last axis: the softmax of log-gamma draws."""
    data, _ = check_prng_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    alpha_shape = shape_of(alpha)
    if not len(alpha_shape) >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{len(alpha_shape)}")
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        shape = canonical_shape(shape)
        check_shape("dirichlet", shape, alpha_shape[:-1])
    log_g = gamma_data(data, as_dtype(alpha, dtype), tuple(shape) + alpha_shape[-1:], dtype,
                       log_space=True)
    weights = xla_exp(log_g - stop_gradient(fnp.max(log_g, axis=-1, keepdims=True)))
    return weights / fnp.sum(weights, axis=-1, keepdims=True)


def t(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Student's t floats with df degrees of freedom: N sqrt((df/2) / G(df/2))."""
    data, _ = check_prng_key("t", key)
    dtype = float_dtype("t", dtype)
    shape = check_broadcast_shapes("t", shape, df)
    check_all_safe_to_cast("t", dtype, df)
    keys = split_data(data, (2,))
    n = normal_data(keys[0], shape, dtype)
    half_df = as_dtype(df, dtype) / dtype.type(2)
    g = gamma_data(keys[1], half_df, shape, dtype, log_space=False)
    return n * fnp.sqrt(half_df / g)


def chisquare(key: Any, df: Any, shape: Sequence[int] | None = None,
              dtype: Any = None) -> Array:
    """Chi-square floats with df degrees of freedom: 2 G(df/2), drawn in log space."""
    data, _ = check_prng_key("chisquare", key)
    dtype = float_dtype("chisquare", dtype)
    shape = check_broadcast_shapes("chisquare", shape, df)
    check_all_safe_to_cast("chisquare", dtype, df)
    half_df = as_dtype(df, dtype) / dtype.type(2)
    return xla_exp(gamma_data(data, half_df, shape, dtype, log_space=True)) * dtype.type(2)


def f(key: Any, dfnum: Any, dfden: Any, shape: Sequence[int] | None = None,
      dtype: Any = None) -> Array:
    """F-distributed floats: (X1 / dfnum) / (X2 / dfden) for chi-square X1, X2, computed
    as (X1 dfden) / (dfnum X2), which is how XLA simplifies the quotient of quotients."""
    data, _ = check_prng_key("f", key)
    dtype = float_dtype("f", dtype)
    check_all_safe_to_cast("f", dtype, dfnum, dfden)
    shape = check_broadcast_shapes("f", shape, dfnum, dfden)
    dfnum, dfden = as_dtype(dfnum, dtype), as_dtype(dfden, dtype)
    key_den, key_num = split_data(data, (2,))
    num = chisquare(key_num, dfnum, shape, dtype)
    den = chisquare(key_den, dfden, shape, dtype)
    return (num * dfden) / (dfnum * den)


def generalized_normal(key: Any, p: float, shape: Sequence[int] = (),
                       dtype: Any = None) -> Array:
    """Floats with density proportional to exp(-|x|^p): +-G(1/p)^(1/p)."""
    shape = canonical_shape(shape)
    data, _ = check_prng_key("generalized_normal", key)
    dtype = float_dtype("generalized_normal", dtype)
    keys = split_data(data, (2,))
    g = gamma_data(keys[0], 1 / p, shape, dtype, log_space=False)
    r = rademacher(keys[1], shape, dtype)
    return r * g ** (1 / p)


def ball(key: Any, d: int, p: float = 2, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Points uniform in the unit L^p ball of R^d (Barthe et al., 2005): generalized
    normal coordinates over (sum |g_i|^p + E)^(1/p) for an exponential E."""
    shape = canonical_shape(shape)
    data, _ = check_prng_key("ball", key)
    dtype = float_dtype("ball", dtype)
    d = int(d)
    keys = split_data(data, (2,))
    g = generalized_normal(keys[0], p, (*shape, d), dtype)
    e = exponential(keys[1], shape, dtype)
    norm = (fnp.sum(fnp.abs(g) ** p, axis=-1) + e) ** (1 / p)
    return g / norm[..., None]


def pareto(key: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Pareto(b) floats on [1, inf): exp(E / b) for an exponential E."""
    data, _ = check_prng_key("pareto", key)
    dtype = float_dtype("pareto", dtype)
    shape = check_broadcast_shapes("pareto", shape, b)
    check_all_safe_to_cast("pareto", dtype, b)
    return xla_exp(exponential(data, shape, dtype) / as_dtype(b, dtype))


def lognormal(key: Any, sigma: Any = 1.0, shape: Sequence[int] | None = None,
              dtype: Any = None) -> Array:
    """exp(sigma N) floats."""
    data, _ = check_prng_key("lognormal", key)
    dtype = float_dtype("lognormal", dtype)
    shape = check_broadcast_shapes("lognormal", shape, sigma)
    return xla_exp(normal_data(data, shape, dtype) * as_dtype(sigma, dtype))


__all__ = ["gamma", "loggamma", "beta", "dirichlet", "t", "chisquare", "f",
           "generalized_normal", "ball", "pareto", "lognormal"]
