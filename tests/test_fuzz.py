"""Fuzz suite: a few hundred bad or odd inputs to the loaders and the estimators (issue 14).

Each case ends in one of two ways, and nothing else counts as a pass:

* a clear error: a ValueError or TypeError (the loaders' DataLoadError is a ValueError)
  whose message is plain words, free of numba/numpy internals (:data:`INTERNALS`);
* a correct result: one finite whole-number label per input row and finite scores; for
  input that holds the same numbers as the base table in another form (ints, float32,
  object arrays, lists, a DataFrame), the same partition as the base table's, row by row,
  so a result that lost or reordered rows shows.

Cases are generated from small tables of inputs crossed with every estimator, so the
count is large and the code small. Data are tiny and the settings quick (fixed N0 and
prior where the automatic search is not what is tested, few sweeps), to keep the file
within about a minute on two cores.
"""
from __future__ import annotations

import datetime
import io
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse

from mapdp_core import CollapsedGibbs, DPMeans, EMGaussianMixture, KMeans, MAPDP, VariationalDP
from mapdp_core.data.loading import read_table, suggest_roles_and_families

#: phrases that only numba, numpy or Python internals produce: a message holding one did
#: not come from the library's own checks
INTERNALS = ("ufunc", "reduction operation", "SeedSequence", "array element with a sequence", "index out of bounds",
             "nopython", "Traceback", "math domain error", "could not be promoted", "DTypePromotionError",
             "object of type", "unhashable type", "has no attribute", "not subscriptable", "invalid value encountered")

# ---------------------------------------------------------------- data
_RNG = np.random.default_rng(7)
N_HALF = 6
#: two far-apart groups: rows 0..5 near 0, rows 6..11 near 50 (any correct clustering splits them by position)
BASE = np.vstack([_RNG.normal(0, 1, (N_HALF, 2)), _RNG.normal(50, 1, (N_HALF, 2))])
N = len(BASE)


def _with(value, at=(1, 1), X=BASE):
    out = np.array(X, dtype=float)
    out[at] = value
    return out


def _frame(**extra):
    df = pd.DataFrame(BASE, columns=["x", "y"])
    for k, v in extra.items():
        df[k] = v
    return df


#: name -> (X, whether it holds the base table's numbers, so the partition must be the base table's)
ODD_X = {
    "plain": (BASE, True),
    "ints": (np.round(BASE).astype(int), False),
    "float32": (BASE.astype(np.float32), False),
    "bools": (BASE > 25, False),
    "object numbers": (BASE.astype(object), True),
    "object with None": (np.where(np.arange(N * 2).reshape(N, 2) == 3, None, BASE.astype(object)), False),
    "object with text": (np.where(np.arange(N * 2).reshape(N, 2) == 3, "abc", BASE.astype(object)), False),
    "object with dict": (np.where(np.arange(N * 2).reshape(N, 2) == 3, {"a": 1}, BASE.astype(object)), False),
    "strings": (BASE.astype(str), False),
    "one NaN": (_with(np.nan), False),
    "one inf": (_with(np.inf), False),
    "one -inf": (_with(-np.inf), False),
    "all NaN": (np.full((N, 2), np.nan), False),
    "NaN column": (_with(np.nan, (slice(None), 1)), False),
    "empty rows": (np.empty((0, 2)), False),
    "empty columns": (np.empty((N, 0)), False),
    "one row": (BASE[:1], False),
    "two rows": (BASE[[0, -1]], False),
    "one column": (BASE[:, :1], False),
    "constant column": (_with(3.0, (slice(None), 1)), False),
    "all constant": (np.ones((N, 2)), False),
    "duplicate rows": (np.repeat(BASE[:1], N, axis=0), False),
    "huge 1e200": (BASE * 1e200, False),
    "one huge cell": (_with(1e300), False),
    "near max float": (_with(np.finfo(float).max), False),
    "tiny 1e-200": (BASE * 1e-200, False),
    "subnormal": (_with(5e-324), False),
    "negative": (-BASE, False),
    "1-D": (BASE[:, 0], False),
    "3-D": (BASE.reshape(N, 2, 1), False),
    "scalar": (np.float64(3.0), False),
    "ragged list": ([[1.0, 2.0], [3.0]] * 3, False),
    "nested cells": ([[1.0, [2.0, 3.0]], [1.0, 2.0]], False),
    "list of lists": (BASE.tolist(), True),
    "complex": (BASE.astype(complex), False),
    "sparse": (scipy.sparse.csr_matrix(BASE), False),
    "dict": ({"x": 1}, False),
    "None": (None, False),
    "text": ("1,2\n3,4", False),
    "frame": (_frame(), True),
    "frame text column": (_frame(s=["a", "b"] * N_HALF), False),
    "frame dates": (_frame(d=pd.date_range("2020-01-01", periods=N)), False),
    "frame durations": (_frame(d=pd.to_timedelta(np.arange(N), unit="h")), False),
    "frame datetime objects": (_frame(d=[datetime.datetime(2020, 1, i + 1) for i in range(N)]), False),
    "frame int objects": (_frame(d=pd.Series(range(N), dtype=object)), False),
    "frame all None": (_frame(d=[None] * N), False),
    "frame bool": (_frame(b=[True, False] * N_HALF), False),
    "frame nullable int": (_frame(n=pd.array([1, None] * N_HALF, dtype="Int64")), False),
    "frame categorical": (_frame(c=pd.Categorical(["u", "v"] * N_HALF)), False),
    "frame duplicate names": (pd.DataFrame(BASE, columns=["x", "x"]), False),
    "frame mixed objects": (_frame(m=[1, "a"] * N_HALF), False),
    "series": (pd.Series(BASE[:, 0]), False),
}

QUICK = {
    "MAPDP": lambda **kw: MAPDP(**{"N0": 1.0, "prior": None, "likelihood": "normal_wishart", "n_init": 1,
                                   "random_state": 0, **kw}),
    "MAPDP auto": lambda **kw: MAPDP(**{"n_init": 1, "random_state": 0, **kw}),
    "Gibbs": lambda **kw: CollapsedGibbs(**{"n_sweeps": 3, "random_state": 0, **kw}),
    "KMeans": lambda **kw: KMeans(**{"n_clusters": 2, "n_init": 1, "random_state": 0, **kw}),
    "DPMeans": lambda **kw: DPMeans(**{"lam": 100.0, **kw}),
    "EM": lambda **kw: EMGaussianMixture(**{"n_components": 2, "max_iter": 5, "random_state": 0, **kw}),
    "VDP": lambda **kw: VariationalDP(**{"n_components": 2, "max_iter": 5, "random_state": 0, **kw}),
}


# ---------------------------------------------------------------- the two outcomes
def _clear_error(exc: BaseException) -> None:
    assert isinstance(exc, (ValueError, TypeError)), f"{type(exc).__name__}: {exc}"
    message = str(exc)
    assert message.strip(), f"{type(exc).__name__} without a message"
    leaked = [w for w in INTERNALS if w.lower() in message.lower()]
    assert not leaked, f"message speaks internals {leaked}: {message}"


def _labels_ok(labels, n_rows: int, reference=None) -> None:
    labels = np.asarray(labels)
    assert labels.shape == (n_rows,), f"{labels.shape} labels for {n_rows} rows"
    assert np.issubdtype(labels.dtype, np.integer) or np.all(labels == np.round(labels))
    assert np.all(np.isfinite(labels.astype(float)))
    if reference is not None:  # every row back, in order: the same partition, row by row
        reference = np.asarray(reference)
        assert np.array_equal(labels[:, None] == labels[None, :], reference[:, None] == reference[None, :]), \
            (labels, reference)


def _run(action, check=None, must_fail=None):
    """``action()`` ends in a clear error (None) or its result, which ``check`` accepts. With
    ``must_fail`` (a word), only an error whose message holds that word passes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = action()
        except (ValueError, TypeError) as exc:
            _clear_error(exc)
            if must_fail is not None:
                assert must_fail.lower() in str(exc).lower(), f"message does not name {must_fail!r}: {exc}"
            return None
    assert must_fail is None, f"accepted what should be refused ({must_fail}): {result!r}"
    if check is not None:
        check(result)
    return result


def _rows(X) -> int | None:
    try:
        return len(X) if not np.isscalar(X) and X is not None else None
    except TypeError:
        return None


# ---------------------------------------------------------------- estimators x odd X
_REFERENCE: dict = {}


def _reference(name):
    """The labels of estimator ``name`` on the base table, fitted once."""
    if name not in _REFERENCE:
        _REFERENCE[name] = QUICK[name]().fit(BASE).labels_
    return _REFERENCE[name]


@pytest.mark.parametrize("case", list(ODD_X))
@pytest.mark.parametrize("name", list(QUICK))
def test_fit_on_odd_data(name, case):
    X, same_numbers = ODD_X[case]
    model = QUICK[name]()
    n_rows = _rows(X)
    reference = _reference(name) if same_numbers else None
    _run(lambda: model.fit(X).labels_, lambda labels: _labels_ok(labels, n_rows, reference))


# ---------------------------------------------------------------- odd parameters
ODD_PARAMS = {
    "MAPDP": {"N0": [-1, 0, np.nan, np.inf, "3", [1], None, True], "tol": [-1, "a", np.nan],
              "max_iter": [0, 2.5, "10"], "n_init": [0, -1, 1.5], "shuffle": ["no", 2], "n_jobs": [0, "all"],
              "random_state": [1.5, -1, "seed", [1, 2]], "likelihood": [5, None, "gaussian", ["normal_gamma"]],
              "prior": [5, "none", [1]], "init": ["abc", [0, 1], np.zeros((N, 2))]},
    "Gibbs": {"N0": [-1, "a"], "n_sweeps": [0, 1.5], "n_init": [0], "random_state": [1.5]},
    "KMeans": {"n_clusters": [0, N + 1, 1.5, "2", None], "init": ["kmeans", np.zeros((3, 2)), [[0, 0], [1]]],
               "n_init": [0], "max_iter": [0], "tol": [-1, "a"], "random_state": [1.5, "a"]},
    "DPMeans": {"lam": [-1, np.nan, "a", None], "max_iter": [0], "tol": [-1], "shuffle": ["yes"], "n_init": [0],
                "random_state": [1.5]},
    "EM": {"n_components": [0, N + 1, "2"], "covariance_type": ["round", None], "max_iter": [0], "tol": [-1, "a"],
           "n_init": [0], "random_state": [1.5]},
    "VDP": {"n_components": [0], "weight_concentration_prior": [-1.0, "a"], "max_iter": [0], "random_state": [1.5]},
}
PARAM_CASES = [(name, param, value) for name, params in ODD_PARAMS.items()
               for param, values in params.items() for value in values]


@pytest.mark.parametrize("name,param,value", PARAM_CASES, ids=[f"{n}-{p}-{v!r:.20}" for n, p, v in PARAM_CASES])
def test_odd_parameters_set_after_construction(name, param, value):
    model = QUICK[name]().set_params(**{param: value})  # stored as given; fit validates
    _run(lambda: model.fit(BASE).labels_, lambda labels: _labels_ok(labels, N))


# ---------------------------------------------------------------- odd priors and likelihood specifications
ODD_SPECS = {
    "prior string value": ("normal_wishart", {"c0": "a"}),
    "prior None value": ("normal_wishart", {"c0": None}),
    "prior list value": ("normal_wishart", {"c0": [1.0, 2.0]}),
    "prior nested ragged": ("normal_wishart", {"m0": [[1.0], [2.0, 3.0]]}),
    "prior negative c0": ("normal_wishart", {"c0": -1.0}),
    "prior unknown key": ("normal_wishart", {"zz": 1.0}),
    "prior dict value": ("normal_wishart", {"c0": {"a": 1}}),
    "prior bool value": ("normal_wishart", {"c0": True}),
    "prior inf value": ("normal_wishart", {"a0": np.inf}),
    "singular B0": ("normal_wishart", {"B0": np.diag([1e-300, 1.0])}),
    "indefinite B0": ("normal_wishart", {"B0": [[1.0, 2.0], [2.0, 1.0]]}),
    "B0 wrong shape": ("normal_wishart", {"B0": np.eye(3)}),
    "singular Sigma": ("gaussian_known_cov", {"Sigma": np.diag([1e-300, 1.0])}),
    "singular Sigma0": ("gaussian_known_cov", {"Sigma0": np.diag([1.0, 1e-300])}),
    "Sigma text": ("gaussian_known_cov", {"Sigma": [["a", "b"], ["c", "d"]]}),
    "sigma2 negative": ("spherical_gaussian", {"sigma2": -1.0}),
    "poisson on reals": ("poisson", None),
    "bernoulli on reals": ("bernoulli", None),
    "categorical on reals": ("categorical", None),
    "exponential on negatives": ("exponential", None),
    "empty tuple key": ({(): "normal_wishart", 0: "normal_gamma", 1: "normal_gamma"}, None),
    "empty tuple only": ({(): "normal_gamma"}, None),
    "empty tuple prior key": ({(0, 1): "normal_wishart"}, {(): {"c0": 1.0}}),
    "unknown column": ({"z": "normal_gamma", 0: "normal_gamma", 1: "normal_gamma"}, None),
    "column twice": ({(0, 1): "normal_wishart", 0: "normal_gamma"}, None),
    "column missing": ({0: "normal_gamma"}, None),
    "negative column index": ({-1: "normal_gamma", 0: "normal_gamma"}, None),
    "float key": ({0.5: "normal_gamma", 0: "normal_gamma", 1: "normal_gamma"}, None),
    "family not a string": ({0: 5, 1: "normal_gamma"}, None),
    "list too short": (["normal_gamma"], None),
    "list too long": (["normal_gamma"] * 3, None),
    "set likelihood": ({"normal_gamma"}, None),
    "two normal_wishart blocks": ({(0,): "normal_wishart", (1,): "normal_wishart"}, None),
    "prior keyed by family": ({0: "normal_gamma", 1: "normal_gamma"}, {"normal_gamma": {"b0": 1.0}}),
    "prior keyed by column": ({0: "normal_gamma", 1: "normal_gamma"}, {0: {"b0": 1.0}}),
    "prior not a dict per key": ({0: "normal_gamma", 1: "normal_gamma"}, {0: 1.0}),
    "hyperparameters with auto likelihood": ("auto", {"c0": 1.0}),
    "categorical ragged alpha0": ("categorical", {"alpha0": [[1, 1, 1], [1, 1]]}),
    "categorical ragged alpha0 too few": ("categorical", {"alpha0": [[1], [1, 1]]}),
    "categorical alpha0 text": ("categorical", {"alpha0": ["a", "b"]}),
}
CATEGORICAL = np.column_stack([np.r_[np.zeros(N_HALF), np.full(N_HALF, 2)], np.r_[np.zeros(N_HALF), np.ones(N_HALF)]])


@pytest.mark.parametrize("case", list(ODD_SPECS))
def test_odd_priors_and_likelihoods(case):
    likelihood, prior = ODD_SPECS[case]
    X = CATEGORICAL if likelihood == "categorical" else BASE
    if case == "exponential on negatives":
        X = -np.abs(BASE) - 1
    model = MAPDP(N0=1.0, likelihood=likelihood, prior=prior, n_init=1, random_state=0)
    _run(lambda: model.fit(X).labels_, lambda labels: _labels_ok(labels, N))


def test_the_documented_ragged_categorical_prior_fits():
    model = MAPDP(N0=1.0, likelihood="categorical", prior={"alpha0": [[1, 1, 1], [1, 1]]}, n_init=1).fit(CATEGORICAL)
    _labels_ok(model.labels_, N)
    assert [a.size for a in model.prior_[0]["alpha0"]] == [3, 2]


# ---------------------------------------------------------------- predict / score on odd new rows
ODD_NEW = {
    "plain": BASE[:3],
    "one row 2-D": BASE[:1],
    "one row 1-D": BASE[0],
    "one row list": BASE[0].tolist(),
    "wrong width": np.zeros((2, 3)),
    "one column": BASE[:, :1],
    "no rows": np.empty((0, 2)),
    "NaN row": np.full((1, 2), np.nan),
    "inf": _with(np.inf, (0, 0), BASE[:2]),
    "huge far row": np.full((1, 2), 1e200),
    "strings": np.array([["a", "b"]]),
    "object numbers": BASE[:3].astype(object),
    "3-D": BASE[:2].reshape(2, 2, 1),
    "frame": pd.DataFrame(BASE[:3], columns=["0", "1"]),
    "frame wrong columns": pd.DataFrame(BASE[:3], columns=["p", "q"]),
    "None": None,
}
PREDICTORS = {
    "MAPDP": lambda: QUICK["MAPDP"]().fit(BASE),
    "MAPDP auto": lambda: QUICK["MAPDP auto"]().fit(BASE),
    "KMeans": lambda: QUICK["KMeans"]().fit(BASE),
    "DPMeans": lambda: QUICK["DPMeans"]().fit(BASE),
}
_FITTED: dict = {}


def _fitted(name):
    if name not in _FITTED:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITTED[name] = PREDICTORS[name]()
    return _FITTED[name]


@pytest.mark.parametrize("method", ["predict", "score"])
@pytest.mark.parametrize("case", list(ODD_NEW))
@pytest.mark.parametrize("name", list(PREDICTORS))
def test_predict_and_score_on_odd_rows(name, case, method):
    model = _fitted(name)
    if not hasattr(model, method):
        pytest.skip(f"{name} has no {method}")
    X = ODD_NEW[case]
    n_rows = _rows(X)

    def check(result):
        if method == "predict":
            labels = np.asarray(result)
            assert labels.shape == (n_rows,) and np.all(labels >= -1)
        else:
            assert np.isfinite(result)

    _run(lambda: getattr(model, method)(X), check)


def test_a_one_dimensional_row_is_refused_by_predict_in_scikit_learns_words():
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array instead"):
        _fitted("MAPDP").predict(BASE[0])


# ---------------------------------------------------------------- loaders on odd bytes
ODD_BYTES = {
    "empty": b"",
    "only newline": b"\n",
    "header only": b"a,b\n",
    "one data row": b"a,b\n1,2\n",
    "plain": b"a,b\n" + b"".join(f"{x:.3f},{y:.3f}\n".encode() for x, y in BASE),
    "semicolon decimal comma": b"a;b\n" + b"".join(f"{x:.3f};{y:.3f}\n".replace(".", ",").encode() for x, y in BASE),
    "tabs": b"a\tb\n" + b"".join(f"{x:.2f}\t{y:.2f}\n".encode() for x, y in BASE),
    "ragged rows": b"a,b,c\n1,2\n3,4,5,6\n7\n8,9,10\n11,12,13\n",
    "unbalanced quote": b'a,b\n"1,2\n3,4\n5,6\n7,8\n',
    "nul bytes": b"a,b\n1,\x002\n3,4\n5,6\n",
    "random binary": bytes(np.random.default_rng(0).integers(0, 256, 300, dtype=np.uint8)),
    "png signature": b"\x89PNG\r\n\x1a\n" + b"\x00" * 50,
    "pdf signature": b"%PDF-1.4\n" + b"x" * 50,
    "zip signature": b"PK\x03\x04" + b"\x00" * 50,
    "html": b"<!DOCTYPE html><html><body><table><tr><td>1</td></tr></table></body></html>",
    "utf-16 bom": "a,b\n1,2\n3,4\n5,6\n".encode("utf-16"),
    "utf-8 bom": b"\xef\xbb\xbfa,b\n1,2\n3,4\n5,6\n",
    "latin-1": "name,v\nJos\u00e9,1\nRen\u00e9e,2\nZo\u00eb,3\n".encode("latin-1"),
    "duplicate header": b"a,a\n1,2\n3,4\n5,6\n",
    "all missing": b"a,b\nNA,NA\n?,?\n,\n",
    "infinities": b"a,b\ninf,1\n-inf,2\n3,Infinity\n4,5\n",
    "huge numbers": b"a,b\n1e200,1\n2e300,2\n1e308,3\n4,5\n",
    "overflowing numbers": b"a,b\n1e400,1\n2,2\n3,3\n",
    "very long line": b"a,b\n" + b"1" * 100000 + b",2\n3,4\n5,6\n",
    "many columns": (",".join(f"c{i}" for i in range(300)) + "\n" + ",".join("1" for _ in range(300)) + "\n") .encode() * 1,
    "only commas": b",,,\n,,,\n,,,\n",
    "sep line": b"sep=;\na;b\n1;2\n3;4\n5;6\n",
    "text only": b"name,colour\nann,red\nbob,blue\ncid,red\n",
    "mixed types": b"a,b\n1,x\n2,3\nfoo,4\n5,6\n",
    "dates": b"when,v\n2020-01-01,1\n2020-01-02,2\n2020-01-03,3\n2020-01-04,4\n",
    "carriage returns": b"a,b\r1,2\r3,4\r5,6\r",
    "whitespace": b"   \n\t\n  \n",
    "bom only": b"\xef\xbb\xbf",
    "control chars": b"a,b\n\x01\x02,\x03\n\x04,\x05\n",
}


#: real-world number formats (issue 29): name -> (file, column, the values read: numbers, or text for codes).
#: Each file has an ``id`` column r0, r1, ... so that a lost or reordered row shows.
_NAN = float("nan")


def _numbers_file(cells, delimiter=",", quote=False):
    q = '"' if quote else ""
    return ("id" + delimiter + "v\n" + "".join(f"r{i}{delimiter}{q}{c}{q}\n" for i, c in enumerate(cells))).encode()


NUMBER_FORMATS = {
    "percentages": (_numbers_file(["12%", "45%", "7.5%", "80%"]), [12, 45, 7.5, 80]),
    "fractions among percentages": (_numbers_file(["0.12", "12%", "45%", "", "50%"]), [12, 12, 45, _NAN, 50]),
    "accounting negatives": (_numbers_file(["(12)", "5", "(3)", "0"]), [-12, 5, -3, 0]),
    "accounting with thousands": (_numbers_file(["(1,234.50)", "7", "(2,000)"], quote=True), [-1234.5, 7, -2000]),
    "accounting with a gap": (_numbers_file(["(12)", "NA", "5", "(7)"]), [-12, _NAN, 5, -7]),
    "euro suffix": (_numbers_file(["1.200 \u20ac", "3,50 \u20ac", "12 \u20ac"], ";"), [1200, 3.5, 12]),
    "euro prefix with a gap": (_numbers_file(["\u20ac1.200", "", "\u20ac3,50"], ";"), [1200, _NAN, 3.5]),
    "12,000 beside 1,5": (_numbers_file(["12,000", "1,5", "3"], quote=True), [12, 1.5, 3]),
    "12,000 beside 1,5 semicolon": (_numbers_file(["12,000", "1,5", "3"], ";"), [12, 1.5, 3]),
    "dollars": (_numbers_file(["$1,200.50", "$3", "$10.25"], quote=True), [1200.5, 3, 10.25]),
    "leading zeros": (_numbers_file(["02134", "10115", "007", "80331"]), ["02134", "10115", "007", "80331"]),
    "leading zeros with gaps": (_numbers_file(["02134", "", "007", "NA", "80331"]),
                                ["02134", _NAN, "007", _NAN, "80331"]),
    "leading zeros quoted": (_numbers_file(["0044", "0100", "12"], quote=True), ["0044", "0100", "12"]),
    "signed codes": (_numbers_file(["-07", "+03", "12"]), ["-07", "+03", "12"]),
    "leading zeros tab": (_numbers_file(["02134", "10115", "0"], "\t"), ["02134", "10115", "0"]),
    "18-digit ids": (_numbers_file([str(110101199003071234 + i) for i in range(6)]),
                     [str(110101199003071234 + i) for i in range(6)]),
    "18-digit ids with a gap": (_numbers_file([str(110101199003071234 + i) if i != 2 else "" for i in range(6)]),
                                [str(110101199003071234 + i) if i != 2 else _NAN for i in range(6)]),
    "19-digit ids": (_numbers_file([str(9110101199003071234 + i) for i in range(5)]),
                     [str(9110101199003071234 + i) for i in range(5)]),
    "20-digit ids with a gap": (_numbers_file([str(11010119900307123450 + i) if i != 0 else "NA" for i in range(5)]),
                                [_NAN] + [str(11010119900307123450 + i) for i in range(1, 5)]),
    "semicolon ids and codes": (_numbers_file(["110101199003071234", "02134", "110101199003071236"], ";"),
                                ["110101199003071234", "02134", "110101199003071236"]),
}
ODD_BYTES.update({f"number format: {k}": data for k, (data, _) in NUMBER_FORMATS.items()})


@pytest.mark.parametrize("case", list(NUMBER_FORMATS))
@pytest.mark.parametrize("fast", [False, True], ids=["careful", "pandas"])
def test_real_world_number_formats_read_every_row_and_value(case, fast):
    from mapdp_core.data.loading import DataLoadError
    from mapdp_core.data.loading.read import _read_table

    data, expected = NUMBER_FORMATS[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            df, _ = _read_table(data, sheet=None, header="auto", name=None, min_rows=1,
                                fast_path_bytes=0 if fast else 10**9)
        except DataLoadError:  # a clear refusal is allowed; nothing else
            return
    assert df["id"].tolist() == [f"r{i}" for i in range(len(expected))]  # every row, in order
    got = df["v"].tolist()
    for g, e in zip(got, expected):
        if isinstance(e, str):
            assert g == e, (got, expected)
        elif e != e:
            assert g != g, (got, expected)
        else:
            assert isinstance(g, (int, float)) and abs(g - e) < 1e-9, (got, expected)


@pytest.mark.parametrize("case", list(ODD_BYTES))
def test_loaders_on_odd_bytes(case):
    data = ODD_BYTES[case]

    def check(result):
        df, report = result
        assert isinstance(df, pd.DataFrame) and df.shape[0] >= 1
        table = suggest_roles_and_families(df)
        assert len(table) == df.shape[1]

    _run(lambda: read_table(data), check)
    _run(lambda: read_table(io.BytesIO(data), name="upload.csv"), check)


@pytest.mark.parametrize("case", ["plain", "semicolon decimal comma", "tabs", "latin-1", "infinities", "huge numbers",
                                  "mixed types", "dates", "text only", "utf-16 bom"])
def test_loaded_tables_cluster_or_say_why(case):
    def fit(result):
        df, _ = result
        return _run(lambda: MAPDP(N0=1.0, prior=None, n_init=1, random_state=0).fit(df).labels_,
                    lambda labels: _labels_ok(labels, len(df)))

    _run(lambda: read_table(ODD_BYTES[case]), fit)
