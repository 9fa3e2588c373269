"""Bernoulli and binomial(n) data with a Beta(alpha0, beta0) prior (PLOS Appendix A, eqs 25-27).

Posterior: alpha = alpha0 + sum x, beta = beta0 + n_trials * N - sum x.
Predictive (beta-binomial, eq 26): -ln f(x) = -ln C(n, x) - ln B(x + alpha, n - x + beta) + ln B(alpha, beta).
The binomial coefficient depends on the data only, so it is kept out of the per-cluster
comparison and added once per point (``pconst``).
Marginal likelihood: sum ln C(n, x) + ln B(alpha0 + S, beta0 + n N - S) - ln B(alpha0, beta0).

Empirical-Bayes default: a Beta prior centred on the overall success rate p of the column
with the weight of two observations, alpha0 = 2 p, beta0 = 2 (1 - p), p kept inside
[0.5/(n N + 1), 1 - 0.5/(n N + 1)] so that both stay > 0. ``n`` (the number of trials)
defaults to 1 for "bernoulli" and to the column maximum for "binomial".
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.special import betaln

from ._common import (beta_prior_two, build_columns, count_sum_clear, count_sum_move, count_sum_statistics,
                      count_sum_without, log_beta, pct, require_positive, resolve_vector_prior)

BERNOULLI = "bernoulli"
BINOMIAL = "binomial"
PRIOR_KEYS = ("alpha0", "beta0", "n")
#: the kernel's arrays: data and prior (the first N_FIXED), then per cluster (cluster on axis 0)
LAYOUT = ("X", "a0", "b0", "ntr", "cnt", "total", "alpha", "beta", "lnB", "nl1", "nl0")
N_FIXED = 4


@njit(cache=True, _nrt=False)
def _posterior(a0, b0, ntr, n, t):
    """(alpha, beta) after n observations of ntr trials with t successes in all."""
    return a0 + t, b0 + ntr * n - t


@njit(cache=True, _nrt=False)
def _bernoulli_nlp(x, a, b):
    """-ln f(x) of one trial: f(1) = alpha/(alpha + beta), no lgamma needed."""
    return -math.log(a / (a + b)) if x > 0.5 else -math.log(b / (a + b))


@njit(cache=True, _nrt=False)
def _binomial_nlp(x, ntr, a, b, lnB):
    """-ln f(x) less the binomial coefficient (eq 26), lnB = ln B(alpha, beta)."""
    return lnB - log_beta(x + a, ntr - x + b)


@njit(cache=True, _nrt=False)
def _refresh_column(k, d, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0):
    a, b = _posterior(a0[d], b0[d], ntr[d], cnt[k, d], total[k, d])
    alpha[k, d] = a
    beta[k, d] = b
    lnB[k, d] = log_beta(a, b)
    nl1[k, d] = _bernoulli_nlp(1.0, a, b)
    nl0[k, d] = _bernoulli_nlp(0.0, a, b)


@njit(cache=True, inline="always")
def reset(k, fam):
    X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0 = fam
    for d in range(X.shape[1]):
        count_sum_clear(k, d, cnt, total)
        _refresh_column(k, d, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0)


@njit(cache=True, inline="always")
def move(i, k, sign, fam):
    X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0 = fam
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            count_sum_move(x, k, d, sign, cnt, total)
            _refresh_column(k, d, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0)


@njit(cache=True, inline="always")
def nlp(i, k, fam):
    X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0 = fam
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if math.isnan(x):
            continue
        if ntr[d] == 1.0:  # Bernoulli: both values' terms are kept per cluster
            out += nl1[k, d] if x > 0.5 else nl0[k, d]
        else:
            out += _binomial_nlp(x, ntr[d], alpha[k, d], beta[k, d], lnB[k, d])
    return out


@njit(cache=True, inline="always")
def nlp_loo(i, k, fam):
    """nlp of row i under cluster k with row i left out (the arithmetic of move(-1), nlp)."""
    X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0 = fam
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            a, b = _posterior(a0[d], b0[d], ntr[d], *count_sum_without(x, k, d, cnt, total))
            out += _bernoulli_nlp(x, a, b) if ntr[d] == 1.0 else _binomial_nlp(x, ntr[d], a, b, log_beta(a, b))
    return out


@njit(cache=True, inline="always")
def pconst(i, fam):
    X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0 = fam
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            out -= math.lgamma(ntr[d] + 1.0) - math.lgamma(x + 1.0) - math.lgamma(ntr[d] - x + 1.0)
    return out


@njit(cache=True, inline="always")
def logml(k, fam):
    X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0 = fam
    out = 0.0
    for d in range(X.shape[1]):
        if cnt[k, d] > 0.0:
            out += lnB[k, d] - log_beta(a0[d], b0[d])
    return out


def check_data(X: np.ndarray, names, family: str, ntr=None) -> None:
    for j in range(X.shape[1]):
        col = X[:, j][~np.isnan(X[:, j])]
        if np.any(np.isinf(col)):
            raise ValueError(f"column '{names[j]}' contains infinite values; {family} needs counts.")
        if np.any(col < 0) or np.any(col != np.round(col)):
            bad = int(np.sum((col < 0) | (col != np.round(col))))
            raise ValueError(
                f"column '{names[j]}' has {bad} value(s) that are not whole numbers >= 0; "
                f"{family} needs counts of successes (0/1 for bernoulli)."
            )
        limit = 1.0 if family == BERNOULLI else (None if ntr is None else ntr[j])
        if limit is not None and col.size and col.max() > limit:
            raise ValueError(
                f"column '{names[j]}' has values up to {col.max():g} but the {family} "
                f"likelihood allows at most {limit:g} successes; "
                + ("use 'binomial' or 'categorical'." if family == BERNOULLI else "raise the prior's 'n'.")
            )


def default_prior(X: np.ndarray, family: str) -> dict:
    n_obs = np.maximum(np.sum(~np.isnan(X), axis=0), 1)
    if family == BERNOULLI:
        ntr = np.ones(X.shape[1])
    else:
        ntr = np.maximum(np.nanmax(np.where(np.isnan(X), 0, X), axis=0), 1.0)
    eps = 0.5 / (ntr * n_obs + 1.0)
    p = np.clip(np.nansum(X, axis=0) / (ntr * n_obs), eps, 1 - eps)
    return {**beta_prior_two(p), "n": ntr}


def _whole_trials(values: np.ndarray, key: str, family: str) -> None:
    require_positive(values, key, family)
    if np.any(values != np.round(values)):
        raise ValueError(f"{family} prior 'n' (number of trials) must be whole numbers, got {values.tolist()}.")


def resolve_prior(user: dict, X: np.ndarray, names, family: str) -> dict:
    if family == BERNOULLI:  # one trial, not a hyperparameter
        out = resolve_vector_prior(user, X, names, family, PRIOR_KEYS[:2], lambda X: default_prior(X, family))
        out["n"] = np.ones(X.shape[1])
    else:
        out = resolve_vector_prior(user, X, names, family, PRIOR_KEYS, lambda X: default_prior(X, family),
                                   {"n": _whole_trials})
    check_data(X, names, family, out["n"])
    return out


def build(X: np.ndarray, prior: dict, cap: int):
    return build_columns(X, prior, cap, PRIOR_KEYS, LAYOUT, N_FIXED)


def summary(fam, K: int):
    """Predictive mean n alpha/(alpha + beta) per cluster and column."""
    ntr, alpha, beta = fam[3], fam[6][:K], fam[7][:K]
    return ntr * alpha / (alpha + beta)


def describe(block, X: np.ndarray) -> list[str]:
    """The prior in words: its mean success rate alpha0/(alpha0 + beta0) (eq 25) and its
    weight alpha0 + beta0 in observations."""
    p = block.prior
    rate = p["alpha0"] / (p["alpha0"] + p["beta0"])
    if block.family == BERNOULLI:
        guess = ("before seeing a cluster's data, the chance of a 'yes' is taken as "
                 + ", ".join(f"{n}: {pct(r)}" for n, r in zip(block.names, rate)))
    else:
        guess = ("before seeing a cluster's data, its typical score is taken as "
                 + ", ".join(f"{name}: {n * r:.2g} out of {n:g}" for name, n, r in zip(block.names, p["n"], rate)))
    return [guess, f"that guess weighs like {np.mean(p['alpha0'] + p['beta0']):.2g} observations"]


def impute(fam, K: int) -> np.ndarray:
    """The predictive (beta-binomial, eq 26) mode per cluster and column (PLOS Appendix F)."""
    from scipy.stats import betabinom

    ntr, alpha, beta = fam[3], fam[6][:K], fam[7][:K]
    out = np.empty((K, len(ntr)))
    for d in range(len(ntr)):
        support = np.arange(int(ntr[d]) + 1)
        pmf = betabinom.pmf(support[None, :], int(ntr[d]), alpha[:, d, None], beta[:, d, None])
        out[:, d] = np.argmax(pmf, axis=1)
    return out


#: (n, total) per cluster and column (:func:`._common.count_sum_statistics`)
additive_statistics = count_sum_statistics


def log_marginal_from(fam, stats) -> np.ndarray:
    """ln p(X_k | theta0) for every cluster, from :func:`additive_statistics` (``logml``'s closed
    form, vectorised; the same data-only constants left out). With every statistic multiplied
    by zeta it is the marginal of the power likelihood f(x | theta)^zeta (a fractional count)."""
    _, a0, b0, ntr = fam[:N_FIXED]
    n, total = stats
    terms = betaln(a0 + total, b0 + ntr * n - total) - betaln(a0, b0)
    return np.where(n > 0, terms, 0.0).sum(axis=1)
