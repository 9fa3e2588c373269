"""K-means baseline: equality with scikit-learn's Lloyd, monotone objective, empty clusters, BIC."""
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans as SKKMeans
from sklearn.datasets import make_blobs

from mapdp_core.models.kmeans import KMeans, kmeans, kmeans_bic, kmeans_plusplus
from mapdp_core.core.state import SweepState


def _datasets():
    yield "blobs-overlapping", make_blobs(600, centers=5, n_features=3, cluster_std=2.5, random_state=0)[0], 5
    yield "blobs-2d", make_blobs(400, centers=3, n_features=2, cluster_std=1.0, random_state=1)[0], 4
    rng = np.random.default_rng(2)
    yield "uniform-cube", rng.uniform(size=(500, 4)), 6
    yield "anisotropic", rng.normal(size=(300, 2)) @ np.array([[3.0, 0.0], [1.5, 0.3]]), 3
    yield "high-dim", rng.normal(size=(250, 12)) + rng.integers(0, 3, 250)[:, None] * 1.5, 3


@pytest.mark.parametrize("name,X,K", list(_datasets()), ids=lambda v: v if isinstance(v, str) else "")
def test_labels_equal_sklearn_lloyd_given_same_centres(name, X, K):
    for seed in range(3):
        init = X[np.random.default_rng(seed).choice(len(X), K, replace=False)]
        ref = SKKMeans(K, init=init, n_init=1, algorithm="lloyd", max_iter=300, tol=1e-4).fit(X)
        ours = KMeans(K, init=init, max_iter=300, tol=1e-4).fit(X)
        np.testing.assert_array_equal(ours.labels_, ref.labels_)
        np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-9, atol=1e-9)
        assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-9)
        assert ours.n_iter_ == ref.n_iter_
        # the generator's last labels are the same when the run stopped because nothing moved
        last = list(kmeans(X, K, init=init))[-1]
        if last.n_changed == 0:
            np.testing.assert_array_equal(last.labels, ref.labels_)


def test_labels_equal_sklearn_with_tol_zero():
    X = make_blobs(500, centers=4, n_features=2, cluster_std=3.0, random_state=7)[0]
    init = X[:4]
    ref = SKKMeans(4, init=init, n_init=1, algorithm="lloyd", tol=0.0).fit(X)
    states = list(kmeans(X, 4, init=init, tol=0.0))
    np.testing.assert_array_equal(states[-1].labels, ref.labels_)
    assert states[-1].converged and states[-1].n_changed == 0


def test_states_and_objective_non_increasing():
    X = make_blobs(800, centers=6, n_features=2, cluster_std=2.0, random_state=3)[0]
    states = list(kmeans(X, 6, random_state=0, tol=0.0))
    assert all(isinstance(s, SweepState) for s in states)
    assert [s.iteration for s in states] == list(range(1, len(states) + 1))
    objectives = np.array([s.objective for s in states])
    assert np.all(np.diff(objectives) <= 1e-9 * objectives[0])
    for s in states:
        assert s.algorithm == "K-means"
        assert math.isnan(s.neg_log_joint)
        assert s.n_clusters == 6 and s.cluster_sizes.sum() == len(X)
        centres = s.summaries["mean"]
        assert centres.shape == (6, 2)
        assert s.summaries["covariance"] == {} and s.summaries["proportions"] == {}
        assert s.objective == pytest.approx(((X - centres[s.labels]) ** 2).sum())
        assert not s.labels.flags.writeable
    assert states[0].n_changed == len(X)
    assert states[-1].converged and not any(s.converged for s in states[:-1])


def test_states_are_snapshots():
    X = make_blobs(200, centers=3, random_state=0)[0]
    states = list(kmeans(X, 3, init=X[:3]))
    assert len(states) > 1
    for s in states:  # each state is consistent with its own labels, not with the final ones
        assert s.objective == pytest.approx(((X - s.summaries["mean"][s.labels]) ** 2).sum())
    assert states[0].objective > states[-1].objective


def test_empty_cluster_takes_the_farthest_row():
    # the third centre is far from everything: after the first assignment it is empty and
    # must take the row farthest from its own centre (x = 10), which becomes a singleton.
    X = np.array([[0.0], [0.5], [1.0], [9.0], [10.0]])
    init = np.array([[0.5], [9.2], [100.0]])
    states = list(kmeans(X, 3, init=init))
    first = states[0]
    np.testing.assert_array_equal(first.labels, [0, 0, 0, 1, 2])
    np.testing.assert_array_equal(first.cluster_sizes, [3, 1, 1])
    np.testing.assert_allclose(first.summaries["mean"].ravel(), [0.5, 9.0, 10.0])
    assert all((s.cluster_sizes > 0).all() for s in states)
    objectives = [s.objective for s in states]
    assert all(b <= a for a, b in itertools.pairwise(objectives))


def test_empty_clusters_with_duplicates():
    # two distinct values, three clusters: a duplicate row fills the empty cluster; objective 0
    X = np.array([[0.0], [0.0], [0.0], [1.0], [1.0]])
    model = KMeans(3, init=np.array([[0.0], [1.0], [5.0]])).fit(X)
    assert sorted(np.bincount(model.labels_, minlength=3)) == [1, 2, 2]
    assert model.inertia_ == 0.0


def test_estimator_attributes_restarts_and_predict():
    X, y = make_blobs(300, centers=4, n_features=2, cluster_std=0.5, random_state=4)
    one = KMeans(4, n_init=1, random_state=0).fit(X)
    many = KMeans(4, n_init=10, random_state=0).fit(X)
    assert many.inertia_ <= one.inertia_ + 1e-9
    assert many.cluster_centers_.shape == (4, 2)
    assert many.objective_history_[-1] == pytest.approx(many.inertia_)
    assert len(many.objective_history_) == many.n_iter_
    np.testing.assert_array_equal(many.predict(X), many.labels_)
    np.testing.assert_array_equal(KMeans(4, random_state=0).fit_predict(X), many.labels_)
    assert many.score(X) == pytest.approx(-many.inertia_)
    from sklearn.metrics import adjusted_rand_score
    assert adjusted_rand_score(y, many.labels_) == 1.0


def test_random_state_reproducible_and_plusplus_picks_rows():
    X = make_blobs(200, centers=3, random_state=0)[0]
    a = [s.labels for s in kmeans(X, 3, random_state=5)]
    b = [s.labels for s in kmeans(X, 3, random_state=5)]
    assert len(a) == len(b) and all(np.array_equal(u, v) for u, v in zip(a, b))
    centres = kmeans_plusplus(X, 3, random_state=0)
    assert all((X == c).all(axis=1).any() for c in centres)
    assert len({tuple(c) for c in centres}) == 3


def test_dataframe_input_sets_feature_names():
    X = make_blobs(100, centers=2, random_state=0)[0]
    df = pd.DataFrame(X, columns=["a", "b"])
    model = KMeans(2, random_state=0).fit(df)
    assert list(model.feature_names_in_) == ["a", "b"]
    assert model.n_features_in_ == 2


@pytest.mark.parametrize("kwargs,message", [
    ({"n_clusters": 0}, "n_clusters must be a whole number >= 1"),
    ({"n_clusters": 2.5}, "n_clusters must be a whole number"),
    ({"n_clusters": 50}, "n_samples=10 should be >= n_clusters=50"),
    ({"n_clusters": 2, "init": "best"}, r"init must be 'k-means\+\+', 'random' or an array"),
    ({"n_clusters": 2, "init": np.zeros((3, 2))}, "init has 3 centres but n_clusters=2"),
    ({"n_clusters": 2, "init": np.zeros((2, 5))}, r"init has shape \(2, 5\); it must be \(n_clusters, 2\)"),
    ({"n_clusters": 2, "init": np.array([[0, np.nan], [1, 1]])}, "init contains NaN"),
    ({"n_clusters": None}, "n_clusters is required unless init is an array"),
    ({"n_clusters": 2, "max_iter": 0}, "max_iter must be a whole number >= 1"),
    ({"n_clusters": 2, "tol": -1.0}, "tol must be a finite number >= 0"),
    ({"n_clusters": 2, "random_state": "seed"}, "random_state must be None"),
])
def test_validation_messages(kwargs, message):
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match=message):
        kmeans(X, **kwargs)


def test_validation_of_data_is_eager():
    X = np.ones((5, 2))
    X[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN.*impute"):
        kmeans(X, 2)  # raised before next()
    with pytest.raises(ValueError, match="2D array"):
        kmeans(np.arange(5.0), 2)
    with pytest.raises(ValueError, match="n_clusters is required"):
        kmeans(np.ones((4, 2)), None)
    assert len(list(kmeans(np.ones((4, 2)), None, init=np.ones((1, 2))))) == 1


def test_bic_chooses_true_k_on_separated_blobs():
    for seed, k_true in [(0, 3), (1, 4), (2, 6)]:
        X = make_blobs(600, centers=k_true, n_features=2, cluster_std=0.6, center_box=(-20, 20),
                       random_state=seed)[0]
        result = kmeans_bic(X, range(1, 11), n_init=5, random_state=0)
        assert result.n_clusters == k_true
        curve = result.curve
        assert list(curve.columns) == ["n_clusters", "bic", "log_likelihood", "n_parameters", "inertia", "variance"]
        assert list(curve["n_clusters"]) == list(range(1, 11))
        assert curve["bic"].idxmax() == k_true - 1
        assert result.labels.shape == (600,) and result.cluster_centers.shape == (k_true, 2)


def test_bic_formula_by_hand():
    X, _ = make_blobs(120, centers=2, n_features=3, random_state=3)
    result = kmeans_bic(X, [2], n_init=3, random_state=0)
    row = result.curve.iloc[0]
    N, D = X.shape
    sizes = np.bincount(result.labels)
    sse = ((X - result.cluster_centers[result.labels]) ** 2).sum()
    var = sse / (N * D)
    # direct log-likelihood of the hard assignment under the plug-in spherical mixture
    loglik = sum(np.log(sizes[k] / N) - D / 2 * np.log(2 * np.pi * var)
                 - ((X[i] - result.cluster_centers[k]) ** 2).sum() / (2 * var)
                 for i, k in enumerate(result.labels))
    assert row["log_likelihood"] == pytest.approx(loglik, rel=1e-10)
    assert row["n_parameters"] == 2 * (D + 1)
    assert row["bic"] == pytest.approx(loglik - 0.5 * 2 * (D + 1) * np.log(N), rel=1e-10)
    assert row["variance"] == pytest.approx(var)


def test_bic_validation_and_degenerate_k():
    X = np.array([[0.0], [0.0], [1.0], [1.0]])
    result = kmeans_bic(X, range(1, 5), n_init=2, random_state=0)
    assert result.curve["bic"].iloc[1] == -np.inf  # K=2 puts every row on its centre
    assert result.n_clusters == 1
    with pytest.raises(ValueError, match="n_samples=4 should be >= n_clusters=5"):
        kmeans_bic(X, range(1, 6))
    with pytest.raises(ValueError, match="k_range is empty"):
        kmeans_bic(X, [])
    with pytest.raises(ValueError, match="repeated"):
        kmeans_bic(X, [1, 1])
    with pytest.raises(ValueError, match="n_init must be a whole number >= 1"):
        kmeans_bic(X, [1], n_init=0)
