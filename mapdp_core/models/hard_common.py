r"""What the three small-variance-asymptotic ("hard") models share: :class:`~mapdp_core.HardHDP`
(:mod:`.hdp`), :class:`~mapdp_core.HardHDPHMM` (:mod:`.hdp_hmm`) and
:class:`~mapdp_core.HardHDPHMMDirect` (:mod:`.hdp_hmm_direct`).

Sources (see ``shared/OTHER-SYSTEMS.md`` §3 for the corrected objectives and errata H1-H9):

* HSJ: Huggins, "small-variance asymptotics for the HDP and the HDP-HMM" (derivation notes),
  eq 19 (hard HDP mixture), eq 29 (hard HDP-HMM, "combinatorial" form) and eq 36 ("direct").
* Kulis & Jordan (2012), ICML, Algorithm 2 (hard Gaussian HDP, "HDP-means"), same fixed points.
* EJS: Raykov, Boukouvalas & Little (2016), Electronic Journal of Statistics, §4, eqs 4.1-4.3
  and Appendix C (Bregman divergences, after Banerjee et al. 2005 and Jiang, Kulis & Jordan
  2012), and eq 6.8 (the same HDP-HMM objective, reparameterised).

Penalties: ``lambda_global`` = HSJ λ1, ``lambda_local`` = HSJ λ2, ``lambda_mean`` = HSJ λ3, in
the objectives J_HDP (eq 19, :mod:`.hdp`), J_comb (eq 29, :mod:`.hdp_hmm`) and J_dir (eq 36,
:mod:`.hdp_hmm_direct`).

``D`` is the squared Euclidean distance (HSJ; the Gaussian scale ``1/(2σ²)`` is absorbed in
the lambdas), or one of the Bregman divergences of EJS §4 / Appendix C (summed over columns):

* ``"poisson"`` (non-negative counts): ``y log(y/μ) - y + μ``;
* ``"bernoulli"`` (0/1 values): ``y log(y/μ) + (1-y) log((1-y)/(1-μ))``;
* ``"multinomial"`` (rows of non-negative counts, at least one count per row): each row is
  normalised to proportions ``p`` and weighted by its total ``n``, ``D = n Σ_w p_w log(p_w/μ_w)``
  (the multinomial log-likelihood up to terms free of μ); ``cluster_centers_`` are then
  proportions.

For a Bregman divergence the optimal centre is the (count-weighted) arithmetic mean, so
``lambda_mean`` must be 0 (there is no Gaussian prior on the means to shrink them).
Degeneracy (inherent to the limit, not fixed here): a new cluster is centred on its row, and
for 0/1 data, or a count of 0, a centre on the boundary (μ = 0 or 1) gives an infinite
divergence to every row that differs there, so such a cluster only gathers exact repeats
until the mean step moves it. On 0/1 rows with several columns this leaves many singletons;
measured on 150 rows of 20 noisy bits from 2 patterns: K = 120 for λ1 from 5 to 10, K = 1
above 20·ln 2 (tests use repeated patterns). Poisson and multinomial counts well above 0
behave (NMI > 0.9 in the tests).

Conversions of the penalties (H8):

* HSJ eq 19 / 29: λ1 = ``lambda_global``, λ2 = ``lambda_local``, λ3 = ``lambda_mean``.
* Kulis & Jordan (hard HDP): λ_g = ``lambda_global``, λ_l = ``lambda_local`` (their
  ``λ_l·Σ_i m_i + λ_g·K`` differs from J_HDP by the constant ``λ_g + G·λ_l``).
* EJS eq 6.8 (HDP-HMM, with the indicators of H7): ``λ2^EJS·K + λ1^EJS·Σ_p K_p^local`` equals
  J_comb with ``lambda_global = λ1^EJS + λ2^EJS`` and ``lambda_local = λ1^EJS``, up to constants.
* DP-means (Kulis & Jordan Algorithm 1; EJS eq 4.3 limit): one group gives DP-means with
  ``λ = lambda_global + lambda_local``; every row its own group, or ``HardHDPHMM`` with
  ``lambda_local = 0``, gives DP-means with ``λ = lambda_global``. The library's
  :class:`~mapdp_core.DPMeans` reports ``SSE + λK``; these objectives report ``SSE + λ(K-1)``.

Algorithms (the papers give none, H9; OTHER-SYSTEMS §3.2(a),(b)): coordinate descent, in which
no step increases J (each state's ``summaries["step_objectives"]`` records J after every step,
and the tests check it):

1. assignment sweep with the centres fixed: remove the row (and, for the HMM, its two
   transitions), give it the cheapest of "each non-empty cluster" and "a new cluster at its
   own optimal centre" (cost λ1 + local penalty + ``w λ3/(w+λ3) ||y||²``, 0 for a Bregman
   divergence). A cluster the removal emptied comes back only as "new" (which can only be
   cheaper than its old centre). Ties keep the current cluster, then the lowest index.
   Choice where the papers are silent: a row alone in its cluster is therefore compared
   as a *new* cluster, which differs from DP-means' Algorithm 1 (which compares it with its
   old centre); the fixed points of well-separated data are the same;
2. (HardHDP, ``local_moves=True``) Kulis & Jordan's local-cluster move: every (group,
   cluster) block moves as a whole to the cheapest cluster or to a new one;
3. mean step ``μ_k = S_k / (W_k + λ3)`` (S, W: weighted sums and weights), empty clusters
   dropped (clusters keep their order);
4. (HardHDPHMM, ``merges=True``) greedy merges of two states while J falls (see the class);
5. stop when no label changed, when J fell by at most ``tol·|J|``, or after ``max_iter``.

Here: the divergences and their checks, the data-driven default penalties
(:func:`default_lambdas`: for the squared Euclidean distance, from the noise variance of a
structure-blind MAP-DP fit through the small-variance scaling), the objectives' shared terms, the clusters of a sweep, the loop of
steps 1-5 (:func:`_descent`, which HardHDP and HardHDPHMM run with their own moves and J), and
the hard HDP's run (:func:`_hdp_run`, the algorithm of ``HardHDP``), which with one group and
``lambda_local = 0`` is DP-means, the default start of both HDP-HMMs.

The per-row loops (the assignment sweeps of both models, HardHDP's local moves) are numba
kernels (:mod:`mapdp_core.kernels.hdp`) that keep NumPy's and scipy's arithmetic, so the labels
and objectives are those of the former Python loops (kept in ``tests/models/test_hdp.py`` as twins and
compared call by call); the HMM's merges price each candidate from per-state pieces (see
``hdp_hmm._hmm_merges``). One sweep costs O(N·K·D). Measured (2 shared cores, numba cache warm; the
former Python code in brackets): HardHDP, mathachieve's 7185 × 2 rows in 160 groups, K = 39:
0.20 s (2.8 s); on EJS Table 4's 4000 × 3 sequence, HardHDPHMM 0.31 s (5.2 s) and
HardHDPHMMDirect 0.91 s (3.3 s; now mostly its merges). The kernels compile at their first
use in about 11.5 s, then load from numba's disk cache in about 0.45 s (``warm_up``).
"""
from __future__ import annotations

import math
import time
import warnings
from collections.abc import Iterator

import numpy as np
from scipy.special import rel_entr
from sklearn.utils.validation import check_is_fitted

from mapdp_core.kernels import hdp as _hk
from mapdp_core.core.validation import as_data, check_choice, check_int, check_nonneg
from mapdp_core.core.estimator import Control, SweepEstimator
from mapdp_core.core.state import SweepState

DIVERGENCES = ("squared_euclidean", "poisson", "bernoulli", "multinomial")

#: Fallback penalties, as multiples of the data's Bregman information B (the mean divergence of
#: a row from the overall centre; for squared Euclidean, the trace of the covariance): used for
#: the Bregman divergences other than the squared Euclidean one, where no noise variance is
#: estimated, and by :class:`~mapdp_core.HardHDPHMMDirect`. See :func:`default_lambdas`.
DEFAULT_GLOBAL_FACTOR = 1.0
DEFAULT_LOCAL_FACTOR = 0.5      # HardHDP: per extra local cluster of a group
DEFAULT_SUCCESSOR_FACTOR = 2.0  # HardHDPHMM: per extra successor of a state

#: The structure-blind MAP-DP fit that estimates the noise variance σ² for the squared
#: Euclidean defaults (:func:`noise_variance`): MAPDP's own automatic N0 and prior (the
#: Gaussian spread chosen by the joint evidence: with the plain empirical-Bayes prior,
#: ``prior=None``, N0 = 3 cut one 3-D Gaussian blob of 200 rows into 13 components, σ̂² a
#: quarter of the truth; "auto" keeps it whole), Normal-Wishart clusters, and no merging of
#: its Gaussian components (σ² is the spread of a Gaussian component, not of a group of them).
NOISE_FIT = {"N0": "auto", "likelihood": "normal_wishart", "prior": "auto", "merge": None, "random_state": 0,
             "n_jobs": 1}


# ------------------------------------------------------------------------ divergences
def divergence(Y, M, kind: str = "squared_euclidean") -> np.ndarray:
    """Unit divergences ``d(y_n, μ_k)`` summed over columns, shape (n, K).

    ``Y`` (n, D) holds data as the algorithm sees it (for ``"multinomial"``, proportions: rows
    already normalised; the row total is a weight applied outside), ``M`` (K, D) centres.
    ``inf`` where a Bregman divergence is infinite (μ = 0 or 1 where y is not).
    """
    Y = np.atleast_2d(np.asarray(Y, dtype=float))
    M = np.atleast_2d(np.asarray(M, dtype=float))
    y, m = Y[:, None, :], M[None, :, :]
    if kind == "squared_euclidean":
        return ((y - m) ** 2).sum(axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "poisson":
            out = (rel_entr(y, m) - y + m).sum(axis=2)
        elif kind == "bernoulli":
            out = (rel_entr(y, m) + rel_entr(1.0 - y, 1.0 - m)).sum(axis=2)
        elif kind == "multinomial":
            out = rel_entr(y, m).sum(axis=2)
        else:
            raise ValueError(f"divergence must be one of {', '.join(DIVERGENCES)}; got {kind!r}.")
    return np.where(np.isnan(out), np.inf, out)


def _prepare(X, kind: str, algorithm: str, estimator=None, reset: bool = True):
    """``(Y, w)``: the data the divergence reads and the weight of every row (``reset=False``
    in ``predict``: the columns are checked against the fitted ones)."""
    X = as_data(X, algorithm, estimator, reset=reset)
    w = np.ones(X.shape[0])
    if kind == "squared_euclidean":
        return X, w
    if kind == "poisson":
        if (X < 0).any():
            r, c = np.argwhere(X < 0)[0]
            raise ValueError(f"divergence='poisson' needs non-negative counts; X has negative counts "
                             f"(first at row {r}, column {c}: {X[r, c]!r}).")
        return X, w
    if kind == "bernoulli":
        bad = ~((X == 0) | (X == 1))
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise ValueError(f"divergence='bernoulli' needs 0/1 values; X[{r}, {c}] = {X[r, c]!r}.")
        return X, w
    if (X < 0).any():
        r, c = np.argwhere(X < 0)[0]
        raise ValueError(f"divergence='multinomial' needs non-negative counts; X has negative counts "
                         f"(first at row {r}, column {c}: {X[r, c]!r}).")
    totals = X.sum(axis=1)
    if (totals <= 0).any():
        r = int(np.flatnonzero(totals <= 0)[0])
        raise ValueError(f"divergence='multinomial' needs at least one count in every row; row {r} sums to 0 "
                         "(drop empty rows).")
    return np.ascontiguousarray(X / totals[:, None]), totals


def _check_divergence(kind) -> str:
    return check_choice(kind, "divergence", DIVERGENCES)


def _check_lambda(value, name: str, meaning: str):
    if value is None:
        return None
    try:
        return check_nonneg(value, name)
    except ValueError:
        raise ValueError(f"{name} ({meaning}) must be a finite number >= 0 or None (data-driven default), "
                         f"got {value!r}.") from None


def _check_lambda_mean(value, kind: str) -> float:
    lam3 = _check_lambda(value, "lambda_mean", "the ridge penalty on the cluster means")
    lam3 = 0.0 if lam3 is None else lam3
    if kind != "squared_euclidean" and lam3 != 0:
        raise ValueError(f"lambda_mean must be 0 with divergence={kind!r}: the centre of a Bregman divergence is "
                         f"the arithmetic mean (EJS §4); got lambda_mean={value!r}.")
    return lam3


def bregman_information(Y, w, kind: str) -> float:
    """Mean over rows of ``w_n d(y_n, ȳ)`` with ȳ the weighted mean (Banerjee et al. 2005):
    for the squared Euclidean distance, the trace of the (biased) covariance."""
    centre = (w[:, None] * Y).sum(axis=0) / w.sum()
    return float((w * divergence(Y, centre[None], kind)[:, 0]).mean())


def noise_variance(Y) -> tuple[float, int]:
    r"""``(σ̂², K̂)``: the within-cluster variance per column and the number of clusters of a
    structure-blind MAP-DP fit of ``Y`` (:data:`NOISE_FIT`; the true labels are never read).

    ``σ̂² = Σ_k Σ_{n∈k} ||y_n − ȳ_k||² / (D (N − K̂))``, the pooled unbiased variance of the
    rows about their cluster means, averaged over the D columns, at most ``B/D`` (B the
    trace of the covariance: the within-cluster spread cannot exceed the total). MAP-DP
    reads each cluster's covariance from the data, so one wide cluster and several narrow ones
    give different σ̂², which a multiple of B cannot tell apart. Multiplying the data by c
    multiplies σ̂² by c² and leaves K̂ (MAP-DP's empirical-Bayes prior follows the data's
    unit). Falls back to ``(B/D, 1)`` when there are fewer than 3 rows, when the fit fails or
    when it leaves no row to estimate from (K̂ = N)."""
    Y = np.asarray(Y, dtype=float)
    N, D = Y.shape
    total = float(Y.var(axis=0).sum()) / D
    if N < 3 or not total > 0:
        return total, 1
    from mapdp_core.models.mapdp import MAPDP  # here: mapdp imports the estimator machinery this module shares

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a warning of the auxiliary fit is not the user's concern
            z = np.asarray(MAPDP(**NOISE_FIT).fit(Y).labels_)
    except (ValueError, np.linalg.LinAlgError, FloatingPointError):
        return total, 1
    z = np.unique(z, return_inverse=True)[1]
    K = int(z.max()) + 1
    if K >= N:
        return total, 1
    S = np.zeros((K, D))
    np.add.at(S, z, Y)
    means = S / np.bincount(z, minlength=K)[:, None]
    sse = float(((Y - means[z]) ** 2).sum())
    return min(sse / (D * (N - K)), total), K


def cluster_reach(sigma2: float, N: int, D: int) -> float:
    r"""``u = σ² q``, with ``q`` the ``1 − 1/N`` quantile of the χ² distribution with D degrees of
    freedom: for N rows of a Gaussian cluster with variance σ² per column (isotropic), the
    squared distance ``||y − μ||²/σ²`` of a row from its centre is χ²_D, so about one row in N
    lies farther than ``√u`` from its centre, and ``4u = (2√u)²`` bounds the squared distance
    between two rows of the cluster at the same level. For D = 2, ``q = 2 ln N`` exactly."""
    from scipy.stats import chi2

    return float(sigma2) * float(chi2.ppf(1.0 - 1.0 / max(int(N), 2), int(D)))


def _fallback_lambdas(Y, w, kind: str, local_factor: float) -> tuple[float, float]:
    """``(B, local_factor·B)``, B the Bregman information (1 if every row is the same): the
    earlier defaults, kept where no noise variance is estimated."""
    B = bregman_information(Y, w, kind)
    B = B if B > 0 else 1.0  # every row identical: any positive penalty gives one cluster
    return DEFAULT_GLOBAL_FACTOR * B, local_factor * B


_LOCAL_FACTORS = {"hdp": DEFAULT_LOCAL_FACTOR, "hmm": DEFAULT_SUCCESSOR_FACTOR}


def _sva_lambdas(Y, model: str) -> tuple[float, float]:
    """The squared Euclidean defaults of :func:`default_lambdas` for ``model`` ("hdp" or "hmm")."""
    N, D = Y.shape
    sigma2, K = noise_variance(Y)
    if not sigma2 > 0:
        return _fallback_lambdas(Y, np.ones(N), "squared_euclidean", _LOCAL_FACTORS[model])
    u = cluster_reach(sigma2, N, D)
    if model == "hdp":
        return 3.0 * u, u
    return u, (2.0 / math.pi) * sigma2 * N / K


def default_lambdas(X, divergence: str = "squared_euclidean", model: str = "hdp") -> tuple[float, float]:
    r"""The data-driven ``(lambda_global, lambda_local)`` used when they are None.

    **Squared Euclidean distance** (the Gaussian models). The small-variance asymptotics tie
    the penalties to the noise variance σ² of the Bayesian model: HSJ (L86; OTHER-SYSTEMS
    §3.1(a)) sets the HDP's concentrations to ``γ = exp(−λ1/(2σ²))`` and ``α = exp(−λ2/(2σ²))``,
    so that ``D(y, μ) = ||y − μ||²`` is ``2σ²`` times the Gaussian's negative log-likelihood (up to a constant)
    and a penalty λ is ``2σ²`` times a log prior odds. So the rule estimates σ² without labels
    and sets the penalties in units of it:

    1. ``σ̂², K̂`` from a structure-blind MAP-DP fit (:func:`noise_variance`);
    2. the reach ``u = σ̂² q``, q the ``1 − 1/N`` quantile of χ²_D (:func:`cluster_reach`):
       at level 1/N no row of a Gaussian cluster lies farther than √u from its centre, and
       no two rows of it farther than 2√u from each other;
    3. ``model="hdp"`` (:class:`~mapdp_core.HardHDP`): ``lambda_local = u`` and
       ``lambda_global = 3u``. A row pays ``lambda_local`` to use a cluster its group has
       not used, so no row is drawn into another cluster of its group by its noise alone; a
       new global cluster costs a row ``λ1 + λ2 = 4u`` (eq 19; OTHER-SYSTEMS §3.2(a) step 2),
       the squared diameter of a cluster, so no row opens a second cluster beside one its own
       cluster already opened (a new cluster starts at the row that opens it). In the
       scaling above, ``α = exp(−q/2)`` and ``γ = α³`` (D = 2: α = 1/N);
    4. ``model="hmm"`` (:class:`~mapdp_core.HardHDPHMM`): ``lambda_global = u``, the
       threshold of its DP-means start (which may over-split), and ``lambda_local =
       (2/π) σ̂² N/K̂``. Splitting a Gaussian state of n rows into two halves across a
       hyperplane through its centre lowers the fit term by ``(2/π) n σ²`` (each half-mean
       lies ``σ √(2/π)`` from the centre) and adds at least one successor (the halves follow each
       other in time), so with n the
       mean state size ``N/K̂`` such a split does not pay and the merges (eq 29's J, see
       :class:`~mapdp_core.HardHDPHMM`) undo those of the start, while merging two states
       ``d`` apart costs ``n_a n_b d²/(n_a + n_b)``, far more for separated states. In the
       scaling above, ``α = exp(−N/(π K̂))``.

    Multiplying the data by c multiplies every penalty by c², so the partition is the same
    in any unit. The rule reads no labels. Measured (``benchmarks/hard_penalties.py``,
    ``benchmarks/results/hard-penalties-2026-11-27.txt``; 24 generated sequences and 24
    grouped sets, K 2-6, D 2-5, columns in different units then z-scored, seeds not used in
    the rule's design), mean NMI, this rule / the former one / the structure-blind MAP-DP:
    HardHDPHMM 0.926 / 0.841 / 0.944 (MAP-iHMM 0.982), HardHDP 0.949 / 0.803 / 0.959; within
    0.02 of the best structure-blind model on 18 and 15 of the 24 (the former rule: 7 and 6).
    The page's demos: HardHDPHMM K = 3, NMI 0.879 (former K = 6, 0.659); HardHDP K = 3, NMI
    1.0 (former K = 7, 0.758). Where it still loses: the hard HDP's greedy sweep over-splits
    (a local minimum, not the penalties: on the three grouped sets checked the true labels
    have the lower J_HDP, e.g. 1671 against the fit's 2124); the combinatorial HDP-HMM's
    J_comb itself prefers the wrong labels (on the three sequences checked the fit's J_comb
    is below the truth's, e.g. 458 against 517), as it charges only for distinct successors,
    so on a chain where every state reaches every other it is k-means at its K (the demo's
    0.879 is what k-means started from the true means reaches).

    **Other Bregman divergences** (and the "direct" HDP-HMM, :func:`~.hdp_hmm_direct.
    default_direct_params`): the former rule, ``lambda_global = B``, B the Bregman
    information of the data (the mean divergence of a row from the overall centre; for
    multinomial rows, weighted by their totals), and ``lambda_local = B/2`` for
    ``model="hdp"``, ``2B`` for ``model="hmm"``. Measured with it (DP-means threshold c·B,
    one group; K for c = 0.5, 1, 1.5, 2, 3): three clusters 8 apart, σ = 1, N = 300: 4, 4,
    3, 3, 1; one spherical Gaussian (N = 300): D = 2 → 22, 14, 11, 8, 6 and D = 5 → 67, 32,
    17, 10, 2: a multiple of the total variance over-splits a single blob and merges clusters
    that are close relative to the overall spread. For 0/1 data the rows' divergences from
    the grand mean are nearly all equal to B, so it gives K = 1: give the lambdas. These are
    starting points, not a model choice: for a target K search lambda as
    :func:`~mapdp_core.dpmeans_lambda_for_k` does.
    """
    kind = _check_divergence(divergence)
    Y, w = _prepare(X, kind, "HardHDP")
    model = check_choice(model, "model", ("hdp", "hmm"))
    if kind == "squared_euclidean":
        return _sva_lambdas(Y, model)
    return _fallback_lambdas(Y, w, kind, _LOCAL_FACTORS[model])


# ------------------------------------------------------------------------ objectives
def _fit_term(Y, w, z, M, kind) -> float:
    total = 0.0
    for k in np.unique(z):
        rows = z == k
        total += float((w[rows] * divergence(Y[rows], M[k][None], kind)[:, 0]).sum())
    return total


def _optimal_means(Y, w, z, K, lam3) -> np.ndarray:
    S = np.zeros((K, Y.shape[1]))
    np.add.at(S, z, w[:, None] * Y)
    W = np.bincount(z, weights=w, minlength=K)
    with np.errstate(invalid="ignore", divide="ignore"):
        return S / (W + lam3)[:, None]


def _hdp_J(Y, w, z, M, gidx, lam1, lam2, lam3, kind) -> float:
    """J_HDP (HSJ eq 19 with H5, :mod:`.hdp`) of the labels ``z`` (groups ``gidx``), centres ``M``."""
    ks = np.unique(z)
    pairs = np.unique(gidx.astype(np.int64) * (int(z.max()) + 1) + z)
    m = np.bincount(pairs // (int(z.max()) + 1))
    return (_fit_term(Y, w, z, M, kind) + lam1 * (len(ks) - 1) + lam2 * np.maximum(m - 1, 0).sum()
            + lam3 * float((M[ks] ** 2).sum()))


def _as_labels(labels, N) -> np.ndarray:
    z = np.asarray(labels)
    if z.shape != (N,) or not np.issubdtype(z.dtype, np.integer) or (z < 0).any():
        raise ValueError(f"labels must be {N} non-negative whole numbers, one per row.")
    return _relabel(z)


def _labelled(X, labels, divergence, lambda_mean, algorithm):
    """What the objective functions start from, checked: (Y, w, z, M, kind), the data as the
    algorithm sees it, the labels numbered 0..K-1 and every centre at its optimum S_k/(W_k + λ3)."""
    kind = _check_divergence(divergence)
    Y, w = _prepare(X, kind, algorithm)
    z = _as_labels(labels, Y.shape[0])
    return Y, w, z, _optimal_means(Y, w, z, int(z.max()) + 1, _check_lambda_mean(lambda_mean, kind)), kind


def _penalties(lambda_global, lambda_local) -> tuple[float, float]:
    """(λ1, λ2) given to an objective function, checked."""
    return check_nonneg(lambda_global, "lambda_global"), check_nonneg(lambda_local, "lambda_local")


# ------------------------------------------------------------------------ shared machinery
class _Clusters:
    """Centres, row counts and weighted sums of the clusters during a sweep (capacity grows)."""

    def __init__(self, Y, w, z, M):
        self.Y, self.w = Y, w
        K = M.shape[0]
        cap = max(16, 2 * K)
        self.M = np.zeros((cap, Y.shape[1]))
        self.M[:K] = M
        self.count = np.zeros(cap, dtype=np.int64)
        self.count[:K] = np.bincount(z, minlength=K)
        self.K = K

    def grow(self):
        cap = self.M.shape[0]
        self.M = np.vstack([self.M, np.zeros((cap, self.M.shape[1]))])
        self.count = np.concatenate([self.count, np.zeros(cap, dtype=np.int64)])


def _relabel(z) -> np.ndarray:
    """The labels numbered 0..K-1 in the order of the clusters (empty clusters dropped)."""
    return np.unique(z, return_inverse=True)[1].astype(np.int64)


def _mean_step(Y, w, z, lam3) -> tuple[np.ndarray, np.ndarray]:
    """Step 3 of the module docstring: (labels, centres), empty clusters dropped (the others
    keep their order), every centre at its optimum ``S_k/(W_k + λ3)``."""
    z = _relabel(z)
    return z, _optimal_means(Y, w, z, int(z.max()) + 1, lam3)


def _state(iteration, z, M, J, changed, t0, converged, algorithm, steps, **extra):
    K = M.shape[0]
    summaries = {"mean": M.copy(), "covariance": {}, "proportions": {}, "step_objectives": steps}
    summaries.update(extra)
    return SweepState(iteration=iteration, labels=z, n_clusters=K, objective=float(J), neg_log_joint=math.nan,
                      n_changed=int(changed), cluster_sizes=np.bincount(z, minlength=K), summaries=summaries,
                      elapsed=time.perf_counter() - t0, converged=converged, algorithm=algorithm)


# ------------------------------------------------------------------------ the coordinate descent
def _kernel_args(Y, w, newcost=None):
    """Y, w (and newcost) as the kernels take them (C-contiguous float64: one compiled
    signature)."""
    out = (np.ascontiguousarray(Y, dtype=np.float64), np.ascontiguousarray(w, dtype=np.float64))
    if newcost is not None:
        out += (np.ascontiguousarray(newcost, dtype=np.float64),)
    return out


def _hdp_sweep(Y, w, z, C: _Clusters, gidx, G, order, lam1, lam2, lam3, kind, newcost) -> int:
    """One assignment sweep (OTHER-SYSTEMS 3.2(a) step 2), in place; returns rows changed.
    The loop is the numba kernel :func:`~mapdp_core.kernels.hdp.hdp_sweep` (``z`` must be a
    C-contiguous int64 array: it is written in place); C grows there."""
    Y, w, newcost = _kernel_args(Y, w, newcost)
    changed, C.K, C.M, C.count = _hk.hdp_sweep(
        Y, w, z, C.M, C.count, int(C.K), np.ascontiguousarray(gidx, dtype=np.int64), int(G),
        np.ascontiguousarray(order, dtype=np.int64), float(lam1), float(lam2), float(lam3), _hk.KIND_CODES[kind],
        newcost)
    return int(changed)


def _hdp_local_moves(Y, w, z, C: _Clusters, gidx, G, lam1, lam2, lam3, kind) -> int:
    """Kulis & Jordan's local-cluster moves (3.2(a) step 3), in place; returns rows changed
    (the numba kernel :func:`~mapdp_core.kernels.hdp.hdp_local_moves`)."""
    Y, w = _kernel_args(Y, w)
    changed, C.K, C.M, C.count = _hk.hdp_local_moves(
        Y, w, z, C.M, C.count, int(C.K), np.ascontiguousarray(gidx, dtype=np.int64), int(G), float(lam1),
        float(lam2), float(lam3), _hk.KIND_CODES[kind])
    return int(changed)


def _new_cluster_costs(Y, w, lam3) -> np.ndarray:
    """The ridge cost ``w λ3/(w+λ3) ||y||²`` of a new cluster centred on each row (step 1 of the
    module docstring; 0 without ``lambda_mean``)."""
    return w * lam3 / (w + lam3) * (Y ** 2).sum(axis=1) if lam3 > 0 else np.zeros(Y.shape[0])


def _descent(Y, w, z0, lam3, J_of, moves, merge, summaries, max_iter, tol, algorithm) -> Iterator[SweepState]:
    """The states of the coordinate descent of the module docstring from the labels ``z0``, one
    per iteration: each of ``moves`` (steps 1-2: a function of the labels and the
    :class:`_Clusters`, changing both in place and returning the rows it moved), the mean step
    (3), then ``merge`` if given (4: ``(z, M, J) -> (z, M, J, rows moved)``), with J (``J_of(z,
    M)``) after every step in ``summaries["step_objectives"]`` and ``summaries(z, M)`` (a
    dict) added to each state; stops as step 5 says."""
    t0 = time.perf_counter()
    z, M = _mean_step(Y, w, np.asarray(z0, dtype=np.int64), lam3)
    J_old = J_of(z, M)
    for iteration in range(1, max_iter + 1):
        steps = [J_old]
        C = _Clusters(Y, w, z, M)
        changed = 0
        for move in moves:
            changed += move(z, C)
            steps.append(J_of(z, C.M))
        z, M = _mean_step(Y, w, z, lam3)
        J = J_of(z, M)
        steps.append(J)
        if merge is not None:
            z, M, J, merged = merge(z, M, J)
            changed += merged
            steps.append(J)
        converged = changed == 0 or (J_old - J) <= tol * abs(J_old)
        yield _state(iteration, z, M, J, changed, t0, converged, algorithm, steps, **summaries(z, M))
        if converged:
            return
        J_old = J


def _hdp_run(Y, w, gidx, G, order, lam1, lam2, lam3, kind, max_iter, tol, local_moves,
             algorithm="HardHDP", z0=None) -> Iterator[SweepState]:
    """The states of HardHDP's coordinate descent (steps 1-3 and 5 of the module docstring):
    the assignment sweep, Kulis & Jordan's local moves (``local_moves``), the mean step;
    each state's ``summaries["usage"]`` (G, K) counts the rows of every group in every cluster."""
    newcost = _new_cluster_costs(Y, w, lam3)
    moves = [lambda z, C: _hdp_sweep(Y, w, z, C, gidx, G, order, lam1, lam2, lam3, kind, newcost)]
    if local_moves:
        moves.append(lambda z, C: _hdp_local_moves(Y, w, z, C, gidx, G, lam1, lam2, lam3, kind))

    def usage(z, M):
        out = np.zeros((G, M.shape[0]), dtype=np.int64)
        np.add.at(out, (gidx, z), 1)
        return {"usage": out}

    return _descent(Y, w, np.zeros(Y.shape[0], dtype=np.int64) if z0 is None else z0, lam3,
                    lambda z, M: _hdp_J(Y, w, z, M, gidx, lam1, lam2, lam3, kind), moves, None, usage, max_iter, tol,
                    algorithm)


def _dpmeans_labels(Y, w, lam1, lam3, kind, max_iter, tol) -> np.ndarray:
    """The labels at the fixed point of DP-means with λ = ``lam1``, time ignored: the hard HDP
    with one group and ``lambda_local = 0``, rows in input order (the HDP-HMMs' ``init="dpmeans"``)."""
    T = Y.shape[0]
    for state in _hdp_run(Y, w, np.zeros(T, dtype=np.int64), 1, np.arange(T), lam1, 0.0, lam3, kind, max_iter, tol,
                          False):
        pass
    return np.array(state.labels)


# ------------------------------------------------------------------------ the estimators' shared plumbing
def _resolve_lambdas(est, Y, w, kind, model, local_factor: float):
    """(λ1, λ2): the estimator's, each None replaced by its default: :func:`default_lambdas` of
    ``model`` ("hdp" or "hmm"); ``model=None`` (the direct HDP-HMM) or a divergence other than
    squared Euclidean: ``(B, local_factor·B)``."""
    lam1 = _check_lambda(est.lambda_global, "lambda_global", "the penalty per global cluster")
    lam2 = _check_lambda(est.lambda_local, "lambda_local", "the penalty per extra local cluster")
    if lam1 is None or lam2 is None:
        if kind == "squared_euclidean" and model is not None:
            d1, d2 = _sva_lambdas(Y, model)
        else:
            d1, d2 = _fallback_lambdas(Y, w, kind, local_factor)
        lam1 = d1 if lam1 is None else lam1
        lam2 = d2 if lam2 is None else lam2
    return lam1, lam2


_UI = {
    "lambda_global": Control("λ global (penalty per cluster)", "float", None, 0.0, None, short="λg",
                             help="Empty: from the noise variance σ² of a quick MAP-DP fit "
                                  "(hard_common.default_lambdas); with a divergence other than squared Euclidean, "
                                  "the mean divergence of a row from the grand mean, B."),
    "lambda_local": Control("λ local (penalty per extra local cluster / successor)", "float", None, 0.0, None,
                            short="λl", help="Empty: from the noise variance σ² of a quick MAP-DP fit (hard_common."
                                 "default_lambdas); with another divergence, B/2 (HDP), 2B (HDP-HMM) or B (direct)."),
    "divergence": Control("Divergence", "choice", "squared_euclidean", options=DIVERGENCES),
}


class _HardModel(SweepEstimator):
    """The estimator plumbing of the three hard models: numeric input, J as the restart key (it
    never increases), the kernels' warm-up, and the checks and fitted attributes they share."""

    input = "numeric"
    restart_key = "objective"
    monotone = "objective"

    @classmethod
    def warm_up(cls) -> None:
        """Compile (or load) the numba kernels of the hard models (see ``estimator.py``)."""
        _hk.warm_up()

    def _check_params(self) -> tuple[str, float, dict]:
        """(divergence, λ3, the settings ``max_iter`` and ``tol``), checked."""
        kind = _check_divergence(self.divergence)
        lam3 = _check_lambda_mean(self.lambda_mean, kind)
        return kind, lam3, {"max_iter": check_int(self.max_iter, "max_iter", 1), "tol": check_nonneg(self.tol, "tol")}

    def _store(self, problem, state: SweepState, history) -> None:
        s = problem.settings
        self.cluster_centers_ = state.summaries["mean"]
        self.objective_ = state.objective
        self.lambda_global_, self.lambda_local_ = s["lam1"], s["lam2"]
        self.divergence_ = s["kind"]

    def _new_divergences(self, X) -> tuple[np.ndarray, np.ndarray]:
        """(w, D): the weight of every new row of X and its divergence from each fitted centre."""
        check_is_fitted(self)
        Y, w = _prepare(X, self.divergence_, self.name, self, reset=False)
        return w, divergence(Y, self.cluster_centers_, self.divergence_)
