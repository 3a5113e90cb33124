"""``python -m benchmarks.profile_funcgrad [--top 15] [--calls 200]``: cProfile of funcgrad
alone on workload 1 (chain gradient) and workload 3 (functional MLP step), the two hot paths
to optimise, sorted by own time."""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats

from . import chain, mlp, small_chain
from .harness import single_threaded_blas


def workloads() -> dict[str, object]:
    fns, _ = chain.implementations(*chain.make(small_chain.N, small_chain.DEPTH))
    impls, _ = mlp.implementations(mlp.make())
    return {"workload 1: chain x100, n=10, grad": fns["funcgrad"],
            "workload 3: MLP functional step": impls["funcgrad"].step}


def profile(fn, calls: int, top: int) -> str:
    fn()
    profiler = cProfile.Profile()
    with single_threaded_blas():  # as in the suite
        profiler.enable()
        for _ in range(calls):
            fn()
        profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_funcgrad")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    for name, fn in workloads().items():
        print(f"## {name} ({args.calls} calls)\n{profile(fn, args.calls, args.top)}")


if __name__ == "__main__":
    main()
