"""The cases of test_facade_vs_pytorch.py, part 2: torch.nn.functional beyond its first
functions (activations, convolutions, pooling, resampling, normalisation, attention, losses,
dropout) and the remaining functions of funcgrad.torch (select, the default device, the
generator state, multinomial), and more cases for names of facade_table.py (a random draw
of F.dropout; remainder, floor_divide and fmod over every pair of edge values, with the
signs of their zeros). Numpy only; facade_table's inputs and helpers.

Random ops (dropout, multinomial) are compared where they are deterministic (p = 0 or 1,
eval mode, one-hot weights) and by the structure every draw must have (a dropped element
is 0 and a kept one scaled by 1 / (1 - p), whole channels at once for the feature forms);
the streams differ from PyTorch's by design.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from facade_table import TABLE as FIRST_TABLE
from facade_table import (BATCH, EDGES, F32, INTS, M23, M23_F32, POS, PROBS, SCALAR, Const,
                          a, c, known)

_R = np.random.RandomState(1)
X1 = _R.uniform(-2, 2, (2, 3, 5))          # (N, C, L)
X2 = _R.uniform(-2, 2, (2, 3, 4, 5))       # (N, C, H, W)
X3 = _R.uniform(-2, 2, (1, 2, 3, 4, 4))    # (N, C, D, H, W)
X6 = _R.uniform(-2, 2, (2, 6, 5))          # six channels (groups)
KINKS = a([-4.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 4.0])
# ties inside pooling windows, a NaN and -inf (a window holding NaN has the max NaN)
POOL_TIES = a([[[1.0, 1.0, 2.0, 2.0, -np.inf, -np.inf, 0.0, np.nan, 3.0]]])


def _F(T: Any) -> Any:
    return T.nn.functional


def _inplace(name: str, *args: Any) -> Any:
    """``F.name(x * 1, *args, inplace=True)`` on a non-leaf copy; (result, is it x)."""
    def call(T: Any, x: Any) -> Any:
        y = x * 1
        out = getattr(_F(T), name)(y, *args, inplace=True)
        return out, out is y
    return call


TABLE: dict = {}

# -- activations ------------------------------------------------------------------------------
TABLE.update({
    "F.celu": [c(EDGES), c(M23, 0.5), c(M23_F32), c(M23, 0.0), c(EDGES, call=_inplace("celu"))],
    "F.selu": [c(EDGES), c(M23), c(M23_F32), c(EDGES, call=_inplace("selu"))],
    "F.mish": [c(EDGES), c(M23), c(M23_F32), c(EDGES, call=_inplace("mish"))],
    "F.hardswish": [c(EDGES), c(KINKS), c(M23 * 3), c(KINKS, call=_inplace("hardswish"))],
    "F.hardsigmoid": [c(EDGES), c(KINKS), c(M23 * 3), c(KINKS, call=_inplace("hardsigmoid"))],
    "F.tanhshrink": [c(EDGES), c(M23), c(M23_F32)],
    "F.softshrink": [c(EDGES), c(KINKS), c(M23, 1.0), c(M23, -1.0), c(M23_F32, 0.0)],
    "F.hardshrink": [c(EDGES), c(KINKS), c(M23, 1.0), c(M23_F32, 0.0)],
    "F.threshold": [c(EDGES, 0.5, -1.0), c(KINKS, 0.0, 0.0), c(M23, 1.0, 20.0),
                    c(INTS, 1, 5), c(EDGES, call=_inplace("threshold", 0.5, 2.0))],
    "F.threshold_": [c(EDGES, call=lambda T, x: (lambda y: (
        _F(T).threshold_(y, 0.5, 2.0) is y, y))(x * 1))],
    "F.glu": [c(X2), c(X2, 2), c(X6, 1), c(M23, 1), c(M23_F32[:, :2]), c(SCALAR)],
    "F.prelu": [c(X2, a([0.25])), c(X2, a([0.1, -0.2, 0.3])), c(EDGES, a([0.25])),
                c(X2, a([0.1, 0.2])), c(X1, a([0.5, 1.5, -1.0]))],
    "F.softmin": [c(M23, 1), c(M23, 0), c(M23_F32, -1), c(M23, 1, dtype=F32),
                  c(a([[-np.inf, 0.0, 1.0]]), 1)],
})

# -- convolutions, blocks, padding ----------------------------------------------------------
_W1, _W2 = _R.uniform(-1, 1, (4, 3, 2)), _R.uniform(-1, 1, (4, 3, 2, 2))
_W3, _BIAS = _R.uniform(-1, 1, (2, 2, 2, 2, 2)), _R.uniform(-1, 1, (4,))
_DEPTHWISE1 = _R.uniform(-1, 1, (6, 1, 3))             # groups=3 on X1: 2 filters a channel
_T1, _T2 = _R.uniform(-1, 1, (3, 2, 3)), _R.uniform(-1, 1, (3, 2, 2, 3))  # (C_in, C_out, k)
_T3 = _R.uniform(-1, 1, (2, 3, 2, 2, 2))
TABLE.update({
    "F.conv1d": [c(X1, _W1), c(X1, _W1, _BIAS), c(X1, _W1, _BIAS, 2, 1),
                 c(X1, _W1, None, 1, 2, 2), c(X1, _DEPTHWISE1, None, 1, 1, 1, 3),
                 c(X1, _W1, padding="same"), c(X1, _W1, padding="valid"),
                 c(X1, _W1, padding="same", dilation=2), c(X1[0], _W1, _BIAS),
                 c(X1, _W1[:, :2]), c(X1.astype(np.float32), _W1)],
    "F.conv2d": [c(X2, _W2), c(X2, _W2, _BIAS, (2, 1), (1, 0)), c(X2, _W2, None, 1, 1, (2, 1)),
                 c(X2, _W2, padding="same"), c(X2, _R.uniform(-1, 1, (3, 1, 2, 2)), groups=3),
                 c(X2[0], _W2), c(X2, _W2, stride=0)],
    "F.conv3d": [c(X3, _W3), c(X3, _W3, _BIAS[:2], 2, 1), c(X3, _W3, padding="same"),
                 c(X3, _W3, dilation=(1, 2, 1))],
    "F.conv_transpose1d": [c(X1, _T1), c(X1, _T1, _BIAS[:2], 2, 1, 1), c(X1, _T1, dilation=2),
                           c(X1, _R.uniform(-1, 1, (3, 1, 2)), groups=3), c(X1[0], _T1),
                           c(X1, _T1, stride=2, output_padding=2)],
    "F.conv_transpose2d": [c(X2, _T2), c(X2, _T2, _BIAS[:2], (2, 1), (1, 0), (1, 0)),
                           c(X2, _T2, dilation=(2, 1)), c(X2[0], _T2)],
    "F.conv_transpose3d": [c(X3, _T3), c(X3, _T3, _BIAS[:3], 2, 1, 1)],
    "F.unfold": [c(X2, 2), c(X2, (2, 3), padding=1, stride=2), c(X2, 2, dilation=2),
                 c(X2[0], 2), c(X1, 2)],
    "F.fold": [c(_R.uniform(-1, 1, (2, 12, 12)), (4, 5), 2),
               c(_R.uniform(-1, 1, (2, 18, 6)), (4, 5), (2, 3), padding=1, stride=2),
               c(_R.uniform(-1, 1, (12, 12)), (4, 5), 2),
               c(_R.uniform(-1, 1, (2, 12, 11)), (4, 5), 2)],
    "F.pad": [c(X1, (1, 2)), c(X2, (1, 0, 2, 1), value=-1.5), c(X2, (-1, 1, 0, -2)),
              c(X1, (2, 1), "reflect"), c(X2, (1, 1, 2, 0), "reflect"),
              c(X1, (2, 3), "replicate"), c(X3, (1, 0, 0, 1, 1, 1), "replicate"),
              c(X1, (2, 1), "circular"), c(X2, (1, 2, 1, 0), "circular"),
              c(X1, (5, 0), "reflect"), c(X1, (1,)), c(INTS, (1, 1), value=7)],
})

# -- pooling --------------------------------------------------------------------------------
TABLE.update({
    "F.max_pool1d": [c(X1, 2), c(X1, 3, 1, 1), c(X1, 2, dilation=2), c(X1, 2, ceil_mode=True),
                     c(POOL_TIES, 2), c(POOL_TIES, 3, 1), c(X1, 2, return_indices=True),
                     c(X1[0], 2), c(X1, 3, padding=2)],
    "F.max_pool2d": [c(X2, 2), c(X2, (2, 3), (1, 2), (1, 1)), c(X2, 2, ceil_mode=True),
                     c(X2, 2, dilation=(1, 2)), c(X2, 2, return_indices=True),
                     c(POOL_TIES[None], (1, 3), 1)],
    "F.max_pool3d": [c(X3, 2), c(X3, 2, 1, 1), c(X3, (1, 2, 3), ceil_mode=True)],
    "F.avg_pool1d": [c(X1, 2), c(X1, 3, 1, 1), c(X1, 3, 2, 1, True), c(X1, 3, 1, 1,
                                                                      count_include_pad=False),
                     c(X1[0], 2), c(X1, 3, padding=2)],
    "F.avg_pool2d": [c(X2, 2), c(X2, (2, 3), 1, (1, 1)), c(X2, 3, 2, 1, True, False),
                     c(X2, 2, divisor_override=3), c(X2, 2, divisor_override=0)],
    "F.avg_pool3d": [c(X3, 2), c(X3, 2, 1, 1, count_include_pad=False),
                     c(X3, 3, 2, 1, ceil_mode=True), c(X3, 2, divisor_override=5)],
    "F.lp_pool1d": [c(X1 ** 2, 2, 2), c(X1, 1.5, 3, 2), c(X1, 3.0, 2, ceil_mode=True)],
    "F.lp_pool2d": [c(X2 ** 2, 2, 2), c(X2, 1.5, (2, 3), 1), c(X2, 2, 3, 2, True)],
    "F.adaptive_avg_pool1d": [c(X1, 3), c(X1, 5), c(X1, 2), c(X1, 7), c(X1[0], 2)],
    "F.adaptive_avg_pool2d": [c(X2, (3, 2)), c(X2, (None, 3)), c(X2, 1), c(X2[0], 3)],
    "F.adaptive_avg_pool3d": [c(X3, (2, 3, 2)), c(X3, 1), c(X3, (None, 2, 3))],
    "F.adaptive_max_pool1d": [c(X1, 3), c(X1, 2, True), c(POOL_TIES, 4), c(X1, 7)],
    "F.adaptive_max_pool2d": [c(X2, (3, 2)), c(X2, (None, 3), True), c(X2, 1)],
    "F.adaptive_max_pool3d": [c(X3, (2, 3, 2)), c(X3, (None, 2, 3), True), c(X3, 1)],
    "F.lp_pool3d": [c(X3 ** 2, 2, 2), c(X3, 1.5, (1, 2, 3), 1), c(X3, 2, 3, 2, True)],
    "F.pdist": [c(M23), c(X2[0, 0], 1.0), c(X2[0, 0], float("inf")), c(X2[0, 0], 0.5),
                c(X2[0, 0], 0.0, grad=False)],
})
for _n in (1, 2, 3):
    TABLE[f"F.max_pool{_n}d_with_indices"] = [
        c(*case.args, **case.kwargs) for case in TABLE[f"F.max_pool{_n}d"]
        if "return_indices" not in case.kwargs]
for _n in (1, 2, 3):
    TABLE[f"F.adaptive_max_pool{_n}d_with_indices"] = [
        c(case.args[0], case.args[1]) for case in TABLE[f"F.adaptive_max_pool{_n}d"]]

# -- resampling -----------------------------------------------------------------------------
_SMALL2 = _R.uniform(-2, 2, (1, 2, 3, 4))
TABLE.update({
    "F.interpolate": [
        c(X1, 8), c(X1, scale_factor=2), c(X1, 3), c(X1, 7, mode="nearest-exact"),
        c(X1, 8, mode="linear"), c(X1, 8, mode="linear", align_corners=True),
        c(X1, scale_factor=1.7, mode="linear"),
        c(X1, scale_factor=1.7, mode="linear", recompute_scale_factor=True),
        c(_SMALL2, (5, 7), mode="bilinear"), c(_SMALL2, (2, 3), mode="bilinear"),
        c(_SMALL2, (5, 7), mode="bilinear", align_corners=True),
        c(_SMALL2, (5, 7), mode="bicubic"), c(_SMALL2, (5, 6), mode="bicubic",
                                                align_corners=True),
        c(_SMALL2, scale_factor=(2, 0.5), mode="nearest"), c(_SMALL2, (2, 3), mode="area"),
        c(X3, (4, 5, 3), mode="trilinear"), c(X3, scale_factor=2, mode="nearest"),
        c(X1, 8, mode="bilinear"), c(X1, mode="linear"), c(X1, 4, mode="cubic")],
    "F.upsample": [c(X1, 8), c(_SMALL2, (5, 7), mode="bilinear"),
                   c(_SMALL2, scale_factor=2, mode="bicubic", align_corners=False)],
    "F.upsample_nearest": [c(X1, 8), c(_SMALL2, scale_factor=2), c(X3, (4, 5, 6))],
    "F.upsample_bilinear": [c(_SMALL2, (5, 7)), c(_SMALL2, scale_factor=2)],
})

# -- normalisation ----------------------------------------------------------------------------
_RM, _RV = _R.uniform(-1, 1, (3,)), _R.uniform(0.5, 2, (3,))
_G3, _B3 = _R.uniform(0.5, 1.5, (3,)), _R.uniform(-1, 1, (3,))


def _batch_norm_updating(T: Any, x: Any, mean: Any, var: Any, *args: Any, **kwargs: Any
                         ) -> tuple:
    """batch_norm in training, and the running statistics it updated in place."""
    return _F(T).batch_norm(x, mean, var, *args, training=True, **kwargs), mean, var


def _instance_norm_updating(T: Any, x: Any, mean: Any, var: Any, **kwargs: Any) -> tuple:
    return _F(T).instance_norm(x, mean, var, **kwargs), mean, var


TABLE.update({
    "F.batch_norm": [c(X2, Const(_RM), Const(_RV)), c(X2, Const(_RM), Const(_RV), _G3, _B3),
                     c(X2, None, None, training=True), c(X1, None, None, _G3, _B3, True),
                     c(M23.T.copy(), None, None, training=True, eps=0.1),
                     c(X2, Const(_RM), Const(_RV), _G3, _B3, call=_batch_norm_updating),
                     c(X1, Const(_RM), Const(_RV), momentum=0.5, call=_batch_norm_updating),
                     c(a(np.ones((1, 3))), None, None, training=True),
                     c(X2, Const(_RM[:2]), Const(_RV))],
    "F.instance_norm": [c(X2), c(X2, None, None, _G3, _B3), c(X1), c(X2, eps=0.1),
                        c(X2, Const(_RM), Const(_RV), use_input_stats=False),
                        c(X2, Const(_RM), Const(_RV), call=_instance_norm_updating)],
    "F.layer_norm": [c(X2, (5,)), c(X2, (4, 5), _R.uniform(0.5, 1.5, (4, 5)),
                                    _R.uniform(-1, 1, (4, 5))),
                     c(M23, (3,), a([1.0, 2.0, 3.0]), None, 1e-3), c(M23_F32, (3,)),
                     c(X2, (4,)), c(a(np.ones((2, 3))), (3,))],
    "F.rms_norm": [c(X2, (5,)), c(X2, (5,), _R.uniform(0.5, 1.5, (5,))), c(X2, (4, 5), eps=1e-3),
                   c(M23_F32, (3,)), c(a(np.zeros((2, 3))), (3,)), c(X2, (3,))],
    "F.group_norm": [c(X6, 3), c(X6, 2, _R.uniform(0.5, 1.5, (6,)), _R.uniform(-1, 1, (6,))),
                     c(X2, 1), c(X2, 3, eps=0.1), c(X2, 2)],
})

# -- attention --------------------------------------------------------------------------------
_Q, _K, _V = (_R.uniform(-1, 1, s) for s in ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 3)))
_BOOL_MASK = _R.uniform(size=(3, 5)) > 0.3
_BOOL_MASK[:, 0] = True
_FLOAT_MASK = _R.uniform(-1, 1, (3, 5))
TABLE["F.scaled_dot_product_attention"] = [
    c(_Q, _K, _V), c(_Q, _K, _V, Const(_BOOL_MASK)), c(_Q, _K, _V, _FLOAT_MASK),
    c(_Q, _K[..., :3, :], _V[..., :3, :], is_causal=True), c(_Q, _K, _V, scale=0.3),
    c(_R.uniform(-1, 1, (2, 4, 3, 4)), _K, _V, enable_gqa=True), c(_Q[0, 0], _K[0, 0], _V[0, 0]),
    c(_Q, _K[..., :3], _V), c(_Q, _K, _V, dropout_p=0.0, is_causal=True)]

_E, _HEADS = 4, 2
_MHA = {"in_w": _R.uniform(-1, 1, (3 * _E, _E)), "in_b": _R.uniform(-1, 1, (3 * _E,)),
        "out_w": _R.uniform(-1, 1, (_E, _E)), "out_b": _R.uniform(-1, 1, (_E,))}
_QL, _KL = _R.uniform(-1, 1, (3, 2, _E)), _R.uniform(-1, 1, (5, 2, _E))
_PADDING = np.zeros((2, 5), dtype=bool)
_PADDING[1, 3:] = True


def _mha(**options: Any) -> Any:
    """multi_head_attention_forward on (L, N, E) queries and (S, N, E) keys, values, in
    eval mode (no dropout)."""
    def call(T: Any, q: Any, k: Any, in_w: Any, in_b: Any, out_w: Any, out_b: Any,
             **masks: Any) -> Any:
        return _F(T).multi_head_attention_forward(
            q, k, k, _E, _HEADS, in_w, in_b, None, None, False, 0.0, out_w, out_b,
            training=False, **dict(options, **masks))
    return call


def _mha_case(q: np.ndarray, k: np.ndarray, **options: Any) -> Any:
    masks = {n: options.pop(n) for n in ("key_padding_mask", "attn_mask") if n in options}
    return c(q, k, _MHA["in_w"], _MHA["in_b"], _MHA["out_w"], _MHA["out_b"], call=_mha(
        **options), **masks)


TABLE["F.multi_head_attention_forward"] = [
    _mha_case(_QL, _KL), _mha_case(_QL, _KL, average_attn_weights=False),
    _mha_case(_QL, _KL, need_weights=False), _mha_case(_QL, _KL, key_padding_mask=Const(_PADDING)),
    _mha_case(_QL, _KL, attn_mask=Const(_BOOL_MASK == 0)), _mha_case(_QL, _KL[:3], is_causal=True,
                                                                     attn_mask=Const(np.triu(
                                                                         np.ones((3, 3)), 1) > 0)),
    _mha_case(_QL[:, 0], _KL[:, 0])]

# -- losses -----------------------------------------------------------------------------------
_LOGP = np.log(PROBS / PROBS.sum(1, keepdims=True))
_WITH_ZEROS = a([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
_TARGET_P = PROBS[::-1] / PROBS[::-1].sum(1, keepdims=True)
TABLE.update({
    "F.huber_loss": [c(M23, POS), c(M23, POS, delta=0.5), c(M23, POS, reduction="sum"),
                     c(M23, POS, reduction="none"), c(M23, M23 + 1.0), c(M23, POS[0]),
                     c(M23, POS, delta=0.0)],
    "F.kl_div": [c(_LOGP, _TARGET_P), c(_LOGP, _TARGET_P, reduction="batchmean"),
                 c(_LOGP, _TARGET_P, reduction="sum"), c(_LOGP, _TARGET_P, reduction="none"),
                 c(_LOGP, np.log(_TARGET_P), reduction="batchmean", log_target=True),
                 c(_LOGP, Const(_WITH_ZEROS), reduction="none"),
                 c(_LOGP, _WITH_ZEROS, reduction="none")],
})
known(TABLE["F.kl_div"], 6, "grad", "d/dtarget at target = 0: PyTorch's xlogy(t, t) "
      "backward adds t / t = 0 / 0 (NaN); funcgrad's log(t) + 1 is the limit, -inf (the "
      "case before compares the input's gradient there)")
known(TABLE["F.softmin"], 4, "values,grad", "a row holding -inf (softmax of +inf): "
      "PyTorch's shift by the max gives NaN for the whole row; funcgrad's only the -inf's "
      "entry (as softmax, see facade_table.py)")

# -- dropout: deterministic settings and the structure of a draw -------------------------------


def _dropout_structure(name: str, p: float, feature_axes: int) -> Any:
    """Whether each element (each channel for the feature forms) was dropped to 0 or kept
    and scaled by 1 / (1 - p), and the gradient is that mask times 1 / (1 - p)."""
    def call(T: Any, x: Any) -> Any:
        out = getattr(_F(T), name)(x, p, True)
        grad, = T.autograd.grad(out.sum(), x)
        kept = out != 0
        if feature_axes:
            flat = kept.flatten(-feature_axes)
            whole = (flat.all(-1) | ~flat.any(-1)).all()
        else:
            whole = T.tensor(True)
        scaled = T.where(kept, out - x / (1 - p), T.zeros_like(x)).abs().max() < 1e-12
        grad_ok = (grad - kept.to(x.dtype) / (1 - p)).abs().max() < 1e-12
        return whole, scaled, grad_ok, out.shape
    return call


def _alpha_structure(name: str, p: float) -> Any:
    """alpha dropout's output is a (x or the saturation value) + b with PyTorch's a, b:
    every element is one of the two affine images."""
    def call(T: Any, x: Any) -> Any:
        out = getattr(_F(T), name)(x, p, True)
        alpha = -1.7580993408473766
        scale = ((1 - p) * (1 + p * alpha ** 2)) ** -0.5
        shift = -scale * alpha * p
        kept = (out - (x * scale + shift)).abs() < 1e-9
        dropped = (out - (alpha * scale + shift)).abs() < 1e-9
        return (kept | dropped).all(), out.shape
    return call


_ONES = np.ones((8, 16, 3, 3, 2)) + _R.uniform(0, 1, (8, 16, 3, 3, 2))
TABLE.update({
    "F.dropout1d": [c(X1, 0.5, False), c(X1, 0.0), c(X1, 1.0), c(X1[0], 0.0), c(X1, 1.5),
                    c(X2, 0.5), c(_ONES[..., 0, 0], call=_dropout_structure("dropout1d", 0.5, 1))],
    "F.dropout2d": [c(X2, 0.5, False), c(X2, 0.0), c(X2, 1.0), c(X2, -0.1),
                    c(_ONES[..., 0], call=_dropout_structure("dropout2d", 0.5, 2))],
    "F.dropout3d": [c(X3, 0.5, False), c(X3, 0.0), c(X3, 1.0),
                    c(_ONES, call=_dropout_structure("dropout3d", 0.25, 3))],
    "F.alpha_dropout": [c(M23, 0.5), c(M23, 0.0, True), c(M23, 1.0, True), c(M23, 2.0, True),
                        c(_ONES, call=_alpha_structure("alpha_dropout", 0.3))],
    "F.feature_alpha_dropout": [c(X2, 0.5), c(X2, 0.0, True), c(X2, 1.0, True),
                                c(_ONES, call=_alpha_structure("feature_alpha_dropout", 0.3))],
})
# F.dropout's deterministic cases are in facade_table.py: the structure of a draw joins them
FIRST_TABLE["F.dropout"].append(c(_ONES, call=_dropout_structure("dropout", 0.5, 0)))

# -- the rest of funcgrad.torch ---------------------------------------------------------------


def _device_round_trip(T: Any) -> tuple:
    """The default device, set and restored: factories follow it."""
    before = str(T.get_default_device())
    T.set_default_device("cpu")
    during = (str(T.get_default_device()), str(T.zeros(2).device))
    T.set_default_device(None)
    return before, during, str(T.get_default_device())


def _rng_round_trip(T: Any) -> tuple:
    """Restoring a saved generator state replays the same draws; the state is a uint8
    vector, and drawing moves the generator away from it."""
    state = T.get_rng_state()
    first = (T.rand(5), T.randn(3), T.randint(0, 100, (4,)))
    T.set_rng_state(state)
    again = (T.rand(5), T.randn(3), T.randint(0, 100, (4,)))
    same = all(bool((x == y).all()) for x, y in zip(first, again))
    return same, str(state.dtype), state.ndim, bool((T.get_rng_state() == state).all())


_ONE_HOT = a([[0.0, 0.0, 1.0], [2.0, 0.0, 0.0]])
TABLE.update({
    "select": [c(M23, 0, 1), c(M23, 1, -1), c(BATCH, 2, 3), c(M23, 0, 5), c(SCALAR, 0, 0),
               c(M23, 2, 0), c(INTS, 1, 0)],
    "get_default_device": [c(call=lambda T: str(T.get_default_device()))],
    "set_default_device": [c(call=_device_round_trip)],
    "get_rng_state": [c(call=_rng_round_trip)],
    "set_rng_state": [c(call=_rng_round_trip),
                      c(call=lambda T: T.set_rng_state(T.get_rng_state()))],
    "multinomial": [
        c(_ONE_HOT, 1, grad=False), c(_ONE_HOT, 3, True, grad=False), c(_ONE_HOT[0], 2,
                                                                        grad=False),
        c(_ONE_HOT, 4, grad=False), c(a([[1.0, -1.0, 0.0]]), 1, grad=False),
        c(INTS, 1, grad=False), c(a([[0.0, 0.0, 0.0]]), 1, grad=False),
        c(PROBS, call=lambda T, p: (lambda s: (s.shape, str(s.dtype), bool((s < 3).all()),
                                                 bool((s.sort(1).values == T.arange(3)).all())))(
            T.multinomial(p.detach(), 3)), grad=False)],
}
)

# floored division and remainder over every pair of edge values, and the sign of the zeros
# (PyTorch's exact multiples keep x's: -3 % 0.5 is -0.0), which value comparisons ignore
_PAIR_VALUES = a([-np.inf, -3.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.5, np.inf, np.nan])
_PX, _PY = (a(v) for v in zip(*[(x, y) for x in _PAIR_VALUES for y in _PAIR_VALUES]))


def _negative_zeros(op: Any) -> Any:
    """Where ``op(T, *args)`` is -0.0 (the sign of NaN is no value)."""
    def call(T: Any, *args: Any) -> Any:
        out = op(T, *args)
        return (out == 0) & out.signbit()
    return call


FIRST_TABLE["remainder"] += [
    c(_PX, _PY), c(_PX, _PY, call=_negative_zeros(lambda T, x, y: T.remainder(x, y))),
    c(_PX, call=_negative_zeros(lambda T, x: x % -0.5)),
    c(_PY, call=_negative_zeros(lambda T, y: 2.0 % y))]
FIRST_TABLE["floor_divide"] += [
    c(_PX, _PY, grad=False), c(_PX, _PY, call=_negative_zeros(lambda T, x, y: x // y))]
FIRST_TABLE["fmod"] += [c(_PX, _PY), c(_PX, _PY, call=_negative_zeros(
    lambda T, x, y: T.fmod(x, y)))]

NOT_COMPARED: dict = {
    # compositions of facade ops (their nodes are those ops', not PyTorch's fused kernels):
    # values and gradients against PyTorch for every option in tests/torch/test_torch_nn_more.py
    **{"F." + name: "compared in tests/torch/test_torch_nn_more.py" for name in (
        "affine_grid", "bilinear", "channel_shuffle", "cosine_embedding_loss",
        "cosine_similarity", "embedding_bag", "gaussian_nll_loss", "hinge_embedding_loss",
        "local_response_norm", "margin_ranking_loss", "multi_margin_loss",
        "multilabel_margin_loss", "multilabel_soft_margin_loss", "pairwise_distance",
        "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "rrelu", "soft_margin_loss",
        "triplet_margin_loss", "triplet_margin_with_distance_loss")},
    **{f"F.max_unpool{n}d": "takes max_pool's indices: values, gradients and errors against "
                            "PyTorch in tests/torch/test_pooling_more.py" for n in (1, 2, 3)},
    "F.ctc_loss": "a dynamic program over lengths and targets: losses, gradients and errors "
                  "against PyTorch in tests/torch/test_ctc_loss.py",
    "F.grid_sample": "every mode, padding mode and align_corners, values and both gradients, "
                     "in tests/torch/test_torch_grid_sample.py",
    **{f"F.fractional_max_pool{n}d{s}": "random windows unless _random_samples is given: with "
                                        "them values, indices, gradients and errors against "
                                        "PyTorch in tests/torch/test_fractional_max_pool.py"
       for n in (2, 3) for s in ("", "_with_indices")},
    "F.gumbel_softmax": "random draws differ by design: its distribution and straight-through "
                        "gradient are checked in tests/torch/test_torch_nn_more.py",
}
