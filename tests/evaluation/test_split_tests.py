"""Tests between clusters on rows the clusters were not formed from (profiles.split_sample_tests)."""
import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP
from mapdp_core.evaluation.profiles import feature_tests, split_sample_tests


def _blob_cut_in_two(n=400, p=6, seed=0):
    """One Gaussian blob (no groups) that a fit is forced to cut in two along f0."""
    X = pd.DataFrame(np.random.default_rng(seed).normal(size=(n, p)), columns=[f"f{i}" for i in range(p)])
    m = MAPDP(N0=1.0, likelihood="normal_gamma", prior=None, init=(X["f0"] > 0).astype(int).to_numpy(), max_iter=1,
              n_init=1, shuffle=False, merge=None).fit(X)
    return X, m


def test_real_groups_are_still_found_on_the_held_out_half():
    rng = np.random.default_rng(1)
    z = np.repeat([0, 1, 2], 80)
    df = pd.DataFrame({"a": rng.normal(6.0 * z, 1.0), "b": rng.normal(-5.0 * z, 1.0), "noise": rng.normal(size=240)})
    m = MAPDP(N0=1.0, likelihood="normal_gamma", prior=None, n_init=2, random_state=0).fit(df)
    out = split_sample_tests(m, df, "normal_gamma", random_state=0)
    full = feature_tests(df, m.labels_, "normal_gamma")
    assert list(out.columns) == list(full.columns)  # feature_tests' table
    p = out.set_index("feature")["p_value"]
    assert p["a"] < 0.01 and p["b"] < 0.01
    assert out.attrs["rows_used"] == 120 and out.attrs["rows_fit"] == 120
    assert out.attrs["clusters_tested"] >= 2 and "120" in out.attrs["message"]
    assert out["n_used"].max() <= 120  # only half B is tested


def test_the_split_removes_the_fit_to_the_tested_rows_but_not_the_selection():
    """Full-data tests on a blob cut in two give p near 1e-90 for the cut feature. The split
    tests cannot reach that (their clusters were not fitted to the rows tested), but they are
    not uniform either: half B is sorted by its own features (Gao, Bien & Witten 2022, Sec. 1),
    which is what the docstring and the page's caption say."""
    X, m = _blob_cut_in_two()
    full = feature_tests(X, m.labels_, "normal_gamma")
    split_min = [split_sample_tests(m, X, "normal_gamma", random_state=s)["p_value"].min() for s in range(3)]
    assert full["p_value"].min() < 1e-50
    assert min(split_min) > 1e-20
    assert full["p_value"].min() < 1e-30 * min(split_min)


def test_one_cluster_on_half_b_and_tiny_tables_give_a_reason_not_an_error():
    X = pd.DataFrame(np.random.default_rng(3).normal(size=(200, 2)), columns=["x", "y"])
    one = MAPDP(N0=1e-8, likelihood="normal_gamma", prior=None, n_init=1, random_state=0).fit(X)
    assert one.n_clusters_ == 1
    out = split_sample_tests(one, X, "normal_gamma")
    assert out.empty and "nothing to test" in out.attrs["message"] and out.attrs["clusters_tested"] == 1
    assert "p_value" in out.columns
    small = X.iloc[:12]
    m = MAPDP(N0=1.0, likelihood="normal_gamma", prior=None, n_init=1, random_state=0).fit(small)
    out = split_sample_tests(m, small, "normal_gamma")
    assert out.empty and "12 rows" in out.attrs["message"]


def test_mixed_table_with_gaps_and_bad_arguments():
    rng = np.random.default_rng(4)
    z = np.repeat([0, 1], 80)
    df = pd.DataFrame({"a": rng.normal(5.0 * z, 1.0), "b": np.where(rng.random(160) < 0.1 + 0.8 * z, "y", "n")})
    df.loc[rng.choice(160, 12, replace=False), "a"] = np.nan
    m = MAPDP(random_state=0).fit(df)
    out = split_sample_tests(m, df, random_state=1)
    assert out.attrs["rows_used"] == 80
    if len(out):
        assert set(out["feature"]) == {"a", "b"}
    with pytest.raises(ValueError, match="fraction"):
        split_sample_tests(m, df, fraction=1.0)
    with pytest.raises(ValueError, match="labels"):
        split_sample_tests(m, df.iloc[:50])
