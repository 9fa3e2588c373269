"""Timing shared by the benchmarks (run as scripts from the repository root, so this folder is
on ``sys.path``)."""
from __future__ import annotations

import statistics
import time

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
