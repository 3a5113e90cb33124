"""Rprop with PyTorch's update equations (``_single_tensor_rprop``).

    t += 1;  g = grad (negated when maximize);  s = sign(g * prev)
    f = etaplus where s > 0, etaminus where s < 0, 1 where s == 0
    step_size = clamp(step_size * f, step_size_min, step_size_max)
    g = 0 where f == etaminus (the sign flipped: no move, and no flip seen next step)
    p = p - sign(g) * step_size;   prev = g
"""
from __future__ import annotations

from typing import Any, Iterable

from funcgrad.torch import _factories
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import Optimizer, check_lr, new_step, to_scalar

__all__ = ["Rprop"]


class Rprop(Optimizer):
    _load_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                      "capturable": False}

    def __init__(self, params: Iterable[Any], lr: Any = 1e-2, etas: tuple = (0.5, 1.2),
                 step_sizes: tuple = (1e-6, 50), *, capturable: bool = False,
                 foreach: Any = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(
            lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
            differentiable=differentiable, capturable=capturable))

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        state["step"] = new_step(p, group)
        state["prev"] = _factories.zeros_like(p)
        state["step_size"] = _factories.full_like(p, to_scalar(group["lr"]))

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        etaminus, etaplus = group["etas"]
        prev, step_size = state["prev"], state["step_size"]
        where = FUNCTIONS["where"]
        state["step"].add_(1)
        sign = grad.mul(prev.clone() if group["differentiable"] else prev).sign()
        # one replacement after the other, as PyTorch's masked writes (a NaN stays NaN)
        sign = where(sign.gt(0), etaplus, sign)
        sign = where(sign.lt(0), etaminus, sign)
        sign = where(sign.eq(0), 1, sign)
        step_size.mul_(sign).clamp_(*group["step_sizes"])
        grad = where(sign.eq(etaminus), 0, grad)
        p.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
