"""Adamax with PyTorch's update equations (``_single_tensor_adamax``).

    t += 1;  g = grad (negated when maximize) + weight_decay * p
    m = lerp(m, g, 1 - beta1)                         (exp_avg)
    u = max(beta2 * u, |g| + eps)                     (exp_inf)
    p = p - (lr / (1 - beta1^t)) * m / u
"""
from __future__ import annotations

from typing import Any, Iterable

from funcgrad.torch import _factories
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import (Optimizer, check_adam_options, new_step,
                                            to_scalar)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    _load_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                      "capturable": False}

    def __init__(self, params: Iterable[Any], lr: Any = 2e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: Any = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        check_adam_options(lr, eps, betas, weight_decay)
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
            maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        state["step"] = new_step(p, group)
        state["exp_avg"] = _factories.zeros_like(p)
        state["exp_inf"] = _factories.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        beta1, beta2 = group["betas"]
        state["step"].add_(1)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_inf.copy_(FUNCTIONS["maximum"](exp_inf.mul_(beta2), grad.abs().add_(group["eps"])))
        clr = to_scalar(group["lr"]) / (1 - beta1 ** state["step"].item())
        p.addcdiv_(exp_avg, exp_inf, value=-clr)
