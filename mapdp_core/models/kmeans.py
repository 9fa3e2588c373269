"""K-means (Lloyd's algorithm) on the per-sweep interface of MAP-DP, and K chosen by BIC.

K-means is the baseline of Raykov, Boukouvalas, Baig & Little (2016), "What to do when
K-means clustering fails", PLOS ONE, Algorithm 1; "K unknown" is handled there (Sections 3
and 5) by running K-means over a range of K with restarts and keeping the K of highest BIC.
Seeding by k-means++ follows Arthur & Vassilvitskii (2007), "k-means++: the advantages of
careful seeding", SODA, in its greedy form (several candidates per step, the one that
lowers the potential most is kept).
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from mapdp_core.kernels import baseline as _bk
from mapdp_core.core.validation import as_data, check_int, check_nonneg, make_rng
from mapdp_core.core.estimator import Control, Problem, SweepEstimator, warm_up_hook
from mapdp_core.core.state import SweepState
from mapdp_core.engine.lloyd import check_k, final_labels, initial_centres, lloyd, plusplus, tolerance

__all__ = ["KMeans", "KMeansBIC", "NearestCentre", "kmeans", "kmeans_bic", "kmeans_plusplus"]


# ----------------------------------------------------------------------------- seeding

def kmeans_plusplus(X, n_clusters: int, random_state=None) -> np.ndarray:
    """Initial centres by greedy k-means++ (Arthur & Vassilvitskii 2007).

    Each new centre is drawn with probability proportional to the squared distance to the
    nearest centre chosen so far; ``2 + ln K`` candidates are drawn per step and the one
    that most reduces the sum of squared distances is kept.

    Returns
    -------
    ndarray of shape (n_clusters, n_features)
    """
    X = as_data(X, "K-means")
    K = check_k(n_clusters, X.shape[0])
    return plusplus(X, K, make_rng(random_state))


def kmeans(X, n_clusters, init="k-means++", random_state=None, max_iter: int = 300,
           tol: float = 1e-4) -> Iterator[SweepState]:
    """Run K-means (Lloyd's algorithm) and yield one immutable :class:`SweepState` per iteration.

    Each iteration is PLOS Algorithm 1 once round its loop: every row joins its nearest
    centre (squared Euclidean distance, ties to the lowest index), then each centre moves
    to the mean of its rows. Everything is validated before this function returns.

    Parameters
    ----------
    X : array-like of shape (N, D)
        Numeric, without missing values.
    n_clusters : int or None
        K. May be None when ``init`` is an array (K is then its number of rows).
    init : {"k-means++", "random"} or array of shape (K, D), default "k-means++"
        Initial centres: greedy k-means++ seeding (Arthur & Vassilvitskii 2007), K distinct
        rows drawn uniformly, or the given centres.
    random_state : int, numpy Generator or None
        Seeds the initialisation.
    max_iter : int, default 300
    tol : float, default 1e-4
        Stop when no row changes cluster, or when the squared Frobenius norm of the centre
        shift is at most ``tol`` times the mean per-column variance of X (scikit-learn's rule).

    Yields
    ------
    SweepState
        ``algorithm="K-means"``; ``labels`` from the assignment step of the iteration;
        ``summaries["mean"]`` the centres after its update step, (K, D), with empty
        ``covariance`` and ``proportions``; ``objective`` the sum of squared distances of
        the rows to those centres (scikit-learn's inertia; twice E of PLOS eq 1), which never
        increases; ``neg_log_joint`` is NaN, since K-means is not a probabilistic model and
        has no joint likelihood. The last state has ``converged=True`` unless ``max_iter``
        stopped the run.

    Notes
    -----
    Empty clusters: if after an assignment step a cluster has no rows, it takes the row
    farthest from its own centre among clusters that have at least two rows (repeated for
    each empty cluster, in index order). That row becomes a singleton whose mean is itself,
    so the objective still cannot increase, and every state has exactly K non-empty
    clusters. (scikit-learn instead moves the empty centre onto such a row without
    relabelling it until the next iteration, so runs that meet an empty cluster can differ
    from scikit-learn's; runs that do not are identical.)

    When ``tol`` stops the run while rows were still moving, the labels of the last state
    are those of its assignment step; :class:`KMeans` assigns once more to the final
    centres (as scikit-learn does), so its ``labels_`` may differ in those rows.
    """
    X = as_data(X, "K-means")
    max_iter = check_int(max_iter, "max_iter", 1)
    tol = check_nonneg(tol, "tol")
    if n_clusters is None and isinstance(init, str):
        raise ValueError("n_clusters is required unless init is an array of initial centres.")
    centres = initial_centres(X, n_clusters, init, make_rng(random_state))
    return lloyd(X, centres, max_iter, tolerance(X, tol))


# ----------------------------------------------------------------------------- estimator

class NearestCentre(SweepEstimator):
    """What K-means and DP-means share: a complete numeric matrix in, an objective that never
    increases, and prediction by the nearest of the fitted ``cluster_centers_``."""

    input = "numeric"
    monotone = "objective"

    def predict(self, X):
        """Index of the nearest centre of every row of X (new rows never open clusters)."""
        check_is_fitted(self)
        X = as_data(X, self.name, self, reset=False)
        labels = np.empty(X.shape[0], dtype=np.int64)
        _bk.assign_nearest(X, self.cluster_centers_, labels, np.empty(X.shape[0]))
        return labels


class KMeans(NearestCentre):
    """K-means clustering by Lloyd's algorithm (PLOS Algorithm 1) with k-means++ seeding.

    The same algorithm as :func:`kmeans`, restarted ``n_init`` times; the run with the
    lowest inertia is kept. With the same initial centres it gives the labels of
    ``sklearn.cluster.KMeans(algorithm="lloyd", n_init=1)``.

    Parameters
    ----------
    n_clusters : int, default=8
    init : {"k-means++", "random"} or array of shape (n_clusters, n_features), default="k-means++"
        With an array there is a single run whatever ``n_init`` is.
    %(n_init)s
    %(max_iter)s
    %(tol)s
        See :func:`kmeans`.
    %(random_state)s

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    %(labels_)s
        Nearest centre of every training row.
    inertia_ : float
        Sum of squared distances of the rows to their centre.
    %(n_iter_)s
    %(objective_history_)s
        Here the objective is the inertia, which never increases.
    %(converged_)s
    %(n_features_in_)s
    %(feature_names_in_)s
    """

    name = "K-means"
    step = "iteration"
    ui = {"n_clusters": Control("K for K-means", "int", 3, 1, 30, short="K",
                                help="K-means needs the number of clusters in advance.")}

    def __init__(self, n_clusters=8, init="k-means++", n_init=10, max_iter=300, tol=1e-4,
                 random_state=None):
        self._init_params(locals())

    def _n_restarts(self) -> int:
        n_init = check_int(self.n_init, "n_init", 1)
        return n_init if isinstance(self.init, str) else 1  # given centres: one run

    warm_up = warm_up_hook({"n_clusters": 2, "n_init": 1, "max_iter": 2, "random_state": 0})

    def _validate(self, X) -> Problem:
        X = as_data(X, "K-means", self, reset=True)
        max_iter = check_int(self.max_iter, "max_iter", 1)
        tol = check_nonneg(self.tol, "tol")
        K = None if (not isinstance(self.init, str) and self.n_clusters is None) else self.n_clusters
        if K is not None:
            check_k(K, X.shape[0])
        elif isinstance(self.init, str):
            raise ValueError("n_clusters is required unless init is an array of initial centres.")
        if isinstance(self.init, str) and self.init not in ("k-means++", "random"):
            raise ValueError(f"init must be 'k-means++', 'random' or an array of shape (n_clusters, n_features); "
                             f"got {self.init!r}.")
        if not isinstance(self.init, str):
            initial_centres(X, K, self.init, None)  # checks the given centres now
        return Problem(X, X.shape[0], {"K": K, "max_iter": max_iter, "tol_abs": tolerance(X, tol)})

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        s = problem.settings
        centres = initial_centres(problem.data, s["K"], self.init, rng)
        return lloyd(problem.data, centres, s["max_iter"], s["tol_abs"])

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        X = problem.data
        centres = state.summaries["mean"]
        labels = final_labels(X, state)  # as scikit-learn: labels that match the final centres
        self.labels_ = labels
        self.cluster_centers_ = centres
        self.inertia_ = float(_bk.squared_error(X, labels, centres))

    def score(self, X, y=None):
        """Minus the sum of squared distances of the rows of X to their nearest centre."""
        labels = self.predict(X)
        X = as_data(X, "K-means", self, reset=False)
        return -float(_bk.squared_error(X, labels, self.cluster_centers_))


# ----------------------------------------------------------------------------- BIC

@dataclass(frozen=True)
class KMeansBIC:
    """Result of :func:`kmeans_bic`.

    Attributes
    ----------
    n_clusters : int
        The K of highest BIC.
    curve : pandas.DataFrame
        One row per K: ``n_clusters``, ``bic``, ``log_likelihood``, ``n_parameters``,
        ``inertia`` (lowest over the restarts) and ``variance`` (the shared sigma^2).
    labels : ndarray of shape (N,)
        Labels of the best run at the chosen K.
    cluster_centers : ndarray of shape (n_clusters, D)
    """

    n_clusters: int
    curve: pd.DataFrame = field(repr=False)
    labels: np.ndarray = field(repr=False)
    cluster_centers: np.ndarray = field(repr=False)


def _bic(sizes: np.ndarray, inertia: float, N: int, D: int) -> tuple[float, float, int, float]:
    K = len(sizes)
    n_params = K * (D + 1)  # K-1 weights, K*D means, one shared variance
    if inertia <= 0.0:  # every row on its centre: the variance estimate is 0 and ln L unbounded
        return -math.inf, math.nan, n_params, 0.0
    var = inertia / (N * D)
    nz = sizes[sizes > 0].astype(float)
    loglik = float((nz * np.log(nz / N)).sum()) - 0.5 * N * D * (math.log(2 * math.pi * var) + 1.0)
    return loglik - 0.5 * n_params * math.log(N), loglik, n_params, var


def kmeans_bic(X, k_range=range(1, 21), n_init: int = 10, random_state=None, *, max_iter: int = 300,
               tol: float = 1e-4) -> KMeansBIC:
    r"""Choose K for K-means by the Bayesian information criterion (PLOS Sections 3 and 5).

    For every K in ``k_range`` K-means (k-means++ seeding) is run ``n_init`` times and the
    run of lowest sum of squared distances S_K is kept; its BIC is that of the K-means
    solution read as a mixture of K spherical Gaussians sharing one variance (Pelleg &
    Moore 2000, "X-means"), with maximum-likelihood plug-in estimates from the hard
    assignment (mixing weights N_k/N, means the centroids):

    .. math::

        \hat\sigma^2 = \frac{S_K}{N D}, \qquad
        \ln\hat L = \sum_{k=1}^{K} N_k \ln\frac{N_k}{N} - \frac{N D}{2}\left(\ln(2\pi\hat\sigma^2) + 1\right),

    .. math::

        \mathrm{BIC}(K) = \ln\hat L - \frac{p}{2}\ln N, \qquad p = (K - 1) + K D + 1 = K (D + 1),

    and the K of *highest* BIC is chosen (the PLOS convention; this is -1/2 times the
    "lower is better" form). For a fixed K the BIC falls as S_K rises, so keeping the
    lowest S_K over restarts is the same as the paper's maximum over repeated cycles.
    A K whose S_K is 0 (as many clusters as distinct rows) gets BIC = -inf.

    Parameters
    ----------
    X : array-like of shape (N, D)
    k_range : iterable of int, default range(1, 21)
        The paper's range 1..20; every K must be between 1 and N.
    n_init : int, default 10
        Restarts per K (the paper used 100).
    random_state : int, numpy Generator or None
    max_iter, tol : see :func:`kmeans`

    Returns
    -------
    KMeansBIC
        ``n_clusters`` (the chosen K), ``curve`` (a DataFrame, one row per K), and the
        ``labels`` and ``cluster_centers`` of the chosen solution.
    """
    X = as_data(X, "K-means")
    N, D = X.shape
    try:
        ks = [k for k in k_range]
    except TypeError as exc:
        raise TypeError(f"k_range must be an iterable of whole numbers such as range(1, 21), got {k_range!r}.") from exc
    if not ks:
        raise ValueError("k_range is empty; pass for example range(1, 21).")
    ks = [check_k(k, N) for k in ks]
    if len(set(ks)) != len(ks):
        raise ValueError("k_range has repeated values; pass each K once.")
    n_init = check_int(n_init, "n_init", 1)
    max_iter = check_int(max_iter, "max_iter", 1)
    tol = check_nonneg(tol, "tol")
    rng = make_rng(random_state)
    rows, fits = [], {}
    for K in ks:
        fit = KMeans(K, n_init=n_init, max_iter=max_iter, tol=tol, random_state=int(rng.integers(0, 2**63 - 1))).fit(X)
        labels, centres, inertia = fit.labels_, fit.cluster_centers_, fit.inertia_
        bic, loglik, n_params, var = _bic(np.bincount(labels, minlength=K), inertia, N, D)
        rows.append({"n_clusters": K, "bic": bic, "log_likelihood": loglik, "n_parameters": n_params,
                     "inertia": inertia, "variance": var})
        fits[K] = (labels, centres)
    curve = pd.DataFrame(rows)
    chosen = int(curve["n_clusters"].iloc[int(np.argmax(curve["bic"].to_numpy()))])
    labels, centres = fits[chosen]
    return KMeansBIC(n_clusters=chosen, curve=curve, labels=labels, cluster_centers=centres)
