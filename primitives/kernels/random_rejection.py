"""Rejection samplers of `funcgrad.random` (gamma, poisson) and the gamma CDF behind gamma's
implicit reparameterisation.

JAX draws these with while loops whose trip counts depend on the draws, so each sampler is
one primitive whose kernel runs the loop to completion, vectorised: every element keeps its
own state and the loop body runs on the elements still looping. The arithmetic is JAX's
(`kernels.random` reproduces XLA's float operations), so the numbers are JAX's too.

- gamma: Marsaglia and Tsang, "A simple method for generating gamma variables" (ACM TOMS,
  2000), one independent key per element as JAX splits it; shapes a < 1 are boosted,
  Gamma(a) = Gamma(a + 1) U^(1/a), optionally in log space.
- poisson: Knuth's multiplication method below lam = 10 and Hormann's transformed rejection
  ("The transformed rejection method for generating Poisson random variables", 1993) above,
  both over the whole array with one key per round, as JAX does.
- the regularised lower incomplete gamma P(a, x) and its inverse in x (for the gradient of
  a gamma draw), by quadrature on a scale set by a and x, see `GAMMA_CDF_NODES`.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcgrad.backend import backend_of

from . import random as K

# -- gamma -----------------------------------------------------------------------------


def _accepted(X: Any, V: Any, U: Any, d: Any) -> Any:
    """Marsaglia-Tsang's acceptance test (the squeeze, then the exact test), with XLA's
    contractions of ``1 - 0.0331 X^2`` and ``X/2 + d (1 - V + log V)``."""
    dtype = X.dtype.type
    one = dtype(1)
    outside_squeeze = U >= K.fma(dtype(-0.0331), X * X, one)
    with np.errstate(divide="ignore", invalid="ignore"):
        rejected = K.xla_log(U) >= K.fma(d, (one - V) + K.xla_log(V), X * dtype(0.5))
    return ~(outside_squeeze & rejected)  # NaN accepts, as in JAX


def _marsaglia_tsang(keys: Any, d: Any, c: Any) -> Any:
    """V = (1 + c x)^3 of the first accepted normal x per element (keys: uint32[n, 2])."""
    dtype = d.dtype.type
    V = np.ones_like(d)
    todo = backend_of(d).xp.arange(d.shape[0])
    while todo.size:
        keys_t, x_keys, u_keys = np.moveaxis(K.split(keys[todo], 3), -2, 0)
        dt, ct = d[todo], c[todo]
        v = np.full_like(dt, dtype(-1))
        x = np.zeros_like(dt)
        again = backend_of(d).xp.arange(todo.size)
        while again.size:  # a normal with 1 + c x > 0
            x_keys_a, sub = np.moveaxis(K.split(x_keys[again], 2), -2, 0)
            x_keys[again] = x_keys_a
            x[again] = K.normal(sub, dt.dtype)
            v[again] = K.fma(x[again], ct[again], dtype(1))
            again = again[v[again] <= 0]
        X, Vt, U = x * x, v * v * v, K.uniform(u_keys, dt.dtype)
        done = _accepted(X, Vt, U, dt)
        V[todo[done]] = Vt[done]
        keys[todo] = keys_t
        todo = todo[~done]
    return V


def _rsqrt(d: Any) -> Any:
    """1 / sqrt(d), which XLA computes for the division ``(1/3) / sqrt(d)``: exactly
    rounded in float64; in float32 the CPU's approximate reciprocal square root plus a
    Newton step, which agrees with the exactly rounded value ~84% of the time and is not
    reproducible portably (the estimate differs between processors)."""
    if d.dtype == np.float64:
        return 1 / np.sqrt(d)
    return (1 / np.sqrt(d.astype(np.float64))).astype(d.dtype)


def gamma(keys: Any, a: Any, log_space: bool) -> Any:
    """Gamma(a) draws, one per element of ``a`` with key ``keys[i]`` (uint32[..., 2] with
    a's shape before the last axis); their logs when ``log_space``."""
    shape, dtype = a.shape, a.dtype.type
    a = a.reshape(-1)
    keys = keys.reshape(-1, 2)
    one = dtype(1)
    boost = a >= one
    shifted = np.where(boost, a, a + one)
    d = shifted - dtype(1 / 3)
    with np.errstate(invalid="ignore", divide="ignore"):
        c = dtype(1 / 3) * _rsqrt(d)
    keys, boost_keys = np.moveaxis(K.split(keys, 2), -2, 0)
    V = _marsaglia_tsang(keys.copy(), d, c)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if log_space:
            log_u = K.xla_log1p(-K.uniform(boost_keys, dtype))  # -Exponential()
            log_boost = np.where(boost | (log_u == 0), dtype(0), log_u * (one / a))
            out = (K.xla_log(d) + K.xla_log(V)) + log_boost
        else:
            u = one - K.uniform(boost_keys, dtype)
            out = d * V * np.where(boost, one, np.power(u, one / a))
            out = np.where(out < np.finfo(dtype).tiny, dtype(0), out)  # XLA flushes
    return out.reshape(shape)


# -- poisson ---------------------------------------------------------------------------


def _split2(key: Any) -> tuple:
    """(next key, subkey) of each key of uint32[..., 2]."""
    both = K.split(key, 2)
    return both[..., 0, :], both[..., 1, :]


def _per_key(key: Any, lam: Any) -> tuple:
    """The shape each key draws (lam's axes after the keys' leading ones) and how to
    broadcast a per-key flag over lam."""
    lead = key.ndim - 1
    return lam.shape[lead:], (slice(None),) * lead + (None,) * (lam.ndim - lead)


def _poisson_knuth(key: Any, lam: Any) -> Any:
    """The number of uniforms whose product stays above exp(-lam), minus one."""
    shape, _ = _per_key(key, lam)
    k = np.zeros_like(lam, dtype=np.int64)
    log_prod = np.zeros_like(lam)
    while (log_prod > -lam).any():
        key, sub = _split2(key)
        k = np.where(log_prod > -lam, k + 1, k)
        with np.errstate(divide="ignore"):
            log_prod = log_prod + K.xla_log(K.uniform(sub, np.float32, shape))
    return k - 1


def _poisson_rejection(key: Any, lam: Any, lgamma: Callable) -> Any:
    """Hormann's PTRS; every element is redrawn each round until all have been accepted at
    least once, and keeps its last accepted value (JAX's loop)."""
    f32 = np.float32
    log_lam = K.xla_log(lam)
    b = K.fma(f32(2.53), np.sqrt(lam), f32(0.931))
    a = K.fma(f32(0.02483), b, f32(-0.059))
    inv_alpha = f32(1.1239) + f32(1.1328) / (b - f32(3.4))
    v_r = f32(0.9277) - f32(3.6224) / (b - f32(2))
    shape, spread = _per_key(key, lam)
    k_out = np.full_like(lam, -1)
    accepted = np.zeros_like(lam, dtype=bool)
    while not accepted.all():
        # a key's draws end when all of its own elements have been accepted (a batch of
        # keys gives each key's results alone)
        running = ~accepted.reshape(accepted.shape[:key.ndim - 1] + (-1,)).all(-1)
        keys = K.split(key, 3)
        key, sub0, sub1 = keys[..., 0, :], keys[..., 1, :], keys[..., 2, :]
        u = K.uniform(sub0, f32, shape) - f32(0.5)
        v = K.uniform(sub1, f32, shape)
        us = f32(0.5) - np.abs(u)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            k = np.floor(K.fma(f32(2) * a / us + b, u, lam) + f32(0.43))
            s = K.xla_log(v * inv_alpha / (a / (us * us) + b))
            t = K.fma(k, log_lam, -lam) - lgamma(k + f32(1)).astype(f32)
        accept = ((us >= f32(0.07)) & (v <= v_r)) | (
            ~((k < 0) | ((us < f32(0.013)) & (v > us))) & (s <= t))
        accept &= running[spread]
        k_out = np.where(accept, k, k_out)
        accepted |= accept
    return k_out


def poisson(key: Any, lam: Any, lgamma: Callable) -> Any:
    """Poisson(lam) counts (int64) for float32 ``lam`` from one key (uint32[2]), or from
    a key per index of lam's leading axes (uint32[*lead, 2]: a batch of keys)."""
    knuth = np.isnan(lam) | (lam < 10)
    small = _poisson_knuth(key, np.where(knuth, lam, np.float32(0)))
    large = _poisson_rejection(key, np.where(knuth, np.float32(1e5), lam), lgamma)
    with np.errstate(invalid="ignore"):
        large = large.astype(np.int64)
    return np.where(lam == 0, 0, np.where(knuth, small, large))


# -- the gamma CDF and its inverse ------------------------------------------------------

def _exp_sinh_nodes(step: float, first: float, last: float) -> tuple:
    """Nodes and weights of the exp-sinh rule on [0, inf): v = exp(pi/2 sinh t) for t in
    [first, last] spaced by ``step`` (Takahasi and Mori's double-exponential quadrature)."""
    t = np.arange(first, last + step / 2, step)
    v = np.exp(np.pi / 2 * np.sinh(t))
    return v, step * np.pi / 2 * np.cosh(t) * v


GAMMA_CDF_NODES = _exp_sinh_nodes(0.06, -3.6, 1.85)
"""The quadrature of the gamma tails. With t = x e^(-w) (x <= a) or t = x e^w (x > a), each
tail of the Gamma(a) density becomes a log-concave function of w >= 0 that peaks at w = 0;
scaled by s = 1 / (|a - x| + sqrt(x)) (its slope and curvature there) its decay is between
exp(-v) and exp(-v^2/2), which 92 exp-sinh nodes integrate to ~1e-10 relative, for any a
and x. The derivative in a has the same form, which is what the gradient rule integrates."""


def _tail_integral(a: Any, log_x: Any, upper: Any, weight: Callable | None = None) -> Any:
    """s sum_i w_i h(w_i) exp(a sigma w_i - x expm1(sigma w_i)), sigma = +1 on the upper
    tail: the tail probability divided by the density factor exp(a log x - x - lgamma a)
    (``weight`` = None), or with h(w) = weight(sigma w) the corresponding integral of h."""
    v, q = (backend_of(a).xp.asarray(n, a.dtype) for n in GAMMA_CDF_NODES)
    x = np.exp(log_x)
    sigma = np.where(upper, a.dtype.type(1), a.dtype.type(-1))
    s = a.dtype.type(1) / (np.abs(a - x) + np.sqrt(x))
    sw = sigma[..., None] * (s[..., None] * v)
    cap = a.dtype.type(0.95 * np.log(np.finfo(a.dtype).max))
    with np.errstate(over="ignore", invalid="ignore"):
        f = np.exp(a[..., None] * sw - x[..., None] * np.expm1(np.minimum(sw, cap)))
    if weight is not None:
        f = f * weight(sw)
    return s * np.sum(q * f, axis=-1)


def gamma_cdf(a: Any, log_x: Any, lgamma: Callable) -> Any:
    """P(a, x), the regularised lower incomplete gamma function, at x = exp(log_x)."""
    a, log_x = np.broadcast_arrays(a, log_x)
    flat_a, flat_y = a.reshape(-1), log_x.reshape(-1)
    parts = [flat_a[:0]]
    for start in range(0, flat_a.size, 4096):  # bounded temporaries of (4096, 92)
        aa, yy = flat_a[start:start + 4096], flat_y[start:start + 4096]
        x = np.exp(yy)
        upper = x > aa
        with np.errstate(over="ignore", invalid="ignore"):
            density = np.exp(aa * yy - x - lgamma(aa).astype(aa.dtype))
            tail = density * _tail_integral(aa, yy, upper)
        parts.append(np.where(upper, 1 - tail, tail))
    out = np.concatenate(parts).reshape(a.shape)
    return np.where(np.isneginf(log_x), a.dtype.type(0), out)


def gamma_quantile(a: Any, u: Any, guess: Any, log_space: bool, lgamma: Callable) -> Any:
    """The x with P(a, x) = u (its log when ``log_space``), found by Newton's method in
    log x from ``guess`` (in the same form). Where P(a, guess) == u already, the result is
    ``guess`` itself, bit for bit: gamma draws pass themselves as the guess."""
    a, u, guess = np.broadcast_arrays(a, u, guess)
    y0 = guess if log_space else np.log(guess)
    y = y0.astype(a.dtype, copy=True)
    lg = lgamma(a).astype(a.dtype)
    for _ in range(200):
        r = gamma_cdf(a, y, lgamma) - u
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            slope = np.exp(a * y - np.exp(y) - lg)  # dP / dlog x
            step = np.where(r == 0, 0, np.clip(r / slope, -1, 1))
        step = np.where(np.isfinite(step), step, 0)
        y = y - step
        if not (np.abs(step) > 4 * np.finfo(a.dtype).eps * (1 + np.abs(y))).any():
            break
    if log_space:
        return y
    return np.where(y == y0, guess, guess * np.exp(y - y0))  # x = 0 stays 0
