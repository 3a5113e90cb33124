"""torch.nn.functional: the namespace, and the basic activations.

Each function is one facade op over a funcgrad function (so one node, named as PyTorch
names it: ``ReluBackward0``, ``NllLossBackward0``, ``ConvolutionBackward0``...) or a short
composition of ops where PyTorch composes too (``cross_entropy`` is ``log_softmax`` then
``nll_loss``; ``linear`` on a matrix is ``addmm`` with ``weight.t()``). The families live in
their own modules: convolutions (`_conv`), pooling, interpolation, normalisation, dropout,
embedding, attention, more activations and the losses.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch import _conventions as conventions
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._dispatch import apply
from funcgrad.torch._inplace import inplace
from funcgrad.torch._ops_basic import FUNCTIONS, METHODS, sp_fn
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn import (_activations, _attention, _conv, _ctc, _dropout,
                               _fractional_pool, _interpolate,
                               _losses, _margin_losses, _misc, _normalization, _pooling,
                               _sparse, _unpooling)
from funcgrad.torch.nn._activations import *  # noqa: F401,F403
from funcgrad.torch.nn._attention import *  # noqa: F401,F403
from funcgrad.torch.nn._conv import *  # noqa: F401,F403
from funcgrad.torch.nn._ctc import *  # noqa: F401,F403
from funcgrad.torch.nn._dropout import *  # noqa: F401,F403
from funcgrad.torch.nn._fractional_pool import *  # noqa: F401,F403
from funcgrad.torch.nn._interpolate import *  # noqa: F401,F403
from funcgrad.torch.nn import grad  # noqa: F401  (F.grad is torch.nn.grad, as in PyTorch)
from funcgrad.torch.nn._linear import linear
from funcgrad.torch.nn._losses import *  # noqa: F401,F403
from funcgrad.torch.nn._margin_losses import *  # noqa: F401,F403
from funcgrad.torch.nn._misc import *  # noqa: F401,F403
from funcgrad.torch.nn._normalization import *  # noqa: F401,F403
from funcgrad.torch.nn._pooling import *  # noqa: F401,F403
from funcgrad.torch.nn._sparse import *  # noqa: F401,F403
from funcgrad.torch.nn._unpooling import *  # noqa: F401,F403
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._factories import tensor as make_tensor

__all__ = ["linear", "relu", "relu_", "leaky_relu", "leaky_relu_", "gelu", "silu", "elu",
           "elu_", "celu_", "selu_", "hardtanh_",
           "softplus", "sigmoid", "tanh", "softmax", "log_softmax", "one_hot", "normalize",
           "logsigmoid", "hardtanh", "relu6", "softsign", *_activations.__all__, *_attention.__all__,
           *_conv.__all__, *_dropout.__all__, *_interpolate.__all__, *_losses.__all__,
           *_normalization.__all__, *_pooling.__all__, *_sparse.__all__,
           *_margin_losses.__all__, *_misc.__all__, *_unpooling.__all__, *_ctc.__all__,
           *_fractional_pool.__all__]


def _unary(node: str, fn: Any, input: Tensor, inplace_: bool = False,
           inplace_node: str | None = None) -> Tensor:
    if inplace_:
        return inplace(input, inplace_node or node, fn)
    return apply(node, fn, [input])


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return (METHODS["relu_"] if inplace else FUNCTIONS["relu"])(input)


def relu_(input: Tensor) -> Tensor:
    return METHODS["relu_"](input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _unary("LeakyReluBackward0", lambda x: fnp.where(
        fnp.greater(x, 0), x, fnp.multiply(x, negative_slope)), input, inplace,
        "LeakyReluBackward1")


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``clamp(input, min_val, max_val)`` whose gradient, as PyTorch's, is 1 only strictly
    between the bounds (and at NaN), 0 at them."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _unary("HardtanhBackward0", lambda x: conventions.hardtanh(x, min_val, max_val),
                  input, inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``hardtanh(input, 0, 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0 (and NaN), alpha (exp(x) - 1) for x <= 0: PyTorch's slope at 0 is
    alpha, the left one."""
    def f(x: Any) -> Any:
        left = fnp.less_equal(x, 0)
        return fnp.where(left, fnp.multiply(fnp.expm1(fnp.where(left, x, 0)), alpha), x)
    return _unary("EluBackward0", f, input, inplace, "EluBackward1")


# the in-place forms PyTorch's functional names with a trailing underscore
def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return _activations.celu(input, alpha, True)


def selu_(input: Tensor) -> Tensor:
    return _activations.selu(input, True)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    if approximate == "tanh":
        c = math.sqrt(2 / math.pi)
        return apply("GeluBackward0", lambda x: fnp.multiply(fnp.multiply(x, 0.5), fnp.add(
            1, fnp.tanh(fnp.multiply(fnp.add(x, fnp.multiply(fnp.power(x, 3), 0.044715)),
                                     c)))), [input])
    return apply("GeluBackward0", lambda x: fnp.multiply(fnp.multiply(x, 0.5), fnp.add(
        1, sp_fn("erf")(fnp.multiply(x, 1 / math.sqrt(2))))), [input])


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _unary("SiluBackward0", lambda x: fnp.multiply(x, sp_fn("expit")(x)),
                  input, inplace)


@autocast_op("softplus")
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    def f(x: Any) -> Any:
        bx = fnp.multiply(x, beta)
        soft = fnp.true_divide(fnp.logaddexp(bx, 0), beta)
        return fnp.where(fnp.greater(bx, threshold), x, soft)
    return apply("SoftplusBackward0", f, [input])


def logsigmoid(input: Tensor) -> Tensor:
    return apply("LogSigmoidBackward0", lambda x: fnp.negative(fnp.logaddexp(
        fnp.negative(x), 0)), [input])


def softsign(input: Tensor) -> Tensor:
    return input / (1 + FUNCTIONS["abs"](input))


def sigmoid(input: Tensor) -> Tensor:
    return FUNCTIONS["sigmoid"](input)


def tanh(input: Tensor) -> Tensor:
    return FUNCTIONS["tanh"](input)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    return FUNCTIONS["softmax"](input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    return FUNCTIONS["log_softmax"](input, dim, dtype)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    t = tensor._host()
    n = int(t.max()) + 1 if num_classes == -1 else num_classes
    return make_tensor((t[..., None] == np.arange(n)).astype(np.int64), dtype=D.int64,
                       device=tensor.device)


@autocast_op("normalize")
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    norm = FUNCTIONS["norm"](input, p, dim, keepdim=True)
    return input / norm.clamp_min(eps).expand_as(input)
