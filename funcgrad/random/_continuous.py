"""Continuous distributions from uniform bits: uniform, normal and the inverse-CDF family.

Each is JAX's construction, step for step, with XLA's roundings where they differ from
numpy's (`fma`, `xla_log`, `xla_log1p`, `erf_inv` from funcgrad.primitives.random), so the
draws are JAX's. Parameters (minval/maxval, lower/upper) differentiate: the draws are
ordinary funcgrad expressions of them.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.primitives.random import bitcast_convert_type, erf_inv, fma, xla_log, xla_log1p
from funcgrad.primitives.special import erf

from ._keys import check_prng_key, random_bits, split_data
from ._util import (as_dtype, broadcast_to_rank, canonical_shape, check_shape, default_uint,
                    float_dtype, next_after, shape_of)

_SQRT2 = np.sqrt(2)


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Uniform random bits as unsigned ints of ``dtype`` (default uint64; uint32 with x64
    disabled)."""
    data, _ = check_prng_key("bits", key)
    dtype = default_uint() if dtype is None else np.dtype(dtype)
    if dtype.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return random_bits(data, dtype.itemsize * 8, canonical_shape(shape))


def uniform_data(data: Array, shape: tuple, dtype: np.dtype, minval: Any = 0.0,
                 maxval: Any = 1.0) -> Array:
    """Uniform floats in [minval, maxval): random mantissa bits under the exponent of 1.0
    give a float in [1, 2); minus one, times (maxval - minval), plus minval (one fused
    multiply-add, as XLA computes it), and at least minval."""
    info = np.finfo(dtype)
    check_shape("uniform", shape, shape_of(minval), shape_of(maxval))
    unsigned = np.dtype(f"uint{info.bits}")
    raw = random_bits(data, info.bits, shape)
    one = np.array(1.0, dtype).view(unsigned)
    mantissa = fnp.bitwise_or(fnp.right_shift(raw, unsigned.type(info.bits - info.nmant)), one)
    floats = bitcast_convert_type(mantissa, new_dtype=dtype) - dtype.type(1)
    lo = broadcast_to_rank(as_dtype(minval, dtype), len(shape))
    hi = broadcast_to_rank(as_dtype(maxval, dtype), len(shape))
    return fnp.maximum(lo, fma(floats, hi - lo, lo))


def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Array:
    """Uniform floats in [minval, maxval), differentiable in minval and maxval."""
    data, _ = check_prng_key("uniform", key)
    dtype = float_dtype("uniform", dtype)
    return uniform_data(data, canonical_shape(shape), dtype, minval, maxval)


def _normal_real(data: Array, shape: tuple, dtype: np.dtype) -> Array:
    lo = np.nextafter(dtype.type(-1), dtype.type(0))
    u = uniform_data(data, shape, dtype, lo, 1.0)
    return dtype.type(_SQRT2) * erf_inv(u)


def normal_data(data: Array, shape: tuple, dtype: np.dtype) -> Array:
    """sqrt(2) erf_inv(u), u uniform in (-1, 1); complex: (re + i im) / sqrt(2) from two
    split keys."""
    if dtype.kind != "c":
        return _normal_real(data, shape, dtype)
    real = np.dtype(np.zeros(0, dtype).real.dtype)
    keys = split_data(data, (2,))
    re = fnp.astype(_normal_real(keys[0], shape, real), dtype)
    im = fnp.astype(_normal_real(keys[1], shape, real), dtype)
    return (re + 1j * im) / dtype.type(_SQRT2)


def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard normal floats (real or complex) of ``shape``."""
    data, _ = check_prng_key("normal", key)
    dtype = float_dtype("normal", dtype, "fc", "a float or complex")
    return normal_data(data, canonical_shape(shape), dtype)


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None,
                     dtype: Any = None) -> Array:
    """Standard normal floats conditioned on lower < x < upper: the normal quantile of a
    uniform between the bounds' CDF values (differentiable in lower and upper)."""
    shape = None if shape is None else canonical_shape(shape)
    data, _ = check_prng_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    if shape is None:
        shape = np.broadcast_shapes(shape_of(lower), shape_of(upper))
    else:
        check_shape("truncated_normal", shape, shape_of(lower), shape_of(upper))
    sqrt2 = dtype.type(_SQRT2)
    lower, upper = as_dtype(lower, dtype), as_dtype(upper, dtype)
    u = uniform_data(data, tuple(shape), dtype, erf(lower / sqrt2), erf(upper / sqrt2))
    out = sqrt2 * erf_inv(u)
    # rounding (or drawing u at the lower bound) must not leave the open interval
    return fnp.clip(out, next_after(lower, up=True), next_after(upper, up=False))


def _unit_draws(name: str, key: Any, shape: Any, dtype: Any, minval: Any = 0.0) -> Array:
    data, _ = check_prng_key(name, key)
    dtype = float_dtype(name, dtype)
    minval = minval(np.finfo(dtype)) if callable(minval) else minval
    return uniform_data(data, canonical_shape(shape), dtype, minval, 1.0)


def exponential(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Exponential(1) floats: -log(1 - u)."""
    return -xla_log1p(-_unit_draws("exponential", key, shape, dtype))


def laplace(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Laplace(0, 1) floats: sign(u) log(1 - |u|) for u uniform in (-1, 1)."""
    u = _unit_draws("laplace", key, shape, dtype, lambda info: -1.0 + info.epsneg)
    return fnp.sign(u) * xla_log1p(-fnp.abs(u))


def logistic(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Logistic(0, 1) floats: log(u) - log(1 - u)."""
    u = _unit_draws("logistic", key, shape, dtype, lambda info: info.tiny)
    return xla_log(u) - xla_log1p(-u)


def cauchy(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard Cauchy floats: tan(pi (u - 1/2))."""
    u = _unit_draws("cauchy", key, shape, dtype, lambda info: info.eps)
    return fnp.tan(u.dtype.type(np.pi) * (u - u.dtype.type(0.5)))


def _count_leading_zeros(x: Array) -> Array:
    """clz of uint32 values by halving the search window five times."""
    n = fnp.zeros_like(x)
    y = x
    for step in (16, 8, 4, 2, 1):
        high_clear = y < np.uint32(1 << (32 - step))
        n = fnp.where(high_clear, n + np.uint32(step), n)
        y = fnp.where(high_clear, fnp.left_shift(y, np.uint32(step)), y)
    return fnp.where(x == 0, np.uint32(32), n)


def _shift(x: Array, count: Array, left: bool) -> Array:
    """x shifted by ``count`` (uint32); counts of 32 or more give 0, as in XLA."""
    safe = fnp.minimum(count, np.uint32(31))
    moved = fnp.left_shift(x, safe) if left else fnp.right_shift(x, safe)
    return fnp.where(count >= 32, np.uint32(0), moved)


def _safe_int_to_float(hi: Array, lo: Array) -> Array:
    """The 64-bit fixed-point fraction (hi, lo) / 2**64 as float32 in (0, 1), with all of
    its leading zeros turned into exponent (JAX's `_safe_int_to_float`)."""
    info = np.finfo(np.float32)
    hi_clz, lo_clz = _count_leading_zeros(hi), _count_leading_zeros(lo)
    low_part = fnp.where(hi_clz == 32, _shift(lo, lo_clz, True),
                         _shift(lo, np.uint32(32) - hi_clz, False))
    mantissa = fnp.bitwise_or(_shift(hi, hi_clz, True), low_part)
    mantissa = fnp.right_shift(mantissa, np.uint32(info.bits - info.nmant - 1))
    mantissa = fnp.bitwise_and(mantissa, np.uint32((1 << info.nmant) - 1))
    zeros = fnp.where(hi_clz == 32, np.uint32(32) + lo_clz, hi_clz)
    exponent = fnp.left_shift(np.uint32(-info.minexp) - zeros, np.uint32(info.nmant))
    exponent = fnp.bitwise_and(exponent, np.uint32((1 << (info.bits - 2)) -
                                                   (1 << (info.nmant - 1))))
    return bitcast_convert_type(fnp.bitwise_or(exponent, mantissa),
                                new_dtype=np.dtype(np.float32))


def _gumbel_highest(data: Array, shape: tuple) -> Array:
    """float32 Gumbel from 64 random bits per draw: the smaller of u and 1 - u, whichever
    keeps more precision, through log1p or log."""
    raw = random_bits(data, 32, (2,) + shape)
    neg = fnp.invert(raw)
    carry = fnp.astype(neg[1] == np.uint32(0xFFFFFFFF), np.uint32)
    neg = neg + fnp.stack([carry, fnp.ones_like(carry)])  # 1 - u in 64-bit fixed point
    flip = raw[0] < np.uint32(1 << 31)
    chosen = fnp.where(flip, raw, neg)
    x = _safe_int_to_float(chosen[0], chosen[1])
    return fnp.where(flip, -xla_log(-xla_log1p(-x)), -xla_log(-xla_log(x)))


def gumbel_data(data: Array, shape: tuple, dtype: np.dtype, mode: str) -> Array:
    info = np.finfo(dtype)
    if dtype == np.float32 and mode == "highest":
        return _gumbel_highest(data, shape)
    if mode in ("high", "highest"):
        pair = uniform_data(data, (2,) + shape, dtype)
        high, low = pair[0], pair[1]
        x = fnp.where(high >= 0.5, high, high + dtype.type(2.0 ** -info.nmant) * low +
                      dtype.type(info.tiny))
        return -xla_log(-xla_log1p(-x))
    return -xla_log(-xla_log(uniform_data(data, shape, dtype, info.tiny, 1.0)))


def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None,
           mode: str | None = None) -> Array:
    """Standard Gumbel floats: -log(-log(u)). ``mode`` "high" spends twice the bits to
    reach further into the tail (and "highest", for float32, uses 64 bits per draw)."""
    data, _ = check_prng_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    shape = canonical_shape(shape)
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
    return gumbel_data(data, shape, dtype, mode)
