"""``python -m benchmarks.distributed [--quick] [--output PATH]``: funcgrad.distributed's
speed against mpi4py, on 2 ranks of this machine.

1. All-reduce (sum) of float32 arrays of 1e3 .. 1e7 elements: mpi4py's ``Allreduce`` on
   numpy buffers (the floor; once into a preallocated buffer, once allocating the result
   as a functional API must), `funcgrad.distributed.psum` (with and without the ranks'
   agreement step) and the facade's ``torch.distributed.all_reduce``. Target: psum at most
   1.2x mpi4py's time.
2. DistributedDataParallel step scaling: one SGD step of an MLP on a batch of 256, on 1
   rank (the whole batch) and on 2 ranks (half each, gradients all-reduced in buckets).

The parent process launches the measurements through ``python -m funcgrad.distributed.run``
and prints one markdown table (``--output`` also writes it to a file). Times are medians
over rounds; every implementation is timed once per round (round-robin, after a barrier),
each rank's time is the slowest rank's, and a ratio is the median of the per-round ratios
(a burst of load from another process hits both sides of a round alike).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np

SIZES = (10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6, 10 ** 7)
QUICK_SIZES = (10 ** 3, 10 ** 5)
TARGET = 1.2


# -- measured on the ranks ------------------------------------------------------------------

def _timed(fn: Callable[[], Any], calls: int, comm: Any) -> float:
    """Seconds per call of ``fn`` over ``calls`` calls, the slowest rank's."""
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    mine = (time.perf_counter() - start) / calls
    return comm.allreduce(mine, op=_mpi().MAX)


def _mpi() -> Any:
    from mpi4py import MPI
    return MPI


def _allreduce_implementations(n: int) -> dict[str, Callable[[], Any]]:
    import funcgrad.numpy as fnp
    import funcgrad.distributed as dist
    import funcgrad.torch as torch
    import funcgrad.torch.distributed as tdist
    comm = _mpi().COMM_WORLD
    raw = np.random.RandomState(comm.rank).rand(n).astype(np.float32)
    out = np.empty_like(raw)
    x = fnp.asarray(raw.copy())  # the same values in memory of their own: all_reduce
    t = torch.from_numpy(raw.copy())  # writes into its tensor, psum's input is immutable
    world = dist.initialize()  # binds "world"
    unchecked = type(world)(comm.Dup(), timeout=world.timeout)
    unchecked.checks = False
    dist.register_axis("unchecked", unchecked)
    return {
        "mpi4py Allreduce": lambda: comm.Allreduce(raw, out),
        "mpi4py Allreduce + new buffer": lambda: comm.Allreduce(raw, np.empty_like(raw)),
        "funcgrad psum": lambda: dist.psum(x, "world"),
        "funcgrad psum, no agreement": lambda: dist.psum(x, "unchecked"),
        "torch.distributed.all_reduce": lambda: tdist.all_reduce(t),
    }


def measure_allreduce(sizes: tuple, rounds: int, sample_s: float) -> list[dict]:
    import funcgrad.torch.distributed as tdist
    comm = _mpi().COMM_WORLD
    if not tdist.is_initialized():
        tdist.init_process_group("mpi")
    rows = []
    for n in sizes:
        impls = _allreduce_implementations(n)
        for fn in impls.values():  # warm up (buffers, first-touch pages, caches)
            for _ in range(10):
                fn()
        probe = _timed(impls["mpi4py Allreduce"], 3, comm)
        calls = max(1, int(sample_s / max(probe, 1e-7)))
        times: dict[str, list[float]] = {name: [] for name in impls}
        for _ in range(rounds):
            for name, fn in impls.items():
                times[name].append(_timed(fn, calls, comm))
        base = times["mpi4py Allreduce"]
        for name, ts in times.items():
            rows.append({"size": n, "impl": name, "median": statistics.median(ts),
                         "ratio": statistics.median(a / b for a, b in zip(ts, base))})
    return rows


def _mlp(torch: Any) -> Any:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.Tanh(),
                               torch.nn.Linear(512, 512), torch.nn.Tanh(),
                               torch.nn.Linear(512, 10))


def measure_ddp(batch: int, rounds: int) -> dict:
    import funcgrad.torch as torch
    import funcgrad.torch.distributed as tdist
    from funcgrad.torch.nn.parallel import DistributedDataParallel
    comm = _mpi().COMM_WORLD
    if not tdist.is_initialized():
        tdist.init_process_group("mpi")
    n, r = tdist.get_world_size(), tdist.get_rank()
    rng = np.random.RandomState(r)
    x = torch.tensor(rng.randn(batch // n, 256).astype(np.float32))
    y = torch.tensor(rng.randint(0, 10, batch // n))
    net = DistributedDataParallel(_mlp(torch)) if n > 1 else _mlp(torch)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)

    def step() -> None:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    step()
    times = [_timed(step, 1, comm) for _ in range(rounds)]
    params = sum(p.numel() for p in net.parameters())
    return {"ranks": n, "batch": batch, "median": statistics.median(times), "params": params}


def worker(args: argparse.Namespace) -> None:
    """Measure ``args.part`` ("allreduce", "ddp" or "both") and print it from rank 0."""
    rounds, sample_s = (3, 0.005) if args.quick else (15, 0.05)
    result: dict[str, Any] = {}
    if args.part in ("allreduce", "both"):
        result["allreduce"] = measure_allreduce(QUICK_SIZES if args.quick else SIZES,
                                                rounds, sample_s)
    if args.part in ("ddp", "both"):
        result["ddp"] = measure_ddp(32 if args.quick else 256, rounds)
    if _mpi().COMM_WORLD.rank == 0:
        print("RESULT " + json.dumps(result), flush=True)


# -- the parent: launch, gather, print ---------------------------------------------------------

def launch(part: str, ranks: int, quick: bool) -> dict:
    cmd = [sys.executable, "-m", "funcgrad.distributed.run", "-n", str(ranks), "-m",
           "benchmarks.distributed", "--worker", part] + (["--quick"] if quick else [])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
         os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}")
    line = next(out for out in done.stdout.splitlines() if out.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def _time(seconds: float) -> str:
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "us")):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def report(allreduce: list[dict], ddp: list[dict]) -> str:
    lines = []
    if allreduce:
        lines += ["## All-reduce (sum), float32, 2 ranks", "",
                  "| elements | implementation | median | x mpi4py Allreduce | GB/s (algbw) |",
                  "|---|---|---|---|---|"]
        for row in allreduce:
            gbs = row["size"] * 4 / row["median"] / 1e9
            lines.append(f"| {row['size']:.0e} | {row['impl']} | {_time(row['median'])} | "
                         f"{row['ratio']:.2f} | {gbs:.2f} |")
        worst = max(r["ratio"] for r in allreduce if r["impl"] == "funcgrad psum")
        lines += ["", f"Target: funcgrad psum at most {TARGET}x mpi4py's Allreduce at every "
                  f"size: worst {worst:.2f}x -> {'met' if worst <= TARGET else 'MISSED'}", ""]
    if not ddp:
        return "\n".join(lines)
    lines += ["## DistributedDataParallel step (MLP, SGD)", "",
              "| ranks | batch per rank | parameters | step | speed-up |", "|---|---|---|---|---|"]
    one = min(ddp, key=lambda d: d["ranks"])["median"]  # speed-up over the fewest ranks
    for d in ddp:
        lines.append(f"| {d['ranks']} | {d['batch'] // d['ranks']} | {d['params']} | "
                     f"{_time(d['median'])} | {one / d['median']:.2f}x |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.distributed")
    p.add_argument("--quick", action="store_true", help="tiny sizes and repeats")
    p.add_argument("--output", default=None, help="also write the table to this file")
    p.add_argument("--worker", choices=["allreduce", "ddp", "both"], dest="part",
                   help=argparse.SUPPRESS)
    p.add_argument("--only", choices=["allreduce", "ddp"], default=None,
                   help="run one of the two parts")
    args = p.parse_args(argv)
    if args.part is not None:
        return worker(args)
    load_before = os.getloadavg()[0]
    allreduce = (launch("allreduce", 2, args.quick)["allreduce"]
                 if args.only != "ddp" else [])
    ddp = ([launch("ddp", ranks, args.quick)["ddp"] for ranks in (1, 2)]
           if args.only != "allreduce" else [])
    # the machine's load (other processes share its cores) says how far to trust the times
    text = (f"Load average (1 min) {load_before:.2f} before, {os.getloadavg()[0]:.2f} "
            f"after.\n\n" + report(allreduce, ddp))
    print(text)
    if args.output:
        with open(args.output, "w") as f:
            f.write(f"# funcgrad.distributed benchmarks\n\nCommand: `python -m "
                    f"benchmarks.distributed`, {time.strftime('%Y-%m-%d %H:%M')}.\n\n"
                    f"{text}\n")


if __name__ == "__main__":
    main()
