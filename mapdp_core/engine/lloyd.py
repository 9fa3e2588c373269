"""Lloyd's algorithm over the compiled baseline kernels, and k-means++ seeding.

PLOS ONE Algorithm 1 (K-means), with Arthur & Vassilvitskii's (2007) greedy k-means++
seeding. The estimator :class:`~mapdp_core.KMeans` and the functional ``kmeans`` validate
and call these; the automatic search (:mod:`mapdp_core.selection.auto`) calls
:func:`kmeans_labels` for its over-segmented start without the estimator.
"""
from __future__ import annotations

import math
import time
import warnings
from collections.abc import Iterator

import numpy as np

from mapdp_core.core.state import SweepState
from mapdp_core.core.validation import check_int, restart_plan
from mapdp_core.kernels import baseline as _bk

__all__ = ["check_k", "final_labels", "initial_centres", "kmeans_labels", "lloyd", "plusplus", "standardized_view",
           "tolerance"]


def plusplus(X: np.ndarray, K: int, rng: np.random.Generator) -> np.ndarray:
    """Greedy k-means++ seeding (no validation); returns (K, D) centres copied from rows of X."""
    N = X.shape[0]
    n_trials = 2 + int(math.log(K))
    centres = np.empty((K, X.shape[1]))
    first = int(rng.integers(N))
    centres[0] = X[first]
    closest = ((X - X[first]) ** 2).sum(axis=1)
    for c in range(1, K):
        potential = closest.sum()
        if potential <= 0.0:  # every row sits on a centre already (duplicates): any row will do
            centres[c] = X[int(rng.integers(N))]
            continue
        cum = np.cumsum(closest)
        picks = np.minimum(np.searchsorted(cum, rng.random(n_trials) * potential, side="right"), N - 1)
        d = ((X[None, :, :] - X[picks][:, None, :]) ** 2).sum(axis=2)
        d = np.minimum(d, closest[None, :])
        best = int(np.argmin(d.sum(axis=1)))
        centres[c] = X[picks[best]]
        closest = d[best]
    return centres


def check_k(n_clusters, N: int) -> int:
    K = check_int(n_clusters, "n_clusters", 1)
    if K > N:
        raise ValueError(f"n_samples={N} should be >= n_clusters={K}: ask for at most {N} clusters "
                         "or pass more rows.")
    return K


def initial_centres(X: np.ndarray, n_clusters, init, rng) -> np.ndarray:
    N, D = X.shape
    if isinstance(init, str):
        K = check_k(n_clusters, N)
        if init == "k-means++":
            return plusplus(X, K, rng)
        if init == "random":
            return X[rng.choice(N, size=K, replace=False)].copy()
        raise ValueError(f"init must be 'k-means++', 'random' or an array of shape (n_clusters, n_features); "
                         f"got {init!r}.")
    try:
        centres = np.array(init, dtype=np.float64, order="C")
    except (TypeError, ValueError) as exc:
        raise TypeError("init must be 'k-means++', 'random' or a numeric array of shape "
                        "(n_clusters, n_features).") from exc
    if centres.ndim != 2 or centres.shape[1] != D:
        raise ValueError(f"init has shape {centres.shape}; it must be (n_clusters, {D}): one centre per "
                         "row with as many columns as X.")
    if n_clusters is not None and centres.shape[0] != n_clusters:
        raise ValueError(f"init has {centres.shape[0]} centres but n_clusters={n_clusters!r}; make them agree "
                         "(or pass n_clusters=None).")
    check_k(centres.shape[0], N)
    if not np.isfinite(centres).all():
        raise ValueError("init contains NaN or infinite values; pass finite centres.")
    return centres


def tolerance(X: np.ndarray, tol: float) -> float:
    """tol relative to the data's scale, as in scikit-learn: tol * mean per-column variance."""
    return float(np.mean(np.var(X, axis=0)) * tol) if tol > 0 else 0.0


# ----------------------------------------------------------------------------- Lloyd

def lloyd(X: np.ndarray, centres0: np.ndarray, max_iter: int, tol_abs: float) -> Iterator[SweepState]:
    t0 = time.perf_counter()
    N = X.shape[0]
    K = centres0.shape[0]
    centres = centres0.copy()
    new = np.empty_like(centres)
    labels = np.full(N, -1, dtype=np.int64)
    old = labels.copy()
    dist = np.empty(N)
    counts = np.zeros(K, dtype=np.int64)
    for iteration in range(1, max_iter + 1):
        old[:] = labels
        _bk.assign_nearest(X, centres, labels, dist)
        counts[:] = np.bincount(labels, minlength=K)
        if (counts == 0).any():
            _bk.fill_empty(labels, dist, counts)
        changed = int(np.count_nonzero(labels != old))
        _bk.cluster_means(X, labels, new, counts)
        shift = float(((new - centres) ** 2).sum())
        centres, new = new, centres
        converged = changed == 0 or shift <= tol_abs
        yield SweepState(
            iteration=iteration, labels=labels, n_clusters=K,
            objective=float(_bk.squared_error(X, labels, centres)), neg_log_joint=math.nan,
            n_changed=changed, cluster_sizes=counts,
            summaries={"mean": centres.copy(), "covariance": {}, "proportions": {}},
            elapsed=time.perf_counter() - t0, converged=converged, algorithm="K-means",
        )
        if converged:
            return


def final_labels(X: np.ndarray, state: SweepState) -> np.ndarray:
    """The labels of a finished run: those of its last assignment step, or, when ``tol``
    stopped it while rows were still moving, every row's nearest final centre (as
    scikit-learn's ``labels_``)."""
    labels = np.array(state.labels)
    if not (state.converged and state.n_changed == 0):
        _bk.assign_nearest(X, state.summaries["mean"], labels, np.empty(X.shape[0]))
    return labels


def kmeans_labels(X: np.ndarray, n_clusters: int, random_state, max_iter: int = 300, tol: float = 1e-4) -> np.ndarray:
    """``KMeans(n_clusters, n_init=1, random_state=random_state).fit(X).labels_`` for a
    finite float64 matrix X, without the estimator's checks: the same seed plan, seeding and
    iterations (tested against the estimator)."""
    seed = restart_plan(random_state, 1, X.shape[0], shuffle=False)[0][1]
    centres = initial_centres(X, n_clusters, "k-means++", np.random.default_rng(seed))
    state = None
    for state in lloyd(X, centres, max_iter, tolerance(X, tol)):
        pass
    return final_labels(X, state)


def standardized_view(parsed, rows: np.ndarray | None = None) -> np.ndarray:
    """The parsed rows (``rows``: a subset, default all) as numbers K-means can read: every
    column z-scored on those rows, a categorical column one-hot, a gap at its column's mean
    (0 after scaling). C-contiguous float64."""
    family = {c: b.family for b in parsed.blocks for c in b.columns}
    X = parsed.X if rows is None else parsed.X[rows]
    parts = []
    for j in range(X.shape[1]):
        x = X[:, j]
        if family.get(j) == "categorical":
            levels = np.unique(x[~np.isnan(x)])
            cols = (x[:, None] == levels[None, :]).astype(float)
            cols[np.isnan(x)] = np.nan
        else:
            cols = x[:, None]
        with np.errstate(invalid="ignore", over="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a column with no value among these rows: all 0
            sd = np.nanstd(cols, axis=0) if len(cols) else np.ones(cols.shape[1])
            z = (cols - np.nanmean(cols, axis=0)) / np.where(sd > 0, sd, 1.0)
        parts.append(np.nan_to_num(z, nan=0.0, posinf=0.0, neginf=0.0))
    Z = np.hstack(parts) if parts else np.zeros((len(X), 0))
    return np.ascontiguousarray(Z, dtype=np.float64)
