"""Gradient clipping with PyTorch's equations.

``clip_grad_norm_`` computes the total norm of all gradients (the norm of the per-tensor
norms), scales every gradient in place by ``min(1, max_norm / (total + 1e-6))`` and returns
the total norm from *before* clipping.
"""
from __future__ import annotations

from typing import Any, Iterable

from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch import _factories, _ops_basic
from funcgrad.torch import _ops_basic

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _grads(parameters: Any) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def get_total_norm(tensors: Iterable[Tensor] | Tensor, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """The ``norm_type``-norm of the tensors' norms (of all their elements together)."""
    F = _ops_basic.FUNCTIONS
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _factories.tensor(0.0)
    with grad_mode.no_grad():
        total = F["norm"](F["stack"]([F["norm"](t, norm_type) for t in tensors]), norm_type)
    if error_if_nonfinite and bool(F["isnan"](total) | F["isinf"](total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                          total_norm: Tensor, foreach: Any = None) -> None:
    """Scale the gradients in place by ``min(1, max_norm / (total_norm + 1e-6))``."""
    grads = _grads(parameters)
    if not grads:
        return
    with grad_mode.no_grad():
        coef = _ops_basic.FUNCTIONS["clamp"](float(max_norm) / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: Any = None) -> Tensor:
    """Scale gradients so that their total ``norm_type``-norm is at most ``max_norm``."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    parameters = list(parameters)
    total = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float,
                     foreach: Any = None) -> None:
    """Clamp every gradient elementwise to [-clip_value, clip_value] in place."""
    with grad_mode.no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
