"""How sure is each cluster? Cluster-wise stability under subsampling.

Hennig (2007), "Cluster-wise assessment of cluster stability", Computational Statistics & Data
Analysis 52: each cluster C of the fit is compared, on every resample S (a random share of the
rows, drawn without replacement), with the most similar cluster C' of a refit on S by the
Jaccard index |C ∩ C'| / |C ∪ C'| over the rows of S. The mean over resamples is the cluster's
stability: Hennig reads >= 0.75 as stable, 0.6-0.75 as pattern-like, <= 0.5 as dissolved.

The refits keep the fitted model's settings fixed (its likelihood, prior and N0, as chosen or
given): what is measured is how much a cluster depends on the particular rows, not on the
hyperparameter search. Each refit starts cold (one cluster holding every row, PLOS Appendix B),
so no refit is steered towards the answer it is compared with.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from mapdp_core.core.validation import check_int, check_real

__all__ = ["cluster_stability"]


def _refit_arguments(model):
    """The fitted model's data (encoded), likelihood and prior as explicit MAPDP arguments."""
    from mapdp_core.selection.priors import _prior_argument

    parsed = model._parsed
    likelihood = {(tuple(b.names) if len(b.names) > 1 else b.names[0]): b.family for b in parsed.blocks}
    prior = _prior_argument(parsed, likelihood, 1.0)
    return pd.DataFrame(parsed.X, columns=parsed.names), likelihood, prior


def cluster_stability(model, n_resamples: int = 20, fraction: float = 0.8, random_state=0, n_init: int = 2,
                      n_jobs=None) -> pd.DataFrame:
    """Per cluster of a fitted :class:`~mapdp_core.MAPDP`, its stability under subsampling.

    Parameters
    ----------
    model : fitted MAPDP
    n_resamples : int, default 20
    fraction : float in (0, 1), default 0.8
        Share of the rows in each resample.
    random_state : int, Generator or None
    n_init : int, default 2
        Restarts of each refit.
    n_jobs : int, optional
        Threads for the refits' restarts.

    Returns
    -------
    DataFrame
        One row per cluster: ``cluster``, ``n`` (its size), ``stability`` (mean Jaccard index),
        ``lowest`` (the smallest over resamples), ``dissolved`` (share of resamples with a
        Jaccard index <= 0.5) and ``verdict`` (stable / uncertain / fragile, Hennig's
        thresholds 0.75 and 0.6).
    """
    from sklearn.utils.validation import check_is_fitted

    from mapdp_core.models.mapdp import MAPDP

    check_is_fitted(model, "labels_")
    n_resamples = check_int(n_resamples, "n_resamples", 1)
    fraction = check_real(fraction, "fraction", positive=True)
    if not fraction < 1:
        raise ValueError(f"fraction must be below 1 (a share of the rows), got {fraction!r}.")
    X, likelihood, prior = _refit_arguments(model)
    labels = np.asarray(model.labels_)
    N, K = len(labels), int(model.n_clusters_)
    m = max(2, int(round(fraction * N)))
    rng = np.random.default_rng(random_state)
    scores = np.full((n_resamples, K), np.nan)
    for r in range(n_resamples):
        rows = np.sort(rng.choice(N, m, replace=False))
        refit = MAPDP(**model.partition_arguments(), likelihood=likelihood, prior=prior, n_init=n_init,
                      random_state=int(rng.integers(0, 2**31 - 1)), n_jobs=n_jobs,
                      tol=model.tol, max_iter=model.max_iter,
                      merge=getattr(model, "merge_cutoff_", None)).fit(X.iloc[rows].reset_index(drop=True))
        mine, theirs = labels[rows], refit.labels_
        table = np.zeros((K, int(theirs.max()) + 1))
        np.add.at(table, (mine, theirs), 1.0)
        size_mine, size_theirs = table.sum(axis=1), table.sum(axis=0)
        union = size_mine[:, None] + size_theirs[None, :] - table
        with np.errstate(invalid="ignore", divide="ignore"):
            jaccard = np.where(union > 0, table / union, 0.0)
        present = size_mine > 0  # a cluster with no row in the resample says nothing there
        scores[r, present] = jaccard[present].max(axis=1)
    seen = np.isfinite(scores)
    counts = seen.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(counts > 0, np.where(seen, scores, 0.0).sum(axis=0) / counts, np.nan)
        dissolved = np.where(counts > 0, (seen & (scores <= 0.5)).sum(axis=0) / counts, np.nan)
    lowest = np.where(counts > 0, np.where(seen, scores, np.inf).min(axis=0), np.nan)
    verdict = np.where(mean >= 0.75, "stable", np.where(mean >= 0.6, "uncertain",
                                                        np.where(np.isnan(mean), "not resampled", "fragile")))
    return pd.DataFrame({
        "cluster": np.arange(K), "n": np.bincount(labels, minlength=K), "stability": mean,
        "lowest": lowest, "dissolved": dissolved, "verdict": verdict,
    })
