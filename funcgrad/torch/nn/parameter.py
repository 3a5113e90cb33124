"""`nn.Parameter`: a leaf tensor that a Module registers as one of its parameters.

A Parameter made from a tensor shares that tensor's storage and version counter (as
PyTorch's does), so ``Parameter(t)`` and ``t`` see each other's in-place updates.
"""
from __future__ import annotations

import copy
from funcgrad.torch._tensor import Tensor, make
from funcgrad.torch._factories import empty

__all__ = ["Parameter", "Buffer"]


class Parameter(Tensor):
    """``Parameter(data=None, requires_grad=True)``; prints as ``Parameter containing:``."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> "Parameter":
        if data is None:
            data = empty(0)
        data._own()
        p = make(data._a, cls=cls, vc=data._vc)
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass

    def __deepcopy__(self, memo: dict) -> "Parameter":
        if id(self) in memo:
            return memo[id(self)]
        new = Parameter(make(self._copied_array()), self._rg)
        memo[id(self)] = new
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        return new

    def __reduce_ex__(self, protocol: int) -> tuple:
        return (_rebuild_parameter, (self.detach(), self._rg))


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


class Buffer:
    """Marks a tensor assigned to a Module attribute as a buffer (``nn.Buffer(t)``)."""

    def __init__(self, data: Tensor, *, persistent: bool = True):
        self.data = data
        self.persistent = persistent

    def __repr__(self) -> str:
        return f"Buffer({self.data!r})"
