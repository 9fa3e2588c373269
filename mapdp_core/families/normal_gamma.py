"""Normal-Gamma prior per real feature: each column an independent Gaussian with unknown
mean and precision (the "elliptical" model of PLOS Section 4 for real data).

Prior: tau ~ Gamma(a0 shape, b0 rate), mu | tau ~ N(m0, 1/(c0 tau)).
Posterior after n observations with mean xbar and scatter S = sum (x - xbar)^2:
``c_n = c0 + n``, ``m_n = (c0 m0 + n xbar)/c_n``, ``a_n = a0 + n/2``,
``b_n = b0 + S/2 + c0 n (xbar - m0)^2 / (2 c_n)``.
Predictive: Student-t with ``2 a_n`` degrees of freedom, location ``m_n`` and squared
scale ``b_n (c_n + 1)/(a_n c_n)``.
Marginal likelihood: ``lnGamma(a_n) - lnGamma(a0) + a0 ln b0 - a_n ln b_n
+ 0.5 ln(c0/c_n) - (n/2) ln(2 pi)``.

Empirical-Bayes default: the one-dimensional case of the Normal-Wishart default
(normal_wishart.py), so that a one-column Normal-Wishart block and a Normal-Gamma
column define the same model (Wishart(B0, 10) on a scalar is Gamma(5, rate 1/(2 B0))):
``m0`` = column mean, ``a0 = 5``, ``b0 = 4 w var`` so that E[sigma^2] = b0/(a0 - 1) =
w var with w = WITHIN_FRACTION = 0.2, and ``c0 = w`` so that the cluster means spread
a priori like the data (var(mu) = E[sigma^2]/c0 = var).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.special import gammaln

from ._common import (LOG_2, LOG_2PI, LOG_PI, WITHIN_FRACTION, build_columns, column_mean_var, column_sd,
                      grouped_moments, log1p_square, resolve_vector_prior, scatter_from, spread_sentence,
                      welford_move, welford_without)

NAME = "normal_gamma"
PRIOR_KEYS = ("m0", "c0", "a0", "b0")
#: the kernel's arrays: data and prior (the first N_FIXED), then per cluster (cluster on axis 0)
LAYOUT = ("X", "m0", "c0", "a0", "b0", "cnt", "mean", "m2", "loc", "ivs", "hexp", "const", "gloo")
# gloo: the part of the Student-t constant with one row left out that depends on the count
# only (ln G(nu/2) - ln G((nu+1)/2) + (ln nu + ln pi)/2 at n - 1), so that scoring a row
# against its own cluster needs no lgamma (nlp_loo)
N_FIXED = 5


@njit(cache=True, inline="always")
def _count_constant(an):
    """ln G(nu/2) - ln G((nu+1)/2) + (ln nu + ln pi)/2 with nu = 2 an: the Student-t
    predictive's constant less its (ln s)/2, a function of the count alone."""
    nu = 2.0 * an
    return math.lgamma(0.5 * nu) - math.lgamma(0.5 * (nu + 1.0)) + 0.5 * (math.log(nu) + LOG_PI)


@njit(cache=True, _nrt=False)
def _posterior(m0, c0, a0, b0, n, mean, m2):
    """(c_n, a_n, b_n) after n observations with mean ``mean`` and scatter ``m2``."""
    cn = c0 + n
    r = mean - m0
    return cn, a0 + 0.5 * n, b0 + 0.5 * m2 + 0.5 * c0 * n * r * r / cn


@njit(cache=True, _nrt=False)
def _predictive(m0, c0, a0, b0, n, mean, m2):
    """(a_n, nu, s, loc): the Student-t predictive's 2 a_n = nu degrees of freedom, squared
    scale s and location after n observations with mean ``mean`` and scatter ``m2``."""
    cn, an, bn = _posterior(m0, c0, a0, b0, n, mean, m2)
    return an, 2.0 * an, bn * (cn + 1.0) / (an * cn), (c0 * m0 + n * mean) / cn


@njit(cache=True, _nrt=False)
def _refresh_column(k, d, m0, c0, a0, b0, cnt, mean, m2, loc, ivs, hexp, const, gloo):
    n = cnt[k, d]
    an, nu, s, loc[k, d] = _predictive(m0[d], c0[d], a0[d], b0[d], n, mean[k, d], m2[k, d])
    ivs[k, d] = 1.0 / (nu * s)
    hexp[k, d] = 0.5 * (nu + 1.0)
    lg = math.lgamma(an) - math.lgamma(an + 0.5)
    const[k, d] = lg + 0.5 * (math.log(nu) + LOG_PI + math.log(s))
    if n >= 1.0:
        # at n - 1, a_n is an - 1/2 and, by ln G(x + 1) = ln G(x) + ln x with x = an - 1/2,
        # ln G(an - 1/2) - ln G(an) = -lg - ln(an - 1/2): one log instead of two lgamma
        gloo[k, d] = -lg - 0.5 * math.log(an - 0.5) + 0.5 * (LOG_2 + LOG_PI)
    else:
        gloo[k, d] = _count_constant(an)


@njit(cache=True, inline="always")
def reset(k, fam):
    X, m0, c0, a0, b0, cnt, mean, m2, loc, ivs, hexp, const, gloo = fam
    for d in range(X.shape[1]):
        cnt[k, d] = 0.0
        mean[k, d] = 0.0
        m2[k, d] = 0.0
        _refresh_column(k, d, m0, c0, a0, b0, cnt, mean, m2, loc, ivs, hexp, const, gloo)


@njit(cache=True, inline="always")
def move(i, k, sign, fam):
    X, m0, c0, a0, b0, cnt, mean, m2, loc, ivs, hexp, const, gloo = fam
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            welford_move(x, k, d, sign, cnt, mean, m2)
            _refresh_column(k, d, m0, c0, a0, b0, cnt, mean, m2, loc, ivs, hexp, const, gloo)


@njit(cache=True, inline="always")
def nlp(i, k, fam):
    X, m0, c0, a0, b0, cnt, mean, m2, loc, ivs, hexp, const, gloo = fam
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            r = x - loc[k, d]
            out += hexp[k, d] * math.log1p(r * r * ivs[k, d]) + const[k, d]
    # +inf only when a square overflowed (a far-out row): rescored with the overflow-safe
    # kernel. Checking once here, not per term, keeps the sweep as fast as before the check.
    if out < math.inf:
        return out
    return _far_nlp(i, k, X, loc, ivs, hexp, const)


@njit(cache=True, _nrt=False)
def _far_nlp(i, k, X, loc, ivs, hexp, const):
    """nlp for a row whose squared residual overflows, term by term in logarithms."""
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            out += hexp[k, d] * log1p_square(x, loc[k, d], ivs[k, d]) + const[k, d]
    return out



@njit(cache=True, inline="always")
def nlp_loo(i, k, fam):
    """nlp of row i under cluster k with row i left out (the arithmetic of move(-1), nlp)."""
    X, m0, c0, a0, b0, cnt, mean, m2, loc, ivs, hexp, const, gloo = fam
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if math.isnan(x):
            continue
        n, mu, ss = welford_without(x, k, d, cnt, mean, m2)
        an, nu, s, loc_d = _predictive(m0[d], c0[d], a0[d], b0[d], n, mu, ss)
        const_d = gloo[k, d] + 0.5 * math.log(s)  # gloo: the count's part, kept per cluster
        out += 0.5 * (nu + 1.0) * log1p_square(x, loc_d, 1.0 / (nu * s)) + const_d
    return out


@njit(cache=True, inline="always")
def logml(k, fam):
    X, m0, c0, a0, b0, cnt, mean, m2, loc, ivs, hexp, const, gloo = fam
    out = 0.0
    for d in range(X.shape[1]):
        n = cnt[k, d]
        if n > 0.0:
            cn, an, bn = _posterior(m0[d], c0[d], a0[d], b0[d], n, mean[k, d], m2[k, d])
            out += (math.lgamma(an) - math.lgamma(a0[d]) + a0[d] * math.log(b0[d])
                    - an * math.log(bn) + 0.5 * math.log(c0[d] / cn) - 0.5 * n * LOG_2PI)
    return out


def check_data(X: np.ndarray, names, family: str = NAME) -> None:
    bad = [names[j] for j in range(X.shape[1]) if np.any(np.isinf(X[:, j]))]
    if bad:
        raise ValueError(f"column(s) {bad} contain infinite values; {family} needs finite reals.")


def default_prior(X: np.ndarray) -> dict:
    mean, var = column_mean_var(X)
    var = np.where(var > 0, var, 1.0)
    D = X.shape[1]
    return {"m0": mean, "c0": np.full(D, WITHIN_FRACTION), "a0": np.full(D, 5.0),
            "b0": 4.0 * WITHIN_FRACTION * var}


def resolve_prior(user: dict, X: np.ndarray, names, family: str = NAME) -> dict:
    return resolve_vector_prior(user, X, names, NAME, PRIOR_KEYS, default_prior, {"m0": None})


def build(X: np.ndarray, prior: dict, cap: int):
    return build_columns(X, prior, cap, PRIOR_KEYS, LAYOUT, N_FIXED)


def summary(fam, K: int):
    return fam[8][:K].copy()


def describe(block, X: np.ndarray) -> list[str]:
    """The prior in words: E[sigma^2] = b0/(a0 - 1) per column, centres' spread E[sigma^2]/c0,
    and the weight 2 a0 of the Gamma prior in observations."""
    p = block.prior
    sd = column_sd(X[:, block.columns])
    var = np.where(p["a0"] > 1, p["b0"] / np.maximum(p["a0"] - 1, 1e-300), np.nan)
    return [spread_sentence(np.sqrt(var) / sd, block.names),
            f"cluster centres are expected within about {np.nanmean(np.sqrt(var / p['c0']) / sd):.1f} times "
            "the feature's spread of its prior centre",
            f"the prior on each cluster's spread weighs like {np.mean(2 * p['a0']):g} observations"]


def impute(fam, K: int):
    """A gap is filled with the predictive mean (also the Student-t's mode): see summary."""
    return None


def additive_statistics(fam, labels, K: int):
    """(n, s1, s2): per column, the observed entries' count, sum and sum of squares about the prior
    mean m0, each with the cluster on axis 0, of the partition ``labels`` (0..K-1): sums over
    rows, so that a union of clusters has the sum of theirs and a row weighted by zeta adds zeta
    times its own (``mapdp_core.engine.coarsening``)."""
    return grouped_moments(fam[0], labels, K, fam[1])


def log_marginal_from(fam, stats) -> np.ndarray:
    """ln p(X_k | theta0) for every cluster, from :func:`additive_statistics` (``logml``'s closed
    form, vectorised; the same data-only constants left out). With every statistic multiplied
    by zeta it is the marginal of the power likelihood f(x | theta)^zeta (a fractional count)."""
    _, m0, c0, a0, b0 = fam[:N_FIXED]
    n, s1, _ = stats
    seen = n > 0
    r = np.where(seen, s1 / np.where(seen, n, 1.0), 0.0)  # xbar - m0
    cn = c0 + n
    an = a0 + 0.5 * n
    bn = b0 + 0.5 * scatter_from(*stats) + 0.5 * c0 * n * r * r / cn
    terms = (gammaln(an) - gammaln(a0) + a0 * np.log(b0) - an * np.log(bn) + 0.5 * np.log(c0 / cn)
             - 0.5 * n * LOG_2PI)
    return np.where(seen, terms, 0.0).sum(axis=1)
