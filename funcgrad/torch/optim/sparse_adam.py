"""SparseAdam: Adam on the rows a sparse gradient holds (``nn.Embedding(sparse=True)``'s).

PyTorch's masked update, in its order of operations: the moments of the stored elements
move towards the (coalesced) gradient's values, and only those elements of the parameter
are updated; a row the gradient holds is updated even where its values are zero. A dense
gradient is refused with PyTorch's error.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable

from funcgrad.torch import _factories
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import Optimizer, check_betas, to_scalar

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    sparse_refusal = None

    def __init__(self, params: Iterable[Any], lr: Any = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does "
                             "not support complex parameters")

    def step(self, closure: Callable | None = None) -> Any:
        """Run ``closure``; then update each parameter's elements its sparse gradient
        holds."""
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        with grad_mode.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not p.grad.is_sparse:
                        raise RuntimeError("SparseAdam does not support dense gradients, "
                                           "please consider Adam instead")
                    self._update(p, group)
        return loss

    def _update(self, p: Tensor, group: dict) -> None:
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["exp_avg"] = _factories.zeros_like(p)
            state["exp_avg_sq"] = _factories.zeros_like(p)
        state["step"] += 1
        grad = (-p.grad if group["maximize"] else p.grad).coalesce()
        values = grad._values()
        if values.numel() == 0:
            return
        at = tuple(grad._indices())
        beta1, beta2 = group["betas"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        old_avg = exp_avg[at]
        avg_update = values.sub(old_avg).mul_(1 - beta1)
        exp_avg.index_put_(at, avg_update, accumulate=True)
        old_sq = exp_avg_sq[at]
        sq_update = values.pow(2).sub_(old_sq).mul_(1 - beta2)
        exp_avg_sq.index_put_(at, sq_update, accumulate=True)
        numer = avg_update.add_(old_avg)
        denom = sq_update.add_(old_sq).sqrt_().add_(group["eps"])
        step = state["step"]
        step_size = to_scalar(group["lr"]) * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        p.index_put_(at, -step_size * numer.div_(denom), accumulate=True)
