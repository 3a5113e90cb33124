"""The Array API conformance suite on funcgrad.numpy, numpy and array_api_strict, in one go.

    python -m benchmarks.array_api [--max-examples 5] [--modules funcgrad.numpy numpy ...]
                                   [--fast] [--seed N] [--suite DIR] [--workdir DIR]

The suite (data-apis/array-api-tests, vendored read-only in ``shared/array-api-tests``;
see its ORIGIN.md) is copied to a writable folder first, since hypothesis keeps its
example database in the working folder, and the specification folders its loader asserts
(``array-api/spec/<version>/API_specification``) are created there. Each module runs in
its own pytest subprocess (``ARRAY_API_TESTS_MODULE``); the counts come from pytest's JUnit
report. funcgrad's failures are compared with ``array_api_expected_failures.txt``: the
tests that immutable Arrays rule out, and one signed zero kept on purpose, each with its
reason. Any other failure is reported as unexpected and makes the exit status 1. ``--fast`` is the CI subset: funcgrad only, two
examples per test, derandomised, the expected failures skipped, and of the special-value
tests only those of the functions funcgrad computes itself (floor_divide, expm1, tanh,
nextafter).

The suite needs ``pip install "hypothesis>=6.151" "ndindex>=1.8" pytest`` (its
requirements.txt); array_api_strict is measured when it is installed.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXPECTED = Path(__file__).with_name("array_api_expected_failures.txt")
MODULES = ("funcgrad.numpy", "numpy", "array_api_strict")
# the CI subset: every test but the special cases of functions whose values are numpy's
# own (the ones funcgrad computes itself are kept); ~850 tests, ~10 s of CPU
FAST = ["-k", "not test_special_cases or floor_divide or floordiv or expm1 or tanh or "
        "nextafter"]


@dataclass
class Outcome:
    """One module's run: counts, failing test ids and the wall time."""
    module: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    failures: list = field(default_factory=list)
    error: str = ""

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.skipped


def find_suite(given: str | None = None) -> Path | None:
    """The vendored suite: ``given``, $FUNCGRAD_ARRAY_API_TESTS, or the first
    ``shared/array-api-tests`` in the repository or a folder above it."""
    candidates = [given, os.environ.get("FUNCGRAD_ARRAY_API_TESTS")]
    candidates += [str(p / "shared" / "array-api-tests") for p in (REPO, *REPO.parents)]
    for c in candidates:
        if c and (Path(c) / "array_api_tests").is_dir():
            return Path(c)
    return None


def missing_requirements() -> list[str]:
    """The suite's requirements that are not importable (or too old) here."""
    missing = [m for m in ("pytest", "hypothesis", "ndindex") if find_spec(m) is None]
    if not missing:
        import hypothesis
        if tuple(int(p) for p in hypothesis.__version__.split(".")[:2]) < (6, 151):
            missing.append("hypothesis>=6.151")
    return missing


def writable_copy(suite: Path, workdir: Path | None = None) -> Path:
    """A writable copy of the suite with the specification folders its loader asserts."""
    dest = Path(workdir or tempfile.mkdtemp(prefix="array-api-tests-")) / "array-api-tests"
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(suite, dest, ignore=shutil.ignore_patterns(".hypothesis", "__pycache__"))
    for root, dirs, files in os.walk(dest):
        for name in dirs + files:
            p = Path(root) / name
            p.chmod(p.stat().st_mode | stat.S_IWUSR | (stat.S_IXUSR if p.is_dir() else 0))
    dest.chmod(dest.stat().st_mode | stat.S_IWUSR)
    stubs = dest / "array-api" / "src" / "array_api_stubs"
    for version in stubs.glob("_[0-9]*_[0-9]*"):
        spec = version.name.lstrip("_").replace("_", ".")
        (dest / "array-api" / "spec" / spec / "API_specification").mkdir(parents=True,
                                                                         exist_ok=True)
    return dest


def expected_ids() -> list[str]:
    """The test ids array_api_expected_failures.txt lists."""
    lines = EXPECTED.read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def _junit_counts(path: Path, out: Outcome) -> None:
    for case in ET.parse(path).iter("testcase"):
        test_id = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            out.failed += 1
            out.failures.append(test_id)
        elif case.find("skipped") is not None:
            out.skipped += 1
        else:
            out.passed += 1


def run_module(module: str, copy: Path, max_examples: int, seed: int | None,
               extra: list[str], timeout: float) -> Outcome:
    """The suite on one module, in a subprocess; counts from its JUnit report."""
    out = Outcome(module)
    report = copy / f"junit-{module}.xml"
    cmd = [sys.executable, "-m", "pytest", "array_api_tests/", "-q", "-p", "no:cacheprovider",
           "-p", "no:randomly", "--disable-warnings", f"--max-examples={max_examples}",
           f"--junitxml={report}", "-o", "junit_family=xunit1", *extra]
    cmd += ["--derandomize"] if seed is None else [f"--hypothesis-seed={seed}"]
    env = dict(os.environ, ARRAY_API_TESTS_MODULE=module, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTEST_ADDOPTS", None)
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        out.error = f"timed out after {timeout:.0f} s"
        return out
    out.seconds = time.perf_counter() - start
    if not report.exists():
        tail = (proc.stdout + proc.stderr).strip().splitlines()
        out.error = tail[-1] if tail else f"pytest exited with {proc.returncode}"
        return out
    _junit_counts(report, out)
    return out


def table(outcomes: list[Outcome]) -> str:
    lines = [f"{'module':<18} {'passed':>7} {'failed':>7} {'skipped':>8} {'total':>6} "
             f"{'seconds':>8}"]
    for o in outcomes:
        if o.error:
            lines.append(f"{o.module:<18} not run: {o.error}")
            continue
        lines.append(f"{o.module:<18} {o.passed:>7} {o.failed:>7} {o.skipped:>8} "
                     f"{o.total:>6} {o.seconds:>8.1f}")
    return "\n".join(lines)


def unexpected_failures(outcome: Outcome) -> list[str]:
    """funcgrad's failures that array_api_expected_failures.txt does not explain."""
    allowed = expected_ids()
    return [f for f in outcome.failures if not any(f == a or f.startswith(a + "[")
                                                   for a in allowed)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.array_api",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-examples", type=int, default=5)
    parser.add_argument("--modules", nargs="+", default=list(MODULES))
    parser.add_argument("--seed", type=int, default=None,
                        help="hypothesis seed (default: a random one, printed)")
    parser.add_argument("--derandomize", action="store_true",
                        help="hypothesis' fixed per-test examples instead of a seed")
    parser.add_argument("--fast", action="store_true",
                        help="the CI subset: funcgrad only, 2 examples, derandomised, the "
                        "expected failures skipped")
    parser.add_argument("--suite", default=None, help="the array-api-tests folder")
    parser.add_argument("--workdir", default=None, help="where to put the writable copy")
    parser.add_argument("--timeout", type=float, default=1800.0,
                        help="seconds allowed per module")
    args = parser.parse_args(argv)
    suite = find_suite(args.suite)
    if suite is None:
        print("array-api-tests not found: pass --suite or set FUNCGRAD_ARRAY_API_TESTS")
        return 2
    missing = missing_requirements()
    if missing:
        print(f"the suite needs: pip install {' '.join(missing)}")
        return 2
    copy = writable_copy(suite, Path(args.workdir) if args.workdir else None)
    extra: list[str] = []
    modules, examples = args.modules, args.max_examples
    seed = None if args.derandomize else (args.seed if args.seed is not None
                                          else random.randrange(2**31))
    if args.fast:
        modules, examples, seed = ["funcgrad.numpy"], 2, None
        extra = ["--skips-file", str(EXPECTED), *FAST]
    modules = [m for m in modules if find_spec(m.split(".")[0]) is not None]
    print(f"array-api-tests from {suite}, run in {copy}; --max-examples {examples}, "
          f"{'derandomised' if seed is None else f'hypothesis seed {seed}'}")
    outcomes = [run_module(m, copy, examples, seed, extra, args.timeout) for m in modules]
    print(table(outcomes))
    ours = next((o for o in outcomes if o.module == "funcgrad.numpy"), None)
    if ours is None:
        return 0
    if ours.error:
        return 1
    unexpected = unexpected_failures(ours)
    explained = len(ours.failures) - len(unexpected)
    print(f"funcgrad.numpy: {explained} expected failure(s) (listed with their reasons in "
          f"{EXPECTED.name}), {len(unexpected)} unexpected")
    for f in unexpected:
        print(f"  unexpected: {f}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
