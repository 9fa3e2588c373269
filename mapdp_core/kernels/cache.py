"""Dropping the kernels' stale numba cache files.

numba's disk cache recompiles a cached function when the file that defines it changes
(numba >= 0.68 compares a hash of that file), but the kernels of ``kernels/dp_mixture.py`` inline the
families' functions from other files: after a change to a family module alone (an edit, or
an upgrade that leaves ``kernels/dp_mixture.py`` as it was) the cached kernels would silently run the
old family code. So the kernels' cache files are dropped whenever the family sources differ
from those they were compiled with (a hash kept beside them).
"""
from __future__ import annotations

import hashlib
from pathlib import Path


def families_digest(folder: Path = Path(__file__).parents[1] / "families") -> str:
    """SHA-256 of the family modules' sources, in name order."""
    h = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def drop_stale_cache(cache_folder: Path, digest: str, module: str = "dp_mixture") -> bool:
    """Delete ``module``'s cached kernels in ``cache_folder`` unless they were compiled with
    family sources of hash ``digest``; returns whether anything was dropped."""
    stamp = cache_folder / f"{module}.families.sha256"
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    dropped = False
    try:
        for path in cache_folder.glob(f"{module}.*.nb[ic]"):
            path.unlink(missing_ok=True)
            dropped = True
        cache_folder.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)
    except OSError:  # an unwritable cache: numba cannot have written stale files there either
        pass
    return dropped
