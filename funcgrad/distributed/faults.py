"""Failing fast: one rank's uncaught exception ends the whole job.

With MPI, an exception on one rank leaves the others waiting in their next collective for
ever (the failing rank itself waits in MPI's shutdown). `install_excepthook` replaces
``sys.excepthook`` so that an uncaught exception prints its traceback and a line naming the
rank, then aborts every process of the job (``MPI_Abort``, or, before MPI is initialised,
a signal to itself, which makes mpiexec end the others). `funcgrad.distributed.initialize`,
``init_process_group`` and the launcher's worker install it. Before it aborts, a rank
waits until the line saying why has left its output pipes (`drain_output`): the abort
ends mpiexec's forwarding of output too, and a line still in the pipe would be lost.
"""
from __future__ import annotations

import os
import signal
import stat
import struct
import sys
import time
from types import TracebackType
from typing import Any

__all__ = ["install_excepthook", "abort_job", "drain_output", "launched_rank",
           "launched_size"]


def launched_rank() -> int | None:
    """This process's rank as announced by the launcher (mpiexec), if any."""
    for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK"):
        if name in os.environ:
            return int(os.environ[name])
    return None


def launched_size() -> int | None:
    """The job's size as announced by the launcher (mpiexec), if any."""
    for name in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE"):
        if name in os.environ:
            return int(os.environ[name])
    return None


def _mpi_running() -> Any:
    """mpi4py's MPI module if MPI is initialised and not finalised, else None."""
    MPI = sys.modules.get("mpi4py.MPI")
    if MPI is None or not MPI.Is_initialized() or MPI.Is_finalized():
        return None
    return MPI


def abort_job(message: str, code: int = 1) -> None:
    """Print ``message`` and end every process of the job (from any thread: the
    watchdog's calls it too)."""
    sys.stderr.write(message.rstrip("\n") + "\n")
    drain_output()
    MPI = _mpi_running()
    if MPI is not None and MPI.COMM_WORLD.Get_size() > 1:
        MPI.COMM_WORLD.Abort(code)
    if (launched_size() or 1) > 1:  # not initialised: mpiexec ends a job whose rank dies
        os.kill(os.getpid(), signal.SIGTERM)
    sys.exit(code)


def drain_output(limit: float = 5.0, grace: float = 0.5) -> None:
    """Flush stdout and stderr and wait until what they hold has left this process's
    pipes (at most ``limit`` seconds), then ``grace`` seconds more: mpiexec forwards a
    rank's output through a process of its own, which reads the pipe when it is next
    scheduled, and aborting the job kills that process too, so a line still in the pipe
    (the one saying why the job ends) can be lost on a loaded machine. A pipe's unread
    byte count (FIONREAD) says when it has been read; ``grace`` lets the line be passed
    on."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed or broken: nothing more can leave
            pass
    deadline = time.monotonic() + limit
    pending = [fd for fd in (1, 2) if _unread(fd)]
    while pending and time.monotonic() < deadline:
        time.sleep(0.01)
        pending = [fd for fd in pending if _unread(fd)]
    time.sleep(grace)


def _unread(fd: int) -> int:
    """How many bytes written to ``fd`` wait to be read, if it is a pipe (else 0)."""
    try:
        import fcntl, termios  # POSIX only (elsewhere no count to read): here, not on import
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return 0
        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]
    except (ImportError, OSError):
        return 0


def _where() -> tuple[int, int]:
    MPI = _mpi_running()
    if MPI is not None:
        return MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
    return launched_rank() or 0, launched_size() or 1


def install_excepthook() -> None:
    """Make an uncaught exception on any rank abort the job (idempotent)."""
    if getattr(sys.excepthook, "funcgrad_aborts", False):
        return
    previous = sys.excepthook

    def abort_on_uncaught(kind: type, value: BaseException,
                          tb: TracebackType | None) -> None:
        rank, size = _where()
        previous(kind, value, tb)
        if size > 1:
            abort_job(f"[funcgrad.distributed] rank {rank} of {size} failed with "
                      f"{kind.__name__}: {value}; aborting all {size} ranks")

    abort_on_uncaught.funcgrad_aborts = True  # type: ignore[attr-defined]
    sys.excepthook = abort_on_uncaught
