"""Generators of the EJS paper: Raykov, Boukouvalas & Little (2016), "Simple approximate MAP
inference for Dirichlet process mixtures", Electron. J. Statist. 10 ("EJS").

A CRP partition and a CRP / Normal-Wishart mixture (Section 5.1), a mixed-type clinical
simulator with missing values and outliers, and a Gaussian HMM sequence (Section 6.4).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from mapdp_core.core.validation import check_int, check_real, check_seed
from .plos import _cluster_counts

__all__ = ["CLINICAL_SUBTYPES", "EJS_NW_PRIOR", "clinical_simulator", "crp_expected_clusters", "crp_normal_wishart",
           "crp_partition", "hmm_sequence"]

#: EJS Section 5.1 Normal-Wishart prior: m0 = [2, 3], c0 = 0.5, a0 (nu0) = 30,
#: B0 (Lambda0) = [[2, 1], [1, 3]].
EJS_NW_PRIOR: dict = {"m0": (2.0, 3.0), "c0": 0.5, "a0": 30.0, "B0": ((2.0, 1.0), (1.0, 3.0))}


def crp_expected_clusters(n: int, N0: float) -> float:
    """Expected number of clusters of a CRP(N0) partition of n items.

    ``E[K] = sum_{i=0}^{n-1} N0 / (N0 + i)`` (item i + 1 opens a table with probability
    N0 / (N0 + i), EJS eq 2.4).
    """
    n = check_int(n, "n", 1)
    N0 = check_real(N0, "N0", positive=True)
    # the definition, summed directly: n is a number of generated items, so O(n) is cheap, and
    # importing tuning.expected_clusters (which handles N up to 1e9) would tie the data
    # generators to the MAP-DP estimator and its kernels
    return float(np.sum(N0 / (N0 + np.arange(n, dtype=float))))


def crp_partition(n: int, N0: float, seed=None) -> np.ndarray:
    """Draw a Chinese-restaurant-process partition of ``n`` items (EJS eqs 2.3-2.4).

    Item i + 1 joins existing cluster k with probability N_k / (N0 + i) and opens a new
    cluster with probability N0 / (N0 + i).

    Parameters
    ----------
    n : int
        Number of items, at least 1.
    N0 : float
        Concentration parameter, positive.
    seed : int, numpy.random.Generator or None
        Seed of the draw.

    Returns
    -------
    ndarray of shape (n,), int64
        Labels 0..K-1 in order of first appearance.
    """
    n = check_int(n, "n", 1)
    N0 = check_real(N0, "N0", positive=True)
    rng = check_seed(seed)
    z = np.empty(n, dtype=np.int64)
    counts: list[int] = []
    u = rng.random(n)
    for i in range(n):
        r = u[i] * (N0 + i)
        if r >= i:          # probability N0 / (N0 + i)
            z[i] = len(counts)
            counts.append(1)
            continue
        # existing cluster k with probability N_k / (N0 + i): walk the cumulative counts
        acc, k = 0.0, 0
        for k, c in enumerate(counts):
            acc += c
            if r < acc:
                break
        z[i] = k
        counts[k] += 1
    return z


def crp_normal_wishart(n: int, N0: float = 3.0, d: int = 2, seed=None, *, m0=None,
                       c0: float | None = None, a0: float | None = None, B0=None,
                       shuffle: bool = False):
    """Sample a Dirichlet-process Gaussian mixture as in EJS Section 5.1.

    The partition is a CRP(N0) draw of ``n`` points (EJS eq 2.2-2.4); each cluster k
    gets a precision ``Lambda_k ~ Wishart(B0, a0)`` (scale matrix B0, a0 degrees of
    freedom, so E[Lambda_k] = a0 B0) and a mean ``mu_k | Lambda_k ~ N(m0, (c0
    Lambda_k)^-1)``, the Normal-Wishart parameterisation of EJS Appendix B (B.1), which
    is also that of ``mapdp_core``'s ``normal_wishart`` family; then ``x_i ~
    N(mu_{z_i}, Lambda_{z_i}^-1)``.

    Default hyperparameters (``d == 2``) are the paper's: ``m0 = [2, 3]``, ``c0 = 0.5``,
    ``a0 = nu0 = 30`` and ``B0 = Lambda0 = [[2, 1], [1, 3]]`` (EJS Section 5.1, with
    N = 600 and N0 = 3 there), read as the Wishart scale matrix of the precision as in
    Appendix B.  Cluster covariances are then about (a0 B0)^-1, standard deviations of
    0.1-0.2, and the means spread sqrt(1/c0) = 1.4 times a cluster's width, so some
    clusters are well separated and others overlap, as the paper says.  For ``d != 2``
    the defaults are ``m0 = 0``, ``c0 = 0.5``, ``a0 = d + 28`` and ``B0 = I / a0`` (unit
    expected covariance, means spread 1.4 times as wide).

    Parameters
    ----------
    n : int
        Number of points, at least 1.
    N0 : float, default 3.0
        CRP concentration (the paper's value).
    d : int, default 2
        Dimension, at least 1.
    seed : int, numpy.random.Generator or None
        Seed; the same seed gives the same data.
    m0 : array-like of shape (d,), optional
    c0 : float, optional
        Positive.
    a0 : float, optional
        Degrees of freedom, greater than d - 1.
    B0 : array-like of shape (d, d), optional
        Symmetric positive definite.
    shuffle : bool, default False
        The CRP labels appear in order of first appearance (label 0 at row 0); the
        row order is already exchangeable, so shuffling is only cosmetic.

    Returns
    -------
    X : ndarray of shape (n, d), float64
    z : ndarray of shape (n,), int64
        True cluster labels 0..K-1.
    params : dict
        ``"means"`` (K, d), ``"covariances"`` (K, d, d), ``"precisions"`` (K, d, d),
        ``"counts"`` (K,), and the prior used: ``"m0"``, ``"c0"``, ``"a0"``, ``"B0"``,
        ``"N0"``.  ``{"m0", "c0", "a0", "B0"}`` can be passed as
        ``MAPDP(likelihood="normal_wishart", prior=...)`` to fit with the true prior.

    Raises
    ------
    ValueError
        On invalid ``n``, ``N0``, ``d``, seed or hyperparameters.
    """
    from scipy.stats import wishart

    n = check_int(n, "n", 1)
    N0 = check_real(N0, "N0", positive=True)
    d = check_int(d, "d", 1)
    if d == 2:
        defaults = {k: np.array(v, dtype=float) for k, v in EJS_NW_PRIOR.items()}
    else:
        a_def = d + 28.0
        defaults = {"m0": np.zeros(d), "c0": np.array(0.5), "a0": np.array(a_def),
                    "B0": np.eye(d) / a_def}
    m0 = defaults["m0"] if m0 is None else np.asarray(m0, dtype=float)
    if m0.shape != (d,) or not np.all(np.isfinite(m0)):
        raise ValueError(f"m0 must be {d} finite numbers, got shape {m0.shape}")
    c0 = float(defaults["c0"]) if c0 is None else check_real(c0, "c0", positive=True)
    a0 = float(defaults["a0"]) if a0 is None else check_real(a0, "a0")
    if a0 <= d - 1:
        raise ValueError(f"a0 (Wishart degrees of freedom) must exceed d - 1 = {d - 1}, got {a0}")
    B0 = defaults["B0"] if B0 is None else np.asarray(B0, dtype=float)
    if B0.shape != (d, d) or not np.all(np.isfinite(B0)) or not np.allclose(B0, B0.T):
        raise ValueError(f"B0 must be a symmetric finite {d} x {d} matrix, got shape {B0.shape}")
    try:
        np.linalg.cholesky(B0)
    except np.linalg.LinAlgError:
        raise ValueError("B0 must be positive definite") from None
    rng = check_seed(seed)

    z = crp_partition(n, N0, rng)
    K = int(z.max()) + 1
    precisions = np.asarray(wishart(df=a0, scale=B0).rvs(size=K, random_state=rng)).reshape(K, d, d)
    covariances = np.linalg.inv(precisions)
    covariances = 0.5 * (covariances + np.transpose(covariances, (0, 2, 1)))
    means = np.empty((K, d))
    for k in range(K):
        means[k] = rng.multivariate_normal(m0, covariances[k] / c0)
    X = np.empty((n, d))
    for k in range(K):
        idx = np.flatnonzero(z == k)
        L = np.linalg.cholesky(covariances[k])
        X[idx] = means[k] + rng.standard_normal((idx.size, d)) @ L.T
    if shuffle:
        perm = rng.permutation(n)
        X, z = X[perm], z[perm]
    params = {"means": means, "covariances": covariances, "precisions": precisions,
              "counts": np.bincount(z, minlength=K), "m0": m0.copy(), "c0": c0, "a0": a0,
              "B0": B0.copy(), "N0": N0}
    return np.ascontiguousarray(X), z, params


#: Latent subtypes of :func:`clinical_simulator`, in label order (the first
#: ``n_subtypes`` are used).  Loosely modelled on the Parkinson's-disease subtypes
#: discussed in PLOS Section 6.
CLINICAL_SUBTYPES: tuple = (
    "tremor-dominant", "postural-instability-gait", "mild-motor-younger-onset",
    "diffuse-malignant", "cognitive-predominant", "akinetic-rigid",
)

# Per-subtype parameters of each feature, one row per subtype in CLINICAL_SUBTYPES order.
_CLIN_BINARY = {  # P(feature = 1)
    "male": [0.65, 0.55, 0.60, 0.70, 0.50, 0.60],
    "rest_tremor": [0.90, 0.30, 0.50, 0.45, 0.25, 0.15],
    "freezing_of_gait": [0.05, 0.70, 0.05, 0.60, 0.30, 0.40],
    "rem_sleep_disorder": [0.15, 0.40, 0.10, 0.80, 0.55, 0.30],
}
_CLIN_ORDINAL = {  # probabilities of scores 0..4
    "tremor_score": [[.02, .08, .30, .40, .20], [.40, .35, .15, .07, .03], [.20, .40, .30, .08, .02],
                     [.15, .30, .30, .15, .10], [.50, .30, .12, .06, .02], [.60, .25, .10, .04, .01]],
    "postural_instability": [[.55, .30, .10, .04, .01], [.03, .12, .30, .35, .20], [.70, .22, .06, .01, .01],
                             [.05, .15, .30, .30, .20], [.25, .35, .25, .10, .05], [.15, .30, .30, .20, .05]],
    "cognitive_impairment": [[.50, .30, .15, .04, .01], [.25, .35, .25, .10, .05], [.70, .20, .07, .02, .01],
                             [.05, .15, .30, .30, .20], [.02, .08, .25, .35, .30], [.35, .35, .20, .07, .03]],
}
_CLIN_CATEGORICAL = {  # (levels, probabilities per subtype)
    "dominant_side": (("left", "right", "bilateral"),
                      [[.45, .45, .10], [.25, .25, .50], [.45, .45, .10], [.20, .20, .60],
                       [.30, .30, .40], [.35, .35, .30]]),
}
_CLIN_COUNT = {  # Poisson rate
    "falls_past_year": [0.3, 4.0, 0.2, 3.0, 1.5, 1.0],
    "medications": [2.0, 4.0, 1.5, 5.0, 3.0, 3.5],
}
_CLIN_REAL = {  # (mean, sd) per subtype
    "age_at_onset": [(62, 8), (70, 7), (48, 6), (72, 6), (68, 7), (60, 8)],
    "disease_duration_years": [(6, 3), (9, 4), (4, 2), (5, 2), (8, 4), (7, 3)],
    "levodopa_dose_mg": [(450, 120), (750, 180), (300, 100), (850, 200), (550, 150), (700, 160)],
    "gait_speed_m_s": [(1.15, 0.15), (0.70, 0.15), (1.30, 0.12), (0.60, 0.15), (0.95, 0.15), (0.85, 0.15)],
}


def clinical_simulator(n: int = 500, n_subtypes: int = 3, missing_rate: float = 0.1,
                       outlier_rate: float = 0.0, seed=None, *, weights=None):
    """Simulate a mixed-type "clinical" data set with named latent subtypes.

    Each patient belongs to one latent subtype (names in :data:`CLINICAL_SUBTYPES`,
    loosely after the Parkinson's-disease subtyping application of Raykov et al. 2016,
    PLOS ONE, Section 6) and, given the subtype, every feature is drawn independently,
    i.e. exactly the per-column mixture that MAP-DP fits with a likelihood dict
    (PLOS Section 4, EJS Appendix B):

    * binary (Bernoulli): ``male``, ``rest_tremor``, ``freezing_of_gait``,
      ``rem_sleep_disorder``;
    * ordinal scores 0..4 (modelled as binomial with n = 4): ``tremor_score``,
      ``postural_instability``, ``cognitive_impairment``;
    * categorical text: ``dominant_side`` (left / right / bilateral);
    * counts (Poisson): ``falls_past_year``, ``medications``;
    * real (Normal): ``age_at_onset``, ``disease_duration_years``, ``levodopa_dose_mg``,
      ``gait_speed_m_s``.

    Then a fraction ``outlier_rate`` of the rows have their real-valued features
    replaced by gross errors (the subtype mean plus or minus 8 to 12 standard
    deviations, as from a unit or typing mistake), and each entry is set missing
    completely at random with probability ``missing_rate``.

    Parameters
    ----------
    n : int, default 500
        Number of patients, at least ``n_subtypes``.
    n_subtypes : int, default 3
        Number of latent subtypes, 1..6.
    missing_rate : float, default 0.1
        Probability that each feature entry is missing (NaN), in [0, 1).
    outlier_rate : float, default 0.0
        Fraction of rows made outliers (rounded to a whole count), in [0, 1].
    seed : int, numpy.random.Generator or None
        Seed; the same seed gives the same data.
    weights : array-like of shape (n_subtypes,), optional
        Subtype proportions (normalised); default equal.  Counts follow them exactly
        (largest remainder, at least one patient per subtype) and rows are shuffled.

    Returns
    -------
    X : pandas.DataFrame of shape (n, 14)
        Integer-valued columns are float (NaN marks missing); ``dominant_side`` is text
        (``None`` when missing).
    y : pandas.Series of str
        The true subtype name of each row (named ``"subtype"``).
    likelihood : dict
        Family per column for ``mapdp_core.MAPDP(likelihood=...)``.

    Raises
    ------
    ValueError
        On invalid arguments.

    Notes
    -----
    Outlier rows are marked in ``X.attrs["outlier"]`` (a boolean array); the label
    stays the subtype they were drawn from.
    """
    n_subtypes = check_int(n_subtypes, "n_subtypes", 1, len(CLINICAL_SUBTYPES))
    n = check_int(n, "n", n_subtypes)
    missing_rate = check_real(missing_rate, "missing_rate", low=0.0, high=1.0, inclusive="left")
    outlier_rate = check_real(outlier_rate, "outlier_rate", low=0.0, high=1.0)
    if weights is None:
        w = np.full(n_subtypes, 1.0 / n_subtypes)
    else:
        w = np.asarray(weights, dtype=float)
        if w.shape != (n_subtypes,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise ValueError(f"weights must be {n_subtypes} positive finite numbers, got {weights!r}")
        w = w / w.sum()
    rng = check_seed(seed)

    counts = _cluster_counts(w, n)
    z = rng.permutation(np.repeat(np.arange(n_subtypes), counts))
    cols: dict = {}
    for name, p in _CLIN_BINARY.items():
        cols[name] = (rng.random(n) < np.asarray(p)[z]).astype(float)
    for name, probs in _CLIN_ORDINAL.items():
        cdf = np.cumsum(np.asarray(probs), axis=1)[z]
        cols[name] = np.minimum((rng.random(n)[:, None] >= cdf).sum(axis=1), 4).astype(float)
    cat_cols = {}
    for name, (levels, probs) in _CLIN_CATEGORICAL.items():
        cdf = np.cumsum(np.asarray(probs), axis=1)[z]
        codes = np.minimum((rng.random(n)[:, None] >= cdf).sum(axis=1), len(levels) - 1)
        cat_cols[name] = np.asarray(levels, dtype=object)[codes]
    for name, rate in _CLIN_COUNT.items():
        cols[name] = rng.poisson(np.asarray(rate)[z]).astype(float)
    for name, ms in _CLIN_REAL.items():
        ms = np.asarray(ms, dtype=float)
        cols[name] = ms[z, 0] + ms[z, 1] * rng.standard_normal(n)

    n_out = int(round(outlier_rate * n))
    outlier = np.zeros(n, dtype=bool)
    if n_out:
        rows = rng.choice(n, size=n_out, replace=False)
        outlier[rows] = True
        for name, ms in _CLIN_REAL.items():
            ms = np.asarray(ms, dtype=float)
            sign = rng.choice([-1.0, 1.0], size=n_out)
            cols[name][rows] = ms[z[rows], 0] + sign * rng.uniform(8, 12, n_out) * ms[z[rows], 1]

    order = ["male", "age_at_onset", "disease_duration_years", "rest_tremor", "freezing_of_gait",
             "rem_sleep_disorder", "tremor_score", "postural_instability", "cognitive_impairment",
             "dominant_side", "falls_past_year", "medications", "levodopa_dose_mg", "gait_speed_m_s"]
    data = {}
    for name in order:
        values = cat_cols[name] if name in cat_cols else cols[name]
        mask = rng.random(n) < missing_rate
        if name in cat_cols:
            values = values.copy()
            values[mask] = None
        else:
            values = np.where(mask, np.nan, values)
        data[name] = values
    X = pd.DataFrame(data)
    X.attrs["outlier"] = outlier
    y = pd.Series(np.asarray(CLINICAL_SUBTYPES, dtype=object)[z], name="subtype")
    likelihood = {
        **{c: "bernoulli" for c in _CLIN_BINARY},
        **{c: "binomial" for c in _CLIN_ORDINAL},
        **{c: "categorical" for c in _CLIN_CATEGORICAL},
        **{c: "poisson" for c in _CLIN_COUNT},
        **{c: "normal_gamma" for c in _CLIN_REAL},
    }
    return X, y, likelihood


def hmm_sequence(T: int = 4000, K: int = 5, seed=None, *, d: int = 3, means=None,
                 sigma: float = 0.9, self_transition: float = 0.96, initial=None):
    """Generate a sequence from a hidden Markov model with Gaussian emissions (EJS 6.4).

    The defaults are the synthetic study of EJS Section 6.4: T = 4000 points from a
    five-state HMM in 3 dimensions, state k emitting ``N(mu_k 1_3, sigma I_3)`` with
    ``mu = [0.2, 1.1, 1.8, 3.4, 4.8]`` (the same value in each dimension) and
    ``sigma = 0.9``; each step stays in its state with probability 0.96 and moves to
    each of the other K - 1 states with equal probability.  The paper writes the shared
    covariance as ``sigma I_3``; we read 0.9 as that covariance (variance), so the
    emission standard deviation is sqrt(0.9) = 0.95.  The first state is uniform.

    Parameters
    ----------
    T : int, default 4000
        Length of the sequence, at least 1.
    K : int, default 5
        Number of states, at least 1.  With ``means=None`` and K != 5 the state means
        are ``linspace(0.2, 4.8, K)``.
    seed : int, numpy.random.Generator or None
        Seed; the same seed gives the same sequence.
    d : int, default 3
        Dimension of each observation.
    means : array-like of shape (K,) or (K, d), optional
        State means; a length-K vector is repeated in every dimension.
    sigma : float, default 0.9
        Emission variance (covariance ``sigma I_d``), positive.
    self_transition : float, default 0.96
        Probability of staying in the same state, in [0, 1] (must be 1 when K = 1).
    initial : array-like of shape (K,), optional
        Distribution of the first state (normalised); default uniform.

    Returns
    -------
    X : ndarray of shape (T, d), float64
        Observations.
    z : ndarray of shape (T,), int64
        The state path, values 0..K-1.
    params : dict
        ``"means"`` (K, d), ``"covariance"`` (d, d), ``"transition"`` (K, K) and
        ``"initial"`` (K,).

    Raises
    ------
    ValueError
        On invalid arguments.
    """
    T = check_int(T, "T", 1)
    K = check_int(K, "K", 1)
    d = check_int(d, "d", 1)
    sigma = check_real(sigma, "sigma", positive=True)
    stay = check_real(self_transition, "self_transition", low=0.0, high=1.0)
    if K == 1 and stay != 1.0:
        raise ValueError("with K = 1 the only possible self_transition is 1.0")
    if means is None:
        mu = np.array([0.2, 1.1, 1.8, 3.4, 4.8]) if K == 5 else np.linspace(0.2, 4.8, K)
        mu = np.repeat(mu[:, None], d, axis=1)
    else:
        mu = np.asarray(means, dtype=float)
        if mu.ndim == 1 and mu.shape[0] == K:
            mu = np.repeat(mu[:, None], d, axis=1)
        if mu.shape != (K, d) or not np.all(np.isfinite(mu)):
            raise ValueError(f"means must have shape ({K},) or ({K}, {d}) and be finite, got {np.shape(means)}")
    if initial is None:
        pi0 = np.full(K, 1.0 / K)
    else:
        pi0 = np.asarray(initial, dtype=float)
        if pi0.shape != (K,) or not np.all(np.isfinite(pi0)) or np.any(pi0 < 0) or pi0.sum() <= 0:
            raise ValueError(f"initial must be {K} non-negative numbers with a positive sum, got {initial!r}")
        pi0 = pi0 / pi0.sum()
    rng = check_seed(seed)

    A = np.full((K, K), (1.0 - stay) / (K - 1) if K > 1 else 0.0)
    np.fill_diagonal(A, stay)
    cdf = np.cumsum(A, axis=1)
    cdf[:, -1] = 1.0
    u = rng.random(T)
    z = np.empty(T, dtype=np.int64)
    z[0] = min(int(np.searchsorted(np.cumsum(pi0), u[0], side="right")), K - 1)
    for t in range(1, T):
        z[t] = min(int(np.searchsorted(cdf[z[t - 1]], u[t], side="right")), K - 1)
    X = mu[z] + np.sqrt(sigma) * rng.standard_normal((T, d))
    params = {"means": mu, "covariance": sigma * np.eye(d), "transition": A, "initial": pi0}
    return np.ascontiguousarray(X), z, params
