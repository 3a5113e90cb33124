"""More torch.nn.functional: distances (cosine_similarity, pairwise_distance), the bilinear
form, pixel and channel shuffles, local response normalisation, randomized leaky relu,
gumbel_softmax and affine_grid. Each is composed of tensor ops as PyTorch defines it, so
gradients come from those ops; the checks and error texts are PyTorch's.
"""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch import _conventions as conventions, _factories
from funcgrad.torch._dispatch import apply
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._common import const_on
from funcgrad.torch.nn._pooling import avg_pool2d, avg_pool3d
from funcgrad.torch.nn._conv import pad

__all__ = ["cosine_similarity", "pairwise_distance", "pdist", "bilinear", "pixel_shuffle",
           "pixel_unshuffle", "channel_shuffle", "local_response_norm", "rrelu", "rrelu_",
           "gumbel_softmax", "affine_grid"]


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) over ``dim`` (after broadcasting);
    as PyTorch, the norms are clamped in value only (the gradient is that of x / |x|)."""
    shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    a, b = x1.expand(*shape), x2.expand(*shape)

    def clamped_norm(t: Tensor) -> Tensor:
        norm = FUNCTIONS["norm"](t, 2, dim, keepdim=True)
        return norm + (norm.clamp_min(eps) - norm).detach()
    return ((a / clamped_norm(a)) * (b / clamped_norm(b))).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """|x1 - x2 + eps|_p over the last dim."""
    dim = max(x1.ndim, x2.ndim) - 1
    if dim < 0:
        return FUNCTIONS["abs"](x1 - x2 + eps) if p != 0 else (x1 - x2 + eps != 0).to(x1.dtype)
    return FUNCTIONS["norm"](x1 - x2 + eps, p, dim, keepdim=keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distances between the rows of (N, M) ``input``, pairs i < j in row-major
    order (N (N - 1) / 2 of them), with the norm's subgradients (0 at a zero distance)."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    first, second = np.triu_indices(input.shape[0], 1)

    def f(x: Any) -> Any:
        diff = fnp.subtract(fnp.take(x, const_on(first, x), 0),
                            fnp.take(x, const_on(second, x), 0))
        return conventions.vector_norm(diff, p, (1,), False)
    return apply("PdistBackward0", f, [input])


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]."""
    if input1.ndim != input2.ndim or tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    out = FUNCTIONS["einsum"]("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def _check_shuffle(input: Tensor, name: str, factor: int) -> None:
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    if factor <= 0:
        what = "upscale_factor" if name == "pixel_shuffle" else "downscale_factor"
        raise RuntimeError(f"{name} expects {what} to be greater than 0, but got {factor}")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = upscale_factor
    _check_shuffle(input, "pixel_shuffle", r)
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)="
                           f"{c} is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = downscale_factor
    _check_shuffle(input, "pixel_unshuffle", r)
    *lead, c, h, w = input.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by "
                           f"downscale_factor, but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by "
                           f"downscale_factor, but input.size(-1)={w} is not divisible by {r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, g * k, *) -> (N, k * g, *): channel j of group i moves to j * g + i."""
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value "
                           f"of groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x^2 over ``size`` neighbouring channels)^beta."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = (input * input).unsqueeze(1)
    if dim == 3:
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = tuple(input.shape)
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(sizes)
    return input / (div * alpha + k) ** beta


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """x for x >= 0, a x below with a ~ U(lower, upper) per element in training, the
    mean slope (lower + upper) / 2 in evaluation."""
    if training:
        slopes = _factories.empty(*input.shape, dtype=input.dtype,
                                  device=input.device).uniform_(lower, upper)
        out = FUNCTIONS["where"](input >= 0, input, input * slopes)
    else:
        slope = (lower + upper) / 2
        out = FUNCTIONS["where"](input >= 0, input, input * slope)
    if inplace:  # (recorded: the gradient is the slope's, as PyTorch's in-place form)
        return input.copy_(out)
    return out


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, True)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1); ``hard``: the one-hot of its
    argmax in value, the soft sample's gradient (straight-through)."""
    gumbels = -_factories.empty(*logits.shape, dtype=logits.dtype,
                                device=logits.device).exponential_().log()
    y = FUNCTIONS["softmax"]((logits + gumbels) / tau, dim, None)
    if not hard:
        return y
    index = y.argmax(dim, keepdim=True)
    y_hard = _factories.zeros_like(y).scatter(dim, index, 1.0)
    return y_hard - y.detach() + y


def _base_coords(n: int, align_corners: bool) -> np.ndarray:
    if n <= 1:
        return np.zeros(max(n, 0))
    line = np.linspace(-1.0, 1.0, n)
    return line if align_corners else line * (n - 1) / n


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None
                ) -> Tensor:
    """The sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps ``theta``
    (N, 2, 3) (or (N, 3, 4)) over normalised coordinates in [-1, 1]."""
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given, size = size, [int(s) for s in size]
    spatial = len(size) - 2
    if spatial not in (2, 3):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {given}.")
    rows, cols = spatial, spatial + 1
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (rows, cols):
        raise ValueError(f"Expected a batch of {spatial}D affine matrices of shape "
                         f"Nx{rows}x{cols} for size {given}. Got {theta.size()}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if align_corners and min(size[2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    dims = size[2:][::-1]  # x varies along the last axis (W), then y (H), then z (D)
    axes = [_base_coords(n, align_corners) for n in dims]
    mesh = list(np.meshgrid(*axes[::-1], indexing="ij"))[::-1]
    base = np.stack(mesh + [np.ones_like(mesh[0])], -1).reshape(-1, cols)
    base_t = _factories.tensor(base, dtype=theta.dtype, device=theta.device)
    grid = FUNCTIONS["matmul"](base_t, theta.transpose(1, 2))
    return grid.reshape(size[0], *size[2:], spatial)
