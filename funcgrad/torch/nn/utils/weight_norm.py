"""Weight normalisation: ``w = g * v / ||v||`` (Salimans & Kingma, 2016), the legacy hook
form (``weight_norm``/``remove_weight_norm``, with PyTorch's deprecation warning) and the
pieces the parametrization form shares (``norm_except_dim``, the one-node ``_weight_norm``
op, PyTorch's ``WeightNormInterfaceBackward0``)."""
from __future__ import annotations

import warnings
from typing import Any

import funcgrad.numpy as fnp
from funcgrad.torch._dispatch import apply
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["norm_except_dim", "weight_norm", "remove_weight_norm", "WeightNorm"]


def _norm_axes(ndim: int, dim: int) -> tuple | None:
    """The axes reduced by norm_except_dim (None: all of them, for dim == -1)."""
    if dim == -1:
        return None
    return tuple(a for a in range(ndim) if a != dim % ndim)


def _norm_except(v: Any, dim: int) -> Any:
    axes = _norm_axes(v.ndim, dim)
    return fnp.sqrt(fnp.sum(fnp.square(v), axis=axes, keepdims=axes is not None))


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of v over every axis but ``dim`` (kept, size 1); dim -1: of all."""
    axes = _norm_axes(v.ndim, dim)
    if axes is None:
        return v.norm(pow)
    return v.norm(pow, axes, keepdim=True)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """v * (g / ||v||) with the norm over all axes but ``dim``: PyTorch's fused node for
    the first or last axis, its composition of tensor ops otherwise."""
    if dim == 0 or dim == v.ndim - 1:
        return apply("WeightNormInterfaceBackward0",
                     lambda v, g: fnp.multiply(v, fnp.true_divide(g, _norm_except(v, dim))),
                     [v, g])
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook recomputing ``module.<name>`` from ``<name>_g``, ``<name>_v``."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        return _weight_norm(getattr(module, self.name + "_v"),
                            getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> "WeightNorm":
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2,
                                                                         fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """Reparametrise ``module.<name>`` as ``g * v / ||v||`` (parameters ``<name>_g`` and
    ``<name>_v``), recomputed before every forward."""
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo `weight_norm`: ``<name>`` becomes one Parameter again."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
