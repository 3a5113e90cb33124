"""torch.nn.functional: activations, losses, dropout and linear, as facade ops.

Each function is one facade op over a funcgrad function (so one node, named as PyTorch
names it: ``ReluBackward0``, ``NllLossBackward0``, ``MseLossBackward0``...) or a short
composition of ops where PyTorch composes too (``cross_entropy`` is ``log_softmax`` then
``nll_loss``; ``linear`` on a matrix is ``addmm`` with ``weight.t()``).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.primitives import reductions as reduction_prims
from funcgrad.torch import _conventions as conventions, _dtypes as D
from funcgrad.torch._dispatch import PrimCall, apply, const_like, inplace
from funcgrad.torch._ops_basic import FUNCTIONS, METHODS, cast, result_type, sp_fn
from funcgrad.torch._tensor import Tensor, _type_word

__all__ = ["linear", "relu", "relu_", "leaky_relu", "gelu", "silu", "elu", "softplus",
           "sigmoid", "tanh", "softmax", "log_softmax", "dropout", "nll_loss",
           "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "one_hot", "embedding", "normalize",
           "logsigmoid", "hardtanh", "relu6", "softsign"]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` (AddmmBackward0 for a matrix input with bias)."""
    wt = FUNCTIONS["t"](weight)
    if bias is not None and input.ndim == 2:
        return FUNCTIONS["addmm"](bias, input, wt)
    if bias is not None and input.ndim != 2:
        lead = tuple(input.shape[:-1])
        flat = FUNCTIONS["addmm"](bias, METHODS["reshape"](input, -1, input.shape[-1]), wt)
        return METHODS["view"](flat, *lead, weight.shape[0])
    out = FUNCTIONS["matmul"](input, wt)
    return out if bias is None else out + bias


def _unary(node: str, fn: Any, input: Tensor, inplace_: bool = False) -> Tensor:
    if inplace_:
        return inplace(input, node, fn)
    return apply(node, fn, [input])


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return (METHODS["relu_"] if inplace else FUNCTIONS["relu"])(input)


def relu_(input: Tensor) -> Tensor:
    return METHODS["relu_"](input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _unary("LeakyReluBackward0", lambda x: fnp.where(
        fnp.greater(x, 0), x, fnp.multiply(x, negative_slope)), input, inplace)


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
    return _unary("EluBackward0", f, input, inplace)


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


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p)
    (NativeDropoutBackward0); the identity when not training."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    from funcgrad.torch._factories import _rng
    keep = _rng(None).random(tuple(input.shape)) >= p
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    mask = const_like((keep * scale).astype(input.dtype.np), input)
    # PyTorch's fused native_dropout runs on accelerators; on the CPU dropout multiplies
    node = "MulBackward0" if input.device.type == "cpu" else "NativeDropoutBackward0"
    return _unary(node, lambda x: fnp.multiply(x, mask), input, inplace)


def _reduce(loss: Any, reduction: str) -> Any:
    if reduction == "mean":
        return fnp.mean(loss)
    if reduction == "sum":
        return fnp.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices ``target`` under log-probabilities
    ``input`` of shape (N, C, ...) or (C,): one `nll_loss` primitive, with the labels and
    the per-target weights (0 for ignored targets) as host-checked constants."""
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_type_word(target.dtype)}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    t = target._host()
    shape = input._st.a.shape  # a plain tuple: read once
    cls_axis = 1 if len(shape) >= 2 else 0
    n_cls = shape[cls_axis]
    if t.shape != shape[:cls_axis] + shape[cls_axis + 1:]:
        if len(shape) >= 2 and t.ndim and t.shape[0] != shape[0]:
            raise ValueError(f"Expected input batch_size ({shape[0]}) to match target "
                             f"batch_size ({t.shape[0]}).")
        if len(shape) <= 2 and t.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        raise RuntimeError(f"size mismatch (got input: {list(shape)} , target: "
                           f"{list(t.shape)})")
    lo, hi = (int(t.min()), int(t.max())) if t.size else (0, 0)
    all_valid = not lo <= ignore_index <= hi
    if all_valid:
        safe = t
    else:
        valid = t != ignore_index
        safe = np.where(valid, t, 0)
        lo, hi = (int(safe.min()), int(safe.max())) if t.size else (0, 0)
    if lo < 0 or hi >= n_cls:
        bad = int(safe[(safe < 0) | (safe >= n_cls)].flat[0])
        raise IndexError(f"Target {bad} is out of bounds.")
    if weight is None and all_valid:
        w: Any = 1.0
    else:
        w_raw = weight._host()[safe] if weight is not None else np.ones(safe.shape)
        w = const_like((w_raw if all_valid else w_raw * valid).astype(input.dtype.np), input)
    labels = const_like(safe, input)
    # PyTorch runs image-shaped inputs, (N, C, H) and (N, C, H, W), through nll_loss2d
    node = "NllLoss2DBackward0" if len(shape) in (3, 4) else "NllLossBackward0"
    return apply(node, PrimCall(reduction_prims.nll_loss, {
        "axis": cls_axis, "reduction": reduction}, consts=(labels, w)), [input])


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """``nll_loss(log_softmax(input, 1), target)``; ``target`` may also hold class
    probabilities (same shape as ``input``)."""
    cls_axis = 1 if input.ndim >= 2 else 0
    logp = log_softmax(input, cls_axis)
    if target.dtype.is_floating_point:
        n_cls = input.shape[cls_axis]
        if label_smoothing:
            target = target * (1 - label_smoothing) + label_smoothing / n_cls
        per = -(logp * target).sum(cls_axis)
        # PyTorch's mean here is the sum over the batch size (DivBackward1)
        n = max(per.numel(), 1)
        return {"mean": lambda: apply("DivBackward1", lambda t: fnp.true_divide(t, n),
                                      [per.sum()]),
                "sum": lambda: per.sum(), "none": lambda: per}[reduction]()
    loss = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return loss
    smooth = -logp.mean(cls_axis)
    valid = (target != ignore_index).to(logp.dtype)
    smooth = smooth * valid
    smooth = {"mean": lambda: smooth.sum() / valid.sum(), "sum": lambda: smooth.sum(),
              "none": lambda: smooth}[reduction]()
    return loss * (1 - label_smoothing) + smooth * label_smoothing


def _pair_loss(node: str, elementwise: Any, input: Tensor, target: Tensor,
               reduction: str) -> Tensor:
    dt = result_type(input, target).np
    return apply(node, lambda x, y: _reduce(elementwise(cast(x, dt), cast(y, dt)),
                                            reduction), [input, target])


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    return _pair_loss("MseLossBackward0", lambda x, y: fnp.square(fnp.subtract(x, y)),
                      input, target, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean") -> Tensor:
    """mean |input - target| (PyTorch composes it: its node is the reduction's, or
    AbsBackward0 without one)."""
    node = {"mean": "MeanBackward0", "sum": "SumBackward0"}.get(reduction, "AbsBackward0")
    return _pair_loss(node, lambda x, y: conventions.abs(fnp.subtract(x, y)), input, target,
                      reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None,
                   reduce: Any = None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    def elementwise(x: Any, y: Any) -> Any:
        d = fnp.abs(fnp.subtract(x, y))
        return fnp.where(fnp.less(d, beta), fnp.true_divide(fnp.multiply(
            fnp.square(d), 0.5), beta), fnp.subtract(d, 0.5 * beta))
    return _pair_loss("SmoothL1LossBackward0", elementwise, input, target, reduction)


def _clamped_log(p: Any) -> Any:
    """max(log(p), -100), PyTorch's clamp of BCE's logs, with a finite slope at p == 0
    (the log is taken of 1 there, so no 0 * inf)."""
    tiny = fnp.less_equal(p, math.exp(-100))
    return fnp.where(tiny, -100.0, fnp.log(fnp.where(tiny, 1, p)))


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    w = None if weight is None else weight._st.a

    def elementwise(p: Any, y: Any) -> Any:
        logp, log1m = _clamped_log(p), _clamped_log(fnp.subtract(1, p))
        loss = fnp.negative(fnp.add(fnp.multiply(y, logp),
                                    fnp.multiply(fnp.subtract(1, y), log1m)))
        return loss if w is None else fnp.multiply(loss, w)
    return _pair_loss("BinaryCrossEntropyBackward0", elementwise, input, target, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    w = None if weight is None else weight._st.a
    pw = None if pos_weight is None else pos_weight._st.a

    def elementwise(x: Any, y: Any) -> Any:
        log_sig = fnp.negative(fnp.logaddexp(fnp.negative(x), 0))      # log sigmoid(x)
        log_1m = fnp.negative(fnp.logaddexp(x, 0))                     # log(1 - sigmoid(x))
        pos = fnp.multiply(y, log_sig)
        if pw is not None:
            pos = fnp.multiply(pos, pw)
        loss = fnp.negative(fnp.add(pos, fnp.multiply(fnp.subtract(1, y), log_1m)))
        return loss if w is None else fnp.multiply(loss, w)
    return _pair_loss("BinaryCrossEntropyWithLogitsBackward0", elementwise, input, target,
                      reduction)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    from funcgrad.torch._factories import tensor as make_tensor
    t = tensor._host()
    n = int(t.max()) + 1 if num_classes == -1 else num_classes
    return make_tensor((t[..., None] == np.arange(n)).astype(np.int64), dtype=D.int64,
                       device=tensor.device)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    idx = input._st.a
    return apply("EmbeddingBackward0", lambda w: fnp.take(w, idx, axis=0), [weight])


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    norm = FUNCTIONS["norm"](input, p, dim, keepdim=True)
    return input / norm.clamp_min(eps).expand_as(input)
