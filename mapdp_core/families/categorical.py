"""Categorical data with a Dirichlet(alpha0) prior (PLOS Appendix A, eqs 23-24).

Data are category codes 0..L-1 per column. Posterior alpha_l = alpha0_l + count_l;
predictive -ln f(x) = -ln alpha_x + ln sum_l alpha_l (eq 24). Marginal likelihood:
lnG(A0) - lnG(A0 + n) + sum_l [lnG(alpha0_l + c_l) - lnG(alpha0_l)], A0 = sum alpha0.

Empirical-Bayes default: alpha0 proportional to the smoothed overall frequencies,
alpha0_l = L (c_l + 0.5)/(N + 0.5 L), a total weight of L pseudo-observations (one per
category on average), so a cluster's proportions shrink toward the population's.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.special import gammaln

from ._common import observed_columns, pct

NAME = "categorical"
#: the kernel's arrays: data and prior (the first N_FIXED), then per cluster (cluster on axis 0);
#: alpha0, counts and la run over every column's categories (column d at off[d]:off[d+1])
LAYOUT = ("X", "alpha0", "off", "A0", "cnt", "counts", "la", "lA")
N_FIXED = 4


@njit(cache=True, inline="always")
def reset(k, fam):
    X, alpha0, off, A0, cnt, counts, la, lA = fam
    for d in range(X.shape[1]):
        cnt[k, d] = 0.0
        lA[k, d] = math.log(A0[d])
        for l in range(off[d], off[d + 1]):
            counts[k, l] = 0.0
            la[k, l] = math.log(alpha0[l])


@njit(cache=True, inline="always")
def move(i, k, sign, fam):
    X, alpha0, off, A0, cnt, counts, la, lA = fam
    for d in range(X.shape[1]):
        x = X[i, d]
        if math.isnan(x):
            continue
        l = off[d] + int(x)
        cnt[k, d] += sign
        counts[k, l] += sign
        if cnt[k, d] <= 0.0:  # an emptied column returns to the prior exactly
            cnt[k, d] = 0.0
            for m in range(off[d], off[d + 1]):
                counts[k, m] = 0.0
                la[k, m] = math.log(alpha0[m])
        else:
            la[k, l] = math.log(alpha0[l] + counts[k, l])
        lA[k, d] = math.log(A0[d] + cnt[k, d])


@njit(cache=True, inline="always")
def nlp(i, k, fam):
    X, alpha0, off, A0, cnt, counts, la, lA = fam
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if not math.isnan(x):
            out += lA[k, d] - la[k, off[d] + int(x)]
    return out



@njit(cache=True, inline="always")
def nlp_loo(i, k, fam):
    """nlp of row i under cluster k with row i left out (same arithmetic as move(-1), nlp)."""
    X, alpha0, off, A0, cnt, counts, la, lA = fam
    out = 0.0
    for d in range(X.shape[1]):
        x = X[i, d]
        if math.isnan(x):
            continue
        l = off[d] + int(x)
        n = cnt[k, d] - 1.0
        if n <= 0.0:
            out += math.log(A0[d]) - math.log(alpha0[l])
        else:
            out += math.log(A0[d] + n) - math.log(alpha0[l] + (counts[k, l] - 1.0))
    return out

@njit(cache=True, inline="always")
def logml(k, fam):
    X, alpha0, off, A0, cnt, counts, la, lA = fam
    out = 0.0
    for d in range(X.shape[1]):
        if cnt[k, d] > 0.0:
            out += math.lgamma(A0[d]) - math.lgamma(A0[d] + cnt[k, d])
            for l in range(off[d], off[d + 1]):
                out += math.lgamma(alpha0[l] + counts[k, l]) - math.lgamma(alpha0[l])
    return out


def check_data(X: np.ndarray, names, family: str = NAME, n_categories=None) -> None:
    for j in range(X.shape[1]):
        col = X[:, j][~np.isnan(X[:, j])]
        bad = (col < 0) | (col != np.round(col)) | np.isinf(col)
        if np.any(bad):
            raise ValueError(
                f"column '{names[j]}' has {int(bad.sum())} value(s) that are not category codes "
                "0, 1, 2, ...; encode the categories as whole numbers from 0 (a DataFrame text "
                "column is encoded for you)."
            )
        if n_categories is not None and col.size and col.max() >= n_categories[j]:
            raise ValueError(
                f"column '{names[j]}' has category code {int(col.max())} but its prior 'alpha0' has "
                f"only {n_categories[j]} categories (codes 0..{n_categories[j] - 1})."
            )


def default_prior(X: np.ndarray) -> dict:
    alphas = []
    for j in range(X.shape[1]):
        col = X[:, j][~np.isnan(X[:, j])].astype(np.int64)
        L = int(col.max()) + 1 if col.size else 1
        L = max(L, 2)
        c = np.bincount(col, minlength=L).astype(float)
        alphas.append(L * (c + 0.5) / (c.sum() + 0.5 * L))
    return {"alpha0": alphas}


def _per_column(alpha0, X: np.ndarray) -> list:
    """alpha0 as one vector per column: a number (every category of every column, the
    number of categories taken from the data), one vector shared by all columns, or a
    list with one vector per column."""
    D = X.shape[1]
    if np.ndim(alpha0) == 0:
        sizes = [max(int(np.nanmax(X[:, j])) + 1 if np.any(~np.isnan(X[:, j])) else 2, 2) for j in range(D)]
        return [np.full(L, float(alpha0)) for L in sizes]
    if isinstance(alpha0, (list, tuple)) and all(np.ndim(a) == 1 for a in alpha0):
        if len(alpha0) != D:
            raise ValueError(f"{NAME} prior 'alpha0' lists {len(alpha0)} vectors for {D} columns.")
        return [np.asarray(a, dtype=float) for a in alpha0]
    a = np.asarray(alpha0, dtype=float)
    if a.ndim == 2 and a.shape[0] == D:
        return [row.copy() for row in a]
    if a.ndim != 1:
        raise ValueError(f"{NAME} prior 'alpha0' must be a number, a vector, or one vector per column.")
    return [a.copy() for _ in range(D)]


#: a column with more distinct categories than this fraction of its observed rows (and more
#: than IDENTIFIER_MIN_LEVELS) is refused: most of its categories occur once or twice, so they
#: cannot tell clusters apart, and every cluster would carry a count per category. The floor
#: keeps the rule to where that memory matters, and off the automatic search's subsample
#: (auto.SEARCH_ROWS = 500 rows cannot hold 1000 categories), which must not refuse a column
#: that the whole table supports.
IDENTIFIER_FRACTION = 0.5
IDENTIFIER_MIN_LEVELS = 1000


def check_not_identifier(X: np.ndarray, names) -> None:
    """Refuse a column that looks like an identifier (see IDENTIFIER_FRACTION), naming it."""
    for j in range(X.shape[1]):
        col = X[:, j][~np.isnan(X[:, j])]
        levels = np.unique(col).size
        if levels > IDENTIFIER_MIN_LEVELS and levels > IDENTIFIER_FRACTION * col.size:
            raise ValueError(
                f"column '{names[j]}' has {levels} different categories in {col.size} rows: it looks like an "
                "identifier (most categories occur once or twice, so they cannot tell clusters apart, and each "
                "cluster would keep a count for every category); leave it out, or group its rare categories.")


def resolve_prior(user: dict, X: np.ndarray, names, family: str = NAME) -> dict:
    unknown = set(user) - {"alpha0"}
    if unknown:
        raise ValueError(f"unknown {NAME} prior key(s) {sorted(unknown)}; expected ['alpha0'].")
    check_data(X, names)
    check_not_identifier(X, names)
    if "alpha0" in user:
        alphas = _per_column(user["alpha0"], X)
    else:
        observed_columns(X, names, NAME)
        alphas = default_prior(X)["alpha0"]
    for j, a in enumerate(alphas):
        if a.ndim != 1 or a.size < 1 or not np.all(np.isfinite(a)) or np.any(a <= 0):
            raise ValueError(f"{NAME} prior 'alpha0' for column '{names[j]}' must be a vector of numbers > 0.")
    check_data(X, names, NAME, [a.size for a in alphas])
    return {"alpha0": alphas}


def build(X: np.ndarray, prior: dict, cap: int):
    alphas = prior["alpha0"]
    off = np.zeros(len(alphas) + 1, dtype=np.int64)
    off[1:] = np.cumsum([a.size for a in alphas])
    flat = np.concatenate(alphas) if alphas else np.zeros(0)
    D, L = X.shape[1], int(off[-1])
    A0 = np.array([a.sum() for a in alphas], dtype=float)
    return (np.ascontiguousarray(X), flat, off, A0, np.zeros((cap, D)), np.zeros((cap, L)),
            np.zeros((cap, L)), np.zeros((cap, D)))


def summary(fam, K: int):
    """Predictive category probabilities: one (K, L_j) array per column."""
    alpha0, off, counts = fam[1], fam[2], fam[5][:K]
    out = []
    for d in range(len(off) - 1):
        a = alpha0[off[d]:off[d + 1]] + counts[:, off[d]:off[d + 1]]
        out.append(a / a.sum(axis=1, keepdims=True))
    return out


def describe(block, X: np.ndarray) -> list[str]:
    """The prior in words: the Dirichlet's mean shares alpha0/A0 and its weight A0."""
    out = []
    for name, a in zip(block.names, block.prior["alpha0"]):
        share = a / a.sum()
        out.append(f"{name}: a cluster's category shares start from "
                   + " / ".join(pct(v) for v in share) + f", weighing like {a.sum():.2g} observations")
    return out


def impute(fam, K: int) -> np.ndarray:
    """The predictive mode (most probable category code, eq 24) per cluster and column."""
    return np.column_stack([np.argmax(probs, axis=1) for probs in summary(fam, K)] or [np.zeros((K, 0))])


def additive_statistics(fam, labels, K: int):
    """(n, counts): per cluster, each column's observed entries (K, D) and each level's count
    (K, L, the levels of every column one after another as in ``alpha0``): sums over rows, so
    that a union of clusters has the sum of theirs and a row weighted by zeta adds zeta times
    its own (``mapdp_core.engine.coarsening``)."""
    X, _, off = fam[:3]
    D, L = X.shape[1], int(off[-1])
    n = np.zeros((K, D))
    counts = np.zeros((K, L))
    for d in range(D):
        seen = ~np.isnan(X[:, d])
        width = int(off[d + 1] - off[d])
        flat = labels[seen] * width + X[seen, d].astype(np.int64)
        per = np.bincount(flat, minlength=K * width)[:K * width].reshape(K, width)
        counts[:, off[d]:off[d + 1]] = per
        n[:, d] = per.sum(axis=1)
    return n, counts


def log_marginal_from(fam, stats) -> np.ndarray:
    """ln p(X_k | theta0) for every cluster, from :func:`additive_statistics` (``logml``'s
    Dirichlet-multinomial closed form, vectorised). With every statistic multiplied by zeta it
    is the marginal of the power likelihood f(x | theta)^zeta (a fractional count)."""
    _, alpha0, off, A0 = fam[:N_FIXED]
    n, counts = stats
    out = (gammaln(A0) - gammaln(A0 + n)).sum(axis=1)
    return out + (gammaln(alpha0 + counts) - gammaln(alpha0)).sum(axis=1)
