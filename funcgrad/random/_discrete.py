"""Discrete draws: integers, Bernoulli and Rademacher variables, permutations, choices,
categorical and Poisson samples, each JAX's construction on funcgrad ops."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad._config import default_float, default_int
from funcgrad.array import Array
from funcgrad.primitives.random import random_poisson, xla_log

from ._continuous import gumbel_data, uniform_data
from ._keys import check_prng_key, on_device_of, random_bits, split_data
from ._util import (canonical_shape, check_shape, dtype_of, float_dtype,
                    normalize_axis, shape_of)

_UINT32_MAX = np.iinfo(np.uint32).max


# -- randint ------------------------------------------------------------------------------

def _rem(x: Array, span: Array) -> Array:
    """x % span with XLA's x % 0 == x (a span that wrapped to 0 spans everything)."""
    zero = span == 0
    return fnp.where(zero, x, fnp.remainder(x, fnp.where(zero, span.dtype.type(1), span)))


def _convert_and_clip_integer(val: Array, dtype: np.dtype) -> Array:
    """val in another integer dtype, clipped to the range both dtypes share (no wrapping)."""
    lo = max(np.iinfo(dtype).min, np.iinfo(val.dtype).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(val.dtype).max)
    return fnp.astype(fnp.clip(val, val.dtype.type(lo), val.dtype.type(hi)), dtype)


def _as_int_array(x: Any) -> Array:
    x = fnp.asarray(x)
    return x if x.dtype.kind in "iu" else fnp.astype(x, default_int())


def _randint(data: Array, minval: Any, maxval: Any, shape: tuple, dtype: np.dtype) -> Array:
    """minval + (random 2n-bit integer mod span), the 2n bits folded in as
    (high mod span) * (2**n mod span) + (low mod span): JAX's slightly biased modulus."""
    check_shape("randint", shape, shape_of(minval), shape_of(maxval))
    minval, maxval = _as_int_array(minval), _as_int_array(maxval)
    # dtype's largest value clipped into maxval's dtype
    dtype_max = maxval.dtype.type(min(np.iinfo(dtype).max, np.iinfo(maxval.dtype).max))
    maxval_out_of_range = maxval > dtype_max
    minval = _convert_and_clip_integer(minval, dtype)
    maxval = _convert_and_clip_integer(maxval, dtype)
    nbits = np.iinfo(dtype).bits
    unsigned = np.dtype(f"uint{nbits}")
    keys = split_data(data, (2,))
    higher, lower = random_bits(keys[0], nbits, shape), random_bits(keys[1], nbits, shape)
    with np.errstate(over="ignore"):  # spans and products wrap, as in XLA
        span = fnp.astype(maxval - minval, unsigned)
        span = fnp.where(maxval <= minval, unsigned.type(1), span)
        span = fnp.where(maxval_out_of_range & (maxval > minval), span + unsigned.type(1), span)
        multiplier = _rem(fnp.full_like(span, 2 ** (nbits // 2)), span)
        multiplier = _rem(multiplier * multiplier, span)
        offset = _rem(_rem(higher, span) * multiplier + _rem(lower, span), span)
        return minval + fnp.astype(offset, dtype)


def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any,
            dtype: Any = None) -> Array:
    """Integers in [minval, maxval) (default int64); narrower dtypes are drawn in 32 bits."""
    data, _ = check_prng_key("randint", key)
    dtype = default_int() if dtype is None else np.dtype(dtype)
    shape = canonical_shape(shape)
    if dtype.kind not in "iu":
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = np.iinfo(dtype)
    if info.bits < 32:  # sample in 32 bits to avoid a large bias
        minval = fnp.clip(fnp.astype(fnp.asarray(minval), np.int32), int(info.min), int(info.max))
        maxval = fnp.clip(fnp.astype(fnp.asarray(maxval), np.int32), int(info.min),
                          int(info.max) + 1)
        return fnp.astype(_randint(data, minval, maxval, shape, np.dtype(np.int32)), dtype)
    return _randint(data, minval, maxval, shape, dtype)


# -- Bernoulli and Rademacher --------------------------------------------------------------

def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None,
              mode: str = "low") -> Array:
    """Booleans that are True with probability p: u < p. ``mode="high"`` compares against
    two uniforms' worth of bits, for p below ~1e-7 (float32)."""
    if shape is not None:
        shape = canonical_shape(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    data, _ = check_prng_key("bernoulli", key)
    dtype = dtype_of(p)
    if dtype.kind != "f":
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    if shape is None:
        shape = shape_of(p)
    else:
        check_shape("bernoulli", shape, shape_of(p))
    if mode == "high":
        pair = uniform_data(data, (2, *shape), dtype)
        return pair[1] * dtype.type(2.0 ** -np.finfo(dtype).nmant) < p - pair[0]
    return uniform_data(data, tuple(shape), dtype) < p


def rademacher(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """-1 or +1 with equal probability (default int64)."""
    data, _ = check_prng_key("rademacher", key)
    dtype = default_int() if dtype is None else np.dtype(dtype)
    heads = fnp.astype(bernoulli(data, 0.5, canonical_shape(shape)), dtype)
    return fnp.astype(2 * heads - 1, dtype)


# -- permutations and choices -----------------------------------------------------------------

def _shuffle(data: Array, x: Array, axis: int) -> Array:
    """x stably sorted along ``axis`` by fresh 32-bit random keys, enough rounds that all
    sort keys are distinct with high probability (ceil(3 ln(size) / ln(2**32 - 1)))."""
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(_UINT32_MAX)))
    for _ in range(rounds):
        keys = split_data(data, (2,))
        data = keys[0]
        order = fnp.argsort(random_bits(keys[1], 32, tuple(x.shape)), axis=axis, kind="stable")
        x = fnp.take_along_axis(x, order, axis=axis)
    return x


def _check_arraylike(name: str, x: Any) -> None:
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at "
                        "position 0.")


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Array:
    """A random permutation of range(x) (integer x) or of x along ``axis``: the same
    permutation for every slice, or one per slice when ``independent``."""
    data, _ = check_prng_key("permutation", key)
    _check_arraylike("permutation", x)
    x = fnp.asarray(x)
    axis = normalize_axis(axis, x.ndim or 1)
    if not x.ndim:
        if x.dtype.kind not in "iu":
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _shuffle(data, on_device_of(np.arange(int(x)), data), axis)
    if independent or x.ndim == 1:
        return _shuffle(data, x, axis)
    order = _shuffle(data, on_device_of(np.arange(x.shape[axis]), data), 0)
    return fnp.take(x, order, axis=axis)


def _cumsum_blocked(p: Array) -> Array:
    """cumsum as XLA's CPU backend computes it: in blocks of 16, plus the (recursively
    accumulated) totals of the blocks before; the same roundings, so the same draws."""
    n = p.shape[0]
    if n <= 16:
        return fnp.cumsum(p)
    blocks = -(-n // 16)
    padded = fnp.concatenate([p, fnp.zeros_like(p, shape=(blocks * 16 - n,))])
    inner = fnp.cumsum(fnp.reshape(padded, (blocks, 16)), axis=1)
    before = fnp.concatenate([fnp.zeros_like(p, shape=(1,)), _cumsum_blocked(inner[:, -1])[:-1]])
    return (inner + before[:, None]).reshape(-1)[:n]


def _searchsorted_left(sorted_: Array, values: Array) -> Array:
    """For each value, the number of entries of ``sorted_`` below it (numpy's side='left'),
    by one stable sort of both: a value's place in the merged order minus its rank among
    the values (values first, so that ties sort them before equal entries)."""
    flat = values.reshape(-1)
    order = fnp.argsort(fnp.concatenate([flat, sorted_]), kind="stable")
    place = fnp.argsort(order, kind="stable")[:flat.shape[0]]
    rank = fnp.argsort(fnp.argsort(flat, kind="stable"), kind="stable")
    return (place - rank).reshape(values.shape)


def top_k_indices(x: Array, k: int) -> Array:
    """Indices of the k largest entries along the last axis, largest first, the lower
    index first among ties (lax.top_k's order; lax.top_k's indices are int32)."""
    return fnp.argsort(-x, axis=-1, kind="stable")[..., :k]


def _choice_with_p(data: Array, p: Any, n_inputs: int, shape: tuple, replace: bool,
                   mode: str | None) -> Array:
    p = fnp.asarray(p)
    if p.dtype.kind not in "fc":
        p = fnp.astype(p, default_float())
    if tuple(p.shape) != (n_inputs,):
        raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                         f"p has shape {tuple(p.shape)} and a.shape[axis] is {n_inputs}.")
    if replace:  # inverse CDF: the first cumulative weight at or above a uniform point
        p_cuml = _cumsum_blocked(p)
        r = p_cuml[-1] * (1 - uniform_data(data, shape, p_cuml.dtype))
        return fnp.astype(_searchsorted_left(p_cuml, r), default_int())
    # Gumbel top-k: the k largest of log p + Gumbel noise are a sample without replacement
    noise = gumbel_data(data, (n_inputs,), p.dtype, "low" if mode is None else mode)
    return fnp.astype(top_k_indices(noise + xla_log(p), math.prod(shape)), default_int())


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None,
           axis: int = 0, mode: str | None = None) -> Array:
    """A random sample of range(a) (integer a) or of a's entries along ``axis``, with or
    without replacement, uniform or with probabilities p."""
    data, _ = check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError("shape argument of funcgrad.random.choice must be a sequence, "
                        f"got {shape}")
    shape = canonical_shape(shape)
    _check_arraylike("choice", a)
    arr = fnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(arr)
    else:
        axis = normalize_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return fnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is not None:
        ind = _choice_with_p(data, p, n_inputs, shape, replace, mode)
        result = ind if arr.ndim == 0 else fnp.take(arr, ind, axis=axis)
    elif replace:
        ind = randint(data, shape, 0, n_inputs)
        result = ind if arr.ndim == 0 else fnp.take(arr, ind, axis=axis)
    else:
        pool = on_device_of(np.arange(n_inputs), data) if arr.ndim == 0 else arr
        shuffled = permutation(data, pool, axis)
        result = shuffled[(slice(None),) * (axis if arr.ndim else 0) + (slice(n_draws),)]
    return fnp.reshape(result, shape if arr.ndim == 0 else
                       tuple(arr.shape[:axis]) + shape + tuple(arr.shape[axis + 1:]))


# -- categorical and poisson -------------------------------------------------------------

def categorical(key: Any, logits: Any, axis: int = -1, shape: Sequence[int] | None = None,
                replace: bool = True, mode: str | None = None) -> Array:
    """Category indices drawn with probabilities softmax(logits, axis), by the Gumbel-max
    trick (Gumbel top-k without replacement)."""
    data, _ = check_prng_key("categorical", key)
    _check_arraylike("categorical", logits)
    logits = fnp.asarray(logits)
    ndim = logits.ndim
    batch_shape = tuple(np.delete(logits.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape(shape)
        check_shape("categorical", shape, batch_shape)
    dtype = float_dtype("gumbel", logits.dtype)
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        axis = axis - ndim if axis >= 0 else axis
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % ndim, logits.shape[axis])
        noise = gumbel_data(data, (*prefix, *logits_shape), dtype, mode)
        return fnp.astype(fnp.argmax(noise + fnp.expand_dims(logits, tuple(range(len(prefix)))),
                                     axis=axis), default_int())
    noisy = logits + gumbel_data(data, tuple(logits.shape), dtype, mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits.shape[axis]}).")
    indices = fnp.astype(top_k_indices(fnp.moveaxis(noisy, axis, -1), k), np.int32)
    dims = (indices.ndim - 1, *range(indices.ndim - 1))
    return fnp.reshape(fnp.transpose(indices, dims), shape)


def poisson(key: Any, lam: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Poisson(lam) counts (default int64); lam is used in float32, as in JAX."""
    data, _ = check_prng_key("poisson", key)
    dtype = default_int() if dtype is None else np.dtype(dtype)
    if dtype.kind not in "iu":
        raise ValueError(f"dtype argument to `poisson` must be an integer dtype, got {dtype}")
    shape = shape_of(lam) if shape is None else canonical_shape(shape)
    lam = fnp.astype(fnp.broadcast_to(fnp.asarray(lam), shape), np.float32)
    return fnp.astype(random_poisson(data, lam), dtype)
