"""Prediction on awkward input: far-out values (issue 14.1), categorical columns with very many
levels (14.2) and categories never seen in fitting (14.5)."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import gammaln

from engine_probe import engine_neg_log_predictive
from mapdp_core import MAPDP
from mapdp_core.engine import model_data as _model
from mapdp_core.core.spec import parse
from mapdp_core.core.encoding import codes_of, encode_new_rows, unseen_notes
from mapdp_core.families._common import half_square, lgamma_difference, log1p_square
from mapdp_core.models.mapdp import UnseenCategoryWarning

REAL_FAMILIES = ["normal_wishart", "normal_gamma", "spherical_gaussian", "gaussian_known_cov"]


def _two_blobs(rng, n=60):
    return np.vstack([rng.normal(0, 1, (n, 2)), rng.normal(6, 1, (n, 2))])


def _new_row_nlp(likelihood, x, cluster, prior):
    """-ln f(x | cluster) for a new row x, as prediction computes it (training data may not
    hold values whose squares overflow; new rows may)."""
    x = np.atleast_1d(np.asarray(x, dtype=float))
    model = _model.ModelData(parse(np.asarray(cluster, dtype=float).reshape(-1, x.size), likelihood, prior))
    model.start(np.zeros(model.N, dtype=np.int64))
    nlp, _ = model.score_rows(x[None, :], 1)
    return nlp[0, 0]


def _assert_coherent(model, rows):
    """Finite scores, probabilities that are a distribution, predict = argmax of predict_proba."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or invalid-value warnings either
        proba = model.predict_proba(rows)
        labels = model.predict(rows)
        scores = model.score_samples(rows)
    assert np.all(np.isfinite(proba)) and np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    best = np.argmax(proba, axis=1)
    np.testing.assert_array_equal(labels, np.where(best == model.n_clusters_, model.NEW_CLUSTER, best))
    assert np.all(np.isfinite(scores))
    return proba, labels, scores


# ----------------------------------------------------------------------------- 14.1 far-out values

@pytest.mark.parametrize("family", REAL_FAMILIES)
def test_far_out_rows_get_finite_scores_and_a_distribution(rng, family):
    X = _two_blobs(rng)
    model = MAPDP(N0=1.0, likelihood=family, prior=None, n_init=1, random_state=0).fit(X)
    far = np.array([[1e200, 0.0], [0.0, -1e250], [1e300, -1e300], [1e10, 1e10], [3.0, 3.0]])
    proba, labels, scores = _assert_coherent(model, far)
    assert np.all(scores[:4] < -100)  # very unlikely, but a number
    assert np.all(labels[:4] == model.NEW_CLUSTER)  # the prior predictive is the widest: it wins far out
    # an ordinary row is scored as before: the far-out handling changes nothing near the data
    near = model.score_samples(np.array([[3.0, 3.0]]))
    assert scores[4] == pytest.approx(near[0], rel=1e-12)  # (the known-covariance transform is batched)


def test_far_out_row_with_a_gap_in_a_normal_wishart_block(rng):
    X = _two_blobs(rng)
    model = MAPDP(N0=1.0, likelihood="normal_wishart", prior=None, n_init=1, random_state=0).fit(X)
    _assert_coherent(model, np.array([[1e200, np.nan], [np.nan, -1e300], [1e200, 1e200]]))


def test_student_t_far_out_follows_its_power_law(rng):
    """Beyond the float range of (x - m)^2 the Student-t's -ln f grows as (nu + D) ln|x|: the
    engine at 1e200 u and at 1e100 u (where scipy still agrees) differ by (nu + D) ln 1e100."""
    D = 2
    prior = {"m0": np.array([0.3, -0.2]), "c0": 0.7, "a0": 4.5, "B0": np.array([[0.5, 0.1], [0.1, 0.8]])}
    data = rng.normal(size=(7, D))
    u = np.array([0.6, -0.8])
    moderate = engine_neg_log_predictive("normal_wishart", 1e100 * u, data, prior)
    assert _new_row_nlp("normal_wishart", 1e100 * u, data, prior) == pytest.approx(moderate, rel=1e-14)
    far = _new_row_nlp("normal_wishart", 1e200 * u, data, prior)
    nu = prior["a0"] + len(data) - D + 1
    assert far - moderate == pytest.approx((nu + D) * math.log(1e100), rel=1e-12)
    # normal_gamma: the same law in one dimension, and the exact value from logarithms
    ng = {"m0": 0.5, "c0": 0.3, "a0": 2.0, "b0": 1.5}
    col = rng.normal(3, 2, size=9)
    x = -4e250
    c, a = ng["c0"] + 9, ng["a0"] + 4.5
    m = (ng["c0"] * ng["m0"] + col.sum()) / c
    b = ng["b0"] + 0.5 * ((col - col.mean()) ** 2).sum() + ng["c0"] * 9 * (col.mean() - ng["m0"]) ** 2 / (2 * c)
    nu, s2 = 2 * a, b * (c + 1) / (a * c)
    expected = (gammaln(nu / 2) - gammaln((nu + 1) / 2) + 0.5 * math.log(nu * math.pi * s2)
                + (nu + 1) / 2 * (2 * math.log(abs(x - m)) - math.log(nu * s2)))
    assert _new_row_nlp("normal_gamma", x, col, ng) == pytest.approx(expected, rel=1e-13)


def test_overflow_safe_helpers_agree_with_plain_formulas_where_those_hold():
    for x, loc, ivs in [(1.7, 0.3, 0.9), (-3e5, 2.0, 1e-3), (1e150, -1.0, 2.0)]:
        assert log1p_square(x, loc, ivs) == math.log1p((x - loc) ** 2 * ivs)
        assert half_square(x, loc, 1 / ivs) == 0.5 * (x - loc) ** 2 / (1 / ivs)
    # beyond the float range: ln(1 + t) = ln t, computed from halves
    assert log1p_square(1.5e308, -1.5e308, 0.25) == pytest.approx(2 * (math.log(1.5e308) + math.log(2)) + math.log(0.25), rel=1e-15)
    assert half_square(1e200, 0.0, 1e300) == pytest.approx(0.5 * 1e100, rel=1e-15)  # square overflows, result not
    assert math.isnan(log1p_square(math.nan, 0.0, 1.0))  # a gap stays a gap
    for x, b, c in [(0.0, 2.5, 4.0), (30.0, 1.2, 7.7), (9.9e5, 3.0, 0.4), (1e6, 3.0, 0.4), (2e7, 11.0, 2.5)]:
        assert lgamma_difference(x, b, c) == pytest.approx(gammaln(x + b) - gammaln(x + c), rel=1e-9, abs=1e-9)
    # where the lgammas are equal in double precision the difference still has its value
    assert lgamma_difference(1e200, 2.5, 4.0) == pytest.approx(-1.5 * math.log(1e200), rel=1e-14)


@pytest.mark.parametrize("x", [1e5, 1e7, 1e12, 1e15])
def test_far_out_counts_match_scipy(rng, x):
    geo = {"alpha0": 1.4, "beta0": 0.9}
    data = (rng.geometric(0.4, size=8) - 1).astype(float)
    a, b = geo["alpha0"] + 8, geo["beta0"] + data.sum()
    expected = -stats.betanbinom(1, a, b).logpmf(x)
    assert engine_neg_log_predictive("geometric", x, data, geo) == pytest.approx(expected, rel=1e-9)
    po = {"alpha0": 2.5, "beta0": 1.0}
    counts = rng.poisson(3.0, size=10).astype(float)
    alpha, beta = po["alpha0"] + counts.sum(), po["beta0"] + 10
    expected = -stats.nbinom(alpha, beta / (beta + 1)).logpmf(x)
    assert engine_neg_log_predictive("poisson", x, counts, po) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("family", ["poisson", "geometric"])
def test_counts_beyond_exact_whole_numbers_are_refused(rng, family):
    X = rng.poisson(3.0, size=(50, 1)).astype(float)
    model = MAPDP(N0=1.0, likelihood=family, prior=None, n_init=1, random_state=0).fit(X)
    with pytest.raises(ValueError, match=r"column '0' has 1 value\(s\) above 2\^53"):
        model.predict(np.array([[3.0], [1e200]]))
    _assert_coherent(model, np.array([[3.0], [1e15]]))


# ----------------------------------------------------------------------------- 14.2 many levels

def test_identifier_like_categorical_column_is_refused(rng):
    X = rng.integers(0, 10_000, 4000).astype(float)[:, None]
    with pytest.raises(ValueError, match="looks like an identifier.*leave it out"):
        MAPDP(N0=100.0, likelihood="categorical", prior=None, n_init=1).fit(X)
    few = rng.integers(0, 400, 600).astype(float)[:, None]  # 400 levels in 600 rows: small enough to keep
    MAPDP(N0=1.0, likelihood="categorical", prior=None, n_init=1).fit(few)
    # the automatic search works on a 500-row subsample: a column the whole table supports
    # (600 levels in 3000 rows) is not refused there, where most levels occur once
    wide = rng.integers(0, 600, 3000).astype(float)[:, None]
    model = MAPDP(likelihood="categorical", n_init=1, random_state=0).fit(wide)
    assert model.hyperparameters_["rows_searched"] == 500


def test_cluster_statistics_stop_at_the_memory_bound(rng, monkeypatch):
    """A categorical column of many levels and a huge N0 open a cluster per row; the per-cluster
    counts then stop at MAX_CLUSTER_MEMORY with a message instead of exhausting the machine
    (20 000 rows x 10 000 levels reached 16.8 GB before; 2.0 GB with the 1 GiB bound)."""
    X = rng.integers(0, 300, 700).astype(float)[:, None]  # 300 levels, 700 rows: not an identifier
    monkeypatch.setattr(_model, "MAX_CLUSTER_MEMORY", 300 * 16 * 64)  # room for 64 clusters
    with pytest.raises(ValueError, match=r"opened more than 32 clusters.*categorical column.*lower N0"):
        MAPDP(N0=1e4, likelihood="categorical", prior=None, n_init=1, shuffle=False).fit(X)
    monkeypatch.setattr(_model, "MAX_CLUSTER_MEMORY", 2 ** 30)
    model = MAPDP(N0=1e4, likelihood="categorical", prior=None, n_init=1, shuffle=False, max_iter=2).fit(X)
    assert model.n_clusters_ > 64


# ----------------------------------------------------------------------------- 14.5 unseen categories

def _table(rng, n=80):
    sex = np.where(rng.random(n) < 0.5, "F", "M")
    x = np.where(sex == "F", rng.normal(0, 1, n), rng.normal(5, 1, n))
    return pd.DataFrame({"sex": sex, "x": x, "colour": rng.choice(["red", "blue"], n)})


@pytest.mark.parametrize("likelihood", [{"sex": "categorical", "x": "normal_gamma", "colour": "categorical"}, "auto"])
def test_unseen_category_is_scored_as_missing_and_reported(rng, likelihood):
    df = _table(rng)
    model = MAPDP(N0=1.0, likelihood=likelihood, prior=None, n_init=1, random_state=0).fit(df)
    new = pd.DataFrame({"sex": ["X", "F", "M"], "x": [0.3, 4.0, 5.1], "colour": ["red", "green", "blue"]})
    gapped = new.copy()
    gapped.loc[0, "sex"] = None
    gapped.loc[1, "colour"] = None
    with pytest.warns(UnseenCategoryWarning, match=r"row 0: 'sex' = 'X' never seen in training") as caught:
        proba = model.predict_proba(new)
    assert [(c["row"], c["column"], c["value"]) for c in caught[0].message.cells] == [(0, "sex", "X"),
                                                                                      (1, "colour", "green")]
    np.testing.assert_array_equal(proba, model.predict_proba(gapped))
    with pytest.warns(UnseenCategoryWarning):
        np.testing.assert_array_equal(model.predict(new), model.predict(gapped))
    with pytest.warns(UnseenCategoryWarning):
        np.testing.assert_array_equal(model.score_samples(new), model.score_samples(gapped))
    table = model.unseen_categories(new)
    assert table[["row", "column", "value"]].values.tolist() == [[0, "sex", "X"], [1, "colour", "green"]]
    assert table["note"].tolist() == ["'sex' = 'X' never seen in training; scored without it",
                                      "'colour' = 'green' never seen in training; scored without it"]
    assert model.unseen_categories(gapped).empty


def test_encoding_keeps_raising_unless_asked_to_record():
    with pytest.raises(ValueError, match="not seen when fitting"):
        codes_of(["a", "z"], ["a", "b"], "c")
    cells = []
    out = encode_new_rows(pd.DataFrame({"c": ["a", "z", "z"], "d": [1, 2, 3]}), ["c", "d"],
                          {"c": {"codes": ["a", "b"]}}, unseen=cells)
    assert np.isnan(out["c"].iloc[1]) and out["c"].iloc[0] == 0
    assert unseen_notes(cells, 4) == ["", "'c' = 'z' never seen in training; scored without it",
                                      "'c' = 'z' never seen in training; scored without it", ""]
    two = unseen_notes([{"row": 0, "column": "a", "value": 7}, {"row": 0, "column": "b", "value": "q"}], 1)
    assert two == ["'a' = 7; 'b' = 'q' never seen in training; scored without them"]


def test_predict_page_notes_an_unseen_category_per_row():
    """The Predict page scores a row with an unseen category without that cell and says so in a
    'note' column, instead of rejecting the whole table."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=300)
    at.run()
    at.switch_page("pages/data.py").run()
    at.selectbox(key="w_builtin").set_value("palmer_penguins").run()
    at.button(key="use_builtin").click().run()
    data = at.session_state["data"]
    assert "island" in data.features
    at.switch_page("pages/predict.py").run()
    assert not at.exception and not at.error
    at.session_state["w_predict_form"] = {"edited_rows": {0: {"island": "Atlantis"}},
                                          "added_rows": [dict(data.table[data.features].iloc[1])], "deleted_rows": []}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    result = next(df.value for df in at.dataframe if "note" in df.value.columns)
    assert len(result) == 2
    assert result["note"].tolist() == ["'island' = 'Atlantis' never seen in training; scored without it", ""]
    assert result["assigned"].str.len().gt(0).all() and np.isfinite(result["log density"]).all()
    assert any("never seen in training" in w.value for w in at.warning)


def test_predict_page_download_neutralises_formulas(monkeypatch):
    """The predictions download is written by csv_bytes: a typed-in '=...' cell (here also an
    unseen category) cannot run as a formula in a spreadsheet."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from mapdp_core.data.loading import export

    written = []

    def recording_csv_bytes(frame):
        written.append(original(frame))
        return written[-1]

    original = export.csv_bytes
    monkeypatch.setattr(export, "csv_bytes", recording_csv_bytes)  # the page imports it at each run
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=300)
    at.run()
    at.switch_page("pages/data.py").run()
    at.selectbox(key="w_builtin").set_value("palmer_penguins").run()
    at.button(key="use_builtin").click().run()
    at.switch_page("pages/predict.py").run()
    at.session_state["w_predict_form"] = {"edited_rows": {0: {"island": '=HYPERLINK("x")'}}, "added_rows": [],
                                          "deleted_rows": []}
    at.run()
    assert not at.exception and not at.error
    assert any(b.proto.label == "Download the predictions (CSV)" for b in at.get("download_button"))
    assert written and b"'=HYPERLINK" in written[-1] and b',=HYPERLINK' not in written[-1]
