"""More torch.nn.functional activations, each one node named as PyTorch names it (or
PyTorch's own composition of tensor ops where it composes: tanhshrink, softmin, relu6)."""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
import funcgrad.scipy.special as sps
from funcgrad.primitives.control import stop_gradient
from funcgrad.torch._dispatch import apply
from funcgrad.torch._inplace import inplace as _inplace
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._autocast import autocast_op

__all__ = ["celu", "selu", "mish", "hardswish", "hardsigmoid", "tanhshrink",
           "softshrink", "hardshrink", "threshold", "threshold_", "glu", "prelu", "softmin"]

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _op(node: str, fn: Any, input: Tensor, in_place: bool = False,
        in_place_node: str | None = None) -> Tensor:
    """``fn`` of ``input`` as the node ``node``, or in place as ``in_place_node`` (the
    ops PyTorch differentiates through their result in place: CeluBackward1...)."""
    if in_place:
        return _inplace(input, in_place_node or node, fn)
    return apply(node, fn, [input])


def _elu(x: Any, alpha: float, scale: float = 1.0, input_scale: float = 1.0) -> Any:
    """scale * (x for x > 0 (and NaN), alpha (exp(x * input_scale) - 1) for x <= 0): the
    slope at 0 is the left one, as PyTorch's."""
    left = fnp.less_equal(x, 0)
    neg = fnp.multiply(fnp.expm1(fnp.multiply(fnp.where(left, x, 0), input_scale)), alpha)
    return fnp.multiply(fnp.where(left, neg, x), scale)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _op("CeluBackward0", lambda x: _elu(x, alpha, 1.0, 1.0 / alpha), input, inplace,
               "CeluBackward1")


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalising constants (EluBackward0)."""
    return _op("EluBackward0", lambda x: _elu(x, SELU_ALPHA, SELU_SCALE), input, inplace,
               "EluBackward1")


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return _op("MishBackward0", lambda x: fnp.multiply(x, fnp.tanh(fnp.logaddexp(x, 0))),
               input, inplace)


# PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32, in every dtype
_ONE_SIXTH_F32 = float(np.float32(1.0 / 6.0))


def _with_slope(value: Any, x: Any, slope: Any) -> Any:
    """``value`` exactly, with the derivative ``slope`` in x (a constant): value plus
    (x - x) * slope, the difference zero in value but not in derivative."""
    return fnp.add(value, fnp.multiply(fnp.subtract(x, stop_gradient(x)), slope))


def _hardswish(x: Any) -> Any:
    """x * relu6(x + 3) / 6 with PyTorch's derivative: 0 for x <= -3, x / 3 + 1/2 inside,
    1 for x >= 3 and at NaN."""
    value = stop_gradient(fnp.true_divide(fnp.multiply(x, fnp.clip(fnp.add(x, 3.0), 0, 6)),
                                          6))
    inside = fnp.logical_and(fnp.greater(x, -3.0), fnp.less(x, 3.0))
    safe = fnp.where(inside, x, 0)
    middle = fnp.true_divide(fnp.multiply(safe, fnp.add(safe, 3.0)), 6)
    return fnp.where(inside, middle, fnp.where(fnp.less_equal(x, -3.0), value, x))


def _hardsigmoid(x: Any) -> Any:
    """relu6(x + 3) / 6 with PyTorch's derivative: its float32 1/6 strictly inside
    (-3, 3), 0 elsewhere and at NaN."""
    value = stop_gradient(fnp.true_divide(fnp.clip(fnp.add(x, 3.0), 0, 6), 6))
    inside = fnp.logical_and(fnp.greater(x, -3.0), fnp.less(x, 3.0))
    return fnp.where(inside, _with_slope(value, x, _ONE_SIXTH_F32), value)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6."""
    return _op("HardswishBackward0", _hardswish, input, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6."""
    return _op("HardsigmoidBackward0", _hardsigmoid, input, inplace)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - input.tanh()


# the largest finite value of each floating dtype, as softshrink's range error states it
_LARGEST = {"torch.float32": float(np.finfo(np.float32).max),
            "torch.float16": float(np.finfo(np.float16).max), "torch.bfloat16": 3.3895314e38}


def _inside(x: Any, lambd: float) -> Any:
    """-lambd <= x <= lambd (False at NaN, which passes through the shrinks)."""
    return fnp.logical_and(fnp.greater_equal(x, -lambd), fnp.less_equal(x, lambd))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, 0 between (NaN stays NaN, with the
    gradient 1)."""
    if lambd < 0:
        limit = _LARGEST.get(str(input.dtype), np.finfo(np.float64).max)
        kind = input.type().rsplit(".", 1)[-1][:-len("Tensor")]
        raise RuntimeError(f"lambda must be in range [0, {limit:g}] for input dtype {kind}, "
                           f"but found {lambd:g}")
    return apply("SoftshrinkBackward0", lambda x: fnp.where(
        _inside(x, lambd), fnp.multiply(x, 0),
        fnp.where(fnp.greater(x, lambd), fnp.subtract(x, lambd), fnp.add(x, lambd))), [input])


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x outside [-lambd, lambd] (and at NaN), else 0."""
    return apply("HardshrinkBackward0", lambda x: fnp.where(
        _inside(x, lambd), fnp.multiply(x, 0), x), [input])


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """value where x <= threshold, else x (NaN stays NaN)."""
    return _op("ThresholdBackward0", lambda x: fnp.where(
        fnp.less_equal(x, threshold), fnp.astype(fnp.full_like(x, value), x.dtype), x),
        input, inplace, "ThresholdBackward1")


def threshold_(input: Tensor, threshold_value: float, value: float) -> Tensor:
    return threshold(input, threshold_value, value, True)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b) with a, b the two halves of ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    axis = dim % input.ndim
    size = input.shape[axis]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {axis} is size "
                           f"{size}")

    def f(x: Any) -> Any:
        a, b = fnp.split(x, 2, axis=axis)
        return fnp.multiply(a, sps.expit(b))
    return apply("GluBackward0", f, [input])


@autocast_op("prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else weight * x; weight has 1 or C (axis 1) entries."""
    if weight.numel() != 1 and (input.ndim < 2 or weight.numel() != input.shape[1]):
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = "
                           f"{input.shape[1] if input.ndim > 1 else 1}.")
    shape = (1, -1) + (1,) * (input.ndim - 2) if input.ndim > 1 else (-1,)

    def f(x: Any, w: Any) -> Any:
        w = fnp.reshape(w, shape) if w.size != 1 else fnp.reshape(w, ())
        return fnp.where(fnp.greater(x, 0), x, fnp.multiply(w, x))
    return apply("PreluKernelBackward0", f, [input, weight])


@autocast_op("softmin")
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """softmax(-x)."""
    return FUNCTIONS["softmax"](-input, dim, dtype)


