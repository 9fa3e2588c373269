"""Geometric counts x in {0, 1, ...} (failures before a success, p(x) = p (1-p)^x) with a
Beta(alpha0, beta0) prior on p (PLOS Appendix A, eqs 30-31).

Posterior: alpha = alpha0 + n, beta = beta0 + sum x. Predictive:
f(x) = B(alpha + 1, beta + x)/B(alpha, beta) = alpha G(beta + x) G(alpha + beta) / (G(beta) G(alpha + beta + x + 1)).
Marginal likelihood: ln B(alpha0 + n, beta0 + S) - ln B(alpha0, beta0).

Empirical-Bayes default: weight of two observations centred on p = 1/(1 + mean):
alpha0 = 2 p, beta0 = 2 (1 - p), with the mean floored at 0.01 so that beta0 > 0.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.special import betaln

from ._common import (beta_prior_two, build_columns, check_counts, count_sum_clear, count_sum_move,
                      count_sum_statistics, count_sum_without, floored_column_mean, lgamma_difference,
                      log_beta, resolve_vector_prior, typical_values)

NAME = "geometric"
PRIOR_KEYS = ("alpha0", "beta0")
#: the kernel's arrays: data and prior (the first N_FIXED), then per cluster (cluster on axis 0)
LAYOUT = ("X", "a0", "b0", "cnt", "total", "lc", "beta", "apb")
N_FIXED = 3


@njit(cache=True, _nrt=False)
def _predictive(a0, b0, n, t):
    """The beta-geometric predictive's terms after n counts summing to t, with alpha = alpha0 + n
    and beta = beta0 + t: ln alpha - ln G(beta) + ln G(alpha + beta), beta and alpha + beta."""
    a = a0 + n
    b = b0 + t
    return math.log(a) - math.lgamma(b) + math.lgamma(a + b), b, a + b


@njit(cache=True, _nrt=False)
def _log_pmf(x, lc, beta, apb):
    """ln f(x) from :func:`_predictive`'s terms."""
    return lc + lgamma_difference(x, beta, apb + 1.0)


@njit(cache=True, _nrt=False)
def _refresh_column(k, d, a0, b0, cnt, total, lc, beta, apb):
    lc[k, d], beta[k, d], apb[k, d] = _predictive(a0[d], b0[d], cnt[k, d], total[k, d])


@njit(cache=True, inline="always")
def reset(k, fam):
    X, a0, b0, cnt, total, lc, beta, apb = fam
    for d in range(X.shape[1]):
        count_sum_clear(k, d, cnt, total)
        _refresh_column(k, d, a0, b0, cnt, total, lc, beta, apb)


@njit(cache=True, inline="always")
def move(i, k, sign, fam):
    X, a0, b0, cnt, total, lc, beta, apb = fam
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            count_sum_move(x, k, d, sign, cnt, total)
            _refresh_column(k, d, a0, b0, cnt, total, lc, beta, apb)


@njit(cache=True, inline="always")
def nlp(i, k, fam):
    X, a0, b0, cnt, total, lc, beta, apb = fam
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            out -= _log_pmf(x, lc[k, d], beta[k, d], apb[k, d])
    return out


@njit(cache=True, inline="always")
def nlp_loo(i, k, fam):
    """nlp of row i under cluster k with row i left out (the arithmetic of move(-1), nlp)."""
    X, a0, b0, cnt, total, lc, beta, apb = fam
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if math.isnan(x):
            continue
        out -= _log_pmf(x, *_predictive(a0[d], b0[d], *count_sum_without(x, k, d, cnt, total)))
    return out


@njit(cache=True, inline="always")
def logml(k, fam):
    X, a0, b0, cnt, total, lc, beta, apb = fam
    out = 0.0
    for d in range(X.shape[1]):
        n = cnt[k, d]
        if n > 0.0:
            out += log_beta(a0[d] + n, b0[d] + total[k, d]) - log_beta(a0[d], b0[d])
    return out


def check_data(X: np.ndarray, names, family: str = NAME) -> None:
    check_counts(X, names, NAME, integer=True)


def default_prior(X: np.ndarray) -> dict:
    return beta_prior_two(1.0 / (1.0 + floored_column_mean(X)))


def resolve_prior(user: dict, X: np.ndarray, names, family: str = NAME) -> dict:
    return resolve_vector_prior(user, X, names, NAME, PRIOR_KEYS, default_prior)


def build(X: np.ndarray, prior: dict, cap: int):
    return build_columns(X, prior, cap, PRIOR_KEYS, LAYOUT, N_FIXED)


def summary(fam, K: int):
    """Predictive mean beta/(alpha - 1) of the beta-geometric (infinite when alpha <= 1)."""
    a0, cnt, beta = fam[1], fam[3][:K], fam[6][:K]
    alpha = a0 + cnt
    return np.where(alpha > 1, beta / np.maximum(alpha - 1, 1e-300), np.inf)


def describe(block, X: np.ndarray) -> list[str]:
    """The prior in words: the beta-geometric mean beta0/(alpha0 - 1), the weight alpha0 + beta0."""
    p = block.prior
    return [typical_values("count", block.names, p["alpha0"], p["beta0"]),
            f"that guess weighs like {np.mean(p['alpha0'] + p['beta0']):.2g} observations"]


def impute(fam, K: int) -> np.ndarray:
    """The predictive (beta-geometric) mode, always 0."""
    return np.zeros((K, fam[0].shape[1]))


#: (n, total) per cluster and column (:func:`._common.count_sum_statistics`)
additive_statistics = count_sum_statistics


def log_marginal_from(fam, stats) -> np.ndarray:
    """ln p(X_k | theta0) per cluster from (n, total): the Beta-geometric marginal
    ln B(a0 + n, b0 + total) - ln B(a0, b0) per column (``logml``, vectorised). Statistics scaled
    by zeta give the power likelihood's marginal (``engine.coarsening``)."""
    _, a0, b0 = fam[:N_FIXED]
    n, total = stats
    terms = betaln(a0 + n, b0 + total) - betaln(a0, b0)
    return np.where(n > 0, terms, 0.0).sum(axis=1)
