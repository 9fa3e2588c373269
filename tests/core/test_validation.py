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


# ---------------------------------------------------------------- issue 14: the bad-input harness
from mapdp_core import (CollapsedGibbs, DPMeans, EMGaussianMixture, KMeans,  # noqa: E402
                        VariationalDP)

#: each estimator with settings that fit the small tables below in well under a second
QUICK = {
    "MAPDP": lambda **kw: MAPDP(**{"N0": 1.0, "prior": None, "likelihood": "normal_wishart", "n_init": 1, **kw}),
    "Gibbs": lambda **kw: CollapsedGibbs(**{"n_sweeps": 3, **kw}),
    "KMeans": lambda **kw: KMeans(**{"n_clusters": 2, "n_init": 1, **kw}),
    "DPMeans": lambda **kw: DPMeans(**kw),
    "EM": lambda **kw: EMGaussianMixture(**{"n_components": 2, "max_iter": 5, **kw}),
    "VDP": lambda **kw: VariationalDP(**{"n_components": 2, "max_iter": 5, **kw}),
}
NUMPY_WORDS = ("ufunc", "reduction operation", "SeedSequence", "array element with a sequence", "math domain",
               "DType", "could not be promoted")


def _assert_plain(exc):
    assert not any(w in str(exc.value) for w in NUMPY_WORDS), str(exc.value)


@pytest.mark.parametrize("name", list(QUICK))
def test_random_state_that_is_not_a_whole_number_is_named(name):
    with pytest.raises(ValueError, match=r"random_state must be None, a whole number >= 0.*got 1\.5") as exc:
        QUICK[name](random_state=1.5).fit(X2)
    _assert_plain(exc)


def test_random_state_is_checked_before_the_automatic_search():
    with pytest.raises(ValueError, match="random_state.*got 1.5"):
        MAPDP(random_state=1.5).fit(X2)  # likelihood, prior and N0 all "auto"


@pytest.mark.parametrize("cls", [MAPDP, CollapsedGibbs])
def test_set_params_with_a_negative_concentration_is_refused_at_fit(cls):
    model = cls().set_params(N0=-1)  # __init__ and set_params store, fit validates
    with pytest.raises(ValueError, match=r"N0 .*finite number > 0, got -1") as exc:
        model.fit(X2)
    _assert_plain(exc)


@pytest.mark.parametrize("name,param,value", [
    ("MAPDP", "shuffle", "no"), ("MAPDP", "n_jobs", 0), ("MAPDP", "n_jobs", "all"), ("DPMeans", "shuffle", "yes"),
    ("DPMeans", "lam", "big"), ("KMeans", "n_clusters", 1.5), ("KMeans", "n_init", 0), ("Gibbs", "n_sweeps", 0),
    ("EM", "n_components", "3"), ("EM", "covariance_type", "round"), ("EM", "tol", "small"),
    ("VDP", "weight_concentration_prior", -1.0), ("VDP", "max_iter", 0),
])
def test_bad_parameters_set_after_construction_are_named_at_fit(name, param, value):
    model = QUICK[name]().set_params(**{param: value})
    with pytest.raises((ValueError, TypeError), match=param) as exc:
        model.fit(X2)
    _assert_plain(exc)


@pytest.mark.parametrize("key", ["c0", "m0", "B0", "a0"])
def test_prior_value_of_the_wrong_type_names_the_key(key):
    with pytest.raises(TypeError, match=rf"prior '{key}' of the normal_wishart likelihood.*must be a number or an "
                                        r"array of numbers, got 'a'") as exc:
        map_dp(X2, prior={key: "a"})
    _assert_plain(exc)


def test_ragged_rows_are_named_not_numpy_words():
    with pytest.raises(ValueError, match="rectangular table of numbers") as exc:
        MAPDP(N0=1.0, prior=None, likelihood="normal_wishart").fit([[1.0, [2.0, 3.0]], [1.0, 2.0]])
    _assert_plain(exc)


def test_empty_tuple_as_a_likelihood_key_is_named():
    with pytest.raises(ValueError, match=r"empty tuple \(\) as a key.*at least one column") as exc:
        map_dp(X2, likelihood={(): "normal_wishart", 0: "normal_gamma", 1: "normal_gamma"})
    _assert_plain(exc)


def test_prior_key_matching_no_likelihood_entry_is_refused_even_as_a_tuple():
    with pytest.raises(ValueError, match=r"prior has key\(s\) \[\(\)\] that match no likelihood entry"):
        map_dp(X2, likelihood={(0, 1): "normal_wishart"}, prior={(): {"c0": 1.0}})
    with pytest.raises(ValueError, match=r"\('1', '0'\).*match no likelihood entry"):
        map_dp(X2, likelihood={(0, 1): "normal_wishart"}, prior={("1", "0"): {"c0": 1.0}})


_N = 12
_FRAMES = {
    "dates": (pd.Series(pd.date_range("2020-01-01", periods=_N)), r"'d' holds dates: convert them to numbers"),
    "durations": (pd.Series(pd.to_timedelta(np.arange(_N), unit="D")), r"'d' holds durations: convert them"),
    "empty": (pd.Series([None] * _N, dtype=object), r"'d'.*(no values at all|no observed values).*drop"),
}


@pytest.mark.parametrize("kind", list(_FRAMES))
@pytest.mark.parametrize("name", list(QUICK))
def test_dataframe_columns_that_are_not_text_are_named_for_what_they_are(kind, name):
    column, message = _FRAMES[kind]
    df = pd.DataFrame({"a": np.random.default_rng(0).normal(size=_N), "d": column})
    with pytest.raises((ValueError, TypeError), match=message) as exc:
        QUICK[name]().fit(df)
    assert "text" not in str(exc.value).split("(")[0] or kind == "empty"
    _assert_plain(exc)


@pytest.mark.parametrize("name", list(QUICK))
def test_numbers_stored_as_objects_in_a_dataframe_are_numbers(name):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=_N), "d": pd.Series(list(range(_N)), dtype=object)})
    labels = QUICK[name](random_state=0).fit(df).labels_
    assert labels.shape == (_N,) and np.all(labels >= 0)
    if name == "MAPDP":  # the same clustering as the same numbers with a numeric dtype
        again = QUICK[name](random_state=0).fit(df.astype(float)).labels_
        assert labels.tolist() == again.tolist()


@pytest.mark.parametrize("scale", [1e200, 1e160, 1e-200])
@pytest.mark.parametrize("name", list(QUICK))
def test_data_too_large_or_too_small_for_double_precision_are_named(name, scale):
    X = X2 * scale
    word = "too large" if scale > 1 else "too small"
    with pytest.raises(ValueError, match=rf"the data are {word} for double precision.*Rescale") as exc:
        QUICK[name]().fit(X)
    assert "prior" not in str(exc.value)  # not blamed on a prior the user never set


@pytest.mark.parametrize("family", ["normal_wishart", "normal_gamma", "spherical_gaussian", "gaussian_known_cov"])
def test_huge_data_are_not_blamed_on_the_prior_in_any_gaussian_family(family):
    with pytest.raises(ValueError, match=r"column\(s\) \['0', '1'\] hold values as large as 2\.33e\+200"):
        map_dp(X2 * 1e200, likelihood=family)


def test_large_but_representable_data_still_cluster():
    labels = list(map_dp(X2 * 1e140, likelihood="normal_wishart"))[-1].labels
    assert labels.shape == (20,)


def test_ragged_categorical_prior_one_vector_per_column():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"colour": rng.integers(0, 3, 30), "smoker": rng.integers(0, 2, 30)})
    model = MAPDP(N0=1.0, likelihood="categorical", prior={"alpha0": [[1, 2, 3], [4, 5]]}, n_init=1).fit(df)
    assert model.labels_.shape == (30,)
    (block,) = model.prior_
    assert [a.tolist() for a in block["alpha0"]] == [[1.0, 2.0, 3.0], [4.0, 5.0]]
    assert model.predict(df.iloc[:3]).shape == (3,)
    with pytest.raises(ValueError, match=r"'colour' has category code 2 but its prior 'alpha0' has only 2"):
        MAPDP(N0=1.0, likelihood="categorical", prior={"alpha0": [[1, 1], [1, 1, 1]]}).fit(df)


def test_ragged_categorical_prior_in_a_mixed_specification():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"stage": rng.integers(0, 4, 30), "sex": rng.integers(0, 2, 30), "age": rng.normal(50, 9, 30)})
    likelihood = {("stage", "sex"): "categorical", "age": "normal_gamma"}
    prior = {("stage", "sex"): {"alpha0": [[1, 1, 1, 1], [0.5, 0.5]]}}
    model = MAPDP(N0=1.0, likelihood=likelihood, prior=prior, n_init=1).fit(df)
    sizes = {tuple(b["columns"]): [a.size for a in b["alpha0"]] for b in model.prior_ if b["family"] == "categorical"}
    assert sizes == {("stage", "sex"): [4, 2]}
    assert model.labels_.shape == (30,)
    # keyed by family, the prior goes to each per-column entry on its own: a clear message, not numpy's
    per_column = {"stage": "categorical", "sex": "categorical", "age": "normal_gamma"}
    with pytest.raises(ValueError, match=r"2 vectors of lengths \[4, 2\], but it applies to 1 column"):
        MAPDP(N0=1.0, likelihood=per_column, prior={"categorical": prior[("stage", "sex")]}).fit(df)


def test_a_one_dimensional_row_given_to_predict_gets_scikit_learns_message():
    model = MAPDP(N0=1.0, prior=None, likelihood="normal_wishart", n_init=1).fit(X2)
    with pytest.raises(ValueError, match=r"Expected 2D array, got 1D array instead.*reshape\(1, -1\) if it "
                                         r"contains a single sample"):
        model.predict(X2[0])
    assert model.predict(X2[0].reshape(1, -1)).shape == (1,)


@pytest.mark.parametrize("name", list(QUICK))
def test_a_one_dimensional_x_is_refused_by_every_estimator(name):
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array instead"):
        QUICK[name]().fit(X2[:, 0])


@pytest.mark.parametrize("name", list(QUICK))
def test_numeric_object_arrays_are_numbers(name):
    model = QUICK[name](random_state=0).fit(X2.astype(object))
    same = QUICK[name](random_state=0).fit(X2)
    assert model.labels_.tolist() == same.labels_.tolist()


def test_object_array_with_text_names_the_cell():
    X = X2.astype(object)
    X[2, 1] = "seven"
    with pytest.raises(TypeError, match=r"cell at \(2, 1\) is 'seven' of type str, not a number"):
        MAPDP(N0=1.0, prior=None, likelihood="normal_wishart").fit(X)


@pytest.mark.parametrize("key", ["Sigma", "Sigma0"])
def test_known_covariance_that_is_numerically_singular_is_refused(key):
    with pytest.raises(ValueError, match=rf"prior '{key}' of the gaussian_known_cov .*numerically singular "
                                         r"\(condition number .*e\+300"):
        MAPDP(N0=1.0, likelihood="gaussian_known_cov", prior={key: np.diag([1e-300, 1.0])}).fit(X2)


def test_wishart_scale_that_is_numerically_singular_is_refused():
    with pytest.raises(ValueError, match=r"prior 'B0' .*numerically singular"):
        map_dp(X2, prior={"B0": np.diag([1e-300, 1.0])})


def test_covariance_in_the_columns_own_units_is_accepted_however_different_the_units():
    X = X2 * np.array([1e-6, 1e6])  # variances 1e24 apart: the prior in those units is well conditioned
    Sigma = 0.2 * np.cov(X.T)
    labels = MAPDP(N0=1.0, likelihood="gaussian_known_cov", prior={"Sigma": Sigma}, n_init=1).fit(X).labels_
    assert labels.shape == (20,)
    states = list(map_dp(X, likelihood="normal_wishart", prior={"B0": np.diag(1.0 / np.var(X, axis=0))}))
    assert states[-1].labels.shape == (20,)


@pytest.mark.parametrize("name", list(QUICK))
def test_empty_data_get_scikit_learns_wording(name):
    with pytest.raises(ValueError, match=r"0 feature\(s\) \(shape=\(12, 0\)\) while a minimum of 1 is required"):
        QUICK[name]().fit(np.empty((12, 0)))
    with pytest.raises(ValueError, match=r"0 sample\(s\)"):
        QUICK[name]().fit(np.empty((0, 3)))


def test_empty_data_with_automatic_choices_get_scikit_learns_wording():
    with pytest.raises(ValueError, match=r"0 feature\(s\) \(shape=\(12, 0\)\)"):
        MAPDP().fit(np.empty((12, 0)))
