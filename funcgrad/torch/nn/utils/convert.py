"""Flattening parameters into one vector and back."""
from __future__ import annotations

from typing import Iterable

from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch._ops_shape import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters, flattened and concatenated (differentiable)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` into the parameters (in place)."""
    start = 0
    with grad_mode.no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[start:start + n].reshape(*p.shape))
            start += n
