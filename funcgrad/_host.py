"""Waiting for and fetching results: `block_until_ready`, `device_get` (JAX's names), and
the `Array.block_until_ready` method, installed here so that `funcgrad.array` stays the
bottom layer.

On the CPU numpy computes eagerly and there is nothing to wait for; cupy queues kernels on
a stream, so timing GPU code needs ``block_until_ready`` as JAX code does.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import tree_util
from funcgrad.array import Array, to_raw
from funcgrad.backend import synchronize
from funcgrad.core import Tracer

__all__ = ["block_until_ready", "device_get", "effects_barrier"]


def _array_block_until_ready(self: Array) -> Array:
    """Wait until this Array's value has been computed (on a GPU, until its stream is
    idle); returns the Array itself."""
    synchronize(to_raw(self.concrete()))
    return self


Array.block_until_ready = _array_block_until_ready


def _wait_for(leaf: Any) -> None:
    if isinstance(leaf, Array):
        leaf.block_until_ready()
    elif hasattr(leaf, "__cuda_array_interface__"):  # a raw cupy array
        synchronize(leaf)
    elif hasattr(leaf, "block_until_ready"):  # another library's array (a JAX Array...)
        leaf.block_until_ready()


def block_until_ready(x: Any) -> Any:
    """Wait until every array among the leaves of ``x`` has been computed; returns ``x``."""
    for leaf in tree_util.tree_leaves(x):
        _wait_for(leaf)
    return x


def _to_host(x: Any) -> Any:
    if isinstance(x, Tracer):
        return x  # as in JAX: a traced value stays traced
    if isinstance(x, Array):
        return x.to_numpy()
    if hasattr(x, "__cuda_array_interface__") and hasattr(x, "get"):  # a raw cupy array
        return x.get()
    if hasattr(x, "__array__"):  # numpy arrays and scalars, other libraries' arrays
        return np.asarray(x)
    return x


def device_get(x: Any) -> Any:
    """``x`` with every array leaf as a numpy array on the host (a read-only view of a CPU
    Array, a copy of a GPU one); other leaves (Python scalars, strings, traced values)
    are returned as they are."""
    return tree_util.tree_map(_to_host, x)


def effects_barrier() -> None:
    """Wait until every effect started so far (debug prints, io callbacks) has happened
    (JAX's ``jax.effects_barrier``). funcgrad makes a callback's call in Python when the
    program reaches it, before the call that runs the program returns, so nothing is ever
    pending and this returns at once."""
