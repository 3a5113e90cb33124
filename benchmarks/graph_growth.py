"""``python -m benchmarks.graph_growth [--rounds R]``: does an eager op cost more as the
recorded graph grows?

A facade op records a node that lives until ``backward()``. Python's cyclic garbage
collector walks every tracked object of the older generations now and then, so each
tracked object a node keeps alive makes later ops slower as the graph grows (issue 43: at
10,000 ops, 34.7 us per op against 9.1 us at 100). This benchmark records a chain of small
ops (tanh, mul by a constant, add: n=10 float32) of 100 and of 10,000 ops, then runs
``backward()``, and reports the CPU time per op of the forward pass, funcgrad.torch and
PyTorch eager in alternating rounds (the mean over ``--rounds``: a full collection runs
in some rounds and not others, so the best round would hide its cost), and the
garbage-collected objects each recorded op keeps alive. Target: 10,000-op time per op at most 1.3x the
100-op one.

What it found (issue 43's closing note has the numbers): the growth is one full collection
per large graph, and such a collection walks every object the imports made (~97k with
funcgrad.torch and numpy loaded) at about 0.5 us each, whatever the graph's own objects
cost. CPython starts one once the objects that survived younger collections exceed a
quarter of the old generation, so a graph of 10,000 ops avoids it only with fewer than ~2.4
kept objects per op, under the three a recorded op needs in Python (its node, its tape
record, its tuple of next nodes). What removes the growth is taking the imported objects
out of the collector's walk: ``gc.freeze()`` after the imports (Python's own advice for
long-lived processes), measured in the last row as ``--freeze``.
"""
from __future__ import annotations

import argparse
import gc
import time
from typing import Any

from .harness import single_threaded_blas

SIZES = (100, 10_000)


def _chain(lib: Any, x: Any, c: Any, ops: int) -> Any:
    y = x
    for i in range(ops // 3):
        y = lib.tanh(y) * 1.01 + c
    return y


def _time_per_op(lib: Any, ops: int) -> float:
    """CPU seconds per op of one forward pass (the backward pass frees the graph after)."""
    x = lib.randn(10, requires_grad=True)
    c = lib.randn(10)
    start = time.process_time()
    y = _chain(lib, x, c, ops)
    elapsed = time.process_time() - start
    y.sum().backward()
    return elapsed / (ops // 3 * 3)


def objects_per_op(lib: Any, ops: int = 3000) -> float:
    """Garbage-collected objects that a recorded op keeps alive until backward."""
    x = lib.randn(10, requires_grad=True)
    c = lib.randn(10)
    gc.collect()
    before = len(gc.get_objects())
    y = _chain(lib, x, c, ops)
    gc.collect()
    kept = len(gc.get_objects()) - before
    del y
    return kept / (ops // 3 * 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--freeze", action="store_true",
                        help="gc.freeze() after the imports, then measure funcgrad.torch")
    args = parser.parse_args()
    import funcgrad.torch as ftorch
    libs = {"funcgrad.torch": ftorch}
    try:
        import torch
        torch.set_num_threads(1)
        libs["pytorch"] = torch
    except ImportError:
        pass
    if args.freeze:
        gc.collect()
        gc.freeze()  # the imported modules' objects leave the collector's walks
        libs = {"funcgrad.torch, gc.freeze()": ftorch}
    with single_threaded_blas():
        total = {(name, n): 0.0 for name in libs for n in SIZES}
        for _ in range(args.rounds):
            for name, lib in libs.items():
                for n in SIZES:
                    # as many 100-op graphs as one 10,000-op graph: the same work per round
                    total[name, n] += sum(_time_per_op(lib, n) for _ in range(SIZES[-1] // n))
    for name, lib in libs.items():
        small, large = (total[name, n] * 1e6 / args.rounds / (SIZES[-1] // n) for n in SIZES)
        print(f"{name:28s} {small:7.2f} us/op at {SIZES[0]} ops, {large:7.2f} us/op at "
              f"{SIZES[1]} ops: {large / small:.2f}x; "
              f"{objects_per_op(lib):.2f} gc objects kept per op")


if __name__ == "__main__":
    main()
