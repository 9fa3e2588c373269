"""Properties over random small data sets and hyperparameters (hypothesis)."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mapdp_core import map_dp

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def problems(draw):
    """A small data set, a family and a valid prior for it."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(1, 40))
    family = draw(st.sampled_from(["normal_wishart", "normal_gamma", "spherical_gaussian", "poisson",
                                   "bernoulli", "categorical", "mixed"]))
    n_centres = draw(st.integers(1, 4))
    z = rng.integers(0, n_centres, n)
    spread = draw(st.floats(0.1, 5.0))
    if family in ("normal_wishart", "normal_gamma", "spherical_gaussian"):
        D = draw(st.integers(1, 3))
        X = rng.normal(size=(n_centres, D))[z] * spread * 3 + rng.normal(size=(n, D))
        if draw(st.booleans()):
            X[rng.integers(0, n)] = X[0]  # duplicate points
        if family == "normal_wishart":
            prior = {"m0": rng.normal(size=D), "c0": draw(st.floats(0.01, 5)), "a0": D - 1 + draw(st.floats(0.5, 10)),
                     "B0": np.eye(D) * draw(st.floats(0.05, 5))}
        elif family == "normal_gamma":
            prior = {"m0": 0.0, "c0": draw(st.floats(0.01, 5)), "a0": draw(st.floats(0.5, 5)), "b0": draw(st.floats(0.1, 5))}
        else:
            prior = {"mu0": np.zeros(D), "sigma0_2": draw(st.floats(0.1, 20)), "sigma2": draw(st.floats(0.05, 5))}
        return X, family, prior
    if family == "poisson":
        X = rng.poisson(rng.uniform(0.5, 15, (n_centres, 2))[z]).astype(float)
        return X, family, {"alpha0": draw(st.floats(0.1, 5)), "beta0": draw(st.floats(0.1, 5))}
    if family == "bernoulli":
        X = (rng.random((n, 4)) < rng.random((n_centres, 4))[z]).astype(float)
        return X, family, {"alpha0": draw(st.floats(0.1, 3)), "beta0": draw(st.floats(0.1, 3))}
    if family == "categorical":
        X = np.column_stack([rng.integers(0, 3, n_centres)[z] if draw(st.booleans()) else rng.integers(0, 3, n)
                             for _ in range(3)]).astype(float)
        return X, family, {"alpha0": np.full(3, draw(st.floats(0.1, 3)))}
    X = np.column_stack([rng.normal(size=n) + 3 * z, rng.poisson(2 + 3 * z).astype(float),
                         (rng.random(n) < 0.3 + 0.2 * (z % 2)).astype(float)])
    X[rng.random((n, 3)) < 0.15] = np.nan
    likelihood = ["normal_gamma", "poisson", "bernoulli"]
    prior = {0: {"m0": 0.0, "c0": 0.1, "a0": 2.0, "b0": 1.0}, 1: {"alpha0": 1.0, "beta0": 0.5},
             2: {"alpha0": 1.0, "beta0": 1.0}}
    return X, likelihood, prior


@SETTINGS
@given(problems(), st.floats(0.05, 20.0), st.booleans())
def test_exact_joint_never_increases_after_the_first_sweep(problem, N0, shuffle):
    X, likelihood, prior = problem
    order = np.random.default_rng(0).permutation(len(X)) if shuffle else None
    states = list(map_dp(X, N0, likelihood, prior, order=order, tol=0.0, max_iter=8))
    joints = [s.neg_log_joint for s in states]
    for before, after in zip(joints[:-1], joints[1:]):
        # each point update maximises p(X, z) over z_i with the rest fixed (sweeps >= 2)
        assert after <= before + 1e-9 * max(1.0, abs(before))
    for s in states:
        assert np.isfinite(s.objective) and np.isfinite(s.neg_log_joint)


@SETTINGS
@given(problems(), st.floats(0.05, 20.0))
def test_labels_are_contiguous_and_no_cluster_is_empty(problem, N0):
    X, likelihood, prior = problem
    for s in map_dp(X, N0, likelihood, prior, max_iter=6):
        assert s.labels.shape == (len(X),)
        assert s.labels.min() == 0 and s.labels.max() == s.n_clusters - 1
        counts = np.bincount(s.labels, minlength=s.n_clusters)
        assert np.all(counts > 0)
        np.testing.assert_array_equal(counts, s.cluster_sizes)
        assert s.cluster_sizes.sum() == len(X)


@SETTINGS
@given(problems(), st.floats(0.05, 20.0), st.integers(0, 2**32 - 1))
def test_permuting_rows_with_the_visiting_order_gives_the_same_partition(problem, N0, seed):
    X, likelihood, prior = problem
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(X))
    perm = rng.permutation(len(X))            # row j of Xp is row perm[j] of X
    inverse = np.argsort(perm)
    a = list(map_dp(X, N0, likelihood, prior, order=order, max_iter=10))[-1]
    b = list(map_dp(X[perm], N0, likelihood, prior, order=inverse[order], max_iter=10))[-1]
    np.testing.assert_array_equal(b.labels, a.labels[perm])
    assert b.objective == a.objective
