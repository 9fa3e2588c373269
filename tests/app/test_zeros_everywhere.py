"""Zeros marked "not measured" are gaps everywhere (issue 42, item 1): any number column with
zeros can be chosen on the Data page (not only those the app flags), in words; once chosen, no
such zero reaches a profile, a test, the imputed values, a download, a prediction or the report,
and the Data page, its preview and the sidebar count the same missing cells."""
import html
import warnings

import numpy as np
import pandas as pd
import pytest

from apptools import ok, shown, start, table
from explorer import report, runner, sources
from explorer.subtype_report import subtype_report_html
from mapdp_core.evaluation.profiles import cluster_profiles, feature_tests

ZEROS = {"hba1c": 30, "crp": 41}


def _lab_table(seed: int = 0) -> pd.DataFrame:
    """Three groups of 50 patients; hba1c's 30 zeros lie far below its values (flagged), crp's 41
    zeros lie just below its values (not flagged: only the user knows they mean "not measured")."""
    rng = np.random.default_rng(seed)
    n, g = 150, np.repeat([0, 1, 2], 50)
    hba1c = np.round(np.array([5.1, 6.5, 9.0])[g] + rng.normal(0, 0.4, n), 1)
    crp = np.round(np.clip(np.array([2.0, 4.0, 6.0])[g] + rng.normal(0, 0.8, n), 0.1, None), 1)
    age = np.round(np.array([40, 55, 70])[g] + rng.normal(0, 5, n))
    hba1c[rng.choice(n, ZEROS["hba1c"], replace=False)] = 0
    crp[rng.choice(n, ZEROS["crp"], replace=False)] = 0
    return pd.DataFrame({"patient": [f"P{i:03d}" for i in range(n)], "age": age, "hba1c": hba1c, "crp": crp,
                         "group": [f"g{v}" for v in g]})


def _csv() -> bytes:
    return _lab_table().to_csv(index=False).encode()


@pytest.fixture(scope="module")
def fitted():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = sources.table_data(_lab_table(), roles={"group": "label"}, zeros_as_missing=list(ZEROS))
        choice = runner.auto_settings(data)
        params = {**runner.mapdp_settings(choice), "restarts": 1, "seed": 0, "time_budget": 60.0}
        run = runner.run(data, "MAP-DP", {k: v for k, v in params.items()
                                          if k not in ("restarts", "seed", "time_budget")}, restarts=1)
        model = runner.fitted_model(data, run)
    return data, choice, params, run, model


def test_the_data_page_offers_every_number_column_with_zeros_and_counts_agree():
    at = start(300)
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Upload a table").run()
    at.file_uploader(key="w_upload").upload("labs.csv", _csv(), "text/csv").run()
    ok(at)
    choice = at.multiselect(key="w_upload_zeros")
    offered = [o.split(":")[0] for o in choice.options]  # shown as "crp: 41 zero(s)"
    assert {"hba1c", "crp"} <= set(offered) and "age" not in offered and choice.value == []
    assert offered.index("hba1c") < offered.index("crp")  # the flagged column first
    assert "crp: 41 zero(s)" in choice.options
    page = " ".join(shown(m.value) for m in at.markdown) + " ".join(shown(c.value) for c in at.caption)
    assert "zeros_as_missing" not in page and "prepare" not in page  # no Python on a clinician's page
    at.multiselect(key="w_upload_zeros").set_value(["hba1c", "crp"]).run()
    at.button(key="use_upload").click().run()
    ok(at)
    d = at.session_state["data"]
    assert int(d.X.isna().to_numpy().sum()) == sum(ZEROS.values())
    summary = next(shown(m.value) for m in at.markdown if "Missing values" in m.value)
    assert f"{sum(ZEROS.values())} cells" in summary, summary
    import streamlit as st  # the sidebar's line (AppTest runs the page alone after switch_page, not app.py)

    from ui import common
    st.session_state["data"] = d
    try:
        badge = shown(common.data_badge())
    finally:
        del st.session_state["data"]
    assert f"{sum(ZEROS.values())} missing cells in the features" in badge, badge
    preview = table(at, {"hba1c", "crp", "age"})
    for c, n in ZEROS.items():
        assert int((preview[c] == 0).sum()) == 0 and int(preview[c].isna().sum()) == n


def test_a_zero_marked_missing_never_reaches_a_profile_a_test_or_the_report(fitted):
    data, choice, params, run, model = fitted
    labels = model.labels_
    raw, likelihood = report.profile_inputs(data)
    for c, n in ZEROS.items():
        assert int((raw[c] == 0).sum()) == 0 and int(raw[c].isna().sum()) == n
    # the profile's mean of each cluster is the mean of its measured (non-zero) values
    prof = cluster_profiles(raw, labels, likelihood)
    means = prof.tidy[(prof.tidy["statistic"] == "mean") & prof.tidy["feature"].isin(list(ZEROS))]
    truth = data.table
    for _, row in means.iterrows():
        rows = np.ones(len(truth), bool) if row["cluster"] == "all" else labels == int(row["cluster"])
        x = truth.loc[rows, row["feature"]]
        assert row["value"] == pytest.approx(x[x != 0].mean())
    # the tests between clusters are those of the table with the zeros as gaps
    if model.n_clusters_ >= 2:
        gaps = data.table[data.features].copy()
        for c in ZEROS:
            gaps[c] = gaps[c].replace(0, np.nan)
        pd.testing.assert_frame_equal(feature_tests(raw, labels, likelihood), feature_tests(gaps, labels, likelihood))
    # the assignments download: those zeros are blank cells
    out = report.assignments(data, labels)
    for c, n in ZEROS.items():
        assert int((pd.to_numeric(out[c]) == 0).sum()) == 0 and int(out[c].isna().sum()) == n
    # the report prints the profile of the measured values
    document = subtype_report_html(data, model, params, choice=choice, run=run)
    hba1c_all = prof.table.loc["hba1c", "all"]
    assert html.escape(hba1c_all) in document or hba1c_all in document
    with_zeros = cluster_profiles(data.table[data.features], labels, likelihood).table.loc["hba1c", "all"]
    assert with_zeros not in document
    assert "and the zeros of hba1c, crp marked" in html.unescape(document)  # to run it again, the same choice


def test_a_new_row_with_a_zero_there_is_scored_as_missing(fitted):
    data = fitted[0]
    rows = pd.DataFrame({"age": [50.0, 50.0], "hba1c": [0.0, 6.0], "crp": [3.0, 0.0]})
    encoded = sources.encode_new_rows(data, rows)
    assert np.isnan(encoded.loc[0, "hba1c"]) and np.isnan(encoded.loc[1, "crp"])
    assert encoded.loc[1, "hba1c"] == 6.0 and encoded.loc[0, "crp"] == 3.0


def test_a_built_in_tables_zeros_can_be_marked_on_the_data_page():
    """pima's glucose, blood pressure and BMI of 0 (issue 42: only an upload offered the choice)."""
    at = start(300)
    at.switch_page("pages/data.py").run()
    at.selectbox(key="w_builtin").set_value("pima_indians_diabetes").run()
    at.button(key="use_builtin").click().run()
    ok(at)
    key = "w_zeros_" + at.session_state["data"].name
    offered = [o.split(":")[0] for o in at.multiselect(key=key).options]
    assert {"glucose", "pressure", "mass"} <= set(offered)
    at.multiselect(key=key).set_value(["glucose", "pressure", "mass"]).run()
    at.button(key="apply_zeros").click().run()
    ok(at)
    d = at.session_state["data"]
    assert d.zeros_missing == ("glucose", "pressure", "mass")
    assert int(d.X[["glucose", "pressure", "mass"]].isna().sum().sum()) == 5 + 35 + 11
    summary = next(shown(m.value) for m in at.markdown if "Missing values" in m.value)
    assert "51 cells" in summary, summary
    preview = table(at, {"glucose", "pressure", "mass"})
    assert int((preview[["glucose", "pressure", "mass"]] == 0).sum().sum()) == 0
