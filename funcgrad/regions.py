"""`Regions`: how many regions of one kind are open, over all threads.

Grad mode, inference mode, forward-AD levels, profiling sessions, saved-tensor hooks and
the phase of a backward pass are per thread (`threading.local`), and every torch-facade op
reads them. A thread-local read costs CPython about 400 instructions (callgrind, 3.11),
more than the rest of a small op's attribute reads together; so each kind of region also
keeps a count of the open ones over all threads, and while it is zero (the common case) no
thread is in one and the op skips the thread-local read. The count only ever over-states
(a thread that exits without closing its region leaves it up): then ops just read the
thread-local state.
"""
from __future__ import annotations

import threading

__all__ = ["Regions"]


class Regions:
    """The count of open regions of one kind (``open``), over all threads."""

    __slots__ = ("open", "_lock")

    def __init__(self) -> None:
        self.open = 0
        self._lock = threading.Lock()

    def enter(self) -> None:
        with self._lock:
            self.open += 1

    def exit(self) -> None:
        with self._lock:
            self.open -= 1
