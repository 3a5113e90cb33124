"""The ``torch.*`` names of ops that real programs usually reach through
``torch.nn.functional`` or a view: ATen's signatures (``torch.dropout(input, p, train)``,
``torch.embedding(weight, indices, ...)``, reductions as integers), each a thin call of
the facade's own function, and the ``*_copy`` forms of the view ops (the view's values in
new memory, as PyTorch's). They add no derivative and no kernel: the functions they call
record what those record.
"""
from __future__ import annotations

from typing import Any, Callable

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn import functional as F

__all__ = ["install"]

# ATen's Reduction enum, by its integer; PyTorch's torch.* losses default to 0 ("none")
_REDUCTIONS = ("none", "mean", "sum")


def _reduction(value: Any) -> str:
    return _REDUCTIONS[value] if isinstance(value, int) else value


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.dropout(input, p, train)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.feature_alpha_dropout(input, p, train)


def batch_norm(input: Tensor, weight: Any, bias: Any, running_mean: Any, running_var: Any,
               training: bool, momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                        eps)


def instance_norm(input: Tensor, weight: Any, bias: Any, running_mean: Any, running_var: Any,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def layer_norm(input: Tensor, normalized_shape: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5, cudnn_enabled: bool = True) -> Tensor:
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input: Tensor, normalized_shape: Any, weight: Any = None,
             eps: float | None = None) -> Tensor:
    return F.rms_norm(input, normalized_shape, weight, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx, None, 2.0,
                       scale_grad_by_freq, sparse)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    return F.celu(input, alpha)


def selu(input: Tensor) -> Tensor:
    return F.selu(input)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, generator: Any = None) -> Tensor:
    return F.rrelu(input, lower, upper, training)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    return F.threshold(input, threshold, value)


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple:
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (),
                            padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False) -> tuple:
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode,
                        return_indices=True)


def _max_pool(pool: Callable) -> Callable:
    def max_pool(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
                 dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
        return pool(input, kernel_size, stride or None, padding, dilation, ceil_mode)
    return max_pool


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Any = None,
                                     pos_weight: Any = None, reduction: Any = 0) -> Tensor:
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def kl_div(input: Tensor, target: Tensor, reduction: Any = 0, *,
           log_target: bool = False) -> Tensor:
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor,
                          margin: float = 0.0, reduction: Any = 0) -> Tensor:
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor,
                        margin: float = 0.0, reduction: Any = 0) -> Tensor:
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: Any = 0) -> Tensor:
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                        swap: bool = False, reduction: Any = 0) -> Tensor:
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool,
                     eps: float, reduction: Any) -> Tensor:
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: Any = 0, zero_infinity: bool = False) -> Tensor:
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction), zero_infinity)


_SAME = ("adaptive_avg_pool1d", "avg_pool1d", "bilinear", "celu_", "channel_shuffle",
         "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
         "conv_transpose3d", "cosine_similarity", "hardshrink", "pairwise_distance", "pdist",
         "pixel_shuffle", "pixel_unshuffle", "prelu", "rrelu_", "selu_", "threshold_")

def split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple:
    return input.split(list(split_sizes), dim)


def alias_copy(input: Tensor) -> Tensor:
    return input.clone()


# the view ops whose ``<name>_copy`` PyTorch has: their values in new memory
_VIEWS = ("as_strided", "diagonal", "narrow", "permute", "select", "squeeze", "t",
          "transpose", "unsqueeze", "view_as_complex", "view_as_real", "expand", "unfold",
          "view", "detach", "values", "indices", "crow_indices", "col_indices")
_SPLITS = ("split", "unbind", "split_with_sizes")
# Tensor methods PyTorch also has as torch functions
_METHODS = ("detach", "detach_", "zero_", "resolve_conj", "resolve_neg", "get_device",
            "is_conj", "is_neg", "is_distributed", "resize_as_")


def _copy_of(view: Callable) -> Callable:
    def copy(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return view(input, *args, **kwargs).clone()
    return copy


def _copies_of(views: Callable) -> Callable:
    def copy(input: Tensor, *args: Any, **kwargs: Any) -> list:
        return [v.clone() for v in views(input, *args, **kwargs)]
    return copy


def _method(name: str) -> Callable:
    def call(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(input, name)(*args, **kwargs)
    call.__name__ = name
    return call


def install(namespace: dict) -> None:
    """Add the names to the torch namespace (``namespace``); views it lacks as functions
    are reached as methods."""
    own = {name: fn for name, fn in globals().items()
           if callable(fn) and not name.startswith("_") and fn.__module__ == __name__
           and name != "install"}
    namespace.update(own)
    namespace.update({name: getattr(F, name) for name in _SAME})
    namespace["max_pool1d"] = _max_pool(F.max_pool1d)
    namespace["max_pool2d"] = _max_pool(F.max_pool2d)
    namespace["max_pool3d"] = _max_pool(F.max_pool3d)
    for name in _METHODS:
        namespace.setdefault(name, _method(name))
    for name in _VIEWS:
        namespace[f"{name}_copy"] = _copy_of(namespace.get(name) or _method(name))
    for name in _SPLITS:
        namespace[f"{name}_copy"] = _copies_of(namespace.get(name) or _method(name))
    namespace.update(unsafe_split=namespace["split"], unsafe_chunk=namespace["chunk"],
                     unsafe_split_with_sizes=split_with_sizes)
    for name, fn in (("split_with_sizes", split_with_sizes),
                     ("unsafe_split_with_sizes", split_with_sizes),
                     ("unsafe_split", Tensor.split), ("unsafe_chunk", Tensor.chunk),
                     ("resolve_conj", _itself), ("resolve_neg", _itself)):
        setattr(Tensor, name, fn)


def _itself(self: Tensor) -> Tensor:
    """A tensor with no lazy conjugation or negation pending (the facade has none)."""
    return self
