"""``torch.autograd.profiler`` / ``torch.profiler``: per-op CPU times of facade programs.

While a `profile` is active, every facade op (``aten::<op>``, named after its node:
``MulBackward0`` is ``aten::mul``), every node the backward engine evaluates
(``autograd::engine::evaluate_function: <node>`` around ``<node>``) and every
`record_function` range is one `FunctionEvent` (wall-clock start and end). Self time is an
event's time minus the events nested in it. `EventList.key_averages` groups them by name (and
input shapes), and `table` prints PyTorch's table.
"""
from __future__ import annotations

import json
import re
import threading
import time
from typing import Any, Callable, Sequence

from funcgrad.regions import Regions

__all__ = ["profile", "record_function", "FunctionEvent", "FunctionEventAvg", "EventList",
           "op_range", "node_range", "is_profiling", "Interval"]


class _State(threading.local):
    def __init__(self) -> None:
        self.sessions: list = []  # the active profiles of this thread
        self.inside = False       # in a facade op's range (its own work is not an op)


state = _State()
sessions = Regions()  # the active profiles of all threads (ops skip `state` while none is)


def is_profiling() -> bool:
    return bool(sessions.open) and bool(state.sessions)


def aten_name(node_name: str) -> str:
    """``MulBackward0`` -> ``aten::mul``, ``NllLossBackward0`` -> ``aten::nll_loss``."""
    base = re.sub(r"Backward\d*$", "", node_name)
    return "aten::" + re.sub(r"(?<!^)(?=[A-Z])", "_", base).lower()


class Interval:
    """A start and end time in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start: float, end: float):
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start


class FunctionEvent:
    """One profiled range: ``name``, start and end (microseconds), input shapes."""

    def __init__(self, name: str, start_us: float, end_us: float, input_shapes: list,
                 thread: int):
        self.name = self.key = name
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes
        self.thread = thread
        self.cpu_children: list = []
        self.cpu_parent: FunctionEvent | None = None
        self.count = 1

    @property
    def cpu_time_total(self) -> float:
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    def __repr__(self) -> str:
        return (f"<FunctionEvent name={self.name} cpu_time={_format_time(self.cpu_time_total)}"
                f" input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one name (and input shapes): totals, count and the average."""

    def __init__(self, key: str, input_shapes: Any):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    def add(self, event: Any) -> "FunctionEventAvg":
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time="
                f"{_format_time(self.self_cpu_time_total)} cpu_time="
                f"{_format_time(self.cpu_time)} input_shapes={self.input_shapes}>")


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


_SORT_KEYS = {"cpu_time_total", "self_cpu_time_total", "cpu_time", "count"}


class EventList(list):
    """Profiled events, with PyTorch's summaries."""

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> "EventList":
        groups: dict = {}
        for e in self:
            key = (e.key, str(e.input_shapes)) if group_by_input_shape else e.key
            if key not in groups:
                groups[key] = FunctionEventAvg(e.key, e.input_shapes)
            groups[key].add(e)
        averages = EventList(groups.values())
        averages._with_shapes = group_by_input_shape
        return averages

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total", None)
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        """PyTorch's table: self and total CPU time (with shares of the total), the average
        and the count per row; input shapes when grouped by them."""
        rows = list(self)
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'")
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        rows = rows[:row_limit] if row_limit > 0 else rows
        with_shapes = getattr(self, "_with_shapes", False)
        total = self.self_cpu_time_total or 1.0
        name_w = min(max((len(e.key) for e in rows), default=4) + 4, max_name_column_width)
        widths = [name_w] + [12] * 6
        titles = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                  "CPU time avg", "# of Calls"]
        if with_shapes:
            shapes_w = min(max((len(str(e.input_shapes)) for e in rows), default=12) + 4,
                           max_shapes_column_width)
            widths.append(shapes_w)
            titles.append("Input Shapes")
        line = "".join("-" * w + "  " for w in widths)

        def row(cells: Sequence[str]) -> str:
            return "".join(str(c)[:w].rjust(w) + "  " for c, w in zip(cells, widths))

        out = ([header] if header else []) + [line, row(titles), line]
        for e in rows:
            name = e.key if len(e.key) <= name_w - 4 else e.key[:name_w - 7] + "..."
            cells = [name, f"{100 * e.self_cpu_time_total / total:.2f}%",
                     _format_time(e.self_cpu_time_total),
                     f"{100 * e.cpu_time_total / total:.2f}%", _format_time(e.cpu_time_total),
                     _format_time(e.cpu_time), e.count]
            if with_shapes:
                cells.append(str(e.input_shapes))
            out.append(row(cells))
        out += [line, f"Self CPU time total: {_format_time(self.self_cpu_time_total)}", ""]
        return "\n".join(out)


def _nest(events: list) -> None:
    """Link each event to the innermost event of its thread that contains it."""
    by_thread: dict = {}
    for e in sorted(events, key=lambda e: (e.time_range.start, -e.time_range.end)):
        stack = by_thread.setdefault(e.thread, [])
        while stack and stack[-1].time_range.end < e.time_range.end:
            stack.pop()
        if stack:
            e.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(e)
        stack.append(e)


class profile:
    """Context manager: profile the facade's ops, backward nodes and `record_function`
    ranges on this thread (the CPU; cupy kernels are timed as the CPU waits for them)."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 use_device: str | None = None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False,
                 use_kineto: bool = False, use_cpu: bool = True, **unused: Any):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self._events: list = []
        self._function_events: EventList | None = None
        self._recording = False

    def __enter__(self) -> "profile":
        if self.enabled:
            self._start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._recording:
            self._stop()

    def _start(self) -> None:
        if self in state.sessions:
            raise RuntimeError("Profiler is already enabled on this thread")
        state.sessions.append(self)
        sessions.enter()
        self._recording = True

    def _stop(self) -> None:
        state.sessions.remove(self)
        sessions.exit()
        self._recording = False
        self._function_events = None

    def add(self, event: FunctionEvent) -> None:
        self._events.append(event)

    def events(self) -> EventList:
        if self._recording:
            raise RuntimeError("Profiler didn't finish running")
        if self._function_events is None:
            events = EventList(sorted(self._events, key=lambda e: e.time_range.start))
            _nest(events)
            self._function_events = events
        return self._function_events

    @property
    def function_events(self) -> EventList:
        return self.events()

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, *args: Any, **kwargs: Any) -> str:
        return self.events().table(*args, **kwargs)

    @property
    def self_cpu_time_total(self) -> float:
        return self.events().self_cpu_time_total

    def total_average(self) -> FunctionEventAvg:
        return self.events().total_average()

    def export_chrome_trace(self, path: str) -> None:
        """The events as a Chrome trace (chrome://tracing, Perfetto)."""
        trace = [{"name": e.name, "ph": "X", "ts": e.time_range.start, "dur": e.cpu_time_total,
                  "pid": 0, "tid": e.thread, "cat": "cpu_op",
                  "args": {"Input Dims": e.input_shapes}} for e in self.events()]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace}, f)


def _now_us() -> float:
    return time.perf_counter_ns() / 1e3


def _record(name: str, start: float, shapes: list) -> None:
    event_end = _now_us()
    thread = threading.get_ident()
    for session in state.sessions:
        if session._recording:
            session.add(FunctionEvent(name, start, event_end,
                                      shapes if session.record_shapes else [], thread))


def op_range(node_name: str, inputs: Sequence, run: Callable) -> Any:
    """Run a facade op (``run()``) as one ``aten::`` event."""
    state.inside = True
    start = _now_us()
    try:
        return run()
    finally:
        state.inside = False
        _record(aten_name(node_name), start,
                [list(x.shape) if hasattr(x, "shape") else [] for x in inputs])


class record_function:
    """A named range of the profiled program (a context manager or a decorator)."""

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self._start = 0.0

    def __enter__(self) -> "record_function":
        self._start = _now_us()
        return self

    def __exit__(self, *exc: Any) -> None:
        if state.sessions:
            _record(self.name, self._start, [])

    def __call__(self, fn: Callable) -> Callable:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name):
                return fn(*args, **kwargs)
        wrapped.__name__ = getattr(fn, "__name__", "wrapped")
        return wrapped


def node_range(name: str, run: Callable) -> Any:
    """A backward engine range (``autograd::engine::evaluate_function: ...``, a node)."""
    start = _now_us()
    try:
        return run()
    finally:
        _record(name, start, [])
