"""The MPI transport: `Transport` on mpi4py's buffer-protocol methods.

mpi4py's capitalised methods (``Allreduce``, ``Bcast``, ...) read and write numpy buffers in
place, without pickling; every result here is a fresh array and inputs are never written.
GPU (cupy) arrays are staged through host memory (the mpich wheel is not CUDA-aware; an
NCCL transport is the GPU path). Booleans travel as uint8 with max/min for or/and.

The agreement step of every collective is `funcgrad.distributed.agreement`'s exchange of
point-to-point messages, which carries an all-reduce's operand too (one exchange for both,
up to the exchange's capacity). Three things make a failing job end instead of hang (see
`funcgrad.distributed.faults`): the agreement (mismatches raise on every rank), an
excepthook that calls ``MPI_Abort`` when a rank raises, and a `Watchdog` that aborts the
job when one operation has run longer than the group's timeout (a rank that exited, or
that waits in a different collective than the others).
"""
from __future__ import annotations

import itertools
import sys
import threading
import time
from time import monotonic
from typing import Any, Callable, Sequence

import numpy as np

from funcgrad.primitives.kernels.collectives import Pending, Signature, Transport
from .agreement import Exchange
from .faults import abort_job

__all__ = ["MPITransport", "Watchdog", "load_mpi", "DEFAULT_TIMEOUT"]

DEFAULT_TIMEOUT = 1800.0  # seconds, PyTorch's default process-group timeout (30 minutes)


def load_mpi() -> Any:
    """mpi4py's MPI module (importing it initialises MPI), or an error saying how to get
    it."""
    try:
        from mpi4py import MPI  # optional: the `distributed` extra
    except ImportError:
        raise ImportError("funcgrad.distributed runs on MPI through mpi4py, which is not "
                          "installed; install it with pip install 'funcgrad[distributed]' "
                          "(mpi4py and the mpich wheel, which brings mpiexec)") from None
    return MPI


class Watchdog:
    """Aborts the job when an operation has run longer than ``timeout`` seconds.

    Operations register on entry and leave on exit (a dict write each); an object that
    runs one operation at a time (the agreement `Exchange`) is watched instead
    (`watch`), and shows its operation in its ``busy`` attribute ((what, when it
    started), or None), two attribute writes per operation. One daemon thread looks at
    both a few times a second, so a healthy job pays almost nothing."""

    def __init__(self, timeout: float, abort: Callable[[str], None]):
        self.timeout = timeout
        self.abort = abort
        self.running: dict[int, tuple[str, float]] = {}
        self.sources: list = []
        self._tokens = itertools.count()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def begin(self, what: str) -> int:
        token = next(self._tokens)
        self.running[token] = (what, time.monotonic())
        if self._thread is None:
            self._start()
        return token

    def end(self, token: int) -> None:
        self.running.pop(token, None)

    def watch(self, source: Any) -> None:
        """Look at ``source.busy`` too."""
        if source not in self.sources:
            self.sources.append(source)
        self._start()

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, daemon=True,
                                                name="funcgrad.distributed watchdog")
                self._thread.start()

    def _watch(self) -> None:
        period = 0.25
        while True:
            time.sleep(min(period, self.timeout / 10))
            now = time.monotonic()
            busy = [source.busy for source in self.sources]
            for what, started in [*self.running.values(), *filter(None, busy)]:
                if now - started > self.timeout:
                    self.abort(f"{what} did not complete within {self.timeout:g} s (the "
                               "group's timeout): another rank has failed, exited, or is "
                               "waiting in a different collective")
                    return


class MPITransport(Transport):
    """A `Transport` over an mpi4py communicator (collectives on ``comm``; user messages
    and the agreement's messages each on a duplicate of it, so that they never match a
    collective's internal ones, nor each other)."""

    kind = "mpi"

    def __init__(self, comm: Any, timeout: float | None = DEFAULT_TIMEOUT):
        super().__init__(comm.Get_rank(), comm.Get_size())
        self.MPI = load_mpi()
        self.comm = comm
        self.p2p = comm.Dup()  # collective: every rank constructs its transport together
        self.exchange = Exchange(comm.Dup(), self.MPI)
        self.busy: tuple[str, float] | None = None  # a remembered all-reduce's (watchdog)
        self.timeout: float | None = None
        self.watchdog: Watchdog | None = None
        self.set_timeout(timeout)
        M = self.MPI
        self._ops = {"sum": M.SUM, "prod": M.PROD, "max": M.MAX, "min": M.MIN,
                     "band": M.BAND, "bor": M.BOR, "bxor": M.BXOR}
        self._reductions: dict[tuple, tuple] = {}  # (dtype char, op) -> (datatype, MPI op)
        # numpy's type characters (C types) -> MPI's predefined datatypes; booleans as
        # bytes (MPI's max/min are defined on those, not on C_BOOL)
        self._datatypes = {
            "?": M.UNSIGNED_CHAR, "b": M.SIGNED_CHAR, "B": M.UNSIGNED_CHAR, "h": M.SHORT,
            "H": M.UNSIGNED_SHORT, "i": M.INT, "I": M.UNSIGNED, "l": M.LONG,
            "L": M.UNSIGNED_LONG, "q": M.LONG_LONG, "Q": M.UNSIGNED_LONG_LONG, "f": M.FLOAT,
            "d": M.DOUBLE, "g": M.LONG_DOUBLE, "F": M.C_FLOAT_COMPLEX,
            "D": M.C_DOUBLE_COMPLEX}

    def __repr__(self) -> str:
        return f"<MPITransport rank {self.rank} of {self.size}>"

    def set_timeout(self, seconds: float | None) -> None:
        self.timeout = seconds
        if not seconds:
            self.watchdog = None
        elif self.watchdog is None:
            self.watchdog = Watchdog(seconds, self._timed_out)
        else:
            self.watchdog.timeout = seconds
        if self.watchdog is not None:
            self.watchdog.watch(self.exchange)
            self.watchdog.watch(self)

    # -- helpers ----------------------------------------------------------------------------
    def _timed_out(self, message: str) -> None:
        world = self.MPI.COMM_WORLD
        abort_job(f"[funcgrad.distributed] rank {world.Get_rank()} of {world.Get_size()}: "
                  f"{message}; aborting the job")

    def _call(self, what: str, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args)``, watched by the watchdog."""
        if self.watchdog is None:
            return fn(*args, **kwargs)
        token = self.watchdog.begin(f"{what} on a group of {self.size}")
        try:
            return fn(*args, **kwargs)
        finally:
            self.watchdog.end(token)

    def _op(self, op: str, dtype: Any) -> Any:
        if np.dtype(dtype) == np.bool_ and op in ("sum", "prod", "max", "min"):
            return self._ops["max" if op in ("sum", "max") else "min"]  # or / and on 0/1
        return self._ops[op]

    def _reduction(self, buf: np.ndarray, op: str) -> tuple:
        """(the predefined MPI datatype of ``buf``'s elements, or None where MPI has
        none and mpi4py is left to derive one; the MPI op), found once per dtype and op:
        named, the datatype is not derived from the buffer's format on every call.
        ``buf`` is native-endian (see `_host`); booleans travel as bytes."""
        key = (buf.dtype.char, op)
        got = self._reductions.get(key)
        if got is None:
            got = self._reductions[key] = (self._datatypes.get(buf.dtype.char),
                                           self._op(op, buf.dtype))
        return got

    # -- agreement -----------------------------------------------------------------------------
    def _agreed(self, sig: Signature) -> bool:
        return self.exchange.run(self.exchange.plan(sig), None) is not None

    def _agreed_allreducer(self, sig: Signature, op: str) -> Callable[[Any], Any]:
        plan = self.exchange.plan(sig)
        if plan.message is None:  # too large to ride along: agree, then MPI's all-reduce
            return super()._agreed_allreducer(sig, op)
        return self.exchange.allreducer(plan, lambda: self._disagreement(sig))

    def _plain_allreducer(self, shape: tuple, dtype: np.dtype, op: str
                          ) -> Callable[[Any], Any]:
        """MPI's all-reduce of one (shape, dtype, op) with what `_allreduce` finds on every
        call settled once (the datatype and op), the watchdog shown the call through
        ``busy`` (two attribute writes, where `_call` adds and removes a token), and the
        result written into the previous call's result when nothing but this function
        holds it any more (its reference count says so; a view, a wrapping Array, a
        memoryview all hold one): a large new array costs its pages' first-touch faults,
        about a tenth of a 1e7 float32 all-reduce's time. A result still held anywhere is
        never written again: the call allocates another."""
        native = np.dtype(dtype).newbyteorder("=")  # `_contiguous` makes operands native
        datatype, mpi_op = self._reduction(np.empty(0, native), op)
        allreduce, label = self.comm.Allreduce, f"allreduce on a group of {self.size}"
        kept: list[np.ndarray | None] = [None]  # the last result

        def reduce(x: np.ndarray) -> np.ndarray:
            buf = _contiguous(x)
            out = kept[0]
            if out is None or sys.getrefcount(out) > _UNSHARED:
                out = kept[0] = np.empty(shape, native)
            self.busy = (label, monotonic())
            try:
                allreduce(_typed(buf, datatype), _typed(out, datatype), op=mpi_op)
            finally:
                self.busy = None
            return out
        return reduce

    def _staged(self, run: Callable[[Any], Any], x: Any) -> Any:
        buf, back = _host(x)
        return back(run(buf))

    # -- collectives -------------------------------------------------------------------------
    def _allreduce(self, x: Any, op: str) -> Any:
        buf, back = _host(x)
        out = np.empty_like(buf)
        datatype, mpi_op = self._reduction(buf, op)
        self._call("allreduce", self.comm.Allreduce, _typed(buf, datatype),
                   _typed(out, datatype), op=mpi_op)
        return back(out)

    def _allgather(self, x: Any) -> Any:
        buf, back = _host(x)
        out = np.empty((self.size,) + buf.shape, buf.dtype)
        self._call("allgather", self.comm.Allgather, _wire(buf), _wire(out))
        return back(out)

    def _reduce_scatter(self, x: Any, op: str) -> Any:
        buf, back = _host(x)
        out = np.empty(buf.shape[1:], buf.dtype)
        self._call("reduce_scatter", self.comm.Reduce_scatter_block, _wire(buf), _wire(out),
                   op=self._op(op, buf.dtype))
        return back(out)

    def _reduce(self, x: Any, root: int, op: str) -> Any:
        buf, back = _host(x)
        out = np.empty_like(buf) if self.rank == root else None
        self._call("reduce", self.comm.Reduce, _wire(buf), _wire(out),
                   op=self._op(op, buf.dtype), root=root)
        return back(out) if out is not None else None

    def _broadcast(self, x: Any, root: int) -> Any:
        buf, back = _host(x)
        out = np.array(buf) if self.rank == root else np.empty_like(buf)
        self._call("broadcast", self.comm.Bcast, _wire(out), root=root)
        return back(out)

    def _gather(self, x: Any, root: int) -> Any:
        buf, back = _host(x)
        out = np.empty((self.size,) + buf.shape, buf.dtype) if self.rank == root else None
        self._call("gather", self.comm.Gather, _wire(buf), _wire(out), root=root)
        return back(out) if out is not None else None

    def _scatter(self, x: Any, root: int, shape: tuple, dtype: Any) -> Any:
        buf, back = _host(x) if x is not None else (None, _identity)
        out = np.empty(shape, dtype)
        self._call("scatter", self.comm.Scatter, _wire(buf), _wire(out), root=root)
        return back(out)

    def _sendrecv(self, x: Any, dest: int | None, source: int | None) -> Any:
        buf, back = _host(x)
        out = np.empty_like(buf)
        null = self.MPI.PROC_NULL
        self._call("sendrecv", self.comm.Sendrecv, _wire(buf),
                   null if dest is None else dest, recvbuf=_wire(out),
                   source=null if source is None else source)
        return back(out) if source is not None else None

    def _barrier(self) -> None:
        self._call("barrier", self.comm.Barrier)

    def _start(self, operation: str, *args: Any) -> Pending:
        starter = getattr(self, "_start_" + operation, None)
        if starter is None:
            return super()._start(operation, *args)
        return starter(*args)

    def _pending(self, what: str, request: Any, result: Callable[[], Any]) -> Pending:
        def wait() -> Any:
            self._call(what, request.Wait)
            return result()
        return Pending(wait, request.Test)

    def _start_allreduce(self, x: Any, op: str) -> Pending:
        buf, back = _host(x)
        out = np.empty_like(buf)
        datatype, mpi_op = self._reduction(buf, op)
        req = self.comm.Iallreduce(_typed(buf, datatype), _typed(out, datatype), op=mpi_op)
        return self._pending("allreduce", req, lambda: back(out))

    def _start_allgather(self, x: Any) -> Pending:
        buf, back = _host(x)
        out = np.empty((self.size,) + buf.shape, buf.dtype)
        req = self.comm.Iallgather(_wire(buf), _wire(out))
        return self._pending("allgather", req, lambda: back(out))

    def _start_broadcast(self, x: Any, root: int) -> Pending:
        buf, back = _host(x)
        out = np.array(buf) if self.rank == root else np.empty_like(buf)
        req = self.comm.Ibcast(_wire(out), root=root)
        return self._pending("broadcast", req, lambda: back(out))

    def _start_reduce_scatter(self, x: Any, op: str) -> Pending:
        buf, back = _host(x)
        out = np.empty(buf.shape[1:], buf.dtype)
        req = self.comm.Ireduce_scatter_block(_wire(buf), _wire(out),
                                              op=self._op(op, buf.dtype))
        return self._pending("reduce_scatter", req, lambda: back(out))

    def _start_barrier(self) -> Pending:
        return self._pending("barrier", self.comm.Ibarrier(), lambda: None)

    # -- point to point ------------------------------------------------------------------------
    def send(self, x: Any, dest: int, tag: int = 0) -> Pending:
        self._check_rank(dest, "destination")
        buf, _ = _host(x)
        req = self.p2p.Isend(_wire(buf), dest=dest, tag=tag)
        return self._pending(f"send to rank {dest}", req, lambda kept=buf: None)

    def recv(self, shape: tuple, dtype: Any, source: int | None, tag: int = 0) -> Pending:
        M = self.MPI
        if source is not None:
            self._check_rank(source, "source")
        out = np.empty(shape, dtype)
        status = M.Status()
        req = self.p2p.Irecv(_wire(out), source=M.ANY_SOURCE if source is None else source,
                             tag=tag)

        tested: list = []  # [error or None] once a test saw the request finish

        def test() -> bool:
            """Whether the message has arrived (its status is kept: MPI fills it in once)."""
            try:
                if not req.Test(status):
                    return False
                tested.append(None)
            except M.Exception as e:
                tested.append(e)
            return True

        def wait() -> tuple:
            error = tested[0] if tested else None
            if not tested:
                try:
                    self._call(f"recv from rank {'any' if source is None else source}",
                               req.Wait, status)
                except M.Exception as e:
                    error = e
            if error is not None:
                raise RuntimeError(f"recv: the message from rank {status.Get_source()} is "
                                   f"larger than the {out.nbytes} bytes of the receiving "
                                   f"tensor {out.dtype}{list(out.shape)} ({error})")
            got = status.Get_count(M.BYTE)
            if got != out.nbytes:
                raise RuntimeError(f"recv: rank {status.Get_source()} sent {got} bytes but "
                                   f"the receiving tensor {out.dtype}{list(out.shape)} "
                                   f"holds {out.nbytes}; send and recv tensors must have "
                                   "the same size and dtype")
            return out, status.Get_source()

        def cancel() -> None:
            req.Cancel()
            req.Wait()  # (MPI completes a cancelled request like any other)
        return Pending(wait, test, cancel)

    # -- groups --------------------------------------------------------------------------------
    def split(self, ranks: Sequence[int]) -> "MPITransport | None":
        ranks = list(ranks)
        member = self.rank in ranks
        comm = self._call("split", self.comm.Split,
                          0 if member else self.MPI.UNDEFINED,
                          ranks.index(self.rank) if member else 0)
        if not member:
            return None
        sub = MPITransport(comm, self.timeout)
        sub.checks = self.checks
        return sub

    def abort(self, code: int = 1) -> None:
        sys.stderr.flush()
        self.MPI.COMM_WORLD.Abort(code)


def _identity(x: Any) -> Any:
    return x


def _references_when_unshared() -> int:
    """``sys.getrefcount`` of an array that only a one-element list and a local variable
    hold, read as `_plain_allreducer`'s function reads its last result (the count depends
    on the interpreter: newer ones borrow some references)."""
    kept = [np.empty(0)]
    out = kept[0]
    return sys.getrefcount(out)


_UNSHARED = _references_when_unshared()


def _host(x: Any) -> tuple[np.ndarray, Callable[[Any], Any]]:
    """(a C-contiguous numpy array with x's values, a function moving a result back to
    x's device)."""
    if hasattr(x, "__cuda_array_interface__"):
        import cupy  # only a cupy array gets here
        device = x.device
        return _contiguous(x.get()), lambda r: _to_device(cupy, r, device)
    return _contiguous(x), _identity


def _contiguous(a: Any) -> np.ndarray:
    """``a`` itself when it is a C-contiguous native-endian numpy array (the common case:
    no copy), else such a copy of it (MPI's datatypes are native-endian)."""
    if type(a) is not np.ndarray:
        a = np.asarray(a)
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    return a if a.dtype.isnative else a.astype(a.dtype.newbyteorder("="))


def _to_device(cupy: Any, r: np.ndarray, device: Any) -> Any:
    with device:
        return cupy.asarray(r)


def _typed(buf: np.ndarray, datatype: Any) -> Any:
    """``buf`` with its predefined MPI datatype (None: none known, mpi4py derives one)."""
    return _wire(buf) if datatype is None else [buf, datatype]


def _wire(buf: np.ndarray | None) -> Any:
    """The buffer MPI reads or writes (booleans as bytes)."""
    if buf is not None and buf.dtype == np.bool_:
        return buf.view(np.uint8)
    return buf
