"""Collectives of picklable Python objects: broadcast_object_list, all_gather_object,
gather_object, scatter_object_list.

Each object is pickled to bytes; the byte counts travel first (so that every rank knows
the buffer sizes), then the bytes, padded to the longest. As in PyTorch, unpickling runs
arbitrary code: use these only among trusted ranks.
"""
from __future__ import annotations

import pickle
from typing import Any

import numpy as np

from ._groups import not_in_group, resolve
from ._ops import _group_rank

__all__ = ["broadcast_object_list", "all_gather_object", "gather_object",
           "scatter_object_list"]


def _pickled(obj: Any) -> np.ndarray:
    return np.frombuffer(pickle.dumps(obj), dtype=np.uint8)


def _padded(payloads: list, width: int) -> np.ndarray:
    out = np.zeros((len(payloads), width), np.uint8)
    for row, p in zip(out, payloads):
        row[:p.size] = p
    return out


def _unpickled(rows: np.ndarray, lengths: np.ndarray) -> list:
    return [pickle.loads(row[:n].tobytes()) for row, n in zip(rows, lengths)]


def broadcast_object_list(object_list: list, src: int | None = None, group: Any = None,
                          device: Any = None, group_src: int | None = None) -> None:
    """Replace ``object_list``'s entries with those of rank ``src`` (every rank passes a
    list of the same length)."""
    g = resolve(group)
    if g is None:
        return not_in_group("broadcast_object_list")
    root = _group_rank(g, src, group_src)
    t = g.transport
    payloads = [_pickled(o) for o in object_list] if g.rank() == root else []
    lengths = np.array([p.size for p in payloads] if payloads else [0] * len(object_list),
                       np.int64)
    lengths = t.broadcast(lengths, root)
    rows = t.broadcast(_padded(payloads, int(lengths.max(initial=0))) if payloads else
                       np.zeros((len(object_list), int(lengths.max(initial=0))), np.uint8),
                       root)
    if g.rank() != root:
        object_list[:] = _unpickled(rows, lengths)
    return None


def all_gather_object(object_list: list, obj: Any, group: Any = None) -> None:
    """``object_list[r]`` = rank r's ``obj``, on every rank."""
    g = resolve(group)
    if g is None:
        return not_in_group("all_gather_object")
    t = g.transport
    mine = _pickled(obj)
    lengths = t.allgather(np.asarray(mine.size, np.int64))
    rows = t.allgather(_padded([mine], int(lengths.max()))[0])
    got = _unpickled(rows, lengths)
    object_list[:len(got)] = got
    return None


def gather_object(obj: Any, object_gather_list: list | None = None, dst: int | None = None,
                  group: Any = None, group_dst: int | None = None) -> None:
    """``object_gather_list[r]`` of rank ``dst`` = rank r's ``obj``."""
    g = resolve(group)
    if g is None:
        return not_in_group("gather_object")
    root = _group_rank(g, 0 if dst is None and group_dst is None else dst, group_dst)
    if g.rank() == root and object_gather_list is None:
        raise ValueError("Argument ``object_gather_list`` must be specified on destination "
                         "rank.")
    t = g.transport
    mine = _pickled(obj)
    lengths = t.allgather(np.asarray(mine.size, np.int64))
    rows = t.gather(_padded([mine], int(lengths.max()))[0], root)
    if rows is not None:
        got = _unpickled(rows, lengths)
        object_gather_list[:len(got)] = got
    return None


def scatter_object_list(scatter_object_output_list: list,
                        scatter_object_input_list: list | None = None,
                        src: int | None = None, group: Any = None,
                        group_src: int | None = None) -> None:
    """``scatter_object_output_list[0]`` of rank r = ``scatter_object_input_list[r]`` of
    rank ``src``."""
    g = resolve(group)
    if g is None:
        return not_in_group("scatter_object_list")
    root = _group_rank(g, 0 if src is None and group_src is None else src, group_src)
    t = g.transport
    if g.rank() == root:
        if scatter_object_input_list is None or len(scatter_object_input_list) != g.size():
            raise ValueError("Expected argument scatter_object_input_list to be a list of "
                             f"size {g.size()} on the source rank")
        payloads = [_pickled(o) for o in scatter_object_input_list]
        lengths = np.array([p.size for p in payloads], np.int64)
    else:
        payloads, lengths = [], np.zeros(g.size(), np.int64)
    lengths = t.broadcast(lengths, root)
    width = int(lengths.max(initial=0))
    rows = _padded(payloads, width) if payloads else None
    row = t.scatter(rows, root, (width,), np.dtype(np.uint8))
    scatter_object_output_list[0] = pickle.loads(row[:lengths[g.rank()]].tobytes())
    return None
