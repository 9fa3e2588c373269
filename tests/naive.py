"""Slow, obvious, pure-NumPy reference implementation of MAP-DP.

This module is ground truth for the tests of the fast implementation.  It is
written directly from the maths (Raykov et al. 2016, PLOS ONE, Algorithm 3 and
Appendices A/B, plus the errata and exact sweep semantics in
/work/shared/ALGORITHMS.md).  It is deliberately slow: every posterior
predictive is recomputed from the raw data of the cluster each time it is
needed.  Clarity beats speed everywhere.

Public functions
----------------
naive_neg_log_predictive(family, x, data_in_cluster, prior) -> float
    -ln f(x | data_in_cluster, prior): the full, normalised negative log
    posterior predictive density/mass of one observation of one block/column.
naive_mapdp(X, N0, blocks, order=None, tol=1e-6, max_iter=100)
    -> (labels, E_history)
naive_neg_log_joint(X, labels, N0, blocks) -> float
    Exact collapsed -ln p(X, z | N0, theta0), cluster marginal likelihoods by
    the chain rule of sequential posterior predictives.

Blocks
------
``blocks`` is a list of ``(family, columns, prior)`` tuples.

Block families (one multivariate density over all listed columns; NaN is not
allowed in their columns, except in a spherical block, whose coordinates are
independent: there a NaN drops its coordinate, as in a per-column family):
    "normal_wishart"      prior: m0 (D,), c0, a0, B0 (D, D)
    "spherical_gaussian"  prior: mu0 (D,), sigma0_2, sigma2
    "gaussian_known_cov"  prior: mu0 (D,), Sigma0 (D, D), Sigma (D, D)

Per-column families (each listed column is an independent feature with the
same prior; NaN means missing and contributes nothing):
    "normal_gamma"  prior: m0, c0, a0, b0
    "bernoulli"     prior: alpha0, beta0
    "binomial"      prior: alpha0, beta0, n
    "categorical"   prior: alpha0 (L,)      data: codes 0..L-1
    "poisson"       prior: alpha0 (shape), beta0 (rate)
    "exponential"   prior: alpha0 (shape), beta0 (rate)
    "geometric"     prior: alpha0, beta0    data: 0, 1, 2, ...
"""

import numpy as np
from scipy.special import gammaln, betaln

BLOCK_FAMILIES = ("normal_wishart", "spherical_gaussian", "gaussian_known_cov")
COLUMN_FAMILIES = ("normal_gamma", "bernoulli", "binomial", "categorical",
                   "poisson", "exponential", "geometric")
ALL_FAMILIES = BLOCK_FAMILIES + COLUMN_FAMILIES


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------

def _log_binom_coef(n, x):
    """ln (n choose x)."""
    return gammaln(n + 1.0) - gammaln(x + 1.0) - gammaln(n - x + 1.0)


def _check_integer(x, low, high, family):
    """Raise if x is not an integer in [low, high] (high may be None = inf)."""
    if x != np.floor(x) or x < low or (high is not None and x > high):
        raise ValueError(f"{family}: value {x!r} outside support "
                         f"{{{low}..{'inf' if high is None else high}}}")


# ---------------------------------------------------------------------------
# Block families: posterior hyperparameters and -ln predictive
# ---------------------------------------------------------------------------

def _nw_neg_log_predictive(x, data, prior):
    """Normal-Wishart prior, multivariate Student-t predictive (eqs 18-20).

    Wishart scale B is a precision-type matrix (E[Lambda] = a B); a is the
    Wishart degrees of freedom; c scales the precision of the mean.
    """
    m0 = np.asarray(prior["m0"], dtype=float)
    c0 = float(prior["c0"])
    a0 = float(prior["a0"])
    B0 = np.asarray(prior["B0"], dtype=float)
    D = m0.shape[0]
    n = data.shape[0]

    if n == 0:
        m, c, a, B = m0, c0, a0, B0
    else:
        xbar = data.mean(axis=0)
        S = np.zeros((D, D))
        for j in range(n):
            diff = data[j] - xbar          # x_j - xbar (paper's x_i is a typo)
            S += np.outer(diff, diff)
        dm = xbar - m0
        m = (c0 * m0 + n * xbar) / (c0 + n)
        c = c0 + n
        a = a0 + n
        B = np.linalg.inv(np.linalg.inv(B0) + S
                          + (c0 * n / (c0 + n)) * np.outer(dm, dm))

    nu = a - D + 1.0
    if nu <= 0:
        raise ValueError("normal_wishart: a - D + 1 must be positive")
    Lam = (c * nu / (c + 1.0)) * B
    sign, logdet_Lam = np.linalg.slogdet(Lam)
    if sign <= 0:
        raise ValueError("normal_wishart: predictive precision not PD")
    r = x - m
    maha = float(r @ Lam @ r)
    return float((nu + D) / 2.0 * np.log1p(maha / nu)
                 - 0.5 * logdet_Lam
                 + gammaln(nu / 2.0)
                 + D / 2.0 * np.log(nu * np.pi)
                 - gammaln((nu + D) / 2.0))


def _spherical_neg_log_predictive(x, data, prior):
    """Spherical Gaussian, known variance sigma2; prior N(mu0, sigma0_2 I).

    Eqs 14-15; sigma_k below is a variance.
    """
    mu0 = np.asarray(prior["mu0"], dtype=float)
    s0 = float(prior["sigma0_2"])
    s2 = float(prior["sigma2"])
    D = mu0.shape[0]
    n = data.shape[0]
    sum_x = data.sum(axis=0) if n > 0 else np.zeros(D)
    sigma_k = 1.0 / (1.0 / s0 + n / s2)
    mu_k = sigma_k * (mu0 / s0 + sum_x / s2)
    v = sigma_k + s2
    r = x - mu_k
    return float(r @ r / (2.0 * v) + D / 2.0 * np.log(v)
                 + D / 2.0 * np.log(2.0 * np.pi))


def _known_cov_neg_log_predictive(x, data, prior):
    """Gaussian with known covariance Sigma; prior N(mu0, Sigma0). Eqs 16-17.

    Note: eq 17 as printed has (D/2) ln|Sigma + Sigma_hat|; the correct
    normaliser of a D-variate normal is (1/2) ln|.|, which is used here.
    """
    mu0 = np.asarray(prior["mu0"], dtype=float)
    Sigma0 = np.asarray(prior["Sigma0"], dtype=float)
    Sigma = np.asarray(prior["Sigma"], dtype=float)
    D = mu0.shape[0]
    n = data.shape[0]
    sum_x = data.sum(axis=0) if n > 0 else np.zeros(D)
    Sigma0_inv = np.linalg.inv(Sigma0)
    Sigma_inv = np.linalg.inv(Sigma)
    Sigma_k = np.linalg.inv(Sigma0_inv + n * Sigma_inv)
    mu_k = Sigma_k @ (Sigma0_inv @ mu0 + Sigma_inv @ sum_x)
    V = Sigma_k + Sigma
    sign, logdet_V = np.linalg.slogdet(V)
    if sign <= 0:
        raise ValueError("gaussian_known_cov: predictive covariance not PD")
    r = x - mu_k
    return float(0.5 * r @ np.linalg.inv(V) @ r + 0.5 * logdet_V
                 + D / 2.0 * np.log(2.0 * np.pi))


# ---------------------------------------------------------------------------
# Per-column families: -ln predictive of a scalar observation
# ---------------------------------------------------------------------------

def _normal_gamma_neg_log_predictive(x, data, prior):
    """mu | tau ~ N(m0, 1/(c0 tau)), tau ~ Gamma(a0 shape, b0 rate).

    Predictive: Student-t, 2a dof, location m, scale^2 = b (c+1) / (a c).
    """
    m0, c0 = float(prior["m0"]), float(prior["c0"])
    a0, b0 = float(prior["a0"]), float(prior["b0"])
    n = data.shape[0]
    if n == 0:
        m, c, a, b = m0, c0, a0, b0
    else:
        xbar = data.mean()
        ss = float(np.sum((data - xbar) ** 2))
        c = c0 + n
        m = (c0 * m0 + n * xbar) / c
        a = a0 + n / 2.0
        b = b0 + 0.5 * ss + c0 * n * (xbar - m0) ** 2 / (2.0 * c)
    nu = 2.0 * a
    scale2 = b * (c + 1.0) / (a * c)
    z2 = (x - m) ** 2 / scale2
    return float(gammaln(nu / 2.0) - gammaln((nu + 1.0) / 2.0)
                 + 0.5 * np.log(nu * np.pi * scale2)
                 + (nu + 1.0) / 2.0 * np.log1p(z2 / nu))


def _beta_binomial_neg_log_predictive(x, data, alpha0, beta0, n_trials, family):
    """Beta(alpha0, beta0) prior on the success probability; eqs 25-26."""
    _check_integer(x, 0, n_trials, family)
    N = data.shape[0]
    s = float(data.sum()) if N > 0 else 0.0
    alpha = alpha0 + s
    beta = beta0 + N * n_trials - s
    return float(-_log_binom_coef(n_trials, x)
                 - betaln(x + alpha, n_trials - x + beta)
                 + betaln(alpha, beta))


def _categorical_neg_log_predictive(x, data, prior):
    """Dirichlet(alpha0) prior, codes 0..L-1; eqs 23-24."""
    alpha0 = np.asarray(prior["alpha0"], dtype=float)
    L = alpha0.shape[0]
    _check_integer(x, 0, L - 1, "categorical")
    alpha = alpha0.copy()
    for v in data:
        _check_integer(v, 0, L - 1, "categorical")
        alpha[int(v)] += 1.0
    return float(-np.log(alpha[int(x)]) + np.log(alpha.sum()))


def _poisson_neg_log_predictive(x, data, prior):
    """Gamma(alpha0 shape, beta0 rate) prior on the rate; negative binomial.

    f(x) = Gamma(alpha+x) / (Gamma(alpha) x!) (beta/(beta+1))^alpha (beta+1)^-x
    with alpha = alpha0 + sum x, beta = beta0 + N.
    """
    _check_integer(x, 0, None, "poisson")
    alpha0, beta0 = float(prior["alpha0"]), float(prior["beta0"])
    N = data.shape[0]
    alpha = alpha0 + (float(data.sum()) if N > 0 else 0.0)
    beta = beta0 + N
    log_f = (gammaln(alpha + x) - gammaln(alpha) - gammaln(x + 1.0)
             + alpha * (np.log(beta) - np.log(beta + 1.0))
             - x * np.log(beta + 1.0))
    return float(-log_f)


def _exponential_neg_log_predictive(x, data, prior):
    """Gamma(alpha0 shape, beta0 rate) prior on the rate; Lomax predictive.

    alpha = alpha0 + N, beta = beta0 + sum x (eq 21 of the paper swaps these).
    f(x) = alpha beta^alpha / (x + beta)^(alpha + 1).
    """
    if x < 0:
        raise ValueError(f"exponential: negative value {x!r}")
    alpha0, beta0 = float(prior["alpha0"]), float(prior["beta0"])
    N = data.shape[0]
    alpha = alpha0 + N
    beta = beta0 + (float(data.sum()) if N > 0 else 0.0)
    return float(-np.log(alpha) - alpha * np.log(beta)
                 + (alpha + 1.0) * np.log(x + beta))


def _geometric_neg_log_predictive(x, data, prior):
    """p(x|p) = p (1-p)^x on {0,1,...}, p ~ Beta(alpha0, beta0); eqs 30-31."""
    _check_integer(x, 0, None, "geometric")
    alpha0, beta0 = float(prior["alpha0"]), float(prior["beta0"])
    N = data.shape[0]
    alpha = alpha0 + N
    beta = beta0 + (float(data.sum()) if N > 0 else 0.0)
    return float(-betaln(alpha + 1.0, beta + x) + betaln(alpha, beta))


# ---------------------------------------------------------------------------
# Public: one predictive
# ---------------------------------------------------------------------------

def naive_neg_log_predictive(family, x, data_in_cluster, prior):
    """Full normalised -ln f(x | data_in_cluster, prior) for one block/column.

    Block families: x has shape (D,), data_in_cluster shape (n, D) (n may be
    0; an empty array of any shape with size 0 means "prior predictive").
    Per-column families: x is a scalar, data_in_cluster shape (n,).  A NaN x
    returns 0.0 (missing: contributes nothing) and NaN entries of
    data_in_cluster are dropped (they contribute no statistics).
    """
    if family in BLOCK_FAMILIES:
        x = np.asarray(x, dtype=float).reshape(-1)
        D = x.shape[0]
        data = np.asarray(data_in_cluster, dtype=float)
        if data.size == 0:
            data = np.zeros((0, D))
        data = data.reshape(-1, D)
        if family == "spherical_gaussian" and (np.isnan(x).any() or np.isnan(data).any()):
            # independent coordinates: each observed one on its own, with its observed data
            mu0 = np.broadcast_to(np.asarray(prior["mu0"], dtype=float), (D,))
            return sum(_spherical_neg_log_predictive(x[d:d + 1], data[~np.isnan(data[:, d]), d:d + 1],
                                                     {**prior, "mu0": mu0[d:d + 1]})
                       for d in range(D) if not np.isnan(x[d]))
        if np.isnan(x).any() or np.isnan(data).any():
            raise ValueError(f"{family}: NaN (missing values) are only "
                             "supported for per-column families")
        if family == "normal_wishart":
            return _nw_neg_log_predictive(x, data, prior)
        if family == "spherical_gaussian":
            return _spherical_neg_log_predictive(x, data, prior)
        return _known_cov_neg_log_predictive(x, data, prior)

    if family not in COLUMN_FAMILIES:
        raise ValueError(f"unknown family {family!r}")

    x = float(np.asarray(x, dtype=float).reshape(()))
    if np.isnan(x):
        return 0.0
    data = np.asarray(data_in_cluster, dtype=float).reshape(-1)
    data = data[~np.isnan(data)]

    if family == "normal_gamma":
        return _normal_gamma_neg_log_predictive(x, data, prior)
    if family == "bernoulli":
        return _beta_binomial_neg_log_predictive(
            x, data, float(prior["alpha0"]), float(prior["beta0"]), 1,
            "bernoulli")
    if family == "binomial":
        return _beta_binomial_neg_log_predictive(
            x, data, float(prior["alpha0"]), float(prior["beta0"]),
            int(prior["n"]), "binomial")
    if family == "categorical":
        return _categorical_neg_log_predictive(x, data, prior)
    if family == "poisson":
        return _poisson_neg_log_predictive(x, data, prior)
    if family == "exponential":
        return _exponential_neg_log_predictive(x, data, prior)
    return _geometric_neg_log_predictive(x, data, prior)


# ---------------------------------------------------------------------------
# -ln predictive of a whole row under all blocks
# ---------------------------------------------------------------------------

def _row_neg_log_predictive(X, i, member_idx, blocks):
    """d = -ln f(x_i | X[member_idx]) summed over all blocks/columns.

    member_idx: list/array of row indices currently in the cluster (may be
    empty, giving the prior predictive).  Recomputed from the raw data.
    """
    member_idx = np.asarray(member_idx, dtype=int)
    total = 0.0
    for family, columns, prior in blocks:
        columns = list(columns)
        if family in BLOCK_FAMILIES:
            x = X[i, columns]
            data = X[np.ix_(member_idx, columns)] if member_idx.size else \
                np.zeros((0, len(columns)))
            total += naive_neg_log_predictive(family, x, data, prior)
        else:
            for col in columns:
                x = X[i, col]
                data = X[member_idx, col] if member_idx.size else np.zeros(0)
                total += naive_neg_log_predictive(family, x, data, prior)
    return total


def _validate(X, N0, blocks):
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError("X must be 2-D (N, D)")
    if not N0 > 0:
        raise ValueError("N0 must be positive")
    for family, columns, prior in blocks:
        if family not in ALL_FAMILIES:
            raise ValueError(f"unknown family {family!r}")
        if family in ("normal_wishart", "gaussian_known_cov") and np.isnan(X[:, list(columns)]).any():
            raise ValueError(f"{family}: NaN not allowed in block columns")
    return X


# ---------------------------------------------------------------------------
# Public: MAP-DP
# ---------------------------------------------------------------------------

def naive_mapdp(X, N0, blocks, order=None, tol=1e-6, max_iter=100):
    """MAP-DP, exactly the sweep semantics of ALGORITHMS.md.

    Returns (labels, E_history): labels int array in 0..K-1 after the final
    sweep, E_history the objective E after every sweep.
    """
    X = _validate(X, N0, blocks)
    N = X.shape[0]
    if order is None:
        order = np.arange(N)
    order = np.asarray(order, dtype=int)
    if sorted(order.tolist()) != list(range(N)):
        raise ValueError("order must be a permutation of 0..N-1")

    labels = np.zeros(N, dtype=int)     # K = 1, every point in cluster 0
    E_history = []
    E_old = np.inf

    for sweep in range(max_iter):
        n_slots = int(labels.max()) + 1 if N > 0 else 0
        winning_scores = []

        for i in order:
            # Take i out of its cluster (labels[i] = -1 means "nowhere").
            labels[i] = -1

            scores = []
            for k in range(n_slots):
                members = [j for j in range(N) if labels[j] == k]
                N_k = len(members)
                if N_k == 0:
                    # Emptied during this sweep: slot kept, never chosen.
                    scores.append(np.inf)
                    continue
                if sweep == 0 and k == 0:
                    N_k = 1      # dominating reinforcement fix, first sweep
                d_ik = _row_neg_log_predictive(X, i, members, blocks)
                scores.append(d_ik - np.log(N_k))

            # New cluster, index n_slots, prior predictive, weight N0.
            d_i0 = _row_neg_log_predictive(X, i, [], blocks)
            scores.append(d_i0 - np.log(N0))

            scores = np.array(scores, dtype=float)
            k_best = int(np.argmin(scores))    # ties -> lowest index
            labels[i] = k_best
            winning_scores.append(float(scores[k_best]))
            if k_best == n_slots:
                n_slots += 1

        # Drop empty slots, keep relative order, renumber 0..K-1.
        surviving = [k for k in range(n_slots) if np.any(labels == k)]
        relabel = {old: new for new, old in enumerate(surviving)}
        labels = np.array([relabel[k] for k in labels], dtype=int)

        K = len(surviving)
        counts = [int(np.sum(labels == k)) for k in range(K)]
        E_new = (sum(winning_scores) - K * np.log(N0)
                 - sum(float(gammaln(c)) for c in counts))
        E_history.append(float(E_new))

        if abs(E_old - E_new) < tol:
            break
        E_old = E_new

    return labels, E_history


# ---------------------------------------------------------------------------
# Public: exact collapsed joint, chain rule
# ---------------------------------------------------------------------------

def naive_cluster_neg_log_marginal(X, member_idx, blocks):
    """-ln p(X_k | theta0) by the chain rule over member_idx in the given order.

    -ln p(x_1..x_n) = sum_j -ln f(x_j | x_1..x_{j-1}).
    """
    X = np.asarray(X, dtype=float)
    member_idx = list(member_idx)
    total = 0.0
    for pos, i in enumerate(member_idx):
        total += _row_neg_log_predictive(X, i, member_idx[:pos], blocks)
    return total


def naive_neg_log_joint(X, labels, N0, blocks):
    """Exact collapsed -ln p(X, z | N0, theta0).

    -ln CRP(z; N0) - sum_k ln p(X_k | theta0), with
    ln CRP(z) = K ln N0 + sum_k lnGamma(N_k) + lnGamma(N0) - lnGamma(N0 + N).
    Labels may be any integers; each distinct value is one cluster.  Points
    within a cluster are chained in increasing row order (the result does not
    depend on that order).
    """
    X = _validate(X, N0, blocks)
    labels = np.asarray(labels).reshape(-1)
    N = X.shape[0]
    if labels.shape[0] != N:
        raise ValueError("labels must have one entry per row of X")
    clusters = np.unique(labels)
    K = len(clusters)
    log_crp = K * np.log(N0) + gammaln(N0) - gammaln(N0 + N)
    neg_log_lik = 0.0
    for k in clusters:
        members = [j for j in range(N) if labels[j] == k]
        log_crp += gammaln(len(members))
        neg_log_lik += naive_cluster_neg_log_marginal(X, members, blocks)
    return float(-log_crp + neg_log_lik)


def naive_dp_means(X, lam, order, max_iter=100):
    """Kulis & Jordan (2012) Algorithm 1 written plainly; returns the labels of every pass."""
    centres = [X.mean(axis=0)]
    z = np.zeros(len(X), dtype=int)
    passes = []
    for _ in range(max_iter):
        before = z.copy()
        for i in order:
            d = [((X[i] - c) ** 2).sum() for c in centres]
            if min(d) > lam:
                centres.append(X[i].copy())
                z[i] = len(centres) - 1
            else:
                z[i] = int(np.argmin(d))
        used = np.unique(z)
        z = np.searchsorted(used, z)
        centres = [X[z == k].mean(axis=0) for k in range(len(used))]
        passes.append(z.copy())
        if np.array_equal(before, z):
            break
    return passes


# ---------------------------------------------------------------------------
# Public: SUGS and exhaustive MAP (references for mapdp_core.models.sugs / search)
# ---------------------------------------------------------------------------

def naive_sugs(X, N0, blocks, order, weights=None):
    """SUGS (Wang & Dunson 2011; OTHER-SYSTEMS 1.2), one plain pass in ``order``.

    Row t of the order (t rows seen before it) joins the argmin over the clusters formed by
    the rows before it of -ln f(x | cluster so far) - ln pi_h, or a new cluster at
    -ln f(x | prior) - ln pi_new (ties: lowest index, the new cluster last); no revision.
    One concentration N0: pi_h = n_h, pi_new = N0 (the common 1/(N0 + t) dropped).
    A grid (N0 a sequence, prior ``weights``, uniform by default): pi_h = sum_l phi_l
    n_h / (a_l + t), pi_new = sum_l phi_l a_l / (a_l + t), and after each choice
    phi_l is multiplied by the chosen allocation's probability at a_l and normalised.
    Returns the labels (0..K-1, numbered in order of opening).
    """
    X = np.asarray(X, dtype=float)
    N = X.shape[0]
    order = [int(i) for i in order]
    if sorted(order) != list(range(N)):
        raise ValueError("order must be a permutation of 0..N-1")
    grid = np.atleast_1d(np.asarray(N0, dtype=float))
    phi = np.full(grid.size, 1.0 / grid.size) if weights is None else np.asarray(weights, dtype=float)
    phi = phi / phi.sum()
    labels = np.full(N, -1, dtype=int)
    members = []                      # members[k]: rows of cluster k, in visiting order
    for t, i in enumerate(order):
        scores = []
        for rows in members:
            if grid.size == 1:
                log_pi = np.log(len(rows))
            else:
                log_pi = np.log(np.sum(phi * len(rows) / (grid + t)))
            scores.append(_row_neg_log_predictive(X, i, rows, blocks) - log_pi)
        if grid.size == 1:
            log_pi_new = np.log(grid[0])
        else:
            log_pi_new = np.log(np.sum(phi * grid / (grid + t)))
        scores.append(_row_neg_log_predictive(X, i, [], blocks) - log_pi_new)
        k = int(np.argmin(scores))    # ties -> lowest index; new cluster is last
        chosen = grid if k == len(members) else float(len(members[k]))
        phi = phi * chosen / (grid + t)
        phi = phi / phi.sum()
        if k == len(members):
            members.append([])
        members[k].append(i)
        labels[i] = k
    return labels


def naive_partitions(n):
    """Every set partition of range(n), once each, as canonical label arrays
    (restricted growth strings: label 0 first, a new label is one above the largest so far)."""
    if n == 0:
        yield np.zeros(0, dtype=int)
        return
    labels = [0] * n

    def rec(pos, n_labels):
        if pos == n:
            yield np.array(labels, dtype=int)
            return
        for k in range(n_labels + 1):
            labels[pos] = k
            yield from rec(pos + 1, max(n_labels, k + 1))

    yield from rec(1, 1)


def naive_map_partition(X, N0, blocks):
    """Exhaustive MAP partition: argmin of naive_neg_log_joint over naive_partitions(N).
    Returns (labels, value); the first partition of the enumeration wins a tie."""
    X = np.asarray(X, dtype=float)
    best, best_labels = np.inf, None
    for labels in naive_partitions(X.shape[0]):
        value = naive_neg_log_joint(X, labels, N0, blocks)
        if value < best:
            best, best_labels = value, labels
    return best_labels, best
