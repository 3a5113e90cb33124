"""``ravel_pytree``: a pytree of arrays as one flat vector and the function that rebuilds it
(JAX's `jax.flatten_util`).

Optimisers written for vectors (scipy.optimize, HIPS autograd's adam, natural gradients,
Hessian-vector solvers) take a model's parameters this way. The vector has the promoted
dtype of the leaves (JAX's lattice: int32 with float32 gives float32); ``unravel`` casts
each piece back to its leaf's dtype. Both directions are funcgrad ops (concatenate, slice,
reshape, cast), so they differentiate and trace.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """(the leaves of ``pytree`` raveled and concatenated, ``unravel``): ``unravel(flat)``
    rebuilds a pytree of the same structure, shapes and dtypes from a vector like ``flat``."""
    leaves, treedef = tree_util.tree_flatten(pytree)
    leaves = [fnp.asarray(leaf) for leaf in leaves]
    shapes = [leaf.shape for leaf in leaves]
    dtypes = [np.dtype(leaf.dtype) for leaf in leaves]
    if not leaves:
        flat = fnp.zeros(0)
    else:
        dtype = fnp.result_type(*dtypes)
        flat = fnp.concatenate([fnp.ravel(leaf).astype(dtype) for leaf in leaves])
    sizes = [int(np.prod(s)) for s in shapes]
    ends = np.cumsum(sizes).tolist()

    def unravel(vector: Any) -> Any:
        vector = fnp.asarray(vector)
        if vector.shape != flat.shape:
            raise ValueError(f"The unravel function expected an array of shape {flat.shape}, "
                             f"got shape {vector.shape}.")
        if np.dtype(vector.dtype) != np.dtype(flat.dtype):
            raise TypeError(f"unravel function given array of dtype {np.dtype(vector.dtype)}, "
                            f"but expected dtype {np.dtype(flat.dtype)}")
        pieces = [fnp.reshape(vector[end - size:end], shape).astype(dtype)
                  for end, size, shape, dtype in zip(ends, sizes, shapes, dtypes)]
        return tree_util.tree_unflatten(treedef, pieces)

    return flat, unravel
