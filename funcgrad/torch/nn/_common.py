"""What the nn.functional modules share: argument normalisation (PyTorch's int-or-tuple
arguments), and the one place that reads a tensor's funcgrad array or host values."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.torch._tensor import Tensor

__all__ = ["array_of", "host", "const_on", "ntuple", "check_probability", "shape_list",
           "scalar_name"]


def array_of(t: Tensor) -> Any:
    """The funcgrad array a tensor holds (for constants closed over by an op's function:
    labels, indices, masks). Differentiated operands are passed to `apply` instead."""
    return t._data


def host(t: Tensor) -> np.ndarray:
    """A tensor's values as a numpy array (for index arithmetic done on the host): a
    read-only view of a concrete array's host memory (a host copy of a GPU one)."""
    a = t._data
    if type(a) is funcgrad.Array:  # concrete: no detached tensor, no device move
        return a.to_numpy()
    return np.asarray(t.detach().cpu().numpy())


def const_on(raw: Any, like: Any) -> Any:
    """A numpy constant as a funcgrad array on the device of the funcgrad array ``like``."""
    a = fnp.asarray(raw)
    return a if like.device == "cpu" else funcgrad.device_put(a, like.device)


def ntuple(value: Any, n: int, name: str, op: str) -> tuple:
    """An int or a sequence of ``n`` ints as a tuple of ints (PyTorch's `_ntuple`), with
    PyTorch's error when the length is wrong."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    values = tuple(value)
    if len(values) == 1:
        return (int(values[0]),) * n
    if len(values) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the {op} dimensions, but got {name}="
                           f"{list(values)}")
    return tuple(int(v) for v in values)


def check_probability(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def shape_list(shape: Sequence[int]) -> list:
    return [int(s) for s in shape]


def scalar_name(t: Tensor) -> str:
    """A tensor's dtype as PyTorch's errors name it ("Float", "Double", ...)."""
    return t.dtype.scalar_name
