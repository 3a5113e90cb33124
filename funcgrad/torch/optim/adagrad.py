"""Adagrad with PyTorch's update equations (``_single_tensor_adagrad``).

    t += 1;  g = grad (negated when maximize) + weight_decay * p
    clr = lr / (1 + (t - 1) * lr_decay)
    s = s + g * g                                   (sum, starting at initial_accumulator_value)
    p = p - clr * g / (sqrt(s) + eps)

As in PyTorch, the state of every parameter is created with the optimizer (``step`` 0 and
``sum`` filled with ``initial_accumulator_value``), not on its first step.
"""
from __future__ import annotations

from typing import Any, Iterable

from funcgrad.torch import _factories
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import (Optimizer, check_fused, check_lr,
                                            check_non_negative, new_step, to_scalar)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    sparse_refusal = None  # (a sparse gradient updates the elements it holds: `_update`)
    _load_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                      "fused": None}

    def __init__(self, params: Iterable[Any], lr: Any = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: Any = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: Any = None) -> None:
        check_lr(lr)
        check_non_negative(**{"lr_decay value": lr_decay, "weight_decay value": weight_decay,
                              "initial_accumulator_value value": initial_accumulator_value,
                              "epsilon value": eps})
        super().__init__(params, dict(
            lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value, foreach=foreach,
            maximize=maximize, differentiable=differentiable, fused=fused))
        check_fused(fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, self.state[p], group)

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        state["step"] = new_step(p, group)
        state["sum"] = _factories.full_like(p, self.defaults["initial_accumulator_value"])

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        state["step"].add_(1)
        step = state["step"].item()
        if group["weight_decay"] != 0:
            if grad.is_sparse:
                raise RuntimeError("weight_decay option is not compatible with sparse "
                                   "gradients")
            grad = grad.add(p, alpha=group["weight_decay"])
        clr = to_scalar(group["lr"]) / (1 + (step - 1) * group["lr_decay"])
        if grad.is_sparse:  # PyTorch's masked update, in its order of operations
            grad = grad.coalesce()
            at, values = tuple(grad._indices()), grad._values()
            state["sum"].index_put_(at, values.pow(2), accumulate=True)
            std = state["sum"][at].sqrt_().add_(group["eps"])
            p.index_put_(at, values / std * -clr, accumulate=True)
            return
        state["sum"].addcmul_(grad, grad, value=1)
        std = state["sum"].sqrt() + group["eps"]  # not in place: see RMSprop
        p.addcdiv_(grad, std, value=-clr)
