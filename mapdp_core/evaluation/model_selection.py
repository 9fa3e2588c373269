"""Choosing N0 and the prior's scale by refitting: PLOS Appendix G, approaches 2 and 4.

* approach 2, a grid of N0 values compared by the exact joint -ln p(X, z | N0, theta0),
  which includes the CRP normaliser C(N0, N) = ln G(N0) - ln G(N0 + N) so values are
  comparable across N0: :func:`n0_grid`;
* approach 4, K-fold cross-validation of the held-out mixture predictive log density of
  Appendix E over a grid of N0 and of a multiplier on the within-cluster spread of the
  Gaussian families (:func:`~mapdp_core.selection.priors.scaled_prior`): :func:`cross_validate`.

Both fit :class:`~mapdp_core.MAPDP` many times, so they sit above the models; the choices that
need no refit are :mod:`mapdp_core.selection.priors`. Every table returned is tidy (one row
per setting, or per setting and fold), ready to plot.
"""
from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pandas as pd

from mapdp_core.core.estimator import run_many
from mapdp_core.core.spec import ParsedData, parse, to_matrix
from mapdp_core.core.validation import check_n_jobs, check_positive_values
from mapdp_core.models.mapdp import MAPDP
from mapdp_core.selection.priors import _check_scale, _prior_argument

__all__ = ["CrossValidation", "N0Grid", "cross_validate", "n0_grid"]


# ----------------------------------------------------------------------------- grid by the joint

class N0Grid(NamedTuple):
    """Result of :func:`n0_grid`."""
    table: pd.DataFrame
    best_N0: float


_check_values = check_positive_values


def n0_grid(X, n0_values, likelihood="normal_wishart", prior=None, n_init: int = 3, random_state=0,
            on_step: Callable[[int, int], None] | None = None, n_jobs=None) -> N0Grid:
    """Fit MAP-DP at each N0 and compare the fits by the exact joint likelihood (PLOS
    Appendix G, approach 2).

    The criterion is the exact collapsed -ln p(X, z | N0, theta0) = -ln CRP(z; N0)
    - sum_k ln p(X_k | theta0) at the converged z (``MAPDP.neg_log_joint_``). It contains
    the CRP normaliser C(N0, N) = ln G(N0) - ln G(N0 + N) and the term K ln N0, so unlike
    the objective E, whose N0-dependent constant is dropped, values at different N0 are
    comparable; and it does not depend on the visiting order, so it also selects among
    restarts.

    Parameters
    ----------
    X : array-like or DataFrame
    n0_values : sequence of float > 0
        The N0 grid (kept in the order given).
    likelihood, prior
        As for :class:`~mapdp_core.MAPDP`.
    n_init : int, default 3
        Restarts per N0 (the best by the joint is kept).
    random_state : int or None, default 0
        The same seed at every N0 (common visiting orders, so differences come from N0).
    on_step : callable(done, total), optional
        Called after each fit, for a progress bar.
    n_jobs : int, optional
        The grid's fits, and each fit's restarts, run in parallel threads (None: every core;
        1: one after the other); under ``joblib.parallel_config(backend="dask")`` the fits run
        on the user's Dask cluster (:func:`mapdp_core.core.estimator.run_many`), with the same
        results, since every fit's seed is fixed before any runs.

    Returns
    -------
    N0Grid
        ``table``: one row per N0 with columns N0, K, neg_log_joint, E (the final
        objective) and n_iter; ``best_N0``: the N0 of the smallest neg_log_joint.
    """
    values = _check_values(n0_values, "n0_values")
    check_n_jobs(n_jobs)

    def fit_at(n0):
        m = MAPDP(N0=n0, likelihood=likelihood, prior=prior, n_init=n_init, random_state=random_state,
                  n_jobs=n_jobs).fit(X)
        return {"N0": n0, "K": int(m.n_clusters_), "neg_log_joint": float(m.neg_log_joint_),
                "E": float(m.objective_history_[-1]), "n_iter": int(m.n_iter_)}

    rows = run_many(fit_at, values, n_jobs, on_done=on_step)
    table = pd.DataFrame(rows, columns=["N0", "K", "neg_log_joint", "E", "n_iter"])
    best = float(table["N0"].iloc[int(np.argmin(table["neg_log_joint"].to_numpy()))])
    return N0Grid(table, best)


# ----------------------------------------------------------------------------- cross-validation

class CrossValidation(NamedTuple):
    """Result of :func:`cross_validate`."""
    folds: pd.DataFrame
    summary: pd.DataFrame
    best_N0: float
    best_scale: float


def _with_full_support(train: ParsedData, full: ParsedData) -> None:
    """Give the training fold's discrete priors the support of the whole data set, in place.

    A category code or a number of successes absent from a training fold would otherwise
    make its held-out rows unscorable. Categorical: alpha0 as in the family's default,
    L (c_l + 0.5)/(n + 0.5 L), with the training counts c_l and the full data's L.
    Binomial: the full data's number of trials n, with the training success rate.
    """
    for tb, fb in zip(train.blocks, full.blocks):
        if tb.family == "categorical":
            alphas = []
            for j, (a_tr, a_full) in enumerate(zip(tb.prior["alpha0"], fb.prior["alpha0"])):
                if a_tr.size >= a_full.size:
                    alphas.append(a_tr)
                    continue
                col = train.X[:, tb.columns[j]]
                col = col[~np.isnan(col)].astype(np.int64)
                L = a_full.size
                cnt = np.bincount(col, minlength=L).astype(float)
                alphas.append(L * (cnt + 0.5) / (cnt.sum() + 0.5 * L))
            tb.prior["alpha0"] = alphas
        elif tb.family == "binomial" and np.any(tb.prior["n"] < fb.prior["n"]):
            ntr = np.maximum(tb.prior["n"], fb.prior["n"])
            sub = train.X[:, tb.columns]
            n_obs = np.maximum(np.sum(~np.isnan(sub), axis=0), 1)
            eps = 0.5 / (ntr * n_obs + 1.0)
            p = np.clip(np.nansum(sub, axis=0) / (ntr * n_obs), eps, 1 - eps)
            tb.prior.update({"alpha0": 2.0 * p, "beta0": 2.0 * (1.0 - p), "n": ntr})


def cross_validate(X, n0_values, scale_values, likelihood="normal_wishart", n_folds: int = 5,
                   n_init: int = 1, random_state=0, on_step: Callable[[int, int], None] | None = None,
                   prior=None, n_jobs=None, weight: float = 1.0) -> CrossValidation:
    """K-fold cross-validated held-out log-likelihood over a grid of N0 and prior scale
    (PLOS Appendix G, approach 4; the paper recommends it for small data sets).

    The rows are split into ``n_folds`` folds by a permutation seeded with
    ``random_state``. For each fold, the empirical-Bayes priors are computed on the
    training rows only (with the discrete families' support, i.e. the categorical
    number of categories and the binomial number of trials, taken from the whole data
    so that every held-out row can be scored), scaled by each s as in
    :func:`scaled_prior`, and MAP-DP is fitted at each N0. The held-out rows are scored
    by the mixture predictive of Appendix E (``MAPDP.score_samples``; missing values
    marginalised). All settings of a fold use the same restart seed.

    Parameters
    ----------
    X : array-like or DataFrame
        Text columns are encoded once on the whole data, so codes agree across folds.
    n0_values, scale_values : sequences of float > 0
    likelihood : str, list or dict
        As for :class:`~mapdp_core.MAPDP`.
    n_folds : int, default 5
        Between 2 and the number of rows.
    n_init : int, default 1
        Restarts per fit.
    random_state : int or None, default 0
    on_step : callable(done, total), optional
        Called after each of the n_folds x len(n0_values) x len(scale_values) fits.
    prior : dict, optional
        Hyperparameters used instead of the training-fold defaults, before scaling.
    n_jobs : int, optional
        The grid's fits, and each fit's restarts, run in parallel threads (None: every core;
        1: one after the other); under ``joblib.parallel_config(backend="dask")`` the fits run
        on the user's Dask cluster (:func:`mapdp_core.core.estimator.run_many`), with the same
        results, since every fit's seed is fixed before any runs.
    weight : float > 0, default 1.0
        The non-Gaussian families' prior weight multiplier (as in :func:`scaled_prior`),
        held fixed over the grid.

    Returns
    -------
    CrossValidation
        ``folds``: one row per (N0, scale, fold) with columns N0, scale, fold,
        heldout_loglik (the mean held-out log density per row), K (clusters fitted on the
        training rows) and n_test; ``summary``: one row per (N0, scale) with columns N0,
        scale, mean_heldout_loglik, se (standard error over folds), mean_K and best;
        ``best_N0``, ``best_scale``: the pair with the highest mean held-out
        log-likelihood (on a tie, the smallest N0, then scale).
    """
    n0s = _check_values(n0_values, "n0_values")
    scales = _check_values(scale_values, "scale_values")
    weight = _check_scale(weight, "weight")
    M, names, _ = to_matrix(X)
    frame = isinstance(X, (pd.DataFrame, pd.Series))
    data = pd.DataFrame(M, columns=names) if frame else M
    full = parse(data, likelihood, prior)  # validates everything once, and gives the support
    N = M.shape[0]
    if isinstance(n_folds, bool) or not isinstance(n_folds, numbers.Integral) or not 2 <= n_folds <= N:
        raise ValueError(f"n_folds must be a whole number from 2 to the number of rows ({N}), got {n_folds!r}.")
    rng = np.random.default_rng(random_state)
    folds = np.array_split(rng.permutation(N), int(n_folds))
    seeds = rng.integers(0, 2**31 - 1, size=len(folds))
    check_n_jobs(n_jobs)
    take = (lambda idx: data.iloc[idx].reset_index(drop=True)) if frame else (lambda idx: data[idx])
    tasks = []  # one fit per (fold, scale, N0), each with everything it needs (it may run on a Dask worker)
    for f, test in enumerate(folds):
        mask = np.zeros(N, dtype=bool)
        mask[test] = True
        X_train, X_test = take(np.flatnonzero(~mask)), take(np.sort(test))
        base = parse(X_train, likelihood, prior)
        _with_full_support(base, full)
        for s in scales:
            fold_prior = _prior_argument(base, likelihood, s, weight)
            tasks += [(f, s, n0, fold_prior, X_train, X_test) for n0 in n0s]

    def fit_one(task):
        f, s, n0, fold_prior, X_train, X_test = task
        m = MAPDP(N0=n0, likelihood=likelihood, prior=fold_prior, n_init=n_init,
                  random_state=int(seeds[f]), n_jobs=n_jobs).fit(X_train)
        return {"N0": n0, "scale": s, "fold": f, "heldout_loglik": float(np.mean(m.score_samples(X_test))),
                "K": int(m.n_clusters_), "n_test": int(len(X_test))}

    rows = run_many(fit_one, tasks, n_jobs, on_done=on_step)
    table = pd.DataFrame(rows, columns=["N0", "scale", "fold", "heldout_loglik", "K", "n_test"])
    grouped = table.groupby(["N0", "scale"], sort=False)
    summary = pd.DataFrame({
        "mean_heldout_loglik": grouped["heldout_loglik"].mean(),
        "se": grouped["heldout_loglik"].std(ddof=1) / np.sqrt(grouped["heldout_loglik"].count()),
        "mean_K": grouped["K"].mean(),
    }).reset_index().sort_values(["N0", "scale"], ignore_index=True)
    i_best = int(np.argmax(summary["mean_heldout_loglik"].to_numpy()))
    summary["best"] = np.arange(len(summary)) == i_best
    return CrossValidation(table, summary, float(summary["N0"].iloc[i_best]), float(summary["scale"].iloc[i_best]))
