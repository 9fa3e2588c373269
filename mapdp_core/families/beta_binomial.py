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

from ._common import (build_columns, require_positive, count_sum_clear, count_sum_move_row, count_sum_without, log_beta, pct,
                      resolve_vector_prior)

BERNOULLI = "bernoulli"
BINOMIAL = "binomial"
PRIOR_KEYS = ("alpha0", "beta0", "n")
#: the kernel's arrays: data and prior (the first N_FIXED), then per cluster (cluster on axis 0)
LAYOUT = ("X", "a0", "b0", "ntr", "cnt", "total", "alpha", "beta", "lnB", "nl1", "nl0")
N_FIXED = 4


@njit(cache=True, inline="always")
def _posterior(a0, b0, ntr, n, t):
    """(alpha, beta, ln B(alpha, beta), -ln P(1), -ln P(0)) after n rows of ntr trials with
    t successes in all (eq 25); the last two are the Bernoulli predictive."""
    a = a0 + t
    b = b0 + ntr * n - t
    return a, b, log_beta(a, b), -math.log(a / (a + b)), -math.log(b / (a + b))


@njit(cache=True, inline="always")
def _nlp_term(x, ntr, alpha, beta, lnB, nl1, nl0):
    """-ln f(x) of the beta-binomial predictive without ln C(n, x) (eq 26)."""
    if ntr == 1.0:  # Bernoulli: f(1) = alpha/(alpha+beta), no lgamma needed
        return nl1 if x > 0.5 else nl0
    return lnB - log_beta(x + alpha, ntr - x + beta)


@njit(cache=True, inline="always")
def _refresh(i, k, X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0):
    """Recompute slot k's cached columns from its counts and sums: the columns observed in
    row i, or every column for i < 0."""
    for d in range(X.shape[1]):
        if i < 0 or X[i, d] == X[i, d]:
            al, be, lb, l1, l0 = _posterior(a0[d], b0[d], ntr[d], cnt[k, d], total[k, d])
            alpha[k, d] = al
            beta[k, d] = be
            lnB[k, d] = lb
            nl1[k, d] = l1
            nl0[k, d] = l0


@njit(cache=True, inline="always")
def reset(k, X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0):
    count_sum_clear(k, cnt, total)
    _refresh(-1, k, X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0)


@njit(cache=True, inline="always")
def move(i, k, sign, X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0):
    count_sum_move_row(i, k, sign, X, cnt, total)
    _refresh(i, k, X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0)


@njit(cache=True, inline="always")
def _nlp(i, k, loo, X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0):
    """-ln f(x_i | cluster k) without data-only constants; with ``loo``, row i left out of
    cluster k first (the arithmetic of move(-1) then nlp), without changing k. The callers
    pass a constant ``loo``, so after inlining the branch is compiled away."""
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if x != x:
            continue
        if loo:
            n, t = count_sum_without(x, k, d, cnt, total)
            al, be, lb, l1, l0 = _posterior(a0[d], b0[d], ntr[d], n, t)
            out += _nlp_term(x, ntr[d], al, be, lb, l1, l0)
        else:
            out += _nlp_term(x, ntr[d], alpha[k, d], beta[k, d], lnB[k, d], nl1[k, d], nl0[k, d])
    return out


@njit(cache=True, inline="always")
def nlp(i, k, X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0):
    return _nlp(i, k, False, X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0)


@njit(cache=True, inline="always")
def nlp_loo(i, k, X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0):
    """nlp of row i under cluster k with row i left out."""
    return _nlp(i, k, True, X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0)


@njit(cache=True, inline="always")
def pconst(i, X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0):
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            out -= math.lgamma(ntr[d] + 1.0) - math.lgamma(x + 1.0) - math.lgamma(ntr[d] - x + 1.0)
    return out


@njit(cache=True, inline="always")
def logml(k, X, a0, b0, ntr, cnt, total, alpha, beta, lnB, nl1, nl0):
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
    return {"alpha0": 2.0 * p, "beta0": 2.0 * (1.0 - p), "n": ntr}


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
