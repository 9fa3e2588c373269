#!/usr/bin/env python
"""Issue 41, item 1: do the diagonal and spherical shared covariances (mclust's EEI and EII) matter
beside the three Gaussian structures the search offers (VVI: ``normal_gamma`` columns, VVV:
``normal_wishart``, EEE: ``normal_wishart_tied``)? Measured by the same evidence the search uses.

For each read table (tuning and held-out sets 1-6; set 7 stays sealed) with at least two real-valued
columns: the real-valued columns only (``auto_likelihood``'s ``normal_gamma`` columns), the rows
observed in all of them, at most 1 500 rows (a fixed random subsample above). The automatic search
runs on them with the three structures offered (every row searched), and every partition any of its
MAP-DP runs ends at is pooled. Each model's evidence is its lowest exact -ln p(X, z) over the pooled
partitions, the search's spread grid and its N0 grid (the CRP term), so the five models are judged on
the same partitions and knobs:

* VVI, VVV, EEE: ``ModelData.neg_log_joint`` of the library's families, priors by ``_prior_argument``;
* EEI (one variance per column, shared by all clusters): the sum over columns of the one-column tied
  Normal-Wishart (the tied family with D = 1, its empirical-Bayes prior per column);
* EII (one variance for every column and cluster): the one-column tied family on the N x D standardised
  cells stacked, each (cluster, column) pair a cluster of its own, plus the Jacobian N sum_d ln sd_d that
  puts it on the raw columns' scale.

The pooled partitions come from the VVI, VVV and EEE searches, so EEI and EII are judged on partitions
they did not choose: a lower bound on what their own sweeps would reach is not available, and a win
for them here would understate their advantage, not overstate it.

    PYTHONPATH=. .venv/bin/python benchmarks/shared_shapes.py [--part I/J]
"""
import argparse
import math
import sys
import time
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy.special import gammaln  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import merge_cutoffs as MC  # noqa: E402
import mapdp_core.engine.sweeps as sweeps  # noqa: E402
from mapdp_core.core.spec import parse  # noqa: E402
from mapdp_core.engine.model_data import ModelData  # noqa: E402
from mapdp_core.selection import auto  # noqa: E402
from mapdp_core.selection.priors import _prior_argument  # noqa: E402

threadpool_limits(1)
MODELS = ("VVI", "VVV", "EEE", "EEI", "EII")
MOST_ROWS = 1500


def pooled_search(frame: pd.DataFrame, likelihood: dict) -> list:
    """Every distinct partition the search's MAP-DP runs end at (``last_state`` recorded)."""
    pool, real = {}, sweeps.last_state

    def recording(*args, **kwargs):
        state = real(*args, **kwargs)
        labels = np.unique(np.asarray(state.labels), return_inverse=True)[1].astype(np.int64)
        pool.setdefault(labels.tobytes(), labels)
        return state

    sweeps.last_state = recording
    try:
        auto.choose_hyperparameters(frame, likelihood, allow_joint=True, random_state=0, search_rows=len(frame))
    finally:
        sweeps.last_state = real
    return list(pool.values())


def data_terms(X: np.ndarray, pool: list, spreads) -> dict:
    """-ln p(X | z) plus data-only constants for every model, spread and pooled partition."""
    N, D = X.shape
    cols = list(range(D))
    out = {m: np.zeros((len(spreads), len(pool))) for m in MODELS}

    def add(name, parsed_of, extra=0.0, stack=False):
        """Adds each partition's -ln p(X | z) (with the data-only constants) under ``parsed_of(s)``."""
        for a, s in enumerate(spreads):
            model = ModelData(parsed_of(s))
            for b, z in enumerate(pool):
                labels = (z[:, None] * D + np.arange(D)[None, :]).reshape(-1) if stack else z
                K = model.start(np.unique(labels, return_inverse=True)[1].astype(np.int64))
                out[name][a, b] += -float(model.log_marginals(K).sum()) + model.pconst_total + extra

    def block(family):
        likelihood = {tuple(cols): family} if family != "normal_gamma" else {c: family for c in cols}
        base = parse(X, likelihood)
        return lambda s: parse(X, likelihood, _prior_argument(base, likelihood, s))

    for name, family in (("VVI", "normal_gamma"), ("VVV", "normal_wishart"), ("EEE", "normal_wishart_tied")):
        add(name, block(family))
    for d in cols:  # EEI: the columns' one-column tied models, summed
        column = np.ascontiguousarray(X[:, [d]])
        base = parse(column, "normal_wishart_tied")
        add("EEI", lambda s, c=column, b=base: parse(c, "normal_wishart_tied", _prior_argument(b, "normal_wishart_tied", s)))
    sd = X.std(axis=0)
    cells = ((X - X.mean(axis=0)) / sd).reshape(-1, 1)  # row-major: cell (i, d) at i * D + d
    base = parse(cells, "normal_wishart_tied")
    add("EII", lambda s: parse(cells, "normal_wishart_tied", _prior_argument(base, "normal_wishart_tied", s)),
         extra=N * float(np.log(sd).sum()), stack=True)
    return out


def crp_terms(pool: list, n0_grid) -> np.ndarray:
    """-ln CRP(z; N0) per N0 and pooled partition (PLOS eq 12)."""
    out = np.empty((len(n0_grid), len(pool)))
    for b, z in enumerate(pool):
        sizes = np.bincount(z)
        N = len(z)
        for a, n0 in enumerate(n0_grid):
            out[a, b] = -(len(sizes) * math.log(n0) + gammaln(sizes).sum() + gammaln(n0) - gammaln(n0 + N))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", default="0/1")
    a = ap.parse_args()
    i, j = map(int, a.part.split("/"))
    P = MC.read_peers()
    P.update(MC.peers(ROOT / "benchmarks/results/defaults-2026-11-27-heldout5.txt"))
    P.update(MC.peers(ROOT / "benchmarks/results/defaults-2026-11-27-heldout6.txt"))
    wins = {m: 0 for m in MODELS}
    rows = []
    tables = MC.scored_tables(P, unseal_heldout3=True, unseal_heldout4=True, unseal_heldout5=True,
                              unseal_heldout6=True)
    for n, (t, group, true, peer) in enumerate(tables):
        if n % j != i:
            continue
        t0 = time.time()
        data = auto.auto_likelihood(t.X.copy())
        real = [c for c, f in data.likelihood.items() if f == "normal_gamma" and not isinstance(c, tuple)]
        if len(real) < 2:
            continue
        frame = data.X[real].dropna()
        if len(frame) > MOST_ROWS:
            frame = frame.sample(MOST_ROWS, random_state=0)
        frame = frame.reset_index(drop=True)
        X = frame.to_numpy(float)
        if len(X) < 10 or np.any(X.std(axis=0) == 0):
            continue
        pool = pooled_search(frame, {c: "normal_gamma" for c in real})
        terms = data_terms(X, pool, auto.SPREAD_GRID)
        crp = crp_terms(pool, auto.N0_GRID).min(axis=0)
        best = {m: float((terms[m] + crp[None, :]).min()) for m in MODELS}
        top = min(best, key=best.get)
        wins[top] += 1
        rel = "  ".join(f"{m} {best[m] - best[top]:+9.1f}" for m in MODELS)
        line = (f"{t.name} ({group}) N {len(X)} D {X.shape[1]} partitions {len(pool)} | best {top} | "
                f"-ln p(X, z) minus the best: {rel} ({time.time() - t0:.1f} s)")
        rows.append(line)
        print(line, flush=True)
    print(f"tables {len(rows)}; lowest evidence by model: " + ", ".join(f"{m} {wins[m]}" for m in MODELS), flush=True)


if __name__ == "__main__":
    main()
