"""EJS generators: CRP / Normal-Wishart mixture (Section 5.1), clinical simulator and
HMM sequence (Section 6.4)."""
import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP
from mapdp_core.data.synthetic import (CLINICAL_SUBTYPES, clinical_simulator, crp_expected_clusters,
                                  crp_normal_wishart, crp_partition, hmm_sequence)


# ----- CRP / Normal-Wishart ---------------------------------------------------------

def test_crp_normal_wishart_seeded_and_shapes():
    X1, z1, p1 = crp_normal_wishart(600, 3.0, seed=7)
    X2, z2, _ = crp_normal_wishart(600, 3.0, seed=7)
    X3, _, _ = crp_normal_wishart(600, 3.0, seed=8)
    assert X1.shape == (600, 2) and z1.shape == (600,) and X1.dtype == np.float64
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(z1, z2)
    assert not np.array_equal(X1, X3)
    K = z1.max() + 1
    assert set(np.unique(z1)) == set(range(K))
    assert p1["means"].shape == (K, 2) and p1["covariances"].shape == (K, 2, 2)
    assert p1["counts"].sum() == 600
    np.testing.assert_allclose(p1["B0"], [[2, 1], [1, 3]])
    assert (p1["c0"], p1["a0"]) == (0.5, 30.0)
    for S in p1["covariances"]:
        assert np.all(np.linalg.eigvalsh(S) > 0)


def test_crp_normal_wishart_other_dimension_and_true_prior_fits():
    X, z, p = crp_normal_wishart(200, 2.0, d=4, seed=1)
    assert X.shape == (200, 4)
    prior = {k: p[k] for k in ("m0", "c0", "a0", "B0")}
    model = MAPDP(likelihood="normal_wishart", prior=prior, N0=2.0).fit(X)
    assert model.labels_.shape == (200,)


def test_crp_number_of_clusters_matches_expectation():
    n, N0, reps = 600, 3.0, 400
    rng = np.random.default_rng(0)
    Ks = np.array([crp_partition(n, N0, rng).max() + 1 for _ in range(reps)])
    expected = sum(N0 / (N0 + i) for i in range(n))
    assert crp_expected_clusters(n, N0) == pytest.approx(expected)
    # Var[K] = sum p_i (1 - p_i) < E[K]; the mean of 400 draws is within 4 standard errors
    var = sum((N0 / (N0 + i)) * (1 - N0 / (N0 + i)) for i in range(n))
    assert abs(Ks.mean() - expected) < 4 * np.sqrt(var / reps)


def test_crp_first_item_opens_cluster_zero_and_sizes_are_rich_get_richer():
    z = crp_partition(1000, 1.0, seed=3)
    assert z[0] == 0
    sizes = np.bincount(z)
    assert sizes.max() > 1000 / len(sizes)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n=0, N0=1.0), "n must be a whole number >= 1"),
    (dict(n=10, N0=0.0), "N0 must be a finite number > 0"),
    (dict(n=10, N0=1.0, d=0), "d must be a whole number >= 1"),
    (dict(n=10, N0=1.0, a0=0.5), "a0"),
    (dict(n=10, N0=1.0, B0=[[1, 2], [2, 1]]), "positive definite"),
    (dict(n=10, N0=1.0, m0=[1, 2, 3]), "m0"),
    (dict(n=10, N0=1.0, seed=-1), "seed"),
])
def test_crp_normal_wishart_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        crp_normal_wishart(**kwargs)


# ----- clinical simulator -----------------------------------------------------------

def test_clinical_seeded_types_and_names():
    X, y, spec = clinical_simulator(n=300, n_subtypes=4, missing_rate=0.0, seed=5)
    X2, y2, _ = clinical_simulator(n=300, n_subtypes=4, missing_rate=0.0, seed=5)
    pd.testing.assert_frame_equal(X, X2)
    pd.testing.assert_series_equal(y, y2)
    assert X.shape == (300, 14)
    assert set(y) == set(CLINICAL_SUBTYPES[:4])
    assert set(spec) == set(X.columns)
    assert set(spec.values()) == {"bernoulli", "binomial", "categorical", "poisson", "normal_gamma"}
    for col, fam in spec.items():
        if fam == "bernoulli":
            assert set(X[col].unique()) <= {0.0, 1.0}
        elif fam == "binomial":
            assert set(X[col].unique()) <= {0.0, 1.0, 2.0, 3.0, 4.0}
        elif fam == "categorical":
            assert set(X[col].unique()) <= {"left", "right", "bilateral"}
        elif fam == "poisson":
            assert (X[col] >= 0).all() and (X[col] == X[col].round()).all()


@pytest.mark.parametrize("rate", [0.0, 0.1, 0.3])
def test_clinical_missing_rate(rate):
    X, _, _ = clinical_simulator(n=1000, missing_rate=rate, seed=1)
    observed = X.isna().to_numpy().mean()
    # 14 000 Bernoulli(rate) cells: standard error <= 0.0042
    assert abs(observed - rate) < 0.015


def test_clinical_outliers_and_fit():
    X, y, spec = clinical_simulator(n=400, outlier_rate=0.05, seed=2)
    out = X.attrs["outlier"]
    assert out.sum() == 20
    z = (X["age_at_onset"] - X["age_at_onset"].mean()) / X["age_at_onset"].std()
    assert (z[out].abs() > 3).sum() >= 10       # most outlier ages (if observed) are extreme
    model = MAPDP(N0=3.0, prior=None, n_init=1, likelihood=spec, random_state=0).fit(X)
    assert model.labels_.shape == (400,)


def test_clinical_subtypes_are_recoverable_without_noise():
    from sklearn.metrics import normalized_mutual_info_score
    X, y, spec = clinical_simulator(n=600, n_subtypes=3, missing_rate=0.0, seed=0)
    labels = MAPDP(N0=3.0, prior=None, n_init=1, likelihood=spec, random_state=0).fit(X).labels_
    assert normalized_mutual_info_score(y, labels) > 0.6


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_subtypes=0), "n_subtypes must be a whole number from 1 to 6"),
    (dict(n_subtypes=7), "n_subtypes must be a whole number from 1 to 6"),
    (dict(n=2, n_subtypes=3), "n must be a whole number >= 3"),
    (dict(missing_rate=1.0), "missing_rate must be a finite number >= 0.0 and < 1.0"),
    (dict(missing_rate=-0.1), "missing_rate must be a finite number >= 0.0 and < 1.0"),
    (dict(outlier_rate=1.5), "outlier_rate must be a finite number >= 0.0 and <= 1.0"),
    (dict(n_subtypes=2, weights=[1, 0]), "weights"),
    (dict(n=10.5), "n must be a whole number >= 3, got 10.5"),
])
def test_clinical_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        clinical_simulator(**kwargs)


# ----- HMM sequence -----------------------------------------------------------------

def test_hmm_defaults_are_ejs_section_6_4():
    X, z, p = hmm_sequence(seed=0)
    assert X.shape == (4000, 3) and z.shape == (4000,)
    np.testing.assert_allclose(p["means"][:, 0], [0.2, 1.1, 1.8, 3.4, 4.8])
    np.testing.assert_allclose(np.diag(p["transition"]), 0.96)
    np.testing.assert_allclose(p["transition"].sum(axis=1), 1.0)
    X2, z2, _ = hmm_sequence(seed=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(z, z2)


def test_hmm_path_statistics():
    T = 20000
    X, z, p = hmm_sequence(T, 5, seed=11)
    stay = np.mean(z[1:] == z[:-1])
    assert abs(stay - 0.96) < 4 * np.sqrt(0.96 * 0.04 / (T - 1))
    # moves are uniform over the other states
    moves = np.zeros((5, 5))
    np.add.at(moves, (z[:-1], z[1:]), 1)
    off = moves[~np.eye(5, dtype=bool)]
    assert off.min() > 0.5 * off.mean()
    # symmetric chain: stationary distribution uniform
    np.testing.assert_allclose(np.bincount(z, minlength=5) / T, 0.2, atol=0.06)
    # emissions: per-state mean and variance 0.9
    for k in range(5):
        np.testing.assert_allclose(X[z == k].mean(axis=0), p["means"][k], atol=0.1)
        np.testing.assert_allclose(X[z == k].var(axis=0), 0.9, rtol=0.15)


@pytest.mark.parametrize("kwargs, match", [
    (dict(T=0), "T must be a whole number >= 1"),
    (dict(K=0), "K must be a whole number >= 1"),
    (dict(K=1, self_transition=0.5), "K = 1"),
    (dict(self_transition=1.2), "self_transition must be a finite number >= 0.0 and <= 1.0"),
    (dict(sigma=0), "sigma must be a finite number > 0"),
    (dict(K=3, means=[1, 2]), "means"),
    (dict(initial=[1, 0, 0]), "initial"),
])
def test_hmm_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        hmm_sequence(**kwargs)
