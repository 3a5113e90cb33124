"""Every notebook in notebooks/ runs from top to bottom in a fresh kernel with a per-cell
timeout, as notebooks/build.py runs it. Rebuild the stored outputs with
``python notebooks/build.py``."""
import importlib.util
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebooks extra is not installed")
pytest.importorskip("nbclient", reason="the notebooks extra is not installed")
pytest.importorskip("ipykernel", reason="the notebooks extra is not installed")
pytest.importorskip("matplotlib", reason="the notebooks extra is not installed")

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
_spec = importlib.util.spec_from_file_location("notebooks_build", NOTEBOOKS / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_notebook_runs(path):
    build.execute(nbformat.read(path, as_version=4))


def test_every_source_has_its_notebook():
    sources = {p.stem for p in (NOTEBOOKS / "src").glob("*.py")}
    assert sources == {p.stem for p in NOTEBOOKS.glob("*.ipynb")}
