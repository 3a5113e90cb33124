"""``torch.multiprocessing``: Python's ``multiprocessing`` under PyTorch's name, with its
sharing-strategy switches and ``spawn``/``start_processes``, which run ``fn(i, *args)`` in
``nprocs`` processes and raise the first child's error (with its traceback) in the parent.

Tensors reach child processes by pickling their values (the facade's memory is ordinary
process memory), so the sharing strategy is recorded only.
"""
from __future__ import annotations

import multiprocessing
import sys
import traceback
from multiprocessing import *  # noqa: F401,F403  (PyTorch re-exports the whole module)
from typing import Any, Callable

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
           "ProcessExitedException", *multiprocessing.__all__]

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = ["file_descriptor" if sys.platform != "darwin" else "file_system"]


def get_all_sharing_strategies() -> set:
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    return _strategy[0]


def set_sharing_strategy(new_strategy: str) -> None:
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"{new_strategy!r} is not a sharing strategy")
    _strategy[0] = new_strategy


class ProcessException(Exception):
    def __init__(self, msg: str, error_index: int, pid: int):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self) -> tuple:
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A child process raised: its traceback is the message."""


class ProcessExitedException(ProcessException):
    """A child process exited with a non-zero code (killed, or ``sys.exit``)."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self) -> tuple:
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn: Callable, i: int, args: tuple, error_queue: Any) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes `start_processes` started; `join` waits for them."""

    def __init__(self, processes: list, error_queues: list):
        self.processes = processes
        self.error_queues = error_queues

    def pids(self) -> list:
        return [p.pid for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """True once every process has ended; raises the first failure, the others
        terminated."""
        for p in self.processes:
            p.join(timeout)
        if any(p.is_alive() for p in self.processes):
            return False
        for i, p in enumerate(self.processes):
            if p.exitcode != 0:
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                queue = self.error_queues[i]
                if not queue.empty():
                    msg = f"\n\n-- Process {i} terminated with the following error:\n"
                    raise ProcessRaisedException(msg + queue.get(), i, p.pid)
                raise ProcessExitedException(
                    f"process {i} terminated with exit code {p.exitcode}", i, p.pid,
                    p.exitcode)
        return True


def start_processes(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True,
                    daemon: bool = False, start_method: str = "spawn") -> Any:
    """Run ``fn(i, *args)`` for i in range(nprocs), each in its own process."""
    context = multiprocessing.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        queue = context.SimpleQueue()
        process = context.Process(target=_wrap, args=(fn, i, args, queue), daemon=daemon)
        process.start()
        processes.append(process)
        queues.append(queue)
    spawned = ProcessContext(processes, queues)
    if not join:
        return spawned
    while not spawned.join():
        pass
    return None


def spawn(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True,
          daemon: bool = False, start_method: str = "spawn") -> Any:
    return start_processes(fn, args, nprocs, join, daemon, start_method)
