"""SGD with momentum, dampening, Nesterov and weight decay: PyTorch's update equations.

    g = grad (+ weight_decay * p);  (negated when maximize)
    buf = g                      on the first step, else  buf = momentum*buf + (1-dampening)*g
    g = g + momentum*buf         if nesterov, else  g = buf         (when momentum != 0)
    p = p - lr * g
"""
from __future__ import annotations

from typing import Any, Iterable

from funcgrad.torch.optim.optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: Any = None, differentiable: bool = False,
                 fused: Any = None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _step_group(self, group: dict) -> None:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        for p in group["params"]:
            if p.grad is None:
                continue
            g = p.grad if not group["maximize"] else -p.grad
            if group["weight_decay"] != 0:
                g = g.add(p, alpha=group["weight_decay"])
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = g.clone().detach()
                else:
                    buf.mul_(momentum).add_(g, alpha=1 - dampening)
                g = g.add(buf, alpha=momentum) if group["nesterov"] else buf
            p.add_(g, alpha=-lr)
