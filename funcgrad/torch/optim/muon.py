"""Muon with PyTorch's update equations (``_single_tensor_muon``): momentum, then the
update orthogonalized by a quintic Newton-Schulz iteration, for 2-D parameters only.

    b = lerp(b, g, 1 - momentum);  u = lerp(g, b, momentum) if nesterov else b
    O = NS(u): in bfloat16, X = u / max(|u|_F, eps) (transposed when tall), ns_steps times
               A = X X^T;  X = a X + (b A + c A A) X
    p = p * (1 - lr * weight_decay);  p = p - adjusted_lr * O
    adjusted_lr = lr * sqrt(max(1, rows / cols))  ("original")  or  0.2 lr sqrt(max(rows,
    cols))  ("match_rms_adamw")
"""
from __future__ import annotations

import math
from typing import Any, Iterable

from funcgrad.torch import _factories
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import Optimizer, to_scalar

__all__ = ["Muon"]

NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
EPS = 1e-7
NS_STEPS = 5


def orthogonalized(grad: Tensor, coefficients: tuple, steps: int, eps: float) -> Tensor:
    """Newton-Schulz's approximation of U V^T for grad = U S V^T (its singular values near,
    not at, 1), computed in bfloat16 as PyTorch's."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = grad.shape[0] > grad.shape[1]
    x = grad.bfloat16()
    if tall:
        x = x.T
    x = x.div(x.norm().clamp(min=eps))
    for _ in range(steps):
        gram = x @ x.T
        x = FUNCTIONS["addmm"](x, FUNCTIONS["addmm"](gram, gram, gram, beta=b, alpha=c), x,
                               beta=a)
    return x.T if tall else x


def _adjusted_lr(lr: float, how: str | None, shape: tuple) -> float:
    rows, cols = shape[:2]
    if how is None or how == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if how == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    def __init__(self, params: Iterable[Any], lr: Any = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple = NS_COEFFICIENTS, eps: float = EPS,
                 ns_steps: int = NS_STEPS, adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                                      nesterov=nesterov, ns_coefficients=ns_coefficients,
                                      eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        state["momentum_buffer"] = _factories.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        lr, momentum = to_scalar(group["lr"]), group["momentum"]
        buf = state["momentum_buffer"].lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if group["nesterov"] else buf
        update = orthogonalized(update, group["ns_coefficients"], group["ns_steps"],
                                group["eps"])
        p.mul_(1 - lr * group["weight_decay"])
        p.add_(update, alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], tuple(p.shape)))
