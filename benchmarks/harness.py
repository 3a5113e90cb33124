"""What every workload shares: the configuration, peers loaded on demand (skipped with a
note when missing), interleaved median timing, peak-memory probes, and the machine report.

Timing is round-robin: each repeat (a round) times every implementation once, so that a burst
of load from another process on this shared machine hits all of them alike, and the ratios
come from the same process run. A target's ratio is *paired*: the median over rounds of the
two implementations' time ratio within a round, so that a slow patch of the machine cancels
out of it; the ratio of the two medians is reported next to it. The garbage collector stays
on (it is part of the loop a user runs).
"""
from __future__ import annotations

import contextlib
import datetime
import importlib
import importlib.metadata
import math
import os
import platform
import statistics
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np

PEERS = ("torch", "jax", "autograd")
REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Config:
    """How hard to measure. ``quick`` shrinks sizes and repeats (the smoke test)."""
    quick: bool = False
    repeats: int = 21          # samples per implementation; the median is reported
    sample_s: float = 0.05     # each sample runs the function this long (at least once)

    @staticmethod
    def make(quick: bool) -> "Config":
        return Config(quick=True, repeats=3, sample_s=0.0) if quick else Config()


@dataclass
class Row:
    """One line of the results table. ``value`` is seconds (unit "s") or bytes ("B");
    ``ratio`` is ``value`` divided by the reference named in ``ref``."""
    workload: int
    case: str
    impl: str
    value: float | None
    unit: str = "s"
    ratio: float | None = None
    ref: str = ""
    spread: float | None = None   # (q3 - q1) / median of the samples
    note: str = ""


@dataclass
class Target:
    """One of the issue's targets, evaluated on this run."""
    text: str
    measured: str
    met: bool | None           # None: could not be evaluated (a peer is missing)


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)   # extra markdown (tables by depth)

    def extend(self, other: "Report") -> None:
        self.rows += other.rows
        self.targets += other.targets
        self.sections += other.sections


# ---------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------

_SETUP = {
    "torch": lambda torch: torch.set_num_threads(1),
    "jax": lambda jax: jax.config.update("jax_enable_x64", True),
}


def peer(name: str) -> Any | None:
    """The peer module (configured: torch on one thread, jax with float64 enabled), or None
    when it is not installed or a folder (tests/torch, say, when tests/ is on sys.path)
    shadows it."""
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    origin = getattr(module, "__file__", None)  # None: a namespace package (a bare folder)
    if origin is None or REPO in Path(origin).resolve().parents:
        return None
    _SETUP.get(name, lambda m: None)(module)
    return module


def facade() -> tuple[Any | None, str]:
    """``funcgrad.torch`` if it offers what the MLP step uses, else (None, why not)."""
    try:
        import funcgrad.torch as ft
        for path in ("tensor", "no_grad", "nn.Linear", "nn.ReLU", "nn.Sequential",
                     "nn.Parameter", "nn.functional.cross_entropy", "optim.SGD"):
            obj = ft
            for part in path.split("."):
                obj = getattr(obj, part)
    except (ImportError, AttributeError) as err:
        return None, f"funcgrad.torch not available ({type(err).__name__}: {err})"
    return ft, ""


def missing_note(name: str) -> str:
    return f"{name} not installed (or shadowed): skipped; pip install -e '.[bench]'"


# ---------------------------------------------------------------------------------------
# Timing and memory
# ---------------------------------------------------------------------------------------

@contextlib.contextmanager
def single_threaded_blas():
    """numpy's BLAS on one thread while measuring (torch runs on one thread too), through
    threadpoolctl when it is installed; environment variables are left alone."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


class Timing(NamedTuple):
    """One implementation's timing: the median seconds per call, the relative interquartile
    spread ((q3 - q1) / median) and the per-round samples (seconds per call)."""
    median: float
    spread: float
    samples: tuple


def paired_ratio(a: Timing, b: Timing) -> float:
    """The median over rounds of ``a``'s time divided by ``b``'s in the same round."""
    return statistics.median(x / y for x, y in zip(a.samples, b.samples))


def time_all(fns: dict[Any, Callable[[], Any]], cfg: Config) -> dict[Any, Timing]:
    """The `Timing` of each function, timed round-robin after one warm-up call each
    (which also compiles jitted code)."""
    numbers = {}
    with single_threaded_blas():
        for name, fn in fns.items():
            fn()
            t0 = time.perf_counter()
            fn()
            first = time.perf_counter() - t0
            numbers[name] = max(1, math.ceil(cfg.sample_s / max(first, 1e-9)))
        samples: dict[Any, list[float]] = {name: [] for name in fns}
        for _ in range(cfg.repeats):
            for name, fn in fns.items():
                n = numbers[name]
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                samples[name].append((time.perf_counter() - t0) / n)
    out = {}
    for name, s in samples.items():
        med = statistics.median(s)
        q = statistics.quantiles(s, n=4) if len(s) >= 2 else [med, med, med]
        out[name] = Timing(med, (q[2] - q[0]) / med if med else 0.0, tuple(s))
    return out


def traced_peak(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated through Python's and numpy's allocators while ``fn`` runs, above
    what was allocated when it started (tracemalloc)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def torch_cpu_peak(fn: Callable[[], Any]) -> int:
    """Peak bytes held by PyTorch's CPU allocator while ``fn`` runs, above the start: the
    profiler (profile_memory=True) records every allocation and free with its time; the peak
    of their running sum is the peak (tracemalloc does not see torch's allocator)."""
    from torch._C._profiler import _EventType
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events, stack = [], list(prof.profiler.kineto_results.experimental_event_tree())
    while stack:
        event = stack.pop()
        stack.extend(event.children)
        if event.tag == _EventType.Allocation:
            events.append((event.start_time_ns, event.extra_fields.alloc_size))
    current = peak = 0
    for _, size in sorted(events):
        current += size
        peak = max(peak, current)
    return peak


# ---------------------------------------------------------------------------------------
# Rows
# ---------------------------------------------------------------------------------------

def timing_rows(workload: int, case: str, timings: dict[str, Timing], ref: str = "numpy",
                notes: dict[str, str] | None = None) -> list[Row]:
    """One row per timed implementation, its ratio taken against ``timings[ref]``."""
    base = timings[ref].median if ref in timings else None
    notes = notes or {}
    return [Row(workload, case, name, t.median, "s", t.median / base if base else None,
                ref if base else "", t.spread, notes.get(name, ""))
            for name, t in timings.items()]


FIRST_CALLS = 3  # fresh jitted functions timed for a first-call row


def first_call_row(workload: int, case: str, impl: str, make: Callable[[], Callable[[], Any]],
                   steady: Timing | None = None) -> Row:
    """The time of a jitted function's first call (trace + compile + one run), the median
    over `FIRST_CALLS` fresh ``make()`` functions; the ratio is against ``steady`` (the
    same function's later calls)."""
    times = []
    for _ in range(FIRST_CALLS):
        fn = make()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    return Row(workload, case, impl, med, "s", med / steady.median if steady else None,
               "steady" if steady else "", None, "trace + compile + run, fresh jit")


def skipped_row(workload: int, case: str, impl: str, note: str) -> Row:
    return Row(workload, case, impl, None, note=note)


def ratio_target(text: str, value: float | None, limit: float, unit: str = "x") -> Target:
    """A target "value <= limit"; ``value`` None when a peer needed for it is missing."""
    if value is None:
        return Target(text, "peer missing", None)
    return Target(text, f"{value:.2f}{unit}", value <= limit)


def time_target(text: str, a: Timing | None, b: Timing | None, limit: float) -> Target:
    """A target "a's time <= limit x b's", decided on the paired ratio (see the module
    docstring); the ratio of medians is shown beside it. None: a peer is missing."""
    if a is None or b is None:
        return Target(text, "peer missing", None)
    paired = paired_ratio(a, b)
    return Target(text, f"{paired:.2f}x paired (ratio of medians {a.median / b.median:.2f}x)",
                  paired <= limit)


# ---------------------------------------------------------------------------------------
# Machine
# ---------------------------------------------------------------------------------------

def cpu_model() -> str:
    """The model name with its family and model numbers (a VM may hide the full name)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return platform.processor() or platform.machine()
    return (f"{fields.get('model name', platform.machine())} (family {fields.get('cpu family')}"
            f", model {fields.get('model')})")


def blas_info() -> str:
    """Which BLAS numpy runs (the library under numpy's own folder) and which kernel it
    picked, with OPENBLAS_CORETYPE as found."""
    env = ", ".join(f"{k}={os.environ[k]}" for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
                    if k in os.environ) or "OPENBLAS_CORETYPE unset"
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return f"unknown (install threadpoolctl to see the kernel); {env}"
    libs = [f"{i['internal_api']} {i['version']} kernel {i.get('architecture')}, "
            f"{i['num_threads']} threads by default"
            for i in threadpool_info()
            if i["user_api"] == "blas" and "numpy" in Path(i["filepath"]).parent.name]
    return f"{'; '.join(libs) or 'no BLAS found in numpy'}; {env}"


def versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "numpy": np.__version__}
    for name in ("funcgrad",) + PEERS + ("jaxlib", "threadpoolctl"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def machine() -> dict[str, str]:
    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    return {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "cpu": f"{cpu_model()}, {cores} cores ({usable} usable)",
            "os": platform.platform(), "blas": blas_info(), "load": load()}


def load() -> str:
    """The 1-minute load average: other processes on the machine make timings noisier."""
    return f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "unknown"
