"""Process-wide set-up that must happen before numba compiles anything.

numba's ``cache=True`` writes compiled kernels next to the module in ``__pycache__``.
In a read-only install (a site-packages owned by root, a read-only checkout) that
fails with "cannot cache function ... no locator available", so when the package
folder is not writable and the user has not chosen ``NUMBA_CACHE_DIR``, we point
numba at a per-user cache folder instead.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
        return True
    except OSError:
        return False


def ensure_numba_cache_dir() -> None:
    """Set ``NUMBA_CACHE_DIR`` to a writable folder when the package folder is read-only."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    package = Path(__file__).resolve().parents[1]  # mapdp_core/, beside whose modules numba caches
    if _writable(package / "__pycache__"):
        return
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for candidate in (Path(base) / "mapdp_core" / "numba",
                      Path(tempfile.gettempdir()) / f"mapdp_core-numba-{os.getuid() if hasattr(os, 'getuid') else 'user'}"):
        if _writable(candidate):
            os.environ["NUMBA_CACHE_DIR"] = str(candidate)
            return
