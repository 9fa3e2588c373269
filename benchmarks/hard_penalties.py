#!/usr/bin/env python
"""Issue 27: the hard models' default penalties, old rule against new, on data they were not tuned on.

Run from the repository root::

    python benchmarks/hard_penalties.py            # about 20 s on 2 cores (numba cache warm)

The rules (``mapdp_core.models.hard_common.default_lambdas``):

* old: multiples of the data's Bregman information B (the trace of the covariance):
  HardHDP (B, B/2), HardHDPHMM (B, 2B);
* new: from the noise variance σ² of a structure-blind MAP-DP fit, through the small-variance
  scaling: HardHDP (3u, u), HardHDPHMM (u, (2/π) σ² N/K̂), u = σ² · the 1 - 1/N quantile of χ²_D.

Data: synthetic, generated here with seeds the rule was not tuned on (its design used seeds
0-51 of the same generators; these use 1000 and up). Every case draws its centres uniformly
with every pair at least ``sep`` noise sds apart (unit-variance isotropic noise), then
multiplies each column by a random factor 10^U(-2, 3) (the columns' units differ, as in a
table) and z-scores the columns, as the app's Sequences page does (``sequence_matrix``):

* sequences (hard HDP-HMM): K states (2-6), D = 2-5, T = 600 steps, each step staying in its
  state with probability ``stay``, else moving uniformly to another;
* groups (hard HDP): G groups of ``n`` rows drawn from K clusters shared by all groups, each
  group using 1 to ``m`` of them, D = 2-5.

Three seeds per setting. The comparison models are the ones the page shows beside the hard
models: MAP-iHMM (``MAPIHMM(N0=3, M0=2, likelihood="normal_wishart", prior=None)``, its
``init="best"`` restarts) and the time-blind or group-blind MAP-DP (``MAPDP(N0=3,
likelihood="normal_wishart", prior=None, random_state=0)``), and, for the groups, DP-means
with the HDP's one-group threshold ``λ1 + λ2`` of each rule. The true labels are used only
to score (NMI, ``clustering_scores``). Printed: one line per case with K and NMI of each
model, then the mean NMI per model and how often the new rule's hard model is at least as
good as the best structure-blind model (within 0.02 NMI) and better than the old rule.

The page's two demos, through the page's own functions (``explorer.sequences``), come first.
"""
from __future__ import annotations

import itertools
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mapdp_core.data.synthetic.ejs import hmm_sequence  # noqa: E402
from mapdp_core.evaluation.metrics import clustering_scores  # noqa: E402
from mapdp_core.models.dpmeans import DPMeans  # noqa: E402
from mapdp_core.models.hard_common import bregman_information, default_lambdas  # noqa: E402
from mapdp_core.models.hdp import HardHDP  # noqa: E402
from mapdp_core.models.hdp_hmm import HardHDPHMM  # noqa: E402
from mapdp_core.models.ihmm import MAPIHMM  # noqa: E402
from mapdp_core.models.mapdp import MAPDP  # noqa: E402

SEED0 = 1000
SEEDS = 3
#: (K, D, sep, stay) of the sequences
HMM_SETTINGS = [(2, 2, 4.0, 0.95), (3, 2, 3.0, 0.97), (3, 4, 5.0, 0.90), (4, 3, 4.0, 0.95),
                (4, 5, 3.5, 0.97), (5, 2, 5.0, 0.95), (6, 3, 4.0, 0.97), (6, 5, 6.0, 0.90)]
#: (K, D, sep, G groups, n rows per group, m most clusters per group) of the grouped data
HDP_SETTINGS = [(2, 2, 4.0, 10, 60, 1), (3, 2, 3.0, 24, 60, 2), (3, 4, 5.0, 15, 40, 2), (4, 3, 4.0, 30, 50, 2),
                (4, 5, 3.5, 20, 60, 3), (5, 2, 5.0, 40, 30, 2), (6, 3, 4.0, 24, 50, 3), (6, 5, 6.0, 40, 40, 2)]


def _centres(rng, K, D, sep):
    """K centres in D dimensions, every pair at least ``sep`` apart (rejection sampling)."""
    while True:
        M = rng.uniform(-1.0, 1.0, (K, D)) * sep * K ** (1.0 / D)
        d = np.sqrt(((M[:, None] - M[None]) ** 2).sum(-1)) + np.eye(K) * 1e9
        if d.min() >= sep:
            return M


def _tabled(rng, X):
    """Columns in different units, then z-scored as the page does."""
    X = X * 10.0 ** rng.uniform(-2.0, 3.0, X.shape[1])
    return (X - X.mean(axis=0)) / X.std(axis=0)


def hmm_case(K, D, sep, stay, seed, T=600):
    rng = np.random.default_rng(seed)
    X, z, _ = hmm_sequence(T=T, K=K, seed=rng, d=D, means=_centres(rng, K, D, sep), sigma=1.0, self_transition=stay)
    return _tabled(rng, X), np.asarray(z)


def hdp_case(K, D, sep, G, n, m, seed):
    rng = np.random.default_rng(seed)
    M = _centres(rng, K, D, sep)
    X, z, g = [], [], []
    for i in range(G):
        used = rng.choice(K, size=int(rng.integers(1, min(m, K) + 1)), replace=False)
        zi = rng.choice(used, size=n)
        X.append(M[zi] + rng.normal(size=(n, D)))
        z.append(zi)
        g.append(np.full(n, i))
    return _tabled(rng, np.vstack(X)), np.concatenate(z), np.concatenate(g)


def old_lambdas(X, model):
    """The former default: (B, B/2) for the HDP, (B, 2B) for the HDP-HMM."""
    B = bregman_information(X, np.ones(len(X)), "squared_euclidean")
    return B, (0.5 if model == "hdp" else 2.0) * B


def score(truth, labels):
    return len(np.unique(labels)), float(clustering_scores(truth, labels)["nmi"])


def mapdp(X):
    return MAPDP(N0=3.0, likelihood="normal_wishart", prior=None, random_state=0).fit(X).labels_


def fmt(r):
    return f"{r[0]:>2d} {r[1]:5.3f}"


def summarise(rows, names, hard_new, hard_old, blind):
    nmi = {n: np.array([r[n][1] for r in rows]) for n in names}
    print("mean NMI   " + "  ".join(f"{n}: {nmi[n].mean():.3f}" for n in names))
    print("min NMI    " + "  ".join(f"{n}: {nmi[n].min():.3f}" for n in names))
    best_blind = np.max([nmi[b] for b in blind], axis=0)
    n = len(rows)
    print(f"new >= best structure-blind - 0.02: {int((nmi[hard_new] >= best_blind - 0.02).sum())} of {n}; "
          f"old: {int((nmi[hard_old] >= best_blind - 0.02).sum())} of {n}")
    print(f"new better than old by > 0.02: {int((nmi[hard_new] > nmi[hard_old] + 0.02).sum())}; "
          f"worse by > 0.02: {int((nmi[hard_new] < nmi[hard_old] - 0.02).sum())}; the rest within 0.02")
    k_right = {m: int(sum(r[m][0] == r["K"] for r in rows)) for m in names}
    print("K right    " + "  ".join(f"{m}: {k_right[m]} of {n}" for m in names))


def demos():
    from explorer import sequences as S

    t = S.hmm_demo()
    seq = S.prepare_sequence(t, t[["x1", "x2"]], "time", None, t["state"].to_numpy())
    print("Demo: the page's sticky 3-state sequence (explorer.sequences.sequence_runs, defaults)")
    runs = S.sequence_runs(seq.X, seq.lengths, seq.truth, N0=3.0, algorithms=S.SEQUENCE_ALGORITHMS)
    print(S.sequence_summary(runs).drop(columns="seconds").to_string(index=False))
    old = HardHDPHMM(*old_lambdas(seq.X, "hmm"), max_iter=50).fit(seq.X)
    print(f"  old rule: Hard HDP-HMM K NMI = {fmt(score(seq.truth, old.labels_))}")
    g = S.grouped_demo()
    fit = S.group_fit(g, g[["x1", "x2"]], "group", truth=g["cluster"].to_numpy())
    print("Demo: the page's 24 groups sharing 3 clusters (explorer.sequences.group_fit, defaults)")
    print(fit.summary.drop(columns="seconds").to_string(index=False))
    X = S.sequence_matrix(g[["x1", "x2"]])[0]
    lam1, lam2 = old_lambdas(X, "hdp")
    truth = g["cluster"].to_numpy()
    print(f"  old rule: Hard HDP K NMI = {fmt(score(truth, HardHDP(lam1, lam2).fit(X, g['group'].to_numpy()).labels_))}"
          f"; DP-means (group-blind) K NMI = {fmt(score(truth, DPMeans(lam=lam1 + lam2).fit(X).labels_))}")
    print()


def sequences():
    names = ["hard old", "hard new", "MAP-iHMM", "MAP-DP"]
    print("Sequences (T = 600): K found and NMI")
    print(f"{'K D sep stay seed':>22s}  " + "  ".join(f"{n:>9s}" for n in names))
    rows = []
    for (K, D, sep, stay), s in itertools.product(HMM_SETTINGS, range(SEEDS)):
        seed = SEED0 + 10 * HMM_SETTINGS.index((K, D, sep, stay)) + s
        X, z = hmm_case(K, D, sep, stay, seed)
        r = {"K": K}
        r["hard old"] = score(z, HardHDPHMM(*old_lambdas(X, "hmm"), max_iter=50).fit(X).labels_)
        r["hard new"] = score(z, HardHDPHMM(max_iter=50).fit(X).labels_)
        r["MAP-iHMM"] = score(z, MAPIHMM(N0=3.0, M0=2.0, likelihood="normal_wishart", prior=None,
                                         max_iter=50).fit(X).labels_)
        r["MAP-DP"] = score(z, mapdp(X))
        rows.append(r)
        print(f"{K:d} {D:d} {sep:3.1f} {stay:4.2f} {seed:5d}      " + "  ".join(f"{fmt(r[n]):>9s}" for n in names),
              flush=True)
    summarise(rows, names, "hard new", "hard old", ["MAP-DP"])
    print()


def groups():
    names = ["hard old", "hard new", "DPm old", "DPm new", "MAP-DP"]
    print("Groups: K found and NMI (DPm: DP-means, group-blind, as the page runs it: old, the HDP's one-group "
          "threshold λ1 + λ2; new, the reach u = λ2)")
    print(f"{'K D sep G n m seed':>24s}  " + "  ".join(f"{n:>9s}" for n in names))
    rows = []
    for (K, D, sep, G, n, m), s in itertools.product(HDP_SETTINGS, range(SEEDS)):
        seed = SEED0 + 10 * HDP_SETTINGS.index((K, D, sep, G, n, m)) + s
        X, z, g = hdp_case(K, D, sep, G, n, m, seed)
        r = {"K": K}
        old, new = old_lambdas(X, "hdp"), default_lambdas(X, model="hdp")
        r["hard old"] = score(z, HardHDP(*old).fit(X, g).labels_)
        r["hard new"] = score(z, HardHDP().fit(X, g).labels_)
        r["DPm old"] = score(z, DPMeans(lam=sum(old)).fit(X).labels_)
        r["DPm new"] = score(z, DPMeans(lam=new[1]).fit(X).labels_)
        r["MAP-DP"] = score(z, mapdp(X))
        rows.append(r)
        print(f"{K:d} {D:d} {sep:3.1f} {G:2d} {n:2d} {m:d} {seed:5d}    "
              + "  ".join(f"{fmt(r[nm]):>9s}" for nm in names), flush=True)
    summarise(rows, names, "hard new", "hard old", ["DPm old", "DPm new", "MAP-DP"])
    print()


if __name__ == "__main__":
    warnings.filterwarnings("ignore")
    HardHDP.warm_up()
    t0 = time.perf_counter()
    demos()
    sequences()
    groups()
    print(f"total {time.perf_counter() - t0:.0f} s")
