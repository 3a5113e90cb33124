"""Tensor methods that convert dtype or device (``to``, ``float()``, ``cuda()``...) and
the ``new_*`` factories: built on the op table and the factories, which sit above
`funcgrad.torch._tensor`, so `funcgrad.torch._methods` installs them on Tensor."""
from __future__ import annotations

from typing import Any

from funcgrad.torch import _factories, _ops_basic
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._tensor import Tensor, _size_args

__all__ = ["CONVERSIONS"]


def _to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``.to(dtype)``, ``.to(device)``, ``.to(device, dtype)``, ``.to(other)``."""
    return _ops_basic.to(self, *args, **kwargs)


def _cuda(self: Tensor, device: Any = None, non_blocking: bool = False) -> Tensor:
    return self.to(D.device("cuda", 0 if device is None else int(
        device.index if isinstance(device, D.device) else device)))


def _cpu(self: Tensor) -> Tensor:
    return self.to("cpu")


def _type(self: Tensor, dtype: Any = None) -> Any:
    if dtype is None:
        return D.tensor_type_name(self.dtype, self._a.device)
    return self.to(dtype)


def _cast_to(dtype: D.dtype) -> Any:
    """The method ``x.float()``, ``x.long()``...: ``x.to(dtype)``."""
    def cast(self: Tensor) -> Tensor:
        return self.to(dtype)
    return cast


_CASTS = {"float": D.float32, "double": D.float64, "half": D.float16,
          "bfloat16": D.bfloat16, "long": D.int64, "int": D.int32, "bool": D.bool,
          "cfloat": D.complex64, "cdouble": D.complex128, "byte": D.uint8, "char": D.int8,
          "short": D.int16}


def _type_as(self: Tensor, other: Tensor) -> Tensor:
    return self.to(other.dtype)


def _new_tensor(self: Tensor, data: Any, dtype: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    return _factories.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                             requires_grad=requires_grad)


def _filled(self: Tensor, size: tuple, value: Any, dtype: Any, device: Any,
            requires_grad: bool) -> Tensor:
    return _factories.full(_size_args(size), value, dtype=dtype or self.dtype,
                           device=device or self.device, requires_grad=requires_grad)


def _new_zeros(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    return _filled(self, size, 0, dtype, device, requires_grad)


def _new_ones(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    return _filled(self, size, 1, dtype, device, requires_grad)


def _new_empty(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    return _filled(self, size, 0, dtype, device, requires_grad)


def _new_full(self: Tensor, size: Any, fill_value: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    return _filled(self, (size,), fill_value, dtype, device, requires_grad)


CONVERSIONS = {
    "to": _to,
    "cuda": _cuda,
    "cpu": _cpu,
    "type": _type,
    "type_as": _type_as,
    "new_tensor": _new_tensor,
    "new_zeros": _new_zeros,
    "new_ones": _new_ones,
    "new_empty": _new_empty,
    "new_full": _new_full,
    **{name: _cast_to(dtype) for name, dtype in _CASTS.items()},
}
