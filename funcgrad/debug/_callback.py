"""`funcgrad.debug.callback`: a function called for its effect on the values of arrays
wherever it is called (see funcgrad.debug), the mechanism of `print` and `breakpoint`."""
from __future__ import annotations

from typing import Any, Callable

from funcgrad import tree_util
from funcgrad.array import Array, new_array
from funcgrad.core import bind
from funcgrad.primitives.callbacks import debug_callback
import funcgrad.numpy as fnp

__all__ = ["callback"]


def callback(callback: Callable[..., Any], *args: Any, ordered: bool = False,
             **kwargs: Any) -> None:
    """Call ``callback(*args, **kwargs)`` for its effect, with every array leaf of the
    arguments as a concrete funcgrad Array (its value at that point of the program)."""
    del ordered  # (every call runs in program order)
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    arrays = [x if isinstance(x, Array) else fnp.asarray(x) for x in leaves]

    def flat_callback(*raws: Any) -> None:
        a, k = tree.unflatten([new_array(r) for r in raws])
        callback(*a, **k)
    bind(debug_callback, arrays, {"callback": flat_callback})
