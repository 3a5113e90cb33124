"""SparseAdam: PyTorch's options, checks and errors.

PyTorch's SparseAdam updates only the rows a sparse gradient holds (that of an
``nn.Embedding(sparse=True)``) and refuses dense gradients. funcgrad.torch has no sparse
tensors (``sparse=True`` embeddings are refused), and reading the rows off a dense
gradient would not give PyTorch's numbers: a row the sparse gradient holds may be all
zeros (PyTorch still decays its moments there), and duplicate indices are summed in
another order. So a step with a (dense) gradient raises PyTorch's dense-gradient error, as
PyTorch does, rather than compute something else; everything up to the step (options,
checks, ``state_dict``, a closure's loss) behaves as PyTorch's.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from funcgrad.torch.autograd import grad_mode
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import Optimizer, check_betas

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
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
        """Run ``closure``; then, as PyTorch for a dense gradient, refuse to update."""
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        if any(p.grad is not None for group in self.param_groups for p in group["params"]):
            raise RuntimeError("SparseAdam does not support dense gradients, please "
                               "consider Adam instead")
        return loss
