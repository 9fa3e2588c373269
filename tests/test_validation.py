"""Bad input gets a clear ValueError/TypeError naming the column and the problem: one test per rule."""
import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP, map_dp

X2 = np.random.default_rng(0).normal(size=(20, 2))
COUNTS = np.random.default_rng(0).poisson(3, size=(20, 2)).astype(float)


def test_no_rows():
    with pytest.raises(ValueError, match="empty"):
        map_dp(np.zeros((0, 2)))


def test_no_columns():
    with pytest.raises(ValueError, match="empty"):
        map_dp(np.zeros((5, 0)))


def test_three_dimensional_input():
    with pytest.raises(ValueError, match="2-D"):
        map_dp(np.zeros((3, 2, 2)))


def test_non_numeric_array():
    with pytest.raises(TypeError, match="numbers"):
        map_dp(np.array([["a", "b"], ["c", "d"]], dtype=object))


def test_infinite_value_in_normal_wishart_block():
    X = X2.copy()
    X[3, 1] = np.inf
    with pytest.raises(ValueError, match=r"'1'.*infinite|\['1'\].*infinite"):
        map_dp(X)


def test_infinite_value_in_normal_wishart_block_is_refused_with_advice():
    X = X2.copy()
    X[3, 0] = np.inf
    with pytest.raises(ValueError, match="infinite.*NaN marks a missing value"):
        map_dp(X, likelihood="normal_wishart")


def test_missing_value_in_normal_wishart_block_is_marginalised():
    X = X2.copy()
    X[3, 0] = np.nan
    states = list(map_dp(X, likelihood="normal_wishart"))
    assert len(states[-1].labels) == len(X) and np.isfinite(states[-1].neg_log_joint)


def test_infinite_value_in_normal_gamma_column():
    df = pd.DataFrame({"age": [30.0, np.inf, 40.0], "bmi": [20.0, 22.0, 25.0]})
    with pytest.raises(ValueError, match=r"age.*infinite"):
        map_dp(df, likelihood="normal_gamma")


def test_negative_counts():
    df = pd.DataFrame({"visits": [1, -2, 3, -1], "other": [0, 1, 2, 3]})
    with pytest.raises(ValueError, match=r"'visits' has 2 negative"):
        map_dp(df, likelihood="poisson")


def test_non_integer_counts():
    df = pd.DataFrame({"visits": [1.5, 2, 3]})
    with pytest.raises(ValueError, match=r"'visits' has 1 non-integer"):
        map_dp(df, likelihood="poisson")


def test_negative_exponential_value():
    df = pd.DataFrame({"wait": [1.5, -2.0, 3.0]})
    with pytest.raises(ValueError, match=r"'wait' has 1 negative"):
        map_dp(df, likelihood="exponential")


def test_bernoulli_value_above_one():
    df = pd.DataFrame({"smoker": [0, 1, 2]})
    with pytest.raises(ValueError, match=r"'smoker'.*at most 1"):
        map_dp(df, likelihood="bernoulli")


def test_binomial_value_above_trials():
    df = pd.DataFrame({"score": [0, 4, 2]})
    with pytest.raises(ValueError, match=r"'score'.*at most 3"):
        map_dp(df, likelihood="binomial", prior={"alpha0": 1.0, "beta0": 1.0, "n": 3})


def test_category_out_of_range():
    df = pd.DataFrame({"stage": [0, 1, 3]})
    with pytest.raises(ValueError, match=r"'stage' has category code 3.*3 categories"):
        map_dp(df, likelihood="categorical", prior={"alpha0": [1.0, 1.0, 1.0]})


def test_category_codes_must_be_whole_numbers_from_zero():
    df = pd.DataFrame({"stage": [0, 1, -1]})
    with pytest.raises(ValueError, match=r"'stage'.*category codes"):
        map_dp(df, likelihood="categorical")


@pytest.mark.parametrize("N0", [0.0, -1.0, np.nan, np.inf, "3", True])
def test_concentration_must_be_positive_finite(N0):
    with pytest.raises(ValueError, match="N0"):
        map_dp(X2, N0=N0)


def test_wishart_scale_not_positive_definite():
    prior = {"m0": [0, 0], "c0": 1.0, "a0": 4.0, "B0": [[1.0, 2.0], [2.0, 1.0]]}
    with pytest.raises(ValueError, match="B0.*not positive definite"):
        map_dp(X2, prior=prior)


def test_wishart_degrees_of_freedom_too_small():
    prior = {"m0": [0, 0], "c0": 1.0, "a0": 1.0, "B0": np.eye(2)}
    with pytest.raises(ValueError, match=r"a0.*> D - 1 = 1"):
        map_dp(X2, prior=prior)


def test_mean_precision_scale_must_be_positive():
    with pytest.raises(ValueError, match="c0"):
        map_dp(X2, prior={"m0": [0, 0], "c0": 0.0, "a0": 4.0, "B0": np.eye(2)})


def test_prior_mean_shape_mismatch():
    with pytest.raises(ValueError, match=r"m0.*2 finite numbers"):
        map_dp(X2, prior={"m0": [0, 0, 0], "c0": 1.0, "a0": 4.0, "B0": np.eye(2)})


def test_prior_matrix_shape_mismatch():
    with pytest.raises(ValueError, match=r"B0.*2x2"):
        map_dp(X2, prior={"m0": [0, 0], "c0": 1.0, "a0": 4.0, "B0": np.eye(3)})


def test_per_column_prior_length_mismatch():
    with pytest.raises(ValueError, match=r"alpha0.*one value per column \(2\)"):
        map_dp(COUNTS, likelihood="poisson", prior={"alpha0": [1.0, 2.0, 3.0], "beta0": 1.0})


def test_non_positive_rate_hyperparameter():
    with pytest.raises(ValueError, match=r"poisson prior 'beta0' must be > 0"):
        map_dp(COUNTS, likelihood="poisson", prior={"beta0": -1.0})


def test_unknown_prior_key():
    with pytest.raises(ValueError, match=r"unknown normal_wishart prior key\(s\) \['b0'\]"):
        map_dp(X2, prior={"b0": 1.0})


def test_unknown_likelihood():
    with pytest.raises(ValueError, match="unknown likelihood 'gaussian'"):
        map_dp(X2, likelihood="gaussian")


def test_likelihood_list_length_mismatch():
    with pytest.raises(ValueError, match="3 families but the data has 2 columns"):
        map_dp(X2, likelihood=["normal_gamma"] * 3)


def test_column_without_likelihood():
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    with pytest.raises(ValueError, match=r"\['b'\] have no likelihood"):
        map_dp(df, likelihood={"a": "normal_gamma"})


def test_column_given_twice():
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    with pytest.raises(ValueError, match="'a' is given a likelihood twice"):
        map_dp(df, likelihood={("a", "b"): "normal_wishart", "a": "normal_gamma"})


def test_likelihood_names_an_unknown_column():
    df = pd.DataFrame({"a": [1.0, 2.0]})
    with pytest.raises(ValueError, match="'weight', which is not in the data"):
        map_dp(df, likelihood={"a": "normal_gamma", "weight": "normal_gamma"})


def test_text_column_needs_categorical():
    df = pd.DataFrame({"sex": ["f", "m", "f"], "age": [30.0, 40.0, 50.0]})
    with pytest.raises(TypeError, match=r"\['sex'\] hold text"):
        map_dp(df, likelihood="normal_gamma")


def test_duplicate_column_names():
    df = pd.DataFrame([[1.0, 2.0], [3.0, 4.0]], columns=["a", "a"])
    with pytest.raises(ValueError, match=r"duplicate column names \['a'\]"):
        map_dp(df, likelihood="normal_gamma")


def test_all_missing_column_with_default_prior():
    df = pd.DataFrame({"a": [np.nan, np.nan, np.nan], "b": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match=r"\['a'\] have no observed values"):
        map_dp(df, likelihood="normal_gamma")


def test_two_normal_wishart_blocks():
    X = np.random.default_rng(0).normal(size=(10, 4))
    with pytest.raises(ValueError, match="only one normal_wishart block"):
        map_dp(X, likelihood={(0, 1): "normal_wishart", (2, 3): "normal_wishart"})


def test_order_must_be_a_permutation():
    with pytest.raises(ValueError, match="permutation"):
        map_dp(X2, order=[0] * 20)


def test_tolerance_and_iterations():
    with pytest.raises(ValueError, match="tol"):
        map_dp(X2, tol=-1.0)
    with pytest.raises(ValueError, match="max_iter"):
        map_dp(X2, max_iter=0)


def test_restarts_must_be_positive():
    with pytest.raises(ValueError, match="n_init"):
        MAPDP(n_init=0).fit(X2)


def test_a_single_row_is_one_cluster_not_an_error():
    state = list(map_dp(np.array([[1.0, 2.0]])))[-1]
    assert state.n_clusters == 1 and state.labels.tolist() == [0]
