"""The RPC agent: requests and replies between the workers of the MPI job.

Each worker owns a duplicate of ``COMM_WORLD`` for RPC (so that its messages never meet a
collective's) and one listening thread. The thread polls for messages (``iprobe``, backing
off to a few milliseconds when idle, so that an idle agent costs almost no CPU), receives
them (pickled, mpi4py's lowercase methods), hands requests to a thread pool (a function
that itself calls RPC must not block the listener that will receive its reply) and
completes the caller's futures with replies. Requests are ``call`` (run a function,
reply its result), ``remote`` (run it and keep the result under an RRef id, reply once it
exists) and ``fetch`` (reply the value an RRef id holds, once it exists).

Exceptions raised by a remote function travel back and are raised by the caller, with
the remote traceback attached as a note. Functions are pickled by reference, so they must
be importable by the same name on the callee: module-level functions of the script or of
a library (every worker runs the same script).
"""
from __future__ import annotations

import concurrent.futures
import itertools
import pickle
import threading
import time
import traceback
from typing import Any

from funcgrad.torch.futures import Future

__all__ = ["Agent", "WorkerInfo"]

_REQUEST, _REPLY = 1, 2


class WorkerInfo:
    """A worker's name and id (its rank in the RPC group)."""

    __slots__ = ("name", "id")

    def __init__(self, name: str, id: int):
        self.name = name
        self.id = id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WorkerInfo) and (self.name, self.id) == (other.name,
                                                                          other.id)

    def __hash__(self) -> int:
        return hash((self.name, self.id))

    def __repr__(self) -> str:
        return f"WorkerInfo(id={self.id}, name={self.name})"

    def __reduce__(self) -> tuple:
        return (WorkerInfo, (self.name, self.id))


def _portable(error: BaseException) -> BaseException:
    """``error`` with the remote traceback as a note, as something that pickles."""
    note = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    try:
        pickle.dumps(error)
    except Exception:  # an exception that does not pickle travels as its text
        error = RuntimeError(f"{type(error).__name__}: {error}")
    error.__traceback__ = None
    error.add_note(f"The remote traceback:\n{note}")
    return error


class Agent:
    """One worker's end of the RPC group."""

    def __init__(self, comm: Any, MPI: Any, name: str, num_threads: int):
        self.comm = comm
        self.MPI = MPI
        self.rank = comm.Get_rank()
        names = comm.allgather(name)
        if len(set(names)) != len(names):
            raise RuntimeError(f"init_rpc: worker names must be unique, got {names}")
        self.workers = [WorkerInfo(n, i) for i, n in enumerate(names)]
        self.me = self.workers[self.rank]
        self._ids = itertools.count()
        self._pending: dict[int, tuple[Future, float | None, str]] = {}
        self._owned: dict[tuple, Future] = {}  # RRef key -> the value, once it exists
        self._lock = threading.Lock()
        self._pool = concurrent.futures.ThreadPoolExecutor(
            num_threads, thread_name_prefix="funcgrad.rpc worker")
        self._stopping = threading.Event()
        self._listener = threading.Thread(target=self._listen, daemon=True,
                                          name="funcgrad.rpc listener")

    def start(self) -> None:
        """Start listening, then wait until every worker listens (so that no request
        reaches a worker that is not ready to serve it)."""
        self._listener.start()
        self.comm.Barrier()

    # -- the caller's side ---------------------------------------------------------------------
    def request(self, to: WorkerInfo, kind: str, payload: tuple, timeout: float,
                what: str) -> Future:
        """Send a request; its reply completes the future, or PyTorch's timeout error
        after ``timeout`` seconds (0: no limit)."""
        rid = next(self._ids)
        fut: Future = Future()
        deadline = time.monotonic() + timeout if timeout > 0 else None
        with self._lock:
            self._pending[rid] = (fut, deadline, what)
        self.comm.send((rid, kind, payload), dest=to.id, tag=_REQUEST)
        return fut

    def new_rref_key(self) -> tuple:
        return (self.rank, next(self._ids))

    def own(self, key: tuple) -> Future:
        """The future value of the RRef ``key`` owned here (made on first use)."""
        with self._lock:
            return self._owned.setdefault(key, Future())

    def outstanding(self) -> list[Future]:
        with self._lock:
            return [fut for fut, _, _ in self._pending.values()]

    # -- the listener and the callee's side ----------------------------------------------------
    def _listen(self) -> None:
        status = self.MPI.Status()
        idle = 0
        while not self._stopping.is_set():
            if not self.comm.iprobe(source=self.MPI.ANY_SOURCE, tag=self.MPI.ANY_TAG,
                                    status=status):
                self._expire()
                time.sleep(min(0.004, 2e-5 * 2 ** min(idle, 8)))
                idle += 1
                continue
            idle = 0
            source, tag = status.Get_source(), status.Get_tag()
            message = self.comm.recv(source=source, tag=tag)
            if tag == _REPLY:
                self._complete(*message)
            else:
                self._pool.submit(self._serve, source, *message)

    def _expire(self) -> None:
        now = time.monotonic()
        with self._lock:
            late = [(rid, entry) for rid, entry in self._pending.items()
                    if entry[1] is not None and now > entry[1]]
            for rid, _ in late:
                del self._pending[rid]
        for _, (fut, deadline, what) in late:
            fut.set_exception(RuntimeError(
                f"RPC ran for more than set timeout ({what}) and will now be marked with an "
                "error"))

    def _complete(self, rid: int, ok: bool, value: Any) -> None:
        with self._lock:
            entry = self._pending.pop(rid, None)
        if entry is None:  # it timed out already
            return
        fut = entry[0]
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)

    def _serve(self, source: int, rid: int, kind: str, payload: tuple) -> None:
        try:
            reply = (rid, True, self._run(kind, payload))
        except BaseException as e:  # the caller raises it
            reply = (rid, False, _portable(e))
        try:
            self.comm.send(reply, dest=source, tag=_REPLY)
        except Exception as e:  # a result that does not pickle: say so instead
            self.comm.send((rid, False, RuntimeError(
                f"the result of the RPC could not be sent back: {e}")), dest=source,
                tag=_REPLY)

    def _run(self, kind: str, payload: tuple) -> Any:
        if kind == "call":
            func, args, kwargs = payload
            return func(*args, **kwargs)
        if kind == "remote":
            key, func, args, kwargs = payload
            slot = self.own(key)
            try:
                slot.set_result(func(*args, **kwargs))
            except BaseException as e:  # to_here() of the RRef raises it
                slot.set_exception(_portable(e))
            return None
        key, = payload  # "fetch"
        return self.own(key).wait()

    def stop(self) -> None:
        self._stopping.set()
        self._listener.join()
        self._pool.shutdown(wait=True)
