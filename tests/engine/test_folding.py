"""Small clusters read as part of a large one (engine/merging.fold_small_clusters,
MAPDP(min_cluster_size=...)): the large cluster chosen and the rise of the joint against the
slow whole-partition reference, the far-outlier and never-one-cluster rules, and the
estimator's attributes, predictions and defaults."""
import math

import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP
from mapdp_core.core.spec import parse
from mapdp_core.engine.merging import (FAR_OUTLIER_NATS, auto_min_cluster_size, fold_small_clusters,
                                       group_components)
from mapdp_core.engine.partition_prior import MixtureOfFiniteMixtures
from naive import naive_neg_log_joint
from test_exactness import MIXED_SPEC, mixed_data


def _mixed(seed):
    """Mixed columns with gaps (every family of MIXED_SPEC, the NW block without gaps), three
    large groups and four small ones of 1-2 rows cut from them."""
    X = mixed_data(seed, n=90)
    likelihood = {tuple(c) if len(c) > 1 else c[0]: f for f, c, _ in MIXED_SPEC}
    prior = {tuple(c) if len(c) > 1 else c[0]: p for _, c, p in MIXED_SPEC}
    parsed = parse(X, likelihood, prior)
    labels = np.arange(90) % 3
    labels[[4, 50]] = 3
    labels[7] = 4
    labels[[11, 12]] = 5
    labels[80] = 6
    return X, parsed, labels


@pytest.mark.parametrize("seed", [21, 22])
def test_each_small_cluster_goes_where_the_whole_partition_joint_is_best(seed):
    X, parsed, labels = _mixed(seed)
    N0 = 1.5
    cluster_of, folds = fold_small_clusters(parsed, labels, 3, N0)
    base = naive_neg_log_joint(X, labels, N0, MIXED_SPEC)
    assert sorted(folds["folded"]) == [3, 4, 5, 6]
    for s in (3, 4, 5, 6):
        joints = {b: naive_neg_log_joint(X, np.where(labels == s, b, labels), N0, MIXED_SPEC) for b in (0, 1, 2)}
        best = min(joints, key=joints.get)
        row = folds[folds["folded"] == s].iloc[0]
        assert row["into"] == best and cluster_of[s] == cluster_of[best]
        # the rise reported is the joint's change without the CRP's ln N0 for one cluster fewer
        assert row["nats"] + math.log(N0) == pytest.approx(joints[best] - base, rel=1e-9, abs=1e-8)
        assert row["rows"] == int((labels == s).sum())
    assert cluster_of.tolist() == [0, 1, 2] + cluster_of[3:].tolist() and cluster_of.max() == 2


def test_under_the_mfm_the_rise_is_that_priors_joint():
    X, parsed, labels = _mixed(23)
    mfm = MixtureOfFiniteMixtures()
    from mapdp_core.engine.model_data import ModelData

    def joint(z):
        model = ModelData(parsed)
        K = model.start(np.unique(z, return_inverse=True)[1].astype(np.int64))
        return model.neg_log_joint(K, mfm)

    _, folds = fold_small_clusters(parsed, labels, 3, mfm)
    base = joint(labels)
    for row in folds.itertuples():
        merged = joint(np.where(labels == row.folded, row.into, labels))
        others = [joint(np.where(labels == row.folded, b, labels)) for b in (0, 1, 2)]
        assert merged == pytest.approx(min(others), rel=1e-12)
        # the same rise up to the prior's part for one cluster fewer, common to every target
        k_part = merged - base - row.nats
        assert all(joint(np.where(labels == r.folded, r.into, labels)) - base - r.nats
                   == pytest.approx(k_part, abs=1e-7) for r in folds.itertuples())


def test_far_outliers_stay_apart_and_the_fit_never_becomes_one_cluster():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, 60), rng.normal(8, 1, 60), [0.5], [400.0, 401.0]][:, None]
    parsed = parse(X, "normal_gamma", {"m0": 4.0, "c0": 0.05, "a0": 3.0, "b0": 2.0})
    labels = np.r_[np.zeros(60), np.ones(60), [2], [3, 3]].astype(np.int64)
    cluster_of, folds = fold_small_clusters(parsed, labels, 3, 1.0)
    assert folds["folded"].tolist() == [2] and cluster_of.tolist() == [0, 1, 0, 2]  # the far pair stays
    assert (folds["nats"] <= FAR_OUTLIER_NATS * folds["rows"]).all()
    # one large cluster and small ones: the largest small one stays, so two clusters remain
    few = np.r_[np.zeros(118), [1, 1], [2]].astype(np.int64)
    cluster_of, _ = fold_small_clusters(parse(X[:121], "normal_gamma"), few, 3, 1.0, min_clusters=2)
    assert cluster_of.max() == 1 and cluster_of[1] == 1


def test_group_components_reports_merges_and_folds_in_order():
    X, parsed, labels = _mixed(21)
    cluster_of, table = group_components(parsed, labels, None, 3, 1.5)
    assert list(table.columns) == ["step", "rule", "merged", "misclassification", "nats", "clusters"]
    assert (table["rule"] == "small cluster").all() and table["step"].tolist() == list(range(1, len(table) + 1))
    assert table["clusters"].tolist() == list(range(6, 6 - len(table), -1))
    assert table["misclassification"].isna().all() and (table["nats"].notna()).all()
    first = [np.flatnonzero(cluster_of == c)[0] for c in range(cluster_of.max() + 1)]
    assert first == sorted(first)  # numbered by each cluster's first component
    same, none = group_components(parsed, labels, None, None, 1.5)
    assert same.tolist() == list(range(7)) and none.empty


def test_auto_size_is_one_percent_of_the_rows_and_at_least_three():
    assert [auto_min_cluster_size(n) for n in (10, 300, 301, 4000, 100_000)] == [3, 3, 4, 40, 1000]


def _outlying_table(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal([0, 0], 1.0, (150, 2))
    b = rng.normal([7, 0], 1.0, (150, 2))
    odd = np.array([[3.5, 6.0], [3.6, 6.3], [-4.0, -5.0]])  # a few rows far from both groups
    return pd.DataFrame(np.vstack([a, b, odd]), columns=["x", "y"])


def test_mapdp_folds_under_automatic_settings_and_keeps_the_components():
    X = _outlying_table()
    auto = MAPDP(random_state=0).fit(X)
    none = MAPDP(random_state=0, min_cluster_size=None).fit(X)
    assert auto.min_cluster_size_ == 4 and none.min_cluster_size_ is None
    assert np.array_equal(auto.component_labels_, none.component_labels_)
    assert auto.n_components_ > 2, "the rows far out open components of their own"
    assert (auto.cluster_sizes_ >= 4).all() and auto.n_clusters_ < none.n_clusters_
    assert set(auto.merges_["rule"]) >= {"small cluster"}
    assert np.array_equal(auto.labels_, auto.cluster_of_component_[auto.component_labels_])
    assert len(auto.labels_) == len(X) and auto.neg_log_joint_ == none.neg_log_joint_
    proba = auto.predict_proba(X)
    assert proba.shape == (len(X), auto.n_clusters_ + 1) and np.allclose(proba.sum(axis=1), 1.0)
    assert np.allclose(auto.score_samples(X), none.score_samples(X))  # the density is the components'
    explicit = MAPDP(N0=1.0, likelihood="normal_wishart", prior=None, random_state=0).fit(X)
    assert explicit.min_cluster_size_ is None  # explicit settings: the paper's partition
    three = MAPDP(random_state=0, min_cluster_size=2).fit(X)
    assert three.min_cluster_size_ == 2 and (three.cluster_sizes_ >= 2).all()


@pytest.mark.parametrize("bad", ["yes", 0, -3, 2.5])
def test_a_bad_min_cluster_size_is_said(bad):
    with pytest.raises(ValueError, match="min_cluster_size"):
        MAPDP(min_cluster_size=bad).fit(_outlying_table())


def test_the_grouping_is_said_in_words():
    from mapdp_core import grouping_sentence

    X, parsed, labels = _mixed(21)
    cluster_of, table = group_components(parsed, labels, None, 3, 1.5)
    said = grouping_sentence(cluster_of, table, None, 3)
    assert said.startswith("MAP-DP found 7 components; ") and "so there are 3 clusters" in said
    assert "4 small groups (fewer than 3 rows each" in said and "Hennig" not in said
    for k in range(3):
        members = np.flatnonzero(cluster_of == k)
        plural = "s" if len(members) > 1 else ""
        assert f"cluster {k} = component{plural} {', '.join(map(str, members))}" in said
    overlap = pd.DataFrame([{"step": 1, "rule": "overlap", "merged": "0 with 1", "misclassification": 0.2,
                             "nats": np.nan, "clusters": 1}])
    said = grouping_sentence(np.array([0, 0]), overlap, 0.05, None)
    assert "at least 5 % of the time form one cluster (Hennig 2010)" in said and "small" not in said
    assert grouping_sentence(np.arange(3), table.iloc[:0], None, None) == ""
