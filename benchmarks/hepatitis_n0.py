"""Choosing N0 (and the prior's spread) on the hepatitis data, three ways (PLOS Appendix G).

Run: ``.venv/bin/python benchmarks/hepatitis_n0.py``. Prints the exact joint likelihood over
a grid of N0, the 5-fold held-out log-likelihood over N0 and the Gaussian prior spread, and
the MAP N0 for the K chosen, with the NMI of each choice against the outcome (die / live).
"""
import numpy as np
import pandas as pd

from mapdp_core import MAPDP, clustering_scores, cross_validate, map_n0, n0_grid, scaled_prior
from mapdp_core.data.datasets import load_dataset

pd.set_option("display.width", 160)
X, y, spec = load_dataset("hepatitis")
truth = pd.factorize(y)[0]
print(f"hepatitis: {X.shape[0]} rows x {X.shape[1]} features, {int(X.isna().sum().sum())} missing cells\n")

grid = [0.1, 0.3, 1.0, 3.0, 10.0]
g = n0_grid(X, grid, spec, n_init=3, random_state=0)
g.table["nmi"] = [clustering_scores(truth, MAPDP(N0=n0, likelihood=spec, n_init=3, random_state=0).fit(X).labels_)["nmi"]
                  for n0 in g.table["N0"]]
print("1. exact -ln p(X, z | N0) over N0 (lower is better)")
print(g.table.round(3).to_string(index=False))
print(f"-> best N0 = {g.best_N0:g}\n")

cv = cross_validate(X, [0.3, 1.0, 3.0], [0.5, 1.0, 2.0, 4.0], spec, n_folds=5, random_state=0)
print("2. 5-fold held-out log-likelihood per row over N0 and the prior spread (higher is better)")
print(cv.summary.round(4).to_string(index=False))
model = MAPDP(N0=cv.best_N0, likelihood=spec, prior=scaled_prior(X, spec, cv.best_scale), n_init=3,
              random_state=0).fit(X)
sc = clustering_scores(truth, model.labels_)
print(f"-> best N0 = {cv.best_N0:g}, spread x {cv.best_scale:g}: K = {model.n_clusters_}, sizes "
      f"{sorted(np.bincount(model.labels_).tolist(), reverse=True)}, NMI {sc['nmi']:.3f}\n")

m = map_n0(len(X), model.n_clusters_, a=1.0, b=1.0)
print(f"3. MAP N0 under a Gamma(1, 1) prior given K = {model.n_clusters_}: N0 = {m.N0:.3f} ({m.n_iter} Newton steps)")
