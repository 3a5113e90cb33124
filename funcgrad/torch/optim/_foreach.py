"""The optimizers' fused updates: the update equations of a whole parameter group run on
the parameters' and states' memory directly, with in-place ufuncs (PyTorch's ``foreach``
path, the default here as on CUDA).

Each function below writes the same ufunc calls, in the same order and on the same dtypes
(Python numbers as weakly typed scalars), as the optimizer's per-tensor path spells with
tensor ops, so both give the same bits; the per-tensor path stays for what has no memory
to write (traced values, under ``torch.func`` or ``torch.compile``), for
``differentiable=True`` (the update is recorded) and for ``foreach=False``. `buffers`
says which group the fused path may take.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from funcgrad.torch._runtime import storage as _storage
from funcgrad.torch._tensor import array_of

__all__ = ["buffers", "bump", "sgd", "adam"]


def buffers(tensors: Sequence, written: Sequence) -> list | None:
    """The numpy arrays of ``tensors`` (None if any has no plain numpy memory: traced, on
    a GPU, meta); of those at the positions ``written`` also refused (None) where a write
    would not be the in-place op's: read-only memory, elements sharing memory (an
    ``expand``), memory borrowed from a computed gradient."""
    out = [_storage.raw_of(a) for a in map(array_of, tensors)]
    if not all([type(raw) is np.ndarray for raw in out]):
        return None
    for k in written:
        t = tensors[k]
        flags = out[k].flags
        if not flags.writeable or t._is_borrowed() or not (
                flags.c_contiguous or flags.f_contiguous  # (then no overlap: skip the walk)
        ) and _storage.overlapping(array_of(t)):
            return None
    return out


def bump(tensors: Sequence) -> None:
    """Bump the version counters of tensors written in place, as their in-place ops do."""
    for t in tensors:
        t._bump_version()


def sgd(params: Sequence[np.ndarray], grads: Sequence[np.ndarray], bufs: Sequence,
        group: dict, lr: float) -> list:
    """SGD's update of each of ``params`` in place (the group's options read once); returns
    per parameter its new momentum buffer where it had none (``bufs`` None there, momentum
    on), else None (its buffer is updated in place)."""
    maximize, wd, momentum = group["maximize"], group["weight_decay"], group["momentum"]
    if not maximize and wd == 0 and momentum == 0:  # plain SGD: one update per parameter
        for p, g in zip(params, grads):
            np.add(p, np.multiply(g, -lr), out=p, casting="same_kind")
        return [None] * len(params)
    news = []
    for p, g, buf in zip(params, grads, bufs):
        if maximize:
            g = np.negative(g)
        if wd != 0:
            g = np.add(g, np.multiply(wd, p))
        new = None
        if momentum != 0:
            if buf is None:
                buf = new = g.copy()
            else:
                np.multiply(momentum, buf, out=buf)
                np.add(buf, np.multiply(1 - group["dampening"], g), out=buf)
            g = np.add(g, np.multiply(momentum, buf)) if group["nesterov"] else buf
        np.add(p, np.multiply(g, -lr), out=p, casting="same_kind")
        news.append(new)
    return news


def adam(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray,
         v_max: np.ndarray | None, step: np.ndarray, group: dict, lr: float) -> None:
    """Adam's (AdamW's) update of ``p`` and its state, all in place."""
    beta1, beta2 = group["betas"]
    wd = group["weight_decay"]
    if group["maximize"]:
        g = np.negative(g)
    step += 1
    if wd != 0:
        if group["decoupled_weight_decay"]:
            np.multiply(p, 1 - lr * wd, out=p)
        else:
            g = np.add(g, np.multiply(p, wd))
    t = np.subtract(g, m)  # m = lerp(m, g, 1 - beta1) = m + (g - m) * (1 - beta1)
    np.add(m, np.multiply(t, 1 - beta1, out=t), out=m)
    np.multiply(v, beta2, out=v)
    t = np.multiply(g, g)
    np.add(v, np.multiply(t, 1 - beta2, out=t), out=v)
    n = step.item()
    step_size = lr / (1 - beta1 ** n)
    bias_correction2_sqrt = math.sqrt(1 - beta2 ** n)
    if v_max is not None:
        np.maximum(v_max, v, out=v_max)
    denom = np.sqrt(v if v_max is None else v_max)
    np.add(np.true_divide(denom, bias_correction2_sqrt, out=denom), group["eps"], out=denom)
    np.add(p, np.multiply(np.true_divide(m, denom, out=denom), -step_size, out=denom), out=p)


