r"""Small-variance-asymptotic ("hard") HDP mixture and HDP-HMM: :class:`HardHDP`, :class:`HardHDPHMM`.

Sources (see ``shared/OTHER-SYSTEMS.md`` §3 for the corrected objectives and errata H1-H9):

* HSJ: Huggins, "small-variance asymptotics for the HDP and the HDP-HMM" (derivation notes),
  eq 19 (hard HDP mixture) and eq 29 (hard HDP-HMM, "combinatorial" form).
* Kulis & Jordan (2012), ICML, Algorithm 2 (hard Gaussian HDP, "HDP-means"), same fixed points.
* EJS: Raykov, Boukouvalas & Little (2016), Electronic Journal of Statistics, §4, eqs 4.1-4.3
  and Appendix C (Bregman divergences, after Banerjee et al. 2005 and Jiang, Kulis & Jordan
  2012), and eq 6.8 (the same HDP-HMM objective, reparameterised).

Objectives (``lambda_global`` = HSJ λ1, ``lambda_local`` = HSJ λ2, ``lambda_mean`` = HSJ λ3):

.. math::

   J_{HDP}(z,\mu) = \sum_{i,j} D(y_{ij}, \mu_{z_{ij}}) + \lambda_1 (K-1)
                    + \lambda_2 \sum_i \max(m_i - 1, 0) + \lambda_3 \sum_k \lVert\mu_k\rVert^2

   J_{comb}(z,\mu) = \sum_t D(y_t, \mu_{z_t}) + \lambda_1 (K-1)
                    + \lambda_2 \sum_i \max(s_i - 1, 0) + \lambda_3 \sum_i \lVert\mu_i\rVert^2

``m_i`` is the number of distinct global clusters used by group i, ``s_i`` the number of
distinct successors of state i. The ``max(., 0)`` is erratum H5 (an empty restaurant pays
nothing); for the HDP mixture it only matters while a group is momentarily empty during a
sweep (every group has at least one row), but it is what makes a one-row group free of the
local penalty, hence the "every row its own group = DP-means with λ1" reduction.

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

Prediction (the papers have none): :meth:`HardHDP.predict` gives every new row its nearest
fitted centre; :meth:`HardHDPHMM.predict` labels new sequences by exact Viterbi over the
fitted states, eq 29's successor penalty charged relative to the fitted successor sets.

Also here (OTHER-SYSTEMS §3.1(c),(d)): :class:`HardHDPHMMDirect`, the "direct" objective of
HSJ eq 36 (π and β kept, α → ∞; alternating exact π, β, Viterbi and μ steps), and
:func:`asymp_ihmm_objective`, Roychowdhury et al.'s objective (EJS eq 6.9), evaluated only.

The per-row loops (the assignment sweeps of both models, HardHDP's local moves) are numba
kernels (:mod:`mapdp_core._hdp_kernels`) that keep NumPy's and scipy's arithmetic, so the labels
and objectives are those of the former Python loops (kept in ``tests/test_hdp.py`` as twins and
compared call by call); the HMM's merges price each candidate from per-state pieces (see
``_hmm_merges``). One sweep costs O(N·K·D). Measured (2 shared cores, numba cache warm; the
former Python code in brackets): HardHDP, mathachieve's 7185 × 2 rows in 160 groups, K = 39:
0.20 s (2.8 s); on EJS Table 4's 4000 × 3 sequence, HardHDPHMM 0.31 s (5.2 s) and
HardHDPHMMDirect 0.91 s (3.3 s; now mostly its merges). The kernels compile at their first
use in about 11.5 s, then load from numba's disk cache in about 0.45 s (``warm_up``).
"""
from __future__ import annotations

import math
import numbers
import time
from collections.abc import Iterator

import numpy as np
from scipy.special import rel_entr
from sklearn.utils.validation import check_is_fitted

from . import _hdp_kernels as _hk
from ._validation import as_data, check_bool, check_choice, check_int, check_nonneg
from .estimator import Control, Problem, SweepEstimator
from .state import SweepState

__all__ = ["HardHDP", "HardHDPHMM", "HardHDPHMMDirect", "DIVERGENCES", "divergence", "hdp_objective",
           "hdp_hmm_objective", "hdp_hmm_direct_objective", "asymp_ihmm_objective", "default_lambdas",
           "default_direct_params"]

DIVERGENCES = ("squared_euclidean", "poisson", "bernoulli", "multinomial")

#: Default penalties as multiples of the data's Bregman information B (the mean divergence of
#: a row from the overall centre; for squared Euclidean, the trace of the covariance, i.e.
#: "variance × D"). See :func:`default_lambdas`.
DEFAULT_GLOBAL_FACTOR = 1.0
DEFAULT_LOCAL_FACTOR = 0.5      # HardHDP: per extra local cluster of a group
DEFAULT_SUCCESSOR_FACTOR = 2.0  # HardHDPHMM: per extra successor of a state


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


def default_lambdas(X, divergence: str = "squared_euclidean", model: str = "hdp") -> tuple[float, float]:
    r"""The data-driven ``(lambda_global, lambda_local)`` used when they are None.

    ``lambda_global = B``, where ``B`` is the Bregman information of the data, the mean
    divergence of a row from the overall centre (for the squared Euclidean distance: the
    trace of the covariance, "variance × D"; for multinomial rows, weighted by their
    totals); ``lambda_local = B/2`` for ``model="hdp"`` and ``2B`` for ``model="hmm"``.
    In one group the DP-means threshold is then ``λ1 + λ2 = 1.5 B``: a row opens a cluster
    when it is farther from every centre than 1.5 average rows are from the grand mean.

    Measured (DP-means threshold c·B, one group; K found for c = 0.5, 1, 1.5, 2, 3):
    three clusters 8 apart, σ = 1, N = 300: 4, 4, 3, 3, 1; sklearn ``make_blobs`` (4 centres,
    σ = 0.7, box ±15, 3 seeds): (6,4,4), (4,3,3), (3,2,3), (3,2,3), (1,2,1); one spherical
    Gaussian (N = 300): D = 2 → 22, 14, 11, 8, 6 and D = 5 → 67, 32, 17, 10, 2. So 1.5 B finds
    well-separated clusters whose spread dominates the variance, but over-splits a single
    blob (any fixed multiple of the variance does, since the farthest rows of a blob lie
    several variances from its mean) and merges clusters that are close relative to the
    overall spread. HMM (sticky 3-state sequence below, 5 seeds, λ1 = B): λ2 = B/2 → K = 4-6
    (NMI 0.74-0.91), B → 4-6, 2B → 3 in 4 of 5 (NMI 0.84-1.0), 4B → 3 in 5 of 5 (≥ 0.97).
    For 0/1 data the rows' divergences from the grand mean are nearly all equal to B, so
    the default gives K = 1: give the lambdas. These are starting points, not a model
    choice: for a target K search lambda as :func:`~mapdp_core.dpmeans_lambda_for_k` does.
    """
    kind = _check_divergence(divergence)
    Y, w = _prepare(X, kind, "HardHDP")
    model = check_choice(model, "model", ("hdp", "hmm"))
    B = bregman_information(Y, w, kind)
    if not B > 0:
        B = 1.0  # every row identical: any positive penalty gives one cluster
    local = DEFAULT_LOCAL_FACTOR if model == "hdp" else DEFAULT_SUCCESSOR_FACTOR
    return DEFAULT_GLOBAL_FACTOR * B, local * B


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
    ks = np.unique(z)
    pairs = np.unique(gidx.astype(np.int64) * (int(z.max()) + 1) + z)
    m = np.bincount(pairs // (int(z.max()) + 1))
    return (_fit_term(Y, w, z, M, kind) + lam1 * (len(ks) - 1) + lam2 * np.maximum(m - 1, 0).sum()
            + lam3 * float((M[ks] ** 2).sum()))


def _successor_counts(z, nxt, K) -> np.ndarray:
    t = np.flatnonzero(nxt >= 0)
    pairs = np.unique(z[t] * K + z[nxt[t]])
    return np.bincount(pairs // K, minlength=K)


def _hmm_J(Y, w, z, M, nxt, lam1, lam2, lam3, kind) -> float:
    K = int(z.max()) + 1
    s = _successor_counts(z, nxt, K)
    ks = np.unique(z)
    return (_fit_term(Y, w, z, M, kind) + lam1 * (len(ks) - 1) + lam2 * np.maximum(s - 1, 0).sum()
            + lam3 * float((M[ks] ** 2).sum()))


def hdp_objective(X, labels, groups=None, *, lambda_global, lambda_local, lambda_mean=0.0,
                  divergence="squared_euclidean") -> float:
    """J_HDP (HSJ eq 19, H5) of ``labels`` with every centre at its optimum S_k/(W_k + λ3)."""
    kind = _check_divergence(divergence)
    Y, w = _prepare(X, kind, "HardHDP")
    _, gidx = _group_index(groups, Y.shape[0])
    z = _as_labels(labels, Y.shape[0])
    M = _optimal_means(Y, w, z, int(z.max()) + 1, _check_lambda_mean(lambda_mean, kind))
    return _hdp_J(Y, w, z, M, gidx, check_nonneg(lambda_global, "lambda_global"),
                  check_nonneg(lambda_local, "lambda_local"), float(lambda_mean), kind)


def hdp_hmm_objective(X, labels, lengths=None, *, lambda_global, lambda_local, lambda_mean=0.0,
                      divergence="squared_euclidean") -> float:
    """J_comb (HSJ eq 29 with H5) of the state sequence ``labels``, centres at their optimum."""
    kind = _check_divergence(divergence)
    Y, w = _prepare(X, kind, "HardHDPHMM")
    _, nxt = _neighbours(lengths, Y.shape[0])
    z = _as_labels(labels, Y.shape[0])
    M = _optimal_means(Y, w, z, int(z.max()) + 1, _check_lambda_mean(lambda_mean, kind))
    return _hmm_J(Y, w, z, M, nxt, check_nonneg(lambda_global, "lambda_global"),
                  check_nonneg(lambda_local, "lambda_local"), float(lambda_mean), kind)


def _transition_counts(z, nxt, K) -> np.ndarray:
    """N (K, K): N[i, j] = number of steps t -> t+1 inside a sequence with z_t = i, z_{t+1} = j."""
    t = np.flatnonzero(nxt >= 0)
    N = np.zeros((K, K), dtype=np.int64)
    np.add.at(N, (z[t], z[nxt[t]]), 1)
    return N


def asymp_ihmm_objective(X, labels, *, lam, lambda_local, lambda_global, lengths=None,
                         divergence="squared_euclidean") -> float:
    r"""Roychowdhury, Jiang & Kulis's (2013) asymp-iHMM objective as printed in EJS eq 6.9,
    read with the indicators ``[z_t = k]`` that the print omits (erratum H7):

    .. math::

       J_{asymp}(z) = \sum_t w_t D(y_t, \mu_{z_t})
                      - \lambda \sum_{t \ge 2} \log \frac{N_{z_{t-1} z_t}}{N_{z_{t-1} \cdot}}
                      + \lambda_{local} \sum_p K_p^{local} + \lambda_{global} K

    ``N_{ij}`` counts the transitions i -> j and ``N_{i·}`` all transitions out of i; the sum
    over t, and the counts, stop at the ``lengths`` bounds (a sequence's first step has no
    transition term). ``K_p^local`` is the number of distinct successors of state p (0 for a
    state that is only ever last in its sequence), ``K`` the number of distinct labels, and
    every centre ``μ_k`` is its cluster's (weighted) mean. ``lam`` = EJS λ, ``lambda_local``
    = EJS λ1, ``lambda_global`` = EJS λ2. The transition term is ``lam·Σ_i N_{i·}·H_i``,
    ``H_i`` the entropy of row i of the empirical transition matrix ``N_{ij}/N_{i·}``, hence 0
    for a chain in which every state always moves to the same successor. With ``lam = 0`` it
    is :func:`hdp_hmm_objective` with ``lambda_global + lambda_local`` as its global and
    ``lambda_local`` as its local penalty, plus the constant ``lambda_global + lambda_local``
    (when every state has a successor; H5 otherwise).

    Evaluation only: the asymp-iHMM *algorithm* ("dynamic programming plus new states") is in
    Roychowdhury et al. (2013), which is not among the project's papers (OTHER-SYSTEMS
    §3.1(d), 3.2(d)), so none is implemented. Relabelling the states does not change it.
    """
    kind = _check_divergence(divergence)
    Y, w = _prepare(X, kind, "asymp-iHMM")
    _, nxt = _neighbours(lengths, Y.shape[0])
    z = _as_labels(labels, Y.shape[0])
    K = int(z.max()) + 1
    lam = check_nonneg(lam, "lam")
    lam_l = check_nonneg(lambda_local, "lambda_local")
    lam_g = check_nonneg(lambda_global, "lambda_global")
    M = _optimal_means(Y, w, z, K, 0.0)
    N = _transition_counts(z, nxt, K).astype(float)
    rows = N.sum(axis=1, keepdims=True)
    used = N > 0
    trans = -float((N[used] * np.log((N / np.where(rows > 0, rows, 1.0))[used])).sum())
    return _fit_term(Y, w, z, M, kind) + lam * trans + lam_l * float(used.sum()) + lam_g * K


def _as_labels(labels, N) -> np.ndarray:
    z = np.asarray(labels)
    if z.shape != (N,) or not np.issubdtype(z.dtype, np.integer) or (z < 0).any():
        raise ValueError(f"labels must be {N} non-negative whole numbers, one per row.")
    return np.unique(z, return_inverse=True)[1].astype(np.int64)


# ------------------------------------------------------------------------ groups, sequences
def _group_index(groups, N: int) -> tuple[list, np.ndarray]:
    """(group ids in order of first appearance, group index of every row)."""
    if groups is None:
        return [0], np.zeros(N, dtype=np.int64)
    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__"):
        raise ValueError(f"groups must be a sequence with one group id per row of X ({N} rows), got {groups!r}.")
    arr = np.asarray(groups, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"groups must be one-dimensional (one group id per row of X), got shape {arr.shape}.")
    if arr.shape[0] != N:
        raise ValueError(f"groups has {arr.shape[0]} entries but X has {N} rows; give one group id per row.")
    ids, index, gidx = [], {}, np.empty(N, dtype=np.int64)
    for n, g in enumerate(list(groups)):
        if isinstance(g, np.generic):
            g = g.item()
        try:
            code = index.get(g)
        except TypeError:
            raise ValueError(f"every group id must be hashable (a number, a string, ...); row {n} has {g!r}.") from None
        if isinstance(g, float) and math.isnan(g):
            raise ValueError(f"groups has a missing id (NaN) at row {n}; give every row a group.")
        if code is None:
            code = index[g] = len(ids)
            ids.append(g)
        gidx[n] = code
    return ids, gidx


def _neighbours(lengths, T: int) -> tuple[np.ndarray, np.ndarray]:
    """(previous, next) time step of every row within its sequence, -1 at the ends."""
    if lengths is None:
        lens = [T]
    else:
        if isinstance(lengths, (str, bytes)) or not hasattr(lengths, "__len__"):
            raise ValueError(f"lengths must be a sequence of positive whole numbers summing to {T}, got {lengths!r}.")
        lens = []
        for v in lengths:
            if isinstance(v, np.generic):
                v = v.item()
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"lengths must hold positive whole numbers (one per sequence), got {v!r}.")
            lens.append(int(v))
        if sum(lens) != T:
            raise ValueError(f"lengths sum to {sum(lens)} but X has {T} rows; the sequences must cover X exactly.")
    prv = np.arange(T, dtype=np.int64) - 1
    nxt = np.arange(T, dtype=np.int64) + 1
    start = 0
    for n in lens:
        prv[start] = -1
        nxt[start + n - 1] = -1
        start += n
    return prv, nxt


def _sequence_lengths(lengths, T: int) -> list:
    """The validated sequence lengths (None: one sequence of T steps)."""
    prv, _ = _neighbours(lengths, T)
    return np.diff(np.append(np.flatnonzero(prv < 0), T)).tolist()


def _viterbi(E, A, lengths) -> tuple[np.ndarray, float]:
    """Exact minimum of ``Σ_t E[t, z_t] + Σ_{t≥2} A[z_{t-1}, z_t]`` over all label paths
    (transitions only inside each sequence of ``lengths``; the first step of a sequence costs
    only its emission), by dynamic programming in O(T·K²). Ties go to the lowest index (in
    the last state and in every back-pointer). Returns (labels, minimum)."""
    E = np.asarray(E, dtype=float)
    A = np.asarray(A, dtype=float)
    T, K = E.shape
    z = np.empty(T, dtype=np.int64)
    cols = np.arange(K)
    total = 0.0
    start = 0
    for n in lengths:
        back = np.empty((n, K), dtype=np.int64)
        cost = E[start].copy()
        for t in range(1, n):
            cand = cost[:, None] + A  # (previous, next)
            back[t] = np.argmin(cand, axis=0)
            cost = cand[back[t], cols] + E[start + t]
        k = int(np.argmin(cost))
        total += float(cost[k])
        z[start + n - 1] = k
        for t in range(n - 1, 0, -1):
            k = int(back[t, k])
            z[start + t - 1] = k
        start += n
    return z, total


def _path_cost(E, A, z, nxt) -> float:
    t = np.flatnonzero(nxt >= 0)
    return float(E[np.arange(len(z)), z].sum() + A[z[t], z[nxt[t]]].sum())


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


def _compact(z, M):
    used, z = np.unique(z, return_inverse=True)
    return z.astype(np.int64), M[used]


def _state(iteration, z, M, J, changed, t0, converged, algorithm, steps, **extra):
    K = M.shape[0]
    summaries = {"mean": M.copy(), "covariance": {}, "proportions": {}, "step_objectives": steps}
    summaries.update(extra)
    return SweepState(iteration=iteration, labels=z, n_clusters=K, objective=float(J), neg_log_joint=math.nan,
                      n_changed=int(changed), cluster_sizes=np.bincount(z, minlength=K), summaries=summaries,
                      elapsed=time.perf_counter() - t0, converged=converged, algorithm=algorithm)


# ------------------------------------------------------------------------ hard HDP
def _kernel_args(Y, w, newcost=None):
    """Y, w (and newcost) as the kernels take them (C-contiguous float64: one compiled
    signature)."""
    out = (np.ascontiguousarray(Y, dtype=np.float64), np.ascontiguousarray(w, dtype=np.float64))
    if newcost is not None:
        out += (np.ascontiguousarray(newcost, dtype=np.float64),)
    return out


def _hdp_sweep(Y, w, z, C: _Clusters, gidx, G, order, lam1, lam2, lam3, kind, newcost) -> int:
    """One assignment sweep (OTHER-SYSTEMS 3.2(a) step 2), in place; returns rows changed.
    The loop is the numba kernel :func:`~mapdp_core._hdp_kernels.hdp_sweep` (``z`` must be a
    C-contiguous int64 array: it is written in place); C grows there."""
    Y, w, newcost = _kernel_args(Y, w, newcost)
    changed, C.K, C.M, C.count = _hk.hdp_sweep(
        Y, w, z, C.M, C.count, int(C.K), np.ascontiguousarray(gidx, dtype=np.int64), int(G),
        np.ascontiguousarray(order, dtype=np.int64), float(lam1), float(lam2), float(lam3), _hk.KIND_CODES[kind],
        newcost)
    return int(changed)


def _hdp_local_moves(Y, w, z, C: _Clusters, gidx, G, lam1, lam2, lam3, kind) -> int:
    """Kulis & Jordan's local-cluster moves (3.2(a) step 3), in place; returns rows changed
    (the numba kernel :func:`~mapdp_core._hdp_kernels.hdp_local_moves`)."""
    Y, w = _kernel_args(Y, w)
    changed, C.K, C.M, C.count = _hk.hdp_local_moves(
        Y, w, z, C.M, C.count, int(C.K), np.ascontiguousarray(gidx, dtype=np.int64), int(G), float(lam1),
        float(lam2), float(lam3), _hk.KIND_CODES[kind])
    return int(changed)


def _hdp_run(Y, w, gidx, G, order, lam1, lam2, lam3, kind, max_iter, tol, local_moves,
             algorithm="HardHDP", z0=None) -> Iterator[SweepState]:
    t0 = time.perf_counter()
    N = Y.shape[0]
    z = np.zeros(N, dtype=np.int64) if z0 is None else np.asarray(z0, dtype=np.int64).copy()
    z, _ = _compact(z, np.zeros((int(z.max()) + 1, 1)))
    M = _optimal_means(Y, w, z, int(z.max()) + 1, lam3)
    newcost = w * lam3 / (w + lam3) * (Y ** 2).sum(axis=1) if lam3 > 0 else np.zeros(N)
    J_old = _hdp_J(Y, w, z, M, gidx, lam1, lam2, lam3, kind)
    for iteration in range(1, max_iter + 1):
        steps = [J_old]
        C = _Clusters(Y, w, z, M)
        changed = _hdp_sweep(Y, w, z, C, gidx, G, order, lam1, lam2, lam3, kind, newcost)
        steps.append(_hdp_J(Y, w, z, C.M, gidx, lam1, lam2, lam3, kind))
        if local_moves:
            changed += _hdp_local_moves(Y, w, z, C, gidx, G, lam1, lam2, lam3, kind)
            steps.append(_hdp_J(Y, w, z, C.M, gidx, lam1, lam2, lam3, kind))
        z, _ = _compact(z, C.M[:C.K])
        M = _optimal_means(Y, w, z, int(z.max()) + 1, lam3)
        J = _hdp_J(Y, w, z, M, gidx, lam1, lam2, lam3, kind)
        steps.append(J)
        converged = changed == 0 or (J_old - J) <= tol * abs(J_old)
        usage = np.zeros((G, M.shape[0]), dtype=np.int64)
        np.add.at(usage, (gidx, z), 1)
        yield _state(iteration, z, M, J, changed, t0, converged, algorithm, steps, usage=usage)
        if converged:
            return
        J_old = J


def _warm_up_kernels() -> None:
    """Compile (or load from numba's disk cache) the three kernels of ``_hdp_kernels`` on a
    tiny problem (about 11 s to compile on 2 cores, 0.4 s to load)."""
    X = np.random.default_rng(0).normal(size=(12, 2))
    HardHDP(1.0, 0.5).fit(X, np.arange(12) % 3)
    HardHDPHMM(1.0, 1.0, merges=False).fit(X)


def _resolve_lambdas(est, Y, w, kind, local_factor):
    lam1 = _check_lambda(est.lambda_global, "lambda_global", "the penalty per global cluster")
    lam2 = _check_lambda(est.lambda_local, "lambda_local", "the penalty per extra local cluster")
    if lam1 is None or lam2 is None:
        B = bregman_information(Y, w, kind)
        B = B if B > 0 else 1.0
        lam1 = DEFAULT_GLOBAL_FACTOR * B if lam1 is None else lam1
        lam2 = local_factor * B if lam2 is None else lam2
    return lam1, lam2


_UI = {
    "lambda_global": Control("λ global (penalty per cluster)", "float", None, 0.0, None, short="λg",
                             help="Empty: the mean divergence of a row from the grand mean."),
    "lambda_local": Control("λ local (penalty per extra local cluster / successor)", "float", None, 0.0, None,
                            short="λl", help="Empty: B/2 (HDP) or 2B (HDP-HMM), B the default global penalty."),
    "divergence": Control("Divergence", "choice", "squared_euclidean", options=DIVERGENCES),
}


class _ExtraArgMixin:
    """Carries the extra ``fit`` argument (groups, lengths) to ``_validate`` (called by the base
    class with X only) without keeping it on the estimator afterwards."""

    _extra_name = ""

    def _with_extra(self, value, call):
        self._extra_arg = value
        try:
            return call()
        finally:
            del self._extra_arg

    def _extra(self):
        return getattr(self, "_extra_arg", None)


class _LengthsMixin(_ExtraArgMixin):
    """``fit``, ``fit_predict`` and ``from_states`` of the sequence models, which take
    ``lengths`` (the sizes of consecutive sequences in X; None: one sequence)."""

    def fit(self, X, lengths=None):
        """Fit on X (T, D), one row per time step; ``lengths`` splits X into sequences."""
        return self._with_extra(lengths, lambda: SweepEstimator.fit(self, X))

    def fit_predict(self, X, lengths=None):
        return self.fit(X, lengths).labels_

    def from_states(self, X, states, restart_values=None, lengths=None):
        return self._with_extra(lengths, lambda: SweepEstimator.from_states(self, X, states, restart_values))


class HardHDP(_ExtraArgMixin, SweepEstimator):
    r"""Hard HDP mixture (HSJ eq 19; Kulis & Jordan 2012, Algorithm 2): groups of rows share
    global clusters; each group pays ``lambda_local`` for every cluster it uses beyond its first.

    Minimises J_HDP of the module docstring by the coordinate descent described there. Start:
    one cluster at the (shrunk) grand mean, as DP-means.

    Parameters
    ----------
    lambda_global : float >= 0 or None
        HSJ λ1 / Kulis-Jordan λ_g: penalty per global cluster (divergence units). None: the
        data's Bregman information B (:func:`default_lambdas`).
    lambda_local : float >= 0 or None
        HSJ λ2 / Kulis-Jordan λ_l: penalty per local cluster beyond the first in each group.
        None: B/2.
    lambda_mean : float >= 0, default 0
        HSJ λ3: ridge penalty on the centres (a Gaussian prior with σ0² = σ²/λ3), squared
        Euclidean only; the centres are ``S_k/(n_k + λ3)``.
    divergence : {"squared_euclidean", "poisson", "bernoulli", "multinomial"}
    max_iter : int, default 100
    tol : float, default 1e-9
        Stop when a sweep changes no label or lowers J by at most ``tol·|J|``.
    local_moves : bool, default True
        Also move whole (group, cluster) blocks after each sweep (Kulis & Jordan).
    random_state : ignored (kept for the library's common interface): the algorithm is
        deterministic, rows are visited group by group in input order.

    Attributes
    ----------
    labels_, n_clusters_, cluster_sizes_, cluster_centers_ (K, D), objective_,
    objective_history_ (J after every sweep, never increasing), n_iter_, converged_,
    groups_ : list, the group ids in order of first appearance;
    group_usage_ : ndarray (G, K), rows of group i in cluster k;
    n_local_clusters_ : ndarray (G,), m_i;
    lambda_global_, lambda_local_ : the penalties used (resolved defaults).
    """

    name = "Hard HDP"
    input = "numeric"
    restart_key = "objective"
    monotone = "objective"
    ui = dict(_UI)

    def __init__(self, lambda_global=None, lambda_local=None, lambda_mean=0.0, divergence="squared_euclidean",
                 max_iter=100, tol=1e-9, local_moves=True, random_state=None):
        self.lambda_global = lambda_global
        self.lambda_local = lambda_local
        self.lambda_mean = lambda_mean
        self.divergence = divergence
        self.max_iter = max_iter
        self.tol = tol
        self.local_moves = local_moves
        self.random_state = random_state

    @classmethod
    def warm_up(cls) -> None:
        """Compile (or load) the numba kernels of this module (see ``estimator.py``)."""
        _warm_up_kernels()

    def fit(self, X, groups=None):
        """Fit on X (N, D) with ``groups`` (one hashable id per row; None: one group)."""
        return self._with_extra(groups, lambda: SweepEstimator.fit(self, X))

    def fit_predict(self, X, groups=None):
        return self.fit(X, groups).labels_

    def iter_sweeps(self, X, groups=None, *, restart: int = 0, order=None):
        """The generator of the states of one run (validated now); ``order`` reorders the rows
        within each group (groups are always visited in order of first appearance)."""
        return self._with_extra(groups, lambda: SweepEstimator.iter_sweeps(self, X, restart=restart, order=order))

    def from_states(self, X, states, restart_values=None, groups=None):
        return self._with_extra(groups, lambda: SweepEstimator.from_states(self, X, states, restart_values))

    def _validate(self, X) -> Problem:
        kind = _check_divergence(self.divergence)
        lam3 = _check_lambda_mean(self.lambda_mean, kind)
        settings = {"max_iter": check_int(self.max_iter, "max_iter", 1), "tol": check_nonneg(self.tol, "tol"),
                    "local_moves": check_bool(self.local_moves, "local_moves")}
        Y, w = _prepare(X, kind, "Hard HDP", self)
        ids, gidx = _group_index(self._extra(), Y.shape[0])
        lam1, lam2 = _resolve_lambdas(self, Y, w, kind, DEFAULT_LOCAL_FACTOR)
        settings.update(kind=kind, lam1=lam1, lam2=lam2, lam3=lam3, groups=ids, gidx=gidx)
        return Problem((Y, w), Y.shape[0], settings)

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        s = problem.settings
        Y, w = problem.data
        gidx = s["gidx"]
        order = np.arange(problem.n_rows, dtype=np.int64) if order is None else np.asarray(order, dtype=np.int64)
        order = order[np.argsort(gidx[order], kind="stable")]
        return _hdp_run(Y, w, gidx, len(s["groups"]), order, s["lam1"], s["lam2"], s["lam3"], s["kind"],
                        s["max_iter"], s["tol"], s["local_moves"], self.name)

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        s = problem.settings
        self.cluster_centers_ = state.summaries["mean"]
        self.objective_ = state.objective
        self.groups_ = list(s["groups"])
        self.group_usage_ = state.summaries["usage"]
        self.n_local_clusters_ = (self.group_usage_ > 0).sum(axis=1)
        self.lambda_global_, self.lambda_local_ = s["lam1"], s["lam2"]
        self.divergence_ = s["kind"]

    def predict(self, X):
        """The fitted cluster of smallest divergence ``D(y, μ_k)`` of every row of X (for the
        squared Euclidean distance, the nearest centre; ties go to the lowest index).

        Kept simple on purpose: new rows never open clusters and no group is read, so the
        local penalty is not charged (with a group it would add ``lambda_local`` to every
        cluster that group has not used yet; the nearest centre is the choice for a row whose
        group is new or unknown)."""
        check_is_fitted(self)
        Y, _ = _prepare(X, self.divergence_, self.name, self, reset=False)
        return np.argmin(divergence(Y, self.cluster_centers_, self.divergence_), axis=1).astype(np.int64)


# ------------------------------------------------------------------------ hard HDP-HMM
def _hmm_sweep(Y, w, z, C: _Clusters, prv, nxt, order, lam1, lam2, lam3, kind, newcost) -> int:
    """One assignment sweep of OTHER-SYSTEMS 3.2(b), in place; returns time steps changed (the
    numba kernel :func:`~mapdp_core._hdp_kernels.hmm_sweep`)."""
    Y, w, newcost = _kernel_args(Y, w, newcost)
    changed, C.K, C.M, C.count = _hk.hmm_sweep(
        Y, w, z, C.M, C.count, int(C.K), np.ascontiguousarray(prv, dtype=np.int64),
        np.ascontiguousarray(nxt, dtype=np.int64), np.ascontiguousarray(order, dtype=np.int64), float(lam1),
        float(lam2), float(lam3), _hk.KIND_CODES[kind], newcost)
    return int(changed)


def _hmm_merges(Y, w, z, M, J, nxt, lam1, lam2, lam3, kind, max_states=50):
    """Greedy merges of two states (not in the papers; added because the time-step sweep can
    only split): while some merge of states a < b, with the centres at their optimum, lowers
    J_comb, apply the best one. Skipped above ``max_states`` states. Returns (labels,
    centres, J, rows relabelled). ``z`` holds the labels 0..K-1, all used, and ``M`` their
    optimal centres (``_optimal_means``), as ``_hmm_run`` passes them.

    A candidate's J_comb is assembled from pieces instead of calling ``_hmm_J`` on the merged
    labels: the fit terms of the states the merge leaves alone are kept from the pass's start
    (their rows and centres do not change), and only the merged state's centre and fit term
    are computed, with the NumPy operations ``_optimal_means`` and ``_fit_term`` apply to it
    (``np.add.at`` and ``bincount`` over its rows in time order, the same sums), then added up
    in the same order; the successor counts come from the merged transition counts. So every
    candidate's J is the one ``_hmm_J`` gives, to the bit, at O((n_a + n_b)·D + K²) instead of
    O(T·K·D) (``tests/test_hdp.py`` keeps the former loop as its twin)."""
    moved = 0
    D = Y.shape[1]
    while 1 < M.shape[0] <= max_states:
        K = M.shape[0]
        members = [np.flatnonzero(z == k) for k in range(K)]
        fit = [float((w[r] * divergence(Y[r], M[k][None], kind)[:, 0]).sum()) for k, r in enumerate(members)]
        N = _transition_counts(z, nxt, K)
        best = (J, None)
        for a in range(K):
            for b in range(a + 1, K):
                r = np.sort(np.concatenate([members[a], members[b]]))
                S = np.zeros((1, D))
                at = np.zeros(r.size, dtype=np.int64)
                np.add.at(S, at, w[r][:, None] * Y[r])
                W = np.bincount(at, weights=w[r], minlength=1)
                with np.errstate(invalid="ignore", divide="ignore"):
                    mu = S / (W + lam3)[:, None]
                total = 0.0
                for k in range(K):
                    if k == a:
                        total += float((w[r] * divergence(Y[r], mu, kind)[:, 0]).sum())
                    elif k != b:
                        total += fit[k]
                NN = N.copy()
                NN[a] += NN[b]
                NN[:, a] += NN[:, b]
                keep = np.arange(K) != b
                s = (NN[keep][:, keep] > 0).sum(axis=1)
                MM = M.copy()
                MM[a] = mu[0]
                MM = MM[keep]
                JJ = (total + lam1 * (K - 2) + lam2 * np.maximum(s - 1, 0).sum()
                      + lam3 * float((MM ** 2).sum()))
                if JJ < best[0] - 1e-12 * abs(best[0]):
                    best = (JJ, (a, b))
        if best[1] is None:
            break
        a, b = best[1]
        zz = np.where(z == b, a, z)
        zz = np.where(zz > b, zz - 1, zz)
        moved += int((z == b).sum())
        J, z, M = best[0], zz, _optimal_means(Y, w, zz, K - 1, lam3)
    return z, M, J, moved


def _hmm_run(Y, w, prv, nxt, order, lam1, lam2, lam3, kind, max_iter, tol, z0,
             algorithm="HardHDPHMM", merges=True) -> Iterator[SweepState]:
    t0 = time.perf_counter()
    T = Y.shape[0]
    z, _ = _compact(np.asarray(z0, dtype=np.int64), np.zeros((int(np.max(z0)) + 1, 1)))
    M = _optimal_means(Y, w, z, int(z.max()) + 1, lam3)
    newcost = w * lam3 / (w + lam3) * (Y ** 2).sum(axis=1) if lam3 > 0 else np.zeros(T)
    J_old = _hmm_J(Y, w, z, M, nxt, lam1, lam2, lam3, kind)
    for iteration in range(1, max_iter + 1):
        steps = [J_old]
        C = _Clusters(Y, w, z, M)
        changed = _hmm_sweep(Y, w, z, C, prv, nxt, order, lam1, lam2, lam3, kind, newcost)
        steps.append(_hmm_J(Y, w, z, C.M, nxt, lam1, lam2, lam3, kind))
        z, _ = _compact(z, C.M[:C.K])
        M = _optimal_means(Y, w, z, int(z.max()) + 1, lam3)
        J = _hmm_J(Y, w, z, M, nxt, lam1, lam2, lam3, kind)
        steps.append(J)
        if merges:
            z, M, J, merged = _hmm_merges(Y, w, z, M, J, nxt, lam1, lam2, lam3, kind)
            changed += merged
            steps.append(J)
        converged = changed == 0 or (J_old - J) <= tol * abs(J_old)
        K = M.shape[0]
        t_all = np.flatnonzero(nxt >= 0)
        trans = np.zeros((K, K), dtype=np.int64)
        np.add.at(trans, (z[t_all], z[nxt[t_all]]), 1)
        yield _state(iteration, z, M, J, changed, t0, converged, algorithm, steps, transitions=trans)
        if converged:
            return
        J_old = J


class HardHDPHMM(_LengthsMixin, SweepEstimator):
    r"""Hard HDP-HMM (HSJ eq 29, "combinatorial", with erratum H5): every time step gets a
    state; states are clusters, and every distinct successor of a state beyond its first
    costs ``lambda_local``.

    Minimises J_comb of the module docstring by the sweep of OTHER-SYSTEMS 3.2(b): for each
    time step, remove it and its (at most two) transitions, cost(k) = D(y_t, μ_k) +
    λ2·Δ_k (Δ_k the change in Σ max(s_i-1, 0) after adding z_{t-1}→k and k→z_{t+1}, the
    self-edge counted once), new state λ1 + λ2·[s_{z_{t-1}} ≥ 1] + its centre cost (0 for a
    Bregman divergence); then the mean step. Transitions never cross the ``lengths`` bounds.

    Initialisation (``init``; the papers give none, H9): ``"dpmeans"`` (default) runs the hard
    HDP with one group and ``lambda_local = 0`` (DP-means with λ1 = ``lambda_global``,
    ignoring time) to its fixed point and starts the HMM sweeps from its labels; ``"one"``
    starts from one state at the grand mean. The states of the initial phase are not
    reported: ``objective_history_`` holds J_comb after every HMM sweep, never increasing.

    Merges (``merges=True``; not in the papers): after each mean step, while merging two
    states (centres re-optimised) lowers J_comb, the best merge is applied (up to 50 states).
    The time-step sweep can only split states, so without it a DP-means start that
    over-splits stays over-split.

    Measured on a sticky 3-state sequence (2-D, centres 6 apart, σ = 1, stay 0.95, T = 600,
    5 seeds; K and NMI): λ = (20, 40) or (20, 200): "one" freezes at K = 1 in 5 of 5 (from one
    state a new state pays λ1 + λ2 and every row is within that of the grand mean) while
    "dpmeans" + merges finds K = 3 (NMI 0.97-1.0); λ = (30, 10): "one" K = 3 (0.97-1.0),
    "dpmeans" K = 3-4 (0.90-0.98); λ = (20, 10): both K = 3-5 (0.79-0.98). Hence "dpmeans".

    Parameters
    ----------
    lambda_global, lambda_local, lambda_mean, divergence, max_iter, tol : as :class:`HardHDP`
        (``lambda_local`` penalises successors; defaults B and B/2).
    init : {"dpmeans", "one"}, default "dpmeans"
    merges : bool, default True
    random_state : ignored (deterministic; time steps are visited in order).

    Attributes
    ----------
    labels_ (one state per time step), n_clusters_, cluster_sizes_, cluster_centers_,
    objective_, objective_history_, n_iter_, converged_,
    transitions_ : ndarray (K, K) transition counts, n_successors_ : ndarray (K,),
    lengths_ : list of the sequence lengths, lambda_global_, lambda_local_.
    """

    name = "Hard HDP-HMM"
    input = "numeric"
    restart_key = "objective"
    monotone = "objective"
    ui = dict(_UI)

    def __init__(self, lambda_global=None, lambda_local=None, lambda_mean=0.0, divergence="squared_euclidean",
                 max_iter=100, tol=1e-9, init="dpmeans", merges=True, random_state=None):
        self.lambda_global = lambda_global
        self.lambda_local = lambda_local
        self.lambda_mean = lambda_mean
        self.divergence = divergence
        self.max_iter = max_iter
        self.tol = tol
        self.init = init
        self.merges = merges
        self.random_state = random_state

    @classmethod
    def warm_up(cls) -> None:
        """Compile (or load) the numba kernels of this module (see ``estimator.py``)."""
        _warm_up_kernels()

    def iter_sweeps(self, X, lengths=None, *, restart: int = 0, order=None):
        """The generator of the states of one run (validated now); ``order``: visiting order
        of the time steps (transitions always follow time)."""
        return self._with_extra(lengths, lambda: SweepEstimator.iter_sweeps(self, X, restart=restart, order=order))

    def _validate(self, X) -> Problem:
        kind = _check_divergence(self.divergence)
        lam3 = _check_lambda_mean(self.lambda_mean, kind)
        settings = {"max_iter": check_int(self.max_iter, "max_iter", 1), "tol": check_nonneg(self.tol, "tol"),
                    "init": check_choice(self.init, "init", ("dpmeans", "one")),
                    "merges": check_bool(self.merges, "merges")}
        Y, w = _prepare(X, kind, "Hard HDP-HMM", self)
        prv, nxt = _neighbours(self._extra(), Y.shape[0])
        lam1, lam2 = _resolve_lambdas(self, Y, w, kind, DEFAULT_SUCCESSOR_FACTOR)
        lengths = np.diff(np.append(np.flatnonzero(prv < 0), Y.shape[0])).tolist()
        settings.update(kind=kind, lam1=lam1, lam2=lam2, lam3=lam3, prv=prv, nxt=nxt, lengths=lengths)
        return Problem((Y, w), Y.shape[0], settings)

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        s = problem.settings
        Y, w = problem.data
        T = problem.n_rows
        order = np.arange(T, dtype=np.int64) if order is None else np.asarray(order, dtype=np.int64)
        z0 = np.zeros(T, dtype=np.int64)
        if s["init"] == "dpmeans":
            for state in _hdp_run(Y, w, z0, 1, np.arange(T), s["lam1"], 0.0, s["lam3"], s["kind"],
                                  s["max_iter"], s["tol"], False):
                pass
            z0 = np.array(state.labels)
        return _hmm_run(Y, w, s["prv"], s["nxt"], order, s["lam1"], s["lam2"], s["lam3"], s["kind"],
                        s["max_iter"], s["tol"], z0, self.name, s["merges"])

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        s = problem.settings
        self.cluster_centers_ = state.summaries["mean"]
        self.objective_ = state.objective
        self.transitions_ = state.summaries["transitions"]
        self.n_successors_ = (self.transitions_ > 0).sum(axis=1)
        self.lengths_ = list(s["lengths"])
        self.lambda_global_, self.lambda_local_ = s["lam1"], s["lam2"]
        self.divergence_ = s["kind"]

    def predict(self, X, lengths=None):
        r"""States of new sequences among the K fitted ones, by exact dynamic programming
        (Viterbi): the labels minimise

        .. math:: \sum_t w_t D(y_t, \mu_{z_t}) + \lambda_{local} \sum_{t \ge 2} [z_t \notin S(z_{t-1})]

        where ``S(j)`` is the fitted successor set of state j (``transitions_[j] > 0``): the
        cost of eq 29 relative to the fitted transitions, a transition that the fit already
        holds is free and any other costs ``lambda_local``. Choices (the papers have no
        prediction): no new state is opened (``lambda_global`` plays no part); a new
        transition is charged at every occurrence (the successor sets are not updated along
        the new sequences, which keeps the cost a Markov chain, so the Viterbi minimum is
        exact); a state with no fitted successor (only ever last in its sequences) pays for
        every transition out of it; the first step of each sequence is free. Transitions
        never cross the ``lengths`` bounds; ties go to the lowest state index."""
        check_is_fitted(self)
        Y, w = _prepare(X, self.divergence_, self.name, self, reset=False)
        E = w[:, None] * divergence(Y, self.cluster_centers_, self.divergence_)
        A = self.lambda_local_ * (self.transitions_ == 0).astype(float)
        return _viterbi(E, A, _sequence_lengths(lengths, Y.shape[0]))[0]


# ------------------------------------------------------------------------ "direct" hard HDP-HMM
#: Default ``zeta`` and ``lambda_local`` of :class:`HardHDPHMMDirect` as multiples of the data's
#: Bregman information B (``lambda_global`` = B as everywhere); see :func:`default_direct_params`.
DEFAULT_ZETA_FACTOR = 0.25
DEFAULT_KL_FACTOR = 1.0


def default_direct_params(X, divergence: str = "squared_euclidean") -> tuple[float, float, float]:
    """The data-driven ``(lambda_global, lambda_local, zeta)`` of :class:`HardHDPHMMDirect`
    used when they are None: ``(B, DEFAULT_KL_FACTOR·B, DEFAULT_ZETA_FACTOR·B)``, B the
    Bregman information of the data (see :func:`default_lambdas`). See the class for what was
    measured."""
    kind = _check_divergence(divergence)
    Y, w = _prepare(X, kind, "HardHDPHMMDirect")
    B = bregman_information(Y, w, kind)
    B = B if B > 0 else 1.0
    return DEFAULT_GLOBAL_FACTOR * B, DEFAULT_KL_FACTOR * B, DEFAULT_ZETA_FACTOR * B


def _direct_pi(N, beta, zeta, lam2) -> np.ndarray:
    r"""The π step, exact: row i of the result minimises, over the (K+1)-simplex,

    ``f(π_i) = -ζ Σ_j N_ij log π_ij + λ2 KL(β‖π_i) = -Σ_j (ζ N_ij + λ2 β_j) log π_ij + const``

    (N_{i,K+1} = 0: no transition goes to the leftover state). A sum ``-Σ_j a_j log π_j``
    with ``a ≥ 0`` is convex on the simplex and the Lagrange condition ``a_j/π_j = ν`` gives
    its minimiser ``π_j = a_j/Σ a``: ``π_ij = (ζ N_ij + λ2 β_j)/(ζ N_i· + λ2)`` (Σ β = 1). A
    row with ``ζ N_i· + λ2 = 0`` does not enter J; it is set to β. An entry that underflows to
    0 where β_j > 0 and λ2 > 0 (a tiny λ2) is set to the smallest normal float, so the KL
    stays finite (J changes by less than 1e-300)."""
    K = N.shape[0]
    Ne = np.zeros((K, K + 1))
    Ne[:, :K] = N
    num = zeta * Ne + lam2 * beta[None, :]
    den = zeta * Ne.sum(axis=1) + lam2
    pi = np.repeat(beta[None, :], K, axis=0)
    ok = den > 0
    pi[ok] = num[ok] / den[ok, None]
    if lam2 > 0:
        pi[(pi == 0) & (beta[None, :] > 0)] = np.finfo(float).tiny
    return pi


def _direct_beta(pi, beta) -> np.ndarray:
    r"""The β step, exact: the minimiser over the (K+1)-simplex of ``Σ_{i≤K} KL(β‖π_i) =
    K Σ_j β_j log β_j - Σ_j β_j Σ_i log π_ij``. This is strictly convex (K times the negative
    entropy plus a linear term), and the Lagrange condition ``K(log β_j + 1) - Σ_i log π_ij +
    ν = 0`` gives ``β_j ∝ exp((1/K) Σ_i log π_ij) = Π_i π_ij^{1/K}``, the renormalised
    geometric mean of the rows (0 in a column where some π_ij = 0, where any β_j > 0 would
    make a KL infinite). If every column has a zero, β is kept (J is infinite anyway).

    Weights below 1e-250 are set to 0: the leftover column's weight decays geometrically
    along the alternation (see :class:`HardHDPHMMDirect`), and once subnormal, the π step's
    ``λ2 β_j/(ζ N_i· + λ2)`` underflows to 0 while β_j does not, an infinite KL; the change
    in J is below 1e-247."""
    with np.errstate(divide="ignore"):
        L = np.log(pi).mean(axis=0)
    top = L.max()
    if not np.isfinite(top):
        return beta
    b = np.exp(L - top)
    b /= b.sum()
    b[b < 1e-250] = 0.0
    return b / b.sum()


def _fit_pi_beta(N, beta, zeta, lam2, max_inner=500):
    """Alternate the exact π and β steps (block coordinate descent on the jointly convex
    ``-ζ Σ N log π + λ2 Σ_i KL(β‖π_i)``) until β moves by at most 1e-13 or ``max_inner``
    rounds; ends with a π step, so π is optimal for the β returned. With ``lambda_local = 0``
    β does not enter J and is kept."""
    pi = _direct_pi(N, beta, zeta, lam2)
    if lam2 == 0:
        return pi, beta
    for _ in range(max_inner):
        new = _direct_beta(pi, beta)
        done = float(np.abs(new - beta).max()) <= 1e-13
        beta = new
        pi = _direct_pi(N, beta, zeta, lam2)
        if done:
            break
    return pi, beta


def _transition_costs(pi, zeta) -> np.ndarray:
    """A (K, K): the cost ``-ζ log π_jk`` of a transition j -> k between represented states."""
    K = pi.shape[0]
    if zeta == 0:
        return np.zeros((K, K))
    with np.errstate(divide="ignore"):
        return -zeta * np.log(pi[:, :K])


def _direct_J(Y, w, z, M, beta, pi, nxt, zeta, lam1, lam2, lam3, kind) -> float:
    """J_dir (HSJ eq 36) with K = the number of rows of π (a state emptied by the Viterbi step
    still counts until it is dropped)."""
    K = pi.shape[0]
    J = _fit_term(Y, w, z, M, kind) + lam1 * K + lam3 * float((M ** 2).sum())
    if zeta > 0:
        N = _transition_counts(z, nxt, K)
        used = N > 0
        with np.errstate(divide="ignore"):
            J -= zeta * float((N[used] * np.log(pi[:, :K][used])).sum())
    if lam2 > 0:
        J += lam2 * float(rel_entr(beta[None, :], pi).sum())
    return J


def _drop_empty(z, M, beta, pi=None):
    """Remove the states no time step uses. Never increases J_dir: λ1·K falls; an empty
    state's row of π leaves the KL sum (a KL is ≥ 0); its column holds no transition, and
    adding its mass to the leftover column K+1 in β and in every π_i cannot increase a KL
    (log-sum inequality: merging two categories never increases a KL divergence); and its
    ``λ3 ||μ||²`` goes."""
    K = M.shape[0]
    used = np.bincount(z, minlength=K) > 0
    if used.all():
        return z, M, beta, pi
    keep = np.flatnonzero(used)
    beta2 = np.append(beta[keep], beta[K] + beta[:K][~used].sum())
    if pi is not None:
        rows = pi[keep]
        pi = np.column_stack([rows[:, keep], rows[:, K] + rows[:, :K][:, ~used].sum(axis=1)])
    return np.searchsorted(keep, z).astype(np.int64), M[keep], beta2, pi


def _check_step(steps, J, algorithm, what):
    prev = steps[-1]
    if J > prev + 1e-9 * (1.0 + abs(prev)) or (math.isnan(J) and not math.isnan(prev)):
        raise RuntimeError(f"internal error in {algorithm}: the {what} step raised the objective from {prev!r} "
                           f"to {J!r}; please report it.")
    steps.append(J)


class _DirectProblem:
    """The fixed pieces of one direct fit (data, sequence bounds, penalties)."""

    def __init__(self, Y, w, nxt, lengths, lam1, lam2, zeta, lam3, kind):
        self.Y, self.w, self.nxt, self.lengths = Y, w, nxt, lengths
        self.lam1, self.lam2, self.zeta, self.lam3, self.kind = lam1, lam2, zeta, lam3, kind

    def J(self, z, M, beta, pi) -> float:
        return _direct_J(self.Y, self.w, z, M, beta, pi, self.nxt, self.zeta, self.lam1, self.lam2, self.lam3,
                         self.kind)

    def refit(self, z, K, beta, max_inner=500):
        """(M, β, π) optimal for the labels z (μ exactly; β, π by the alternation from β)."""
        M = _optimal_means(self.Y, self.w, z, K, self.lam3)
        pi, beta = _fit_pi_beta(_transition_counts(z, self.nxt, K), beta, self.zeta, self.lam2, max_inner)
        return M, beta, pi


def _direct_merges(P: _DirectProblem, z, M, beta, pi, J, max_states=30):
    """Greedy merges of two states (as :class:`HardHDPHMM`'s; not in the papers): while some
    merge of states a < b, with μ, β, π re-optimised (β from the merged β, up to 100 rounds of
    the alternation), lowers J_dir, apply the best one. Skipped above ``max_states`` states."""
    moved = 0
    while 1 < M.shape[0] <= max_states:
        K = M.shape[0]
        best = (J, None)
        for a in range(K):
            for b in range(a + 1, K):
                zz = np.where(z == b, a, z)
                zz = np.where(zz > b, zz - 1, zz)
                bb = np.delete(beta, b)
                bb[a] += beta[b]
                MM, bb, pp = P.refit(zz, K - 1, bb, max_inner=100)
                JJ = P.J(zz, MM, bb, pp)
                if JJ < best[0] - 1e-12 * abs(best[0]):
                    best = (JJ, (zz, MM, bb, pp, int((z == b).sum())))
        if best[1] is None:
            break
        J, (z, M, beta, pi, n) = best[0], best[1]
        moved += n
    return z, M, beta, pi, J, moved


def _direct_propose(P: _DirectProblem, z, M, beta, pi, J, n_proposals):
    """The point-wise new-state proposal (the papers do not say how K grows; ours): the
    ``n_proposals`` time steps with the largest emission cost ``w_t D(y_t, μ_{z_t})`` are each
    tried alone in a new state K+1 (centre at its optimum ``w y/(w + λ3)``, the other centres
    re-optimised, β extended by a column of mass 1/(K+2) before renormalising, then up to 100
    rounds of the π/β alternation; a state the move empties is dropped). The best candidate
    is accepted only if its J_dir is lower than the current J (so J never increases);
    at most one new state per iteration. Returns (z, M, β, π, J, time steps moved)."""
    K = M.shape[0]
    T = len(z)
    cost = P.w * divergence(P.Y, M, P.kind)[np.arange(T), z]
    best = (J, None)
    for t in np.argsort(-cost, kind="stable")[:n_proposals]:
        if not cost[t] > 0:
            break
        zz = z.copy()
        zz[t] = K
        bb = np.concatenate([beta[:K], [1.0 / (K + 2)], beta[K:]])
        bb /= bb.sum()
        MM = np.zeros((K + 1, M.shape[1]))
        zz, MM, bb, _ = _drop_empty(zz, MM, bb)
        MM, bb, pp = P.refit(zz, MM.shape[0], bb, max_inner=100)
        JJ = P.J(zz, MM, bb, pp)
        if JJ < best[0] - 1e-12 * abs(best[0]):
            best = (JJ, (zz, MM, bb, pp))
    if best[1] is None:
        return z, M, beta, pi, J, 0
    return (*best[1], best[0], 1)


def _direct_run(P: _DirectProblem, z0, max_iter, tol, merges, n_proposals,
                algorithm="HardHDPHMMDirect") -> Iterator[SweepState]:
    t0 = time.perf_counter()
    z, _ = _compact(np.asarray(z0, dtype=np.int64), np.zeros((int(np.max(z0)) + 1, 1)))
    K = int(z.max()) + 1
    M, beta, pi = P.refit(z, K, np.full(K + 1, 1.0 / (K + 1)))
    J_old = P.J(z, M, beta, pi)
    for iteration in range(1, max_iter + 1):
        steps = [J_old]
        # 1. exact Viterbi for the K current states (emission w D(y, μ_k), transition -ζ log π_jk);
        #    the current path is kept unless the optimum is strictly cheaper (no churn on ties)
        E = P.w[:, None] * divergence(P.Y, M, P.kind)
        A = _transition_costs(pi, P.zeta)
        zv, best = _viterbi(E, A, P.lengths)
        current = _path_cost(E, A, z, P.nxt)
        changed = 0
        if best < current - 1e-12 * (1.0 + abs(current)):
            changed = int((zv != z).sum())
            z = zv
        _check_step(steps, P.J(z, M, beta, pi), algorithm, "Viterbi")
        # 2. states the Viterbi step emptied are dropped
        z, M, beta, pi = _drop_empty(z, M, beta, pi)
        _check_step(steps, P.J(z, M, beta, pi), algorithm, "empty-state")
        if merges:
            z, M, beta, pi, J, moved = _direct_merges(P, z, M, beta, pi, steps[-1])
            changed += moved
            _check_step(steps, J, algorithm, "merge")
        if n_proposals:
            z, M, beta, pi, J, moved = _direct_propose(P, z, M, beta, pi, steps[-1], n_proposals)
            changed += moved
            _check_step(steps, J, algorithm, "new-state")
        # 3. the μ step, then the π/β alternation
        M = _optimal_means(P.Y, P.w, z, M.shape[0], P.lam3)
        _check_step(steps, P.J(z, M, beta, pi), algorithm, "mean")
        N = _transition_counts(z, P.nxt, M.shape[0])
        pi, beta = _fit_pi_beta(N, beta, P.zeta, P.lam2)
        J = P.J(z, M, beta, pi)
        _check_step(steps, J, algorithm, "π/β")
        converged = changed == 0 or (J_old - J) <= tol * abs(J_old)
        yield _state(iteration, z, M, J, changed, t0, converged, algorithm, steps, transitions=N,
                     beta=beta.copy(), pi=pi.copy())
        if converged:
            return
        J_old = J


def hdp_hmm_direct_objective(X, labels, beta, pi, lengths=None, *, zeta, lambda_global, lambda_local,
                             lambda_mean=0.0, divergence="squared_euclidean", means=None) -> float:
    r"""J_dir (HSJ eq 36, with μ under the min, H6) of the state sequence ``labels`` (values
    0..K-1, K = ``pi.shape[0]``), ``beta`` (K+1,) and ``pi`` (K, K+1) on the simplex (last
    entry: the leftover mass):

    ``Σ_t w_t D(y_t, μ_{z_t}) - ζ Σ_{t≥2} log π_{z_{t-1} z_t}``
    ``+ λ1 K + λ2 Σ_{i≤K} KL(β‖π_i) + λ3 Σ_i ||μ_i||²``

    (transitions inside each sequence of ``lengths`` only). ``means`` (K, D): the centres;
    None puts each at its optimum ``S_k/(W_k + λ3)`` (0 for a state no step uses)."""
    kind = _check_divergence(divergence)
    Y, w = _prepare(X, kind, "HardHDPHMMDirect")
    _, nxt = _neighbours(lengths, Y.shape[0])
    pi = np.asarray(pi, dtype=float)
    beta = np.asarray(beta, dtype=float)
    if pi.ndim != 2 or pi.shape[1] != pi.shape[0] + 1 or beta.shape != (pi.shape[1],):
        raise ValueError(f"pi must have shape (K, K+1) and beta (K+1,); got {pi.shape} and {beta.shape}.")
    K = pi.shape[0]
    z = np.asarray(labels)
    if (z.shape != (Y.shape[0],) or not np.issubdtype(z.dtype, np.integer) or (z < 0).any()
            or (z >= K).any()):
        raise ValueError(f"labels must be {Y.shape[0]} whole numbers in 0..{K - 1} (rows of pi), one per row.")
    z = z.astype(np.int64)
    lam3 = _check_lambda_mean(lambda_mean, kind)
    if means is None:
        M = np.nan_to_num(_optimal_means(Y, w, z, K, lam3), nan=0.0)
    else:
        M = np.asarray(means, dtype=float)
    return _direct_J(Y, w, z, M, beta, pi, nxt, check_nonneg(zeta, "zeta"),
                     check_nonneg(lambda_global, "lambda_global"), check_nonneg(lambda_local, "lambda_local"),
                     lam3, kind)


class HardHDPHMMDirect(_LengthsMixin, SweepEstimator):
    r"""Hard HDP-HMM, "direct" objective (HSJ eq 36, OTHER-SYSTEMS §3.1(c), 3.2(c), H6): the
    transition matrix π and the global weights β are kept instead of integrated out,

    ``J_dir = Σ_t w_t D(y_t, μ_{z_t}) - ζ Σ_{t≥2} log π_{z_{t-1} z_t}``
    ``+ λ1 K + λ2 Σ_{i≤K} KL(β‖π_i) + λ3 Σ ||μ_i||²``

    with β and every π_i on the (K+1)-simplex (the last entry is the leftover mass). HSJ
    writes λ1·K (the combinatorial objectives of this module use λ1(K-1); a constant). ζ is
    a free weight (HSJ gives no derivation, H6); this is the α → ∞ limit, the opposite of
    eq 29's α → 0 (:class:`HardHDPHMM`), so the two do not share fixed points.

    A separate class rather than an option of :class:`HardHDPHMM`: it has its own parameter
    (``zeta``), its own fitted quantities (``beta_``, ``pi_``) and its own algorithm, and
    ``lambda_local`` means a different thing (the weight of the KL terms, not a price per
    successor); one class with a switch would carry parameters that mean nothing in one of
    its two modes, and ``HardHDPHMM`` stays exactly as it was.

    Algorithm (the papers give none, H9; coordinate descent, every step exact or accepted
    only if J falls, so J never increases; each state's ``summaries["step_objectives"]``
    records J after every step and a rise beyond 1e-9·(1 + |J|) raises ``RuntimeError``):

    1. z by exact Viterbi over the K current states, emission ``w_t D(y_t, μ_k)``,
       transition ``-ζ log π_jk``, the first step of each sequence free; the current path
       is kept on ties;
    2. states left empty are dropped (their β and π columns join the leftover column; this
       never increases J, see ``_drop_empty``);
    3. (``merges=True``) greedy merges of two states while J falls, as in :class:`HardHDPHMM`;
    4. (``n_proposals > 0``) the point-wise new-state proposal: each of the ``n_proposals``
       time steps with the largest emission cost is tried alone in a new state (its own
       centre, its own β column), and the best is accepted only if J falls (at most one new
       state per iteration). Not in the papers (they do not say how K grows);
    5. the μ step ``μ_k = S_k/(W_k + λ3)``;
    6. π and β alternated to convergence: π_ij = (ζ N_ij + λ2 β_j)/(ζ N_i· + λ2) (the exact
       minimiser in π_i of ``-ζ Σ_j N_ij log π_ij + λ2 KL(β‖π_i)``), and β_j ∝ Π_i π_ij^{1/K}
       (the exact minimiser in β of ``Σ_i KL(β‖π_i)`` on the simplex). Erratum to
       OTHER-SYSTEMS 3.2(c) step 1, which prints ``ζ N_i·`` in the numerator: it is the row
       of counts ``ζ N_ij``, entry-wise (the printed form does not sum to 1).

    Stop when an iteration changes no label, lowers J by at most ``tol·|J|``, or after
    ``max_iter``. One iteration costs O(T·K·D + T·K²), plus O(K²·(T + K²)) for the merges.

    Note (measured and derived): with z fixed, the optimum over (β, π) puts no mass on the
    leftover column (no transition goes there, so any mass on it only adds to the KL terms),
    and the alternation drives it towards 0: a new state cannot enter through the leftover
    column, hence the proposal opens a column of its own. K therefore mostly comes from the
    start (``init``) and the merges; a single-step new state pays λ1, about ``ζ log N_{a·}``
    to enter it and a KL row, so the proposal mainly catches outlying time steps.

    Defaults (``None``; B the Bregman information of the data, :func:`default_lambdas`):
    ``lambda_global = B`` (as the other classes), ``lambda_local = B``, ``zeta = B/4``
    (:func:`default_direct_params`). Measured on synthetic sequences only (4 seeds each,
    λ1 = λ2 = B, ζ = c·B for c = 0.1, 0.25, 0.5, 1; K found and NMI):

    * sticky 3 states (2-D, centres 6 apart, σ = 1, stay 0.95, T = 600): K = 3 throughout,
      NMI 1.0, 0.99-1.0, 0.97-1.0, 0.93-0.98;
    * the same with centres 3 apart: K 9-11 (NMI 0.50-0.58), K 3-4 (0.91-0.96), K 3
      (0.92-0.96), K 3 (0.78-0.95);
    * not sticky (stay 1/3, centres 6 apart): K 3 (NMI 0.97-1.0) for c ≤ 0.5, K 1 for c = 1
      (every switch then costs more than the fit it buys);
    * 5 states on a line in 3-D (EJS §6.4's means, covariance 0.9·I, stay 0.96, T = 1000):
      K 4-19 (0.43-0.76), K 3-4 (0.73-0.87), K 3-4 (0.61-0.87), K 2-4 (0.58-0.75);
    * ``lambda_local`` from B/10 to 10 B changed little (c = 0.25: NMI 0.99-1.0 and 0.86-0.96
      on the first two).

    Hence c = 1/4: too small a ζ lets the DP-means start's extra states stay, too large a ζ
    merges states whose switches are frequent. Time (2 shared cores): T = 4000, 3-D, 5
    states (EJS Table 4's sequence): 0.9 s, of which the DP-means start takes about 0.15 s and the
    merges most of the rest.

    Parameters
    ----------
    lambda_global : float >= 0 or None
        HSJ λ1, the price of a state.
    lambda_local : float >= 0 or None
        HSJ λ2, the weight of the KL terms pulling every π_i towards β.
    zeta : float >= 0 or None
        HSJ ζ, the weight of the transition log-probabilities.
    lambda_mean, divergence, max_iter, tol : as :class:`HardHDPHMM`.
    init : {"dpmeans", "one"}, default "dpmeans"
        The start, as :class:`HardHDPHMM` (DP-means with λ = ``lambda_global``, or one state).
    merges : bool, default True
    n_proposals : int >= 0, default 5
        Time steps tried as a new state per iteration (0: K never grows).
    random_state : ignored (deterministic).

    Attributes
    ----------
    labels_, n_clusters_, cluster_sizes_, cluster_centers_, objective_, objective_history_,
    n_iter_, converged_, transitions_ (K, K) counts, beta_ (K+1,), pi_ (K, K+1),
    lengths_, lambda_global_, lambda_local_, zeta_, divergence_.
    """

    name = "Hard HDP-HMM (direct)"
    input = "numeric"
    restart_key = "objective"
    monotone = "objective"
    ui = {**_UI,
          "zeta": Control("ζ (weight of the transition log-probabilities)", "float", None, 0.0, None, short="ζ",
                          help="Empty: B/4, B the default global penalty.")}

    def __init__(self, lambda_global=None, lambda_local=None, zeta=None, lambda_mean=0.0,
                 divergence="squared_euclidean", max_iter=100, tol=1e-9, init="dpmeans", merges=True,
                 n_proposals=5, random_state=None):
        self.lambda_global = lambda_global
        self.lambda_local = lambda_local
        self.zeta = zeta
        self.lambda_mean = lambda_mean
        self.divergence = divergence
        self.max_iter = max_iter
        self.tol = tol
        self.init = init
        self.merges = merges
        self.n_proposals = n_proposals
        self.random_state = random_state

    @classmethod
    def warm_up(cls) -> None:
        """Compile (or load) the numba kernels of this module (see ``estimator.py``)."""
        _warm_up_kernels()

    def iter_sweeps(self, X, lengths=None, *, restart: int = 0, order=None):
        """The generator of the states of one run (validated now; ``order`` is ignored: the
        Viterbi step labels all time steps at once)."""
        return self._with_extra(lengths, lambda: SweepEstimator.iter_sweeps(self, X, restart=restart, order=order))

    def _validate(self, X) -> Problem:
        kind = _check_divergence(self.divergence)
        lam3 = _check_lambda_mean(self.lambda_mean, kind)
        settings = {"max_iter": check_int(self.max_iter, "max_iter", 1), "tol": check_nonneg(self.tol, "tol"),
                    "init": check_choice(self.init, "init", ("dpmeans", "one")),
                    "merges": check_bool(self.merges, "merges"),
                    "n_proposals": check_int(self.n_proposals, "n_proposals", 0)}
        Y, w = _prepare(X, kind, "Hard HDP-HMM (direct)", self)
        prv, nxt = _neighbours(self._extra(), Y.shape[0])
        lam1, lam2 = _resolve_lambdas(self, Y, w, kind, DEFAULT_KL_FACTOR)
        zeta = _check_lambda(self.zeta, "zeta", "the weight of the transition log-probabilities")
        if zeta is None:
            B = bregman_information(Y, w, kind)
            zeta = DEFAULT_ZETA_FACTOR * (B if B > 0 else 1.0)
        lengths = np.diff(np.append(np.flatnonzero(prv < 0), Y.shape[0])).tolist()
        settings.update(kind=kind, lam1=lam1, lam2=lam2, lam3=lam3, zeta=zeta, nxt=nxt, lengths=lengths)
        return Problem((Y, w), Y.shape[0], settings)

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        s = problem.settings
        Y, w = problem.data
        T = problem.n_rows
        z0 = np.zeros(T, dtype=np.int64)
        if s["init"] == "dpmeans":
            for state in _hdp_run(Y, w, z0, 1, np.arange(T), s["lam1"], 0.0, s["lam3"], s["kind"],
                                  s["max_iter"], s["tol"], False):
                pass
            z0 = np.array(state.labels)
        P = _DirectProblem(Y, w, s["nxt"], s["lengths"], s["lam1"], s["lam2"], s["zeta"], s["lam3"], s["kind"])
        return _direct_run(P, z0, s["max_iter"], s["tol"], s["merges"], s["n_proposals"], self.name)

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        s = problem.settings
        self.cluster_centers_ = state.summaries["mean"]
        self.objective_ = state.objective
        self.transitions_ = state.summaries["transitions"]
        self.beta_ = state.summaries["beta"]
        self.pi_ = state.summaries["pi"]
        self.lengths_ = list(s["lengths"])
        self.lambda_global_, self.lambda_local_, self.zeta_ = s["lam1"], s["lam2"], s["zeta"]
        self.divergence_ = s["kind"]

    def predict(self, X, lengths=None):
        """States of new sequences among the K fitted ones by exact Viterbi with the fitted
        centres and transition costs ``-ζ log π_jk`` (the leftover column is not a state: no
        new state is opened); the first step of each sequence is free, ties go to the lowest
        index."""
        check_is_fitted(self)
        Y, w = _prepare(X, self.divergence_, self.name, self, reset=False)
        E = w[:, None] * divergence(Y, self.cluster_centers_, self.divergence_)
        return _viterbi(E, _transition_costs(self.pi_, self.zeta_), _sequence_lengths(lengths, Y.shape[0]))[0]
