"""Adafactor with PyTorch's update equations (``_single_tensor_adafactor``).

Adam's second moment for a matrix, kept as a row and a column factor (memory O(n + m), not
O(n m)), a step size relative to the parameter's own scale, and an update clipped by its
RMS:

    t += 1;  g = grad (negated when maximize)
    rho = min(lr, 1 / sqrt(t));  alpha = max(eps2, RMS(p)) * rho
    p = p * (1 - lr * weight_decay)
    matrix (and stacks of them): r = lerp(r, mean(g^2, last axis), t^beta2_decay)
                                 c = lerp(c, mean(g^2, second last axis), t^beta2_decay)
                                 v = (r @ c) / max(mean(r over rows), eps1)
    vector:                      v = lerp(v, g^2, t^beta2_decay)
    u = g / sqrt(max(v, eps1^2));  p = p - alpha / max(1, RMS(u) / d) * u

eps1 defaults to the parameter dtype's machine epsilon.
"""
from __future__ import annotations

from typing import Any, Iterable

from funcgrad.torch import _factories
from funcgrad.torch._numeric_info import finfo
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import Optimizer, new_step, to_scalar

__all__ = ["Adafactor"]


def _rms(t: Tensor) -> float:
    return t.norm(2).item() / (t.numel() ** 0.5)


class Adafactor(Optimizer):
    _load_defaults = {"foreach": None, "maximize": False}

    def __init__(self, params: Iterable[Any], lr: Any = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: Any = None, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        for ok, message in ((0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}"),
                            (0.0 >= beta2_decay,
                             f"beta2_decay should be <= 0 but is: {beta2_decay}"),
                            (eps[0] is None or 0.0 <= eps[0],
                             f"epsilon1 should be >= 0 but is: {eps[0]}"),
                            (0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}"),
                            (1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}"),
                            (0.0 <= weight_decay,
                             f"weight_decay should be >= 0 but is: {weight_decay}")):
            if not ok:
                raise ValueError(message)
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        state["step"] = new_step(p, group)
        if p.ndim > 1:  # factored along the last two axes
            state["row_var"] = p.new_zeros(*p.shape[:-1], 1)
            state["col_var"] = p.new_zeros(*p.shape[:-2], 1, p.shape[-1])
        else:
            state["variance"] = _factories.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = finfo(p.dtype).eps
        lr = to_scalar(group["lr"])
        step = state["step"].add_(1).item()
        decay_weight = step ** group["beta2_decay"]
        alpha = max(eps2, _rms(p)) * min(lr, 1 / step ** 0.5)
        if group["weight_decay"] != 0:
            p.mul_(1 - lr * group["weight_decay"])
        if grad.ndim > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_var.lerp_(grad.norm(dim=-1, keepdim=True).square_().div_(grad.shape[-1]),
                          decay_weight)
            col_var.lerp_(grad.norm(dim=-2, keepdim=True).square_().div_(grad.shape[-2]),
                          decay_weight)
            estimate = (row_var @ col_var).div_(row_var.mean(dim=-2, keepdim=True)
                                                .clamp_(min=eps1))
        else:
            state["variance"].lerp_(grad * grad, decay_weight)
            estimate = state["variance"].clone()
        update = estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        denom = max(1.0, _rms(update) / group["d"])
        p.add_(update, alpha=-alpha / denom)
