#!/usr/bin/env python
"""Seconds of one automatic fit, ``MAPDP(random_state=0).fit(X)`` (likelihood, prior and N0 all
"auto"), on synthetic tables of the sizes the defaults issue names (up to 10 000 rows x 30
columns: the target is 2 s on the 2-core development machine), and on larger ones, where the
search runs on a subsample of ``mapdp_core.selection.auto.SEARCH_ROWS`` rows.

Wall time (the search runs its candidates in threads), the median of 3 fits after an untimed
warm-up fit; the search's share and the rows it used are printed beside it.

Run from the repository root: ``python benchmarks/auto_speed.py``.
"""
from __future__ import annotations

import statistics
import time
import warnings

import numpy as np
import pandas as pd


def table(n: int, d: int, kind: str, seed: int = 0) -> pd.DataFrame:
    """Four groups; ``kind`` "mixed" cycles real, yes/no and count columns, "real" is all real."""
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 4, n)
    cols = {}
    for j in range(d):
        if kind == "real" or j % 3 == 0:
            cols[f"r{j}"] = rng.normal(2.0 * z * (j % 5 == 0), 1.0)
        elif j % 3 == 1:
            cols[f"b{j}"] = rng.binomial(1, 0.2 + 0.2 * (z % 2))
        else:
            cols[f"c{j}"] = rng.poisson(1 + z)
    return pd.DataFrame(cols)


def main() -> None:
    from mapdp_core import MAPDP

    warnings.simplefilter("ignore")
    MAPDP(random_state=0).fit(table(300, 6, "mixed"))  # compile / load numba's cache
    print(f"{'table':<22}{'median s':>10}{'search s':>10}{'rows searched':>15}{'K':>4}")
    for n, d, kind in [(1_000, 30, "mixed"), (10_000, 30, "mixed"), (10_000, 30, "real"), (10_000, 10, "real"),
                       (40_000, 10, "mixed")]:
        X = table(n, d, kind)
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            m = MAPDP(random_state=0).fit(X)
            times.append(time.perf_counter() - t0)
        search = m.hyperparameter_search_["seconds"].sum()  # CPU-ish: summed over threads
        print(f"{f'{n} x {d} {kind}':<22}{statistics.median(times):>10.2f}{search:>10.2f}"
              f"{m.hyperparameters_['rows_searched']:>15}{m.n_clusters_:>4}")


if __name__ == "__main__":
    main()
