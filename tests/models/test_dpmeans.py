"""DP-means baseline: a slow reference, monotone objective, extremes of lambda, the lambda search."""
import math

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from mapdp_core.models.dpmeans import DPMeans, LambdaSearch, dp_means, dpmeans_lambda_for_k
from mapdp_core.core.state import SweepState
from naive import naive_dp_means


@pytest.fixture
def blobs():
    X, y = make_blobs(400, centers=4, n_features=2, cluster_std=0.7, center_box=(-15, 15), random_state=0)
    return X, y


def test_matches_naive_reference(blobs):
    X, _ = blobs
    rng = np.random.default_rng(0)
    for lam, order in [(20.0, None), (5.0, rng.permutation(len(X))), (60.0, rng.permutation(len(X)))]:
        states = list(dp_means(X, lam, order=order, tol=0.0))
        ref = naive_dp_means(X, lam, np.arange(len(X)) if order is None else order)
        assert len(states) == len(ref)
        for s, z in zip(states, ref):
            np.testing.assert_array_equal(s.labels, z)


def test_states_and_objective_non_increasing(blobs):
    X, _ = blobs
    for lam in (0.5, 3.0, 30.0):
        states = list(dp_means(X, lam, order=np.random.default_rng(1).permutation(len(X)), tol=0.0))
        objectives = np.array([s.objective for s in states])
        assert np.all(np.diff(objectives) <= 1e-9 * objectives[0])
        initial = ((X - X.mean(axis=0)) ** 2).sum() + lam  # one cluster at the global mean
        assert objectives[0] <= initial
        for s in states:
            assert isinstance(s, SweepState) and s.algorithm == "DP-means"
            assert math.isnan(s.neg_log_joint)
            centres = s.summaries["mean"]
            assert centres.shape == (s.n_clusters, 2)
            assert s.objective == pytest.approx(((X - centres[s.labels]) ** 2).sum() + lam * s.n_clusters)
            assert (s.cluster_sizes > 0).all() and s.cluster_sizes.sum() == len(X)
            np.testing.assert_array_equal(np.unique(s.labels), np.arange(s.n_clusters))
        assert states[-1].converged


def test_huge_lambda_gives_one_cluster(blobs):
    X, _ = blobs
    model = DPMeans(lam=1e12).fit(X)
    assert model.n_clusters_ == 1
    np.testing.assert_allclose(model.cluster_centers_[0], X.mean(axis=0))
    assert model.n_iter_ == 1


def test_tiny_lambda_gives_many_clusters(blobs):
    X, _ = blobs
    model = DPMeans(lam=1e-6).fit(X)
    assert model.n_clusters_ == len(np.unique(X, axis=0)) == len(X)
    assert model.objective_history_[-1] == pytest.approx(1e-6 * len(X))


def test_estimator_recovers_blobs_and_predicts(blobs):
    X, y = blobs
    model = DPMeans(lam=20.0).fit(X)
    assert model.n_clusters_ == 4
    assert adjusted_rand_score(y, model.labels_) == 1.0
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    np.testing.assert_array_equal(DPMeans(lam=20.0).fit_predict(X), model.labels_)
    assert len(model.objective_history_) == model.n_iter_
    assert model.objective_ == model.objective_history_[-1]
    shuffled = DPMeans(lam=20.0, shuffle=True, random_state=3).fit(X)
    assert adjusted_rand_score(y, shuffled.labels_) == 1.0


def test_lambda_search_reaches_target_on_blobs(blobs):
    X, _ = blobs
    for target in (1, 2, 3, 4, 6):
        result = dpmeans_lambda_for_k(X, target)
        assert isinstance(result, LambdaSearch)
        assert result.reached and result.n_clusters == target
        assert DPMeans(lam=result.lam).fit(X).n_clusters_ == target
        assert result.history[-1] == (result.lam, target)
    # the first step is the mid-point of [0, M^2] (EJS Appendix D)
    m2 = ((X.max(axis=0) - X.min(axis=0)) ** 2).sum()
    assert dpmeans_lambda_for_k(X, 4).history[0][0] == pytest.approx(m2 / 2)


def test_lambda_search_unreachable_target_reports_closest():
    X = np.array([[0.0], [0.0], [0.0], [1.0]])  # two distinct rows: K=3 cannot be reached
    result = dpmeans_lambda_for_k(X, 3)
    assert not result.reached
    assert result.n_clusters == 2
    assert result.n_steps == len(result.history) <= 60


@pytest.mark.parametrize("call,message", [
    (lambda X: dp_means(X, -1.0), "lam .* must be a finite number >= 0.*dpmeans_lambda_for_k"),
    (lambda X: dp_means(X, float("nan")), "lam .* must be a finite number >= 0"),
    (lambda X: dp_means(X, "big"), "lam .* must be a finite number >= 0"),
    (lambda X: dp_means(X, 1.0, max_iter=0), "max_iter must be a whole number >= 1"),
    (lambda X: dp_means(X, 1.0, tol=-1), "tol must be a finite number >= 0"),
    (lambda X: dp_means(X, 1.0, order=[0, 1]), "order must be a permutation of 0..9"),
    (lambda X: dp_means(X, 1.0, order=[0] * 10), "order must be a permutation"),
    (lambda X: dpmeans_lambda_for_k(X, 0), "target_k must be a whole number >= 1"),
    (lambda X: dpmeans_lambda_for_k(X, 11), "target_k=11 is more than the 10 rows"),
    (lambda X: dpmeans_lambda_for_k(X, 2, max_steps=0), "max_steps must be a whole number >= 1"),
    (lambda X: DPMeans(lam=-2).fit(X), "lam .* must be a finite number >= 0"),
    (lambda X: DPMeans(max_iter=1.5).fit(X), "max_iter must be a whole number >= 1"),
])
def test_validation_messages(call, message):
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match=message):
        call(X)


def test_data_validation_is_eager():
    X = np.zeros((4, 2))
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity.*impute"):
        dp_means(X, 1.0)  # before next()
    with pytest.raises(ValueError, match="needs numeric columns"):
        dp_means(np.array([["a", "b"], ["c", "d"]], dtype=object), 1.0)
