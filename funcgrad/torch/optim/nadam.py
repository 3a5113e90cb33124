"""NAdam (and NAdamW) with PyTorch's update equations (``_single_tensor_nadam``).

    t += 1;  weight decay, m, v and the gradient g as Adam's (`adam_moments`)
    mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay))      (mu_{t+1} likewise)
    mu_product = mu_product * mu_t                             (a float32 state tensor)
    denom = sqrt(v / (1 - beta2^t)) + eps
    p = p - lr * (1 - mu_t) / (1 - mu_product) * g / denom
          - lr * mu_{t+1} / (1 - mu_product * mu_{t+1}) * m / denom

``mu_product`` is kept as PyTorch keeps it, a scalar tensor of the step's dtype, so the
products round as PyTorch's do.
"""
from __future__ import annotations

from typing import Any, Iterable

from funcgrad.torch import _factories
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.adam import adam_moments
from funcgrad.torch.optim.optimizer import (Optimizer, check_adam_options,
                                            check_non_negative, new_step, scalar_dtype,
                                            to_scalar)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    _load_defaults = {"maximize": False, "foreach": None, "capturable": False,
                      "differentiable": False, "decoupled_weight_decay": False}

    def __init__(self, params: Iterable[Any], lr: Any = 2e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: Any = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_adam_options(lr, eps, betas, weight_decay)
        check_non_negative(**{"momentum_decay value": momentum_decay})
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
            momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize, foreach=foreach, capturable=capturable,
            differentiable=differentiable))

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        state["step"] = new_step(p, group)
        state["mu_product"] = _factories.tensor(
            1.0, dtype=scalar_dtype(), device=p.device if group["capturable"] else "cpu")
        state["exp_avg"] = _factories.zeros_like(p)
        state["exp_avg_sq"] = _factories.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        beta1, beta2 = group["betas"]
        lr, eps, psi = to_scalar(group["lr"]), group["eps"], group["momentum_decay"]
        grad = adam_moments(p, grad, state, group, lr)
        step = state["step"].item()
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
        mu_product = state["mu_product"]
        mu_product.mul_(mu)
        denom = state["exp_avg_sq"].div(1 - beta2 ** step).sqrt()
        if group["differentiable"]:  # PyTorch's recorded form: tensor coefficients
            denom = denom.add(eps)
            grad = grad * (-lr * (1.0 - mu) / (1.0 - mu_product))
            exp_avg = state["exp_avg"] * (-lr * mu_next / (1.0 - mu_product * mu_next))
            p.addcdiv_(grad, denom)
            p.addcdiv_(exp_avg, denom)
            return
        product = mu_product.item()
        denom.add_(eps)
        p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - product))
        p.addcdiv_(state["exp_avg"], denom, value=(-lr * mu_next) / (1.0 - product * mu_next))
