"""Cluster-wise stability under subsampling (mapdp_core.evaluation.stability, Hennig 2007)."""
import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP
from mapdp_core.evaluation.stability import cluster_stability


def _fit(X):
    return MAPDP(N0=1.0, likelihood="normal_gamma", prior=None, n_init=3, random_state=0).fit(X)


def test_separated_clusters_are_stable_and_a_handful_of_stray_rows_is_not():
    rng = np.random.default_rng(0)
    z = np.repeat([0, 1, 2], [150, 150, 6])
    centres = np.array([[0.0, 0.0], [12.0, 0.0], [6.0, 3.0]])
    X = centres[z] + rng.normal(0.0, 1.0, (z.size, 2))
    m = _fit(X)
    s = cluster_stability(m, n_resamples=10, random_state=1)
    assert list(s["cluster"]) == list(range(m.n_clusters_)) and s["n"].sum() == len(X)
    big = s[s["n"] >= 100]
    assert len(big) == 2 and (big["stability"] > 0.9).all() and (big["verdict"] == "stable").all()
    assert ((s["stability"] >= 0) & (s["stability"] <= 1)).all()
    assert set(s["verdict"]) <= {"stable", "uncertain", "fragile", "not resampled"}


def test_one_blob_split_in_two_is_fragile():
    X = np.random.default_rng(2).normal(size=(200, 2))
    m = _fit(X)
    forced = MAPDP(N0=1.0, likelihood="normal_gamma", prior=None, init=(X[:, 0] > 0).astype(int), max_iter=1,
                   n_init=1, shuffle=False).fit(X)  # an arbitrary cut of one blob
    s = cluster_stability(forced, n_resamples=8, random_state=0)
    assert m.n_clusters_ == 1 and forced.n_clusters_ == 2
    assert (s["stability"] < 0.75).all()


def test_works_on_an_automatic_fit_of_a_mixed_table_with_gaps():
    rng = np.random.default_rng(3)
    z = np.repeat([0, 1], 60)
    df = pd.DataFrame({"a": rng.normal(5.0 * z, 1.0), "b": np.where(rng.random(120) < 0.2 + 0.6 * z, "y", "n")})
    df.loc[rng.choice(120, 10, replace=False), "a"] = np.nan
    m = MAPDP(random_state=0).fit(df)
    s = cluster_stability(m, n_resamples=5, random_state=0)
    assert len(s) == m.n_clusters_


def test_bad_arguments():
    m = _fit(np.random.default_rng(4).normal(size=(30, 1)))
    with pytest.raises(ValueError, match="fraction"):
        cluster_stability(m, fraction=1.0)
    with pytest.raises(ValueError, match="n_resamples"):
        cluster_stability(m, n_resamples=0)
