"""Poisson counts with a Gamma(alpha0 shape, beta0 rate) prior on the rate (PLOS Appendix A).

Posterior: alpha = alpha0 + sum x, beta = beta0 + n (eq 28). Predictive: negative binomial,
f(x) = G(alpha + x)/(G(alpha) x!) (beta/(beta+1))^alpha (beta+1)^-x (the printed eq 29 is
garbled; ALGORITHMS.md). ln x! depends on the data only and is added once per point.
Marginal likelihood: alpha0 ln beta0 - lnG(alpha0) + lnG(alpha0 + S) - (alpha0 + S) ln(beta0 + n) - sum ln x!.

Empirical-Bayes default: a Gamma prior with the weight of one observation centred on the
column mean: beta0 = 1, alpha0 = max(mean, 0.01).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.special import gammaln

from ._common import (build_columns, check_counts, count_sum_move, count_sum_statistics, count_sum_without,
                      resolve_vector_prior)

NAME = "poisson"
PRIOR_KEYS = ("alpha0", "beta0")
#: the kernel's arrays: data and prior (the first N_FIXED), then per cluster (cluster on axis 0)
LAYOUT = ("X", "a0", "b0", "cnt", "total", "alpha", "lga", "alp", "lb1")
N_FIXED = 3


@njit(cache=True, _nrt=False)
def _refresh_column(k, d, a0, b0, cnt, total, alpha, lga, alp, lb1):
    a = a0[d] + total[k, d]
    b = b0[d] + cnt[k, d]
    alpha[k, d] = a
    lga[k, d] = math.lgamma(a)
    alp[k, d] = a * math.log(b / (b + 1.0))
    lb1[k, d] = math.log(b + 1.0)


@njit(cache=True, inline="always")
def reset(k, fam):
    X, a0, b0, cnt, total, alpha, lga, alp, lb1 = fam
    for d in range(X.shape[1]):
        cnt[k, d] = 0.0
        total[k, d] = 0.0
        _refresh_column(k, d, a0, b0, cnt, total, alpha, lga, alp, lb1)


@njit(cache=True, inline="always")
def move(i, k, sign, fam):
    X, a0, b0, cnt, total, alpha, lga, alp, lb1 = fam
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            count_sum_move(x, k, d, sign, cnt, total)
            _refresh_column(k, d, a0, b0, cnt, total, alpha, lga, alp, lb1)


@njit(cache=True, inline="always")
def nlp(i, k, fam):
    X, a0, b0, cnt, total, alpha, lga, alp, lb1 = fam
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            out -= math.lgamma(alpha[k, d] + x) - lga[k, d] + alp[k, d] - x * lb1[k, d]
    return out



@njit(cache=True, inline="always")
def nlp_loo(i, k, fam):
    """nlp of row i under cluster k with row i left out (same arithmetic as move(-1), nlp)."""
    X, a0, b0, cnt, total, alpha, lga, alp, lb1 = fam
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if math.isnan(x):
            continue
        n, t = count_sum_without(x, k, d, cnt, total)
        a = a0[d] + t
        b = b0[d] + n
        out -= math.lgamma(a + x) - math.lgamma(a) + a * math.log(b / (b + 1.0)) - x * math.log(b + 1.0)
    return out

@njit(cache=True, inline="always")
def pconst(i, fam):
    X, a0, b0, cnt, total, alpha, lga, alp, lb1 = fam
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            out += math.lgamma(x + 1.0)
    return out


@njit(cache=True, inline="always")
def logml(k, fam):
    X, a0, b0, cnt, total, alpha, lga, alp, lb1 = fam
    out = 0.0
    for d in range(X.shape[1]):
        n = cnt[k, d]
        if n > 0.0:
            a = a0[d] + total[k, d]
            out += (a0[d] * math.log(b0[d]) - math.lgamma(a0[d]) + math.lgamma(a)
                    - a * math.log(b0[d] + n))
    return out


def check_data(X: np.ndarray, names, family: str = NAME) -> None:
    check_counts(X, names, NAME, integer=True)


def default_prior(X: np.ndarray) -> dict:
    return {"alpha0": np.maximum(np.nanmean(X, axis=0), 0.01), "beta0": np.ones(X.shape[1])}


def resolve_prior(user: dict, X: np.ndarray, names, family: str = NAME) -> dict:
    return resolve_vector_prior(user, X, names, NAME, PRIOR_KEYS, default_prior)


def build(X: np.ndarray, prior: dict, cap: int):
    return build_columns(X, prior, cap, PRIOR_KEYS, LAYOUT, N_FIXED)


def summary(fam, K: int):
    """Posterior mean rate alpha/beta."""
    b0, cnt, alpha = fam[2], fam[3][:K], fam[5][:K]
    return alpha / (b0 + cnt)


def describe(block, X: np.ndarray) -> list[str]:
    """The prior in words: its mean rate alpha0/beta0 and its weight beta0 in observations."""
    p = block.prior
    return ["before seeing a cluster's data, its typical count is taken as "
            + ", ".join(f"{n}: {a / b:.3g}" for n, a, b in zip(block.names, p["alpha0"], p["beta0"])),
            f"that guess weighs like {np.mean(p['beta0']):.2g} observations"]


def impute(fam, K: int) -> np.ndarray:
    """The predictive (negative binomial) mode floor((alpha - 1)/beta), or 0 for alpha <= 1."""
    alpha, rate = fam[5][:K], fam[2] + fam[3][:K]
    return np.where(alpha > 1, np.floor((alpha - 1) / rate), 0.0)


#: (n, total) per cluster and column (:func:`._common.count_sum_statistics`)
additive_statistics = count_sum_statistics


def log_marginal_from(fam, stats) -> np.ndarray:
    """ln p(X_k | theta0) per cluster from (n, total): the Gamma-Poisson marginal
    a0 ln b0 - lnG(a0) + lnG(a0 + total) - (a0 + total) ln(b0 + n) per column (``logml``, vectorised).
    Statistics scaled by zeta give the power likelihood's marginal (``engine.coarsening``)."""
    _, a0, b0 = fam[:N_FIXED]
    n, total = stats
    a = a0 + total
    terms = a0 * np.log(b0) - gammaln(a0) + gammaln(a) - a * np.log(b0 + n)
    return np.where(n > 0, terms, 0.0).sum(axis=1)
