"""torch.utils.dlpack for funcgrad.torch: tensors to and from other libraries' arrays
(cupy's above all: a CUDA kernel of a custom op takes ``cupy.from_dlpack(x)`` and returns
``torch.from_dlpack(y)``).

A funcgrad array is immutable, so `from_dlpack` copies (PyTorch shares the memory); the
capsule a tensor exports views its values, which nobody may write to.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.array import new_array
from funcgrad.torch._tensor import Tensor, make

__all__ = ["from_dlpack", "to_dlpack"]

_DLPACK_CUDA = 2  # DLDeviceType kDLCUDA


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor with the values of any object exporting DLPack (a numpy or cupy array, a
    tensor of another library): on the GPU when the object lives on one."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    device_type = ext_tensor.__dlpack_device__()[0]
    if device_type == _DLPACK_CUDA:
        import cupy  # the object lives on a GPU, so cupy (funcgrad's cuda extra) is there
        raw = cupy.array(cupy.from_dlpack(ext_tensor), copy=True)
    else:
        raw = np.array(np.from_dlpack(ext_tensor), copy=True)
    return make(new_array(raw))


def to_dlpack(tensor: Tensor) -> Any:
    """The DLPack capsule of a tensor's values."""
    return tensor.__dlpack__()
