"""Workload 2: the same chain on 1e5 and 1e6 elements. The work is memory-bandwidth bound,
so a numpy-based library should sit at hand-written numpy's time: any extra copy in a rule
or in the tape shows here.

Target: at 1e6 elements, funcgrad at most 1.05x hand-written numpy.
"""
from __future__ import annotations

from . import chain
from .harness import Config, Report, skipped_row, time_all, time_target, timing_rows

DEPTH = 100
SIZES = (100_000, 1_000_000)
QUICK_SIZES, QUICK_DEPTH = (1_000,), 10
REPEATS = 7  # each call takes seconds at 1e6: fewer samples of one call each


def run(cfg: Config) -> Report:
    report = Report()
    sizes, depth = (QUICK_SIZES, QUICK_DEPTH) if cfg.quick else (SIZES, DEPTH)
    for n in sizes:
        fns, missing = chain.implementations(*chain.make(n, depth))
        chain.check(fns)
        timings = time_all(fns, cfg if cfg.quick else Config(repeats=REPEATS, sample_s=0.0))
        case = f"chain x{depth}, n={n:.0e}, grad"
        report.rows += timing_rows(2, case, timings)
        report.rows += [skipped_row(2, case, "-", note) for note in missing]
        del fns
    report.targets.append(time_target(f"W2: funcgrad <= 1.05x numpy at n={sizes[-1]:.0e}",
                                      timings["funcgrad"], timings["numpy"], 1.05))
    return report
