"""DP-means (Kulis & Jordan 2012) on the per-sweep interface of MAP-DP, and lambda for a target K.

Kulis & Jordan (2012), "Revisiting k-means: new algorithms via Bayesian nonparametrics",
ICML, Algorithm 1: the small-variance limit of a Gibbs sampler for a Dirichlet process
mixture of spherical Gaussians. The binary search on lambda that reaches a given number of
clusters is Appendix D of Raykov, Boukouvalas & Little (2016), "Simple approximate MAP
inference for Dirichlet processes mixtures", Electronic Journal of Statistics.
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from mapdp_core.kernels import baseline as _bk
from mapdp_core.core.validation import as_data, check_bool, check_int, check_nonneg, check_order
from mapdp_core.core.estimator import Control, Problem, warm_up_hook
from mapdp_core.core.state import SweepState

from .kmeans import NearestCentre

__all__ = ["DPMeans", "LambdaSearch", "dp_means", "dpmeans_lambda_for_k"]


def _check_lam(lam) -> float:
    try:
        return check_nonneg(lam, "lam")
    except ValueError:
        raise ValueError(f"lam (the squared distance beyond which a row opens a new cluster) must be a finite "
                         f"number >= 0, got {lam!r}. Try dpmeans_lambda_for_k(X, K) to find one.") from None


def _run(X: np.ndarray, lam: float, order: np.ndarray, max_iter: int, tol: float) -> Iterator[SweepState]:
    t0 = time.perf_counter()
    N, D = X.shape
    labels = np.zeros(N, dtype=np.int64)
    centres = np.empty((16, D))
    centres[0] = X.mean(axis=0)
    K = 1
    E_old = float(_bk.squared_error(X, labels, centres)) + lam
    for iteration in range(1, max_iter + 1):
        start, changed = 0, 0
        while True:
            stop, K, c = _bk.dpmeans_sweep(X, order, start, labels, centres, K, lam)
            changed += c
            if stop == N:
                break
            grown = np.empty((2 * centres.shape[0], D))
            grown[:K] = centres[:K]
            centres, start = grown, stop
        K = _bk.compact_labels(labels, K)
        counts = np.empty(K, dtype=np.int64)
        _bk.cluster_means(X, labels, centres[:K], counts)
        E = float(_bk.squared_error(X, labels, centres)) + lam * K
        converged = changed == 0 or (E_old - E) <= tol * abs(E_old)
        yield SweepState(
            iteration=iteration, labels=labels, n_clusters=K, objective=E, neg_log_joint=math.nan,
            n_changed=int(changed), cluster_sizes=counts,
            summaries={"mean": centres[:K].copy(), "covariance": {}, "proportions": {}},
            elapsed=time.perf_counter() - t0, converged=converged, algorithm="DP-means",
        )
        if converged:
            return
        E_old = E


def dp_means(X, lam: float, max_iter: int = 100, tol: float = 1e-9, order=None) -> Iterator[SweepState]:
    r"""Run DP-means and yield one immutable :class:`SweepState` per pass over the data.

    Kulis & Jordan (2012), Algorithm 1. Start with one cluster at the global mean; in each
    pass every row (in ``order``) joins its nearest centre, unless its squared distance to
    every centre exceeds ``lam``, in which case it opens a new cluster centred on itself;
    then clusters left empty are dropped and every centre moves to the mean of its rows.
    This decreases the objective (Kulis & Jordan, eq. 2 and Theorem 3.1)

    .. math:: \sum_{k=1}^{K} \sum_{i: z_i = k} \lVert x_i - \mu_k \rVert^2 + \lambda K,

    which is also the small-variance limit of EJS eq. (4.3). Everything is validated before
    this function returns.

    Parameters
    ----------
    X : array-like of shape (N, D)
        Numeric, without missing values.
    lam : float >= 0
        Penalty per cluster, in squared-distance units of X: a row farther than
        ``sqrt(lam)`` from every centre opens a cluster. Use :func:`dpmeans_lambda_for_k`
        to find the lambda that gives a chosen K.
    max_iter : int, default 100
    tol : float, default 1e-9
        Stop when no row changes cluster, or when a pass lowers the objective by at most
        ``tol`` times its previous value.
    order : sequence of int, optional
        Visiting order of the rows (a permutation); identity by default. The result
        depends on it.

    Yields
    ------
    SweepState
        ``algorithm="DP-means"``; ``objective`` as above; ``neg_log_joint`` NaN (DP-means
        is a limit with no likelihood); ``summaries["mean"]`` the centres (K, D).
    """
    X = as_data(X, "DP-means")
    lam = _check_lam(lam)
    max_iter = check_int(max_iter, "max_iter", 1)
    tol = check_nonneg(tol, "tol")
    order = check_order(order, X.shape[0])
    return _run(X, lam, order, max_iter, tol)


class DPMeans(NearestCentre):
    """DP-means clustering (Kulis & Jordan 2012): K-means with a penalty ``lam`` per cluster.

    Parameters
    ----------
    lam : float, default=1.0
        Penalty per cluster in squared-distance units of X (see :func:`dp_means`). The
        default suits standardised data with well-separated clusters; it is not derived
        from the data. :func:`dpmeans_lambda_for_k` finds the lambda for a given K.
    %(max_iter)s
    %(tol)s
        See :func:`dp_means`.
    %(shuffle)s
        Visit the rows in a random order (from ``random_state``) instead of their order.
    %(n_init)s
        Restarts in random orders when ``shuffle`` is True; the lowest objective is kept.
    %(random_state)s
        Used only when ``shuffle`` is True.

    Attributes
    ----------
    %(labels_)s
    cluster_centers_ : ndarray of shape (n_clusters_, n_features)
    %(n_clusters_)s
    %(n_iter_)s
    %(objective_history_)s
        It never increases.
    objective_ : float
    %(converged_)s
    %(n_features_in_)s
    %(feature_names_in_)s
    """

    name = "DP-means"
    step = "pass"
    ui = {"lam": Control("λ for DP-means (squared distance, standardised units)", "float", 4.0, 0.0, None,
                         short="λ", help="A row farther than sqrt(λ) from every centre opens a new cluster.")}

    def __init__(self, lam=1.0, max_iter=100, tol=1e-9, shuffle=False, n_init=1, random_state=None):
        self._init_params(locals())

    def _n_restarts(self) -> int:
        n_init = check_int(self.n_init, "n_init", 1)
        return n_init if check_bool(self.shuffle, "shuffle") else 1  # in input order every restart would be the same

    warm_up = warm_up_hook({"lam": 1.0, "max_iter": 2})

    def _validate(self, X) -> Problem:
        X = as_data(X, "DP-means", self, reset=True)
        settings = {"lam": _check_lam(self.lam), "max_iter": check_int(self.max_iter, "max_iter", 1),
                    "tol": check_nonneg(self.tol, "tol")}
        return Problem(X, X.shape[0], settings)

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        s = problem.settings
        order = np.arange(problem.n_rows, dtype=np.int64) if order is None else order
        return _run(problem.data, s["lam"], order, s["max_iter"], s["tol"])

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        self.cluster_centers_ = state.summaries["mean"]
        self.objective_ = state.objective


@dataclass(frozen=True)
class LambdaSearch:
    """Result of :func:`dpmeans_lambda_for_k`.

    Attributes
    ----------
    lam : float
        The lambda found (when ``reached`` is False, the lambda whose K came closest).
    n_clusters : int
        The K DP-means gives with ``lam``.
    reached : bool
        Whether ``n_clusters`` equals the target.
    n_steps : int
        DP-means runs made by the search.
    history : list of (lambda, K)
    """

    lam: float
    n_clusters: int
    reached: bool
    n_steps: int
    history: list


def dpmeans_lambda_for_k(X, target_k: int, *, max_steps: int = 60, order=None, max_iter: int = 100,
                         tol: float = 1e-9) -> LambdaSearch:
    r"""Find a DP-means lambda that gives ``target_k`` clusters, by binary search (EJS Appendix D).

    The search starts on [L, U] = [0, M^2] with
    :math:`M^2 = \sum_{d=1}^{D} (\max_i x_{id} - \min_i x_{id})^2`, the largest possible
    squared distance in the data's bounding box. At each step DP-means runs with
    lambda = (L + U)/2; too many clusters raise L to lambda, too few lower U to lambda; it
    stops at the first lambda that gives exactly ``target_k``.

    K need not be monotone in lambda (the visiting order matters), so a target may be
    unreachable: after ``max_steps`` runs, or once the interval no longer shrinks, the
    lambda whose K was closest to the target is returned with ``reached=False`` (ties: the
    larger lambda, i.e. fewer clusters).

    Parameters
    ----------
    X : array-like of shape (N, D)
    target_k : int, 1 <= target_k <= N
    max_steps : int, default 60
    order, max_iter, tol : see :func:`dp_means`

    Returns
    -------
    LambdaSearch
    """
    X = as_data(X, "DP-means")
    N = X.shape[0]
    target = check_int(target_k, "target_k", 1)
    if target > N:
        raise ValueError(f"target_k={target} is more than the {N} rows of X; ask for at most {N} clusters.")
    max_steps = check_int(max_steps, "max_steps", 1)
    max_iter = check_int(max_iter, "max_iter", 1)
    tol = check_nonneg(tol, "tol")
    order = check_order(order, N)

    def clusters(lam):
        for state in _run(X, lam, order, max_iter, tol):
            pass
        return state.n_clusters

    lo, hi = 0.0, float(((X.max(axis=0) - X.min(axis=0)) ** 2).sum())
    history = []
    for _ in range(max_steps):
        lam = 0.5 * (lo + hi)
        if history and lam in (lo, hi):  # the interval cannot shrink any more
            break
        K = clusters(lam)
        history.append((lam, K))
        if K == target:
            return LambdaSearch(lam=lam, n_clusters=K, reached=True, n_steps=len(history), history=history)
        if K > target:
            lo = lam
        else:
            hi = lam
    lam, K = min(history, key=lambda h: (abs(h[1] - target), -h[0]))
    return LambdaSearch(lam=lam, n_clusters=K, reached=False, n_steps=len(history), history=history)
