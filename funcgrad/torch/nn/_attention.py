"""torch.nn.functional attention: scaled_dot_product_attention and the multi-head forward.

``scaled_dot_product_attention`` is one node (PyTorch's CPU flash kernel,
``ScaledDotProductFlashAttentionForCpuBackward0``): softmax(q k^T * scale + bias) v, the
bias built from the boolean (True = attend) or additive mask and the causal mask (both
combine, as on PyTorch's CPU). A query row that may attend to nothing gives zeros and no
gradient (PyTorch's flash kernel and safe softmax) instead of NaN. Where PyTorch takes its
math path instead (not 4-D, head sizes or batches that differ, dropout, a mask requiring
grad), the node is named as that path's last op.

``multi_head_attention_forward`` follows PyTorch's function op for op (packed in-projection,
head split, baddbmm with the mask, softmax, dropout, bmm, out-projection; or
scaled_dot_product_attention when no weights are needed), so values, gradients and
``grad_fn`` names match PyTorch's, as do its mask conventions (True = masked) and checks.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
import funcgrad.scipy.special as sps
from funcgrad.torch import _factories
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._dispatch import apply
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._common import array_of, const_on, host
from funcgrad.torch.nn._conv import pad
from funcgrad.torch.nn._dropout import dropout
from funcgrad.torch.nn._linear import linear
from funcgrad.torch._autocast import autocast_op

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _attention_bias(L: int, S: int, attn_mask: Tensor | None, is_causal: bool,
                    dtype: np.dtype) -> tuple:
    """(constant additive bias or None, mask input that requires grad or None,
    rows that may attend somewhere or None if all may)."""
    bias = None
    if is_causal:
        bias = np.where(np.tril(np.ones((L, S), bool)), 0.0, -np.inf)
    grad_mask = None
    if attn_mask is not None:
        if attn_mask.dtype == D.bool:
            part = np.where(host(attn_mask), 0.0, -np.inf)
        elif attn_mask.requires_grad:
            grad_mask, part = attn_mask, np.zeros(())
        else:
            part = host(attn_mask).astype(np.float64)
        bias = part if bias is None else bias + part
    if bias is None:
        return None, grad_mask, None
    rows = np.isfinite(bias).any(-1, keepdims=True) | np.isnan(bias).any(-1, keepdims=True)
    return bias.astype(dtype), grad_mask, None if rows.all() else rows


def _mismatched_product(query: Tensor, key: Tensor) -> None:
    """PyTorch's error for query @ key^T of different last sizes: its batched product's
    text (the batch axes flattened), or its matrix product's for 2-D inputs."""
    L, E, S, Ek = query.shape[-2], query.shape[-1], key.shape[-2], key.shape[-1]
    if query.ndim == 2 and key.ndim == 2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({L}x{E} and "
                           f"{Ek}x{S})")
    batch = math.prod(np.broadcast_shapes(tuple(query.shape[:-2]), tuple(key.shape[:-2])))
    raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                       f"[{batch}, {E}] but got: [{batch}, {Ek}].")


@autocast_op("scaled_dot_product_attention")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value over the last two axes (batch axes
    broadcast); ``scale`` defaults to 1 / sqrt(E); ``enable_gqa`` shares each key/value
    head among query heads (axis -3)."""
    L, S, E = query.shape[-2], key.shape[-2], query.shape[-1]
    if key.shape[-1] != E:
        _mismatched_product(query, key)
    factor = 1.0 / math.sqrt(E) if scale is None else scale
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        repeats = query.shape[-3] // key.shape[-3]
        key = _repeat_heads(key, repeats)
        value = _repeat_heads(value, repeats)
    dtype = np.dtype(str(query.dtype).replace("torch.", ""))
    bias, grad_mask, rows = _attention_bias(L, S, attn_mask, is_causal, dtype)
    keep = None
    if dropout_p > 0.0:
        keep = (_factories.rand(*query.shape[:-1], S) >= dropout_p) / (1 - dropout_p)

    def f(q: Any, k: Any, v: Any, *m: Any) -> Any:
        scores = fnp.multiply(fnp.matmul(q, fnp.swapaxes(k, -1, -2)), factor)
        if bias is not None:
            scores = fnp.add(scores, const_on(bias, q))
        if m:
            scores = fnp.add(scores, m[0])
        if rows is not None:  # rows with nowhere to attend: zeros, not NaN
            ok = const_on(rows, q)
            scores = fnp.where(ok, scores, 0)
        weights = sps.softmax(scores, axis=-1)
        if rows is not None:
            weights = fnp.where(ok, weights, 0)
        if keep is not None:
            weights = fnp.multiply(weights, fnp.astype(array_of(keep), weights.dtype))
        return fnp.matmul(weights, v)
    name = _node_name(query, key, value, dropout_p > 0.0 or grad_mask is not None)
    return apply(name, f, [query, key, value] + ([grad_mask] if grad_mask is not None else []))


def _node_name(q: Tensor, k: Tensor, v: Tensor, math_path: bool) -> str:
    """The node PyTorch's CPU dispatch ends in: its flash kernel for 4-D inputs of one
    head size and batch, else its math composition (a matmul: MmBackward0 for matrices)."""
    flash = (q.ndim == k.ndim == v.ndim == 4 and q.shape[-1] == k.shape[-1] == v.shape[-1]
             and q.shape[0] == k.shape[0] == v.shape[0] and not math_path)
    if flash:
        return "ScaledDotProductFlashAttentionForCpuBackward0"
    return "MmBackward0" if q.ndim == k.ndim == v.ndim == 2 else "UnsafeViewBackward0"


def _repeat_heads(t: Tensor, repeats: int) -> Tensor:
    """Each head (axis -3) repeated ``repeats`` times in place (repeat_interleave)."""
    shape = tuple(t.shape)
    expanded = t.unsqueeze(-3).expand(*shape[:-3], shape[-3], repeats, *shape[-2:])
    return expanded.reshape(*shape[:-3], shape[-3] * repeats, *shape[-2:])


# -- multi-head attention -----------------------------------------------------------------------

def canonical_mask(mask: Tensor | None, mask_name: str, other_type: Any, other_name: str,
                   target_type: Any, check_other: bool = True) -> Tensor | None:
    """A boolean mask (True = masked) as an additive float mask of ``target_type``."""
    if mask is None:
        return None
    floating = mask.dtype.is_floating_point
    if mask.dtype != D.bool and not floating:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=3)
    if floating:
        return mask
    return _factories.zeros(*mask.shape, dtype=target_type, device=mask.device).masked_fill_(
        mask, float("-inf"))


def _shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Any,
                 attn_mask: Any, num_heads: int) -> bool:
    kind = "batched (3-D)" if query.ndim == 3 else "unbatched (2-D)"
    if query.ndim not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor")
    want = query.ndim
    if key.ndim != want or value.ndim != want:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {want}-D"
                             f" but found {key.ndim}-D and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != want - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{want - 1}-D but found {key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D "
                                 f"or 3-D but found {attn_mask.ndim}-D tensor instead")
        if want == 2 and attn_mask.ndim == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
    return want == 3


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor,
                          b: Tensor | None) -> tuple:
    """q, k, v projected by the packed (3E, E) weight, sharing the product when the
    inputs are the same tensor (as PyTorch does)."""
    E = q.shape[-1]
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(
                -2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        kv = linear(k, w_kv, b_kv).unflatten(-1, (2, E)).unsqueeze(0).transpose(
            0, -2).squeeze(-2).contiguous()
        return linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _check_mask_size(attn_mask: Tensor, tgt_len: int, src_len: int, heads: int) -> Tensor:
    if attn_mask.ndim == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                               f"should be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if tuple(attn_mask.shape) != (heads, tgt_len, src_len):
        raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                           f"be {(heads, tgt_len, src_len)}.")
    return attn_mask


def _baddbmm(mask: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """mask + a @ b (PyTorch's baddbmm, one node)."""
    return apply("BaddbmmBackward0", lambda m, x, y: fnp.add(m, fnp.matmul(x, y)),
                 [mask, a, b])


def _project(query: Tensor, key: Tensor, value: Tensor, in_proj_weight: Any,
             in_proj_bias: Any, separate: bool, q_w: Any, k_w: Any, v_w: Any) -> tuple:
    """q, k, v: the packed in-projection, or three separate weights (kdim/vdim)."""
    if separate:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
        b_q, b_k, b_v = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        return linear(query, q_w, b_q), linear(key, k_w, b_k), linear(value, v_w, b_v)
    if tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    return _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)


def _pad_masks(masks: tuple) -> tuple:
    """Both masks (each may be None) with one more key position that nothing masks."""
    return tuple(None if m is None else pad(m, (0, 1)) for m in masks)


def _heads(t: Tensor, static: Tensor | None, heads: int, head_dim: int) -> Tensor:
    """(S, N, E) as (N * heads, S, head_dim), or the given static keys/values."""
    if static is not None:
        return static
    return t.view(t.shape[0], heads, head_dim).transpose(0, 1)


def _merge_padding(attn_mask: Tensor | None, key_padding_mask: Tensor | None, bsz: int,
                   num_heads: int, src_len: int) -> Tensor | None:
    """The attention mask plus the key padding mask repeated for every head."""
    if key_padding_mask is None:
        return attn_mask
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                             f"{key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")
    padding = key_padding_mask.view(bsz, 1, 1, src_len).expand(
        -1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
    return padding if attn_mask is None else attn_mask + padding


def _attend_with_weights(q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None,
                         dropout_p: float) -> tuple:
    """(output, weights) of the explicit path, baddbmm with the mask (PyTorch's order)."""
    q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
    weights = (_baddbmm(attn_mask, q_scaled, k.transpose(-2, -1)) if attn_mask is not None
               else FUNCTIONS["bmm"](q_scaled, k.transpose(-2, -1)))
    weights = FUNCTIONS["softmax"](weights, -1, None)
    if dropout_p > 0.0:
        weights = dropout(weights, p=dropout_p)
    return FUNCTIONS["bmm"](weights, v), weights


def _masks(query: Tensor, attn_mask: Any, key_padding_mask: Any, is_causal: bool,
           need_weights: bool) -> tuple:
    """(attn_mask, key_padding_mask, is_causal) as PyTorch canonicalises them."""
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask",
                                      None if attn_mask is None else attn_mask.dtype,
                                      "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        return None, None, True  # scaled_dot_product_attention applies the causal mask
    attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
    return attn_mask, key_padding_mask, is_causal and key_padding_mask is None


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor,
                                 embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight: Tensor | None, in_proj_bias: Tensor | None,
                                 bias_k: Tensor | None, bias_v: Tensor | None,
                                 add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight: Tensor, out_proj_bias: Tensor | None,
                                 training: bool = True, key_padding_mask: Tensor | None = None,
                                 need_weights: bool = True, attn_mask: Tensor | None = None,
                                 use_separate_proj_weight: bool = False,
                                 q_proj_weight: Tensor | None = None,
                                 k_proj_weight: Tensor | None = None,
                                 v_proj_weight: Tensor | None = None,
                                 static_k: Tensor | None = None, static_v: Tensor | None = None,
                                 average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple:
    """Multi-head attention on (L, N, E) / (S, N, E) inputs (or unbatched (L, E)):
    (output, attention weights averaged over heads or per head, or None)."""
    batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    attn_mask, key_padding_mask, is_causal = _masks(query, attn_mask, key_padding_mask,
                                                    is_causal, need_weights)
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    q, k, v = _project(query, key, value, in_proj_weight, in_proj_bias,
                       use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight)
    if attn_mask is not None:
        attn_mask = _check_mask_size(attn_mask, tgt_len, key.shape[0], bsz * num_heads)
    if bias_k is not None and bias_v is not None:
        k = FUNCTIONS["cat"]([k, bias_k.repeat(1, bsz, 1)])
        v = FUNCTIONS["cat"]([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _pad_masks((attn_mask, key_padding_mask))
    heads = bsz * num_heads
    q = q.view(tgt_len, heads, head_dim).transpose(0, 1)
    k, v = _heads(k, static_k, heads, head_dim), _heads(v, static_v, heads, head_dim)
    if add_zero_attn:
        zeros = _factories.zeros(heads, 1, head_dim, dtype=k.dtype, device=k.device)
        k, v = FUNCTIONS["cat"]([k, zeros], 1), FUNCTIONS["cat"]([v, zeros], 1)
        attn_mask, key_padding_mask = _pad_masks((attn_mask, key_padding_mask))
    src_len = k.shape[1]
    attn_mask = _merge_padding(attn_mask, key_padding_mask, bsz, num_heads, src_len)
    dropout_p = dropout_p if training else 0.0
    if need_weights:
        out, weights = _attend_with_weights(q, k, v, attn_mask, dropout_p)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        return (out, weights) if batched else (out.squeeze(1), weights.squeeze(0))
    if attn_mask is not None:
        attn_mask = (attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 and attn_mask.ndim == 3
                     else attn_mask.view(bsz, num_heads, -1, src_len))
    out = scaled_dot_product_attention(q.view(bsz, num_heads, tgt_len, head_dim),
                                       k.view(bsz, num_heads, src_len, head_dim),
                                       v.view(bsz, num_heads, src_len, head_dim), attn_mask,
                                       dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    return (out if batched else out.squeeze(1)), None
