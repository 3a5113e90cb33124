"""`select`: JAX's ``lax.select``, the elementwise choice between two arrays of one type."""
from __future__ import annotations

from typing import Any

from funcgrad.array import Array
import funcgrad.numpy as fnp
from funcgrad.primitives.select import where

__all__ = ["select"]


def select(pred: Any, on_true: Any, on_false: Any) -> Array:
    """``on_true`` where ``pred`` holds, else ``on_false``: a boolean ``pred`` and two
    operands of the same shape and dtype (no broadcasting, no promotion: that is
    `funcgrad.numpy.where`)."""
    pred, on_true, on_false = fnp.asarray(pred), fnp.asarray(on_true), fnp.asarray(on_false)
    if pred.dtype != bool:
        raise TypeError(f"select pred must be boolean type, got {pred.dtype}.")
    if on_true.shape != on_false.shape or on_true.dtype != on_false.dtype:
        raise TypeError("select cases must have the same shapes and dtypes, got "
                        f"{on_true.dtype}{list(on_true.shape)} and "
                        f"{on_false.dtype}{list(on_false.shape)}.")
    if pred.shape not in ((), tuple(on_true.shape)):
        raise TypeError("select pred must be scalar or have the same shape as cases, got "
                        f"pred shape {tuple(pred.shape)} for cases of shape "
                        f"{tuple(on_true.shape)}.")
    return where(pred, on_true, on_false)
