"""Grouping MAP-DP's components into clusters (engine/merging.py, MAPDP(merge=...)): the DEMP
misclassification probabilities against a row-by-row reference, the merge rule, and the
estimator's attributes and prediction with merged components."""
import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP
from mapdp_core.core.spec import parse
from mapdp_core.engine.merging import MERGE_CUTOFF, _confusion, merge_components, posterior_weights
from mapdp_core.engine.model_data import ModelData


def test_confusion_is_hennigs_demp_row_by_row():
    rng = np.random.default_rng(0)
    tau = rng.dirichlet(np.ones(4), 60)
    p = _confusion(tau)
    for i in range(4):
        for j in range(4):
            if i == j:
                continue
            given = sum(tau[x, j] for x in range(60) if tau[x, i] > tau[x, j])  # rows of j the MAP rule gives i
            assert p[i, j] == pytest.approx(given / tau[:, j].sum(), rel=1e-12)


def test_posterior_weights_are_mapdps_predictive_weights():
    rng = np.random.default_rng(1)
    X = np.concatenate([rng.normal(0, 1, 40), rng.normal(5, 1, 40)])[:, None]
    parsed = parse(X, "normal_gamma")
    labels = (X[:, 0] > 2.5).astype(np.int64)
    tau = posterior_weights(parsed, labels)
    model = ModelData(parsed)
    model.start(labels)
    nlp, _ = model.score_rows(X, 2)
    w = np.log(model.cnt[:2]) - nlp
    want = np.exp(w - w.max(axis=1, keepdims=True))
    assert np.allclose(tau, want / want.sum(axis=1, keepdims=True), rtol=1e-12)


def _blob_and_group(seed=2):
    rng = np.random.default_rng(seed)
    blob = rng.normal(0.0, 1.0, (150, 2))
    far = rng.normal(12.0, 1.0, (80, 2))
    return np.vstack([blob, far])


def test_components_cut_from_one_group_merge_and_separate_groups_do_not():
    X = _blob_and_group()
    parsed = parse(X, "normal_wishart")
    labels = np.r_[(X[:150, 0] > 0).astype(np.int64), np.full(80, 2)]  # the blob cut in two, the far group
    cluster_of, merges = merge_components(parsed, labels, MERGE_CUTOFF)
    assert cluster_of.tolist() == [0, 0, 1]
    assert len(merges) == 1 and merges["misclassification"].iloc[0] >= MERGE_CUTOFF
    assert merge_components(parsed, labels, MERGE_CUTOFF, min_clusters=3)[0].tolist() == [0, 1, 2]
    assert merge_components(parsed, labels, 0.999)[0].tolist() == [0, 1, 2]  # nothing that overlaps so much


def test_mapdp_groups_components_and_predicts_clusters():
    X = _blob_and_group(3)
    init = np.r_[(X[:150, 0] > 0).astype(int), np.full(80, 2)]
    kept = MAPDP(N0=1.0, likelihood="normal_wishart", prior=None, init=init, max_iter=1, n_init=1,
                 shuffle=False, merge=None).fit(X)
    grouped = MAPDP(N0=1.0, likelihood="normal_wishart", prior=None, init=init, max_iter=1, n_init=1,
                    shuffle=False, merge=0.05).fit(X)
    assert np.array_equal(kept.labels_, kept.component_labels_) and kept.merges_.empty
    assert np.array_equal(grouped.component_labels_, kept.labels_)
    assert grouped.n_components_ == kept.n_clusters_
    assert grouped.n_components_ == 3  # one sweep from the cut keeps the two halves of the blob
    assert grouped.n_clusters_ == 2 and grouped.cluster_of_component_.tolist() == [0, 0, 1]
    assert np.array_equal(grouped.labels_, grouped.cluster_of_component_[grouped.component_labels_])
    assert grouped.cluster_sizes_.tolist() == np.bincount(grouped.labels_).tolist()
    proba = grouped.predict_proba(X)
    assert proba.shape == (len(X), grouped.n_clusters_ + 1) and np.allclose(proba.sum(axis=1), 1.0)
    components = kept.predict_proba(X)
    summed = np.zeros_like(proba)
    for c, k in enumerate(grouped.cluster_of_component_):
        summed[:, k] += components[:, c]
    summed[:, -1] = components[:, -1]
    assert np.allclose(proba, summed)
    assert np.array_equal(grouped.predict(X), np.argmax(proba, axis=1))
    assert np.allclose(grouped.score_samples(X), kept.score_samples(X))  # the density is the components'
    assert grouped.neg_log_joint_ == kept.neg_log_joint_


def test_merge_auto_applies_to_the_automatic_search_only_and_bad_values_are_said():
    X = pd.DataFrame(_blob_and_group(4), columns=["a", "b"])
    explicit = MAPDP(N0=1.0, likelihood="normal_wishart", prior=None, random_state=0).fit(X)
    assert explicit.merge_cutoff_ is None and np.array_equal(explicit.labels_, explicit.component_labels_)
    automatic = MAPDP(random_state=0).fit(X)
    assert automatic.merge_cutoff_ == MERGE_CUTOFF
    for bad in ("yes", 0.0, 1.5, -1):
        with pytest.raises(ValueError, match="merge="):
            MAPDP(merge=bad).fit(X)


def test_posterior_weights_are_the_normalised_predictive_weights():
    """tau, as normalised here (each row's largest log weight taken out), equals
    exp(logw - logsumexp(logw)) to rounding, rows sum to 1, and rows far from every component
    (weights that underflow in linear scale) still get a distribution."""
    from scipy.special import logsumexp

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (200, 2)), rng.normal(6, 1, (200, 2)), [[1e6, -1e6]]])
    parsed = parse(X, "normal_wishart", None)
    labels = np.r_[np.zeros(200, int), np.ones(200, int), [1]]
    tau = posterior_weights(parsed, labels)
    model = ModelData(parsed)
    K = model.start(labels.astype(np.int64))
    nlp, _ = model.score_rows(parsed.X, K)
    logw = np.log(model.cnt[:K])[None, :] - nlp
    np.testing.assert_allclose(tau, np.exp(logw - logsumexp(logw, axis=1, keepdims=True)), rtol=0, atol=1e-12)
    np.testing.assert_allclose(tau.sum(axis=1), 1.0, rtol=1e-12)
    assert np.isfinite(tau).all() and tau[-1].max() == 1.0


def test_on_a_large_table_the_overlaps_are_measured_on_a_sample_of_rows(monkeypatch):
    from mapdp_core.engine import merging

    assert merging.sample_rows(merging.MERGE_ROWS, 0) is None  # not above the limit: every row
    rows = merging.sample_rows(1000, 3, most=200)
    assert len(rows) == 200 and np.all(np.diff(rows) > 0) and rows.max() < 1000
    assert np.array_equal(rows, merging.sample_rows(1000, 3, most=200))  # the seed fixes it
    X = _blob_and_group(4)
    parsed = parse(X, "normal_wishart")
    labels = np.r_[(X[:150, 0] > 0).astype(np.int64), np.full(80, 2)]
    rows = merging.sample_rows(len(X), 0, most=120)
    sampled = posterior_weights(parsed, labels, rows=rows)
    assert np.allclose(sampled, posterior_weights(parsed, labels)[rows], rtol=1e-12)  # the full statistics
    assert merge_components(parsed, labels, MERGE_CUTOFF, rows=rows)[0].tolist() == [0, 0, 1]
    seen = []
    real = merging.merge_components
    monkeypatch.setattr(merging, "MERGE_ROWS", 150)
    monkeypatch.setattr(merging, "merge_components", lambda *a, **k: seen.append(k.get("rows")) or real(*a, **k))
    init = np.r_[(X[:150, 0] > 0).astype(int), np.full(80, 2)]
    MAPDP(N0=1.0, likelihood="normal_wishart", init=init, n_init=1, max_iter=1, merge=0.05, random_state=0).fit(X)
    assert seen and seen[0] is not None and len(seen[0]) == 150  # the estimator passes a sample above the limit
