"""Exponential data (x >= 0) with a Gamma(alpha0 shape, beta0 rate) prior on the rate.

Posterior: alpha = alpha0 + n, beta = beta0 + sum x (the PLOS eq 21 swaps these two;
ALGORITHMS.md). Predictive: Lomax, -ln f(x) = -ln alpha - alpha ln beta + (alpha + 1) ln(x + beta) (eq 22).
Marginal likelihood: alpha0 ln beta0 - lnG(alpha0) + lnG(alpha0 + n) - (alpha0 + n) ln(beta0 + S).

Empirical-Bayes default: alpha0 = 2 (weak, and the predictive keeps a finite mean), beta0 =
2 x mean, so that the prior mean rate alpha0/beta0 is 1/mean.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.special import gammaln

from ._common import (build_columns, check_counts, count_sum_clear, count_sum_move, count_sum_statistics,
                      count_sum_without, resolve_vector_prior, typical_values)

NAME = "exponential"
PRIOR_KEYS = ("alpha0", "beta0")
#: the kernel's arrays: data and prior (the first N_FIXED), then per cluster (cluster on axis 0)
LAYOUT = ("X", "a0", "b0", "cnt", "total", "alpha", "beta", "lc")
N_FIXED = 3


@njit(cache=True, _nrt=False)
def _predictive(a0, b0, n, t):
    """The Lomax predictive's terms after n values summing to t: alpha = alpha0 + n,
    beta = beta0 + t and ln alpha + alpha ln beta."""
    a = a0 + n
    b = b0 + t
    return a, b, math.log(a) + a * math.log(b)


@njit(cache=True, _nrt=False)
def _nlp_term(x, alpha, beta, lc):
    """-ln f(x) from :func:`_predictive`'s terms."""
    return (alpha + 1.0) * math.log(x + beta) - lc


@njit(cache=True, _nrt=False)
def _refresh_column(k, d, a0, b0, cnt, total, alpha, beta, lc):
    alpha[k, d], beta[k, d], lc[k, d] = _predictive(a0[d], b0[d], cnt[k, d], total[k, d])


@njit(cache=True, inline="always")
def reset(k, fam):
    X, a0, b0, cnt, total, alpha, beta, lc = fam
    for d in range(X.shape[1]):
        count_sum_clear(k, d, cnt, total)
        _refresh_column(k, d, a0, b0, cnt, total, alpha, beta, lc)


@njit(cache=True, inline="always")
def move(i, k, sign, fam):
    X, a0, b0, cnt, total, alpha, beta, lc = fam
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            count_sum_move(x, k, d, sign, cnt, total)
            _refresh_column(k, d, a0, b0, cnt, total, alpha, beta, lc)


@njit(cache=True, inline="always")
def nlp(i, k, fam):
    X, a0, b0, cnt, total, alpha, beta, lc = fam
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            out += _nlp_term(x, alpha[k, d], beta[k, d], lc[k, d])
    return out


@njit(cache=True, inline="always")
def nlp_loo(i, k, fam):
    """nlp of row i under cluster k with row i left out (the arithmetic of move(-1), nlp)."""
    X, a0, b0, cnt, total, alpha, beta, lc = fam
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if math.isnan(x):
            continue
        out += _nlp_term(x, *_predictive(a0[d], b0[d], *count_sum_without(x, k, d, cnt, total)))
    return out


@njit(cache=True, inline="always")
def logml(k, fam):
    X, a0, b0, cnt, total, alpha, beta, lc = fam
    out = 0.0
    for d in range(X.shape[1]):
        n = cnt[k, d]
        if n > 0.0:
            out += (a0[d] * math.log(b0[d]) - math.lgamma(a0[d]) + math.lgamma(a0[d] + n)
                    - (a0[d] + n) * math.log(b0[d] + total[k, d]))
    return out


def check_data(X: np.ndarray, names, family: str = NAME) -> None:
    check_counts(X, names, NAME, integer=False)


def default_prior(X: np.ndarray) -> dict:
    mean = np.nanmean(X, axis=0)
    return {"alpha0": np.full(X.shape[1], 2.0), "beta0": 2.0 * np.where(mean > 0, mean, 1.0)}


def resolve_prior(user: dict, X: np.ndarray, names, family: str = NAME) -> dict:
    return resolve_vector_prior(user, X, names, NAME, PRIOR_KEYS, default_prior)


def build(X: np.ndarray, prior: dict, cap: int):
    return build_columns(X, prior, cap, PRIOR_KEYS, LAYOUT, N_FIXED)


def summary(fam, K: int):
    """Predictive (Lomax) mean beta/(alpha - 1); alpha > 1 always holds once alpha0 >= 1."""
    alpha, beta = fam[5][:K], fam[6][:K]
    return np.where(alpha > 1, beta / np.maximum(alpha - 1, 1e-300), np.inf)


def describe(block, X: np.ndarray) -> list[str]:
    """The prior in words: the Lomax mean beta0/(alpha0 - 1) and the weight alpha0."""
    p = block.prior
    return [typical_values("value", block.names, p["alpha0"], p["beta0"]),
            f"that guess weighs like {np.mean(p['alpha0']):.2g} observations"]


def impute(fam, K: int):
    """A gap is filled with the predictive (Lomax) mean: its mode, 0, says nothing."""
    return None


#: (n, total) per cluster and column (:func:`._common.count_sum_statistics`)
additive_statistics = count_sum_statistics


def log_marginal_from(fam, stats) -> np.ndarray:
    """ln p(X_k | theta0) per cluster from (n, total): the Gamma-exponential marginal
    a0 ln b0 - lnG(a0) + lnG(a0 + n) - (a0 + n) ln(b0 + total) per column (``logml``, vectorised).
    Statistics scaled by zeta give the power likelihood's marginal (``engine.coarsening``)."""
    _, a0, b0 = fam[:N_FIXED]
    n, total = stats
    terms = a0 * np.log(b0) - gammaln(a0) + gammaln(a0 + n) - (a0 + n) * np.log(b0 + total)
    return np.where(n > 0, terms, 0.0).sum(axis=1)
