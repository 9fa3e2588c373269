"""Fuzz suite for the one-pass and search models: SUGS, V-SUGS and DPSearch (issue 29).

The same two outcomes as ``test_fuzz.py``, and nothing else counts as a pass:

* a clear error: a ValueError or TypeError whose message is plain words, free of numba,
  numpy or Python internals (``test_fuzz.INTERNALS``);
* a correct result: one whole-number label >= 0 per input row (a fitted model never leaves a
  row unlabelled, -1), a finite joint, and, for input that holds the base table's numbers in
  another form (a list, an object array, a Fortran-ordered or strided array, a DataFrame), the
  base table's partition, row by row, so that a lost or reordered row shows.

Cases are small tables of inputs crossed with the three models (quick settings: fixed N0 and
prior where the automatic choice is not what is tested, one visiting order, a small beam).
"""
from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from mapdp_core.models.search import DPSearch
from mapdp_core.models.sugs import SUGS
from mapdp_core.models.vsugs import VSUGS
from test_fuzz import BASE, N, ODD_NEW, ODD_X, _clear_error, _rows, _run

QUICK = {
    "SUGS": lambda **kw: SUGS(**{"N0": 1.0, "n_init": 1, "shuffle": False, "random_state": 0, **kw}),
    "SUGS auto": lambda **kw: SUGS(**{"N0": "auto", "n_init": 2, "random_state": 0, **kw}),
    "V-SUGS": lambda **kw: VSUGS(**{"N0": 1.0, "T": 5, "n_init": 1, "shuffle": False, "random_state": 0, **kw}),
    "DPSearch": lambda **kw: DPSearch(**{"N0": 1.0, "beam_size": 3, "random_state": 0, **kw}),
    # past the automatic choice of families, which refuses constant or one-row tables before the model sees them
    "SUGS normal_wishart": lambda **kw: SUGS(**{"N0": 1.0, "likelihood": "normal_wishart", "n_init": 1,
                                               "shuffle": False, **kw}),
    "DPSearch normal_gamma": lambda **kw: DPSearch(**{"N0": 1.0, "likelihood": "normal_gamma", "beam_size": 3, **kw}),
    "DPSearch A*": lambda **kw: DPSearch(**{"N0": 1.0, "likelihood": "normal_wishart", "beam_size": None,
                                           "heuristic": "inadmissible", **kw}),
    "DPSearch admissible": lambda **kw: DPSearch(**{"N0": 1.0, "likelihood": "spherical_gaussian",
                                                   "heuristic": "admissible", "beam_size": 3, **kw}),
}
MODELS = ["SUGS", "V-SUGS", "DPSearch", "SUGS normal_wishart", "DPSearch normal_gamma", "DPSearch A*",
          "DPSearch admissible"]


# ---------------------------------------------------------------- the two outcomes
def _labels_ok(model, n_rows, reference=None) -> None:
    labels = np.asarray(model.labels_)
    assert labels.shape == (n_rows,), f"{labels.shape} labels for {n_rows} rows"
    assert np.issubdtype(labels.dtype, np.integer), labels.dtype
    assert labels.min() >= 0, "a fitted model left rows unlabelled (-1)"
    assert model.n_clusters_ == len(np.unique(labels)) and labels.max() == model.n_clusters_ - 1
    assert np.isfinite(model.neg_log_joint_), model.neg_log_joint_
    if reference is not None:  # every row back, in order: the same partition, row by row
        reference = np.asarray(reference)
        assert np.array_equal(labels[:, None] == labels[None, :], reference[:, None] == reference[None, :]), \
            (labels, reference)


_REFERENCE: dict = {}


def _reference(name):
    if name not in _REFERENCE:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _REFERENCE[name] = QUICK[name]().fit(BASE).labels_
    return _REFERENCE[name]


# ---------------------------------------------------------------- odd data
_F = np.asfortranarray(BASE)
_WIDE = np.zeros((N, 4))
_WIDE[:, ::2] = BASE
EXTRA_X = {
    "fortran order": (_F, True),
    "strided columns": (_WIDE[:, ::2], True),
    "reversed rows view": (BASE[::-1][::-1], True),
    "int8": (np.round(BASE).astype(np.int8), False),
    "uint64": (np.round(np.abs(BASE)).astype(np.uint64), False),
    "bool columns": (np.column_stack([np.arange(N) % 2 == 0, np.arange(N) < N // 2]), False),
    "frame with pd.NA": (pd.DataFrame({"x": pd.array([1.0, None] * (N // 2), dtype="Float64"), "y": BASE[:, 1]}),
                         False),
    "frame object NaN": (pd.DataFrame({"x": pd.Series([1.0, np.nan] * (N // 2), dtype=object), "y": BASE[:, 1]}),
                         False),
    "frame mixed dtypes": (pd.DataFrame({"i": np.arange(N), "f": BASE[:, 0], "b": np.arange(N) % 2 == 0}), False),
    "frame text numbers": (pd.DataFrame({"x": [f"{v:.3f}" for v in BASE[:, 0]], "y": BASE[:, 1]}), False),
    "inf column": (np.column_stack([BASE[:, 0], np.full(N, np.inf)]), False),
    "all-NaN column": (np.column_stack([BASE[:, 0], np.full(N, np.nan)]), False),
    "constant columns": (np.full((N, 2), 7.0), False),
    "1e-300 spread": (1.0 + BASE * 1e-300, False),
    "1e150 values": (BASE * 1e150, False),
    "one row repeated twice": (np.repeat(BASE[:2], 6, axis=0), False),
    "two identical halves": (np.vstack([BASE[:6], BASE[:6]]), False),
}
ALL_X = {**ODD_X, **EXTRA_X}


@pytest.mark.parametrize("case", list(ALL_X))
@pytest.mark.parametrize("name", MODELS)
def test_fit_on_odd_data(name, case):
    X, same_numbers = ALL_X[case]
    n_rows = _rows(X)
    # a spherical Gaussian's empirical-Bayes spread may split a row off the far groups: no reference there
    reference = _reference(name) if same_numbers and name != "DPSearch admissible" else None
    _run(lambda: QUICK[name]().fit(X), lambda model: _labels_ok(model, n_rows, reference))


@pytest.mark.parametrize("case", ["plain", "frame with pd.NA", "one NaN", "huge 1e200", "duplicate rows", "one row"])
def test_sugs_with_the_automatic_choice_on_odd_data(case):
    X = ALL_X[case][0]
    _run(lambda: QUICK["SUGS auto"]().fit(X), lambda model: _labels_ok(model, _rows(X)))


# ---------------------------------------------------------------- odd parameters, set after construction
ODD_PARAMS = {
    "SUGS": {"N0": [-1, 0, np.nan, np.inf, "3", None, True, [1.0]], "n_init": [0, 1.5, "2"], "shuffle": ["no", 2],
             "N0_grid": [[], [-1.0, 1.0], "a", [np.nan], [[1.0, 2.0]], [np.inf]],
             "select": ["x", None], "block_size": [0, 1.5, "5"], "random_state": [1.5, -1, "seed"],
             "n_jobs": [0, "all"], "likelihood": [5, "gaussian", None], "prior": ["none", 5, {"c0": -1.0}]},
    "V-SUGS": {"N0": [-1, 0, np.nan, np.inf, "1", None], "T": [0, -2, 1.5, "5", None],
               "likelihood": ["poisson", 5, "auto"], "prior": ["x", {"c0": -1.0}, {"m0": "a"}, {"zz": 1.0}, [1]],
               "assignment": ["x", None], "n_init": [0, 2.5], "shuffle": ["x"], "block_size": [0, "2"],
               "random_state": [1.5, "a"], "n_jobs": ["all"]},
    "DPSearch": {"N0": [-1, 0, np.nan, np.inf, "1", None], "beam_size": [0, -1, 1.5, "10", True, np.inf],
                 "heuristic": ["x", None, 5, "Admissible"], "prior_kind": ["x", None], "bound_prior": ["yes", 2, None],
                 "data_order": ["x", None], "n_init": [0, 1.5], "max_expansions": [0, 1.5, "10", None],
                 "block_size": [0, -3], "random_state": [1.5, "a", -1], "likelihood": ["gaussian", 5],
                 "prior": ["x", [1]]},
}
PARAM_CASES = [(name, param, value) for name, params in ODD_PARAMS.items()
               for param, values in params.items() for value in values]


@pytest.mark.parametrize("name,param,value", PARAM_CASES, ids=[f"{n}-{p}-{v!r:.20}" for n, p, v in PARAM_CASES])
def test_odd_parameters_set_after_construction(name, param, value):
    extra = {"data_order": "random", "n_init": 2} if name == "DPSearch" and param == "random_state" else {}
    model = QUICK[name](**extra).set_params(**{param: value})  # stored as given; fit validates
    _run(lambda: model.fit(BASE), lambda fitted: _labels_ok(fitted, N))


@pytest.mark.parametrize("name,param,value", [
    ("SUGS", "N0", -1), ("SUGS", "N0", np.nan), ("V-SUGS", "N0", 0), ("V-SUGS", "T", 0),
    ("DPSearch", "N0", np.inf), ("DPSearch", "beam_size", 0),
])
def test_bad_parameters_after_fitting_leave_predict_working_or_refuse(name, param, value):
    """set_params with a bad value on a fitted model: predict uses what was fitted (labels for
    every row), or refuses clearly; the next fit refuses clearly."""
    model = _fitted(name)
    bad = pickle.loads(pickle.dumps(model)).set_params(**{param: value})

    def check(labels):
        labels = np.asarray(labels)
        assert labels.shape == (3,) and np.all(labels >= -1)

    _run(lambda: bad.predict(BASE[:3]), check)
    with pytest.raises((ValueError, TypeError)) as info:
        bad.fit(BASE)
    _clear_error(info.value)


def test_sugs_concentration_grid_with_bad_weights():
    for weights in ([1.0], [-1.0, 2.0], "a", [0.0, 0.0], [np.nan, 1.0]):
        model = QUICK["SUGS"](N0_grid=[0.5, 2.0], N0_grid_weights=weights)
        with pytest.raises(ValueError, match="N0_grid_weights") as info:
            model.fit(BASE)
        _clear_error(info.value)


# ---------------------------------------------------------------- the search's own odd settings
@pytest.mark.parametrize("settings", [
    {"beam_size": None, "heuristic": "inadmissible"},
    {"beam_size": 1, "heuristic": "trivial", "bound_prior": False},
    {"beam_size": 1000},
    {"heuristic": "admissible"},  # no spherical_gaussian block: falls back, with a warning
    {"heuristic": "admissible", "likelihood": "spherical_gaussian"},
    {"prior_kind": "ewens"},
    {"data_order": "reversed"},
    {"data_order": "random", "n_init": 3},
    {"block_size": 1},
    {"max_expansions": N + 1},
])
def test_search_settings_give_a_full_partition(settings):
    model = QUICK["DPSearch"](**settings)
    # the two far groups, except under a spherical Gaussian, whose empirical-Bayes spread may split one off
    reference = None if settings.get("likelihood") == "spherical_gaussian" else _reference("SUGS")
    _run(lambda: model.fit(BASE), lambda fitted: _labels_ok(fitted, N, reference))


def test_search_with_too_few_expansions_refuses_before_starting():
    with pytest.raises(ValueError, match="max_expansions") as info:
        QUICK["DPSearch"](max_expansions=N).fit(BASE)  # a beam pops at least N + 1 states
    _clear_error(info.value)


# ---------------------------------------------------------------- predict on odd new rows
_FITTED: dict = {}


def _fitted(name):
    if name not in _FITTED:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITTED[name] = QUICK[name]().fit(BASE)
    return _FITTED[name]


@pytest.mark.parametrize("case", list(ODD_NEW))
@pytest.mark.parametrize("name", ["SUGS", "V-SUGS", "DPSearch"])
def test_predict_on_odd_rows(name, case):
    X = ODD_NEW[case]
    n_rows = _rows(X)

    def check(labels):
        labels = np.asarray(labels)
        assert labels.shape == (n_rows,) and np.all(labels >= -1)
        assert np.all(labels < _fitted(name).n_clusters_)

    _run(lambda: _fitted(name).predict(X), check)


@pytest.mark.parametrize("name", ["SUGS", "V-SUGS", "DPSearch"])
def test_predict_before_fit_says_to_fit(name):
    with pytest.raises(ValueError, match="fit") as info:
        QUICK[name]().predict(BASE)
    _clear_error(info.value)


@pytest.mark.parametrize("name", ["SUGS", "V-SUGS", "DPSearch"])
def test_predict_with_the_wrong_number_of_columns_names_them(name):
    with pytest.raises(ValueError, match="features") as info:
        _fitted(name).predict(np.zeros((2, 3)))
    _clear_error(info.value)


@pytest.mark.parametrize("name", ["SUGS", "V-SUGS", "DPSearch"])
def test_predict_gives_the_training_rows_their_clusters(name):
    model = _fitted(name)
    assert np.array_equal(model.predict(BASE[[0, -1]]), model.labels_[[0, -1]])


# ---------------------------------------------------------------- pickling
@pytest.mark.parametrize("name", ["SUGS", "V-SUGS", "DPSearch"])
def test_pickle_round_trip_predicts_the_same(name):
    model = _fitted(name)
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.labels_, model.labels_)
    new = BASE[:4] + 0.5
    np.testing.assert_array_equal(copy.predict(new), model.predict(new))
    unfitted = pickle.loads(pickle.dumps(QUICK[name]()))
    _labels_ok(unfitted.fit(BASE), N, model.labels_)


# ---------------------------------------------------------------- runs stopped part-way
def test_a_sugs_pass_stopped_part_way_cannot_become_the_fitted_model():
    """A pass cut short is scored only on the rows it reached (a lower joint than any complete
    pass), so it must never be kept: from_states refuses states that leave rows unlabelled."""
    X = np.vstack([BASE] * 5)
    model = SUGS(N0=1.0, n_init=1, shuffle=False, block_size=5)
    states = list(model.iter_sweeps(X))
    assert len(states) > 3 and states[-1].converged
    partial = states[:2]
    assert np.sum(partial[-1].labels < 0) > 0 and not partial[-1].converged
    assert partial[-1].neg_log_joint < states[-1].neg_log_joint  # it would win on its score
    with pytest.raises(ValueError, match="without a cluster") as info:
        SUGS(N0=1.0, n_init=1, shuffle=False, block_size=5).from_states(X, partial)
    _clear_error(info.value)
    fitted = SUGS(N0=1.0, n_init=1, shuffle=False, block_size=5).from_states(X, states)
    _labels_ok(fitted, len(X))


@pytest.mark.parametrize("name", ["V-SUGS", "DPSearch"])
def test_other_runs_stopped_part_way_cannot_become_the_fitted_model(name):
    X = np.vstack([BASE] * 5)
    model = QUICK[name](block_size=5)
    states = list(model.iter_sweeps(X))
    assert len(states) > 2 and states[-1].converged and np.all(states[-1].labels >= 0)
    with pytest.raises(ValueError, match="without a cluster") as info:
        QUICK[name](block_size=5).from_states(X, states[:1])
    _clear_error(info.value)


@pytest.mark.parametrize("name", ["SUGS", "V-SUGS"])
def test_every_restart_of_a_fit_is_complete(name):
    """Every order's value is that of a complete pass: the kept one labels every row and its
    joint is the lowest (SUGS) of the orders' complete joints."""
    X = np.vstack([BASE] * 3)
    model = QUICK[name](n_init=4, shuffle=True).fit(X)
    _labels_ok(model, len(X))
    assert model.restart_values_.shape == (4,) and np.all(np.isfinite(model.restart_values_))
    for r in range(4):
        last = list(QUICK[name](n_init=4, shuffle=True).iter_sweeps(X, restart=r))[-1]
        assert last.converged and np.all(last.labels >= 0)
