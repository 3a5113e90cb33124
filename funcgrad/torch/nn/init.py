"""torch.nn.init: in-place initialisers (run under no_grad), with PyTorch's formulas.

``kaiming_uniform_(w, a=sqrt(5))`` — what ``nn.Linear`` uses — draws from
U(-b, b) with b = gain * sqrt(3 / fan_in) and gain = sqrt(2 / (1 + a^2)), i.e.
b = 1 / sqrt(fan_in).
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Any, Callable

import numpy as np

from funcgrad.torch._factories import _rng
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "ones_", "zeros_", "eye_",
           "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
           "trunc_normal_", "orthogonal_", "sparse_", "uniform", "normal", "constant", "eye",
           "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal",
           "orthogonal", "sparse"]


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table)."""
    linear = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
              "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"negative_slope {slope} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _host_values(init: Callable) -> Callable:
    """An initialiser that computes its values on the host (a QR, a rejection loop): on a
    meta tensor, which has no values, it only counts the write, without drawing or
    computing anything (PyTorch's initialisers leave the generator alone there too)."""
    @functools.wraps(init)
    def initialise(tensor: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if tensor.is_meta:
            with grad_mode.no_grad():
                return tensor.zero_()
        return init(tensor, *args, **kwargs)
    return initialise


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    with grad_mode.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: Any = None) -> Tensor:
    with grad_mode.no_grad():
        return tensor.normal_(mean, std, generator=generator)


@_host_values
def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Any = None) -> Tensor:
    """Normal(mean, std) samples redrawn until they fall in [a, b]."""
    rng = _rng(generator)
    out = rng.normal(mean, std, tuple(tensor.shape))
    bad = (out < a) | (out > b)
    while bad.any():
        out[bad] = rng.normal(mean, std, int(bad.sum()))
        bad = (out < a) | (out > b)
    with grad_mode.no_grad():
        return tensor.copy_(np.asarray(out, dtype=tensor.dtype.np))


def constant_(tensor: Tensor, val: float) -> Tensor:
    with grad_mode.no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    with grad_mode.no_grad():
        return tensor.zero_()


@_host_values
def eye_(tensor: Tensor) -> Tensor:
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with grad_mode.no_grad():
        return tensor.copy_(np.eye(*tuple(tensor.shape), dtype=tensor.dtype.np))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    if 0 in tuple(tensor.shape):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    if 0 in tuple(tensor.shape):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


@_host_values
def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The identity convolution kernel (a 1 at the centre of channel d -> d), per group."""
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    values = np.zeros(sizes, dtype=tensor.dtype.np)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(per_group, sizes[1])):
            values[(g * per_group + d, d) + centre] = 1
    with grad_mode.no_grad():
        return tensor.copy_(values)


@_host_values
def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """A (semi-)orthogonal matrix (trailing dims flattened): Q of the QR decomposition of
    a Gaussian matrix, its columns' signs made uniform (Saxe et al., 2013)."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _rng(generator).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with grad_mode.no_grad():
        return tensor.copy_((gain * q).reshape(tuple(tensor.shape)).astype(tensor.dtype.np))


@_host_values
def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01,
            generator: Any = None) -> Tensor:
    """N(0, std) entries with ``ceil(sparsity * rows)`` zeros in every column."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tuple(tensor.shape)
    zeros = int(math.ceil(sparsity * rows))
    rng = _rng(generator)
    values = rng.normal(0.0, std, (rows, cols))
    for c in range(cols):
        values[rng.permutation(rows)[:zeros], c] = 0
    with grad_mode.no_grad():
        return tensor.copy_(values.astype(tensor.dtype.np))


def _deprecated(method: Callable) -> Callable:
    """The old name (no trailing underscore) of an initialiser, with PyTorch's warning."""
    new_name = method.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return method(*args, **kwargs)
    deprecated_init.__name__ = old_name
    deprecated_init.__doc__ = f"Deprecated: use `{new_name}`."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
