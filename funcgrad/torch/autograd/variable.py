"""`Variable`: PyTorch's legacy wrapper, kept as PyTorch keeps it.

Since PyTorch 0.4 every tensor is a "variable": ``Variable(t, requires_grad=True)`` returns
a plain `Tensor` that shares ``t``'s storage (its ``detach()``) with the requested
``requires_grad``, and ``isinstance(x, Variable)`` is true for any tensor. ``volatile`` is
accepted with PyTorch's warning and has no effect.
"""
from __future__ import annotations

import warnings
from typing import Any

from funcgrad.torch._tensor import Tensor
from funcgrad.torch._tensor import Tensor
from funcgrad.torch import _factories

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)`` -> a Tensor."""

    def __new__(cls, data: Any = None, requires_grad: bool = False,
                volatile: bool = False) -> Any:
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        if data is None:
            return _factories.tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
