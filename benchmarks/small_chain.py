"""Workload 1: the chain ``tanh(h * w + b)`` x100 on 10-element float64 arrays, gradient
with respect to the input. The arithmetic is negligible: this measures per-op overhead
(boxing, dispatch, recording, the backward loop).

Targets: funcgrad at most PyTorch eager's time, and at most half of HIPS autograd's.
"""
from __future__ import annotations

from . import chain
from .harness import Config, Report, skipped_row, time_all, time_target, timing_rows

N, DEPTH = 10, 100
QUICK_DEPTH = 10


def run(cfg: Config) -> Report:
    depth = QUICK_DEPTH if cfg.quick else DEPTH
    fns, missing = chain.implementations(*chain.make(N, depth))
    chain.check(fns)
    timings = time_all(fns, cfg)
    case = f"chain x{depth}, n={N}, grad"
    report = Report(timing_rows(1, case, timings))
    report.rows += [skipped_row(1, case, "-", note) for note in missing]
    fg = timings["funcgrad"]
    report.targets += [
        time_target("W1: funcgrad <= 1x PyTorch eager", fg, timings.get("torch"), 1.0),
        time_target("W1: funcgrad <= 0.5x HIPS autograd", fg, timings.get("autograd"), 0.5)]
    return report
