"""Room on Python's stack for programs that nest deeply.

Staging, compiling and differentiating a program recurse once per level of nested
constructs (about ten frames a level: the user's branch, the construct, its bind, the
trace's scope...). JAX's programs nest 100 conds deep, past Python's default limit of 1000
frames. Each recursive step opens `room()`: where the stack is near the limit, the limit is
raised for the step and put back after; elsewhere it costs one C-level frame lookup.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Iterator

__all__ = ["room", "HEADROOM"]

HEADROOM = 250  # the frames one level of nesting may take, with a margin


def _depth() -> int:
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


@contextlib.contextmanager
def _raised(limit: int, needed: int) -> Iterator[None]:
    sys.setrecursionlimit(needed)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def room() -> contextlib.AbstractContextManager:
    """A context in which the stack has ``HEADROOM`` frames left before the limit."""
    limit = sys.getrecursionlimit()
    try:
        sys._getframe(max(limit - HEADROOM, 0))  # (deep already: else ValueError, quickly)
    except ValueError:
        return contextlib.nullcontext()
    return _raised(limit, _depth() + HEADROOM)
