"""Kernels of the set and search primitives: numpy's (or cupy's) data-dependent answers,
computed on backend arrays. Their results are integer positions, so the primitives that
call them are not differentiable; the values that depend on them (unique values, sorted
unions...) are gathers of the inputs at these positions, which are."""
from __future__ import annotations

from typing import Any

import numpy as np


def unique_positions(x: Any, axis: Any, equal_nan: bool) -> tuple:
    """(index of each unique value's first occurrence, inverse indices shaped as numpy's
    ``unique(return_inverse=True)`` gives them, counts), unique values in sorted order.
    With ``equal_nan`` False every NaN is its own value (the Array API's rule)."""
    _, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                          return_counts=True, axis=axis,
                                          equal_nan=equal_nan)
    return index, inverse, counts


def isin(element: Any, test_elements: Any, invert: bool) -> Any:
    """Whether each element of ``element`` occurs in ``test_elements``."""
    return np.isin(element, test_elements, invert=invert)


def searchsorted(a: Any, v: Any, side: str) -> Any:
    """Insertion points of ``v`` in the sorted 1-D ``a``."""
    return np.searchsorted(a, v, side=side)


def digitize(x: Any, bins: Any, right: bool) -> Any:
    """numpy's digitize: the bin of each x (bins increasing or decreasing)."""
    return np.digitize(x, bins, right=right)


def lexsort(keys: tuple, axis: int) -> Any:
    """The indirect stable sort by several keys, the last one primary."""
    return np.lexsort(keys, axis=axis)
