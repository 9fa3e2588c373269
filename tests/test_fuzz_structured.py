"""Fuzz suite for the structured models and the settings parsers (issue 29).

* the sequence models (MAP-iHMM and both hard HDP-HMMs), which take ``lengths``;
* the group models (HardHDP with ``groups``; MixedEffectsMAPDP with ``y`` and ``groups``);
* the settings parsers of ``explorer.sharing`` (``settings_from_json`` / ``settings_from_query``);
* ``core.validation.as_data``'s message for a gap or an infinity (numeric-only estimators).

The same two outcomes as ``test_fuzz.py``, and nothing else counts as a pass:

* a clear error: a ValueError or TypeError whose message is plain words, free of numba,
  numpy or Python internals (``test_fuzz.INTERNALS``), and, where a case says so, naming the
  problem (``lengths``, ``groups``, ...);
* a correct result: one whole-number label >= 0 per input row (per subject for the mixed-effects
  model), finite scores, and, for input that holds the base table's numbers in another form, the
  base table's partition, row by row, so that a lost or reordered row shows. The settings parsers
  return only known settings, each of its kind and within its bounds.
"""
from __future__ import annotations

import json
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse

from explorer.sharing import APP_SETTINGS, settings_from_json, settings_from_query, settings_to_json
from mapdp_core.core.validation import as_data
from mapdp_core.models.hdp import HardHDP
from mapdp_core.models.hdp_hmm import HardHDPHMM
from mapdp_core.models.hdp_hmm_direct import HardHDPHMMDirect
from mapdp_core.models.ihmm import MAPIHMM
from mapdp_core.models.mixed_effects import MixedEffectsMAPDP
from test_fuzz import BASE, N, ODD_NEW, ODD_X, _clear_error, _rows, _run

SEQ = {
    "MAP-iHMM": lambda **kw: MAPIHMM(**{"N0": 1.0, "likelihood": "normal_wishart", "init": "mapdp", "max_iter": 10,
                                        "random_state": 0, **kw}),
    "HardHDPHMM": lambda **kw: HardHDPHMM(**{"max_iter": 20, **kw}),
    "HardHDPHMMDirect": lambda **kw: HardHDPHMMDirect(**{"max_iter": 20, "n_proposals": 1, **kw}),
}
SEQ_NAMES = list(SEQ)


# ---------------------------------------------------------------- the two outcomes
def _labels_ok(labels, n_rows, reference=None) -> None:
    labels = np.asarray(labels)
    assert labels.shape == (n_rows,), f"{labels.shape} labels for {n_rows} rows"
    assert np.issubdtype(labels.dtype, np.integer), labels.dtype
    assert n_rows == 0 or labels.min() >= 0, "rows left unlabelled (-1)"
    if reference is not None:  # every row back, in order: the same partition, row by row
        reference = np.asarray(reference)
        assert np.array_equal(labels[:, None] == labels[None, :], reference[:, None] == reference[None, :]), \
            (labels, reference)


def _fit_ok(model, n_rows, reference=None) -> None:
    _labels_ok(model.labels_, n_rows, reference)
    labels = np.asarray(model.labels_)
    assert model.n_clusters_ == len(np.unique(labels)) and labels.max() == model.n_clusters_ - 1
    score = getattr(model, "neg_log_joint_", getattr(model, "objective_", None))
    assert score is not None and np.isfinite(score), score


_REFERENCE: dict = {}


def _reference(name):
    if name not in _REFERENCE:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _REFERENCE[name] = SEQ[name]().fit(BASE).labels_
    return _REFERENCE[name]


_FITTED: dict = {}


def _fitted(name):
    if name not in _FITTED:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITTED[name] = SEQ[name]().fit(BASE, lengths=[6, 6])
    return _FITTED[name]


# ---------------------------------------------------------------- sequence models: lengths
#: name -> (lengths for the 12 base rows, word the error must name or None when any clear outcome passes)
ODD_LENGTHS = {
    "None": (None, None),
    "one sequence": ([N], None),
    "two halves": ([6, 6], None),
    "every step its own sequence": ([1] * N, None),
    "a length-1 sequence last": ([N - 1, 1], None),
    "a length-1 sequence first": ([1, N - 1], None),
    "numpy int64": (np.array([6, 6], dtype=np.int64), None),
    "numpy uint8": (np.array([6, 6], dtype=np.uint8), None),
    "tuple": ((4, 4, 4), None),
    "series": (pd.Series([6, 6]), None),
    "sum too small": ([6, 5], "lengths"),
    "sum too large": ([6, 7], "lengths"),
    "empty list": ([], "lengths"),
    "a zero length": ([0, N], "lengths"),
    "a negative length": ([-1, N + 1], "lengths"),
    "float lengths": ([6.0, 6.0], "as integers"),
    "float array lengths": (np.array([6.0, 6.0]), "as integers"),
    "fractional lengths": ([6.5, 5.5], "lengths"),
    "text lengths": (["6", "6"], "lengths"),
    "scalar": (N, "lengths"),
    "text": ("12", "lengths"),
    "bools": ([True] * N, "lengths"),
    "NaN": ([np.nan, N], "lengths"),
    "None inside": ([None, N], "lengths"),
    "nested": ([[6, 6]], "lengths"),
    "2-D array": (np.array([[6, 6]]), "lengths"),
    "huge": ([2 ** 70, N], "lengths"),
    "dict": ({"a": N}, "lengths"),
    "inf": ([np.inf], "lengths"),
}


@pytest.mark.parametrize("case", list(ODD_LENGTHS))
@pytest.mark.parametrize("name", SEQ_NAMES)
def test_fit_with_odd_lengths(name, case):
    lengths, must_fail = ODD_LENGTHS[case]

    def check(model):
        _fit_ok(model, N)
        assert sum(model.lengths_) == N

    _run(lambda: SEQ[name]().fit(BASE, lengths=lengths), check, must_fail)


@pytest.mark.parametrize("name", SEQ_NAMES)
def test_one_sequence_of_one_step(name):
    _run(lambda: SEQ[name]().fit(BASE[:1], lengths=[1]), lambda model: _fit_ok(model, 1))


# ---------------------------------------------------------------- sequence models: odd data
SEQ_X = ["plain", "ints", "float32", "object numbers", "object with None", "object with text", "strings", "one NaN",
         "one inf", "all NaN", "empty rows", "empty columns", "one row", "two rows", "constant column",
         "all constant", "huge 1e200", "one huge cell", "tiny 1e-200", "1-D", "3-D", "ragged list", "list of lists",
         "complex", "dict", "None", "text", "frame", "frame text column", "frame dates", "frame all None"]


@pytest.mark.parametrize("case", SEQ_X)
@pytest.mark.parametrize("name", SEQ_NAMES)
def test_sequence_fit_on_odd_data(name, case):
    X, same_numbers = ODD_X[case]
    n_rows = _rows(X)
    reference = _reference(name) if same_numbers else None
    _run(lambda: SEQ[name]().fit(X), lambda model: _fit_ok(model, n_rows, reference))


@pytest.mark.parametrize("name", ["HardHDPHMM", "HardHDPHMMDirect"])
def test_hard_hmms_name_the_first_gap(name):
    X = BASE.copy()
    X[4, 1] = np.nan
    with pytest.raises(ValueError, match=r"row 4, column 1.*MAP-DP") as info:
        SEQ[name]().fit(X, lengths=[6, 6])
    _clear_error(info.value)
    assert "supervised" not in str(info.value)


def test_ihmm_fits_with_gaps_every_row_labelled():
    X = BASE.copy()
    X[3, 0] = np.nan
    model = SEQ["MAP-iHMM"]().fit(X, lengths=[6, 6])
    _fit_ok(model, N)


ODD_SEQ_PARAMS = {
    "MAP-iHMM": {"N0": [-1, 0, np.nan, np.inf, "1", None], "M0": [0, -2, "x"], "kappa": ["x", None],
                 "table_counts": ["x", 3], "init": ["x", None], "new_state": ["x"], "max_iter": [0, 1.5, "5"],
                 "tol": [-1, np.nan], "likelihood": ["gaussian", 5], "random_state": [1.5, "a"]},
    "HardHDPHMM": {"lambda_global": [-1, np.nan, np.inf, "1", [1]], "lambda_local": [-1, np.nan, "x"],
                   "lambda_mean": [-1, np.inf], "divergence": ["x", None, 5], "max_iter": [0, 2.5, "5"],
                   "tol": [-1, np.nan], "init": ["x", None], "merges": ["no", 2]},
    "HardHDPHMMDirect": {"lambda_global": [-1, np.nan], "lambda_local": [-1, "x"], "zeta": [-1, np.nan, np.inf, "a"],
                         "n_proposals": [-1, 1.5, "2"], "divergence": ["x"], "init": ["x"], "merges": ["yes"],
                         "max_iter": [0]},
}
SEQ_PARAM_CASES = [(n, p, v) for n, params in ODD_SEQ_PARAMS.items() for p, values in params.items() for v in values]


@pytest.mark.parametrize("name,param,value", SEQ_PARAM_CASES, ids=[f"{n}-{p}-{v!r:.20}" for n, p, v in SEQ_PARAM_CASES])
def test_sequence_odd_parameters_set_after_construction(name, param, value):
    model = SEQ[name]().set_params(**{param: value})
    _run(lambda: model.fit(BASE, lengths=[6, 6]), lambda fitted: _fit_ok(fitted, N))


@pytest.mark.parametrize("name,param,value", [
    ("MAP-iHMM", "N0", -1), ("MAP-iHMM", "N0", np.nan), ("MAP-iHMM", "M0", 0), ("HardHDPHMM", "lambda_local", -1),
    ("HardHDPHMM", "divergence", "x"), ("HardHDPHMMDirect", "zeta", np.inf),
])
def test_sequence_bad_parameters_after_fitting(name, param, value):
    """set_params with a bad value on a fitted model: predict uses what was fitted or refuses
    clearly (never a NaN score); the next fit refuses clearly."""
    bad = pickle.loads(pickle.dumps(_fitted(name))).set_params(**{param: value})
    _run(lambda: bad.predict(BASE[:4], lengths=[2, 2]), lambda labels: _labels_ok(labels, 4))
    if hasattr(bad, "score_samples"):
        _run(lambda: bad.score_samples(BASE[:4]), lambda s: np.all(np.isfinite(s)) or pytest.fail(f"NaN score {s}"))
    with pytest.raises((ValueError, TypeError)) as info:
        bad.fit(BASE)
    _clear_error(info.value)


@pytest.mark.parametrize("case", list(ODD_NEW))
@pytest.mark.parametrize("name", SEQ_NAMES)
def test_sequence_predict_on_odd_rows(name, case):
    X = ODD_NEW[case]
    n_rows = _rows(X)

    def check(labels):
        _labels_ok(labels, n_rows)
        assert np.all(np.asarray(labels) < _fitted(name).n_clusters_)

    _run(lambda: _fitted(name).predict(X), check)


@pytest.mark.parametrize("lengths,ok", [([2, 2], True), ([4], True), ([1, 1, 1, 1], True), ([3], False),
                                        ([0, 4], False), ([2.0, 2.0], False), ("4", False)])
@pytest.mark.parametrize("name", SEQ_NAMES)
def test_sequence_predict_with_lengths(name, lengths, ok):
    _run(lambda: _fitted(name).predict(BASE[[0, 1, 6, 7]], lengths=lengths),
         lambda labels: _labels_ok(labels, 4), None if ok else "lengths")


@pytest.mark.parametrize("name", SEQ_NAMES)
def test_sequence_predict_before_fit_says_to_fit(name):
    with pytest.raises(ValueError, match="fit") as info:
        SEQ[name]().predict(BASE)
    _clear_error(info.value)


@pytest.mark.parametrize("name", SEQ_NAMES)
def test_sequence_predict_gives_the_training_rows_their_states(name):
    model = _fitted(name)
    assert np.array_equal(model.predict(BASE, lengths=[6, 6]), model.labels_)


@pytest.mark.parametrize("name", SEQ_NAMES)
def test_sequence_pickle_round_trip(name):
    model = _fitted(name)
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.labels_, model.labels_)
    new = BASE[[0, 1, 6, 7]] + 0.5
    np.testing.assert_array_equal(copy.predict(new, lengths=[2, 2]), model.predict(new, lengths=[2, 2]))
    unfitted = pickle.loads(pickle.dumps(SEQ[name]()))
    _fit_ok(unfitted.fit(BASE, lengths=[6, 6]), N, model.labels_)


# ---------------------------------------------------------------- HardHDP with groups
G_HALF = np.array(["a", "b", "c"] * 4)  # three groups, each with rows of both far-apart clusters
ODD_GROUPS = {
    "None": (None, None),
    "strings": (G_HALF, None),
    "ints": (np.arange(N) % 3, None),
    "list": (list(np.arange(N) % 3), None),
    "series": (pd.Series(G_HALF), None),
    "series with shuffled index": (pd.Series(G_HALF, index=np.arange(N)[::-1]), None),
    "categorical": (pd.Categorical(G_HALF), None),
    "mixed int and text": ([1, "1"] * (N // 2), None),
    "tuples": ([(0, 1), (1, 0)] * (N // 2), None),
    "single group": (["only"] * N, None),
    "every row its own group": (list(range(N)), None),
    "floats": (np.arange(N) % 2 + 0.5, None),
    "bools": (np.arange(N) % 2 == 0, None),
    "markdown ids": (["[x](http://a)", "<b>y</b>"] * (N // 2), None),
    "None id": ([None] + [1] * (N - 1), "missing"),
    "pd.NA id": ([pd.NA] + [1] * (N - 1), "missing"),
    "NaN id": ([np.nan] + [1.0] * (N - 1), "missing"),
    "float array with NaN": (np.r_[np.nan, np.ones(N - 1)], "missing"),
    "pd.NaT id": ([pd.NaT] + [1] * (N - 1), "missing"),
    "numpy NaT id": ([np.datetime64("NaT")] + [1] * (N - 1), "missing"),
    "nullable Int64 with NA": (pd.array([1, None] * (N // 2), dtype="Int64"), "missing"),
    "categorical with NaN": (pd.Categorical(["a", None] * (N // 2)), "missing"),
    "series of objects with None": (pd.Series(["a", None] * (N // 2), dtype=object), "missing"),
    "too short": (["a"] * (N - 1), "groups"),
    "too long": (["a"] * (N + 1), "groups"),
    "2-D": (np.zeros((N, 2)), "groups"),
    "scalar": (3, "groups"),
    "text": ("abc", "groups"),
    "unhashable ids": ([[1]] * N, "groups"),
    "dict": ({"a": 1}, "groups"),
}


@pytest.mark.parametrize("case", list(ODD_GROUPS))
def test_hdp_with_odd_groups(case):
    groups, must_fail = ODD_GROUPS[case]

    def check(model):
        _fit_ok(model, N)
        assert len(model.groups_) == model.group_usage_.shape[0]
        assert model.group_usage_.sum() == N

    _run(lambda: HardHDP().fit(BASE, groups=groups), check, must_fail)


def test_hdp_every_kind_of_missing_id_gets_the_same_message():
    messages = set()
    for missing in (None, pd.NA, np.nan, pd.NaT, np.datetime64("NaT"), float("nan")):
        with pytest.raises(ValueError) as info:
            HardHDP().fit(BASE, groups=[1, 1, missing] + [2] * (N - 3))
        _clear_error(info.value)
        messages.add(str(info.value).replace(repr(missing), "?").replace(str(missing), "?"))
    assert len({m.split("(")[0] for m in messages}) == 1, messages
    assert all("row 2" in m for m in messages), messages


HDP_X = ["plain", "object numbers", "object with text", "strings", "one NaN", "one inf", "empty rows", "one row",
         "all constant", "huge 1e200", "1-D", "list of lists", "frame", "frame text column", "None"]


@pytest.mark.parametrize("case", HDP_X)
def test_hdp_on_odd_data(case):
    X, same_numbers = ODD_X[case]
    n_rows = _rows(X)
    groups = None if n_rows is None else (np.arange(n_rows) % 3)
    reference = HardHDP().fit(BASE, groups=np.arange(N) % 3).labels_ if same_numbers else None
    _run(lambda: HardHDP().fit(X, groups=groups), lambda model: _fit_ok(model, n_rows, reference))


@pytest.mark.parametrize("param,value", [("lambda_global", -1), ("lambda_local", np.nan), ("lambda_mean", "x"),
                                         ("divergence", "kl"), ("local_moves", "no"), ("max_iter", 0),
                                         ("tol", -1), ("lambda_global", np.inf)])
def test_hdp_bad_parameters(param, value):
    model = HardHDP().set_params(**{param: value})
    with pytest.raises((ValueError, TypeError)) as info:
        model.fit(BASE, groups=G_HALF)
    _clear_error(info.value)
    fitted = HardHDP().fit(BASE, groups=G_HALF)
    bad = pickle.loads(pickle.dumps(fitted)).set_params(**{param: value})
    _run(lambda: bad.predict(BASE[:3]), lambda labels: _labels_ok(labels, 3))


def test_hdp_predict_before_fit_and_pickle():
    with pytest.raises(ValueError, match="fit") as info:
        HardHDP().predict(BASE)
    _clear_error(info.value)
    model = HardHDP().fit(BASE, groups=G_HALF)
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.predict(BASE), model.predict(BASE))
    np.testing.assert_array_equal(model.predict(BASE), model.labels_)


# ---------------------------------------------------------------- MixedEffectsMAPDP
def _mixed(S=8, n=5, seed=3):
    """S subjects, n observations each, two clusters of slopes far apart (-3 and 3)."""
    rng = np.random.default_rng(seed)
    t = np.tile(np.linspace(-1, 1, n), S)
    X = np.column_stack([np.ones(S * n), t])
    g = np.repeat(np.arange(S), n)
    slope = np.where(np.arange(S) < S // 2, -3.0, 3.0) + rng.normal(0, 0.1, S)
    y = 1.0 + slope[g] * t + rng.normal(0, 0.1, S * n)
    return X, y, g


MX, MY, MG = _mixed()
N_OBS, N_SUBJ = len(MY), 8


def _me(**kw):
    return MixedEffectsMAPDP(**{"n_init": 1, "max_iter": 20, "random_state": 0, **kw})


def _with_cell(a, value, at):
    out = np.array(a, dtype=object)
    out[at] = value
    return out


MIXED = {
    "plain": ((MX, MY, MG), None),
    "frames": ((pd.DataFrame(MX, columns=["a", "b"]), pd.Series(MY), pd.Series(MG)), None),
    "lists": ((MX.tolist(), MY.tolist(), MG.tolist()), None),
    "text subject ids": ((MX, MY, np.array([f"s{g}" for g in MG])), None),
    "single subject": ((MX, MY, np.zeros(N_OBS, dtype=int)), None),
    "every row its own subject": ((MX, MY, np.arange(N_OBS)), None),
    "one column design": ((MX[:, 1:], MY, MG), None),
    "1-D X": ((MX[:, 1], MY, MG), None),
    "y as a column": ((MX, MY[:, None], MG), None),
    "text in X": ((_with_cell(MX, "abc", (2, 1)), MY, MG), "row 2, column 1"),
    "text in y": ((MX, _with_cell(MY, "abc", 2), MG), "row 2"),
    "text numbers in y": ((MX, MY.astype(str), MG), None),
    "NaN in X": ((_with_cell(MX, np.nan, (2, 1)).astype(float), MY, MG), "row 2, column 1"),
    "NaN in y": ((MX, np.r_[np.nan, MY[1:]], MG), "y"),
    "inf in X": ((_with_cell(MX, np.inf, (2, 1)).astype(float), MY, MG), "X"),
    "inf in y": ((MX, np.r_[np.inf, MY[1:]], MG), "y"),
    "None in X": ((_with_cell(MX, None, (2, 1)), MY, MG), "X"),
    "X times 1e200": ((MX * 1e200, MY, MG), "X holds values as large as"),  # not "full column rank"
    "y times 1e200": ((MX, MY * 1e200, MG), "y"),
    "X times 1e-200": ((MX * 1e-200, MY, MG), "too small"),
    "None subject": ((MX, MY, _with_cell(MG, None, 3)), "missing"),
    "NaN subject": ((MX, MY, _with_cell(MG, np.nan, 3)), "missing"),
    "pd.NA subject": ((MX, MY, _with_cell(MG, pd.NA, 3)), "missing"),
    "pd.NaT subject": ((MX, MY, _with_cell(MG, pd.NaT, 3)), "missing"),
    "numpy NaT subject": ((MX, MY, _with_cell(MG, np.datetime64("NaT"), 3)), "missing"),
    "unhashable subject": ((MX, MY, _with_cell(MG, [1], 3)), "groups"),
    "y too short": ((MX, MY[:-1], MG), "y"),
    "groups too short": ((MX, MY, MG[:-1]), "groups"),
    "2-D groups": ((MX, MY, np.column_stack([MG, MG])), "groups"),
    "no y": ((MX, None, MG), "y"),
    "no groups": ((MX, MY, None), "groups"),
    "empty X": ((np.empty((0, 2)), np.empty(0), np.empty(0)), "X"),
    "constant y": ((MX, np.ones(N_OBS), MG), None),
    "text column in frame": ((pd.DataFrame({"a": MX[:, 0], "b": ["u", "v"] * (N_OBS // 2)}), MY, MG), "X"),
    "complex X": ((MX.astype(complex), MY, MG), "complex"),
    "ragged X": (([[1.0, 2.0], [3.0]] * (N_OBS // 2), MY, MG), "X"),
    "ragged y": ((MX, [[1.0], [2.0, 3.0]] * (N_OBS // 2), MG), "y"),
    "dict X": (({"a": 1}, MY, MG), "X"),
    "text X": (("1,2\n3,4", MY, MG), "X"),
    "text y": ((MX, "abc", MG), "y"),
}
_PRIOR = {"m0": np.zeros(2), "B0": np.eye(2), "c0": 1.0, "a0": 4.0}


@pytest.mark.parametrize("case", list(MIXED))
def test_mixed_effects_on_odd_input(case):
    (X, y, groups), must_fail = MIXED[case]

    def check(model):
        n_subjects = len(model.subjects_)
        _fit_ok(model, n_subjects)
        assert np.all(np.isfinite(model.coef_))
        scores = model.score_samples(X, y, groups)
        assert scores.shape == (n_subjects,) and np.all(np.isfinite(scores)), scores

    _run(lambda: _me().fit(X, y, groups), check, must_fail)


def test_mixed_effects_finds_the_two_slopes_in_input_order():
    model = _me().fit(MX, MY, MG)
    _labels_ok(model.labels_, N_SUBJ, np.arange(N_SUBJ) < N_SUBJ // 2)
    order = np.arange(N_SUBJ)[::-1]
    rows = np.concatenate([np.flatnonzero(MG == s) for s in order])
    again = _me().fit(MX[rows], MY[rows], MG[rows])
    assert list(again.subjects_) == list(order)
    _labels_ok(again.labels_, N_SUBJ, order < N_SUBJ // 2)


@pytest.mark.parametrize("param,value", [("N0", -1), ("N0", 0), ("N0", np.nan), ("N0", "1"), ("a_tau", -1),
                                         ("b_tau", np.inf), ("max_iter", 0), ("tol", -1), ("prior", {"zz": 1}),
                                         ("prior", "x"), ("n_init", 0), ("random_state", "seed")])
def test_mixed_effects_bad_parameters_then_fit_and_score(param, value):
    fitted = _me().fit(MX, MY, MG)
    bad = pickle.loads(pickle.dumps(fitted)).set_params(**{param: value})

    def finite(scores):
        assert np.all(np.isfinite(scores)), f"silent non-finite scores {scores}"

    _run(lambda: bad.score_samples(MX, MY, MG), finite)
    with pytest.raises((ValueError, TypeError)) as info:
        bad.fit(MX, MY, MG)
    _clear_error(info.value)


def test_mixed_effects_score_before_fit_and_pickle():
    with pytest.raises(ValueError, match="fit") as info:
        _me().score_samples(MX, MY, MG)
    _clear_error(info.value)
    model = _me().fit(MX, MY, MG)
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_allclose(copy.score_samples(MX, MY, MG), model.score_samples(MX, MY, MG))
    with pytest.raises(ValueError, match="columns") as info:
        model.score_samples(np.ones((N_OBS, 3)), MY, MG)
    _clear_error(info.value)


# ---------------------------------------------------------------- as_data: gaps and infinities
@pytest.mark.parametrize("X,where", [
    (np.array([[1.0, 2.0], [3.0, np.nan]]), "row 1, column 1"),
    (np.array([[np.inf, 2.0], [3.0, 4.0]]), "row 0, column 0"),
    (pd.DataFrame({"age": [1.0, 2.0, None], "h": [1.0, 2.0, 3.0]}), "row 2, column 'age'"),
    (pd.DataFrame({"n": pd.array([1, None, 3], dtype="Int64")}), "row 1, column 'n'"),
    ([[1.0, 2.0], [None, 3.0]], "row 1, column 0"),
])
@pytest.mark.parametrize("with_estimator", [False, True])
def test_as_data_names_the_first_gap_plainly(X, where, with_estimator):
    from mapdp_core import KMeans

    with pytest.raises(ValueError) as info:
        as_data(X, "K-means", KMeans() if with_estimator else None)
    message = str(info.value)
    _clear_error(info.value)
    assert where in message, message
    assert "supervised" not in message and "HistGradientBoosting" not in message, message
    assert "impute" in message


def test_as_data_points_gaps_to_mapdp():
    with pytest.raises(ValueError, match=r"missing value \(NaN\) at row 0.*MAP-DP"):
        as_data(np.array([[np.nan, 1.0]]), "DP-means")


# ---------------------------------------------------------------- settings files and links
def _doc(settings, **extra):
    return json.dumps({"mapdp_explorer_settings": 1, "settings": settings, **extra})


MARKDOWN = "[log in](https://evil.example/x) <script>alert(1)</script> **bold**"
JSON_CASES = {
    "round trip": (settings_to_json({"N0": 2.0, "restarts": 3, "algorithms": ["MAP-DP"]}), None),
    "400-digit N0": ('{"settings": {"N0": ' + "9" * 400 + "}}", "N0"),
    "5000-digit N0": ('{"settings": {"N0": ' + "9" * 5000 + "}}", "N0"),
    "-400-digit N0": ('{"settings": {"N0": -' + "9" * 400 + "}}", "N0"),
    "1e400 N0": ('{"settings": {"N0": 1e400}}', "N0"),
    "1e-400 N0": ('{"settings": {"N0": 1e-400}}', "N0"),
    "huge restarts": ('{"settings": {"restarts": ' + "1" * 40 + "}}", "restarts"),
    "NaN literal": ('{"settings": {"N0": NaN}}', "N0"),
    "Infinity literal": ('{"settings": {"N0": Infinity}}', "N0"),
    "N0 as text": (_doc({"N0": "2.5"}), None),
    "N0 as text word": (_doc({"N0": "many"}), "N0"),
    "N0 as list": (_doc({"N0": [1]}), "N0"),
    "N0 as object": (_doc({"N0": {"a": 1}}), "N0"),
    "N0 true": (_doc({"N0": True}), "N0"),
    "N0 null": (_doc({"N0": None}), "N0"),
    "restarts fraction": (_doc({"restarts": 2.5}), "restarts"),
    "restarts 0": (_doc({"restarts": 0}), "restarts"),
    "seed negative": (_doc({"seed": -1}), "seed"),
    "match_k text yes": (_doc({"match_k": "yes"}), None),
    "match_k 2": (_doc({"match_k": 2}), "match_k"),
    "algorithms dict": (_doc({"algorithms": {"MAP-DP": 1}}), "algorithms"),
    "algorithms nested list": (_doc({"algorithms": [["MAP-DP"]]}), "algorithms"),
    "algorithms number": (_doc({"algorithms": 5}), "algorithms"),
    "algorithms unknown": (_doc({"algorithms": ["MAP-DP", "Nope"]}), "algorithms"),
    "algorithms text": (_doc({"algorithms": "MAP-DP, K-means"}), None),
    "algorithms markdown": (_doc({"algorithms": [MARKDOWN]}), "algorithms"),
    "start markdown": (_doc({"start": MARKDOWN}), "start"),
    "N0 markdown": (_doc({"N0": MARKDOWN}), "N0"),
    "unknown key": (_doc({"N0": 2.0, "colour": "red"}), None),
    "markdown key": (_doc({MARKDOWN: 1}), None),
    "unknown algorithm parameter": (_doc({"MAP-DP:zz": 1}), None),
    "deep nesting in a value": ('{"settings": {"N0": ' + "[" * 5000 + "]" * 5000 + "}}", "nest"),
    "nesting in a value": ('{"settings": {"N0": ' + "[" * 50 + "]" * 50 + "}}", "N0"),
    "deep nesting in the document": ("[" * 100000 + "]" * 100000, "nest"),
    "deep objects": ('{"settings": ' + '{"a": ' * 3000 + "1" + "}" * 3000 + "}", None),
    "settings a list": ('{"settings": [1, 2]}', "settings"),
    "settings null": ('{"settings": null}', "settings"),
    "no settings": ('{"N0": 2}', "settings"),
    "top-level list": ("[1, 2]", "settings"),
    "top-level number": ("12", "settings"),
    "empty": ("", "empty"),
    "spaces": ("   \n", "empty"),
    "not JSON": ("N0 = 2", "JSON"),
    "truncated": ('{"settings": {"N0": 2', "JSON"),
    "trailing comma": ('{"settings": {"N0": 2,}}', "JSON"),
    "prior_relative_to odd": (_doc({"N0": 2.0, "prior_relative_to": "x"}), "prior_relative_to"),
    "prior_relative_to list": (_doc({"prior_relative_to": [1]}), "prior_relative_to"),
    "spread relative to default without chosen": (_doc({"spread": 2.0, "prior_relative_to": "default"}), None),
    "duplicate keys": ('{"settings": {"N0": 2, "N0": 3}}', None),
    "non-text value bytes": (b"\x00\xff\xfe\x00garbage\x89PNG", None),
    "a number": (5, "JSON"),
    "None": (None, "JSON"),
    "a dict": ({"settings": {}}, "JSON"),
    "too large": ('{"settings": {}, "pad": "' + "x" * 1_100_000 + '"}', "MB"),
}
_ENCODED = settings_to_json({"N0": 2.0, "restarts": 3})
JSON_CASES.update({
    "UTF-8 with BOM": (b"\xef\xbb\xbf" + _ENCODED.encode("utf-8"), None),
    "UTF-8 BOM in text": ("\ufeff" + _ENCODED, None),
    "UTF-16 with BOM": (_ENCODED.encode("utf-16"), None),
    "UTF-16-LE without BOM": (_ENCODED.encode("utf-16-le"), None),
    "UTF-16-BE without BOM": (_ENCODED.encode("utf-16-be"), None),
    "UTF-32 with BOM": (_ENCODED.encode("utf-32"), None),
    "bytearray": (bytearray(_ENCODED.encode()), None),
    "memoryview": (memoryview(_ENCODED.encode()), None),
    "latin-1 bytes": ('{"settings": {"caf\u00e9": 1}}'.encode("latin-1"), "UTF"),
})


def _settings_ok(result, expect=None) -> None:
    settings, ignored = result
    assert isinstance(settings, dict) and isinstance(ignored, list)
    assert all(isinstance(k, str) for k in ignored), ignored
    for key, value in settings.items():
        assert key in APP_SETTINGS or ":" in key, key
        if isinstance(value, float):
            assert math.isfinite(value), (key, value)
        if isinstance(value, str):
            assert "<" not in value and "](" not in value, (key, value)
        if isinstance(value, list):
            assert all(isinstance(v, str) and "](" not in v for v in value), (key, value)
    if expect is not None:
        for key, value in expect.items():
            assert settings[key] == value, (key, settings)


@pytest.mark.parametrize("case", list(JSON_CASES))
def test_settings_from_json_on_odd_files(case):
    text, must_fail = JSON_CASES[case]
    expect = {"N0": 2.0, "restarts": 3} if case.startswith(("UTF", "bytearray", "memoryview")) else None
    try:
        result = settings_from_json(text)
    except ValueError as exc:
        _clear_error(exc)
        assert type(exc) is ValueError or issubclass(type(exc), ValueError)
        assert len(str(exc)) < 600, f"a message too long to show: {len(str(exc))} characters"
        if must_fail is not None:
            assert must_fail.lower() in str(exc).lower(), f"message does not name {must_fail!r}: {exc}"
        return
    assert must_fail is None, f"accepted what should be refused ({must_fail}): {result!r}"
    _settings_ok(result, expect)


QUERY_CASES = {
    "plain": ({"N0": "2.0", "restarts": "3"}, None),
    "huge N0": ({"N0": "9" * 400}, "N0"),
    "huge int text": ({"restarts": "1" * 5000}, "restarts"),
    "1e999": ({"N0": "1e999"}, "N0"),
    "nan": ({"N0": "nan"}, "N0"),
    "-inf": ({"N0": "-inf"}, "N0"),
    "hex": ({"N0": "0x10"}, "N0"),
    "underscores": ({"restarts": "1_0"}, None),
    "spaces": ({"N0": "  2  "}, None),
    "empty value": ({"N0": ""}, "N0"),
    "list value": ({"N0": ["1", "2"]}, "N0"),
    "markdown value": ({"start": MARKDOWN}, "start"),
    "markdown N0": ({"N0": MARKDOWN}, "N0"),
    "markdown algorithms": ({"algorithms": MARKDOWN}, "algorithms"),
    "markdown key": ({MARKDOWN: "1"}, None),
    "html key": ({"<img src=x onerror=alert(1)>": "1"}, None),
    "int key": ({5: "1"}, None),
    "algorithms comma list": ({"algorithms": "MAP-DP,K-means"}, None),
    "algorithms empty": ({"algorithms": ""}, None),
    "bool words": ({"match_k": "No", "merge": "TRUE"}, None),
    "bool other": ({"merge": "maybe"}, "merge"),
    "pairs list": ([("N0", "2")], None),
    "not pairs": ([1, 2, 3], "link"),
    "a string": ("N0=2", "link"),
    "None": (None, "link"),
    "a number": (5, "link"),
    "prior_relative_to default": ({"spread": "2", "prior_relative_to": "default"}, None),
    "prior_relative_to odd": ({"prior_relative_to": "<b>x</b>"}, "prior_relative_to"),
    "unicode digits": ({"N0": "\u0662"}, None),
    "long text": ({"N0": "x" * 100000}, "N0"),
}


@pytest.mark.parametrize("case", list(QUERY_CASES))
def test_settings_from_query_on_odd_links(case):
    params, must_fail = QUERY_CASES[case]
    try:
        result = settings_from_query(params)
    except ValueError as exc:
        _clear_error(exc)
        assert len(str(exc)) < 600, f"a message too long to show: {len(str(exc))} characters"
        if must_fail is not None:
            assert must_fail.lower() in str(exc).lower(), f"message does not name {must_fail!r}: {exc}"
        return
    assert must_fail is None, f"accepted what should be refused ({must_fail}): {result!r}"
    _settings_ok(result)


# ---------------------------------------------------------------- more: defaults, divergences, the other entry points
@pytest.mark.parametrize("case", ["plain", "one NaN", "NaN column", "object with None", "frame text column",
                                  "frame categorical", "frame nullable int", "one row", "two rows", "huge 1e200",
                                  "duplicate rows", "frame all None"])
@pytest.mark.parametrize("lengths", [None, "halves", "ones"])
def test_ihmm_with_its_defaults_on_odd_data(case, lengths):
    """MAP-iHMM as a user calls it (likelihood and start chosen automatically: the hard start
    reads a numeric view of the input)."""
    X, _ = ODD_X[case]
    n_rows = _rows(X)
    lens = None if lengths is None else ([n_rows // 2, n_rows - n_rows // 2] if lengths == "halves" and n_rows > 1
                                         else [1] * n_rows)
    _run(lambda: MAPIHMM(max_iter=10, random_state=0).fit(X, lengths=lens), lambda model: _fit_ok(model, n_rows))


_COUNTS = np.vstack([np.tile([5, 0, 1], (6, 1)), np.tile([0, 6, 2], (6, 1))]).astype(float)
DIVERGENCE_X = {
    "counts": (_COUNTS, None),
    "0/1": ((_COUNTS > 0).astype(float), None),
    "negative counts": (_COUNTS - 1, "negative"),
    "fractions for bernoulli": (_COUNTS / 7, None),
    "an empty row": (np.vstack([_COUNTS[:-1], np.zeros(3)]), None),
    "NaN": (_with_cell(_COUNTS, np.nan, (1, 1)).astype(float), "row 1"),
}


@pytest.mark.parametrize("case", list(DIVERGENCE_X))
@pytest.mark.parametrize("divergence", ["poisson", "bernoulli", "multinomial"])
@pytest.mark.parametrize("name", ["HardHDPHMM", "HardHDPHMMDirect", "HardHDP"])
def test_hard_models_with_other_divergences(name, divergence, case):
    X, must_fail = DIVERGENCE_X[case]
    if case == "fractions for bernoulli":
        must_fail = "0/1" if divergence == "bernoulli" else None
    if case == "an empty row":
        must_fail = "sums to 0" if divergence == "multinomial" else None
    if case == "0/1" or (case == "negative counts" and divergence == "bernoulli"):
        must_fail = "0/1" if case == "negative counts" else None
    model = (HardHDP if name == "HardHDP" else SEQ[name])(divergence=divergence)
    extra = {"groups": np.arange(len(X)) % 2} if name == "HardHDP" else {"lengths": [6, 6]}
    _run(lambda: model.fit(X, **extra), lambda fitted: _fit_ok(fitted, len(X)), must_fail)


@pytest.mark.parametrize("name", SEQ_NAMES)
@pytest.mark.parametrize("lengths", [[6, 5], [0, 12], "x"])
def test_iter_sweeps_and_from_states_check_lengths_up_front(name, lengths):
    with pytest.raises(ValueError, match="lengths") as info:
        SEQ[name]().iter_sweeps(BASE, lengths=lengths)
    _clear_error(info.value)
    states = list(SEQ[name]().iter_sweeps(BASE, lengths=[6, 6]))
    with pytest.raises(ValueError, match="lengths") as info:
        SEQ[name]().from_states(BASE, states, lengths=lengths)
    _clear_error(info.value)
    _fit_ok(SEQ[name]().from_states(BASE, states, lengths=[6, 6]), N)


@pytest.mark.parametrize("lengths", [None, [2, 2], [4], [3], [1, 3], "x"])
@pytest.mark.parametrize("method", ["predict_proba", "score_samples", "score"])
def test_ihmm_scores_new_sequences(method, lengths):
    model = _fitted("MAP-iHMM")
    new = BASE[[0, 1, 6, 7]]

    def check(out):
        out = np.asarray(out)
        assert np.all(np.isfinite(out)), out
        if method == "predict_proba":
            assert out.shape == (4, model.n_clusters_) and np.allclose(out.sum(axis=1), 1.0)
        elif method == "score_samples":
            assert out.shape == (4,)

    _run(lambda: getattr(model, method)(new, lengths=lengths), check, "lengths" if lengths in ([3], "x") else None)


def test_mixed_effects_every_kind_of_missing_subject_gets_one_message():
    messages = set()
    for missing in (None, pd.NA, np.nan, pd.NaT, np.datetime64("NaT"), float("nan")):
        with pytest.raises(ValueError, match="missing id .* at row 3") as info:
            _me().fit(MX, MY, _with_cell(MG, missing, 3))
        _clear_error(info.value)
        messages.add(str(info.value).split("(")[0])
    assert len(messages) == 1, messages


@pytest.mark.parametrize("case", ["text in X", "NaN in X", "None subject", "y too short", "X times 1e200",
                                  "every row its own subject", "single subject", "lists"])
def test_mixed_effects_score_samples_on_odd_new_data(case):
    model = _me().fit(MX, MY, MG)
    (X, y, groups), must_fail = MIXED[case]

    def check(scores):
        assert np.all(np.isfinite(scores)), scores

    _run(lambda: model.score_samples(X, y, groups), check, must_fail)


@pytest.mark.parametrize("groups", [np.zeros(N_OBS, dtype=int), np.arange(N_OBS), MG],
                         ids=["single subject", "every row its own subject", "plain"])
def test_mixed_effects_with_an_explicit_prior_labels_every_subject(groups):
    model = _me(prior=_PRIOR).fit(MX, MY, groups)
    _fit_ok(model, len(np.unique(groups)))
    assert list(model.subjects_) == list(pd.unique(groups))
    assert np.all(np.isfinite(model.score_samples(MX, MY, groups)))


@pytest.mark.parametrize("X,where", [
    (np.array([[1.0, 2.0], [3.0, "abc"]], dtype=object), "row 1, column 1 holds 'abc'"),
    (pd.DataFrame({"a": [1.0, 2.0], "b": pd.Series([1.0, {"x": 1}], dtype=object)}), "holds"),
    ([[1.0, 2.0], [3.0, "x"]], "row 1, column 1 holds 'x'"),
    ("1,2\n3,4", "got text"),
    ({"a": [1, 2]}, "got a dict"),
    (None, "got None"),
    (np.float64(3.0), "got a single value"),
    (np.arange(3.0), "Expected 2D array, got 1D array instead (shape (3,))"),
    (np.ones((2, 2), dtype=complex), "complex numbers"),
    (np.ones((2, 2, 2)), "got 3 dimensions"),
    (np.empty((0, 2)), "X is empty (0 rows x 2 columns)"),
    (scipy.sparse.csr_matrix(np.ones((2, 2))), "parse"),  # scikit-learn's words for sparse input
    (scipy.sparse.dok_matrix(np.ones((2, 2))), "parse"),
])
def test_as_data_says_what_is_not_a_table_of_numbers(X, where):
    from mapdp_core import DPMeans

    with pytest.raises((ValueError, TypeError)) as info:
        as_data(X, "DP-means", DPMeans())
    message = str(info.value)
    _clear_error(info.value)
    assert where in message, message
    assert "could not convert" not in message and "array=[" not in message, message


_HDP_FITTED: dict = {}


@pytest.mark.parametrize("case", list(ODD_NEW))
def test_hdp_predict_on_odd_rows(case):
    if "model" not in _HDP_FITTED:
        _HDP_FITTED["model"] = HardHDP().fit(BASE, groups=G_HALF)
    model = _HDP_FITTED["model"]
    X = ODD_NEW[case]
    n_rows = _rows(X)

    def check(labels):
        _labels_ok(labels, n_rows)
        assert np.all(np.asarray(labels) < model.n_clusters_)

    _run(lambda: model.predict(X), check)


def test_mixed_effects_iter_sweeps_and_from_states():
    states = list(_me().iter_sweeps(MX, MY, MG))
    assert states and all(np.all(np.asarray(s.labels) >= 0) for s in states)
    _fit_ok(_me().from_states(MX, MY, MG, states), N_SUBJ)
    with pytest.raises(ValueError, match="missing id") as info:
        _me().iter_sweeps(MX, MY, _with_cell(MG, None, 0))
    _clear_error(info.value)
