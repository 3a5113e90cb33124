"""Adam and AdamW with PyTorch's update equations (``_single_tensor_adam``).

    t += 1;  g = grad (+ weight_decay * p for Adam; AdamW decays p by lr*weight_decay)
    m = lerp(m, g, 1 - beta1);      v = beta2*v + (1 - beta2)*g*g
    v_hat = max(v_hat, v)           (amsgrad; the denominator then uses v_hat)
    denom = sqrt(v) / sqrt(1 - beta2^t) + eps
    p = p - (lr / (1 - beta1^t)) * m / denom
"""
from __future__ import annotations

import math
from typing import Any, Iterable

from funcgrad.torch import _factories
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch.optim.optimizer import Optimizer

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    _decoupled = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 amsgrad: bool = False, *, foreach: Any = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False,
                 fused: Any = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused))

    def _state(self, p: Any, amsgrad: bool) -> dict:
        state = self.state[p]
        if not state:
            state["step"] = _factories.tensor(0.0)
            state["exp_avg"] = _factories.zeros_like(p)
            state["exp_avg_sq"] = _factories.zeros_like(p)
            if amsgrad:
                state["max_exp_avg_sq"] = _factories.zeros_like(p)
        return state

    def _step_group(self, group: dict) -> None:
        beta1, beta2 = group["betas"]
        lr, eps, wd, amsgrad = group["lr"], group["eps"], group["weight_decay"], group["amsgrad"]
        for p in group["params"]:
            if p.grad is None:
                continue
            g = p.grad if not group["maximize"] else -p.grad
            state = self._state(p, amsgrad)
            state["step"].add_(1)
            if wd != 0:
                if self._decoupled:
                    p.mul_(1 - lr * wd)
                else:
                    g = g.add(p, alpha=wd)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(g, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            step = state["step"].item()
            step_size = lr / (1 - beta1 ** step)
            bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
            if amsgrad:
                state["max_exp_avg_sq"].copy_(FUNCTIONS["maximum"](state["max_exp_avg_sq"],
                                                                   exp_avg_sq))
                denom = (state["max_exp_avg_sq"].sqrt() / bias_correction2_sqrt).add_(eps)
            else:
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            p.addcdiv_(exp_avg, denom, value=-step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2)."""
    _decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, **kwargs)
