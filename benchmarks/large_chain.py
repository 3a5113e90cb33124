"""Workload 2: the same chain on 1e5 and 1e6 elements. The work is memory-bandwidth bound,
so a numpy-based library should sit at hand-written numpy's time: any extra copy in a rule
or in the tape shows here.

Targets: at 1e6 elements, funcgrad at most 1.05x hand-written numpy, and
``funcgrad.jit(grad(f))`` at most 0.9x (issue 17: buffer reuse and in-place arithmetic in
the compiled program), beside jax.jit.
"""
from __future__ import annotations

from . import chain
from .harness import (Config, Report, first_call_row, skipped_row, time_all, time_target,
                      timing_rows)

DEPTH = 100
SIZES = (100_000, 1_000_000)
QUICK_SIZES, QUICK_DEPTH = (1_000,), 10
REPEATS = 7  # each call takes seconds at 1e6: fewer samples of one call each


def run(cfg: Config) -> Report:
    report = Report()
    sizes, depth = (QUICK_SIZES, QUICK_DEPTH) if cfg.quick else (SIZES, DEPTH)
    for n in sizes:
        problem = chain.make(n, depth)
        fns, missing = chain.implementations(*problem)
        chain.check(fns)
        timings = time_all(fns, cfg if cfg.quick else Config(repeats=REPEATS, sample_s=0.0))
        case = f"chain x{depth}, n={n:.0e}, grad"
        report.rows += timing_rows(2, case, timings)
        report.rows.append(first_call_row(2, case, "funcgrad jit: first call",
                                          chain.first_call(*problem), timings["funcgrad jit"]))
        report.rows += [skipped_row(2, case, "-", note) for note in missing]
        del fns, problem
    at = f"at n={sizes[-1]:.0e}"
    report.targets += [
        time_target(f"W2: funcgrad <= 1.05x numpy {at}", timings["funcgrad"],
                    timings["numpy"], 1.05),
        time_target(f"W2: funcgrad jit(grad) <= 0.9x numpy {at}", timings["funcgrad jit"],
                    timings["numpy"], 0.9)]
    return report
