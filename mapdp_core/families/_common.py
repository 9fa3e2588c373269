"""Statistics shared by several families: running (Welford) moments and count/sum pairs,
and the small dense algebra that the Gaussian blocks need for a row with gaps (the
Cholesky factor of the observed sub-matrix and triangular solves with it).

Every family keeps per-cluster arrays with the cluster index on the first axis and
one column per feature, so a missing entry (NaN) simply leaves its column's count
unchanged: the feature then contributes nothing to that cluster (ALGORITHMS.md,
"Missing values").
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

LOG_2PI = math.log(2.0 * math.pi)
LOG_PI = math.log(math.pi)
LOG_2 = math.log(2.0)
#: the largest whole number float64 holds exactly (2^53); a count beyond it is not a count
MAX_EXACT_COUNT = 2.0 ** 53

#: Empirical-Bayes default shared by the Gaussian families: a typical cluster's variance
#: is this fraction of the feature's variance (its spread about 45 %, sqrt(0.2), as wide
#: as the whole feature), and cluster centres a priori spread like the data.
#: Measured on the six PLOS Section 5 scenarios (N = 4000, N0 = 3): 0.2 recovers K = 3 on
#: all six, while the authors' demo prior (about 0.007) opens 8 to 71 clusters.
WITHIN_FRACTION = 0.2


@njit(cache=True, _nrt=False)
def welford_without(x, k, d, cnt, mean, m2):
    """(count, mean, scatter) of cluster k's column d without one observation x, without
    changing them (for leave-one-out scores; welford_move(-1) stores them). Emptied, they are
    exact zeros, so that rounding cannot accumulate."""
    n = cnt[k, d] - 1.0
    if n <= 0.0:
        return 0.0, 0.0, 0.0
    delta = x - mean[k, d]
    mu = mean[k, d] - delta / n
    ss = m2[k, d] - delta * (x - mu)
    if ss < 0.0:
        ss = 0.0
    return n, mu, ss


@njit(cache=True, _nrt=False)
def welford_move(x, k, d, sign, cnt, mean, m2):
    """Add (sign > 0) or remove one observation from a running count/mean/scatter.

    Welford's update keeps the within-cluster scatter accurate even when the data have
    a large offset, which a sum-of-squares form would lose to cancellation.
    """
    if sign > 0:
        n1 = cnt[k, d] + 1.0
        delta = x - mean[k, d]
        mean[k, d] += delta / n1
        m2[k, d] += delta * (x - mean[k, d])
        cnt[k, d] = n1
    else:
        cnt[k, d], mean[k, d], m2[k, d] = welford_without(x, k, d, cnt, mean, m2)


@njit(cache=True, _nrt=False)
def count_sum_without(x, k, d, cnt, total):
    """(count, sum) of cluster k's column d without one observation x, without changing
    them (for leave-one-out scores; count_sum_move(-1) stores them). Exact for integer data."""
    n = cnt[k, d] - 1.0
    if n <= 0.0:
        return 0.0, 0.0
    return n, total[k, d] - x


@njit(cache=True, _nrt=False)
def count_sum_move(x, k, d, sign, cnt, total):
    """Add or remove one observation from a count/sum pair (exact for integer data)."""
    if sign > 0:
        cnt[k, d] += 1.0
        total[k, d] += x
    else:
        cnt[k, d] -= 1.0
        if cnt[k, d] <= 0.0:
            cnt[k, d] = 0.0
            total[k, d] = 0.0
        else:
            total[k, d] -= x


@njit(cache=True, _nrt=False)
def count_sum_clear(k, d, cnt, total):
    """Cluster k's column d back to no observations (count and sum exactly zero)."""
    cnt[k, d] = 0.0
    total[k, d] = 0.0


@njit(cache=True, _nrt=False)
def log1p_square(x, loc, ivs):
    """ln(1 + (x - loc)^2 ivs), the log kernel of a Student-t, for any finite x.

    Far from loc the square overflows to inf (|x - loc| above about 1e154 times the scale),
    where ln(1 + t) = ln t to double precision: it is then taken in logarithms, from half
    the residual so that x - loc cannot overflow either. A NaN x stays NaN."""
    r = x - loc
    t = r * r * ivs
    if t != math.inf:
        return math.log1p(t)
    return 2.0 * (math.log(abs(0.5 * x - 0.5 * loc)) + LOG_2) + math.log(ivs)


@njit(cache=True, _nrt=False)
def half_square(x, loc, var):
    """(x - loc)^2 / (2 var), the Gaussian's exponent, scaled before squaring when the plain
    square overflows (it is then inf only when the exponent itself is beyond float64)."""
    r = x - loc
    t = 0.5 * r * r / var
    if t != math.inf:
        return t
    z = (0.5 * x - 0.5 * loc) / math.sqrt(var)  # half the standardised residual
    return 2.0 * z * z


@njit(cache=True, _nrt=False)
def lgamma_difference(x, b, c):
    """ln G(x + b) - ln G(x + c) for x >= 0 and b, c > 0.

    Each lgamma grows like x ln x, so for a huge x (a far-out count) the plain difference
    cancels to rounding noise (to 0 at x = 1e200, where x + b == x + c). From 1e6 on it is
    taken from Stirling's series, in which the large terms cancel analytically:
    (z_c - 1/2) ln(1 + (b - c)/z_c) + (b - c) ln z_b - (b - c) + (c - b)/(12 z_b z_c); the
    next term is below 1e-20 there."""
    zb = x + b
    zc = x + c
    if zb < 1e6 or zc < 1e6:
        return math.lgamma(zb) - math.lgamma(zc)
    d = b - c
    return (zc - 0.5) * math.log1p(d / zc) + d * math.log(zb) - d - d / (12.0 * zb * zc)


@njit(cache=True, _nrt=False)
def log_beta(a, b):
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def as_column_vector(value, n_columns: int, name: str, family: str) -> np.ndarray:
    """Broadcast a scalar or a length-D sequence of hyperparameters to a float vector."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        arr = np.full(n_columns, float(arr))
    if arr.shape != (n_columns,):
        raise ValueError(
            f"{family} prior '{name}' must be a number or have one value per column "
            f"({n_columns}), got shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{family} prior '{name}' must be finite, got {arr.tolist()}.")
    return arr


def require_positive(arr: np.ndarray, name: str, family: str) -> None:
    if np.any(arr <= 0):
        raise ValueError(f"{family} prior '{name}' must be > 0, got {np.asarray(arr).tolist()}.")


def observed_columns(X: np.ndarray, names, family: str) -> None:
    """Every column needs at least one observed value for an empirical-Bayes prior."""
    empty = [names[j] for j in range(X.shape[1]) if np.all(np.isnan(X[:, j]))]
    if empty:
        raise ValueError(
            f"column(s) {empty} have no observed values; drop them or give the {family} "
            f"prior explicitly."
        )


def spd_matrix(matrix, name: str, D: int, family: str) -> np.ndarray:
    """A D x D hyperparameter that must be a finite, symmetric, positive definite matrix,
    symmetrised exactly (rounding in the user's matrix must not make it lopsided)."""
    M = np.asarray(matrix, dtype=float)
    if M.shape != (D, D):
        raise ValueError(f"{family} prior '{name}' must be a {D}x{D} matrix, got shape {M.shape}.")
    if not np.all(np.isfinite(M)) or not np.allclose(M, M.T, rtol=1e-10, atol=1e-12 * np.abs(M).max()):
        raise ValueError(f"{family} prior '{name}' must be a finite symmetric matrix.")
    try:
        np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        raise ValueError(f"{family} prior '{name}' is not positive definite.") from None
    return 0.5 * (M + M.T)


def merge_prior(user: dict, X: np.ndarray, names, family: str, keys, default_prior) -> dict:
    """The user's hyperparameters over the empirical-Bayes defaults (computed only when a
    key is missing), after rejecting unknown keys; values are not checked here."""
    unknown = set(user) - set(keys)
    if unknown:
        raise ValueError(f"unknown {family} prior key(s) {sorted(unknown)}; expected {list(keys)}.")
    prior = {}
    if set(keys) - set(user):
        observed_columns(X, names, family)
        prior = default_prior(X)
    prior.update(user)
    return prior


def resolve_vector_prior(user: dict, X: np.ndarray, names, family: str, keys, default_prior,
                         checks=None) -> dict:
    """Merge user hyperparameters over the empirical-Bayes defaults, one vector per key.

    Each key may be one number (used for every column) or one number per column. Every
    value must be finite; ``checks`` maps a key to its further check ``f(values, key,
    family)`` (raising ValueError), None for none; a key it does not name must be > 0.
    """
    prior = merge_prior(user, X, names, family, keys, default_prior)
    out = {key: as_column_vector(prior[key], X.shape[1], key, family) for key in keys}
    checks = {} if checks is None else checks
    for key in keys:
        check = checks.get(key, require_positive)
        if check is not None:
            check(out[key], key, family)
    return out


def build_columns(X: np.ndarray, prior: dict, cap: int, keys, layout, n_fixed: int):
    """The kernel tuple (in ``layout`` order) of a family whose prior is one vector per key
    of ``keys`` and whose per-cluster arrays are (cap, D), zero until the kernel resets them."""
    D = X.shape[1]
    return ((np.ascontiguousarray(X),) + tuple(prior[key] for key in keys)
            + tuple(np.zeros((cap, D)) for _ in layout[n_fixed:]))


def pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def spread_sentence(ratio: np.ndarray, names) -> str:
    """A block's typical within-cluster spread as a fraction of each feature's spread."""
    if np.allclose(ratio, ratio.mean(), rtol=0.05):
        return f"a typical cluster spreads about {pct(float(ratio.mean()))} as widely as the whole feature"
    parts = ", ".join(f"{n}: {pct(float(r))}" for n, r in zip(names, ratio))
    return f"a typical cluster spreads this widely compared with the whole feature ({parts})"


def column_mean_var(X: np.ndarray):
    """Each column's mean and variance, skipping gaps. Without gaps np.mean and np.var, which give
    nanmean's and nanvar's numbers bit for bit (checked on 300 random shapes) without their copy
    of the data (a tenth of a second at 4 000 000 rows)."""
    if np.isnan(X).any():
        return np.nanmean(X, axis=0), np.nanvar(X, axis=0)
    return np.mean(X, axis=0), np.var(X, axis=0)


def column_sd(sub: np.ndarray) -> np.ndarray:
    """Standard deviation of each column, 1 where it is 0 (the unit a spread is told in)."""
    var = column_mean_var(sub)[1]
    return np.sqrt(np.where(var > 0, var, 1.0))


def floored_column_mean(X: np.ndarray, floor: float = 0.01) -> np.ndarray:
    """Each column's mean over its observed values, at least ``floor``: the centre of a count
    family's empirical-Bayes prior, kept > 0 for a column of zeros."""
    return np.maximum(np.nanmean(X, axis=0), floor)


def beta_prior_two(p: np.ndarray) -> dict:
    """A Beta(alpha0, beta0) prior centred on p with the weight of two observations:
    alpha0 = 2 p, beta0 = 2 (1 - p)."""
    return {"alpha0": 2.0 * p, "beta0": 2.0 * (1.0 - p)}


def typical_values(word: str, names, alpha0, beta0) -> str:
    """The prior's typical value per column, the mean beta0/(alpha0 - 1) of a Lomax or
    beta-geometric predictive (no finite mean for alpha0 <= 1)."""
    return (f"before seeing a cluster's data, its typical {word} is taken as "
            + ", ".join(f"{n}: {b / (a - 1):.3g}" if a > 1 else f"{n}: (no finite mean)"
                        for n, a, b in zip(names, alpha0, beta0)))


def check_counts(X: np.ndarray, names, family: str, integer: bool) -> None:
    """Reject negative, non-integer (when counts are needed) or infinite values, naming the column."""
    for j in range(X.shape[1]):
        col = X[:, j][~np.isnan(X[:, j])]
        if np.any(np.isinf(col)):
            raise ValueError(f"column '{names[j]}' contains infinite values; {family} needs finite values.")
        negative = int(np.sum(col < 0))
        if negative:
            raise ValueError(
                f"column '{names[j]}' has {negative} negative value(s); {family} needs values >= 0."
            )
        if integer and np.any(col > MAX_EXACT_COUNT):
            raise ValueError(
                f"column '{names[j]}' has {int(np.sum(col > MAX_EXACT_COUNT))} value(s) above 2^53 "
                f"(about 9.0e15, e.g. {col.max():.3g}), beyond the whole numbers float64 holds exactly; "
                f"check those values (a misread cell?) or model the column as real-valued."
            )
        if integer:
            fractional = int(np.sum(col != np.round(col)))
            if fractional:
                raise ValueError(
                    f"column '{names[j]}' has {fractional} non-integer value(s); {family} needs "
                    "whole-number counts. Use 'exponential' or 'normal_gamma' for real values."
                )


@njit(cache=True, _nrt=False)
def observed_indices(X, i, idx) -> int:
    """Write the columns where row i of X is observed (not NaN) to idx; return how many."""
    p = 0
    for a in range(X.shape[1]):
        if X[i, a] == X[i, a]:
            idx[p] = a
            p += 1
    return p


@njit(cache=True, _nrt=False)
def cholesky_in_place(S, p) -> None:
    """Overwrite the lower triangle of the p x p leading block of S, which holds a symmetric
    positive definite matrix, with its lower Cholesky factor (row by row). A pivot is
    floored at 1e-300, which only rounding can reach."""
    for r in range(p):
        for c in range(r + 1):
            t = S[r, c]
            for j in range(c):
                t -= S[r, j] * S[c, j]
            if r == c:
                S[r, r] = math.sqrt(t if t > 1e-300 else 1e-300)
            else:
                S[r, c] = t / S[c, c]


@njit(cache=True, _nrt=False)
def forward_solve(S, p, y) -> float:
    """In place y <- S^-1 y for the lower-triangular p x p leading block of S; returns |y|^2."""
    q = 0.0
    for r in range(p):
        s = y[r]
        for b in range(r):
            s -= S[r, b] * y[b]
        y[r] = s / S[r, r]
        q += y[r] * y[r]
    return q


@njit(cache=True, _nrt=False)
def back_solve(S, p, y) -> None:
    """In place y <- S^-T y for the lower-triangular p x p leading block of S."""
    for r in range(p - 1, -1, -1):
        s = y[r]
        for b in range(r + 1, p):
            s -= S[b, r] * y[b]
        y[r] = s / S[r, r]


@njit(cache=True, _nrt=False)
def log_diagonal_sum(S, p) -> float:
    """sum ln S[r, r] over the p x p leading block: half the log-determinant of S S^T."""
    out = 0.0
    for r in range(p):
        out += math.log(S[r, r])
    return out


def grouped_moments(X: np.ndarray, labels: np.ndarray, K: int, centre=None):
    """(n, s1, s2), each (K, D): per cluster and column, the number of observed entries, their
    sum and their sum of squares, after subtracting ``centre`` (one value per column; the
    prior mean, so that data with a large offset lose no precision in s2 - s1^2/n). NaN
    entries are left out. Additive over rows, so that the statistics of a union of clusters
    are the sums of theirs (``mapdp_core.engine.coarsening``)."""
    D = X.shape[1]
    Z = X - (0.0 if centre is None else np.asarray(centre, dtype=float)[None, :])
    seen = ~np.isnan(Z)
    Z = np.where(seen, Z, 0.0)
    n, s1, s2 = (np.zeros((K, D)) for _ in range(3))
    for d in range(D):
        n[:, d] = np.bincount(labels, weights=seen[:, d], minlength=K)[:K]
        s1[:, d] = np.bincount(labels, weights=Z[:, d], minlength=K)[:K]
        s2[:, d] = np.bincount(labels, weights=Z[:, d] * Z[:, d], minlength=K)[:K]
    return n, s1, s2


def grouped_count_sums(X: np.ndarray, labels: np.ndarray, K: int):
    """(n, total), each (K, D): per cluster and column, the observed entries and their sum."""
    n, total, _ = grouped_moments(X, labels, K)
    return n, total


def scatter_from(n, s1, s2):
    """The scatter about each cluster's own mean, sum (x - xbar)^2 = s2 - s1^2/n (0 where
    n = 0), from :func:`grouped_moments`; never negative."""
    with np.errstate(divide="ignore", invalid="ignore"):
        m2 = np.where(n > 0, s2 - s1 * s1 / np.where(n > 0, n, 1.0), 0.0)
    return np.maximum(m2, 0.0)


def count_sum_statistics(fam, labels, K: int):
    """``additive_statistics`` of the families whose statistics are a count and a sum per column
    (Poisson, exponential, geometric, beta-binomial): (n, total), each (K, D), the observed
    entries and their sum per cluster. Sums over rows, so that a union of clusters has the sum of
    theirs and a row weighted by zeta adds zeta times its own (``mapdp_core.engine.coarsening``)."""
    return grouped_count_sums(fam[0], labels, K)
