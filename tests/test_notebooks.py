"""Every notebook in notebooks/ runs from top to bottom (nbclient, a fresh kernel each,
a per-cell timeout). Rebuild the stored outputs with ``python notebooks/build.py``."""
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebooks extra is not installed")
nbclient = pytest.importorskip("nbclient", reason="the notebooks extra is not installed")
pytest.importorskip("ipykernel", reason="the notebooks extra is not installed")
pytest.importorskip("matplotlib", reason="the notebooks extra is not installed")

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
CELL_TIMEOUT = 120  # seconds


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_notebook_runs(path):
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError naming the failing cell


def test_every_source_has_its_notebook():
    sources = {p.stem for p in (NOTEBOOKS / "src").glob("*.py")}
    assert sources == {p.stem for p in NOTEBOOKS.glob("*.ipynb")}
