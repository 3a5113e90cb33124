"""Workload 1: the chain ``tanh(h * w + b)`` x100 on 10-element float64 arrays, gradient
with respect to the input. The arithmetic is negligible: this measures per-op overhead
(boxing, dispatch, recording, the backward loop).

Targets: funcgrad at most PyTorch eager's time, and at most half of HIPS autograd's; the
same PyTorch code on funcgrad.torch at most 1.5x PyTorch's (issue 20);
``funcgrad.jit(grad(f))`` at most 1.3x hand-written numpy and at least 3x faster than
PyTorch eager (issue 17). The jitted function's first call (trace + compile) has a row.
"""
from __future__ import annotations

from . import chain
from .harness import (Config, Report, first_call_row, skipped_row, time_all, time_target,
                      timing_rows)

N, DEPTH = 10, 100
QUICK_DEPTH = 10


def run(cfg: Config) -> Report:
    depth = QUICK_DEPTH if cfg.quick else DEPTH
    problem = chain.make(N, depth)
    fns, missing = chain.implementations(*problem)
    chain.check(fns)
    timings = time_all(fns, cfg)
    case = f"chain x{depth}, n={N}, grad"
    report = Report(timing_rows(1, case, timings))
    report.rows.append(first_call_row(1, case, "funcgrad jit: first call",
                                      chain.first_call(*problem), timings["funcgrad jit"]))
    report.rows += [skipped_row(1, case, "-", note) for note in missing]
    fg, fj = timings["funcgrad"], timings["funcgrad jit"]
    report.targets += [
        time_target("W1: funcgrad <= 1x PyTorch eager", fg, timings.get("torch"), 1.0),
        time_target("W1: funcgrad <= 0.5x HIPS autograd", fg, timings.get("autograd"), 0.5),
        time_target("W1: funcgrad.torch (backward()) <= 1.5x PyTorch eager",
                    timings["funcgrad.torch"], timings.get("torch"), 1.5),
        time_target("W1: funcgrad jit(grad) <= 1.3x numpy", fj, timings["numpy"], 1.3),
        time_target("W1: funcgrad jit(grad) <= 1/3 x PyTorch eager", fj,
                    timings.get("torch"), 1 / 3)]
    return report
