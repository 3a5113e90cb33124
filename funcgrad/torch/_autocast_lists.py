"""PyTorch 2.13's autocast op lists, per device type, for the facade ops that have them.

A policy says what an op does with its floating tensor arguments inside an autocast
region of its inputs' device type (float64 tensors are never touched):

- "lower": cast to the region's low dtype (bfloat16 by default on the CPU, float16 on CUDA);
- "fp32": cast to float32 (PyTorch's fp32, fp32_set_opt_dtype and fp32_append_dtype
  policies: they differ only in how the C++ op gets its dtype argument);
- "promote": cast to the widest dtype among them (float32 if any is float32);
- "banned": raise (binary_cross_entropy on CUDA, PyTorch's error);
- a function of the call's arguments returning one of these or None (F.pad: only its
  reflect and replicate modes are listed).

Ops that are not listed run in their inputs' dtypes (softmax, sum, relu, layer_norm... on
the CPU). Composite facade ops are listed where PyTorch's decomposition gives their result
dtype (cross_entropy is log_softmax then nll_loss: float32 on both devices).

The CPU table was read off PyTorch 2.13 running each op under ``torch.autocast("cpu")``
with float32 and with low-precision inputs (tests/torch/test_torch_amp.py re-checks every
entry that way); the CUDA table is the lists of ATen's autocast_mode.h shipped with PyTorch
2.13 (AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32, AT_FORALL_FP32_SET_OPT_DTYPE,
AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE, AT_FORALL_PROMOTE; the test parses that header).
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["POLICIES", "ATEN_NAMES", "listed"]


def _pad_policy(args: tuple, kwargs: dict) -> str | None:
    """F.pad(input, pad, mode): reflection and replication padding are fp32 on the CPU."""
    mode = kwargs.get("mode", args[2] if len(args) > 2 else "constant")
    return "fp32" if mode in ("reflect", "replicate") else None


_CPU_LOWER = ("matmul", "mm", "bmm", "addmm", "baddbmm", "addbmm", "einsum", "inner",
              "tensordot", "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
              "conv_transpose2d", "conv_transpose3d", "prelu", "scaled_dot_product_attention",
              "conv_tbc")
_CPU_FP32 = ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy",
             "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
             "poisson_nll_loss", "cosine_embedding_loss", "hinge_embedding_loss",
             "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss",
             "multi_margin_loss", "multilabel_margin_loss", "prod", "cdist", "avg_pool3d",
             "max_pool3d", "adaptive_avg_pool3d", "trace", "linalg.inv", "linalg.cholesky")
_CPU_PROMOTE = ("cat", "stack")

_CUDA_LOWER = ("matmul", "mm", "bmm", "mv", "addmm", "addmv", "addr", "baddbmm", "addbmm",
               "einsum", "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
               "conv_transpose2d", "conv_transpose3d", "prelu", "chain_matmul",
               "scaled_dot_product_attention", "conv_tbc", "convolution", "lstm_cell",
               "gru_cell", "rnn_tanh_cell", "rnn_relu_cell")
_CUDA_FP32 = ("acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2",
              "log1p", "reciprocal", "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm",
              "rms_norm", "group_norm", "norm", "cosine_similarity", "poisson_nll_loss",
              "cosine_embedding_loss", "nll_loss", "hinge_embedding_loss", "kl_div",
              "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss",
              "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
              "multi_margin_loss", "binary_cross_entropy_with_logits", "dist", "pdist",
              "cdist", "renorm", "logsumexp", "interpolate",
              # fp32_set_opt_dtype (a dtype= argument keeps them out) and norm's append
              "prod", "softmax", "log_softmax", "cumprod", "cumsum", "sum",
              "linalg.vector_norm", "linalg.matrix_norm", "frobenius_norm", "nuclear_norm",
              "native_layer_norm",
              # composites whose decomposition ends in float32
              "cross_entropy", "softmin", "normalize")
_CUDA_PROMOTE = ("addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "vdot",
                 "grid_sample", "grid_sampler", "index_put", "tensordot", "scatter_add",
                 # composite: inner is a tensordot over the last axes
                 "inner")

POLICIES: dict[str, dict[str, Any]] = {
    "cpu": {**{n: "lower" for n in _CPU_LOWER}, **{n: "fp32" for n in _CPU_FP32},
            **{n: "promote" for n in _CPU_PROMOTE}, "pad": _pad_policy},
    "cuda": {**{n: "lower" for n in _CUDA_LOWER}, **{n: "fp32" for n in _CUDA_FP32},
             **{n: "promote" for n in _CUDA_PROMOTE}, "binary_cross_entropy": "banned"},
}

# facade op -> the aten op of the CUDA header that lists it (where the names differ)
ATEN_NAMES = {"interpolate": "upsample_nearest1d", "scaled_dot_product_attention":
              "scaled_dot_product_attention", "linalg.vector_norm": "linalg_vector_norm",
              "linalg.matrix_norm": "linalg_matrix_norm", "grid_sample": "grid_sampler"}

BANNED_BINARY_CROSS_ENTROPY = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
    "autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
    "layer.\nIn this case, combine the two layers using "
    "torch.nn.functional.binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss.  "
    "binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.")


def listed(name: str) -> bool:
    """Whether any device type has a policy for op ``name``."""
    return any(name in table for table in POLICIES.values())


def policy_of(device_type: str, name: str, args: tuple, kwargs: dict) -> str | None:
    entry: Any = POLICIES.get(device_type, {}).get(name)
    if callable(entry):
        chooser: Callable = entry
        return chooser(args, kwargs)
    return entry
