"""Smoke run of benchmarks/mixed_precision.py at tiny sizes, so that it never rots: every
implementation is timed, the memory table is there, and bfloat16 holds less than float32.
Nothing here asserts on time."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root

from benchmarks import mixed_precision  # noqa: E402


def test_quick_run_has_every_row_and_bfloat16_holds_less(tmp_path):
    out = tmp_path / "results.md"
    text = mixed_precision.main(["--quick", "--output", str(out)])
    assert out.read_text() == text
    for impl in ("numpy products", "funcgrad step", "funcgrad.torch step"):
        assert text.count(f"| {impl} |") == 2, impl
    assert "| held (residuals + gradients) |" in text and "| peak |" in text
    result = mixed_precision.measure(quick=True)
    assert result["held"]["bfloat16"] < result["held"]["float32"]
    assert result["peaks"]["bfloat16"] < result["peaks"]["float32"]
