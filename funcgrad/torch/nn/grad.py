"""torch.nn.grad (also ``F.grad``): the gradients of conv{1,2,3}d with respect to their input
and their weight, for a given ``grad_output``.

Each is the facade's own vector-Jacobian product of the facade's convolution: the
convolution is run on a zero placeholder of the requested size (the value does not matter,
a convolution being linear in each argument) and differentiated with
`funcgrad.torch.autograd.grad`, so the derivative is the registry's, and the result carries
a graph when ``grad_output`` or the other argument requires grad (PyTorch's
``convolution_backward`` is differentiable too).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from funcgrad.torch import _factories
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.autograd import engine
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.nn import _conv

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]

_CONVS: dict[int, Callable] = {1: _conv.conv1d, 2: _conv.conv2d, 3: _conv.conv3d}


def _vjp(n: int, input: Tensor | Sequence[int], weight: Tensor | Sequence[int],
         grad_output: Tensor, conv_args: tuple, wrt_input: bool) -> Tensor:
    """d conv{n}d(input, weight) / d (input or weight), applied to ``grad_output``; the
    argument differentiated is given by its size."""
    given = weight if wrt_input else input
    size = input if wrt_input else weight
    free = _factories.zeros(tuple(size), dtype=grad_output.dtype, device=grad_output.device,
                            requires_grad=True)
    create = grad_output.requires_grad or given.requires_grad
    with grad_mode.enable_grad():
        out = _CONVS[n](free, given, None, *conv_args) if wrt_input else (
            _CONVS[n](given, free, None, *conv_args))
        return engine.grad(out, free, grad_output, create_graph=create)[0]


def _pair_of(n: int) -> tuple:
    def grad_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor,
                   stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                   groups: int = 1) -> Tensor:
        return _vjp(n, input_size, weight, grad_output, (stride, padding, dilation, groups),
                    True)

    def grad_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor,
                    stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                    groups: int = 1) -> Tensor:
        return _vjp(n, input, weight_size, grad_output, (stride, padding, dilation, groups),
                    False)
    grad_input.__name__, grad_weight.__name__ = f"conv{n}d_input", f"conv{n}d_weight"
    grad_input.__qualname__, grad_weight.__qualname__ = grad_input.__name__, grad_weight.__name__
    grad_input.__doc__ = f"The gradient of conv{n}d with respect to its input."
    grad_weight.__doc__ = f"The gradient of conv{n}d with respect to its weight."
    return grad_input, grad_weight


conv1d_input, conv1d_weight = _pair_of(1)
conv2d_input, conv2d_weight = _pair_of(2)
conv3d_input, conv3d_weight = _pair_of(3)
