"""Full-covariance Gaussian with a Normal-Wishart prior (PLOS Appendix A, eqs 18-20).

Prior theta0 = (m0, c0, B0, a0): precision Lambda ~ Wishart(B0, a0) (B0 the scale
matrix, itself a precision; a0 the degrees of freedom, a0 > D - 1), mean
mu | Lambda ~ N(m0, (c0 Lambda)^-1). (The reference program's comments swap the labels
of a0 and c0; ALGORITHMS.md.)

We keep, per cluster, c = c0 + n, m = (c0 m0 + sum x)/c and the Cholesky factor L of
T = B^-1 = B0^-1 + S + c0 n/(c0 + n) (xbar - m0)(xbar - m0)^T (eq 18, with the scatter
S = sum (x_j - xbar)(x_j - xbar)^T of eq 19 corrected). Adding x changes
T by c/(c+1) (x - m)(x - m)^T and removing x changes it by -c/(c-1) (x - m)(x - m)^T
with m the mean before removal: both are rank-one Cholesky updates, O(D^2), with no
inverse or determinant recomputed per point.

Predictive (eq 20): multivariate Student-t, nu = a - D + 1, Lambda_t = c nu/(c+1) B, so
(x - m)^T Lambda_t (x - m)/nu = c/(c+1) |L^-1 (x - m)|^2 and
-ln f = (nu+D)/2 ln(1 + c/(c+1) q) + lnG(nu/2) - lnG((nu+D)/2) + D/2 ln(pi (c+1)/c) + sum ln L_dd.
Marginal likelihood: -nD/2 ln pi + lnG_D(a_n/2) - lnG_D(a0/2) + a0/2 ln|T0| - a_n/2 ln|T_n|
+ D/2 ln(c0/c_n).

Missing values (ALGORITHMS.md "Missing values", PLOS Appendix F). The assignment is exact:
a row with gaps is scored by the Student-t marginal of its observed entries (same nu, the
sub-vector of m and the sub-matrix of the scale), and a row with no observed entry in the
block contributes nothing. The cluster statistics are an approximation, since a partly
observed row has no conjugate update: when the row joins a cluster its missing entries
are set to their conditional mean E[x_mis | x_obs] under that cluster's predictive, and
the completed row enters the statistics; the same values leave them when it moves
(``fill``), so adding and removing stay exact inverses.

The block's term of -ln p(X, z) (``observed_log_marginals``, used when the block has a gap;
without gaps the closed form ``logml`` below, which it then equals): per cluster, the chain
rule over its members in row order, each row scored by the eq 20 Student-t marginal of its
OBSERVED entries given the completed rows before it (exactly what the sweep scores a row
with), after which the row's completed values (``fill``) enter the running statistics by the
same rank-one update as ``move``. It counts observed cells only, as the independent columns'
families do: multiplying a column by c (with the empirical-Bayes prior, which follows the
units) changes it by (observed cells of that column) x ln c, whatever the structure, so
choices between candidates (the automatic search's structure, spread and N0; restarts) do
not depend on the units. (``logml`` of the completed rows counted every imputed cell as data
too: one table counted 7 264 cells against 6 219 observed, and its partition changed when
columns were rescaled.) It is not the exact -ln p(x_obs, z) (the gaps integrated out), which
has no closed form: the imputed values still shape the statistics a later row is scored
against, as in PLOS Appendix F's approximation, so it is the joint of the observed entries
given those completions; for the same reason it depends on the order of the rows through
rows with gaps only (a fully observed block telescopes to ``logml``, whatever the order).

Empirical-Bayes default: m0 = column means; a0 = max(10, D + 3) (10 as in the authors'
demo, raised with D so that E[Sigma] stays finite); B0 = diag(1/(w (a0 - D - 1) var_d)),
so that a typical cluster covariance is E[Sigma] = T0/(a0 - D - 1) = w diag(var) with
w = WITHIN_FRACTION = 0.2; and c0 = w, so that cluster means spread a priori like the
data (Cov(mu) = E[Sigma]/c0 = diag(var)) and the prior predictive, of covariance about
(1 + 1/c0) E[Sigma] = 1.2 diag(var), covers the data whatever N.
The authors' demo (ALGORITHMS.md: c0 = 10/N, a0 = 10, B0 = diag(1/(0.05 var))) expects
clusters of 0.7 % of the variance; on our re-creation of the PLOS Section 5 scenarios it
opened 8 to 71 clusters where this default finds the 3 (see _common.WITHIN_FRACTION).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._common import (LOG_2, column_mean_var, LOG_PI, WITHIN_FRACTION, back_solve, cholesky_in_place, column_sd, forward_solve,
                      log_diagonal_sum, merge_prior, observed_indices, spd_matrix, spread_sentence)

NAME = "normal_wishart"
#: the kernel's arrays: data and prior (the first N_FIXED), then per cluster (cluster on axis 0);
#: const1 is the constant of the cluster without one point, with its own log-determinant (nlp_loo)
LAYOUT = ("X", "m0", "c0", "a0", "L0", "work", "fill", "cnt", "mean", "chol", "hexp", "coef", "const", "const1")
# X keeps NaN where a value is missing; fill is X with each missing entry replaced by the
# value the row was given when it last joined a cluster (see "Missing values" above);
# work is scratch: rows 0-2 vectors, 3..D+2 a DxD factor, D+3..2D+2 another, 2D+3 indices.
N_FIXED = 7


@njit(cache=True, _nrt=False)
def _chol_rank1(L, v, sign):
    """In place: L L^T + sign * v v^T = L' L'^T for a lower-triangular L (v is overwritten)."""
    D = v.shape[0]
    for j in range(D):
        ljj = L[j, j]
        r2 = ljj * ljj + sign * v[j] * v[j]
        if r2 < 1e-300:  # only reachable through rounding in a downdate
            r2 = 1e-300
        r = math.sqrt(r2)
        c = r / ljj
        s = v[j] / ljj
        L[j, j] = r
        for i in range(j + 1, D):
            L[i, j] = (L[i, j] + sign * s * v[i]) / c
            v[i] = c * v[i] - s * L[i, j]


@njit(cache=True, _nrt=False)
def _student_constants(n, L, c0, a0):
    """(half exponent, c/(c+1), constant) of the eq 20 Student-t for a cluster of n points."""
    D = L.shape[0]
    c = c0 + n
    nu = a0 + n - D + 1.0
    logdet_half = 0.0
    for d in range(D):
        logdet_half += math.log(L[d, d])
    const = (math.lgamma(0.5 * nu) - math.lgamma(0.5 * (nu + D))
             + 0.5 * D * (LOG_PI + math.log((c + 1.0) / c)) + logdet_half)
    return 0.5 * (nu + D), c / (c + 1.0), const


@njit(cache=True, _nrt=False)
def _student_nlp(X, i, m, L, hexp, coef, const, y):
    """-ln f(x_i) for the Student-t with location m and scale factor L (eq 20)."""
    D = X.shape[1]
    q = 0.0
    for a in range(D):  # forward substitution L y = x - m
        s = X[i, a] - m[a]
        for b in range(a):
            s -= L[a, b] * y[b]
        y[a] = s / L[a, a]
        q += y[a] * y[a]
    return hexp * math.log1p(coef * q) + const  # +inf for a far-out row: the callers rescore it


@njit(cache=True, _nrt=False)
def _refresh(k, X, m0, c0, a0, L0, work, fill, cnt, mean, chol, hexp, coef, const, const1):
    hexp[k], coef[k], const[k] = _student_constants(cnt[k], chol[k], c0, a0)
    n = cnt[k]
    if n >= 2.0:
        # the constant of the same cluster without one point, but with THIS cluster's
        # log-determinant: nlp_loo adds the determinant-lemma correction per point
        D = X.shape[1]
        c = c0 + n
        nu1 = a0 + n - D
        logdet_half = 0.0
        for d in range(D):
            logdet_half += math.log(chol[k, d, d])
        const1[k] = (math.lgamma(0.5 * nu1) - math.lgamma(0.5 * (nu1 + D))
                     + 0.5 * D * (LOG_PI + math.log(c / (c - 1.0))) + logdet_half)


@njit(cache=True, inline="always")
def reset(k, fam):
    X, m0, c0, a0, L0, work, fill, cnt, mean, chol, hexp, coef, const, const1 = fam
    D = X.shape[1]
    if D == 0:
        return
    cnt[k] = 0.0
    for a in range(D):
        mean[k, a] = m0[a]
        for b in range(D):
            chol[k, a, b] = L0[a, b]
    _refresh(k, X, m0, c0, a0, L0, work, fill, cnt, mean, chol, hexp, coef, const, const1)


@njit(cache=True, _nrt=False)
def _removed(i, k, X, c0, cnt, mean, chol, v, m_out, L_out):
    """Mean and Cholesky factor of cluster k without row i, written to m_out and L_out.

    T loses c/(c-1) (x - m)(x - m)^T with c = c0 + n and m the current mean. ``X`` is the
    family's ``fill`` array: the values the row entered the statistics with."""
    D = X.shape[1]
    c = c0 + cnt[k]
    scale = math.sqrt(c / (c - 1.0))
    for d in range(D):
        u = X[i, d] - mean[k, d]
        v[d] = scale * u
        m_out[d] = mean[k, d] - u / (c - 1.0)
        for b in range(D):
            L_out[d, b] = chol[k, d, b]
    _chol_rank1(L_out, v, -1.0)


@njit(cache=True, _nrt=False)
def _observed_chol(X, i, L, work):
    """Cholesky factor of T_oo, the observed rows and columns of T = L L^T, for row i.

    Writes the factor to work[D+3:2D+3] (p x p top-left) and the observed column indices
    to work[2D+3]; returns p, the number of observed entries. O(p^2 D + p^3), only for
    rows with gaps."""
    D = X.shape[1]
    idx = work[2 * D + 3]
    S = work[D + 3:2 * D + 3]
    p = observed_indices(X, i, idx)
    for r in range(p):
        a = int(idx[r])
        for c in range(r + 1):
            b = int(idx[c])
            t = 0.0
            for j in range(min(a, b) + 1):
                t += L[a, j] * L[b, j]
            S[r, c] = t
    cholesky_in_place(S, p)
    return p


@njit(cache=True, _nrt=False)
def _marginal_nlp(X, i, m, L, n, c0, a0, work):
    """-ln f(x_o) for the observed entries x_o of row i: the eq 20 Student-t of a cluster
    of n points with location m and T = L L^T, marginalised over the missing entries.

    A sub-vector of a multivariate Student-t is Student-t with the same degrees of freedom
    nu, the sub-vector of the location and the sub-matrix of the scale (ALGORITHMS.md,
    "Missing values"), so with p observed entries this is eq 20 with D -> p, T -> T_oo."""
    D = X.shape[1]
    p = _observed_chol(X, i, L, work)
    if p == 0:
        return 0.0
    idx = work[2 * D + 3]
    S = work[D + 3:2 * D + 3]
    y = work[1]
    for r in range(p):
        y[r] = X[i, int(idx[r])] - m[int(idx[r])]
    q = forward_solve(S, p, y)
    logdet_half = log_diagonal_sum(S, p)
    c = c0 + n
    nu = a0 + n - D + 1.0
    if q == math.inf:  # a far-out row, as in _student_nlp: the residual scaled down first
        top = 0.0
        for r in range(p):
            top = max(top, abs(0.5 * X[i, int(idx[r])] - 0.5 * m[int(idx[r])]))
        for r in range(p):
            y[r] = (0.5 * X[i, int(idx[r])] - 0.5 * m[int(idx[r])]) / top
        log_term = math.log(c / (c + 1.0)) + math.log(forward_solve(S, p, y)) + 2.0 * (math.log(top) + LOG_2)
    else:
        log_term = math.log1p(c / (c + 1.0) * q)
    return (0.5 * (nu + p) * log_term + math.lgamma(0.5 * nu) - math.lgamma(0.5 * (nu + p))
            + 0.5 * p * (LOG_PI + math.log((c + 1.0) / c)) + logdet_half)


@njit(cache=True, _nrt=False)
def _fill_missing(X, i, fill, m, L, work):
    """fill[i, a] = E[x_a | x_o] for every missing a, under the Student-t of location m and
    scale proportional to T = L L^T (PLOS Appendix F's imputation, here for the statistics only)."""
    D = X.shape[1]
    p = _observed_chol(X, i, L, work)
    conditional_fill(X, i, fill, m, L, work[D + 3:2 * D + 3], work[2 * D + 3], p, work[1])


@njit(cache=True, _nrt=False)
def conditional_fill(X, i, fill, m, L, S, idx, p, y):
    """fill[i, a] = m_a + T_ao T_oo^-1 (x_o - m_o) for every missing a, the conditional mean of a
    multivariate t (or normal) of location m and scale proportional to T = L L^T, given the row's
    p observed entries at columns ``idx[:p]``, whose block T_oo has the Cholesky factor S (p x p);
    ``y`` is scratch of length D."""
    D = X.shape[1]
    for r in range(p):  # y = T_oo^-1 (x_o - m_o)
        y[r] = X[i, int(idx[r])] - m[int(idx[r])]
    forward_solve(S, p, y)
    back_solve(S, p, y)
    for a in range(D):
        if X[i, a] != X[i, a]:
            v = m[a]
            for r in range(p):
                b = int(idx[r])
                t = 0.0
                for j in range(min(a, b) + 1):
                    t += L[a, j] * L[b, j]
                v += t * y[r]
            fill[i, a] = v


@njit(cache=True, inline="always")
def _add_completed(fill, i, mean_k, chol_k, c, v):
    """Row i's completed values into one cluster's statistics of precision count c = c0 + n:
    m += (x - m)/(c + 1) and the rank-one update of T's Cholesky factor by c/(c + 1)(x - m)(x - m)^T
    (``v`` is scratch of length D)."""
    scale = math.sqrt(c / (c + 1.0))
    for d in range(mean_k.shape[0]):
        u = fill[i, d] - mean_k[d]
        v[d] = scale * u
        mean_k[d] += u / (c + 1.0)
    _chol_rank1(chol_k, v, 1.0)


@njit(cache=True, _nrt=False)
def _has_gap(X, i):
    for a in range(X.shape[1]):
        if X[i, a] != X[i, a]:
            return True
    return False


@njit(cache=True, inline="always")
def move(i, k, sign, fam):
    X, m0, c0, a0, L0, work, fill, cnt, mean, chol, hexp, coef, const, const1 = fam
    D = X.shape[1]
    if D == 0:
        return
    if sign > 0:
        if _has_gap(X, i):
            _fill_missing(X, i, fill, mean[k], chol[k], work)
        _add_completed(fill, i, mean[k], chol[k], c0 + cnt[k], work[0])
        cnt[k] += 1.0
    elif cnt[k] <= 1.0:
        reset(k, fam)
        return
    else:
        _removed(i, k, fill, c0, cnt, mean, chol, work[0], mean[k], chol[k])
        cnt[k] -= 1.0
    _refresh(k, X, m0, c0, a0, L0, work, fill, cnt, mean, chol, hexp, coef, const, const1)


@njit(cache=True, inline="always")
def nlp(i, k, fam):
    X, m0, c0, a0, L0, work, fill, cnt, mean, chol, hexp, coef, const, const1 = fam
    if X.shape[1] == 0:
        return 0.0
    out = _student_nlp(X, i, mean[k], chol[k], hexp[k], coef[k], const[k], work[1])
    # NaN: the row has a gap; +inf: its squared distance overflowed (a far-out row, which
    # _marginal_nlp scores from a scaled residual). One comparison keeps other rows fast: a
    # branch inside _student_nlp made the Normal-Wishart sweep about 30 % slower.
    if not out < math.inf:
        return _marginal_nlp(X, i, mean[k], chol[k], cnt[k], c0, a0, work)
    return out


@njit(cache=True, inline="always")
def nlp_loo(i, k, fam):
    """nlp of row i under cluster k with row i left out, in scratch space (O(D^2))."""
    X, m0, c0, a0, L0, work, fill, cnt, mean, chol, hexp, coef, const, const1 = fam
    D = X.shape[1]
    if D == 0:
        return 0.0
    if cnt[k] <= 1.0:
        if _has_gap(X, i):
            return _marginal_nlp(X, i, m0, L0, 0.0, c0, a0, work)
        h, cf, cs = _student_constants(0.0, L0, c0, a0)
        out = _student_nlp(X, i, m0, L0, h, cf, cs, work[1])
        return out if out < math.inf else _marginal_nlp(X, i, m0, L0, 0.0, c0, a0, work)
    # Fast path. With T' = T - a u u^T, u = x - m, a = c/(c-1) and z = L^-1 u, q = |z|^2:
    # |T'| = |T| (1 - a q) (matrix determinant lemma), x - m' = a u, and by
    # Sherman-Morrison c'/(c'+1) (x - m')^T T'^-1 (x - m') = a q / (1 - a q). One forward
    # solve, as for any other cluster. When the point dominates its cluster (a q >= 1/2)
    # 1 - a q loses digits, so we downdate a copy of L instead; a row with gaps (q is NaN)
    # is downdated with the values it entered with and scored on its observed entries.
    c = c0 + cnt[k]
    a = c / (c - 1.0)
    y = work[1]
    q = 0.0
    for r in range(D):
        s = X[i, r] - mean[k, r]
        for b in range(r):
            s -= chol[k, r, b] * y[b]
        y[r] = s / chol[k, r, r]
        q += y[r] * y[r]
    aq = a * q
    if aq < 0.5:
        nu1 = a0 + cnt[k] - D
        return 0.5 * (nu1 + D) * math.log1p(aq / (1.0 - aq)) + const1[k] + 0.5 * math.log1p(-aq)
    m_tmp = work[2]
    L_tmp = work[3:3 + D]
    _removed(i, k, fill, c0, cnt, mean, chol, work[0], m_tmp, L_tmp)
    if not aq < math.inf:  # a gap (NaN) or a far-out row (+inf), as in nlp
        return _marginal_nlp(X, i, m_tmp, L_tmp, cnt[k] - 1.0, c0, a0, work)
    h, cf, cs = _student_constants(cnt[k] - 1.0, L_tmp, c0, a0)
    return _student_nlp(X, i, m_tmp, L_tmp, h, cf, cs, work[1])


@njit(cache=True, _nrt=False)
def _log_multigamma_half(a, D):
    out = 0.25 * D * (D - 1) * LOG_PI
    for j in range(D):
        out += math.lgamma(0.5 * (a - j))
    return out


@njit(cache=True, inline="always")
def logml(k, fam):
    X, m0, c0, a0, L0, work, fill, cnt, mean, chol, hexp, coef, const, const1 = fam
    D = X.shape[1]
    n = cnt[k]
    if D == 0 or n <= 0.0:
        return 0.0
    logdet0 = 0.0
    logdetn = 0.0
    for d in range(D):
        logdet0 += 2.0 * math.log(L0[d, d])
        logdetn += 2.0 * math.log(chol[k, d, d])
    an = a0 + n
    return (-0.5 * n * D * LOG_PI + _log_multigamma_half(an, D) - _log_multigamma_half(a0, D)
            + 0.5 * a0 * logdet0 - 0.5 * an * logdetn + 0.5 * D * math.log(c0 / (c0 + n)))


@njit(cache=True, nogil=True, _nrt=False)
def _chain_log_marginals(rows, labels, K, X, fill, m0, c0, a0, L0, work, cnt, mean, chol, out, fresh):
    """out[k] = sum over the members i of cluster k (rows with labels[i] == k, in the order of
    ``rows``; other labels, such as -1 for rows not yet placed, are skipped) of
    ln f(x_i,obs | the completed members before i): the eq 20 Student-t of the observed entries,
    then fill[i] into the running statistics (cnt, mean, chol: K slots of scratch). O(N D^2),
    plus O(p^2 D + p^3) for a row with gaps. ``fresh``: start from the prior (else continue
    from the running statistics and terms passed in)."""
    D = X.shape[1]
    for k in range(K if fresh else 0):
        out[k] = 0.0
        cnt[k] = 0.0
        for a in range(D):
            mean[k, a] = m0[a]
            for b in range(D):
                chol[k, a, b] = L0[a, b]
    v = work[0]
    for t in range(rows.shape[0]):
        i = rows[t]
        k = labels[i]
        if k < 0 or k >= K:
            continue
        n = cnt[k]
        if _has_gap(X, i):
            s = _marginal_nlp(X, i, mean[k], chol[k], n, c0, a0, work)
        else:
            h, cf, cs = _student_constants(n, chol[k], c0, a0)
            s = _student_nlp(X, i, mean[k], chol[k], h, cf, cs, work[1])
            if not s < math.inf:  # a far-out row, as in nlp
                s = _marginal_nlp(X, i, mean[k], chol[k], n, c0, a0, work)
        out[k] -= s
        _add_completed(fill, i, mean[k], chol[k], c0 + n, v)  # fill[i] into the statistics, as move does
        cnt[k] = n + 1.0


def has_gaps(fam) -> bool:
    """Whether the block's data has a missing entry (then ``observed_log_marginals`` is its term
    of the joint)."""
    return bool(np.isnan(fam[0]).any())


def observed_log_marginals(fam, labels: np.ndarray, K: int, rows: np.ndarray | None = None) -> np.ndarray:
    """ln p(X_k,obs | completions, theta0) for k < K (module docstring): the chain rule over each
    cluster's members in the order of ``rows`` (default: row index order), scoring each row's
    observed entries and adding its completed values (the block's ``fill``, which must hold the
    values every member entered its cluster with, as ``move`` leaves it). Rows whose label is
    not in 0..K-1 are skipped. Equals ``logml`` when the block has no gap (up to rounding)."""
    return chain_log_marginals(fam, labels, K, rows)[3]


def chain_log_marginals(fam, labels: np.ndarray, K: int, rows: np.ndarray | None = None, carry=None):
    """:func:`observed_log_marginals` over the rows of one part of a table, continuing the
    chain where the previous part left it: ``carry`` (None for the first part) and the result
    are (count, mean, Cholesky factor, ln p so far) per cluster, the last being the terms once
    every part has passed in the table's row order."""
    X, m0, c0, a0, L0, _, fill = fam[:N_FIXED]
    N, D = X.shape
    fresh = carry is None
    if fresh:
        carry = (np.zeros(K), np.zeros((K, D)), np.zeros((K, D, D)), np.zeros(K))
    if D == 0 or K == 0:
        return carry
    rows = np.arange(N, dtype=np.int64) if rows is None else np.ascontiguousarray(rows, dtype=np.int64)
    _chain_log_marginals(rows, np.ascontiguousarray(labels, dtype=np.int64), K, X, fill, m0, float(c0), float(a0),
                         L0, np.zeros((2 * D + 4, D)), *carry, fresh)
    return carry


def check_data(X: np.ndarray, names, family: str = NAME) -> None:
    bad = [names[j] for j in range(X.shape[1]) if np.any(np.isinf(X[:, j]))]
    if bad:
        raise ValueError(
            f"column(s) {bad} contain infinite values; the {NAME} block needs finite numbers "
            "(NaN marks a missing value, which is allowed). Replace the infinities or mark them missing."
        )


def default_prior(X: np.ndarray) -> dict:
    N, D = X.shape
    mean, var = column_mean_var(X)
    var = np.where(var > 0, var, 1.0)
    a0 = float(max(10.0, D + 3.0))
    return {"m0": mean, "c0": WITHIN_FRACTION, "a0": a0,
            "B0": np.diag(1.0 / (WITHIN_FRACTION * (a0 - D - 1.0) * var))}


def resolve_prior(user: dict, X: np.ndarray, names, family: str = NAME) -> dict:
    D = X.shape[1]
    prior = merge_prior(user, X, names, family, ("m0", "c0", "a0", "B0"), default_prior)
    m0 = np.asarray(prior["m0"], dtype=float).reshape(-1) if np.ndim(prior["m0"]) else np.full(D, float(prior["m0"]))
    if m0.shape != (D,) or not np.all(np.isfinite(m0)):
        raise ValueError(f"{family} prior 'm0' must be {D} finite numbers, got shape {m0.shape}.")
    c0, a0 = prior["c0"], prior["a0"]
    if np.ndim(c0) or not np.isfinite(c0) or c0 <= 0:
        raise ValueError(f"{family} prior 'c0' (precision scale of the mean) must be one number > 0, got {c0!r}.")
    if np.ndim(a0) or not np.isfinite(a0) or a0 <= D - 1:
        raise ValueError(
            f"{family} prior 'a0' (Wishart degrees of freedom) must be one number > D - 1 = {D - 1}, got {a0!r}."
        )
    return {"m0": m0, "c0": float(c0), "a0": float(a0), "B0": spd_matrix(prior["B0"], "B0 (Wishart scale matrix)", D, family)}


def build(X: np.ndarray, prior: dict, cap: int):
    D = X.shape[1]
    L0 = np.linalg.cholesky(np.linalg.inv(prior["B0"])) if D else np.zeros((0, 0))
    X = np.ascontiguousarray(X)
    return (X, np.ascontiguousarray(prior["m0"]), prior["c0"], prior["a0"],
            np.ascontiguousarray(L0), np.zeros((2 * D + 4, D)), X.copy(),
            np.zeros(cap), np.zeros((cap, D)), np.zeros((cap, D, D)), np.zeros(cap), np.zeros(cap), np.zeros(cap),
            np.zeros(cap))


def empty(N: int, cap: int):
    """An unused block: zero columns, so the kernel's loops over it do nothing."""
    return (np.zeros((N, 0)), np.zeros(0), 1.0, 1.0, np.zeros((0, 0)), np.zeros((4, 0)), np.zeros((N, 0)),
            np.zeros(cap), np.zeros((cap, 0)), np.zeros((cap, 0, 0)), np.zeros(cap), np.zeros(cap), np.zeros(cap),
            np.zeros(cap))


def summary(fam, K: int):
    """Posterior mean m_k and the posterior mean covariance E[Sigma] = T_k/(a_k - D - 1)."""
    X, m0, c0, a0, L0 = fam[:5]
    cnt, mean, chol = fam[7][:K], fam[8][:K], fam[9][:K]
    D = X.shape[1]
    T = np.einsum("kab,kcb->kac", chol, chol)
    dof = a0 + cnt - D - 1.0
    # E[Sigma] is finite only for a_k > D + 1; otherwise show the mode T/(a_k + D + 1).
    denom = np.where(dof > 0, dof, a0 + cnt + D + 1.0)
    return mean.copy(), T / denom[:, None, None]


def describe(block, X: np.ndarray) -> list[str]:
    """The prior in words: E[Sigma] = B0^-1/(a0 - D - 1) against each feature's variance
    (PLOS Appendix G), how far centres lie (Cov(mu) = E[Sigma]/c0), the weight a0."""
    p, sub = block.prior, X[:, block.columns]
    sd = column_sd(sub)
    D = sub.shape[1]
    T0 = np.linalg.inv(p["B0"])
    if p["a0"] > D + 1:
        within = np.sqrt(np.diag(T0) / (p["a0"] - D - 1)) / sd
        centres = np.sqrt(np.diag(T0) / (p["a0"] - D - 1) / p["c0"]) / sd
        return [spread_sentence(within, block.names),
                f"cluster centres are expected within about {centres.mean():.1f} times the feature's spread "
                f"of its prior centre",
                f"the prior on each cluster's shape weighs like {p['a0']:g} observations"]
    return ["the prior on cluster shapes is too weak (a0 <= D + 1) for a typical spread to exist",
            f"it weighs like {p['a0']:g} observations"]


def impute(fam, K: int):
    """A gap is filled with the predictive mean (also the Student-t's mode): see summary."""
    return None


def additive_statistics(fam, labels, K: int):
    """(n, s1, S2): per cluster, its rows' count (K,), sum (K, D) and sum of outer products
    (K, D, D) about the prior mean m0, of the completed rows (``fill``: a row with gaps as it
    entered its cluster). Sums over rows, so that a union of clusters has the sum of theirs and
    a row weighted by zeta adds zeta times its own (``mapdp_core.engine.coarsening``)."""
    Z = fam[6] - fam[1][None, :]
    D = Z.shape[1]
    n = np.bincount(labels, minlength=K)[:K].astype(float)
    s1 = np.zeros((K, D))
    S2 = np.zeros((K, D, D))
    for k in range(K):
        Zk = Z[labels == k]
        s1[k] = Zk.sum(axis=0)
        S2[k] = Zk.T @ Zk
    return n, s1, S2


def log_marginal_from(fam, stats) -> np.ndarray:
    """ln p(X_k | theta0) for every cluster, from :func:`additive_statistics`: ``logml``'s closed
    form (module docstring) with T_n = T0 + S + c0 n/(c0 + n) (xbar - m0)(xbar - m0)^T. With
    every statistic multiplied by zeta it is the marginal of the power likelihood
    f(x | theta)^zeta (a fractional count). Of the completed rows: see ``additive_statistics``."""
    _, m0, c0, a0, L0 = fam[:5]
    n, s1, S2 = stats
    K, D = s1.shape
    out = np.zeros(K)
    if D == 0:
        return out
    T0 = L0 @ L0.T
    logdet0 = 2.0 * float(np.log(np.diag(L0)).sum())
    for k in range(K):
        if n[k] <= 0:
            continue
        r = s1[k] / n[k]
        Tn = T0 + (S2[k] - n[k] * np.outer(r, r)) + c0 * n[k] / (c0 + n[k]) * np.outer(r, r)
        logdetn = np.linalg.slogdet(Tn)[1]
        an = a0 + n[k]
        out[k] = (-0.5 * n[k] * D * LOG_PI + _log_multigamma_half(an, D) - _log_multigamma_half(a0, D)
                  + 0.5 * a0 * logdet0 - 0.5 * an * logdetn + 0.5 * D * math.log(c0 / (c0 + n[k])))
    return out

