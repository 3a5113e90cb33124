"""Data parallelism for pytrees: average gradients, broadcast parameters, in buckets.

In data-parallel training every rank holds the same parameters, computes the gradient of
its own shard of the batch, and averages the gradients over the ranks before the update:
the average of the per-shard mean gradients is the gradient of the mean loss over the whole
batch. One all-reduce per parameter would pay the per-message latency once per tensor, so
the leaves are packed into *buckets* of about ``bucket_bytes`` (PyTorch DDP's default is 25
MiB): one flat array per bucket, one all-reduce, unpacked again. Leaves of one dtype share
a bucket; the packing is made of funcgrad ops (concatenate, pmean, slicing), so it is
differentiable like everything else.
"""
from __future__ import annotations

from typing import Any, Callable, Hashable

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.array import Array
from funcgrad.core import is_inexact
from .collectives import broadcast, pmean, psum
from .world import WORLD, initialize

__all__ = ["allreduce_gradients", "broadcast_parameters", "buckets", "DEFAULT_BUCKET_BYTES"]

DEFAULT_BUCKET_BYTES = 25 * 2 ** 20


def buckets(leaves: list, bucket_bytes: int, floats_only: bool = True) -> list[list[int]]:
    """Indices of ``leaves`` grouped into buckets: consecutive leaves of one dtype (float
    leaves only, unless ``floats_only`` is false), each bucket at most ``bucket_bytes``
    unless a single leaf is larger."""
    groups: list[list[int]] = []
    size = 0
    for i, leaf in enumerate(leaves):
        if floats_only and not is_inexact(leaf.dtype):
            continue
        nbytes = leaf.size * leaf.dtype.itemsize
        last = groups[-1] if groups else None
        if last is None or leaves[last[0]].dtype != leaf.dtype or size + nbytes > bucket_bytes:
            groups.append([i])
            size = nbytes
        else:
            last.append(i)
            size += nbytes
    return groups


def _bucketed(tree: Any, reduce: Callable[[Any], Any], bucket_bytes: int,
              floats_only: bool) -> Any:
    leaves, treedef = tree_util.tree_flatten(tree)
    leaves = [x if isinstance(x, Array) else fnp.asarray(x) for x in leaves]
    out = list(leaves)
    for group in buckets(leaves, bucket_bytes, floats_only):
        flat = fnp.concatenate([fnp.ravel(leaves[i]) for i in group])
        reduced = reduce(flat)
        start = 0
        for i in group:
            n = leaves[i].size
            out[i] = fnp.reshape(reduced[start:start + n], leaves[i].shape)
            start += n
    return treedef.unflatten(out)


def allreduce_gradients(grads: Any, axis_name: Hashable = WORLD, *, average: bool = True,
                        bucket_bytes: int = DEFAULT_BUCKET_BYTES) -> Any:
    """``grads`` (a pytree) averaged (``average=False``: summed) over the ranks of
    ``axis_name``, a bucket of leaves per all-reduce. Non-float leaves pass unchanged."""
    _bind(axis_name)
    if bucket_bytes <= 0:
        raise ValueError(f"bucket_bytes must be positive, got {bucket_bytes}")
    op = pmean if average else psum
    return _bucketed(grads, lambda flat: op(flat, axis_name), bucket_bytes, True)


def broadcast_parameters(params: Any, axis_name: Hashable = WORLD, *, root: int = 0,
                         bucket_bytes: int = DEFAULT_BUCKET_BYTES) -> Any:
    """``params`` of rank ``root`` on every rank (to start data-parallel training from the
    same point), a bucket of leaves per broadcast."""
    _bind(axis_name)
    if bucket_bytes <= 0:
        raise ValueError(f"bucket_bytes must be positive, got {bucket_bytes}")
    return _bucketed(params, lambda flat: broadcast(flat, axis_name, root), bucket_bytes,
                     False)


def _bind(axis_name: Hashable) -> None:
    if axis_name == WORLD:
        initialize(WORLD)
