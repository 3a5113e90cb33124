"""Indexing tensors: ``x[idx]`` (a view for a basic index, as in PyTorch; a gather for an
advanced one), ``x[idx] = v`` (an in-place write, CopySlices or IndexPutBackward0) and
iteration. A basic index is one getitem primitive call, recorded without a trace."""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.torch._dispatch import apply
from funcgrad.torch._inplace import inplace
from funcgrad.torch._ops_basic import cast, operand
from funcgrad.torch._ops_shape import basic_index_call, unbind
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch._runtime.node import VIEW_OF_LEAF_ERROR

__all__ = ["getitem", "setitem"]


def _index_data(idx: Any) -> Any:
    if isinstance(idx, Tensor):
        return idx._a
    if isinstance(idx, tuple):
        return tuple(_index_data(i) for i in idx)
    if isinstance(idx, list) and any(isinstance(i, Tensor) for i in idx):
        return [_index_data(i) for i in idx]
    return idx


def _index_node(idx: Any) -> str:
    parts = idx if isinstance(idx, tuple) else (idx,)
    if any(isinstance(p, (Tensor, list, np.ndarray)) for p in parts):
        return "IndexBackward0"
    last = "AliasBackward0"
    for p in parts:
        if isinstance(p, (int, np.integer)):
            last = "SelectBackward0"
        elif isinstance(p, slice) and p != slice(None):
            last = "SliceBackward0"
        elif p is None:
            last = "UnsqueezeBackward0"
    return last


def getitem(self: Tensor, idx: Any) -> Tensor:
    """``x[idx]`` with basic and advanced (tensor, list, bool mask) indexing."""
    data = _index_data(idx)
    try:
        return apply(_index_node(idx), basic_index_call(data, self), [self])
    except IndexError as e:  # numpy's words for PyTorch's
        raise IndexError(str(e).replace(" for axis ", " for dimension ")) from None


def setitem(self: Tensor, idx: Any, value: Any) -> None:
    """``x[idx] = value``: an in-place op writing the indexed elements (grad_fn
    CopySlices, or IndexPutBackward0 for an advanced index, as PyTorch's index_put_)."""
    data = _index_data(idx)
    dtype = self._a.dtype
    advanced = _index_node(idx) == "IndexBackward0"
    if not advanced and self.is_leaf and self.requires_grad and grad_mode.is_grad_enabled():
        # PyTorch writes a basic index through a view of the tensor
        raise RuntimeError(VIEW_OF_LEAF_ERROR)
    node = "IndexPutBackward0" if advanced else "CopySlices"
    if isinstance(value, Tensor):
        inplace(self, node, lambda x, v: x.at[data].set(cast(v, dtype), mode="raise"),
                [value], region=data)
    else:
        value = operand(value)
        inplace(self, node, lambda x: x.at[data].set(value, mode="raise"), region=data)


Tensor.__getitem__ = getitem
Tensor.__setitem__ = setitem


def _iter(self: Tensor) -> Any:
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(unbind(self, 0))


Tensor.__iter__ = _iter
