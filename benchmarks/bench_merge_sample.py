#!/usr/bin/env python
"""DEMP's overlaps on a sample of rows (issue 26): ``MAPDP(random_state=0)`` with defaults on the
six PLOS scenarios at 400 000 rows, the overlaps measured on every row against on
``merging.MERGE_ROWS`` sampled rows, side by side in one process (alternating, median of 3),
with KMeans(true K, n_init=1) as the yardstick, and whether the clusters are the same.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_merge_sample.py [--n 400000]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import mapdp_core  # noqa: E402
from mapdp_core.data.synthetic import plos_scenario  # noqa: E402
from mapdp_core.engine import merging  # noqa: E402
from mapdp_core.evaluation.metrics import clustering_scores  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=400_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    warnings.filterwarnings("ignore")
    mapdp_core.warm_up()
    sample = merging.MERGE_ROWS
    print(f"N = {args.n}; overlaps on every row vs on {sample:,} rows; seconds = median of {args.repeats}")
    print(f"{'scenario':>8} {'KMeans s':>9} {'every row s':>12} {'sample s':>9} {'every/KM':>9} {'sample/KM':>10} "
          f"{'K every':>8} {'K sample':>9} {'same clusters':>14}")
    ratios = {"every": [], "sample": []}
    for section in ("5.1", "5.2", "5.3", "5.4", "5.5", "5.6"):
        X, y = plos_scenario(section, n=args.n, seed=0)
        k = len(np.unique(y))
        times = {"km": [], "every": [], "sample": []}
        labels = {}
        for _ in range(args.repeats):
            t = time.perf_counter()
            KMeans(k, n_init=1, random_state=0).fit(X)
            times["km"].append(time.perf_counter() - t)
            for mode, rows in (("every", 10 ** 12), ("sample", sample)):
                merging.MERGE_ROWS = rows
                t = time.perf_counter()
                m = mapdp_core.MAPDP(random_state=0).fit(X)
                times[mode].append(time.perf_counter() - t)
                labels[mode] = m.labels_
        merging.MERGE_ROWS = sample
        med = {key: statistics.median(v) for key, v in times.items()}
        same = clustering_scores(labels["every"], labels["sample"])["ari"] == 1.0
        ratios["every"].append(med["every"] / med["km"])
        ratios["sample"].append(med["sample"] / med["km"])
        print(f"{section:>8} {med['km']:>9.3f} {med['every']:>12.3f} {med['sample']:>9.3f} "
              f"{med['every'] / med['km']:>9.2f} {med['sample'] / med['km']:>10.2f} "
              f"{len(np.unique(labels['every'])):>8} {len(np.unique(labels['sample'])):>9} {str(same):>14}")
    geo = {key: float(np.exp(np.mean(np.log(v)))) for key, v in ratios.items()}
    print(f"geometric mean MAPDP / KMeans: every row {geo['every']:.2f}, sample {geo['sample']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
