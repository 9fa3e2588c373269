#!/usr/bin/env python
"""Reproduce the comparison tables of the papers, printed beside the published figures.

PLOS ONE (2016) Tables 1-2: on our re-creation of the six Section 5 scenarios (N = 4000,
K = 3; mapdp_core.data.synthetic): NMI and iterations of K-means (k-means++, best of 10), MAP-DP
(Normal-Wishart, N0 = 3, empirical-Bayes prior, best of 10 visiting orders), E-M started at
the true means (as the paper did) and collapsed Gibbs (600 sweeps, the most probable state;
its iteration), and the K that K-means + BIC chooses over K = 1..20.

EJS (2016) Tables 2-3: on the six UCI data sets: DP-means with the lambda that gives the
true K (EJS Appendix D), collapsed Gibbs, and MAP-DP with the families the loader suggests
and the default empirical-Bayes priors, never tuned on the labels.

Run: ``python benchmarks/reproduce_tables.py [--quick]`` (--quick: fewer restarts and sweeps).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sklearn.metrics import normalized_mutual_info_score as nmi  # noqa: E402

import mapdp_core  # noqa: E402
from mapdp_core.models.dpmeans import DPMeans, dpmeans_lambda_for_k  # noqa: E402
from mapdp_core.models.gibbs import CollapsedGibbs  # noqa: E402
from mapdp_core.models.kmeans import KMeans, kmeans_bic  # noqa: E402
from mapdp_core.data.loading import prepare, suggest_roles_and_families  # noqa: E402
from mapdp_core.models.mixtures import em_gaussian_mixture  # noqa: E402
from mapdp_core.data.synthetic import plos_scenario  # noqa: E402

PLOS_NMI = {  # Table 1: K-means, MAP-DP, E-M, Gibbs
    "5.1": (0.57, 0.97, 0.89, 0.92), "5.2": (0.48, 0.98, 0.98, 0.86), "5.3": (0.67, 0.93, 0.65, 0.91),
    "5.4": (0.56, 0.98, 0.93, 0.90), "5.5": (1.00, 1.00, 0.99, 1.00), "5.6": (0.56, 0.88, 0.86, 0.84)}
PLOS_ITERS = {  # Table 2
    "5.1": (6, 11, 10, 299), "5.2": (13, 5, 21, 403), "5.3": (5, 5, 32, 292),
    "5.4": (15, 11, 6, 330), "5.5": (6, 7, 21, 459), "5.6": (9, 11, 7, 302)}
PLOS_BIC_K = {"5.1": 2, "5.2": 2, "5.3": 4, "5.4": 9, "5.5": 4, "5.6": 3}
EJS_NMI = {  # Table 2: DP-means, Gibbs, MAP-DP
    "wine": (0.42, 0.71, 0.86), "iris": (0.76, 0.75, 0.76), "breast_cancer_wisconsin_original": (0.75, 0.72, 0.71),
    "soybean_large_train_complete": (0.36, 0.45, 0.40), "pima_indians_diabetes": (0.03, 0.14, 0.07),
    "vehicle_statlog": (0.21, 0.10, 0.15)}
EJS_ITERS = {  # Table 3
    "wine": (19, 2365, 11), "iris": (8, 1543, 5), "breast_cancer_wisconsin_original": (8, 939, 8),
    "soybean_large_train_complete": (14, 1059, 9), "pima_indians_diabetes": (20, 1189, 17),
    "vehicle_statlog": (12, 939, 9)}


def plos_tables(n_init: int, gibbs_sweeps: int) -> pd.DataFrame:
    rows = []
    for section in sorted(PLOS_NMI):
        X, y = plos_scenario(section, n=4000, seed=0)
        t = time.perf_counter()
        km = KMeans(3, n_init=n_init, random_state=0).fit(X)
        mp = mapdp_core.MAPDP(N0=3.0, n_init=n_init, random_state=0).fit(X)
        true_means = np.array([X[y == k].mean(0) for k in range(3)])
        em = list(em_gaussian_mixture(X, 3, means_init=true_means, random_state=0, tol=1e-6))[-1]
        gb = CollapsedGibbs(N0=3.0, n_sweeps=gibbs_sweeps, random_state=0).fit(X)
        bic = kmeans_bic(X, range(1, 21), n_init=n_init, random_state=0)
        ours_nmi = (nmi(y, km.labels_), nmi(y, mp.labels_), nmi(y, em.labels), nmi(y, gb.labels_))
        ours_it = (km.n_iter_, mp.n_iter_, em.iteration, gb.best_iteration_)
        rows.append({"section": section,
                     **{f"NMI {m}": f"{o:.2f} ({p:.2f})" for m, o, p in zip(("K-means", "MAP-DP", "E-M", "Gibbs"), ours_nmi, PLOS_NMI[section])},
                     **{f"iters {m}": f"{o} ({p})" for m, o, p in zip(("K-means", "MAP-DP", "E-M", "Gibbs"), ours_it, PLOS_ITERS[section])},
                     "MAP-DP K": mp.n_clusters_, "BIC K": f"{bic.n_clusters} ({PLOS_BIC_K[section]})",
                     "seconds": round(time.perf_counter() - t, 1)})
    return pd.DataFrame(rows)


def _uci(name: str):
    for folder in (ROOT / "datasets", ROOT.parent / "shared" / "datasets"):
        path = folder / f"{name}.csv"
        if path.exists():
            return pd.read_csv(path)
    raise FileNotFoundError(f"{name}.csv is neither in datasets/ nor in ../shared/datasets/")


def ejs_tables(n_init: int, gibbs_sweeps: int) -> pd.DataFrame:
    rows = []
    for name in EJS_NMI:
        df = _uci(name)
        y = pd.factorize(df["label"])[0]
        features = df.drop(columns=["label"])
        suggestion = suggest_roles_and_families(features)
        prepared = prepare(features, suggestion.set_index("column")["role"].to_dict(),
                           suggestion.set_index("column")["family"].to_dict())
        Xf, likelihood = prepared[0], prepared[1]
        K_true = len(np.unique(y))
        t = time.perf_counter()
        Xs = (Xf - Xf.mean()) / Xf.std().replace(0, 1)  # DP-means needs comparable scales
        Xs = Xs.fillna(0.0).to_numpy(float)
        search = dpmeans_lambda_for_k(Xs, K_true)
        dp = DPMeans(lam=search.lam).fit(Xs)
        mp = mapdp_core.MAPDP(N0=3.0, likelihood=likelihood, n_init=n_init, random_state=0).fit(Xf)
        gb = CollapsedGibbs(N0=3.0, likelihood=likelihood, n_sweeps=gibbs_sweeps, random_state=0).fit(Xf)
        ours = (nmi(y, dp.labels_), nmi(y, gb.labels_), nmi(y, mp.labels_))
        its = (dp.n_iter_, gb.best_iteration_, mp.n_iter_)
        fams = pd.Series(likelihood).value_counts().to_dict()
        rows.append({"data": name.split("_")[0], "N x D": f"{len(df)} x {Xf.shape[1]}",
                     **{f"NMI {m}": f"{o:.2f} ({p:.2f})" for m, o, p in zip(("DP-means", "Gibbs", "MAP-DP"), ours, EJS_NMI[name])},
                     **{f"iters {m}": f"{o} ({p})" for m, o, p in zip(("DP-means", "Gibbs", "MAP-DP"), its, EJS_ITERS[name])},
                     "MAP-DP K": mp.n_clusters_, "true K": K_true, "families": fams,
                     "seconds": round(time.perf_counter() - t, 1)})
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 restarts and 200 Gibbs sweeps instead of 10 and 600")
    args = ap.parse_args(argv)
    n_init, sweeps = (3, 200) if args.quick else (10, 600)
    mapdp_core.warm_up()
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 30)
    pd.set_option("display.max_colwidth", 60)
    print(f"PLOS Tables 1-2 (ours, published in brackets); restarts={n_init}, Gibbs sweeps={sweeps}")
    print(plos_tables(n_init, sweeps).to_string(index=False))
    print()
    print(f"EJS Tables 2-3 (ours, published in brackets); restarts={n_init}, Gibbs sweeps={sweeps}")
    print(ejs_tables(n_init, sweeps).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
