"""funcgrad.nn.initializers: jax.nn.initializers' API. Each factory returns an initializer
``init(key, shape, dtype=...) -> Array`` that draws from funcgrad.random with ``key``:

    init = initializers.glorot_normal()
    w = init(funcgrad.random.PRNGKey(0), (784, 512))

The random draws are funcgrad.random's (``normal``, ``uniform``, ``truncated_normal``, with
JAX's signatures), so for a given key these are JAX's numbers wherever funcgrad.random
reproduces JAX's. The default dtype is funcgrad's default float (float64; float32 with
``jax_enable_x64`` disabled, as in JAX). Complex dtypes
are not supported (JAX draws complex weights with a rotation-invariant law; not here yet).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad._config import default_float
from funcgrad import random
from funcgrad.array import Array

__all__ = ["Initializer", "zeros", "ones", "constant", "normal", "uniform", "truncated_normal",
           "variance_scaling", "glorot_normal", "glorot_uniform", "xavier_normal",
           "xavier_uniform", "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform",
           "lecun_normal", "lecun_uniform", "orthogonal", "delta_orthogonal"]

Initializer = Callable[..., Array]

# the standard deviation of a standard normal truncated to [-2, 2]
_TRUNCATED_STD = 0.87962566103423978


def _or_default(dtype: Any) -> np.dtype:
    return default_float() if dtype is None else np.dtype(dtype)


def _float_dtype(dtype: Any, default: Any) -> np.dtype:
    dtype = np.dtype(default_float() if dtype is None and default is None else
                     default if dtype is None else dtype)
    if dtype.kind == "c":
        raise NotImplementedError(f"initializers: complex dtypes ({dtype}) are not supported")
    if dtype.kind != "f":
        raise TypeError(f"initializers: dtype must be a floating dtype, got {dtype}")
    return dtype


def _shape(shape: Any) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def zeros(key: Any, shape: Any, dtype: Any = None) -> Array:
    """An array of zeros (``key`` is ignored)."""
    return fnp.zeros(_shape(shape), dtype=_or_default(dtype))


def ones(key: Any, shape: Any, dtype: Any = None) -> Array:
    """An array of ones (``key`` is ignored)."""
    return fnp.ones(_shape(shape), dtype=_or_default(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling with ``value``."""
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Array:
        return fnp.full(_shape(shape), value, dtype=_or_default(dtype))
    return init


def normal(stddev: float = 1e-2, dtype: Any = None) -> Initializer:
    """Normal draws with mean 0 and standard deviation ``stddev``."""
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Array:
        dtype = _float_dtype(dtype, None)
        return random.normal(key, _shape(shape), dtype) * fnp.asarray(stddev, dtype)
    return init


def uniform(scale: float = 1e-2, dtype: Any = None) -> Initializer:
    """Uniform draws on [0, scale)."""
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Array:
        dtype = _float_dtype(dtype, None)
        return random.uniform(key, _shape(shape), dtype) * fnp.asarray(scale, dtype)
    return init


def truncated_normal(stddev: float = 1e-2, dtype: Any = None, lower: float = -2.0,
                     upper: float = 2.0) -> Initializer:
    """stddev times a standard normal truncated to [lower, upper]."""
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Array:
        dtype = _float_dtype(dtype, None)
        draw = random.truncated_normal(key, lower, upper, _shape(shape), dtype)
        return draw * fnp.asarray(stddev, dtype)
    return init


def _axes(axis: int | Sequence[int], ndim: int) -> tuple:
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(a % ndim for a in axes)


def _fans(shape: tuple, in_axis: Any, out_axis: Any, batch_axis: Any) -> tuple:
    """(fan_in, fan_out): the input and output sizes times the receptive field (the size of
    every other axis that is not a batch axis)."""
    if len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-"
                         "dimensional weights tensor. Must be at least 2D.")
    size = lambda axes: math.prod(shape[a] for a in _axes(axes, len(shape)))  # noqa: E731
    in_size, out_size, batch = size(in_axis), size(out_axis), size(batch_axis)
    receptive = math.prod(shape) / in_size / out_size / batch
    return in_size * receptive, out_size * receptive


def variance_scaling(scale: float, mode: str, distribution: str, in_axis: Any = -2,
                     out_axis: Any = -1, batch_axis: Any = (),
                     dtype: Any = None) -> Initializer:
    """Draws with variance scale / n, n the fan named by ``mode`` ('fan_in', 'fan_out',
    'fan_avg' = their mean, 'fan_geo_avg' = their geometric mean), from ``distribution``:
    'truncated_normal' (within 2 standard deviations, rescaled to the variance), 'normal'
    or 'uniform' (on +-sqrt(3 variance))."""
    denominators = {"fan_in": lambda i, o: i, "fan_out": lambda i, o: o,
                    "fan_avg": lambda i, o: (i + o) / 2,
                    "fan_geo_avg": lambda i, o: (i * o) ** 0.5}
    if mode not in denominators:
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Array:
        shape, dtype = _shape(shape), _float_dtype(dtype, None)
        variance = scale / denominators[mode](*_fans(shape, in_axis, out_axis, batch_axis))
        if distribution == "truncated_normal":
            draw = random.truncated_normal(key, -2, 2, shape, dtype)
            return draw * fnp.asarray(math.sqrt(variance) / _TRUNCATED_STD, dtype)
        if distribution == "normal":
            return random.normal(key, shape, dtype) * fnp.asarray(math.sqrt(variance), dtype)
        draw = random.uniform(key, shape, dtype, -1, 1)
        return draw * fnp.asarray(math.sqrt(3 * variance), dtype)
    return init


def _scaled(scale: float, mode: str, distribution: str, doc: str) -> Callable:
    def factory(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (),
                dtype: Any = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis,
                                dtype)
    factory.__doc__ = doc
    return factory


glorot_uniform = _scaled(1.0, "fan_avg", "uniform",
                         "Glorot and Bengio 2010: variance 2 / (fan_in + fan_out), uniform.")
glorot_normal = _scaled(1.0, "fan_avg", "truncated_normal",
                        "Glorot and Bengio 2010: variance 2 / (fan_in + fan_out), truncated "
                        "normal.")
lecun_uniform = _scaled(1.0, "fan_in", "uniform", "LeCun et al. 1998: variance 1 / fan_in, "
                                                  "uniform.")
lecun_normal = _scaled(1.0, "fan_in", "truncated_normal",
                       "LeCun et al. 1998: variance 1 / fan_in, truncated normal.")
he_uniform = _scaled(2.0, "fan_in", "uniform", "He et al. 2015: variance 2 / fan_in, uniform.")
he_normal = _scaled(2.0, "fan_in", "truncated_normal",
                    "He et al. 2015: variance 2 / fan_in, truncated normal.")
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """scale times a uniformly random matrix with orthonormal columns (or rows, for wide
    shapes): the Q of the QR factorisation of a normal draw, column signs fixed by R's
    diagonal; the other axes are flattened into rows."""
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Array:
        shape, dtype = _shape(shape), _float_dtype(dtype, None)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        tall = (n_rows, n_cols) if n_rows >= n_cols else (n_cols, n_rows)
        q, r = fnp.linalg.qr(random.normal(key, tall, dtype))
        q = q * fnp.sign(fnp.diagonal(r))
        if n_rows < n_cols:
            q = fnp.swapaxes(q, 0, 1)
        rest = tuple(s for i, s in enumerate(shape) if i != column_axis % len(shape))
        q = fnp.moveaxis(fnp.reshape(q, rest + (n_cols,)), -1, column_axis)
        return q * fnp.asarray(scale, dtype)
    return init


def delta_orthogonal(scale: float = 1.0, column_axis: int = -1,
                     dtype: Any = None) -> Initializer:
    """For 3-D to 5-D convolution kernels (spatial..., in, out): an orthogonal matrix at the
    centre of the spatial window, zeros elsewhere (Xiao et al. 2018)."""
    def init(key: Any, shape: Any, dtype: Any = dtype) -> Array:
        shape, dtype = _shape(shape), _float_dtype(dtype, None)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        centre = orthogonal(scale, column_axis, dtype)(key, shape[-2:])
        middle = tuple((k - 1) // 2 for k in shape[:-2])
        return fnp.zeros(shape, dtype=dtype).at[middle].set(centre)
    return init
