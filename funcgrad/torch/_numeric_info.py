"""torch.finfo / torch.iinfo, the deprecated end-inclusive torch.range, and the runtime
settings PyTorch programs set at start-up (thread counts, float32 matmul precision),
which funcgrad records and reports back (numpy's kernels choose their own threads; float32
products are always computed in float32)."""
from __future__ import annotations

import math
import os
import warnings
from typing import Any

import numpy as np

from funcgrad import dtypes as lowp
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._factories import tensor

__all__ = ["finfo", "iinfo", "range", "get_num_threads", "set_num_threads",
           "get_num_interop_threads", "set_num_interop_threads",
           "get_float32_matmul_precision", "set_float32_matmul_precision", "is_inference"]


class finfo:
    """The numerical properties of a floating dtype (the default dtype if none)."""

    def __init__(self, type: Any = None) -> None:  # noqa: A002 - PyTorch's name
        dt = D.get_default_dtype() if type is None else D.to_torch_dtype(type)
        if not (dt.is_floating_point or dt.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        info = lowp.finfo(dt.np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        # 10 ** -digits10, as C++'s numeric_limits count a type's decimal digits
        self.resolution = float(10 ** -math.floor(int(info.nmant) * math.log10(2)))
        self.dtype = dt.to_real().name  # complex64 reports float32, as PyTorch

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The numerical properties of an integer dtype."""

    def __init__(self, type: Any) -> None:  # noqa: A002 - PyTorch's name
        dt = D.to_torch_dtype(type)
        if dt.is_floating_point or dt.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        if dt is D.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        info = np.iinfo(dt.np)
        self.bits, self.max, self.min = int(info.bits), int(info.max), int(info.min)
        self.dtype = dt.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"  # (PyTorch's %g)


def range(start: Any, end: Any, step: Any = 1, *, dtype: Any = None,  # noqa: A001
          device: Any = None, requires_grad: bool = False) -> Any:
    """``start, start + step, ..., end`` (end included), in the default float dtype
    unless ``dtype``; deprecated in PyTorch for arange."""
    warnings.warn("torch.range is deprecated and will be removed in a future release "
                  "because its behavior is inconsistent with Python's range builtin. "
                  "Instead, use torch.arange, which produces values in [start, end).",
                  UserWarning, stacklevel=2)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    count = int(math.floor((end - start) / step)) + 1
    dt = D.get_default_dtype() if dtype is None else D.to_torch_dtype(dtype)
    values = start + np.arange(count, dtype=np.float64) * step
    return tensor(values, dtype=dt, device=device, requires_grad=requires_grad)


class _Settings:
    threads = os.cpu_count() or 1
    interop_threads = os.cpu_count() or 1
    matmul_precision = "highest"


def get_num_threads() -> int:
    return _Settings.threads


def set_num_threads(int: int) -> None:  # noqa: A002 - PyTorch's name
    if int <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _Settings.threads = int


def get_num_interop_threads() -> int:
    return _Settings.interop_threads


def set_num_interop_threads(int: int) -> None:  # noqa: A002 - PyTorch's name
    if int <= 0:
        raise RuntimeError("Number of interop threads must be positive")
    _Settings.interop_threads = int


def get_float32_matmul_precision() -> str:
    return _Settings.matmul_precision


def set_float32_matmul_precision(precision: str) -> None:
    """'highest', 'high' or 'medium' (recorded: funcgrad multiplies float32 in float32)."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision: {precision}. Expected one of 'highest', "
                           "'high', or 'medium'.")
    _Settings.matmul_precision = precision


def is_inference(input: Any) -> bool:
    return input.is_inference()
