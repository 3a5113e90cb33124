"""Build the notebooks from their sources and execute them, storing the outputs.

Each notebook is written as a plain script in ``notebooks/src/`` (jupytext's "percent"
format: ``# %%`` starts a code cell, ``# %% [markdown]`` a markdown cell whose lines are
``# ``-commented), which is easy to review and edit; this script turns it into
``notebooks/<name>.ipynb`` and runs it with nbclient so that the stored notebook shows its
outputs on GitHub. The test suite (tests/test_notebooks.py) re-executes the .ipynb files.

    python notebooks/build.py            # every source
    python notebooks/build.py 01 03      # the sources whose names start so
"""
from __future__ import annotations

import os
import pathlib
import sys
import time

import nbformat
from nbclient import NotebookClient

HERE = pathlib.Path(__file__).resolve().parent
CELL_TIMEOUT = 120  # seconds per cell
# The notebooks multiply small matrices: one BLAS thread is several times faster than
# OpenBLAS spinning threads on a shared 2-core machine.
KERNEL_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def parse(text: str) -> list:
    """The cells of a percent-format script."""
    cells = []
    kind, lines = None, []

    def flush() -> None:
        body = "\n".join(lines).strip("\n")
        if kind == "markdown":
            cells.append(nbformat.v4.new_markdown_cell(body))
        elif kind == "code" and body:
            cells.append(nbformat.v4.new_code_cell(body))

    for line in text.splitlines():
        if line.startswith("# %%"):
            flush()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        elif kind == "markdown":
            lines.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
        elif kind == "code":
            lines.append(line)
    flush()
    return cells


def execute(nb: "nbformat.NotebookNode") -> None:
    """Run ``nb`` in a fresh kernel from notebooks/, storing its outputs; raises
    nbclient's CellExecutionError naming the cell that failed."""
    NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(HERE)}}).execute(
        env={**os.environ, **KERNEL_ENV})


def build(source: pathlib.Path) -> float:
    """Write and execute ``notebooks/<source stem>.ipynb``; returns the seconds it took."""
    nb = nbformat.v4.new_notebook(cells=parse(source.read_text()))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    start = time.perf_counter()
    execute(nb)
    seconds = time.perf_counter() - start
    nbformat.validate(nb)
    nbformat.write(nb, HERE / f"{source.stem}.ipynb")
    return seconds


def main(prefixes: list[str]) -> None:
    for source in sorted((HERE / "src").glob("*.py")):
        if not prefixes or any(source.stem.startswith(p) for p in prefixes):
            print(f"{source.stem}.ipynb: {build(source):.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
