"""SGD with momentum, dampening, Nesterov and weight decay: PyTorch's update equations.

    g = grad (negated when maximize) + weight_decay * p
    b = g                    on the first step, else  b = momentum * b + (1 - dampening) * g
    g = g + momentum * b     if nesterov, else  g = b              (when momentum != 0)
    p = p - lr * g

`_direction` holds these equations, written with arithmetic operators only, so that the
same formula runs on the parameters' funcgrad arrays (the default: no graph is recorded
under no_grad, so tensor ops would only add dispatch) and, with ``differentiable=True``, on
tensors under grad mode, where the update is recorded for autograd.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from funcgrad.array import new_array
from funcgrad.torch._runtime import storage as _storage
from funcgrad.torch.optim import _foreach
from funcgrad.torch._runtime.layouts import strided
from funcgrad.torch._tensor import Tensor, make
from funcgrad.torch.optim.optimizer import (Optimizer, check_fused, check_lr,
                                            has_sparse_grad, to_scalar)

__all__ = ["SGD"]


def _direction(p: Any, g: Any, buf: Any, group: dict,
               first_buffer: Callable = lambda g: g) -> tuple:
    """``(step direction, new momentum buffer or None)`` for parameter value ``p``,
    gradient ``g`` and the previous buffer (None before the first step, when the buffer
    starts as ``first_buffer(g)``)."""
    if group["maximize"]:
        g = -g
    if group["weight_decay"] != 0:
        g = g + group["weight_decay"] * p
    momentum = group["momentum"]
    if momentum == 0:
        return g, None
    buf = first_buffer(g) if buf is None else momentum * buf + (1 - group["dampening"]) * g
    return (g + momentum * buf if group["nesterov"] else buf), buf


def _detached_copy(g: Tensor) -> Tensor:
    """The first momentum buffer on the recorded path: a detached copy of the gradient,
    as PyTorch's (so the first step's buffer carries no gradient)."""
    return g.detach().clone()


class SGD(Optimizer):
    _load_defaults = {"nesterov": False, "maximize": False, "foreach": None,
                      "differentiable": False, "fused": False}

    def __init__(self, params: Iterable[Any], lr: Any = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: Any = None, differentiable: bool = False,
                 fused: Any = None) -> None:
        check_lr(lr)
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
        check_fused(fused, foreach, differentiable)

    sparse_refusal = None  # a sparse gradient takes `_step_tensors`' formula on tensors

    def _step_group(self, group: dict) -> None:
        if group["differentiable"] or has_sparse_grad(group["params"]):
            self._step_tensors(group)
            return
        lr = to_scalar(group["lr"])
        if group["foreach"] is not False and self._step_fused(group, lr):
            return
        for p in group["params"]:
            if p._grad is None:
                continue
            state = self.state[p] if group["momentum"] != 0 else None
            old = state.get("momentum_buffer") if state is not None else None
            direction, buf = _direction(p._a, p._grad._a,
                                        None if old is None else old._a, group)
            if buf is not None:
                if old is None:  # a copy: the first buffer may be the gradient itself
                    state["momentum_buffer"] = make(_storage.snapshot(buf)
                                                    if _storage.same_storage(buf, p._grad._a)
                                                    else buf)
                else:
                    old._assign_array(buf)
            p._add_scaled(direction, -lr)

    def _step_fused(self, group: dict, lr: float) -> bool:
        """The group's update on the memory of its tensors (`_foreach.sgd`); False,
        having done nothing, where some tensor has no memory the fused path may write."""
        params = [p for p in group["params"] if p._grad is not None]
        momentum = group["momentum"] != 0
        bufs = [self.state[p].get("momentum_buffer") for p in params] if momentum else []
        held = [b for b in bufs if b is not None]
        n = len(params)
        raws = _foreach.buffers(params + held + [p._grad for p in params],
                                range(n + len(held)))
        if raws is None:
            return False
        held_raws = iter(raws[n:n + len(held)])
        raw_bufs = ([None if b is None else next(held_raws) for b in bufs] if momentum
                    else [None] * n)
        news = _foreach.sgd(raws[:n], raws[n + len(held):], raw_bufs, group, lr)
        for p, new in zip(params, news):
            if new is not None:
                self.state[p]["momentum_buffer"] = make(new_array(new))
        _foreach.bump(params + held)
        return True

    def _step_tensors(self, group: dict) -> None:
        """The update recorded by autograd (``differentiable=True``: grad mode is on), and
        the update of a group with sparse gradients (their ops keep them sparse)."""
        lr = to_scalar(group["lr"])
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p] if group["momentum"] != 0 else None
            old = state.get("momentum_buffer") if state is not None else None
            direction, buf = _direction(p, p.grad, old, group, _detached_copy)
            if buf is not None:
                if old is None or buf.layout is not strided:  # (a sparse one: a new one)
                    state["momentum_buffer"] = buf
                else:
                    old.copy_(buf)
            p.sub_(direction, alpha=lr)
