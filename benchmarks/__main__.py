"""``python -m benchmarks [--quick] [--only N ...] [--output PATH]``: run the suite, print
one table, and (full runs, or when ``--output`` is given) write it with the machine,
versions and date to benchmarks/RESULTS.md."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import WORKLOADS, large_chain, run
from .harness import Config, Report, Row, load, machine, versions

RESULTS = Path(__file__).with_name("RESULTS.md")
_REFS = {"numpy": "x numpy", "own grad": "x own grad", "no ckpt": "x no ckpt",
         "torch": "x torch", "funcgrad": "x funcgrad", "steady": "x later calls"}


def _value(row: Row) -> str:
    if row.value is None:
        return "skipped"
    if row.unit == "B":
        return f"{row.value / 2**20:.2f} MiB"
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "us")):
        if row.value >= scale:
            return f"{row.value / scale:.3g} {unit}"
    return f"{row.value * 1e9:.3g} ns"


def table(report: Report) -> str:
    """The results as one markdown table (readable as plain text too)."""
    lines = ["| # | workload | implementation | median | ratio | spread | note |",
             "|---|---|---|---|---|---|---|"]
    for r in report.rows:
        ratio = f"{r.ratio:.2f} {_REFS[r.ref]}" if r.ratio is not None else ""
        spread = f"±{r.spread * 50:.0f}%" if r.spread is not None else ""
        lines.append(f"| {r.workload} | {r.case} | {r.impl} | {_value(r)} | {ratio} | {spread} "
                     f"| {r.note} |")
    return "\n".join(lines)


def targets(report: Report) -> str:
    mark = {True: "met", False: "MISSED", None: "not evaluated"}
    return "\n".join(f"- {t.text}: {t.measured} -> {mark[t.met]}" for t in report.targets)


def document(report: Report, argv: list[str], cfg: Config, info: dict[str, str]) -> str:
    """RESULTS.md: the command, machine, versions and method, the table, the targets."""
    vers = ", ".join(f"{k} {v}" for k, v in versions().items())
    return "\n\n".join([
        "# funcgrad benchmarks",
        f"Command: `{' '.join(['python -m benchmarks', *argv])}`, run on {info['date']}.",
        f"- Machine: {info['cpu']}; {info['os']}\n- numpy BLAS: {info['blas']}\n"
        f"- Load average (1 min) before and after the run: {info['load']}\n"
        f"- Versions: {vers}",
        f"Times are medians of per-call times over {cfg.repeats} samples of at least "
        f"{cfg.sample_s * 1e3:.0f} ms each ({large_chain.REPEATS} samples of one call for "
        "workload 2), every implementation timed round-robin in the same process after a "
        "warm-up call that also compiles jitted code; spread is the interquartile range "
        "relative to the median. PyTorch and numpy's BLAS run on one thread (XLA keeps its "
        "own thread pool), the garbage collector stays on. The ratio column divides medians "
        "measured in the same run. A timing target is decided on the paired ratio: the "
        "median, over the round-robin rounds, of the two implementations' time ratio within "
        "a round (a slow patch of this shared machine hits both sides of a round alike); "
        "the ratio of medians is shown beside it. Every "
        "implementation's gradient is checked against hand-written numpy's before it is "
        "timed.",
        table(report), "## Targets (issues 7, 17 and 21)", targets(report), *report.sections])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes and few repeats (a smoke run; writes no RESULTS.md)")
    parser.add_argument("--only", type=int, nargs="+", choices=sorted(WORKLOADS),
                        default=sorted(WORKLOADS), metavar="N", help="workloads to run (1-6)")
    parser.add_argument("--output", type=Path, default=None,
                        help=f"where to write the results (default {RESULTS} on full runs)")
    args = parser.parse_args(argv)
    info = machine()
    report = run(quick=args.quick, only=tuple(args.only))
    info["load"] += f" -> {load()}"
    print(table(report))
    print("\nTargets:\n" + targets(report))
    for section in report.sections:
        print("\n" + section)
    output = args.output or (None if args.quick else RESULTS)
    if output is not None:
        output.write_text(document(report, argv, Config.make(args.quick), info) + "\n")
        print(f"\nwritten to {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
