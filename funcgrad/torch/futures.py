"""torch.futures for funcgrad.torch: `Future`, the result of asynchronous work.

Returned by ``Work.get_future()`` of an ``async_op=True`` collective and by
``rpc.rpc_async``. A future is completed once, with a value or an exception; ``wait()``
blocks until then (running the work's completion if the future was made from one) and
returns the value or raises the exception. ``then(callback)`` chains: the callback gets
this future once it is done, and its return value completes the future ``then`` returned.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Generic, Iterable, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")


class Future(Generic[T]):
    """A value that becomes available later (PyTorch's ``torch.futures.Future``)."""

    def __init__(self, *, devices: Any = None, complete: Callable[[], None] | None = None):
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._value: Any = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[["Future[T]"], None]] = []
        self._complete = complete  # drives the underlying work to completion, if any

    def done(self) -> bool:
        return self._done.is_set()

    def wait(self) -> T:
        """Block until the future is complete; its value, or raise its exception."""
        complete, self._complete = self._complete, None
        if complete is not None and not self.done():
            try:
                complete()
            except BaseException as e:  # the work failed: that is this future's outcome
                if not self.done():
                    self.set_exception(e)
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self) -> T:
        """The value of a completed future (raises its exception, if it has one)."""
        if not self.done():
            raise RuntimeError("Future.value() called on a Future that is not completed "
                               "yet; call wait() first")
        if self._error is not None:
            raise self._error
        return self._value

    def set_result(self, result: T) -> None:
        self._finish(result, None)

    def set_exception(self, result: BaseException) -> None:
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception expects an exception, got "
                            f"{type(result).__name__}")
        self._finish(None, result)

    def _finish(self, value: Any, error: BaseException | None) -> None:
        with self._lock:
            if self.done():
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def add_done_callback(self, callback: Callable[["Future[T]"], None]) -> None:
        with self._lock:
            if not self.done():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback: Callable[["Future[T]"], Any]) -> "Future[Any]":
        """A future completed with ``callback(self)`` once this one is done (or with the
        exception the callback raises)."""
        chained: Future[Any] = Future(complete=self.wait)

        def run(fut: "Future[T]") -> None:
            try:
                result = callback(fut)
            except BaseException as e:  # the chained future carries the callback's error
                chained.set_exception(e)
                return
            chained.set_result(result)
        self.add_done_callback(run)
        return chained

    def __repr__(self) -> str:
        state = "done" if self.done() else "pending"
        return f"<funcgrad.torch.futures.Future ({state})>"


def collect_all(futures: Iterable[Future]) -> Future[list]:
    """A future completed with the list of ``futures`` once all of them are done."""
    futures = list(futures)
    every: Future[list] = Future(complete=lambda: _drive(futures))
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_: Future) -> None:
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            every.set_result(futures)
    if not futures:
        every.set_result([])
    for f in futures:
        f.add_done_callback(one_done)
    return every


def _drive(futures: list) -> None:
    """Wait for each of ``futures``; their errors stay in them (collect_all's result is
    the futures themselves)."""
    for f in futures:
        try:
            f.wait()
        except BaseException:  # kept by the future, which collect_all returns
            pass


def wait_all(futures: Iterable[Future]) -> list:
    """The values of ``futures``, waiting for each (raises the first exception)."""
    return [f.wait() for f in futures]
