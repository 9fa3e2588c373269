#!/usr/bin/env python
"""Cold compilation time of the kernels: what a first run pays when numba's cache is empty.

Each measurement is a fresh process with an empty ``NUMBA_CACHE_DIR`` that runs
``mapdp_core.warm_up()`` (every registered algorithm's hook; MAP-DP's compiles the kernels
for every likelihood family); its wall time is printed. With two trees the processes
alternate (old, new, old, new, ...) so that a busy machine slows both alike, and the table
gives the median per tree and the ratio second / first (below 1: the second compiles faster).

Run from the repository root::

    python benchmarks/bench_compile.py                               # this tree
    python benchmarks/bench_compile.py --root /tmp/old --root .      # two trees, interleaved
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
CHILD = "import mapdp_core; mapdp_core.warm_up()"


def cold_compile(root: str) -> float:
    with tempfile.TemporaryDirectory(prefix="mapdp_numba_cache_") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=root)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-W", "ignore", "-c", CHILD], cwd=root, env=env, check=True)
        return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", action="append", help="repository root to measure (repeatable)")
    ap.add_argument("--rounds", type=int, default=3, help="cold processes per tree, alternating")
    args = ap.parse_args()
    roots = [str(Path(r).resolve()) for r in (args.root or [HERE.parents[1]])]
    samples = {r: [] for r in roots}
    for _ in range(args.rounds):
        for r in roots:
            samples[r].append(cold_compile(r))
    print(f"wall seconds of mapdp_core.warm_up() with an empty numba cache, median of {args.rounds} processes per tree")
    meds = [statistics.median(samples[r]) for r in roots]
    for r, m in zip(roots, meds):
        print(f"  {Path(r).name or r:<24} {m:8.1f}   (each: {', '.join(f'{s:.1f}' for s in samples[r])})")
    if len(roots) == 2:
        print(f"  ratio second / first     {meds[1] / meds[0]:8.3f}")


if __name__ == "__main__":
    main()
