"""Gaussian likelihoods with a known covariance: spherical (PLOS Algorithm 2) and full.

Both reduce to one kernel of independent, per-coordinate Gaussians with a known noise
variance ``s2`` and a Gaussian prior ``N(mu0, tau2)`` on each coordinate of the mean:

* spherical, known variance sigma2 (PLOS Appendix A, eqs 14-15): ``s2 = sigma2``,
  ``tau2 = sigma0_2`` in every coordinate;
* known covariance Sigma with prior N(mu0, Sigma0) on the mean (eqs 16-17): with the
  generalised eigenvectors ``V`` of ``(Sigma0^-1, Sigma^-1)``, normalised so that
  ``V^T Sigma^-1 V = I`` and ``V^T Sigma0^-1 V = diag(lam)``, the coordinates
  ``y = V^-1 x`` have noise variance 1 and independent prior variances ``1/lam``:
  ``Sigma_k + Sigma = V diag(1/(lam+n) + 1) V^T``. The Jacobian adds
  ``ln|det V| = 0.5 ln|Sigma|`` to every -log density, a per-point constant.

Per coordinate (eq 14): ``tau_n = 1/(1/tau2 + n/s2)``, ``mu_n = tau_n (mu0/tau2 + sum x / s2)``,
predictive ``N(mu_n, tau_n + s2)`` (eq 15, normalising constant included).

Missing values (ALGORITHMS.md "Missing values", PLOS Appendix F). A spherical block's
coordinates are independent, so a missing entry just drops its coordinate. With a known
full covariance the whitened coordinates mix every entry, so when any known-covariance
block has gaps the kernel also keeps the raw rows (``raw``) and the block-diagonal maps
``tox`` (x = V y) and ``toy`` (y = V^-1 x): a row with a gap is scored by the exact
Gaussian marginal of its observed entries, N(x_o; (V m_k)_o, (V diag(v_k) V^T)_oo) (eq 17
restricted to o), and a row with nothing observed contributes nothing. Its Jacobian is
then in that density, so the per-row constant ln|det V| is added to complete rows only
(``ModelData``). As for the Normal-Wishart block, the statistics are an approximation: a
row joins a cluster with its missing entries set to E[x_mis | x_o] under that cluster's
predictive, and leaves with the same values (``Y`` holds them), so add and remove stay
exact inverses; ``logml`` is that of the completed data. A gap in a coordinate that no
other coordinate depends on (a spherical block, a one-column block) is not completed: it
is left out, exactly, as without a known-covariance block.

Empirical-Bayes default (``default_prior``): ``mu0`` = the data mean; the known
within-cluster variance is WITHIN_FRACTION = 20 % of the data variance ("a typical
cluster spreads about 45 % as widely as the whole feature"); the prior variance of a
cluster mean is the data variance itself (cluster centres lie where the data lie).
For the spherical family these are averaged over the columns.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.linalg
from numba import njit

from ._common import (LOG_2PI, WITHIN_FRACTION, as_column_vector, back_solve, cholesky_in_place, column_sd,
                      forward_solve, grouped_moments, half_square, log_diagonal_sum, merge_prior,
                      observed_indices, scatter_from, spd_matrix, spread_sentence, welford_move)

SPHERICAL = "spherical_gaussian"
KNOWN_COV = "gaussian_known_cov"

#: the kernel's arrays: data and prior (the first N_FIXED), then per cluster (cluster on axis 0)
LAYOUT = ("X", "mu0", "tau2", "s2", "raw", "tox", "toy", "work", "cnt", "mean", "m2", "pm", "pv", "pc")
# X: rows in the independent coordinates (NaN where missing; for the rows with gaps of a
# known-covariance block, the completed values they last joined a cluster with).
# raw: the rows in data units when a known-covariance block has gaps, else zero rows.
# work: scratch: rows 0..D-1 a Cholesky factor, row D observed indices, rows D+1..D+5 a
# solve, a mean, a leave-one-out location and variance, and a completed row.
N_FIXED = 8


@njit(cache=True, _nrt=False)
def _refresh_column(k, d, mu0, tau2, s2, cnt, mean, pm, pv, pc):
    n = cnt[k, d]
    tau_n = 1.0 / (1.0 / tau2[d] + n / s2[d])
    pm[k, d] = tau_n * (mu0[d] / tau2[d] + n * mean[k, d] / s2[d])
    pv[k, d] = tau_n + s2[d]
    pc[k, d] = 0.5 * (LOG_2PI + math.log(pv[k, d]))


@njit(cache=True, inline="always")
def reset(k, fam):
    X, mu0, tau2, s2, raw, tox, toy, work, cnt, mean, m2, pm, pv, pc = fam
    for d in range(X.shape[1]):
        cnt[k, d] = 0.0
        mean[k, d] = 0.0
        m2[k, d] = 0.0
        _refresh_column(k, d, mu0, tau2, s2, cnt, mean, pm, pv, pc)


@njit(cache=True, _nrt=False)
def _has_gap(i, raw):
    if raw.shape[0] == 0:  # no known-covariance block has gaps: the per-coordinate path
        return False
    for a in range(raw.shape[1]):
        if raw[i, a] != raw[i, a]:
            return True
    return False


@njit(cache=True, _nrt=False)
def _observed_factor(i, raw, tox, m, v, work):
    """For row i's observed entries o: the Cholesky factor of C_oo, C = V diag(v) V^T, in
    work[:p, :p], the indices o in work[D], and (V m)_o in work[D + 2]. Returns p = |o|.
    O(p^2 D), only for rows with gaps."""
    D = raw.shape[1]
    S = work[:D]
    idx = work[D]
    mx = work[D + 2]
    p = observed_indices(raw, i, idx)
    for r in range(p):
        a = int(idx[r])
        t = 0.0
        for j in range(D):
            t += tox[a, j] * m[j]
        mx[r] = t
        for c in range(r + 1):
            b = int(idx[c])
            t = 0.0
            for j in range(D):
                t += tox[a, j] * v[j] * tox[b, j]
            S[r, c] = t
    cholesky_in_place(S, p)
    return p


@njit(cache=True, _nrt=False)
def _observed_residual(i, raw, tox, m, v, work):
    """_observed_factor, then the residual x_o - (V m)_o of row i into work[D + 1]; returns p."""
    D = raw.shape[1]
    p = _observed_factor(i, raw, tox, m, v, work)
    for r in range(p):
        work[D + 1, r] = raw[i, int(work[D, r])] - work[D + 2, r]
    return p


@njit(cache=True, _nrt=False)
def _marginal_nlp(i, raw, tox, m, v, work):
    """-ln N(x_o; (V m)_o, (V diag(v) V^T)_oo): eq 17 on the observed entries of row i,
    in data units (the Jacobian included)."""
    D = raw.shape[1]
    p = _observed_residual(i, raw, tox, m, v, work)
    S = work[:D]
    q = forward_solve(S, p, work[D + 1])
    return 0.5 * q + log_diagonal_sum(S, p) + 0.5 * p * LOG_2PI


@njit(cache=True, _nrt=False)
def _complete_row(i, X, raw, tox, toy, m, v, work):
    """Y[i] = V^-1 x with each missing entry of x set to E[x_mis | x_o] = m_mis +
    C_mo C_oo^-1 (x_o - m_o) under the predictive N(V m, V diag(v) V^T) (Appendix F)."""
    D = raw.shape[1]
    p = _observed_residual(i, raw, tox, m, v, work)
    S = work[:D]
    idx = work[D]
    y = work[D + 1]
    xf = work[D + 5]
    forward_solve(S, p, y)  # y = C_oo^-1 (x_o - m_o)
    back_solve(S, p, y)
    for a in range(D):
        x = raw[i, a]
        if x != x and _alone(a, toy):
            x = math.nan  # its own coordinate (spherical or one-column block): left out, exactly
        elif x != x:
            x = 0.0
            for j in range(D):
                x += tox[a, j] * m[j]
            for r in range(p):
                b = int(idx[r])
                t = 0.0
                for j in range(D):
                    t += tox[a, j] * v[j] * tox[b, j]
                x += t * y[r]
        xf[a] = x
    for d in range(D):
        if xf[d] != xf[d]:
            X[i, d] = math.nan
            continue
        t = 0.0
        for a in range(D):
            if toy[d, a] != 0.0:
                t += toy[d, a] * xf[a]
        X[i, d] = t


@njit(cache=True, _nrt=False)
def _alone(a, toy):
    """Whether coordinate a maps to its own independent coordinate and to no other (its
    block is spherical or has one column), so that a gap there needs no completion."""
    for b in range(toy.shape[0]):
        if b != a and (toy[a, b] != 0.0 or toy[b, a] != 0.0):
            return False
    return True


@njit(cache=True, inline="always")
def move(i, k, sign, fam):
    X, mu0, tau2, s2, raw, tox, toy, work, cnt, mean, m2, pm, pv, pc = fam
    if sign > 0 and _has_gap(i, raw):
        _complete_row(i, X, raw, tox, toy, pm[k], pv[k], work)
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            welford_move(x, k, d, sign, cnt, mean, m2)
            _refresh_column(k, d, mu0, tau2, s2, cnt, mean, pm, pv, pc)


@njit(cache=True, inline="always")
def nlp(i, k, fam):
    """-ln f(x_i | theta_k^{-i}) summed over observed coordinates (eq 15); for a row with
    gaps in a known-covariance block, the marginal of its observed entries (eq 17)."""
    X, mu0, tau2, s2, raw, tox, toy, work, cnt, mean, m2, pm, pv, pc = fam
    if _has_gap(i, raw):
        return _marginal_nlp(i, raw, tox, pm[k], pv[k], work)
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            r = x - pm[k, d]
            out += 0.5 * r * r / pv[k, d] + pc[k, d]
    # +inf only when a square overflowed (a far-out row): rescored with the overflow-safe
    # kernel. Checking once here, not per term, keeps the sweep as fast as before the check.
    if out < math.inf:
        return out
    return _far_nlp(i, k, X, pm, pv, pc)


@njit(cache=True, _nrt=False)
def _far_nlp(i, k, X, pm, pv, pc):
    """nlp for a row whose squared residual overflows, each square scaled first."""
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            out += half_square(x, pm[k, d], pv[k, d]) + pc[k, d]
    return out


@njit(cache=True, inline="always")
def nlp_loo(i, k, fam):
    """nlp of row i under cluster k with row i itself left out, without touching k's
    statistics (the same arithmetic as move(-1) then nlp)."""
    X, mu0, tau2, s2, raw, tox, toy, work, cnt, mean, m2, pm, pv, pc = fam
    if _has_gap(i, raw):
        return _marginal_nlp_loo(i, k, X, mu0, tau2, s2, raw, tox, work, cnt, mean, pm, pv)
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            loc, var = _loo_column(x, k, d, mu0, tau2, s2, cnt, mean)
            out += half_square(x, loc, var) + 0.5 * (LOG_2PI + math.log(var))
    return out


@njit(cache=True, _nrt=False)
def _loo_column(x, k, d, mu0, tau2, s2, cnt, mean):
    """Predictive location and variance of coordinate d of cluster k without the value x."""
    n1 = cnt[k, d] - 1.0
    mu = 0.0
    if n1 > 0.0:
        mu = mean[k, d] - (x - mean[k, d]) / n1
    else:
        n1 = 0.0
    tau_n = 1.0 / (1.0 / tau2[d] + n1 / s2[d])
    return tau_n * (mu0[d] / tau2[d] + n1 * mu / s2[d]), tau_n + s2[d]


@njit(cache=True, _nrt=False)
def _marginal_nlp_loo(i, k, X, mu0, tau2, s2, raw, tox, work, cnt, mean, pm, pv):
    """The observed-entries marginal of a row with gaps under cluster k without the row
    (X[i] holds the completed values it entered with; NaN where it did not enter)."""
    D = X.shape[1]
    loc_k = work[D + 3]
    var_k = work[D + 4]
    for d in range(D):
        if X[i, d] != X[i, d]:
            loc_k[d], var_k[d] = pm[k, d], pv[k, d]
        else:
            loc_k[d], var_k[d] = _loo_column(X[i, d], k, d, mu0, tau2, s2, cnt, mean)
    return _marginal_nlp(i, raw, tox, loc_k, var_k, work)


@njit(cache=True, inline="always")
def logml(k, fam):
    """ln p(X_k | theta0): per coordinate, x ~ N(mu0 1, s2 I + tau2 1 1^T)."""
    X, mu0, tau2, s2, raw, tox, toy, work, cnt, mean, m2, pm, pv, pc = fam
    out = 0.0
    for d in range(X.shape[1]):
        n = cnt[k, d]
        if n > 0.0:
            v = s2[d] + n * tau2[d]
            r = mean[k, d] - mu0[d]
            out += (-0.5 * n * (LOG_2PI + math.log(s2[d])) + 0.5 * math.log(s2[d] / v)
                    - 0.5 * m2[k, d] / s2[d] - 0.5 * n * r * r / v)
    return out


def check_data(X: np.ndarray, names, family: str) -> None:
    bad = [names[j] for j in range(X.shape[1]) if np.any(np.isinf(X[:, j]))]
    if bad:
        raise ValueError(f"column(s) {bad} contain infinite values; {family} needs finite reals.")


def default_prior(X: np.ndarray, family: str) -> dict:
    mean = np.nanmean(X, axis=0)
    var = np.nanvar(X, axis=0)
    var = np.where(var > 0, var, 1.0)
    if family == SPHERICAL:
        v = float(np.mean(var))
        return {"mu0": mean, "sigma2": WITHIN_FRACTION * v, "sigma0_2": v}
    cov = np.atleast_2d(np.ma.cov(np.ma.masked_invalid(X), rowvar=False).filled(0.0))
    cov = cov + np.diag(np.where(np.diag(cov) > 0, 0.0, 1.0)) + 1e-9 * np.diag(var)
    return {"mu0": mean, "Sigma": WITHIN_FRACTION * cov, "Sigma0": cov}


def resolve_prior(user: dict, X: np.ndarray, names, family: str) -> dict:
    D = X.shape[1]
    if family == SPHERICAL:
        keys = ("mu0", "sigma2", "sigma0_2")
    else:
        keys = ("mu0", "Sigma", "Sigma0")
    prior = merge_prior(user, X, names, family, keys, lambda X: default_prior(X, family))
    out = {"mu0": as_column_vector(prior["mu0"], D, "mu0", family)}
    if family == SPHERICAL:
        for key in ("sigma2", "sigma0_2"):
            value = np.asarray(prior[key], dtype=float)
            if value.ndim != 0 or not np.isfinite(value) or value <= 0:
                raise ValueError(f"{family} prior '{key}' must be one positive number, got {prior[key]!r}.")
            out[key] = float(value)
    else:
        out["Sigma"] = spd_matrix(prior["Sigma"], "Sigma", D, family)
        out["Sigma0"] = spd_matrix(prior["Sigma0"], "Sigma0", D, family)
    return out


class Transform:
    """Map between data coordinates x and the kernel's independent coordinates y."""

    def __init__(self, prior: dict, family: str):
        D = len(prior["mu0"])
        if family == SPHERICAL:
            self.to_y = np.eye(D)
            self.to_x = np.eye(D)
            self.mu0 = prior["mu0"]
            self.tau2 = np.full(D, prior["sigma0_2"])
            self.s2 = np.full(D, prior["sigma2"])
            self.log_jacobian = 0.0
        else:
            P = np.linalg.inv(prior["Sigma"])
            A = np.linalg.inv(prior["Sigma0"])
            lam, V = scipy.linalg.eigh(0.5 * (A + A.T), 0.5 * (P + P.T))
            self.to_x = V                   # x = V y
            self.to_y = V.T @ P             # y = V^-1 x, since V^T P V = I
            self.mu0 = self.to_y @ prior["mu0"]
            self.tau2 = 1.0 / lam
            self.s2 = np.ones(D)
            self.log_jacobian = 0.5 * np.linalg.slogdet(prior["Sigma"])[1]


def kernel_rows(parts, N: int):
    """The fixed kernel arrays (Y, raw, tox, toy, work) for rows of one or more blocks.

    ``parts`` is a list of (rows of the block in data units, its Transform, its family).
    A spherical block is copied (V = I), so that a missing entry stays in its own
    coordinate; a known-covariance block is whitened, and if any of its rows has a gap
    the raw rows are kept for the exact marginal. Also returns, per row, whether it is
    scored in data units (then the Jacobian is inside its density)."""
    D = sum(x.shape[1] for x, _, _ in parts)
    ys = [x.copy() if fam == SPHERICAL else x @ t.to_y.T for x, t, fam in parts]
    Y = np.ascontiguousarray(np.hstack(ys)) if ys else np.zeros((N, 0))
    gaps = any(fam == KNOWN_COV and np.isnan(x).any() for x, _, fam in parts)
    if gaps:
        raw = np.ascontiguousarray(np.hstack([x for x, _, _ in parts]))
        in_data_units = np.isnan(raw).any(axis=1)
    else:
        raw, in_data_units = np.zeros((0, D)), np.zeros(N, dtype=bool)
    tox = scipy.linalg.block_diag(*[t.to_x for _, t, _ in parts]) if parts else np.zeros((0, 0))
    toy = scipy.linalg.block_diag(*[t.to_y for _, t, _ in parts]) if parts else np.zeros((0, 0))
    return (Y, raw, np.ascontiguousarray(tox), np.ascontiguousarray(toy), np.zeros((D + 6, D))), in_data_units


def summary(fam, K: int, t: Transform):
    """Posterior mean of each cluster mean, and the predictive covariance, in data units."""
    pm, pv = fam[N_FIXED + 3][:K], fam[N_FIXED + 4][:K]
    means = pm @ t.to_x.T
    covs = np.einsum("ij,kj,lj->kil", t.to_x, pv, t.to_x)
    return means, covs


def describe(block, X: np.ndarray) -> list[str]:
    """The prior in words: the known within-cluster spread and the prior spread of centres
    (eqs 14-17), against each feature's spread."""
    p = block.prior
    sd = column_sd(X[:, block.columns])
    if block.family == SPHERICAL:
        return [spread_sentence(np.sqrt(p["sigma2"]) / sd, block.names) + " (the same in every direction, known)",
                f"cluster centres are expected within about {np.mean(np.sqrt(p['sigma0_2']) / sd):.1f} times the "
                "feature's spread of its prior centre"]
    return [spread_sentence(np.sqrt(np.diag(p["Sigma"])) / sd, block.names) + " (known, shared by all clusters)",
            f"cluster centres are expected within about {np.mean(np.sqrt(np.diag(p['Sigma0'])) / sd):.1f} "
            "times the feature's spread of its prior centre"]


def impute(fam, K: int):
    """A gap is filled with the predictive mean (also the Gaussian's mode): see summary."""
    return None


def additive_statistics(fam, labels, K: int):
    """(n, s1, s2): per independent coordinate, the count, sum and sum of squares about mu0, each with
    the cluster on axis 0, of the partition ``labels`` (0..K-1): sums over rows, so that a union
    of clusters has the sum of theirs and a row weighted by zeta adds zeta times its own
    (``mapdp_core.engine.coarsening``)."""
    return grouped_moments(fam[0], labels, K, fam[1])


def log_marginal_from(fam, stats) -> np.ndarray:
    """ln p(X_k | theta0) for every cluster, from :func:`additive_statistics` (``logml``'s closed
    form, vectorised; the same data-only constants left out). With every statistic multiplied
    by zeta it is the marginal of the power likelihood f(x | theta)^zeta (a fractional count)."""
    _, mu0, tau2, s2 = fam[:4]
    n, s1, _ = stats
    seen = n > 0
    r = np.where(seen, s1 / np.where(seen, n, 1.0), 0.0)  # xbar - mu0
    v = s2 + n * tau2
    terms = (-0.5 * n * (LOG_2PI + np.log(s2)) + 0.5 * np.log(s2 / v) - 0.5 * scatter_from(*stats) / s2
             - 0.5 * n * r * r / v)
    return np.where(seen, terms, 0.0).sum(axis=1)
