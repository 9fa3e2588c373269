"""Timing shared by the benchmarks (run as scripts from the repository root, so this folder is
on ``sys.path``)."""
from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path

REPEAT_BELOW = 5.0  # seconds: shorter measurements are repeated ...
REPEATS = 3  # ... and the median of this many is reported


def timed(fn):
    """Run ``fn``; if it took under REPEAT_BELOW s, run it REPEATS times in all. Returns (median
    seconds, result of the last run): every method timed here is deterministic for fixed input
    and seed, so the result is the same each time."""
    t0 = time.perf_counter()
    result = fn()
    times = [time.perf_counter() - t0]
    if times[0] < REPEAT_BELOW:
        for _ in range(REPEATS - 1):
            t0 = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def git_commit() -> str:
    """The repository's HEAD as a short hash, for a result's header ("unknown" outside a checkout)."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).resolve().parents[1],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def emit(report: str, out=None) -> None:
    """Print a benchmark's report and, given a path, write it there as well (the results file)."""
    print(report)
    if out:
        Path(out).write_text(report + "\n")
