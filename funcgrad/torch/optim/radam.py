"""RAdam (and RAdamW) with PyTorch's update equations (``_single_tensor_radam``).

    t += 1;  weight decay, m, v as Adam's (`adam_moments`)
    rho_inf = 2 / (1 - beta2) - 1;   rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
    p = p - (m / (1 - beta1^t)) * lr * sqrt(1 - beta2^t) / (sqrt(v) + eps) * rect
                                                     (rho_t > 5: the variance is tractable)
    p = p - (m / (1 - beta1^t)) * lr                 (otherwise: SGD with momentum)
    rect = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
"""
from __future__ import annotations

from typing import Any, Iterable

from funcgrad.torch import _factories
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.adam import adam_moments
from funcgrad.torch.optim.optimizer import (Optimizer, check_adam_options, new_step,
                                            to_scalar)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    _load_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                      "decoupled_weight_decay": False, "capturable": False}

    def __init__(self, params: Iterable[Any], lr: Any = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0,
                 decoupled_weight_decay: bool = False, *, foreach: Any = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_adam_options(lr, eps, betas, weight_decay)
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
            foreach=foreach, capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        state["step"] = new_step(p, group)
        state["exp_avg"] = _factories.zeros_like(p)
        state["exp_avg_sq"] = _factories.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        beta1, beta2 = group["betas"]
        lr = to_scalar(group["lr"])
        adam_moments(p, grad, state, group, lr)
        step = state["step"].item()
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = state["exp_avg"] / (1 - beta1 ** step)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t <= 5.0:
            p.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
            return
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        adaptive_lr = (bias_correction2 ** 0.5) / state["exp_avg_sq"].sqrt().add(group["eps"])
        p.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
