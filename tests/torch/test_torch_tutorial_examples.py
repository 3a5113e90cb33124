"""The ported PyTorch tutorials in examples/ run under funcgrad.torch, and, where PyTorch is
installed, the very same programs (import line swapped) print the same results on it."""
import contextlib
import io
import os
import pathlib
import re
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
IMPORT_LINE = "import funcgrad.torch as torch\n"
NUMBER = re.compile(r"-?\d+\.\d+")


def _run(script: pathlib.Path) -> str:
    """The example as a program of its own (one BLAS thread: the programs are small, and
    threads only contend on a busy machine)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env=env, cwd=script.parent)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _on_pytorch(script: pathlib.Path) -> str:
    """The same program with ``import torch`` in place of the facade's import, run in this
    process (PyTorch is slow to import; the other differential tests have imported it)."""
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "tensor"):  # the tests/torch folder itself, seen as a namespace
        pytest.skip("PyTorch is not installed")
    source = script.read_text()
    assert source.count(IMPORT_LINE) == 1
    code = compile(source.replace(IMPORT_LINE, "import torch\n"), str(script), "exec")
    threads = torch.get_num_threads()
    out = io.StringIO()
    torch.set_num_threads(1)
    try:
        with contextlib.redirect_stdout(out):
            exec(code, {"__name__": "__main__", "__file__": str(script)})
    finally:
        torch.set_num_threads(threads)
    return out.getvalue()


def _numbers(line: str) -> list:
    return [float(x) for x in NUMBER.findall(line)]


def test_optimization_tutorial_matches_pytorch():
    ours = _run(EXAMPLES / "torch_optimization_tutorial.py")
    assert "Done!" in ours and "identical parameters: True" in ours
    theirs = _on_pytorch(EXAMPLES / "torch_optimization_tutorial.py")
    ours_lines, their_lines = ours.splitlines(), theirs.splitlines()
    assert len(ours_lines) == len(their_lines)
    for a, b in zip(ours_lines, their_lines):
        assert NUMBER.sub("#", a) == NUMBER.sub("#", b)
        # float32 training on two BLAS libraries: rounding differs in the last digits
        assert _numbers(a) == pytest.approx(_numbers(b), rel=1e-4, abs=1e-6), (a, b)


def test_data_tutorial_matches_pytorch():
    ours = _run(EXAMPLES / "torch_data_tutorial.py")
    assert "Feature batch shape: torch.Size([64, 1, 28, 28])" in ours
    assert "One epoch sees every sample once: True" in ours
    theirs = _on_pytorch(EXAMPLES / "torch_data_tutorial.py")
    # the random draws (which samples, which label comes first) differ between the two
    # generators; everything else is the same
    def fixed(text):
        return [line for line in text.splitlines()
                if not line.startswith(("sample ", "First image"))]
    assert fixed(ours) == fixed(theirs)
