"""ASGD (averaged SGD) with PyTorch's update equations (``_single_tensor_asgd``).

    t += 1;  g = grad (negated when maximize) + weight_decay * p
    p = p * (1 - lambd * eta) - eta * g
    ax = ax + (p - ax) * mu             (ax = p while mu is 1, i.e. before t0)
    eta = lr / (1 + lambd * lr * t)^alpha;   mu = 1 / max(1, t - t0)

``eta`` and ``mu`` are scalar tensors of the step's dtype, as PyTorch keeps them (their
values round to that dtype before they are used).
"""
from __future__ import annotations

from typing import Any, Iterable

from funcgrad.torch import _factories
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import (Optimizer, check_lr, check_non_negative,
                                            scalar_dtype, to_scalar)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    _load_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                      "capturable": False}

    def __init__(self, params: Iterable[Any], lr: Any = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: Any = None, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        check_lr(lr)
        check_non_negative(**{"weight_decay value": weight_decay})
        super().__init__(params, dict(
            lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
            foreach=foreach, maximize=maximize, differentiable=differentiable,
            capturable=capturable))

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        # all on the parameter's device, as PyTorch's ASGD places them
        state["step"] = _factories.zeros((), dtype=scalar_dtype(), device=p.device)
        state["eta"] = _factories.tensor(to_scalar(group["lr"]), dtype=scalar_dtype(),
                                         device=p.device)
        state["mu"] = _factories.ones((), dtype=scalar_dtype(), device=p.device)
        state["ax"] = _factories.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        lr, lambd, mu, ax = to_scalar(group["lr"]), group["lambd"], state["mu"], state["ax"]
        state["step"].add_(1)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        eta = state["eta"].item()
        p.mul_(1 - lambd * eta)
        p.add_(grad, alpha=-eta)
        if mu.item() != 1:
            ax.add_(p.sub(ax).mul_(mu))
        else:
            ax.copy_(p)
        step = state["step"].item()
        # through a tensor of the default dtype, as PyTorch's ``as_tensor``: a state
        # loaded as float64 still takes float32-rounded values
        state["eta"].copy_(_factories.tensor(lr / ((1 + lambd * lr * step) ** group["alpha"])))
        mu.copy_(_factories.tensor(1 / max(1, step - group["t0"])))
