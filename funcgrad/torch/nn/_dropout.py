"""torch.nn.functional dropout: elementwise, channel-wise (1d/2d/3d) and alpha dropout.

As PyTorch's CPU kernels do, a dropout is the input times a noise tensor drawn with
``bernoulli_(1 - p)`` and divided by ``1 - p`` (so its node is ``MulBackward0``); the
channel-wise forms draw one value per (sample, channel) and broadcast it over the spatial
axes; alpha dropout keeps the mean and variance of SELU activations with an affine
correction. Outside training (or with p = 0) the input itself is returned.
"""
from __future__ import annotations

import math
import warnings

import funcgrad.numpy as fnp
from funcgrad.torch import _factories
from funcgrad.torch._dispatch import apply
from funcgrad.torch._inplace import inplace as _inplace
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.nn._common import array_of, check_probability

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout"]

_SELU_ALPHA = 1.7580993408473766  # -scale * alpha of SELU: where its negative side saturates


def _noise(input: Tensor, p: float, feature: bool) -> Tensor:
    shape = (tuple(input.shape[:2]) + (1,) * (input.ndim - 2)) if feature else \
        tuple(input.shape)
    with grad_mode.no_grad():
        return _factories.empty(*shape, dtype=input.dtype, device=input.device).bernoulli_(
            1 - p)


def _apply(input: Tensor, noise: Tensor, inplace: bool) -> Tensor:
    """input * noise; on an accelerator PyTorch runs its fused kernel, whose node is
    ``NativeDropoutBackward0``."""
    if input.device.type != "cpu":
        mask = array_of(noise)
        return (_inplace(input, "NativeDropoutBackward0", lambda x: fnp.multiply(x, mask))
                if inplace else apply("NativeDropoutBackward0",
                                      lambda x: fnp.multiply(x, mask), [input]))
    return input.mul_(noise) if inplace else input * noise


def _dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool,
             alpha: bool) -> Tensor:
    check_probability(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return _apply(input, _factories.zeros((), dtype=input.dtype, device=input.device),
                      inplace)
    noise = _noise(input, p, feature)
    if not alpha:
        with grad_mode.no_grad():
            noise.div_(1 - p)
        return _apply(input, noise, inplace)
    a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
    with grad_mode.no_grad():
        shift = (noise - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
        noise.mul_(a)
    out = _apply(input, noise, inplace)
    return out.add_(shift) if inplace else out + shift


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the others by 1 / (1 - p)."""
    return _dropout(input, p, training, inplace, False, False)


def _channel_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                     unbatched_ndim: int) -> Tensor:
    """A feature dropout with an optional batch axis (added and removed again)."""
    if input.ndim == unbatched_ndim:
        x = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
        out = _dropout(x, p, training, inplace, True, False)
        return out.squeeze_(0) if inplace else out.squeeze(0)
    return _dropout(input, p, training, inplace, True, False)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) with probability ``p``."""
    check_probability(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout "
                           "on inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    return _channel_dropout(input, p, training, inplace, 2)


def _feature_warning(n: int, ndim: int) -> None:
    warnings.warn(f"dropout{n}d: Received a {ndim}-D input to dropout{n}d, which is deprecated "
                  "and will result in an error in a future release. To retain the behavior "
                  "and silence this warning, please use dropout instead. Note that "
                  f"dropout{n}d exists to provide channel-wise dropout on inputs with {n} "
                  "spatial dimensions, a channel dimension, and an optional batch dimension "
                  f"(i.e. {n + 1}D or {n + 2}D inputs).", stacklevel=3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) with probability ``p`` (a 3-D input is read as
    (N, C, L), with PyTorch's warning)."""
    check_probability(p)
    if input.ndim not in (3, 4):
        _feature_warning(2, input.ndim)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
                      "dropout behavior, please switch to using dropout1d instead.",
                      stacklevel=2)
    return _dropout(input, p, training, inplace, True, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability ``p``."""
    check_probability(p)
    if input.ndim not in (4, 5):
        _feature_warning(3, input.ndim)
    return _channel_dropout(input, p, training, inplace, 4)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps the self-normalising statistics of SELU networks."""
    return _dropout(input, p, training, inplace, False, True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    return _dropout(input, p, training, inplace, True, True)
