"""Attach the op table to `Tensor`: methods, in-place methods and Python operators.

``x + 1`` is ``torch.add(x, 1)``, ``1 - x`` is ``torch.rsub(x, 1)`` (RsubBackward1),
``2 / x`` is ``x.reciprocal() * 2`` and ``2 ** x`` is ``torch.pow(2, x)``, as in PyTorch.
``x += y`` is ``x.add_(y)``. An operand that is neither a tensor nor a number makes the
operator return NotImplemented.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcgrad.torch import _tensor_str
from funcgrad.torch._conversions import CONVERSIONS
from funcgrad.torch._dispatch import refresh_view
from funcgrad.torch._ops_basic import (FAST_OPERATORS, FUNCTIONS, METHODS,
                                       operator_fast_path)
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._factories import full_like, legacy_init
from funcgrad.torch.autograd.engine import tensor_backward

__all__ = ["install"]

_OPERAND_TYPES = (Tensor, int, float, complex, bool)


def _guard(fn: Callable) -> Callable:
    def method(self: Tensor, other: Any) -> Any:
        if isinstance(other, _OPERAND_TYPES):
            return fn(self, other)
        if isinstance(other, np.generic):
            return fn(self, other.item())
        return NotImplemented
    return method


def _rtruediv(self: Tensor, other: Any) -> Tensor:
    return FUNCTIONS["mul"](FUNCTIONS["reciprocal"](self), other)


def _rpow(self: Tensor, other: Any) -> Tensor:
    return FUNCTIONS["pow"](other, self)


def _rmatmul(self: Tensor, other: Tensor) -> Tensor:
    return FUNCTIONS["matmul"](other, self)


def _rsub(self: Tensor, other: Any) -> Tensor:
    return FUNCTIONS["rsub"](self, other)


def _rfloordiv(self: Tensor, other: Any) -> Tensor:
    return FUNCTIONS["floor_divide"](full_like(self, other), self)


def _rmod(self: Tensor, other: Any) -> Tensor:
    return FUNCTIONS["remainder"](full_like(self, other), self)


def _op(name: str) -> Callable:
    """The op ``name`` as a method (the torch function's ``out=`` handling left out)."""
    return METHODS.get(name) or FUNCTIONS[name]


def _install_layers() -> None:
    """What the layers above the tensor give it: the legacy constructor (factories),
    ``backward`` (the engine), the replay of a written view's graph (the op layer) and
    ``repr`` (printing). `Tensor` imports only the runtime floor, so they are set here."""
    Tensor.__init__ = legacy_init
    Tensor.backward = tensor_backward
    Tensor._refresh_view = refresh_view
    _tensor_str.install(Tensor)


def install() -> None:
    """Add every op of the table as a Tensor method, and the operators."""
    _install_layers()
    for name, fn in {**CONVERSIONS, **METHODS}.items():
        setattr(Tensor, name, fn)
    binary = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div",
              "floordiv": "floor_divide", "mod": "remainder", "pow": "pow",
              "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or",
              "xor": "bitwise_xor", "eq": "eq", "ne": "ne", "lt": "lt", "le": "le",
              "gt": "gt", "ge": "ge"}
    for dunder, name in binary.items():
        method = _guard(_op(name))
        if name in FAST_OPERATORS:
            method = operator_fast_path(name, method)
        setattr(Tensor, f"__{dunder}__", method)
    for dunder in ("add", "mul", "and", "or", "xor"):
        setattr(Tensor, f"__r{dunder}__", _guard(_op(binary[dunder])))
    reflected = {"sub": _rsub, "truediv": _rtruediv, "pow": _rpow, "matmul": _rmatmul,
                 "floordiv": _rfloordiv, "mod": _rmod}
    for dunder, fn in reflected.items():
        setattr(Tensor, f"__r{dunder}__", _guard(fn))
    for dunder, name in [("iadd", "add_"), ("isub", "sub_"), ("imul", "mul_"),
                         ("itruediv", "div_"), ("ipow", "pow_"), ("ifloordiv",
                                                                  "floor_divide_"),
                         ("imod", "remainder_"), ("iand", "bitwise_and_"),
                         ("ior", "bitwise_or_"), ("ixor", "bitwise_xor_")]:
        setattr(Tensor, f"__{dunder}__", _guard(METHODS[name]))
    Tensor.__neg__ = _op("neg")
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = _op("abs")
    Tensor.__invert__ = _op("bitwise_not")
    Tensor.__hash__ = object.__hash__
    Tensor.real = property(_op("real"))
    Tensor.imag = property(_op("imag"))
