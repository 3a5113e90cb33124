"""torch.nn.functional losses, node for node as PyTorch builds them.

Where PyTorch has a fused loss kernel (mse, smooth_l1, huber, nll, binary cross entropy),
the loss is one facade op named after it; where PyTorch composes tensor ops (l1, kl_div,
the weighted mse/l1/huber, cross entropy with probabilities or label smoothing), so does
this module, so that ``grad_fn`` is the same node. The legacy ``size_average`` / ``reduce``
keywords are turned into ``reduction`` exactly as PyTorch's ``_Reduction`` does, with its
deprecation warning; an unknown reduction raises PyTorch's ValueError.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
import funcgrad.scipy.special as sps
from funcgrad.core import ConcretizationTypeError
from funcgrad.primitives import reductions as reduction_prims
from funcgrad.torch._dispatch import PrimCall, apply
from funcgrad.torch._ops_basic import FUNCTIONS, cast, result_type
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._common import array_of, const_on, host, shape_list
from funcgrad.torch._autocast import autocast_op

__all__ = ["nll_loss", "cross_entropy", "mse_loss", "l1_loss",
           "smooth_l1_loss", "huber_loss", "kl_div", "binary_cross_entropy",
           "binary_cross_entropy_with_logits"]


def legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    """``reduction``, or what the deprecated ``size_average`` / ``reduce`` pair means
    (None counts as True; both true: 'mean'; reduce only: 'sum'; else 'none')."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _check_reduction(reduction: str) -> str:
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use "
                      "reduction='mean' instead.", stacklevel=3)
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss: Any, reduction: str) -> Any:
    """Inside an op: the mean, the sum or the loss itself."""
    return fnp.mean(loss) if reduction == "mean" else fnp.sum(loss) \
        if reduction == "sum" else loss


def _reduce_tensor(loss: Tensor, reduction: str) -> Tensor:
    """On tensors (its own node), as PyTorch's composite losses reduce."""
    return loss.mean() if reduction == "mean" else loss.sum() \
        if reduction == "sum" else loss


def _size_warning(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input "
                      f"size ({input.size()}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)


def _broadcast_check(input: Tensor, target: Tensor) -> None:
    """PyTorch's broadcast_tensors error for shapes that do not broadcast."""
    a, b = tuple(input.shape), tuple(target.shape)
    for i in range(1, min(len(a), len(b)) + 1):
        if a[-i] != b[-i] and 1 not in (a[-i], b[-i]):
            raise RuntimeError(f"The size of tensor a ({a[-i]}) must match the size of tensor "
                               f"b ({b[-i]}) at non-singleton dimension {max(len(a), len(b)) - i}")


def _pair_loss(node: str, elementwise: Callable, input: Tensor, target: Tensor,
               reduction: str) -> Tensor:
    """A fused pointwise loss of input and target: one op."""
    dt = result_type(input, target).np
    return apply(node, lambda x, y: _reduce(elementwise(cast(x, dt), cast(y, dt)), reduction),
                 [input, target])


def _weighted(loss: Tensor, weight: Tensor, input: Tensor, reduction: str,
              mean_by_weight: bool) -> Tensor:
    """PyTorch's manual weighting of mse/l1 (mean: / sum(weight)) and huber (mean)."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = loss * weight
    if reduction == "mean" and mean_by_weight:
        return weighted.sum() / weight.sum()
    return _reduce_tensor(weighted, reduction)


def _square_diff(x: Any, y: Any) -> Any:
    return fnp.square(fnp.subtract(x, y))


@autocast_op("mse_loss")
def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean squared error (MseLossBackward0)."""
    _size_warning(input, target)
    reduction = _check_reduction(legacy_reduction(size_average, reduce, reduction))
    _broadcast_check(input, target)
    if weight is not None:
        return _weighted((input - target).pow(2), weight, input, reduction, True)
    return _pair_loss("MseLossBackward0", _square_diff, input, target, reduction)


@autocast_op("l1_loss")
def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean absolute error: |input - target| reduced (PyTorch composes it)."""
    _size_warning(input, target)
    reduction = _check_reduction(legacy_reduction(size_average, reduce, reduction))
    _broadcast_check(input, target)
    loss = (input - target).abs()
    if weight is not None:
        return _weighted(loss, weight, input, reduction, True)
    return _reduce_tensor(loss, reduction)


def _smooth_l1(beta: float) -> Callable:
    def elementwise(x: Any, y: Any) -> Any:
        d = fnp.abs(fnp.subtract(x, y))
        return fnp.where(fnp.less(d, beta), fnp.true_divide(fnp.multiply(fnp.square(d), 0.5),
                                                            beta), fnp.subtract(d, 0.5 * beta))
    return elementwise


@autocast_op("smooth_l1_loss")
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None,
                   reduce: Any = None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta for |d| < beta, else |d| - beta / 2 (the L1 loss for beta = 0)."""
    _size_warning(input, target)
    reduction = _check_reduction(legacy_reduction(size_average, reduce, reduction))
    _broadcast_check(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:
        return _reduce_tensor((input - target).abs(), reduction)
    return _pair_loss("SmoothL1LossBackward0", _smooth_l1(beta), input, target, reduction)


@autocast_op("huber_loss")
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """0.5 d^2 for |d| < delta, else delta (|d| - delta / 2)."""
    _size_warning(input, target)
    reduction = _check_reduction(reduction)
    _broadcast_check(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")

    def elementwise(x: Any, y: Any) -> Any:
        d = fnp.abs(fnp.subtract(x, y))
        return fnp.where(fnp.less(d, delta), fnp.multiply(fnp.square(d), 0.5),
                         fnp.multiply(fnp.subtract(d, 0.5 * delta), delta))
    if weight is not None:
        loss = _pair_loss("HuberLossBackward0", elementwise, input, target, "none")
        return _weighted(loss, weight, input, reduction, False)
    return _pair_loss("HuberLossBackward0", elementwise, input, target, reduction)


@autocast_op("kl_div")
def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL(target || exp(input)) pointwise, ``input`` holding log-probabilities: target *
    (log target - input); 'batchmean' divides the sum by the batch size."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if reduction != "batchmean":
        _check_reduction(reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = apply("SubBackward0", lambda x, t: fnp.subtract(sps.xlogy(t, t),
                                                               fnp.multiply(t, x)),
                     [input, target])
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.ndim else total
    return _reduce_tensor(loss, reduction)


def _bce_weight(weight: Tensor | None, target: Tensor) -> Any:
    if weight is None:
        return None
    return array_of(weight.expand(*np.broadcast_shapes(tuple(target.shape),
                                                      tuple(weight.shape))))


def _clamped_log(p: Any) -> Any:
    """max(log(p), -100), PyTorch's clamp of BCE's logs, with a finite slope at p == 0
    (the log is taken of 1 there, so no 0 * inf)."""
    tiny = fnp.less_equal(p, math.exp(-100))
    return fnp.where(tiny, -100.0, fnp.log(fnp.where(tiny, 1, p)))


@autocast_op("binary_cross_entropy")
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """-(y log p + (1 - y) log(1 - p)), each log clamped at -100 as PyTorch."""
    reduction = _check_reduction(legacy_reduction(size_average, reduce, reduction))
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.size()}) that is different to the "
                         f"input size ({input.size()}) is deprecated. Please ensure they have "
                         "the same size.")
    values = host(input)
    if values.size and not ((values >= 0) & (values <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1")
    w = _bce_weight(weight, target)

    def elementwise(p: Any, y: Any) -> Any:
        logp, log1m = _clamped_log(p), _clamped_log(fnp.subtract(1, p))
        loss = fnp.negative(fnp.add(fnp.multiply(y, logp),
                                    fnp.multiply(fnp.subtract(1, y), log1m)))
        return loss if w is None else fnp.multiply(loss, w)
    return _pair_loss("BinaryCrossEntropyBackward0", elementwise, input, target, reduction)


@autocast_op("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross entropy of sigmoid(input), computed stably from the logits;
    ``pos_weight`` weighs the positive term (per class, broadcast over the last axis)."""
    reduction = _check_reduction(legacy_reduction(size_average, reduce, reduction))
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    w = _bce_weight(weight, target)
    pw = None if pos_weight is None else array_of(pos_weight)

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


# -- class labels --------------------------------------------------------------------------------

def _checked_labels(input: Tensor, target: Tensor, ignore_index: int) -> tuple:
    """(labels with ignored entries set to 0, mask of valid entries or None), with
    PyTorch's shape and range errors."""
    t = host(target)
    if t.dtype != np.int64 and t.dtype != np.uint8:
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{target.dtype.scalar_name}")
    shape = tuple(array_of(input).shape)
    cls_axis = 1 if len(shape) >= 2 else 0
    if t.shape != shape[:cls_axis] + shape[cls_axis + 1:]:
        if len(shape) >= 2 and t.ndim and t.shape[0] != shape[0]:
            raise ValueError(f"Expected input batch_size ({shape[0]}) to match target "
                             f"batch_size ({t.shape[0]}).")
        if len(shape) <= 2 and t.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        raise RuntimeError(f"size mismatch (got input: {list(shape)} , target: "
                           f"{list(t.shape)})")
    n_cls = shape[cls_axis]
    if t.size:  # the common labels, none ignored, in range: two reductions say so
        low, high = t.min(), t.max()
        if (ignore_index < low or ignore_index > high) and low >= 0 and high < n_cls:
            return t, None, cls_axis
    valid = t != ignore_index
    all_valid = valid.all()
    safe = t if all_valid else np.where(valid, t, 0)
    bad = (safe < 0) | (safe >= n_cls)
    if bad.any():
        raise IndexError(f"Target {int(safe[bad].flat[0])} is out of bounds.")
    return safe, (None if all_valid else valid), cls_axis


def _values_unknown(t: Tensor) -> bool:
    """Whether a tensor's values cannot be read here (it holds one value per example of
    a vmap, is abstract under jit, or is on the meta device)."""
    if t.is_meta:
        return True
    try:
        array_of(t).concrete()
    except ConcretizationTypeError:
        return True
    return False


def _traced_labels(input: Tensor, target: Tensor, weight: Tensor | None,
                   ignore_index: int) -> tuple:
    """(labels, weights, class axis) computed with funcgrad ops, for labels whose values
    are not known here: the shapes are checked, the range cannot be."""
    shape = tuple(input.shape)
    cls_axis = 1 if len(shape) >= 2 else 0
    t = array_of(target)
    if tuple(t.shape) != shape[:cls_axis] + shape[cls_axis + 1:]:
        raise RuntimeError(f"size mismatch (got input: {list(shape)} , target: "
                           f"{list(t.shape)})")
    valid = t != ignore_index
    safe = fnp.where(valid, t, 0)
    dtype = str(input.dtype).replace("torch.", "")
    w = array_of(weight)[safe] if weight is not None else fnp.ones(safe.shape, dtype)
    return safe, fnp.astype(w * valid, dtype), cls_axis


def _nll(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
         reduction: str, node: str) -> Tensor:
    if _values_unknown(target):
        labels, w, cls_axis = _traced_labels(input, target, weight, ignore_index)
        return apply(node, PrimCall(reduction_prims.nll_loss, {
            "axis": cls_axis, "reduction": reduction}, consts=(labels, w)), [input])
    safe, valid, cls_axis = _checked_labels(input, target, ignore_index)
    if weight is None and valid is None:
        w: Any = 1.0
    else:
        w_raw = host(weight)[safe] if weight is not None else np.ones(safe.shape)
        w_raw = w_raw if valid is None else w_raw * valid
        w = const_on(w_raw.astype(str(input.dtype).replace("torch.", "")), array_of(input))
    labels = const_on(safe, array_of(input))
    return apply(node, PrimCall(reduction_prims.nll_loss, {
        "axis": cls_axis, "reduction": reduction}, consts=(labels, w)), [input])


@autocast_op("nll_loss")
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices under log-probabilities (N, C, ...) or
    (C,): one `nll_loss` primitive; inputs with more than two dims are PyTorch's 2-D case
    (NllLoss2DBackward0), flattened to (N, C, 1, L) when they are not 4-D."""
    reduction = _check_reduction(legacy_reduction(size_average, reduce, reduction))
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim <= 2:
        return _nll(input, target, weight, ignore_index, reduction, "NllLossBackward0")
    if input.ndim == 4:
        return _nll(input, target, weight, ignore_index, reduction, "NllLoss2DBackward0")
    n, c = input.shape[:2]
    if target.ndim != input.ndim - 1 or tuple(target.shape) != (n,) + tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {shape_list([n] + list(input.shape[2:]))}, "
                           f"got {shape_list(target.shape)}")
    flat = input.contiguous().view(n, c, 1, -1)
    out = _nll(flat, target.contiguous().view(n, 1, -1), weight, ignore_index, reduction,
               "NllLoss2DBackward0")
    return out.view(*target.shape) if reduction == "none" else out


def _class_probability_loss(logp: Tensor, target: Tensor, weight: Tensor | None,
                            reduction: str, label_smoothing: float, ignore_index: int) -> Tensor:
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    cls_axis = 1 if logp.ndim >= 2 else 0
    n_cls = logp.shape[cls_axis]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_cls
    terms = logp * target
    if weight is not None:
        terms = terms * weight.view(*([1] * cls_axis + [n_cls] + [1] * (logp.ndim -
                                                                       cls_axis - 1)))
    if reduction == "mean":  # PyTorch divides by a C++ scalar here: DivBackward1
        count = logp.numel() / n_cls
        return apply("DivBackward1", lambda t: fnp.true_divide(t, count), [-terms.sum()])
    return -terms.sum() if reduction == "sum" else -terms.sum(cls_axis)


def _label_smoothing_loss(logp: Tensor, target: Tensor, weight: Tensor | None,
                          ignore_index: int, reduction: str, label_smoothing: float) -> Tensor:
    """(1 - eps) nll + eps / C * (the loss against uniform targets), as PyTorch's
    cross_entropy_loss_label_smoothing computes it."""
    cls_axis = 1 if logp.ndim >= 2 else 0
    n_cls = logp.shape[cls_axis]
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    ignored = target == ignore_index
    if weight is not None:
        shape = [1] * cls_axis + [n_cls] + [1] * (logp.ndim - cls_axis - 1)
        smooth = -(logp * weight.view(*shape)).sum(cls_axis)
    else:
        smooth = -logp.sum(cls_axis)
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == "mean":  # normalised by the weights of the kept targets, as nll_loss
        kept = ~ignored
        smooth = smooth.sum() / (weight.gather(0, target.masked_select(kept).flatten()).sum()
                                 if weight is not None else kept.sum())
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / n_cls)


@autocast_op("cross_entropy")
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """``nll_loss(log_softmax(input, class axis), target)``; ``target`` holds class indices
    or class probabilities (input's shape); label smoothing mixes in uniform targets."""
    reduction = _check_reduction(legacy_reduction(size_average, reduce, reduction))
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing:g}")
    cls_axis = 1 if input.ndim >= 2 else 0
    logp = FUNCTIONS["log_softmax"](input, cls_axis, None)
    if target.dtype.is_floating_point:
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(f"Expected target size {shape_list(input.shape)}, got "
                               f"{shape_list(target.shape)}")
        return _class_probability_loss(logp, target, weight, reduction, label_smoothing,
                                       ignore_index)
    if label_smoothing > 0:
        return _label_smoothing_loss(logp, target, weight, ignore_index, reduction,
                                     label_smoothing)
    return nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
