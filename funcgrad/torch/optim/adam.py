"""Adam and AdamW with PyTorch's update equations (``_single_tensor_adam``).

    t += 1;  g = grad (negated when maximize)
    g = g + weight_decay * p          (Adam)  |  p = p * (1 - lr * weight_decay)  (decoupled)
    m = lerp(m, g, 1 - beta1);        v = beta2 * v + (1 - beta2) * g * g
    v_max = max(v_max, v)             (amsgrad: the denominator then uses v_max)
    denom = sqrt(v) / sqrt(1 - beta2^t) + eps
    p = p - (lr / (1 - beta1^t)) * m / denom
"""
from __future__ import annotations

import math
from typing import Any, Iterable

from funcgrad.torch import _factories
from funcgrad.torch._runtime import dtypes as D, storage as _storage
from funcgrad.torch._ops_basic import FUNCTIONS
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim import _foreach
from funcgrad.torch.optim.optimizer import (Optimizer, check_adam_options, check_fused,
                                            new_step, to_scalar)

__all__ = ["Adam", "AdamW", "adam_moments"]


def adam_moments(p: Tensor, grad: Tensor, state: dict, group: dict, lr: float) -> Tensor:
    """The part of an update that Adam, NAdam and RAdam share, in their order: count the
    step, apply the weight decay (to ``p`` when decoupled, else into the gradient, which
    is returned), and move ``exp_avg`` and ``exp_avg_sq`` towards the gradient."""
    beta1, beta2 = group["betas"]
    weight_decay = group["weight_decay"]
    state["step"].add_(1)
    if weight_decay != 0:
        if group["decoupled_weight_decay"]:
            p.mul_(1 - lr * weight_decay)
        else:
            grad = grad.add(p, alpha=weight_decay)
    state["exp_avg"].lerp_(grad, 1 - beta1)
    state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    return grad


class Adam(Optimizer):
    sparse_refusal = ("Adam does not support sparse gradients, please consider SparseAdam "
                      "instead")
    _load_defaults = {"amsgrad": False, "maximize": False, "foreach": None,
                      "capturable": False, "differentiable": False,
                      "decoupled_weight_decay": False, "fused": None}

    def __init__(self, params: Iterable[Any], lr: Any = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: Any = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: Any = None,
                 decoupled_weight_decay: bool = False) -> None:
        check_adam_options(lr, eps, betas, weight_decay)
        if not (all(isinstance(b, float) for b in betas) or
                all(isinstance(b, Tensor) for b in betas)):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, b in enumerate(betas):
            if isinstance(b, Tensor) and b.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")
        super().__init__(params, dict(
            lr=lr, betas=tuple(to_scalar(b) for b in betas), eps=eps,
            weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize, foreach=foreach,
            capturable=capturable, differentiable=differentiable, fused=fused,
            decoupled_weight_decay=decoupled_weight_decay))
        check_fused(fused, foreach, differentiable)

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        state["step"] = new_step(p, group)
        state["exp_avg"] = _factories.zeros_like(p)
        state["exp_avg_sq"] = _factories.zeros_like(p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = _factories.zeros_like(p)

    def _step_group(self, group: dict) -> None:
        if group["differentiable"] or group["foreach"] is False or not self._step_fused(
                group):
            super()._step_group(group)

    def _step_fused(self, group: dict) -> bool:
        """The group's update on the memory of its tensors (`_foreach.adam`); False,
        having done nothing, where some tensor has no memory the fused path may write
        (or the per-tensor path must say what is wrong: complex or capturable)."""
        params = [p for p in group["params"] if p._grad is not None]
        if group["capturable"] or any(p.is_complex() for p in params):
            return False
        for p in params:
            if not self.state[p]:
                self._init_state(p, self.state[p], group)
        keys = ["exp_avg", "exp_avg_sq", "step"] + (
            ["max_exp_avg_sq"] if group["amsgrad"] else [])
        states = [self.state[p][k] for p in params for k in keys]
        n = len(params)
        raws = _foreach.buffers(params + states + [p._grad for p in params],
                                range(n + len(states)))
        if raws is None:
            return False
        lr, k = to_scalar(group["lr"]), len(keys)
        for i in range(n):
            m, v, step, *v_max = raws[n + k * i:n + k * (i + 1)]
            _foreach.adam(raws[i], raws[n + len(states) + i], m, v,
                          v_max[0] if v_max else None, step, group, lr)
        # the versions the per-tensor path's in-place ops leave: exp_avg_sq takes a mul_
        # and an addcmul_, a decoupled weight decay a mul_ of the parameter
        decayed = group["decoupled_weight_decay"] and group["weight_decay"] != 0
        _foreach.bump(params + states + [self.state[p]["exp_avg_sq"] for p in params]
                      + (params if decayed else []))
        return True

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        beta1, beta2 = group["betas"]
        lr, eps = to_scalar(group["lr"]), group["eps"]
        adam_moments(p, grad, state, group, lr)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        step_size, bias_correction2_sqrt = _bias_corrections(state["step"], lr, beta1, beta2,
                                                             p.dtype)
        if group["amsgrad"]:
            state["max_exp_avg_sq"].copy_(FUNCTIONS["maximum"](state["max_exp_avg_sq"],
                                                               exp_avg_sq))
            second = state["max_exp_avg_sq"]
        else:
            second = exp_avg_sq
        denom = (second.sqrt() / bias_correction2_sqrt).add_(eps)
        if isinstance(step_size, Tensor):  # addcdiv_'s value must be a number
            p.add_(FUNCTIONS["mul"](exp_avg / denom, -step_size))
        else:
            p.addcdiv_(exp_avg, denom, value=-step_size)


def _bias_corrections(step: Tensor, lr: float, beta1: float, beta2: float,
                      dtype: Any) -> tuple:
    """``(lr / (1 - beta1^t), sqrt(1 - beta2^t))``: Python numbers from the step count,
    or, where the count is a traced value (a training step compiled as one program),
    0-d tensors computed in float64 as Python computes them and rounded to the
    parameters' dtype, as a Python number is when it meets a tensor: the same bits."""
    if _storage.raw_of(step._data) is not None or step.is_meta:
        t = step.item()
        return lr / (1 - beta1 ** t), math.sqrt(1 - beta2 ** t)
    t = step.to(D.float64)
    return ((lr / (1 - beta1 ** t)).to(dtype), (1 - beta2 ** t).sqrt().to(dtype))


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2)."""

    def __init__(self, params: Iterable[Any], lr: Any = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: Any = None, capturable: bool = False,
                 differentiable: bool = False, fused: Any = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True  # AdamW always decouples, as PyTorch's
