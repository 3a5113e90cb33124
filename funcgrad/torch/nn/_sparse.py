"""torch.nn.functional.embedding: rows of a weight matrix looked up by index; and
embedding_bag, the sums, means or maxima of bags of such rows.

One ``EmbeddingBackward0`` node gathering rows (its gradient scatters back, repeated
indices accumulating). ``padding_idx`` rows get no gradient and ``scale_grad_by_freq``
divides each row's gradient by how often it occurs, both through `stop_gradient`
(``v = sg(v) + (v - sg(v)) * c`` has the value v and the derivative c). ``max_norm``
renormalises the looked-up rows of the weight in place first, under no_grad, as PyTorch.
With ``sparse=True`` the node's input is the looked-up rows (`gathered_rows`), whose
gradient becomes a sparse ``weight.grad`` of those rows.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.core import Tracer
from funcgrad.torch._dispatch import apply
from funcgrad.torch._factories import tensor, zeros
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.nn._common import array_of, const_on, host
from funcgrad.torch.sparse._tensor import gathered_rows

__all__ = ["embedding", "embedding_bag"]


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
    if input.is_meta:  # no indices to check or to mask with: the shapes are the result
        return apply("EmbeddingBackward0", lambda w: fnp.take(w, array_of(input), axis=0),
                     [weight])
    if isinstance(array_of(input), Tracer) and max_norm is None and not scale_grad_by_freq:
        return _traced_embedding(array_of(input), weight, pad)
    raw = host(input)
    if raw.size and (raw.min() < 0 or raw.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, raw, max_norm, norm_type)
    idx = array_of(input)
    counts = np.bincount(raw.ravel(), minlength=weight.shape[0]) if scale_grad_by_freq \
        else None

    # with ``sparse``, the looked-up rows are a leaf of their own: weight.grad is sparse
    gathered = sparse and weight.requires_grad and grad_mode.is_grad_enabled()
    source = gathered_rows(weight, raw.ravel(), pad) if gathered else weight

    def f(w: Any) -> Any:
        rows = w.reshape(raw.shape + w.shape[1:]) if gathered else fnp.take(w, idx, axis=0)
        if pad < 0 and counts is None:
            return rows
        coeff = np.ones(raw.shape, w.dtype) if counts is None else \
            (1.0 / counts[raw]).astype(w.dtype)
        if pad >= 0:
            coeff = np.where(raw == pad, 0, coeff).astype(w.dtype)
        fixed = funcgrad.stop_gradient(rows)
        return fnp.add(fixed, fnp.multiply(fnp.subtract(rows, fixed),
                                           const_on(coeff[..., None], w)))
    return apply("EmbeddingBackward0", f, [source])


def _traced_embedding(idx: Any, weight: Tensor, pad: int) -> Tensor:
    """`embedding` of traced indices (under torch.compile): the rows, with the padding
    row's gradient masked by the indices' values when the program runs (the bounds are
    checked by the program's gather)."""
    def f(w: Any) -> Any:
        rows = fnp.take(w, idx, axis=0, mode="raise")
        if pad < 0:
            return rows
        fixed = funcgrad.stop_gradient(rows)
        mask = fnp.expand_dims(fnp.not_equal(idx, pad), -1).astype(w.dtype)
        return fnp.add(fixed, fnp.multiply(fnp.subtract(rows, fixed), mask))
    return apply("EmbeddingBackward0", f, [weight])


def _type_name(value: Any) -> str:
    return "<class 'torch.Tensor'>" if isinstance(value, Tensor) else str(type(value))


def _bag_bounds(input: Tensor, offsets: Tensor | None, include_last_offset: bool) -> tuple:
    """(flat indices as a tensor, host (start, end) of each bag), with PyTorch's checks."""
    if input.ndim not in (1, 2):
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {_type_name(offsets)}")
        bags, length = input.shape
        starts = np.arange(bags) * length
        return input.reshape(-1), list(zip(starts, starts + length))
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    cuts = host(offsets).astype(np.int64)
    n = input.shape[0]
    if cuts.size and cuts[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the "
                           "mini-batch has to start from position 0. However, got "
                           f"{int(cuts[0])}")
    if cuts.size and cuts[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {int(cuts[-1])}")
    if include_last_offset and cuts.size and cuts[-1] != n:
        raise RuntimeError(f"embedding_bag: with include_last_offset=True the last offset "
                           f"ends the last bag and must equal the number of indices ({n}), "
                           f"but got {int(cuts[-1])}")
    if np.any(np.diff(cuts) < 0):
        raise RuntimeError(f"embedding_bag: offsets have to be non-decreasing, but got "
                           f"{cuts.tolist()}")
    ends = cuts[1:] if include_last_offset else np.append(cuts[1:], n)
    starts = cuts[:-1] if include_last_offset else cuts
    return input, list(zip(starts, ends))


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """One row per bag: the sum ('sum', each row times its ``per_sample_weights``), mean
    or elementwise max of the looked-up rows of its indices, entries equal to
    ``padding_idx`` left out (an empty bag gives zeros). Bags are the rows of a 2-D
    ``input``, or the runs of a 1-D one starting at ``offsets``."""
    if str(input.dtype) not in ("torch.int64", "torch.int32"):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {input.type()} instead "
                           "(while checking arguments for embedding_bag)")
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.size()}) "
                         f"is not None, then it must have the same shape as the input "
                         f"({input.size()})")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    flat, bounds = _bag_bounds(input, offsets, include_last_offset)
    raw = host(flat)
    rows_total = weight.shape[0]
    bad = (raw < 0) | (raw >= rows_total)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise RuntimeError(f"Index {at} of input takes value {int(raw[at])} which is not in "
                           f"the valid range [0, {rows_total})")
    rows_n = weight.shape[0]
    if padding_idx is not None and not -rows_n <= padding_idx < rows_n:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, {-rows_n} "
                           f"through {rows_n - 1}, but got {padding_idx}")
    pad = _check(flat, weight, padding_idx)
    rows = embedding(flat, weight, None, max_norm, norm_type, scale_grad_by_freq, sparse)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    kept = raw != pad
    if mode == "max":
        return _bag_max(rows, bounds, kept, weight)
    mix = np.zeros((len(bounds), raw.size))
    for b, (start, end) in enumerate(bounds):
        members = np.arange(start, end)[kept[start:end]]
        if members.size:
            mix[b, members] = 1.0 / members.size if mode == "mean" else 1.0
    return tensor(mix, device=weight.device).to(rows.dtype) @ rows


def _bag_max(rows: Tensor, bounds: list, kept: np.ndarray, weight: Tensor) -> Tensor:
    """The elementwise max of each bag's kept rows (zeros for an empty bag)."""
    out = []
    for start, end in bounds:
        members = np.arange(start, end)[kept[start:end]]
        if members.size:
            out.append(rows.index_select(0, tensor(members, device=weight.device)).max(0)[0])
        else:
            out.append(zeros(weight.shape[1], dtype=weight.dtype, device=weight.device))
    return FUNCTIONS["stack"](out, 0)
