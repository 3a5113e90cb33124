"""JAX's host callbacks: `pure_callback` (``jax.pure_callback``) and `io_callback`
(``jax.experimental.io_callback``): a Python function called on the values of arrays from
inside any transform, returning arrays of declared shapes and dtypes. See
`funcgrad.primitives.callbacks` for how each behaves under jit, vmap and differentiation;
`funcgrad.debug.callback` is the one without results.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.core import bind, find_top_trace
from funcgrad.primitives import callbacks as P
import funcgrad.numpy as fnp

__all__ = ["pure_callback", "io_callback", "staged_io_callback"]


class _FlatCallback:
    """The user's function on flat backend arrays: arguments rebuilt into their pytree, the
    results flattened (the primitive checks their shapes and dtypes)."""

    def __init__(self, api_name: str, fn: Callable, in_tree: Any, out_tree: Any):
        self.api_name, self.fn, self.in_tree, self.out_tree = api_name, fn, in_tree, out_tree

    def __repr__(self) -> str:
        return getattr(self.fn, "__name__", type(self.fn).__name__)

    def __call__(self, *raws: Any) -> list:
        args, kwargs = self.in_tree.unflatten([np.asarray(r) for r in raws])
        leaves, tree = tree_util.tree_flatten(self.fn(*args, **kwargs))
        if tree != self.out_tree:
            raise TypeError(f"{self.api_name}: the callback returned a value of structure "
                            f"{tree}, but result_shape_dtypes declares {self.out_tree}")
        return leaves


def _call(prim: Any, name: str, callback: Callable, result_shape_dtypes: Any,
          args: tuple, kwargs: dict, params: dict, into: Any = None) -> Any:
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    arrays = [x if isinstance(x, Array) else fnp.asarray(x) for x in leaves]
    P.refuse_derivatives("Pure" if prim is P.pure_callback else "IO", arrays)
    declared, out_tree = tree_util.tree_flatten(result_shape_dtypes)
    avals = tuple((tuple(d.shape), np.dtype(d.dtype)) for d in declared)
    flat = _FlatCallback(name, callback, in_tree, out_tree)
    params = {"callback": flat, "result_avals": avals, **params}
    if into is not None and find_top_trace(arrays) is None:  # (constants alone: bind would
        outs = into.process(prim, arrays, params)             # run it now, not in `into`)
    else:
        outs = bind(prim, arrays, params)
    return out_tree.unflatten(list(outs))


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None,
                  **kwargs: Any) -> Any:
    """``callback(*args, **kwargs)`` on numpy arrays, assumed pure: its results (numpy
    arrays shaped as ``result_shape_dtypes``, a pytree of objects with ``shape`` and
    ``dtype``) in that pytree. Under vmap ``vmap_method`` says how: "sequential" (one call
    per example), "expand_dims" (unbatched arguments get a leading axis of size 1) or
    "broadcast_all" (every argument broadcast to the batch); without one vmap refuses.
    ``sharding`` is JAX's placement hint: funcgrad runs on one device and ignores it."""
    del sharding
    if vmap_method is not None and vmap_method not in P.VMAP_METHODS:
        raise ValueError(f"pure_callback: unknown vmap_method {vmap_method!r}; use one of "
                         f"{P.VMAP_METHODS}")
    return _call(P.pure_callback, "pure_callback", callback, result_shape_dtypes, args,
                 kwargs, {"vmap_method": vmap_method})


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """``callback(*args, **kwargs)`` for its effects and results (as `pure_callback`'s);
    never dropped by a compiled program, even when its results are unused. Calls run in
    program order; under vmap once per example, which ``ordered=True`` refuses."""
    del sharding
    return _call(P.io_callback, "io_callback", callback, result_shape_dtypes, args, kwargs,
                 {"ordered": bool(ordered)})


def staged_io_callback(trace: Any, callback: Callable[..., Any], result_shape_dtypes: Any,
                       *args: Any) -> Any:
    """`io_callback` recorded in the program ``trace`` is tracing even when no argument is
    one of its tracers (an effect on state outside the program: `funcgrad.ref`'s)."""
    return _call(P.io_callback, "io_callback", callback, result_shape_dtypes, args, {},
                 {"ordered": True}, into=trace)
