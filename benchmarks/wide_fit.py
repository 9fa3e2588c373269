#!/usr/bin/env python
"""Wide tables (issue 28, part 2): one MAPDP() call against PCA + a BIC Gaussian mixture and
K-means on the same generated tables, side by side in one run.

MAPDP's "screened" column: how many columns its screen kept, and how many of those are the 50
informative ones. Tables: three groups of 80, 70 and 50 rows; 50 informative columns shifted by -1.5, 0 or +1.5 sd
per group; the other columns standard-normal noise (the issue's generator), D = 1 000, 5 000 and
20 000; seed 0. Methods: ``MAPDP(random_state=0).fit(X)``; PCA to 10 components of the
standardised columns, then ``GaussianMixture`` for K = 1..10 x four covariance types, lowest BIC;
``KMeans(3, n_init=10)`` on the standardised columns (told the true K). One run each, wall
seconds, BLAS limited to one thread as in ``defaults.py``.

    .venv/bin/python benchmarks/wide_fit.py [--sizes 1000,5000,20000]
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sklearn.cluster import KMeans  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.mixture import GaussianMixture  # noqa: E402

import mapdp_core  # noqa: E402
from mapdp_core.evaluation.metrics import clustering_scores  # noqa: E402


def table(D: int, seed: int = 0, sizes=(80, 70, 50), informative: int = 50, shift: float = 1.5):
    rng = np.random.default_rng(seed)
    z = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.normal(size=(sum(sizes), D))
    X[:, :informative] += rng.choice([-1.0, 0.0, 1.0], size=(len(sizes), informative))[z] * shift
    return pd.DataFrame(X, columns=[f"g{j}" for j in range(D)]), z


def pca_gmm_bic(Z: np.ndarray) -> np.ndarray:
    P = PCA(n_components=10, random_state=0).fit_transform(Z)
    best, labels = np.inf, None
    for k in range(1, 11):
        for cov in ("full", "tied", "diag", "spherical"):
            g = GaussianMixture(k, covariance_type=cov, n_init=3, random_state=0).fit(P)
            bic = g.bic(P)
            if bic < best:
                best, labels = bic, g.predict(P)
    return labels


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,5000,20000")
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    warnings.filterwarnings("ignore")
    mapdp_core.warm_up()
    rows = []
    for D in (int(s) for s in args.sizes.split(",")):
        X, z = table(D)
        Z = ((X - X.mean()) / X.std(ddof=0)).to_numpy()
        out = {"table": f"200 x {D}"}
        t = time.perf_counter()
        m = mapdp_core.MAPDP(random_state=0).fit(X)
        out.update({"MAPDP K": m.n_clusters_, "MAPDP NMI": clustering_scores(z, m.labels_)["nmi"],
                    "MAPDP s": time.perf_counter() - t,
                    "PCs kept": len(m.wide_projection_.names) if m.wide_projection_ is not None else 0,
                    "screened (informative)": "" if m.wide_projection_ is None else
                    f"{len(m.wide_projection_.informative)} ({sum(int(c[1:]) < 50 for c in m.wide_projection_.informative)})"})
        t = time.perf_counter()
        g = pca_gmm_bic(Z)
        out.update({"PCA+GMM-BIC K": len(np.unique(g)), "PCA+GMM-BIC NMI": clustering_scores(z, g)["nmi"],
                    "PCA+GMM-BIC s": time.perf_counter() - t})
        t = time.perf_counter()
        k = KMeans(3, n_init=10, random_state=0).fit_predict(Z)
        out.update({"KMeans(3) NMI": clustering_scores(z, k)["nmi"], "KMeans(3) s": time.perf_counter() - t})
        rows.append(out)
        print(pd.DataFrame([out]).round(3).to_string(index=False), flush=True)
    print()
    print(pd.DataFrame(rows).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
