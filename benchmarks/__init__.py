"""funcgrad's benchmark suite, side by side with its peers in the same process.

    python -m benchmarks              # everything; prints one table, writes benchmarks/RESULTS.md
    python -m benchmarks --quick      # tiny sizes, few repeats (what the smoke test runs)
    python -m benchmarks --only 1 3   # some workloads

Peers (``pip install -e '.[bench]'``): hand-written numpy (always), HIPS autograd, PyTorch
eager on one CPU thread, JAX on CPU (eager and jit); a missing one is skipped with a note.
One module per workload: small_chain (1), large_chain (2), mlp (3), hvp (4), memory (5),
cnn (6).
"""
from __future__ import annotations

from . import cnn, hvp, large_chain, memory, mlp, small_chain
from .harness import Config, Report

WORKLOADS = {1: small_chain, 2: large_chain, 3: mlp, 4: hvp, 5: memory, 6: cnn}


def run(quick: bool = False, only: tuple[int, ...] = tuple(WORKLOADS)) -> Report:
    """Run the chosen workloads and gather their rows, targets and extra tables."""
    cfg = Config.make(quick)
    report = Report()
    for number in sorted(only):
        report.extend(WORKLOADS[number].run(cfg))
    return report
