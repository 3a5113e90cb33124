"""torch.nn.utils.parametrizations: weight_norm as a parametrization."""
from __future__ import annotations

from typing import Any

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.utils import parametrize
from funcgrad.torch.nn.utils.weight_norm import _weight_norm, norm_except_dim

__all__ = ["weight_norm"]


class _WeightNorm(Module):
    """weight = g * v / ||v||, from (g, v) = right_inverse(weight) = (||weight||, weight)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: Any = 0) -> Module:
    """Parametrize ``module.<name>`` by its magnitude ``original0`` and direction
    ``original1``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
