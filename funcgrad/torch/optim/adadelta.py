"""Adadelta with PyTorch's update equations (``_single_tensor_adadelta``).

    t += 1;  g = grad (negated when maximize) + weight_decay * p
    s = rho * s + (1 - rho) * g * g                            (square_avg)
    delta = sqrt(u + eps) / sqrt(s + eps) * g
    u = rho * u + (1 - rho) * delta * delta                    (acc_delta)
    p = p - lr * delta
"""
from __future__ import annotations

from typing import Any, Iterable

from funcgrad.torch import _factories
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import (Optimizer, check_lr, check_non_negative,
                                            new_step, to_scalar)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    _load_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                      "capturable": False}

    def __init__(self, params: Iterable[Any], lr: Any = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: Any = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_non_negative(**{"epsilon value": eps, "weight_decay value": weight_decay})
        super().__init__(params, dict(
            lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
            capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        state["step"] = new_step(p, group)
        state["square_avg"] = _factories.zeros_like(p)
        state["acc_delta"] = _factories.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        rho, eps = group["rho"], group["eps"]
        state["step"].add_(1)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        # PyTorch's sqrt_, div_, mul_ in a row, out of place after the sqrt_: the same
        # values, and a recorded (differentiable) step keeps each op's inputs intact
        delta = acc_delta.add(eps).sqrt_().div(std).mul(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-to_scalar(group["lr"]))
