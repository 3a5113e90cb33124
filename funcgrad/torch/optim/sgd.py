"""SGD with momentum, dampening, Nesterov and weight decay: PyTorch's update equations.

    g = grad (+ weight_decay * p);  (negated when maximize)
    buf = g                      on the first step, else  buf = momentum*buf + (1-dampening)*g
    g = g + momentum*buf         if nesterov, else  g = buf         (when momentum != 0)
    p = p - lr * g
"""
from __future__ import annotations

from typing import Any, Iterable

from funcgrad.torch._tensor import make
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
        """The update equations on the parameters' arrays (no graph is recorded under
        no_grad, so tensor ops would only add dispatch), rebinding each parameter and
        momentum buffer in place with a version bump, as PyTorch's in-place update does."""
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov, maximize = (group["weight_decay"], group["nesterov"],
                                            group["maximize"])
        for p in group["params"]:
            if p._grad is None:
                continue
            g = p._grad._st.a
            if maximize:
                g = -g
            if weight_decay != 0:
                g = g + weight_decay * p._st.a
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:  # arrays are immutable: the buffer can start as g itself
                    buf = state["momentum_buffer"] = make(g)
                else:
                    buf._assign_array(momentum * buf._st.a + (1 - dampening) * g)
                g = g + momentum * buf._st.a if nesterov else buf._st.a
            p._assign_array(p._st.a - lr * g)
