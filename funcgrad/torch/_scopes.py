"""Blocks that change what facade ops read: `capture_inputs` notes every tensor an op
reads, `substituting` makes ops read other arrays in place of some tensors' own.

`funcgrad.torch.utils.checkpoint` uses both (to find the parameters a function reads from
its closure, then to run it on traced arrays without touching the tensors). `apply` asks
`open_scopes` first, so that ops pay nothing while no block is open in any thread.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Iterator, Sequence

from funcgrad.regions import Regions
from funcgrad.torch._tensor import Tensor

__all__ = ["capture_inputs", "substituting", "in_scopes", "open_scopes", "scopes"]


class _Scopes(threading.local):
    """The blocks running on this thread, innermost last: ("seen", tensors seen by ops) or
    ("arrays", arrays ops read instead of some tensors' own); per thread, as other threads
    may be using the same tensors."""

    def __init__(self) -> None:
        self.stack: list[tuple[str, dict]] = []


scopes = _Scopes()
open_scopes = Regions()  # the blocks open in all threads (ops skip `scopes` while none is)


@contextlib.contextmanager
def _scope(kind: str, table: dict) -> Iterator[dict]:
    scopes.stack.append((kind, table))
    open_scopes.enter()
    try:
        yield table
    finally:
        scopes.stack.pop()
        open_scopes.exit()


def capture_inputs() -> contextlib.AbstractContextManager[dict]:
    """Collect id(tensor) -> tensor for every tensor an op reads inside the block."""
    return _scope("seen", {})


def substituting(arrays: dict) -> contextlib.AbstractContextManager[dict]:
    """Inside the block, ops read ``arrays[id(t)]`` in place of the array of tensor ``t``."""
    return _scope("arrays", arrays)


def in_scopes(inputs: Sequence, datas: list) -> list:
    """The op's arrays as the running blocks have them (and the inputs noted as seen)."""
    noted = False
    for kind, table in reversed(scopes.stack):
        if kind == "seen" and not noted:
            table.update((id(x), x) for x in inputs if isinstance(x, Tensor))
            noted = True
    out = list(datas)
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            for kind, table in reversed(scopes.stack):
                if kind == "arrays" and id(x) in table:
                    out[i] = table[id(x)]
                    break
    return out
