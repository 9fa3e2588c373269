"""How sure K is (engine/k_evidence.py): the joints of the merge and split path against a
slow reference (every partition reloaded from scratch), the merge rule against every pair,
and the words."""
import itertools

import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP, k_sentence
from mapdp_core.core.spec import parse
from mapdp_core.engine.k_evidence import k_evidence, odds_words
from mapdp_core.engine.model_data import ModelData


def _reference_joint(parsed, labels, n0):
    """-ln p(X, z) of a partition by loading it into fresh statistics over every row."""
    model = ModelData(parsed)
    K = model.start(np.asarray(labels, dtype=np.int64))
    return model.neg_log_joint(K, n0)


def _mixed(seed=0, n=240):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 3, n)
    X = pd.DataFrame({"a": rng.normal(4.0 * z, 1.0), "b": rng.normal(-3.0 * z, 1.5),
                      "flag": (rng.random(n) < np.array([0.1, 0.5, 0.9])[z]).astype(float),
                      "kind": rng.integers(0, 3, n).astype(float)})
    X.loc[rng.random(n) < 0.1, "a"] = np.nan
    X.loc[rng.random(n) < 0.1, "flag"] = np.nan
    return X, {"a": "normal_gamma", "b": "normal_gamma", "flag": "bernoulli", "kind": "categorical"}


@pytest.mark.parametrize("case", ["mixed-with-gaps", "normal-wishart"])
def test_every_partition_joint_is_the_exact_joint_recomputed_from_scratch(case):
    if case == "mixed-with-gaps":
        X, likelihood = _mixed()
    else:
        rng = np.random.default_rng(1)
        X = np.vstack([rng.multivariate_normal(m, [[1, 0.6], [0.6, 1]], 80) for m in ((0, 0), (5, 1), (1, 6))])
        likelihood = "normal_wishart"
    m = MAPDP(N0=1.0, likelihood=likelihood, prior=None, random_state=0).fit(X)
    table = k_evidence(m._parsed, m.labels_, m.N0_)
    fitted = table.loc[table["fitted"]]
    assert len(fitted) == 1 and int(fitted["K"].iloc[0]) == m.n_clusters_
    assert fitted["neg_log_joint"].iloc[0] == pytest.approx(m.neg_log_joint_, rel=1e-10)
    assert list(table["K"]) == sorted(table["K"]) and table["K"].iloc[0] == 1
    for row in table.itertuples():
        labels = table.attrs["partitions"][row.K]
        assert labels.max() + 1 == row.K and len(labels) == len(m.labels_)
        assert row.neg_log_joint == pytest.approx(_reference_joint(m._parsed, labels, m.N0_), rel=1e-9)
        assert row.delta == pytest.approx(row.neg_log_joint - m.neg_log_joint_, abs=1e-6)


def test_the_first_merge_is_the_best_of_every_pair():
    X, likelihood = _mixed(seed=3)
    parsed = parse(X, likelihood)
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 5, len(X))  # any partition will do: five arbitrary clusters
    table = k_evidence(parsed, labels, 1.0, more=0)
    best = min(_reference_joint(parsed, np.where(labels == b, a, labels) - (np.where(labels == b, a, labels) > b), 1.0)
               for a, b in itertools.combinations(range(5), 2))
    assert table.loc[table["K"] == 4, "neg_log_joint"].iloc[0] == pytest.approx(best, rel=1e-9)
    assert table["K"].max() == 5  # more=0: no split


def test_clear_groups_make_k_sure_and_a_needless_split_is_said():
    rng = np.random.default_rng(2)
    X = np.concatenate([rng.normal(0, 1, 150), rng.normal(12, 1, 150)])[:, None]
    m = MAPDP(random_state=0).fit(X)
    table = m.k_evidence()
    assert m.n_clusters_ == 2
    assert table.loc[table["K"] == 1, "delta"].iloc[0] > 50  # one cluster: far less probable
    assert (table.loc[~table["fitted"], "delta"] > 0).all()
    words = k_sentence(table)
    assert words.startswith("K = 2 components.") and "with K = 1" in words
    assert k_sentence(m.k_evidence(of="clusters")).startswith(f"K = {m.n_clusters_} clusters.") and "far less probable" in words
    # a fit forced to stop with one group cut in two: merging them back is more probable, and said
    blob = rng.normal(0, 1, 200)[:, None]
    forced = MAPDP(N0=0.01, likelihood="normal_gamma", prior=None, init=(blob[:, 0] > 0).astype(int), max_iter=1,
                   n_init=1).fit(blob)
    if forced.n_clusters_ == 2:
        t = forced.k_evidence()
        assert t.loc[t["K"] == 1, "delta"].iloc[0] < 0
        assert "local optimum" in k_sentence(t)


def test_k_evidence_is_kept_per_fit_and_returned_as_a_copy():
    X, likelihood = _mixed(seed=4, n=120)
    m = MAPDP(N0=1.0, likelihood=likelihood, prior=None, random_state=0).fit(X)
    first = m.k_evidence()
    first.loc[0, "delta"] = 1e9
    first.attrs["partitions"][1][:] = 7
    again = m.k_evidence()
    assert again["delta"].iloc[0] != 1e9 and (again.attrs["partitions"][1] == 0).all()
    assert len(m.k_evidence(more=0)) == len(again) - min(2, len(again) - m.n_clusters_)
    m.fit(X[:60])
    assert m.k_evidence().attrs["partitions"][1].shape == (60,)
    with pytest.raises(ValueError):
        m.k_evidence(more=-1)


@pytest.mark.parametrize("delta, words", [(0.2, "about as probable"), (1.5, "somewhat less probable"),
                                          (4.0, "much less probable"), (40.0, "far less probable")])
def test_odds_in_words_follow_kass_and_raftery(delta, words):
    assert odds_words(delta) == words


def test_outlier_sentence_counts_the_clusters_of_one_or_two_rows():
    from mapdp_core.engine.k_evidence import outlier_sentence

    said = outlier_sentence([88, 47, 4, 4, 2, 2, 1, 1, 1])
    assert said.startswith("5 of the 9 clusters hold one or two rows (7 rows in all)")
    assert said.endswith("4 clusters hold 3 rows or more.")
    assert outlier_sentence([1, 300]).startswith("1 of the 2 clusters holds one or two rows (1 row in all)")
    assert "1 cluster holds 3 rows" in outlier_sentence([1, 300])
    assert outlier_sentence([50, 40, 3]) == ""  # none so small
    assert outlier_sentence([1, 2, 1]) == ""  # every cluster is: nothing to set apart
