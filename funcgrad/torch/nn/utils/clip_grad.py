"""Gradient clipping with PyTorch's equations.

``clip_grad_norm_`` computes the total norm of all gradients (the norm of the per-tensor
norms), scales every gradient in place by ``min(1, max_norm / (total + 1e-6))`` and returns
the total norm from *before* clipping.
"""
from __future__ import annotations

from typing import Any, Iterable

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.autograd import grad_mode

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _grads(parameters: Any) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: Any = None) -> Tensor:
    """Scale gradients so that their total ``norm_type``-norm is at most ``max_norm``."""
    from funcgrad.torch import _factories, _ops_basic
    F = _ops_basic.FUNCTIONS
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return _factories.tensor(0.0)
    with grad_mode.no_grad():
        norms = [F["norm"](g, norm_type) for g in grads]
        total = F["norm"](F["stack"](norms), norm_type)
        if error_if_nonfinite and bool(F["isnan"](total) | F["isinf"](total)):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
        coef = F["clamp"](max_norm / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))
    return total


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float,
                     foreach: Any = None) -> None:
    """Clamp every gradient elementwise to [-clip_value, clip_value] in place."""
    with grad_mode.no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
