"""``torch.profiler``: `profile` with activities, a step `schedule` and `on_trace_ready`,
on the events of `funcgrad.torch._runtime.profiler`."""
from __future__ import annotations

import enum
import os
import socket
import time
from typing import Any, Callable, Iterable

from funcgrad.torch._runtime import profiler as _autograd_profiler
from funcgrad.torch._runtime.profiler import EventList, record_function

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1
    XPU = 2
    MTIA = 3


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0,
             skip_first: int = 0, skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """step -> action: skip ``skip_first`` steps, then cycles of ``wait`` idle, ``warmup``
    and ``active`` recorded steps (the last saves), ``repeat`` times (0: forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        within = step % cycle
        if within < wait:
            return ProfilerAction.NONE
        if within < wait + warmup:
            return ProfilerAction.WARMUP
        return (ProfilerAction.RECORD if within < cycle - 1 else
                ProfilerAction.RECORD_AND_SAVE)
    return action


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable[["profile"], None]:
    """An ``on_trace_ready`` that writes each trace as a Chrome trace file in ``dir_name``."""
    def handler(prof: "profile") -> None:
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        prof.export_chrome_trace(os.path.join(
            dir_name, f"{name}.{time.time_ns() // 1000000}.pt.trace.json"))
    return handler


class profile(_autograd_profiler.profile):
    """``with torch.profiler.profile(activities=[ProfilerActivity.CPU]) as prof: ...``;
    with a ``schedule``, call ``prof.step()`` after each step."""

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[["profile"], Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, **unused: Any):
        super().__init__(record_shapes=record_shapes)
        self.activities = set(activities or (ProfilerActivity.CPU,))
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self._saved_events: list = []

    def __enter__(self) -> "profile":
        self._act(self.schedule(0))
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._recording:
            self._stop()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def _act(self, action: ProfilerAction) -> None:
        recording = action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if recording and not self._recording:
            self._events = []
            self._start()
        elif not recording and self._recording:
            self._stop()

    def step(self) -> None:
        """End a step: save the trace if this step completed an active window."""
        action = self.schedule(self.step_num)
        self.step_num += 1
        if action is ProfilerAction.RECORD_AND_SAVE:
            self._stop()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        self._act(self.schedule(self.step_num))

    def events(self) -> EventList:
        return super().events()
