"""Cluster profiles (PLOS Table 3) and tests between clusters (Table 4) against scipy and by hand."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mapdp_core.evaluation.profiles import bh_adjust, cluster_profiles, feature_kinds, feature_tests


@pytest.fixture
def small():
    df = pd.DataFrame({
        "sex": ["f", "m", "f", "f", "m", "m", None, "m"],
        "smoker": [1, 0, 1, 1, 0, 0, 0, np.nan],
        "score": [0, 1, 2, 3, 3, 2, 1, 0],
        "colour": ["red", "blue", "red", "green", "blue", "blue", "red", None],
        "height": [1.6, 1.7, 1.65, np.nan, 1.8, 1.85, 1.75, 1.9],
        "falls": [0, 2, 1, 0, 3, 4, 2, 5],
    })
    labels = np.array([0, 1, 0, 0, 1, 1, 0, 1])
    lik = {"sex": "bernoulli", "smoker": "bernoulli", "score": "binomial", "colour": "categorical",
           "height": "normal_gamma", "falls": "poisson"}
    return df, labels, lik


def _value(tidy, cluster, feature, statistic):
    row = tidy[(tidy["cluster"] == cluster) & (tidy["feature"] == feature) & (tidy["statistic"] == statistic)]
    assert len(row) == 1
    return row.iloc[0]


def test_kinds_follow_the_likelihood(small):
    df, _, lik = small
    assert feature_kinds(df, lik) == {"sex": "binary", "smoker": "binary", "score": "ordinal",
                                      "colour": "categorical", "height": "real", "falls": "count"}
    assert feature_kinds(df[["height", "colour"]], {("height",): "normal_wishart", "colour": "categorical"}) == \
        {"height": "real", "colour": "categorical"}


def test_summaries_are_exact(small):
    df, labels, lik = small
    p = cluster_profiles(df, labels, lik)
    assert p.sizes["n"].tolist() == [4, 4] and p.sizes["fraction"].tolist() == [0.5, 0.5]
    # binary: share of the "yes" value among observed rows; missing counted apart
    r = _value(p.tidy, 1, "smoker", "proportion")
    assert r["value"] == 0.0 and r["n_observed"] == 3 and r["n_missing"] == 1
    assert _value(p.tidy, 0, "smoker", "proportion")["value"] == 0.75
    assert _value(p.tidy, 0, "sex", "proportion")["value"] == pytest.approx(0.0)  # 'm' is the later level
    # real: mean and sd of the observed values
    h0 = np.array([1.6, 1.65, 1.75])
    assert _value(p.tidy, 0, "height", "mean")["value"] == pytest.approx(h0.mean())
    assert _value(p.tidy, 0, "height", "sd")["value"] == pytest.approx(h0.std(ddof=1))
    # ordinal: mean and the share of each score
    assert _value(p.tidy, 1, "score", "mean")["value"] == pytest.approx(np.mean([1, 3, 2, 0]))
    assert _value(p.tidy, 1, "score", "level:3")["value"] == pytest.approx(0.25)
    # categorical: shares; count: rate
    assert _value(p.tidy, 1, "colour", "level:blue")["value"] == pytest.approx(1.0)
    assert _value(p.tidy, "all", "falls", "rate")["value"] == pytest.approx(df["falls"].mean())
    # the display table: one row per feature, a column per cluster and 'all'
    assert list(p.table.columns) == ["kind", "0", "1", "all"] and list(p.table.index) == list(df.columns)
    assert p.table.loc["smoker", "0"] == "75% (3/4)"
    assert p.table.loc["smoker", "1"] == "0% (0/3) [1 missing]"
    assert p.table.loc["height", "1"].startswith("1.81 ± ")


def test_new_cluster_label_is_a_cluster(small):
    df, labels, lik = small
    p = cluster_profiles(df, np.where(labels == 1, -1, labels), lik)
    assert p.sizes["cluster"].tolist() == [-1, 0]


def test_bad_input_messages(small):
    df, labels, lik = small
    with pytest.raises(ValueError, match="one cluster label per row"):
        cluster_profiles(df, labels[:-1], lik)
    with pytest.raises(ValueError, match="empty"):
        cluster_profiles(pd.DataFrame(), [], None)
    with pytest.raises(ValueError, match="at least two"):
        feature_tests(df, np.zeros(len(df)), lik)
    with pytest.raises(ValueError, match="method"):
        feature_tests(df, labels, lik, method="magic")


@pytest.mark.parametrize("seed", range(20))
def test_bh_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 1, rng.integers(1, 40)) ** rng.uniform(0.5, 4)
    assert np.allclose(bh_adjust(p), stats.false_discovery_control(p, method="bh"))
    with_nan = np.append(p, np.nan)
    q = bh_adjust(with_nan)
    assert np.isnan(q[-1]) and np.allclose(q[:-1], stats.false_discovery_control(p, method="bh"))


def test_each_test_matches_scipy():
    rng = np.random.default_rng(0)
    n = 90
    labels = np.repeat([0, 1, 2], 30)
    df = pd.DataFrame({"real": rng.normal(labels * 0.5, 1.0), "score": rng.integers(0, 5, n),
                       "cat": rng.choice(list("abc"), n)})
    lik = {"real": "normal_gamma", "score": "binomial", "cat": "categorical"}
    res = feature_tests(df, labels, lik).set_index("feature")
    groups = [df["real"][labels == k] for k in range(3)]
    assert res.loc["real", "test"] == "Welch ANOVA"
    assert res.loc["real", "p_value"] == pytest.approx(stats.f_oneway(*groups, equal_var=False).pvalue)
    sg = [df["score"][labels == k] for k in range(3)]
    assert res.loc["score", "p_value"] == pytest.approx(stats.kruskal(*sg).pvalue)
    chi = stats.chi2_contingency(pd.crosstab(labels, df["cat"]).to_numpy(), correction=False)
    assert res.loc["cat", "p_value"] == pytest.approx(chi.pvalue)
    assert res.loc["cat", "effect"] == "Cramér's V"
    # two clusters: Welch t, Mann-Whitney, Fisher for a small 2x2 table
    two = labels[:60] // 1
    sub = df.iloc[:60].assign(flag=[1] * 3 + [0] * 27 + [0] * 28 + [1] * 2)
    lik2 = {**lik, "flag": "bernoulli"}
    r2 = feature_tests(sub, two, lik2).set_index("feature")
    a, b = sub["real"][two == 0], sub["real"][two == 1]
    assert r2.loc["real", "p_value"] == pytest.approx(stats.ttest_ind(a, b, equal_var=False).pvalue)
    assert r2.loc["score", "test"] == "Mann-Whitney U"
    assert r2.loc["score", "p_value"] == pytest.approx(
        stats.mannwhitneyu(sub["score"][two == 0], sub["score"][two == 1]).pvalue)
    assert r2.loc["flag", "test"] == "Fisher exact"
    assert r2.loc["flag", "p_value"] == pytest.approx(
        stats.fisher_exact(pd.crosstab(two, sub["flag"]).to_numpy())[1])
    r3 = feature_tests(sub, two, lik2, method="rank").set_index("feature")
    assert r3.loc["real", "test"] == "Mann-Whitney U"


def test_untestable_features_are_noted_and_ranked_last():
    labels = np.array([0, 0, 0, 1, 1, 1])
    df = pd.DataFrame({"const": [1.0] * 6, "good": [0.0, 0.1, 0.2, 5.0, 5.1, 5.2],
                       "only_one_cluster": [1.0, 2.0, 3.0, np.nan, np.nan, np.nan]})
    res = feature_tests(df, labels, "normal_gamma")
    assert res["feature"].tolist()[0] == "good"
    bad = res.set_index("feature").loc[["const", "only_one_cluster"]]
    assert bad["p_value"].isna().all() and (bad["note"] != "").all()
    assert set(bad["rank"]) == {2, 3}


def test_separating_features_rank_above_noise():
    rng = np.random.default_rng(3)
    labels = np.repeat([0, 1, 2], 60)
    df = pd.DataFrame({"noise_real": rng.normal(size=180), "noise_cat": rng.choice(list("xyz"), 180),
                       "signal_real": rng.normal(labels * 1.5, 1.0),
                       "signal_bin": (rng.random(180) < np.array([0.1, 0.5, 0.9])[labels]).astype(int)})
    lik = {"noise_real": "normal_gamma", "noise_cat": "categorical", "signal_real": "normal_gamma",
           "signal_bin": "bernoulli"}
    res = feature_tests(df, labels, lik)
    assert set(res["feature"][:2]) == {"signal_real", "signal_bin"}
    assert res.set_index("feature").loc[["signal_real", "signal_bin"], "significant"].all()


def test_hepatitis_with_gaps_end_to_end():
    from mapdp_core.data.datasets import load_dataset
    X, y, spec = load_dataset("hepatitis")
    p = cluster_profiles(X, y.to_numpy(), spec)
    assert p.sizes["n"].sum() == len(X) == 155
    miss = p.tidy[(p.tidy["cluster"] == "all")].groupby("feature")["n_missing"].first()
    assert (miss.reindex(X.columns) == X.isna().sum()).all()
    res = feature_tests(X, y.to_numpy(), spec)
    assert len(res) == X.shape[1] and res["p_value"].notna().all()
    assert res["q_value"].min() < 0.05


def test_tidy_table_names_the_level_each_share_counts(small):
    """Issue 27: "M: 51 %" on screen was `0,sex,binary,proportion,0.506` in the CSV, with no M."""
    df, labels, lik = small
    tidy = cluster_profiles(df, labels, lik).tidy
    assert list(tidy.columns) == ["cluster", "feature", "kind", "statistic", "level", "value", "n_observed",
                                  "n_missing"]
    sex = _value(tidy, 1, "sex", "proportion")
    assert sex["level"] == "m" and sex["value"] == pytest.approx(1.0)
    assert _value(tidy, 0, "smoker", "proportion")["level"] == "1"  # 0/1 data: the share of 1s
    assert _value(tidy, 1, "colour", "level:blue")["level"] == "blue"
    assert _value(tidy, 1, "score", "level:3")["level"] == "3"
    assert _value(tidy, 0, "height", "mean")["level"] == ""
    # the display table and the file say the same level
    assert cluster_profiles(df, labels, lik).table.loc["sex", "1"].startswith("m: ")
