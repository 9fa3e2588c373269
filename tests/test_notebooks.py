"""The example notebooks (notebooks/, issue 44) run from top to bottom on every `make test`, and are
kept in the repository without outputs (what a reader sees is what the code gives today).

Each runs in a fresh kernel of this environment (the venv's Python; the repository root on
PYTHONPATH so that `explorer` imports, as the kernel `make install` registers does), in a
temporary folder so the files a notebook writes land there.
"""
import json
import os
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_five_or_more_notebooks():
    assert len(NOTEBOOKS) >= 5, [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    book = nbformat.read(path, as_version=4)
    nbformat.validate(book)
    code = [c for c in book.cells if c.cell_type == "code"]
    assert code, "a notebook without code"
    assert all(not c.outputs and c.execution_count is None for c in code), \
        f"{path.name} holds outputs: strip them (jupyter nbconvert --clear-output --inplace {path.name})"


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """A kernel spec of this very interpreter, first on JUPYTER_PATH: another "python3" kernel (a
    user's own, outside the venv) is never picked."""
    folder = tmp_path_factory.mktemp("jupyter")
    spec = folder / "kernels" / "mapdp-tests"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "MAP-DP tests", "language": "python"}))
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path, monkeypatch, kernels):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("JUPYTER_PATH", os.pathsep.join(filter(None, [str(kernels), os.environ.get("JUPYTER_PATH")])))
    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(book, timeout=240, kernel_name="mapdp-tests",
                                     resources={"metadata": {"path": str(tmp_path)}})
    started = time.perf_counter()
    client.execute()  # raises CellExecutionError, with the cell and its traceback, on any error
    print(f"{path.name}: {time.perf_counter() - started:.1f} s")
    errors = [o for c in book.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
