"""torch.nn.functional.ctc_loss: Connectionist Temporal Classification (Graves et al.).

The loss of a label sequence is minus the log of the total probability of every
frame-by-frame alignment that collapses to it (repeats merged, blanks removed). The forward
recursion runs in log space over the extended labels (a blank before, between and after
the labels): alpha_t(s) = lp_t(l'_s) + logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1) and, where
l'_s is a label unlike l'_{s-2}, alpha_{t-1}(s-2)). It is a composition of funcgrad.numpy
ops over the whole batch at once (each sample frozen after its own length), so the gradient
is the composition's: the true derivative in ``log_probs``. (PyTorch's kernel returns that
plus exp(log_probs) on valid frames, the form that assumes a log_softmax before it; through
a log_softmax, as CTC is used, the two agree.)
"""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch._dispatch import apply
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._common import const_on, host

__all__ = ["ctc_loss"]

_REDUCTIONS = ("none", "mean", "sum")


def _lengths(values: Any, name: str, batch: int) -> np.ndarray:
    out = np.asarray(host(values) if isinstance(values, Tensor) else values,
                     np.int64).reshape(-1)
    if out.size != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    return out


def _check(name: str, values: np.ndarray, low: int, high: int | None) -> None:
    where = "(while checking arguments for ctc_loss_allocate_outputs)"
    if values.size and values.min() < low:
        raise RuntimeError(f"Expected {name} to have value at least {low}, but got value "
                           f"{int(values.min())} {where}")
    if high is not None and values.size and values.max() > high:
        raise RuntimeError(f"Expected {name} to have value at most {high}, but got value "
                           f"{int(values.max())} {where}")


def _padded_targets(targets: np.ndarray, target_lengths: np.ndarray) -> np.ndarray:
    """(N, S) labels from PyTorch's two target layouts: padded (N, S) or concatenated."""
    longest = int(target_lengths.max()) if target_lengths.size else 0
    if targets.ndim == 2:
        if targets.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at "
                               f"dimension 1, but got size {targets.shape[1]} for argument #2"
                               " 'targets' (while checking arguments for "
                               "ctc_loss_allocate_outputs)")
        return targets[:, :max(longest, 1)]
    starts = np.concatenate([[0], np.cumsum(target_lengths)[:-1]])
    out = np.zeros((target_lengths.size, max(longest, 1)), np.int64)
    for n, (start, length) in enumerate(zip(starts, target_lengths)):
        out[n, :length] = targets[start:start + length]
    return out


def _extended(labels: np.ndarray, blank: int) -> tuple:
    """(l' with blanks interleaved (N, 2S + 1), where the skip from s - 2 is allowed)."""
    n, s = labels.shape
    ext = np.full((n, 2 * s + 1), blank, np.int64)
    ext[:, 1::2] = labels
    skip = np.zeros(ext.shape, bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    return ext, skip


def _logaddexp3(a: Any, b: Any, c: Any) -> Any:
    """log(e^a + e^b + e^c) that stays -inf, with zero (not NaN) gradients, where all three
    are -inf (the states no alignment reaches)."""
    top = fnp.maximum(fnp.maximum(a, b), c)
    shift = fnp.where(fnp.isfinite(top), top, 0.0)
    total = fnp.add(fnp.add(fnp.exp(fnp.subtract(a, shift)), fnp.exp(fnp.subtract(b, shift))),
                    fnp.exp(fnp.subtract(c, shift)))
    reached = fnp.greater(total, 0)
    return fnp.where(reached, fnp.add(shift, fnp.log(fnp.where(reached, total, 1.0))),
                     -np.inf)


def _nll(lp: Any, ext: np.ndarray, skip: np.ndarray, frames: np.ndarray,
         ends: np.ndarray) -> Any:
    """Minus log p(labels) per sample, for log_probs ``lp`` (T, N, C)."""
    steps, batch = lp.shape[0], lp.shape[1]
    index = const_on(np.broadcast_to(ext, (steps,) + ext.shape), lp)
    emit = fnp.take_along_axis(lp, index, axis=2)                    # (T, N, 2S + 1)
    none = fnp.full((batch, 1), -np.inf, lp.dtype)
    start = np.full(ext.shape, -np.inf)
    start[:, :2] = 0.0
    alpha = fnp.add(emit[0], const_on(start.astype(lp.dtype), lp))
    skip_mask = const_on(skip, lp)
    for t in range(1, steps):
        one = fnp.concatenate([none, alpha[:, :-1]], axis=1)
        two = fnp.where(skip_mask, fnp.concatenate([none, none, alpha[:, :-2]], axis=1),
                        -np.inf)
        moved = fnp.add(_logaddexp3(alpha, one, two), emit[t])
        alpha = fnp.where(const_on((t < frames)[:, None], lp), moved, alpha)
    last = const_on(np.stack([ends, np.maximum(ends - 1, 0)], 1), lp)
    finals = fnp.take_along_axis(alpha, last, axis=1)
    # a target of length 0 ends in the one blank state: count it once
    finals = fnp.where(const_on(np.stack([ends >= 0, ends > 0], 1), lp), finals, -np.inf)
    return fnp.negative(_logaddexp3(finals[:, 0], finals[:, 1],
                                    fnp.full((batch,), -np.inf, lp.dtype)))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """CTC loss of (T, N, C) (or unbatched (T, C)) log-probabilities against padded (N, S)
    or concatenated targets; 'mean' divides each loss by its target length, then averages."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.ndim == 2
    lp_t = log_probs.unsqueeze(1) if unbatched else log_probs
    steps, batch, classes = lp_t.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    frames = _lengths(input_lengths, "input_lengths", batch)
    counts = _lengths(target_lengths, "target_lengths", batch)
    _check("input_lengths", frames, 0, steps)
    _check("target_lengths", counts, 0, None)
    raw = host(targets).astype(np.int64)
    labels = _padded_targets(raw[None] if unbatched and raw.ndim == 1 else raw, counts)
    used = labels[np.arange(labels.shape[1])[None] < counts[:, None]]
    if used.size and (used.min() < 0 or used.max() >= classes):
        raise RuntimeError(f"ctc_loss: a target label is outside [0, {classes}): "
                           f"{int(used.min() if used.min() < 0 else used.max())}")
    ext, skip = _extended(labels, blank)

    def f(lp: Any) -> Any:
        loss = _nll(lp, ext, skip, frames, 2 * counts)
        if zero_infinity:
            loss = fnp.where(fnp.isinf(loss), 0.0, loss)
        if reduction == "mean":
            scale = const_on(np.maximum(counts, 1).astype(lp.dtype), lp)
            return fnp.mean(fnp.true_divide(loss, scale))
        if reduction == "sum":
            return fnp.sum(loss)
        return loss[0] if unbatched else loss
    return apply("CtcLossBackward0", f, [lp_t])
