"""Collation: how a DataLoader turns a list of samples into a batch, as PyTorch does.

`default_collate` stacks tensors along a new first dimension, turns numpy arrays and
numbers into tensors first (Python floats become float64, ints int64, bools bool), keeps
strings as lists, and recurses into dicts, namedtuples and sequences (a batch of tuples
becomes a list of batched fields). `collate` takes the per-type table
(`default_collate_fn_map`) as an argument, so that custom collate functions can extend it.
`default_convert` (used when batching is off) converts without stacking.
"""
from __future__ import annotations

import collections.abc
import copy
import re
from typing import Any, Callable, Sequence

import numpy as np

from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._factories import as_tensor, from_numpy, tensor
from funcgrad.torch._ops_shape import stack
from funcgrad.torch._tensor import Tensor

__all__ = ["default_convert", "default_collate", "collate", "default_collate_fn_map",
           "collate_tensor_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_float_fn", "collate_int_fn", "collate_str_fn",
           "default_collate_err_msg_format"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")  # numpy dtypes that hold no numbers

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, "
                                  "numbers, dicts or lists; found {}")


def _rebuild_mapping(like: Any, values: dict) -> Any:
    """A mapping of ``like``'s type holding ``values`` (a plain dict if it can't be made)."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(values)
            return clone
        return type(like)(values)
    except TypeError:
        return dict(values)


def _rebuild_sequence(like: Any, values: list) -> Any:
    """A sequence of ``like``'s type holding ``values`` (a plain list if it can't be)."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(like)(values)
    except TypeError:
        return list(values)


def default_convert(data: Any) -> Any:
    """numpy arrays and scalars (not string ones) become tensors, inside any dicts,
    namedtuples and sequences (tuples become lists); everything else is kept."""
    if isinstance(data, Tensor):
        return data
    kind = type(data)
    if kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_"):
        if isinstance(data, np.ndarray) and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return kind(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def collate(batch: Sequence, *, collate_fn_map: dict | None = None) -> Any:
    """Collate ``batch`` by the type of its first element: an entry of ``collate_fn_map``
    (exact type first, then isinstance in table order), else by structure."""
    elem = batch[0]
    kind = type(elem)
    if collate_fn_map is not None:
        if kind in collate_fn_map:
            return collate_fn_map[kind](batch, collate_fn_map=collate_fn_map)
        for types, fn in collate_fn_map.items():
            if isinstance(elem, types):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: collate([d[key] for d in batch],
                                                    collate_fn_map=collate_fn_map)
                                       for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return kind(*(collate(field, collate_fn_map=collate_fn_map) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        # each field is the tuple zip makes (strings stay batched as that tuple, as in PyTorch)
        fields = [collate(f, collate_fn_map=collate_fn_map) for f in zip(*batch)]
        return fields if isinstance(elem, tuple) else _rebuild_sequence(elem, fields)
    raise TypeError(default_collate_err_msg_format.format(kind))


def collate_tensor_fn(batch: Sequence, *, collate_fn_map: dict | None = None) -> Tensor:
    """``torch.stack(batch)``; samples that are plain CPU data (no autograd, the usual
    case) are stacked by numpy in one call, which is the same result without an op per
    sample."""
    if all(not t.requires_grad and t.device.type == "cpu" for t in batch):
        shapes = {tuple(t.shape) for t in batch}
        if len(shapes) == 1 and len({t.dtype for t in batch}) == 1:
            return from_numpy(np.stack([t.numpy() for t in batch]))
    return stack(batch, 0)


def collate_numpy_array_fn(batch: list, *, collate_fn_map: dict | None = None) -> Any:
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: list, *, collate_fn_map: dict | None = None) -> Tensor:
    return as_tensor(np.asarray(batch))  # numpy's promotion of the scalars' own dtypes


def collate_float_fn(batch: list, *, collate_fn_map: dict | None = None) -> Tensor:
    return tensor(batch, dtype=D.float64)


def collate_int_fn(batch: list, *, collate_fn_map: dict | None = None) -> Tensor:
    return tensor(batch)


def collate_str_fn(batch: list, *, collate_fn_map: dict | None = None) -> list:
    return batch


default_collate_fn_map: dict[Any, Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: list) -> Any:
    """`collate` with `default_collate_fn_map`: what a DataLoader batches with."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
