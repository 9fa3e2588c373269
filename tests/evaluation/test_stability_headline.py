"""A stable headline (issue 41, item 5): the fragile clusters counted, and, when most clusters are
fragile, the coarser partition the data support stably, chosen without labels
(mapdp_core.evaluation.stability.stability_summary, Hennig 2007)."""
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import normalized_mutual_info_score

from mapdp_core import MAPDP
from mapdp_core.evaluation import stability as stab
from mapdp_core.evaluation.stability import (cluster_stability, partition_stability, refit_resamples,
                                             stability_headline, stability_summary)


def _verdicts(*verdicts):
    return pd.DataFrame({"cluster": range(len(verdicts)), "verdict": list(verdicts)})


@pytest.mark.parametrize("verdicts, said", [
    (["stable"] * 5, "5 clusters"),
    (["fragile"] * 4 + ["stable"], "5 clusters, 4 of them fragile (stability below 0.6 under subsampling)"),
    (["fragile"] * 3 + ["uncertain", "stable"],
     "5 clusters, 3 of them fragile (stability below 0.6 under subsampling) and 1 uncertain (stability 0.6 to 0.75)"),
    (["uncertain", "stable", "stable"], "3 clusters, 1 of them uncertain (stability 0.6 to 0.75 under subsampling)"),
    (["fragile", "fragile"], "2 clusters, both fragile (stability below 0.6 under subsampling)"),
    (["stable"], "1 cluster"),
    (["fragile"], "1 cluster, fragile (stability below 0.6 under subsampling)"),
])
def test_the_headline_counts_the_fragile_and_uncertain_clusters(verdicts, said):
    assert stability_headline(_verdicts(*verdicts)) == said


def _blobs(seed=2, n=50):
    """Three well-separated groups (uniform squares, no stray rows), and a prior that expects clusters
    far narrower than they are, so that MAP-DP cuts each group into pieces, differently on each
    subsample."""
    rng = np.random.default_rng(seed)
    z = np.repeat([0, 1, 2], n)
    X = np.array([[0.0, 0.0], [20.0, 0.0], [10.0, 17.0]])[z] + rng.uniform(-1.7, 1.7, (3 * n, 2))
    return X, z


def _narrow(X, variance=0.03):
    return {"m0": X.mean(axis=0), "c0": np.full(2, 1e-3), "a0": np.full(2, 5.0), "b0": np.full(2, 5.0 * variance)}


def test_an_over_split_fit_names_the_three_groups_as_the_stable_partition(monkeypatch):
    X, z = _blobs()
    m = MAPDP(N0=3.0, likelihood="normal_gamma", prior=_narrow(X), n_init=2, random_state=0).fit(X)
    assert m.n_features_in_ == 2  # the groups z are never given to the fit, nor to the rule below
    drawn = []
    monkeypatch.setattr(stab, "refit_resamples", lambda *a, **k: drawn.append(1) or refit_resamples(*a, **k))
    s = stability_summary(m, n_resamples=5, random_state=0)
    assert len(drawn) == 1  # one set of refits scores the fit and every coarser candidate
    assert m.n_clusters_ >= 8 and s.most_fragile and 2 * s.n_fragile > m.n_clusters_
    assert s.headline.startswith(f"{m.n_clusters_} clusters, {s.n_fragile} of them fragile (stability below 0.6")
    alt = s.alternative
    assert alt is not None and alt.K == 3
    assert normalized_mutual_info_score(z, alt.labels) > 0.99
    # each cluster of it unites whole fitted clusters, and the fitted clusters are all used once
    assert sorted(c for group in alt.clusters for c in group) == list(range(m.n_clusters_))
    for j, group in enumerate(alt.clusters):
        assert set(np.unique(alt.labels[np.isin(m.labels_, group)])) == {j}
    assert (alt.stability["stability"] >= 0.75).all() and list(alt.stability["n"]) == list(np.bincount(alt.labels))
    # how it was chosen: the largest K on the merge path whose clusters are all stable
    assert list(s.tried["K"]) == list(range(m.n_clusters_ - 1, 2, -1))
    assert s.tried["all_stable"].tolist() == [False] * (len(s.tried) - 1) + [True]
    evidence = m.k_evidence()
    fitted = float(evidence.loc[evidence["fitted"], "neg_log_joint"].iloc[0])
    joint = float(evidence.loc[evidence["K"] == 3, "neg_log_joint"].iloc[0])
    assert alt.delta == pytest.approx(joint - fitted)
    assert "The data support 3 clusters stably" in s.sentence and "no diagnosis or other label" in s.sentence
    # the table is cluster_stability's, from the same refits
    pd.testing.assert_frame_equal(s.table, cluster_stability(m, n_resamples=5, random_state=0))


def test_stable_clusters_give_the_clusters_alone_and_no_alternative():
    X, z = _blobs(seed=0, n=40)
    m = MAPDP(N0=3.0, likelihood="normal_gamma", prior=None, n_init=2, random_state=0).fit(X)
    s = stability_summary(m, n_resamples=4, random_state=0)
    assert m.n_clusters_ == 3 and s.n_fragile == 0
    assert s.headline == "3 clusters" and s.alternative is None and s.sentence == "" and not s.most_fragile
    assert s.tried.empty


def test_one_group_cut_in_pieces_has_no_stable_coarser_partition():
    X = np.random.default_rng(0).uniform(-2.0, 2.0, (120, 2))
    m = MAPDP(N0=10.0, likelihood="normal_gamma", prior=_narrow(X, 0.1), n_init=2, random_state=0).fit(X)
    s = stability_summary(m, n_resamples=5, random_state=0)
    assert s.most_fragile and s.alternative is None
    assert list(s.tried["K"]) == list(range(m.n_clusters_ - 1, 1, -1)) and not s.tried["all_stable"].any()
    assert "no coarser partition is stable" in s.sentence


def test_a_given_table_and_refits_are_used_as_they_are():
    X, _ = _blobs()
    m = MAPDP(N0=3.0, likelihood="normal_gamma", prior=_narrow(X), n_init=2, random_state=0).fit(X)
    refits = refit_resamples(m, n_resamples=3, random_state=1)
    table = partition_stability(m.labels_, refits)
    s = stability_summary(m, table, refits=refits)
    assert s.table is table and s.headline == stability_headline(table)
    # a partition scored without coarsening is Hennig's comparison with the refits' own clusters
    pd.testing.assert_frame_equal(table, cluster_stability(m, n_resamples=3, random_state=1))
