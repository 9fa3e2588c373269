"""The numba engine reproduces the slow reference program exactly: identical labels and
objective sequences equal to 1e-9 relative (ALGORITHMS.md, "the exact semantics")."""
import numpy as np
import pytest

from mapdp_core import MAPDP, default_prior, map_dp
from naive import naive_mapdp, naive_neg_log_joint


def three_shapes(seed, n=240):
    """Three Gaussians of unequal size, shape and orientation (in the manner of PLOS Section 5)."""
    rng = np.random.default_rng(seed)
    sizes = [int(n * 0.6), int(n * 0.3), n - int(n * 0.6) - int(n * 0.3)]
    covs = [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[2.0, 1.6], [1.6, 2.0]]), np.array([[0.2, 0.0], [0.0, 0.05]])]
    means = [np.array([0.0, 0.0]), np.array([6.0, 4.0]), np.array([-4.0, 5.0])]
    return np.vstack([rng.multivariate_normal(m, c, s) for m, c, s in zip(means, covs, sizes)])


def assert_same_run(engine_states, ref_labels, ref_E):
    E = [s.objective for s in engine_states]
    assert len(E) == len(ref_E)
    np.testing.assert_array_equal(engine_states[-1].labels, ref_labels)
    np.testing.assert_allclose(E, ref_E, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("seed,N0", [(0, 3.0), (1, 1.0), (2, 10.0), (3, 0.3)])
def test_normal_wishart_identity_order_via_the_public_call(seed, N0):
    X = three_shapes(seed)
    p = default_prior("normal_wishart", X)
    m = MAPDP(N0=N0, likelihood="normal_wishart", prior={"m0": p["m0"], "c0": p["c0"], "a0": p["a0"], "B0": p["B0"]},
              n_init=1, shuffle=False, tol=1e-6, max_iter=100).fit(X)
    labels, E = naive_mapdp(X, N0, [("normal_wishart", [0, 1], p)])
    np.testing.assert_array_equal(m.labels_, labels)
    np.testing.assert_allclose(m.objective_history_, E, rtol=1e-9, atol=1e-9)
    assert m.neg_log_joint_ == pytest.approx(naive_neg_log_joint(X, labels, N0, [("normal_wishart", [0, 1], p)]), rel=1e-9)


def test_normal_wishart_other_prior_random_order_three_dims():
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal(0, 1, (80, 3)), rng.normal(4, 0.5, (50, 3)), rng.normal([0, 5, -3], 1.5, (40, 3))])
    prior = {"m0": np.array([1.0, 1.0, 0.0]), "c0": 0.05, "a0": 5.0, "B0": 0.3 * np.eye(3)}
    order = rng.permutation(len(X))
    states = list(map_dp(X, 2.0, "normal_wishart", prior, order=order))
    assert_same_run(states, *naive_mapdp(X, 2.0, [("normal_wishart", [0, 1, 2], prior)], order=order))


def test_outliers_open_their_own_clusters_like_the_reference():
    X = three_shapes(4)
    X = np.vstack([X, [[30.0, 30.0], [30.5, 29.5], [-25.0, 20.0], [-25.5, 20.5]]])
    p = default_prior("normal_wishart", X)
    states = list(map_dp(X, 3.0, "normal_wishart", p))
    assert_same_run(states, *naive_mapdp(X, 3.0, [("normal_wishart", [0, 1], p)]))


def latent_groups(seed, n=150):
    rng = np.random.default_rng(seed)
    z = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    return rng, z


def test_categorical_columns():
    rng, z = latent_groups(11)
    probs = np.array([[0.8, 0.1, 0.1, 0.0], [0.1, 0.7, 0.1, 0.1], [0.05, 0.05, 0.1, 0.8]])
    X = np.column_stack([[rng.choice(4, p=probs[(k + j) % 3]) for k in z] for j in range(4)]).astype(float)
    prior = {"alpha0": np.full(4, 0.5)}
    states = list(map_dp(X, 1.0, "categorical", prior))
    blocks = [("categorical", [j], prior) for j in range(4)]
    assert_same_run(states, *naive_mapdp(X, 1.0, blocks))
    assert states[-1].n_clusters > 1


def test_poisson_columns():
    rng, z = latent_groups(12)
    rates = np.array([[1.0, 8.0, 3.0], [9.0, 1.0, 3.0], [4.0, 4.0, 20.0]])
    X = rng.poisson(rates[z]).astype(float)
    prior = {"alpha0": 2.0, "beta0": 0.5}
    states = list(map_dp(X, 1.0, "poisson", prior))
    assert_same_run(states, *naive_mapdp(X, 1.0, [("poisson", [0, 1, 2], prior)]))
    assert states[-1].n_clusters > 1


def test_bernoulli_columns():
    rng, z = latent_groups(13, n=200)
    p = np.array([[0.9, 0.9, 0.1, 0.1, 0.5], [0.1, 0.9, 0.9, 0.1, 0.5], [0.1, 0.1, 0.1, 0.9, 0.9]])
    X = (rng.random((len(z), 5)) < p[z]).astype(float)
    prior = {"alpha0": 1.0, "beta0": 1.0}
    states = list(map_dp(X, 0.5, "bernoulli", prior))
    assert_same_run(states, *naive_mapdp(X, 0.5, [("bernoulli", list(range(5)), prior)]))


def mixed_data(seed, n=160, missing=0.1):
    rng, z = latent_groups(seed, n)
    mu = np.array([[0.0, 0.0], [4.0, 1.0], [-2.0, 5.0]])
    cols = [
        mu[z, 0] + rng.normal(size=n), mu[z, 1] + rng.normal(size=n),           # 0-1 NW block
        rng.normal(size=n) + 3 * z,                                            # 2 normal_gamma
        rng.normal(size=n) + 2 * z, rng.normal(size=n) - z,                    # 3-4 spherical block
        rng.normal(size=n) + z, rng.normal(size=n) * 0.5 + 2 * z,              # 5-6 known covariance
        (rng.random(n) < np.array([0.2, 0.8, 0.5])[z]).astype(float),          # 7 bernoulli
        rng.binomial(4, np.array([0.1, 0.5, 0.9])[z]).astype(float),           # 8 binomial(4)
        np.array([rng.choice(3, p=q) for q in np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]])[z]], float),  # 9
        rng.poisson(np.array([1.0, 5.0, 10.0])[z]).astype(float),              # 10 poisson
        rng.exponential(np.array([1.0, 3.0, 0.3])[z]),                         # 11 exponential
        (rng.geometric(np.array([0.7, 0.3, 0.1])[z]) - 1).astype(float),       # 12 geometric
    ]
    X = np.column_stack(cols)
    for j in (2, 3, 4, 7, 8, 9, 10, 11, 12):  # gaps in every per-column family and the spherical block
        X[rng.random(n) < missing, j] = np.nan
    return X


MIXED_SPEC = [
    ("normal_wishart", [0, 1], {"m0": np.array([0.5, 1.5]), "c0": 0.1, "a0": 4.0, "B0": np.eye(2) * 0.5}),
    ("normal_gamma", [2], {"m0": 3.0, "c0": 0.1, "a0": 2.0, "b0": 1.0}),
    ("spherical_gaussian", [3, 4], {"mu0": np.array([2.0, -1.0]), "sigma0_2": 4.0, "sigma2": 1.0}),
    ("gaussian_known_cov", [5, 6], {"mu0": np.array([1.0, 2.0]), "Sigma0": np.array([[2.0, 0.5], [0.5, 3.0]]),
                                    "Sigma": np.array([[1.0, 0.1], [0.1, 0.3]])}),
    ("bernoulli", [7], {"alpha0": 0.5, "beta0": 0.5}),
    ("binomial", [8], {"alpha0": 1.0, "beta0": 1.0, "n": 4}),
    ("categorical", [9], {"alpha0": np.array([1.0, 1.0, 1.0])}),
    ("poisson", [10], {"alpha0": 3.0, "beta0": 0.5}),
    ("exponential", [11], {"alpha0": 2.0, "beta0": 2.0}),
    ("geometric", [12], {"alpha0": 1.0, "beta0": 1.0}),
]


@pytest.mark.parametrize("seed", [21, 22])
def test_mixed_spec_with_missing_values(seed):
    X = mixed_data(seed)
    likelihood = {tuple(cols) if len(cols) > 1 else cols[0]: fam for fam, cols, _ in MIXED_SPEC}
    prior = {tuple(cols) if len(cols) > 1 else cols[0]: p for _, cols, p in MIXED_SPEC}
    order = np.random.default_rng(seed).permutation(len(X))
    states = list(map_dp(X, 1.5, likelihood, prior, order=order))
    ref_labels, ref_E = naive_mapdp(X, 1.5, MIXED_SPEC, order=order)
    assert_same_run(states, ref_labels, ref_E)
    assert states[-1].neg_log_joint == pytest.approx(naive_neg_log_joint(X, ref_labels, 1.5, MIXED_SPEC), rel=1e-9)
    assert states[-1].n_clusters >= 2
