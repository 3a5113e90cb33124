"""Module backward hooks: ``register_full_backward_hook`` / ``_pre_hook``.

PyTorch (``torch.utils.hooks.BackwardHook``) passes the module's tensor inputs and its
outputs through identity autograd Functions (``BackwardHookFunction``): the one on the
outputs sees the gradients of the outputs (``grad_output``; the pre-hooks may replace
them), the one on the inputs sees the gradients of the inputs (``grad_input``; the hooks
get both and may replace ``grad_input``). Without an input that requires grad, the hooks
run when ``grad_output`` is known, with ``grad_input`` all None (and PyTorch's warning).
Both Functions are identities (their backward returns what it gets, or the hooks'
replacement): no derivative formula lives here.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.autograd.function import Function

__all__ = ["BackwardHook"]

_NO_INPUT_GRAD_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module "
    "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
    "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
    "details.")


class BackwardHookFunction(Function):
    """The identity, whose backward calls ``ctx.on_grads(grads)`` (PyTorch's name, so the
    outputs' ``grad_fn`` is ``BackwardHookFunctionBackward`` as there)."""

    @staticmethod
    def forward(ctx: Any, on_grads: Callable, *args: Tensor) -> Any:
        ctx.on_grads = on_grads
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        outs = tuple(a.view_as(a) for a in args)
        return outs if len(outs) > 1 else outs[0]

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return (None, *ctx.on_grads(grads))


class BackwardHook:
    """One forward call's hooks: wrap the inputs (`setup_input_hook`) before ``forward``
    and the outputs (`setup_output_hook`) after it."""

    def __init__(self, module: Any, hooks: list, pre_hooks: list) -> None:
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_output: tuple | None = None
        self.n_inputs = 0
        self.input_positions: list = []

    def _wrap(self, values: tuple, on_grads: Callable) -> tuple:
        """``values`` with the tensors that require grad passed through the identity."""
        positions = [i for i, v in enumerate(values)
                     if isinstance(v, Tensor) and v.requires_grad]
        if not positions or not grad_mode.is_grad_enabled():
            return values, []
        wrapped = BackwardHookFunction.apply(on_grads, *[values[i] for i in positions])
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        out = list(values)
        for i, w in zip(positions, wrapped):
            out[i] = w
        return tuple(out), positions

    def setup_input_hook(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        args, self.input_positions = self._wrap(args, self._input_grads)
        return args

    def setup_output_hook(self, out: Any) -> Any:
        single = isinstance(out, Tensor)
        outs, _ = self._wrap((out,) if single else tuple(out) if isinstance(out, (
            tuple, list)) else (out,), self._output_grads)
        return outs[0] if single or not isinstance(out, (tuple, list)) else type(out)(outs)

    def _output_grads(self, grads: tuple) -> tuple:
        for hook in self.pre_hooks:
            r = hook(self.module, grads)
            if r is not None:
                grads = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        self.grad_output = grads
        if not self.input_positions:  # no input needs a gradient: the hooks run now
            if self.hooks:
                warnings.warn(_NO_INPUT_GRAD_WARNING)
            for hook in self.hooks:
                hook(self.module, (None,) * self.n_inputs, grads)
        return grads

    def _input_grads(self, grads: tuple) -> tuple:
        full = [None] * self.n_inputs
        for i, g in zip(self.input_positions, grads):
            full[i] = g
        for hook in self.hooks:
            r = hook(self.module, tuple(full), self.grad_output)
            if r is not None:
                full = list(r)
        return tuple(full[i] for i in self.input_positions)
