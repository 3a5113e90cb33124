"""Every program in examples/ is run by a test: a test module names it (or, for
examples/distributed, runs the whole folder: tests/test_distributed.py)."""
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_every_example_is_named_by_a_test():
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("*.py"))
    examples = sorted((ROOT / "examples").glob("*.py"))
    assert examples
    missing = [str(p.relative_to(ROOT)) for p in examples if p.stem not in tests]
    assert not missing, f"examples no test runs: {missing}"
