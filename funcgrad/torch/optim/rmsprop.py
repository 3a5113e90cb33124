"""RMSprop with PyTorch's update equations (``_single_tensor_rmsprop``).

    t += 1;  g = grad (negated when maximize) + weight_decay * p
    s = alpha * s + (1 - alpha) * g * g                       (square_avg)
    a = lerp(a, g, 1 - alpha);  avg = sqrt(s - a * a) + eps   (centered; grad_avg = a)
                                avg = sqrt(s) + eps           (otherwise)
    b = momentum * b + g / avg;  p = p - lr * b               (momentum > 0; buffer b)
    p = p - lr * g / avg                                      (otherwise)
"""
from __future__ import annotations

from typing import Any, Iterable

from funcgrad.torch import _factories
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import (Optimizer, check_lr, check_non_negative,
                                            new_step, to_scalar)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    _load_defaults = {"momentum": 0, "centered": False, "foreach": None, "maximize": False,
                      "differentiable": False, "capturable": False}

    def __init__(self, params: Iterable[Any], lr: Any = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False, foreach: Any = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_lr(lr)
        check_non_negative(**{"epsilon value": eps, "momentum value": momentum,
                              "weight_decay value": weight_decay, "alpha value": alpha})
        super().__init__(params, dict(
            lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
            weight_decay=weight_decay, capturable=capturable, foreach=foreach,
            maximize=maximize, differentiable=differentiable))

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        state["step"] = new_step(p, group)
        state["square_avg"] = _factories.zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = _factories.zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = _factories.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        lr, alpha, eps = to_scalar(group["lr"]), group["alpha"], group["eps"]
        state["step"].add_(1)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        square_avg = state["square_avg"]
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt()
        else:
            avg = square_avg.sqrt()
        avg = avg + eps  # not in place: sqrt keeps its output for a differentiable step
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf.mul_(group["momentum"]).addcdiv_(grad, avg)
            p.add_(buf, alpha=-lr)
        else:
            p.addcdiv_(grad, avg, value=-lr)
