"""One covariance shared by every cluster: the tied Normal-Wishart (mclust's EEE, "ellipsoidal,
equal volume, shape and orientation"; Fraley & Raftery 2002, JASA 97:611, Table 1).

Model. A precision Lambda shared by all clusters, Lambda ~ Wishart(B0, a0) (B0 a precision scale
matrix, T0 = B0^-1, a0 > D - 1 degrees of freedom), and per cluster a mean
mu_k | Lambda ~ N(m0, (c0 Lambda)^-1); x_i | z_i = k ~ N(mu_k, Lambda^-1). The same prior as
:mod:`~mapdp_core.families.normal_wishart` (PLOS Appendix A, eqs 18-20), with one Lambda instead
of one per cluster. In the notation of issue 41 (Psi0, kappa0, nu0) = (T0, c0, a0).

Collapsed marginal (the mu_k integrated out cluster by cluster, then Lambda once; the standard
Normal-Wishart integral, e.g. Murphy 2007 "Conjugate Bayesian analysis of the Gaussian
distribution", Section 8, applied to the pooled scatter):

    p(X | z) = pi^(-N D / 2) prod_k (c0 / (c0 + n_k))^(D/2)
               Gamma_D((a0 + N)/2) / Gamma_D(a0/2) |T0|^(a0/2) / |T_N|^((a0 + N)/2),
    T_N = T0 + sum_k [S_k + c0 n_k / (c0 + n_k) (xbar_k - m0)(xbar_k - m0)^T],

S_k the scatter of cluster k about its mean. Unlike every other family it is not a product of
per-cluster terms: T_N pools all clusters, so moving one row changes every cluster's score.

Predictive of a row (the collapsed sweep). With the row i out of the statistics, A = T0 + the
pooled term of the other N - 1 rows, and cluster k holding n of them with posterior mean
m_k = (c0 m0 + sum x)/(c0 + n), c = c0 + n: adding x_i to cluster k adds c/(c + 1) u u^T to T
(u = x_i - m_k), so by the matrix determinant lemma p(X with i in k)/p(X without i) is the
multivariate Student-t

    f(x_i | k) = t_nu(x_i; m_k, A / (c/(c+1) nu)),   nu = a0 + N - D,

(the ratio Gamma_D((a0 + N)/2)/Gamma_D((a0 + N - 1)/2) = Gamma((a0 + N)/2)/Gamma((a0 + N - D)/2)):
-ln f = (nu + D)/2 ln(1 + c/(c+1) u^T A^-1 u) + lnG(nu/2) - lnG((nu + D)/2) + D/2 ln(pi (c+1)/c)
+ 1/2 ln|A|. The last three terms but the middle one are the same for every candidate
cluster of the row, the new one included (n = 0, m = m0). Costs: we keep the Cholesky factor of
T (every row in) and the cluster means; a row's A is T downdated by its own contribution
(rank one, O(D^2)), computed once per row and reused for all its candidates (``work``, keyed by
the row and a counter of moves), and each candidate is one forward solve, O(D^2): O(K D^2) per
row, as the per-cluster Normal-Wishart.

The new cluster. Its score depends on A, which changes with every move, so it cannot be the
kernel's fixed per-row ``d_new``: ``nlp`` of an empty slot is 0 here and ``nlp_new`` gives the
new-cluster score against the current statistics (the kernel adds it where it reads ``d_new``).

Missing values: as :mod:`~mapdp_core.families.normal_wishart` (ALGORITHMS.md, "Missing values";
PLOS Appendix F). A row with gaps is scored by the Student-t marginal of its observed entries
(same nu, the sub-vector of m_k, the sub-matrix of A: the observed block of A is factorised once
per row, then O(p^2) per candidate); when it joins a cluster its missing entries are set to
E[x_mis | x_obs] under that cluster's predictive and the completed row (``fill``) enters the
statistics. The block's term of -ln p(X, z) with gaps (:func:`observed_log_marginals`) is the
chain rule over all rows in input order (one chain, since every row changes A), each row scored on
its observed entries given the completed rows before it: observed cells only, so a column's unit
changes it by (observed cells) x ln c for every partition alike. Without gaps it equals ``logml``.

Statistics shared by all clusters live in the fixed part of the tuple (``gL``, the Cholesky factor
of T; ``glob``, the number of rows in and a counter of moves; ``own``, each row's cluster or -1):
``reset(0)`` starts them afresh (``ModelData.start`` and construction reset every slot from 0;
growth and compaction reset only slots above the kept clusters), and a cluster emptied by ``move``
is cleared there without touching them.

Empirical-Bayes default: that of the per-cluster block (``normal_wishart.default_prior``): m0 the
column means, a0 = max(10, D + 3), B0 = diag(1/(w (a0 - D - 1) var_d)) with w = WITHIN_FRACTION,
c0 = w; the automatic search scales B0^-1 by its spread grid.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import normal_wishart
from ._common import LOG_PI, forward_solve, log_diagonal_sum
from .normal_wishart import _add_completed, _chol_rank1, _log_multigamma_half, _observed_chol, conditional_fill

NAME = "normal_wishart_tied"
#: the kernel's arrays: data, prior, the statistics shared by every cluster and per-row scratch
#: (the first N_FIXED), then per cluster (cluster on axis 0).
LAYOUT = ("X", "m0", "c0", "a0", "L0", "work", "work_key", "fill", "own", "gL", "glob", "cnt", "mean")
# work (2D + 4, D): rows 0-2 vectors; 3..D+2 the factor of the current row's A; D+3..2D+2 the
# factor of its observed block; 2D+3 the observed column indices. work_key: (row, move counter)
# whose A is in work, its number of observed entries p, (nu + p)/2 and the row's constant.
# Both are scratch: ModelData.private_fams copies every array named work*.
N_FIXED = 11
_ROW, _VERSION, _P, _HEXP, _CONST = range(5)
_N_IN, _MOVES = range(2)


@njit(cache=True, inline="always")
def reset(k, fam):
    X, m0, c0, a0, L0, work, work_key, fill, own, gL, glob, cnt, mean = fam
    D = X.shape[1]
    if D == 0:
        return
    cnt[k] = 0.0
    for a in range(D):
        mean[k, a] = m0[a]
    if k == 0:  # every slot is being reset (module docstring): the shared statistics too
        for a in range(D):
            for b in range(D):
                gL[a, b] = L0[a, b]
        glob[_N_IN] = 0.0
        glob[_MOVES] += 1.0
        for i in range(own.shape[0]):
            own[i] = -1
        work_key[_ROW] = -1.0


@njit(cache=True, _nrt=False)
def _has_gap(X, i):
    for a in range(X.shape[1]):
        if X[i, a] != X[i, a]:
            return True
    return False


@njit(cache=True, _nrt=False)
def _row_state(i, X, c0, a0, work, work_key, fill, own, gL, glob, cnt, mean):
    """Put row i's A (T without the row) in ``work`` and its constants in ``work_key``, unless
    they are there already for the current statistics (the key: the row and the move counter)."""
    if work_key[_ROW] == i and work_key[_VERSION] == glob[_MOVES]:
        return
    D = X.shape[1]
    L = work[3:3 + D]
    for a in range(D):
        for b in range(D):
            L[a, b] = gL[a, b]
    n_other = glob[_N_IN]
    k = own[i]
    if k >= 0:  # the row is in: T loses c/(c-1) (x - m)(x - m)^T, x as it entered (fill)
        c = c0 + cnt[k]
        scale = math.sqrt(c / (c - 1.0))
        v = work[0]
        for d in range(D):
            v[d] = scale * (fill[i, d] - mean[k, d])
        _chol_rank1(L, v, -1.0)
        n_other -= 1.0
    nu = a0 + n_other + 1.0 - D
    if _has_gap(X, i):  # the observed block of A, factorised into the same rows of work
        p = _observed_chol(X, i, L, work)
        logdet_half = log_diagonal_sum(work[D + 3:2 * D + 3], p)
    else:
        p = D
        logdet_half = 0.0
        for d in range(D):
            logdet_half += math.log(L[d, d])
    work_key[_ROW] = i
    work_key[_VERSION] = glob[_MOVES]
    work_key[_P] = p
    work_key[_HEXP] = 0.5 * (nu + p)
    work_key[_CONST] = math.lgamma(0.5 * nu) - math.lgamma(0.5 * (nu + p)) + 0.5 * p * LOG_PI + logdet_half


@njit(cache=True, _nrt=False)
def _score(i, X, m, n, c0, work, work_key):
    """-ln f(x_i) under a cluster of n other rows and posterior mean m, given the row's state
    (:func:`_row_state`): the Student-t of the module docstring, on the observed entries."""
    D = X.shape[1]
    p = int(work_key[_P])
    if p == 0:
        return 0.0
    c = c0 + n
    y = work[1]
    if p == D:
        L = work[3:3 + D]
        for a in range(D):
            y[a] = X[i, a] - m[a]
    else:
        L = work[D + 3:2 * D + 3]
        idx = work[2 * D + 3]
        for r in range(p):
            y[r] = X[i, int(idx[r])] - m[int(idx[r])]
    q = forward_solve(L, p, y)
    if q < math.inf:
        log_term = math.log1p(c / (c + 1.0) * q)
    else:  # a far-out row whose square overflowed: 1 + coef q ~ coef q, from a scaled residual
        top = 0.0  # the largest residual, found only here: the common path needs no extra pass
        for r in range(p):
            a = r if p == D else int(work[2 * D + 3][r])
            top = max(top, abs(X[i, a] - m[a]))
        if p == D:
            for a in range(D):
                y[a] = (0.5 * X[i, a] - 0.5 * m[a]) / (0.5 * top)
        else:
            idx = work[2 * D + 3]
            for r in range(p):
                y[r] = (0.5 * X[i, int(idx[r])] - 0.5 * m[int(idx[r])]) / (0.5 * top)
        log_term = math.log(c / (c + 1.0)) + math.log(forward_solve(L, p, y)) + 2.0 * math.log(top)
    return work_key[_HEXP] * log_term + work_key[_CONST] + 0.5 * p * math.log((c + 1.0) / c)


@njit(cache=True, inline="always")
def nlp(i, k, fam):
    """-ln f(x_i | cluster k, every other row); 0 for an empty slot (see ``nlp_new``)."""
    X, m0, c0, a0, L0, work, work_key, fill, own, gL, glob, cnt, mean = fam
    if X.shape[1] == 0 or cnt[k] <= 0.0:
        return 0.0
    _row_state(i, X, c0, a0, work, work_key, fill, own, gL, glob, cnt, mean)
    return _score(i, X, mean[k], cnt[k], c0, work, work_key)


@njit(cache=True, inline="always")
def nlp_loo(i, k, fam):
    """nlp of row i under its own cluster k, without the row (the cluster stays as it is)."""
    X, m0, c0, a0, L0, work, work_key, fill, own, gL, glob, cnt, mean = fam
    D = X.shape[1]
    if D == 0:
        return 0.0
    _row_state(i, X, c0, a0, work, work_key, fill, own, gL, glob, cnt, mean)
    if cnt[k] <= 1.0:
        return _score(i, X, m0, 0.0, c0, work, work_key)
    c = c0 + cnt[k]
    m = work[2]
    for d in range(D):  # the mean without the row: m - (x - m)/(c - 1)
        m[d] = mean[k, d] - (fill[i, d] - mean[k, d]) / (c - 1.0)
    return _score(i, X, m, cnt[k] - 1.0, c0, work, work_key)


@njit(cache=True, inline="always")
def nlp_new(i, fam):
    """-ln f(x_i | a new cluster, every other row): the prior mean m0, no rows of its own."""
    X, m0, c0, a0, L0, work, work_key, fill, own, gL, glob, cnt, mean = fam
    if X.shape[1] == 0:
        return 0.0
    _row_state(i, X, c0, a0, work, work_key, fill, own, gL, glob, cnt, mean)
    return _score(i, X, m0, 0.0, c0, work, work_key)


@njit(cache=True, inline="always")
def move(i, k, sign, fam):
    X, m0, c0, a0, L0, work, work_key, fill, own, gL, glob, cnt, mean = fam
    D = X.shape[1]
    if D == 0:
        return
    c = c0 + cnt[k]
    v = work[0]
    if sign > 0:
        if _has_gap(X, i):  # the row is out of the statistics here, so its A is T itself
            _row_state(i, X, c0, a0, work, work_key, fill, own, gL, glob, cnt, mean)
            # E[x_mis | x_obs] under cluster k's predictive: location m_k, scale proportional to A
            conditional_fill(X, i, fill, mean[k], work[3:3 + D], work[D + 3:2 * D + 3], work[2 * D + 3],
                             int(work_key[_P]), work[1])
        _add_completed(fill, i, mean[k], gL, c, v)
        cnt[k] += 1.0
        own[i] = k
        glob[_N_IN] += 1.0
    else:
        scale = math.sqrt(c / (c - 1.0))
        for d in range(D):
            u = fill[i, d] - mean[k, d]
            v[d] = scale * u
            mean[k, d] -= u / (c - 1.0)
        _chol_rank1(gL, v, -1.0)
        cnt[k] -= 1.0
        if cnt[k] <= 0.0:  # emptied: exactly the prior mean again
            cnt[k] = 0.0
            for d in range(D):
                mean[k, d] = m0[d]
        own[i] = -1
        glob[_N_IN] -= 1.0
    glob[_MOVES] += 1.0


@njit(cache=True, inline="always")
def logml(k, fam):
    """Cluster k's factor of p(X | z), pi^(-n D/2) (c0/(c0 + n))^(D/2); slot 0 also carries the
    shared factor Gamma_D((a0 + N)/2)/Gamma_D(a0/2) |T0|^(a0/2)/|T_N|^((a0 + N)/2), so that the sum
    over the slots is ln p(X | z) (module docstring)."""
    X, m0, c0, a0, L0, work, work_key, fill, own, gL, glob, cnt, mean = fam
    D = X.shape[1]
    if D == 0:
        return 0.0
    n = cnt[k]
    out = 0.0
    if n > 0.0:
        out = -0.5 * n * D * LOG_PI + 0.5 * D * math.log(c0 / (c0 + n))
    if k == 0:
        N = glob[_N_IN]
        logdet0 = 0.0
        logdetn = 0.0
        for d in range(D):
            logdet0 += 2.0 * math.log(L0[d, d])
            logdetn += 2.0 * math.log(gL[d, d])
        out += (_log_multigamma_half(a0 + N, D) - _log_multigamma_half(a0, D)
                + 0.5 * a0 * logdet0 - 0.5 * (a0 + N) * logdetn)
    return out


@njit(cache=True, nogil=True, _nrt=False)
def _chain(rows, labels, K, X, fill, m0, c0, a0, L0, work, work_key, own, gL, glob, cnt, mean, out):
    """out[k] = sum over the rows of cluster k of ln f(x_i,obs | the completed rows before i, in
    the order of ``rows``), each row's completed values (``fill``) then entering the statistics;
    one chain over all clusters, since every row changes the shared A. Labels outside 0..K-1
    are skipped. ``own``, ``gL``, ``glob``, ``cnt`` and ``mean`` are scratch here."""
    D = X.shape[1]
    for a in range(D):
        for b in range(D):
            gL[a, b] = L0[a, b]
    for k in range(K):
        out[k] = 0.0
        cnt[k] = 0.0
        for a in range(D):
            mean[k, a] = m0[a]
    for i in range(own.shape[0]):
        own[i] = -1
    glob[_N_IN] = 0.0
    v = work[0]
    for t in range(rows.shape[0]):
        i = rows[t]
        k = labels[i]
        if k < 0 or k >= K:
            continue
        glob[_MOVES] += 1.0
        _row_state(i, X, c0, a0, work, work_key, fill, own, gL, glob, cnt, mean)
        out[k] -= _score(i, X, mean[k], cnt[k], c0, work, work_key)
        _add_completed(fill, i, mean[k], gL, c0 + cnt[k], v)  # fill[i] into the statistics, as move does
        cnt[k] += 1.0
        glob[_N_IN] += 1.0


def has_gaps(fam) -> bool:
    """Whether the block's data has a missing entry (then :func:`observed_log_marginals` is its
    term of the joint)."""
    return bool(np.isnan(fam[0]).any())


def observed_log_marginals(fam, labels: np.ndarray, K: int, rows: np.ndarray | None = None) -> np.ndarray:
    """The block's ln p(X_obs | z) split by cluster (module docstring): the chain rule over all rows
    in the order of ``rows`` (default: row index order), on observed entries, the completed values
    ``fill`` entering the statistics. Equals the sum of ``logml`` when the block has no gap."""
    X, m0, c0, a0, L0, work, work_key, fill = fam[:8]
    N, D = X.shape
    out = np.zeros(K)
    if D == 0 or K == 0:
        return out
    rows = np.arange(N, dtype=np.int64) if rows is None else np.ascontiguousarray(rows, dtype=np.int64)
    _chain(rows, np.ascontiguousarray(labels, dtype=np.int64), K, X, fill, m0, float(c0), float(a0), L0,
           np.zeros_like(work), np.full(5, -1.0), np.full(N, -1, dtype=np.int64), np.zeros((D, D)), np.zeros(2),
           np.zeros(K), np.zeros((K, D)), out)
    return out


check_data = normal_wishart.check_data
default_prior = normal_wishart.default_prior


def resolve_prior(user: dict, X: np.ndarray, names, family: str = NAME) -> dict:
    """User values over the defaults, validated as the per-cluster block's (the same four keys)."""
    return normal_wishart.resolve_prior(user, X, names, family)


def build(X: np.ndarray, prior: dict, cap: int):
    N, D = X.shape
    L0 = np.linalg.cholesky(np.linalg.inv(prior["B0"])) if D else np.zeros((0, 0))
    X = np.ascontiguousarray(X)
    return (X, np.ascontiguousarray(prior["m0"], dtype=float), float(prior["c0"]), float(prior["a0"]),
            np.ascontiguousarray(L0), np.zeros((2 * D + 4, D)), np.full(5, -1.0), X.copy(),
            np.full(N, -1, dtype=np.int64), L0.copy(), np.zeros(2), np.zeros(cap), np.zeros((cap, D)))


def empty(N: int, cap: int):
    """An unused block: zero columns, so the kernel's loops over it do nothing."""
    return (np.zeros((N, 0)), np.zeros(0), 1.0, 1.0, np.zeros((0, 0)), np.zeros((4, 0)), np.full(5, -1.0),
            np.zeros((N, 0)), np.full(N, -1, dtype=np.int64), np.zeros((0, 0)), np.zeros(2), np.zeros(cap),
            np.zeros((cap, 0)))


def for_rows(fam, X_new: np.ndarray):
    """The block's tuple for scoring new rows ``X_new`` against the fitted statistics: none of
    them is in the statistics (``own`` -1), each is completed from itself (``fill``), and the
    scratch is fresh (a row number of the fit must not find its cached A)."""
    X_new = np.ascontiguousarray(X_new, dtype=float)
    n = X_new.shape[0]
    return ((X_new,) + fam[1:5] + (np.zeros_like(fam[5]), np.full(5, -1.0), X_new.copy(),
                                  np.full(n, -1, dtype=np.int64)) + fam[9:])


def renumber(fam, new_number: np.ndarray) -> None:
    """The clusters were renumbered (``ModelData`` compacts or reorders its slots): old cluster k
    is now ``new_number[k]`` (-1: dropped, its rows out). ``own`` follows."""
    own, glob = fam[8], fam[10]
    inside = own >= 0
    own[inside] = new_number[own[inside]]
    glob[_MOVES] += 1.0


def shared_covariance(fam) -> np.ndarray:
    """The posterior mean of the shared covariance, E[Sigma | X, z] = T_N/(a0 + N - D - 1) (the
    mode T_N/(a0 + N + D + 1) where that mean is not finite)."""
    X, a0, gL, glob = fam[0], fam[3], fam[9], fam[10]
    D = X.shape[1]
    T = gL @ gL.T
    dof = a0 + glob[_N_IN] - D - 1.0
    return T / (dof if dof > 0 else a0 + glob[_N_IN] + D + 1.0)


def summary(fam, K: int):
    """Posterior means m_k and, for every cluster, the one shared covariance (:func:`shared_covariance`)."""
    mean = fam[12][:K].copy()
    cov = shared_covariance(fam)
    return mean, np.repeat(cov[None], K, axis=0)


def describe(block, X: np.ndarray) -> list[str]:
    """The prior in words, as the per-cluster block's, and what is shared."""
    return (["one covariance is shared by all clusters (the same shape, size and orientation: "
             "clusters differ only in their centres)"] + normal_wishart.describe(block, X))


def impute(fam, K: int):
    """A gap is filled with the predictive mean (the Student-t's mode): see summary."""
    return None
