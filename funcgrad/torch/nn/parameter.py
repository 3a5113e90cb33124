"""`nn.Parameter`: a leaf tensor that a Module registers as one of its parameters.

A Parameter made from a tensor shares that tensor's storage and version counter (as
PyTorch's does), so ``Parameter(t)`` and ``t`` see each other's in-place updates.

`UninitializedParameter` and `UninitializedBuffer` are tensors whose shape is not known yet
(PyTorch 2.13's): one holds an empty tensor of its future dtype and device and becomes a
Parameter (or a plain Tensor) in place by ``materialize(shape)``. Until then a facade op
given one raises PyTorch's ValueError (the ops ask each tensor argument's ``_refuses``, where
PyTorch's ``__torch_function__`` does; the facade names the op where PyTorch names the
function object), and ``.shape`` and ``share_memory_()`` raise PyTorch's RuntimeErrors;
``size()``, dtype and device stay readable.
"""
from __future__ import annotations

import copy
from typing import Any

from funcgrad.torch._tensor import Tensor, make
from funcgrad.torch._factories import empty

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


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

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


class Buffer:
    """Marks a tensor assigned to a Module attribute as a buffer (``nn.Buffer(t)``)."""

    def __init__(self, data: Tensor, *, persistent: bool = True):
        self.data = data
        self.persistent = persistent

    def __repr__(self) -> str:
        return f"Buffer({self.data!r})"


class UninitializedTensorMixin:
    """What both placeholders share: ``materialize`` and the refusals."""
    __slots__ = ()
    cls_to_become: type
    _refuses = True

    def _refusal(self, op: str) -> ValueError:
        return ValueError(
            f"Attempted to use an uninitialized parameter in {op}. This error happens when you "
            f"are using a `LazyModule` or explicitly manipulating "
            f"`torch.nn.parameter.{type(self).__name__}` objects. When using LazyModules Call "
            f"`forward` with a dummy batch to initialize the parameters before calling torch "
            f"functions")

    def _kind_op(self, op: str, args: tuple, kwargs: dict) -> Any:
        raise self._refusal(op)

    def detach(self) -> Any:
        raise self._refusal("detach")

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Become a ``cls_to_become`` of ``shape`` (uninitialised values), on the device and
        of the dtype given at construction unless given here."""
        data = self.data
        self.data = empty(shape, device=device or data.device,
                                     dtype=dtype or data.dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes.")

    def share_memory_(self) -> Any:
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    __str__ = __repr__  # (Parameter's str prints values; a placeholder has none)

    def __reduce_ex__(self, protocol: int) -> tuple:
        return (type(self), (self.requires_grad,))

    def __deepcopy__(self, memo: dict) -> Any:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet."""
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None,
                dtype: Any = None) -> "UninitializedParameter":
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype),
                                 requires_grad)

    def __init__(self, requires_grad: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet."""
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None,
                dtype: Any = None) -> "UninitializedBuffer":
        data = empty(0, device=device, dtype=dtype).as_subclass(cls)
        return data.requires_grad_(requires_grad)

    def __init__(self, requires_grad: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        pass
