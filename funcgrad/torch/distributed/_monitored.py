"""``torch.distributed.monitored_barrier``: a barrier that names the ranks that never came.

As gloo's: every other rank sends rank 0 a token and waits for its answer; rank 0 waits
for the tokens until ``timeout`` and then raises naming the first rank that did not send
one (all of them with ``wait_all_ranks=True``), in PyTorch's words. A plain barrier cannot
say who is missing: it only hangs. The tokens travel as point-to-point messages on a tag of
their own, and a receive whose sender never came is withdrawn, so no later message is taken
for it.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from funcgrad.distributed.mpi import DEFAULT_TIMEOUT
from funcgrad.primitives.kernels.collectives import Pending
from ._groups import not_in_group, resolve, seconds_of

__all__ = ["monitored_barrier"]

_TAG = 32001  # the tokens' tag (user messages rarely use one this high)
_POLL = 0.001  # seconds between looks at the outstanding tokens


def monitored_barrier(group: Any = None, timeout: Any = None,
                      wait_all_ranks: bool = False) -> None:
    """Wait until every rank of the group has arrived; on rank 0, raise after ``timeout``
    (a ``timedelta``; the group's timeout by default) naming the ranks that did not."""
    g = resolve(group)
    if g is None:
        return not_in_group("monitored_barrier")
    seconds = seconds_of(timeout)
    if seconds is None:
        seconds = g.transport.timeout or DEFAULT_TIMEOUT
    transport, token = g.transport, np.zeros(1, np.uint8)
    deadline = time.monotonic() + seconds
    if transport.rank != 0:
        transport.send(token, 0, _TAG).wait()
        answer = transport.recv(token.shape, token.dtype, 0, _TAG)
        if not _arrived(answer, deadline):
            answer.cancel()
            raise RuntimeError(f"[Rank {transport.rank}]: rank 0 did not answer "
                               f"monitoredBarrier in {int(seconds * 1000)} ms")
        return None
    tokens = {r: transport.recv(token.shape, token.dtype, r, _TAG)
              for r in range(1, transport.size)}
    missing = []
    for rank, pending in tokens.items():
        if not _arrived(pending, deadline if not missing else time.monotonic()):
            missing.append(rank)
            if not wait_all_ranks:
                break
    if missing:
        for pending in tokens.values():
            pending.cancel()
        ms = int(seconds * 1000)
        if wait_all_ranks:
            raise RuntimeError(f"[Rank 0]: Ranks {', '.join(map(str, missing))} failed to "
                               f"pass monitoredBarrier in {ms} ms")
        raise RuntimeError(f"[Rank 0]: Rank {missing[0]} failed to pass monitoredBarrier "
                           f"in {ms} ms")
    for rank in tokens:
        transport.send(token, rank, _TAG).wait()
    return None


def _arrived(pending: Pending, deadline: float) -> bool:
    """Whether ``pending`` finishes before ``deadline`` (then it has been waited for)."""
    while not pending.done():
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL)
    pending.wait()
    return True
