"""More layer modules, each a thin Module around its `funcgrad.torch.nn.functional` form:
distances, Bilinear, the pixel and channel shuffles, LocalResponseNorm, RReLU,
and EmbeddingBag (PyTorch's constructors, initialisation and reprs)."""
from __future__ import annotations

import math
from typing import Any

from funcgrad.torch import _factories
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.nn import functional as F
from funcgrad.torch.nn import init
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["CosineSimilarity", "PairwiseDistance", "Bilinear", "PixelShuffle",
           "PixelUnshuffle", "ChannelShuffle", "LocalResponseNorm", "RReLU", "EmbeddingBag"]


class CosineSimilarity(Module):
    """Cosine similarity of two inputs along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """p-norm distance of the rows of two inputs."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class Bilinear(Module):
    """y = x1^T A x2 + b, A of shape (out, in1, in2); A and b drawn from
    U(-1/sqrt(in1), 1/sqrt(in1)) as PyTorch."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(_factories.empty(out_features, in1_features, in2_features,
                                                 device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_factories.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class PixelShuffle(Module):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleaves the channels of ``groups`` groups."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class LocalResponseNorm(Module):
    """Normalises each channel by its ``size`` neighbours' mean square."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class RReLU(Module):
    """Leaky relu with a random slope in [lower, upper] in training, the mean slope in
    evaluation."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        text = f"lower={self.lower}, upper={self.upper}"
        return text + (", inplace=True" if self.inplace else "")


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings; the table drawn from N(0, 1) with the
    ``padding_idx`` row zeroed, as PyTorch."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.mode, self.sparse = scale_grad_by_freq, mode, sparse
        self.include_last_offset = include_last_offset
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(_factories.empty(num_embeddings, embedding_dim,
                                                     device=device, dtype=dtype))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with grad_mode.no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> "EmbeddingBag":
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  embeddings, include_last_offset, padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
