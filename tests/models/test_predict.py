"""Prediction from a fitted MAP-DP (PLOS Appendix E): MAP cluster, membership probabilities
with a "new cluster" option, and the mixture predictive density."""
import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

from mapdp_core import MAPDP
from naive import naive_neg_log_predictive

NW_PRIOR = {"m0": np.zeros(2), "c0": 0.2, "a0": 5.0, "B0": np.eye(2) * 0.5}


def blobs(seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal([0, 0], 1, (50, 2)), rng.normal([8, 0], 0.7, (30, 2))])


def brute_force_log_density(X, labels, N0, x, family, prior, columns):
    """ln [sum_k N_k/(N0+N) f(x | X_k) + N0/(N0+N) f(x | prior)] from the reference's predictives."""
    N = len(X)
    terms = []
    for k in np.unique(labels):
        members = X[labels == k][:, columns]
        terms.append(np.log(len(members) / (N0 + N)) - naive_neg_log_predictive(family, x, members, prior))
    terms.append(np.log(N0 / (N0 + N)) - naive_neg_log_predictive(family, x, members[:0], prior))
    return logsumexp(terms)


def test_score_samples_is_the_mixture_predictive_of_appendix_e():
    X = blobs()
    m = MAPDP(likelihood="normal_wishart", n_init=1, N0=2.0, prior=NW_PRIOR, shuffle=False).fit(X)
    new = np.array([[0.5, -0.2], [7.0, 1.0], [30.0, 30.0]])
    expected = [brute_force_log_density(X, m.labels_, 2.0, x, "normal_wishart", NW_PRIOR, [0, 1]) for x in new]
    np.testing.assert_allclose(m.score_samples(new), expected, rtol=1e-9)


def test_probabilities_sum_to_one_and_a_far_point_is_a_new_cluster():
    m = MAPDP(likelihood="normal_wishart", n_init=1, N0=2.0, prior=NW_PRIOR, shuffle=False).fit(blobs())
    new = np.array([[0.1, 0.1], [8.2, -0.3], [60.0, -60.0]])
    p = m.predict_proba(new)
    assert p.shape == (3, m.n_clusters_ + 1)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    pred = m.predict(new)
    assert pred[0] == m.predict(np.array([[0.0, 0.0]]))[0] != pred[1]
    assert pred[2] == MAPDP.NEW_CLUSTER
    np.testing.assert_array_equal(np.argmax(p[:2], axis=1), pred[:2])


def test_predictive_of_counts_sums_to_one():
    rng = np.random.default_rng(1)
    X = np.r_[rng.poisson(2, 40), rng.poisson(15, 40)].astype(float)[:, None]
    m = MAPDP(prior=None, n_init=1, N0=1.0, likelihood="poisson", shuffle=False).fit(X)
    grid = np.arange(0, 400, dtype=float)[:, None]
    assert np.exp(m.score_samples(grid)).sum() == pytest.approx(1.0, abs=1e-9)


def test_a_missing_feature_is_marginalised():
    rng = np.random.default_rng(2)
    z = np.repeat([0, 1], 40)
    X = np.column_stack([rng.normal(5 * z, 1.0), rng.poisson(2 + 10 * z).astype(float)])
    prior = {0: {"m0": 2.5, "c0": 0.2, "a0": 2.0, "b0": 1.0}, 1: {"alpha0": 2.0, "beta0": 0.5}}
    m = MAPDP(n_init=1, N0=1.0, likelihood=["normal_gamma", "poisson"], prior=prior, shuffle=False).fit(X)
    # the predictive of (NaN, x) must be that of the count column alone, same partition
    got = m.score_samples(np.array([[np.nan, 3.0], [np.nan, 12.0]]))
    expected = [brute_force_log_density(X, m.labels_, 1.0, x, "poisson", prior[1], [1]) for x in (3.0, 12.0)]
    np.testing.assert_allclose(got, expected, rtol=1e-9)


def test_dataframe_rows_with_text_categories():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"stage": np.repeat(["early", "late"], 40), "score": np.r_[rng.normal(0, 1, 40), rng.normal(6, 1, 40)]})
    m = MAPDP(prior=None, n_init=1, N0=1.0, likelihood={"stage": "categorical", "score": "normal_gamma"}, shuffle=False).fit(df)
    new = pd.DataFrame({"score": [0.2, 6.1, np.nan], "stage": ["early", "late", "late"]})  # other column order
    pred = m.predict(new)
    assert pred[0] == m.labels_[0] and pred[1] == m.labels_[-1] and pred[2] == m.labels_[-1]
    # a category never seen is left out of the row's score (issue 14.5), with a warning naming it
    with pytest.warns(UserWarning, match=r"'stage' = 'middle' never seen in training; scored without it"):
        unseen = m.predict_proba(pd.DataFrame({"stage": ["middle"], "score": [1.0]}))
    np.testing.assert_array_equal(unseen, m.predict_proba(pd.DataFrame({"stage": [None], "score": [1.0]})))
    with pytest.raises(ValueError, match=r"lack the column\(s\) \['score'\]"):
        m.predict(pd.DataFrame({"stage": ["early"]}))


def test_predict_before_fit_and_wrong_width():
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        MAPDP(N0=3.0, likelihood="normal_wishart", prior=None, n_init=1).predict(np.zeros((1, 2)))
    m = MAPDP(N0=3.0, likelihood="normal_wishart", prior=None, n_init=1, shuffle=False).fit(blobs())
    with pytest.raises(ValueError, match="3 columns; the model was fitted on 2"):
        m.predict(np.zeros((1, 3)))


def test_gaps_in_a_pandas_string_column_are_gaps_when_predicting():
    """pandas' "string" (and nullable) dtypes mark a gap as pd.NA, not None: it is missing, not an
    unseen category named "<NA>"."""
    import pandas as pd

    df = pd.DataFrame({"x": np.r_[np.zeros(20), np.full(20, 5.0)], "k": ["a", "b", None, "a"] * 10})
    model = MAPDP(N0=1.0, likelihood={"x": "normal_gamma", "k": "categorical"}, prior=None).fit(df)
    typed = df.astype({"k": "string"})
    assert typed["k"].isna().sum() == 10
    assert model.unseen_categories(typed).empty
    np.testing.assert_array_equal(model.predict(typed), model.predict(df))
