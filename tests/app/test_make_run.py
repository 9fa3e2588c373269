"""Issue 43: `make run` fills numba's cache before the server starts whenever a file with cached
kernels changed since the install (a pull, an edit), so the first visitor never waits for the
compiler; on a fresh install (whose own step just filled it), with nothing changed, or with only
other files changed it compiles nothing. The Makefile's
cache target is run in a folder of its own with a stand-in interpreter that records its calls."""
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


@pytest.fixture
def checkout(tmp_path):
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    for name in ("requirements.txt", "pyproject.toml"):
        (tmp_path / name).write_text("")
    (tmp_path / "mapdp_core" / "kernels").mkdir(parents=True)
    (tmp_path / "mapdp_core" / "kernels" / "sweep.py").write_text("@njit(cache=True)\ndef sweep(): pass\n")
    (tmp_path / "mapdp_core" / "explain.py").write_text("# no kernel here\n")
    bin_ = tmp_path / ".venv" / "bin"
    bin_.mkdir(parents=True)
    python = bin_ / "python"
    python.write_text(f'#!/bin/sh\necho "$@" >> "{tmp_path / "calls.txt"}"\n')
    python.chmod(0o755)
    old = time.time() - 100
    for path in (tmp_path / "requirements.txt", tmp_path / "pyproject.toml", tmp_path / "mapdp_core" / "kernels" / "sweep.py",
                 tmp_path / "mapdp_core" / "explain.py"):
        os.utime(path, (old, old))
    (tmp_path / ".venv" / ".installed").touch()  # installed (and the cache filled) after the sources
    return tmp_path


def _make(folder: Path) -> list[str]:
    subprocess.run(["make", "-s", ".venv/.kernels"], cwd=folder, check=True, capture_output=True, text=True)
    calls = folder / "calls.txt"
    return calls.read_text().splitlines() if calls.exists() else []


def test_make_run_fills_the_cache_again_only_when_a_source_changed_since_the_install(checkout):
    assert "$(KERNELS)" in next(line for line in (ROOT / "Makefile").read_text().splitlines()
                                if line.startswith("run:")), "`make run` does not check numba's cache"
    assert _make(checkout) == []  # a fresh install: its own step filled the cache
    assert _make(checkout) == []  # nothing changed
    earlier = time.time() - 50
    for stamp in (".installed", ".kernels"):
        os.utime(checkout / ".venv" / stamp, (earlier, earlier))
    (checkout / "mapdp_core" / "explain.py").write_text("# words changed, no kernel\n")
    assert _make(checkout) == []
    for stamp in (".installed", ".kernels"):
        os.utime(checkout / ".venv" / stamp, (earlier, earlier))
    (checkout / "mapdp_core" / "kernels" / "sweep.py").write_text("@njit(cache=True)\ndef sweep(): pass  # pulled\n")
    assert _make(checkout) == ["-W ignore -m mapdp_core._precompile"]
    assert _make(checkout) == ["-W ignore -m mapdp_core._precompile"]  # once, not at every start
