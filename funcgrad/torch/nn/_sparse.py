"""torch.nn.functional.embedding: rows of a weight matrix looked up by index.

One ``EmbeddingBackward0`` node gathering rows (its gradient scatters back, repeated
indices accumulating). ``padding_idx`` rows get no gradient and ``scale_grad_by_freq``
divides each row's gradient by how often it occurs, both through `stop_gradient`
(``v = sg(v) + (v - sg(v)) * c`` has the value v and the derivative c). ``max_norm``
renormalises the looked-up rows of the weight in place first, under no_grad, as PyTorch.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.torch._dispatch import apply
from funcgrad.torch._factories import tensor
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.autograd import grad_mode
from funcgrad.torch.nn._common import array_of, const_on, host

__all__ = ["embedding"]


def _renorm_rows(weight: Tensor, idx: np.ndarray, max_norm: float, norm_type: float) -> None:
    """weight[i] *= max_norm / (norm + 1e-7) for the looked-up rows whose norm exceeds
    ``max_norm`` (PyTorch's embedding_renorm_)."""
    rows = tensor(np.unique(idx), device=weight.device)
    with grad_mode.no_grad():
        picked = weight[rows]
        norms = picked.norm(norm_type, 1, keepdim=True)
        scale = (max_norm / (norms + 1e-7)).where(norms > max_norm, 1.0)
        weight[rows] = picked * scale.to(weight.dtype)


def _check(input: Tensor, weight: Tensor, padding_idx: int | None) -> int:
    if str(input.dtype) not in ("torch.int64", "torch.int32"):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {input.type()} instead "
                           "(while checking arguments for embedding)")
    if padding_idx is None:
        return -1
    rows = weight.shape[0]
    if not -rows <= padding_idx < rows:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx % rows


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``weight[input]``: one row of ``weight`` per index in ``input`` (any shape)."""
    pad = _check(input, weight, padding_idx)
    if sparse:
        raise NotImplementedError("embedding: sparse=True (sparse gradients) is not "
                                  "supported by funcgrad.torch; use sparse=False")
    if input.is_meta:  # no indices to check or to mask with: the shapes are the result
        return apply("EmbeddingBackward0", lambda w: fnp.take(w, array_of(input), axis=0),
                     [weight])
    raw = host(input)
    if raw.size and (raw.min() < 0 or raw.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, raw, max_norm, norm_type)
    idx = array_of(input)
    counts = np.bincount(raw.ravel(), minlength=weight.shape[0]) if scale_grad_by_freq \
        else None

    def f(w: Any) -> Any:
        rows = fnp.take(w, idx, axis=0)
        if pad < 0 and counts is None:
            return rows
        coeff = np.ones(raw.shape, w.dtype) if counts is None else \
            (1.0 / counts[raw]).astype(w.dtype)
        if pad >= 0:
            coeff = np.where(raw == pad, 0, coeff).astype(w.dtype)
        fixed = funcgrad.stop_gradient(rows)
        return fnp.add(fixed, fnp.multiply(fnp.subtract(rows, fixed),
                                           const_on(coeff[..., None], w)))
    return apply("EmbeddingBackward0", f, [weight])
