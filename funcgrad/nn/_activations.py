"""The activation functions of jax.nn, written to stay finite, values and gradients, at any
argument (tested at +-1e4): no exp of a large positive number is ever formed, and each
masked-out branch of a `where` is computed from a harmless stand-in.

Derivatives at kinks follow JAX: relu and relu6 have derivative 0 at 0 (and at 6),
leaky_relu has slope 1 at 0, hard_tanh slope 1 at +-1.
"""
from __future__ import annotations

import math
from typing import Any

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.primitives.binary import relu as _relu
from funcgrad.scipy.special import erf, expit, log_expit, softplus as _softplus

__all__ = ["relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "soft_sign", "silu",
           "swish", "gelu", "elu", "celu", "selu", "leaky_relu", "hard_tanh", "hard_sigmoid",
           "hard_silu", "hard_swish", "mish", "squareplus", "log1mexp", "identity", "tanh"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def relu(x: Any) -> Array:
    """max(x, 0); derivative 0 at 0."""
    return _relu(fnp.asarray(x))


def relu6(x: Any) -> Array:
    """min(max(x, 0), 6); derivative 1 strictly between 0 and 6, 0 elsewhere."""
    x = fnp.asarray(x)
    return fnp.where(x <= 0, 0.0, fnp.where(x >= 6, 6.0, x))


def sigmoid(x: Any) -> Array:
    """1 / (1 + exp(-x))."""
    return expit(x)


def log_sigmoid(x: Any) -> Array:
    """log(sigmoid(x)) = -softplus(-x)."""
    return log_expit(x)


def softplus(x: Any) -> Array:
    """log(1 + exp(x)) = logaddexp(x, 0)."""
    return _softplus(x)


def soft_sign(x: Any) -> Array:
    """x / (|x| + 1)."""
    x = fnp.asarray(x)
    return x / (fnp.abs(x) + 1)


def silu(x: Any) -> Array:
    """x sigmoid(x) (also called swish)."""
    x = fnp.asarray(x)
    return x * expit(x)


swish = silu


def gelu(x: Any, approximate: bool = True) -> Array:
    """x Phi(x) with Phi the normal CDF (``approximate=False``: through erf), or JAX's
    default tanh approximation x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2, computed
    as x expit(2 sqrt(2/pi) (x + 0.044715 x^3))."""
    x = fnp.asarray(x)
    if approximate:  # (1 + tanh(u)) / 2 = expit(2 u): no cancellation in the lower tail
        return x * expit((2 * _SQRT_2_OVER_PI) * (x + 0.044715 * (x * x * x)))
    return 0.5 * x * (1 + erf(x * (1 / math.sqrt(2))))


def elu(x: Any, alpha: Any = 1.0) -> Array:
    """x for x > 0, alpha (exp(x) - 1) otherwise."""
    x = fnp.asarray(x)
    positive = x > 0
    return fnp.where(positive, x, alpha * fnp.expm1(fnp.where(positive, 0.0, x)))


def celu(x: Any, alpha: Any = 1.0) -> Array:
    """max(x, 0) + alpha (exp(min(x, 0) / alpha) - 1)."""
    x = fnp.asarray(x)
    return fnp.maximum(x, 0.0) + alpha * fnp.expm1(fnp.minimum(x, 0.0) / alpha)


def selu(x: Any) -> Array:
    """scale elu(x, alpha) with the self-normalising constants of Klambauer et al. 2017."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def leaky_relu(x: Any, negative_slope: Any = 0.01) -> Array:
    """x for x >= 0, negative_slope x below."""
    x = fnp.asarray(x)
    return fnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: Any) -> Array:
    """x clipped to [-1, 1]."""
    x = fnp.asarray(x)
    return fnp.where(x > 1, 1.0, fnp.where(x < -1, -1.0, x))


def hard_sigmoid(x: Any) -> Array:
    """relu6(x + 3) / 6."""
    return relu6(fnp.asarray(x) + 3.0) / 6.0


def hard_silu(x: Any) -> Array:
    """x hard_sigmoid(x) (also called hard_swish)."""
    x = fnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def mish(x: Any) -> Array:
    """x tanh(softplus(x))."""
    x = fnp.asarray(x)
    return x * fnp.tanh(_softplus(x))


def squareplus(x: Any, b: Any = 4) -> Array:
    """(x + sqrt(x^2 + b)) / 2; for x < 0 as (b / 2) / (sqrt(x^2 + b) - x), which does not
    cancel."""
    x = fnp.asarray(x)
    root = fnp.sqrt(x * x + b)
    return fnp.where(x >= 0, (x + root) * 0.5, (b * 0.5) / (root - x))


def log1mexp(x: Any) -> Array:
    """log(1 - exp(-x)) for x > 0: log(-expm1(-x)) up to log 2, log1p(-exp(-x)) above."""
    x = fnp.asarray(x)
    small = x < math.log(2.0)
    return fnp.where(small, fnp.log(-fnp.expm1(-fnp.where(small, x, 1.0))),
                     fnp.log1p(-fnp.exp(-fnp.where(small, 1.0, x))))


def identity(x: Any) -> Array:
    return fnp.asarray(x)


def tanh(x: Any) -> Array:
    return fnp.tanh(x)
