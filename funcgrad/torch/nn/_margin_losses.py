"""More torch.nn.functional losses: the margin and embedding losses, the Poisson and
Gaussian likelihoods and the soft margins, each composed of tensor ops the way PyTorch
defines it (so gradients come from those ops), with PyTorch's argument order, checks and
error texts; ``reduction`` is 'none', 'mean' or 'sum' (the legacy ``size_average`` /
``reduce`` pair is translated as for the other losses).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch import _factories
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._dispatch import apply
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._common import host
from funcgrad.torch.nn._losses import _check_reduction, _reduce_tensor, legacy_reduction
from funcgrad.torch.nn._misc import pairwise_distance

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
           "triplet_margin_loss", "triplet_margin_with_distance_loss", "poisson_nll_loss",
           "gaussian_nll_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
           "multi_margin_loss", "multilabel_margin_loss"]


def _reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    return _check_reduction(legacy_reduction(size_average, reduce, reduction))


def _where(cond: Tensor, a: Tensor, b: Any) -> Tensor:
    return FUNCTIONS["where"](cond, a, b)


@autocast_op("margin_ranking_loss")
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -y (x1 - x2) + margin)."""
    reduction = _reduction(size_average, reduce, reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.size()}, input2: "
                           f"{input2.size()}, target: {target.size()} ")
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return _reduce_tensor(loss, reduction)


@autocast_op("hinge_embedding_loss")
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """x where y == 1, max(0, margin - x) where y == -1 (and the sum of both where y is
    neither, as PyTorch)."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = _factories.zeros_like(input)
    margin_part = _where(target != 1, (margin - input).clamp_min(0), zeros)
    self_part = _where(target != -1, input, zeros)
    return _reduce_tensor(margin_part + self_part, reduction)


@autocast_op("cosine_embedding_loss")
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where y == 1, max(0, cos(x1, x2) - margin) where y == -1; the
    cosine over the last dim, its squared norms offset by 1e-12."""
    reduction = _reduction(size_average, reduce, reduction)
    dim = target.ndim
    if dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if dim == 1 else 1
    if input1.ndim != want or input2.ndim != want:
        raise RuntimeError(f"{dim}D target tensor expects {want}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + 1e-12
    mag2 = (input2 * input2).sum(dim) + 1e-12
    cos = prod / (mag1 * mag2).sqrt()
    zeros = _factories.zeros_like(cos)
    loss = _where(target == 1, 1 - cos, zeros) + _where(target == -1,
                                                        (cos - margin).clamp_min(0), zeros)
    return _reduce_tensor(loss, reduction)


def _check_margin(margin: float) -> None:
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not a == p == n:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a}D, positive "
                           f"{p}D, and negative {n}D inputs")


def _triplet(anchor: Tensor, positive: Tensor, negative: Tensor, distance: Callable,
             margin: float, swap: bool, reduction: str) -> Tensor:
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = FUNCTIONS["minimum"](d_neg, distance(positive, negative))
    return _reduce_tensor((margin + d_pos - d_neg).clamp_min(0), reduction)


@autocast_op("triplet_margin_loss")
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with d the p-norm pairwise distance;
    ``swap`` uses min(d(a, n), d(p, n))."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_margin(margin)
    _check_triplet_dims(anchor, positive, negative)
    return _triplet(anchor, positive, negative,
                    lambda x, y: pairwise_distance(x, y, p, eps), margin, swap, reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """The triplet margin loss with any distance (default: pairwise_distance)."""
    reduction = _check_reduction(reduction)
    _check_margin(margin)
    _check_triplet_dims(anchor, positive, negative)
    return _triplet(anchor, positive, negative, distance_function or pairwise_distance,
                    margin, swap, reduction)


@autocast_op("poisson_nll_loss")
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,
                     full: bool = False, size_average: Any = None, eps: float = 1e-8,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """exp(x) - y x for log-rate inputs, else x - y log(x + eps); ``full`` adds
    Stirling's approximation of log(y!) where y > 1."""
    reduction = _reduction(size_average, reduce, reduction)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        safe = _where(target > 1, target, _factories.ones_like(target))
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce_tensor(loss, reduction)


def _gaussian_variance(input: Tensor, var: Any) -> Tensor:
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _factories.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    shape, vshape = tuple(input.shape), tuple(var.shape)
    if vshape == shape:
        return var
    if shape[:-1] == vshape:
        return var.unsqueeze(-1)
    if len(shape) == len(vshape) and sum(y for x, y in zip(shape, vshape) if x != y) == 1:
        return var
    raise ValueError("var is of incorrect size")


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Any, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """0.5 (log var + (x - y)^2 / var) (+ 0.5 log 2 pi with ``full``); var is clamped at
    eps in value only (its gradient passes through the clamp, as PyTorch's no_grad
    clamp)."""
    var = _gaussian_variance(input, var)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var + (var.clamp(min=eps) - var).detach()
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce_tensor(loss, reduction)


@autocast_op("soft_margin_loss")
def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-y x))."""
    reduction = _reduction(size_average, reduce, reduction)
    return _reduce_tensor((-input * target).exp().log1p(), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Tensor:
    """The mean over classes of -(y log sigmoid(x) + (1 - y) log sigmoid(-x))."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    logsig = (lambda t: apply("LogSigmoidBackward0",
                              lambda v: fnp.negative(fnp.logaddexp(fnp.negative(v), 0)), [t]))
    loss = -(target * logsig(input) + (1 - target) * logsig(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce_tensor(loss, reduction)


def _class_targets(input: Tensor, target: Tensor) -> tuple:
    """(input as (N, C), the target's values as host ints), with PyTorch's check of the
    input's shape."""
    if input.ndim > 2 or (input.ndim == 2 and input.shape[1] == 0) or \
            (input.ndim <= 1 and input.numel() == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    x = input.reshape(1, -1) if input.ndim <= 1 else input
    return x, host(target).astype(np.int64)


@autocast_op("multi_margin_loss")
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: Any = None,
                      reduce: Any = None, reduction: str = "mean") -> Tensor:
    """For each sample, the sum over the other classes j of
    max(0, margin - x[y] + x[j])^p (times weight[y]), divided by the class count."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    x, labels = _class_targets(input, target)
    n, c = x.shape
    labels = labels.reshape(-1)
    if labels.size != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal "
                           f"to the number of input samples (batch size). Expected target "
                           f"size [{n}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if labels.size and (labels.min() < 0 or labels.max() >= c):
        raise RuntimeError("target out of range")
    index = _factories.tensor(labels.reshape(n, 1), device=input.device)
    picked = x.gather(1, index)
    terms = (margin - picked + x).clamp_min(0)
    if p == 2:
        terms = terms * terms
    if weight is not None:
        terms = terms * weight.index_select(0, index.reshape(-1)).reshape(n, 1)
    others = _factories.tensor(np.arange(c)[None, :] != labels[:, None], device=input.device)
    loss = (terms * others).sum(1) / c
    if input.ndim <= 1:
        loss = loss.reshape(())
    return _reduce_tensor(loss, reduction)


@autocast_op("multilabel_margin_loss")
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                           reduce: Any = None, reduction: str = "mean") -> Tensor:
    """For each sample, the sum over its target classes j (the entries of ``target`` up to
    the first -1) and the other classes k of max(0, 1 - (x[j] - x[k])), divided by the
    class count."""
    reduction = _reduction(size_average, reduce, reduction)
    x, labels = _class_targets(input, target)
    n, c = x.shape
    labels = labels.reshape(n, -1) if labels.size else labels.reshape(n, 0)
    if labels.shape != (n, c):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    pairs = np.zeros((n, c, c), dtype=bool)  # pairs[i, j, k]: j a target of i, k not
    for i in range(n):
        stop = np.flatnonzero(labels[i] < 0)
        chosen = labels[i, :stop[0] if stop.size else c]
        if chosen.size and (chosen.min() < 0 or chosen.max() >= c):
            raise RuntimeError("argument #2 'target' is out of range")
        is_target = np.zeros(c, dtype=bool)
        is_target[chosen] = True
        pairs[i] = is_target[:, None] & ~is_target[None, :]
    hinge = (1 - (x.unsqueeze(2) - x.unsqueeze(1))).clamp_min(0)
    loss = (hinge * _factories.tensor(pairs, device=input.device)).sum((1, 2)) / c
    if input.ndim <= 1:
        loss = loss.reshape(())
    return _reduce_tensor(loss, reduction)
