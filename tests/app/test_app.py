"""Every page of the app, headless (streamlit.testing): set the widgets, check what is shown.

Pages are reached with ``switch_page`` from app.py, so session state is shared as in a real
session. No page may raise; expected failures must be plain ``st.error`` messages.
"""

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from apptools import APP
from apptools import chart as _chart
from apptools import ok as _ok
from apptools import table as _table

TIMEOUT = 180


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    return at


def _titles(spec: dict) -> list[str]:
    return [a["text"] for a in spec["layout"]["annotations"]]


@pytest.fixture
def at():
    return _app()


def test_first_visit_lands_on_explore_with_the_demo_clustered(at):
    _ok(at)
    assert at.title[0].value == "Explore"
    spec = _chart(at, "animation")
    titles = _titles(spec)
    # N0 starts at the value MAPDP() chooses from the data (the exact joint evidence), not a fixed 3
    from explorer import runner, sources

    chosen = runner.auto_settings(sources.scenario_data("5.2")).N0
    assert titles[0].startswith(f"<b>MAP-DP</b> (N0 = {chosen:g})") and "K = 3" in titles[0]
    assert at.select_slider(key="w_N0").value == chosen
    assert any("Chosen from the data" in c.value for c in at.caption)
    assert titles[1].startswith("<b>K-means</b> (K = 3)") and titles[2].startswith("<b>DP-means</b>")
    # the page owns the frame shown (ui.player, issue 27): no Plotly frames or Play inside the chart
    assert not spec.get("frames") and not spec["layout"].get("updatemenus")
    assert [b.label for b in at.button if (b.key or "").startswith("frame_")] == ["First", "Back", "Play", "Step", "Last"]
    table = _table(at, {"algorithm", "K", "NMI", "ARI"}).set_index("algorithm")
    assert table.loc["MAP-DP", "K"] == 3 and table.loc["MAP-DP", "NMI"] > table.loc["K-means", "NMI"] + 0.2


def test_explore_widgets_change_the_result(at):
    at.select_slider(key="w_N0").set_value(0.01).run()
    _ok(at)
    assert _titles(_chart(at, "animation"))[0].startswith("<b>MAP-DP</b> (N0 = 0.01)")
    assert any("expects" in c.value and "clusters" in c.value for c in at.caption)
    at.slider(key="w_kmeans_n_clusters").set_value(5).run()
    _ok(at)
    assert _table(at, {"algorithm", "K"}).set_index("algorithm").loc["K-means", "K"] == 5
    at.pills(key="w_algorithms").set_value(["MAP-DP"]).run()
    _ok(at)
    assert len(_titles(_chart(at, "animation"))) == 1
    at.pills(key="w_algorithms").set_value([]).run()
    _ok(at)
    assert any("at least one algorithm" in i.value for i in at.info)


def _frame(at) -> int:
    return next(s for s in at.select_slider if s.label == "Frame").value


def test_explore_step_buttons_move_one_sweep(at):
    last = _frame(at)
    at.button(key="frame_back").click().run()
    _ok(at)
    assert _frame(at) == last - 1
    at.button(key="frame_first").click().run()
    assert _frame(at) == 0
    assert "sweep 1 ·" in _titles(_chart(at, "animation"))[0]
    at.button(key="frame_next").click().run()
    assert _frame(at) == 1
    # nothing runs: no Stop button (issue 27), and the chart stays at the frame shown
    assert "explore_stop" not in [b.key for b in at.button]
    at.run()
    _ok(at)
    assert not any("Stopped" in i.value for i in at.info) and _frame(at) == 1


def test_explore_expected_k_sets_n0(at):
    at.number_input(key="w_expected_K").set_value(3.0).run()
    at.button(key="use_expected_K").click().run()
    _ok(at)
    n0 = at.select_slider(key="w_N0").value
    assert 0.1 < n0 < 0.5  # E[K] = 3 among 4000 rows needs N0 of about 0.3


def test_home_page_and_a_demo_button(at):
    at.switch_page("pages/home.py").run()
    _ok(at)
    assert at.title[0].value == "MAP-DP Explorer"
    titles = _titles(_chart(at, "home_picture"))
    assert "K = 3" in titles[0] and titles[1].startswith("<b>K-means</b>")
    at.button(key="demo_5.4").click().run()
    _ok(at)
    assert at.title[0].value == "Explore"
    assert at.session_state["data"].name.startswith("PLOS 5.4")


def test_data_page_builtin_and_likelihood_errors(at):
    at.switch_page("pages/data.py").run()
    _ok(at)
    at.selectbox(key="w_builtin").set_value("hepatitis").run()
    at.button(key="use_builtin").click().run()
    _ok(at)
    assert at.session_state["data"].name == "hepatitis"
    assert any("Missing values" in m.value and "167 cells" in m.value for m in at.markdown)
    # a likelihood that does not fit a column is refused with a plain message, not a traceback
    d = at.session_state["data"]
    editor_key = f"w_families_{d.key}"
    row = d.features.index("albumin")  # g/dL with decimals: not a count
    at.session_state[editor_key] = {"edited_rows": {row: {"family": "poisson"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    at.button(key="apply_families").click().run()
    assert not at.exception
    assert at.error and "poisson" in at.error[0].value
    assert at.session_state["data"].family_of("albumin") == "normal_gamma"


def test_data_page_simulated_clinical(at):
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Simulated").run()
    at.selectbox(key="w_generator").set_value("Clinical patients, mixed types with gaps").run()
    at.number_input(key="w_gen_cl_n").set_value(300).run()
    at.button(key="generate").click().run()
    _ok(at)
    d = at.session_state["data"]
    assert d.n_rows == 300 and d.has_gaps and d.truth is not None


def test_compare_page(at):
    at.switch_page("pages/compare.py").run()
    # issue 27: the Gibbs sweeps are asked only when Gibbs is compared; no "(Fig 4).." in the captions
    assert not any(s.key == "w_cmp_sweeps" for s in at.slider)
    assert not any(".." in c.value.replace("...", "") for c in at.caption)
    at.slider(key="w_cmp_restarts").set_value(2).run()
    at.pills(key="w_cmp_algorithms").set_value(["MAP-DP", "K-means", "Gibbs"]).run()
    at.slider(key="w_cmp_sweeps").set_value(10).run()
    _ok(at)
    summary = _table(at, {"algorithm", "restarts", "K mean", "nmi mean"}).set_index("algorithm")
    assert list(summary.index) == ["MAP-DP", "K-means", "Gibbs"] and (summary["restarts"] == 2).all()
    bic = _chart(at, "bic_plot")
    assert len(bic["data"][0]["x"]["bdata"] if isinstance(bic["data"][0]["x"], dict) else bic["data"][0]["x"]) > 0
    assert any("BIC chooses" in m.value for m in at.markdown)


def test_tune_page_grid_and_apply(at):
    at.switch_page("pages/tune.py").run()
    at.select_slider(key="w_tune_range").set_value((0.3, 10.0)).run()
    at.slider(key="w_tune_points").set_value(3).run()
    at.slider(key="w_tune_restarts").set_value(1).run()
    _ok(at)
    # the automatic choice: its evidence curve with the chosen point, and its words
    search = _chart(at, "tune_search_plot")
    assert any(t.get("name") == "chosen" for t in search["data"]), [t.get("name") for t in search["data"]]
    assert any(m.value.startswith("Chosen: **N0 = ") for m in at.markdown), [m.value[:40] for m in at.markdown]
    best = [m.value for m in at.markdown if "Lowest −ln p" in m.value]
    assert best, [m.value for m in at.markdown]
    at.button(key="apply_grid").click().run()
    _ok(at)
    n0 = at.session_state["settings"]["N0"]
    assert f"N0 = {n0:g}" in best[0]
    # the page says so after its rerun, and its caption already shows the applied N0
    assert any(f"N0 = {n0:g} is now used" in m.value for m in at.success)
    assert any(f"Settings in use: N0 = {n0:g}," in c.value for c in at.caption)
    assert any("MAP" in m.value and "N0 = " in m.value for m in at.markdown)
    at.pills(key="w_cv_n0").set_value([0.3, 10.0]).run()
    at.pills(key="w_cv_scale").set_value([1.0]).run()
    at.slider(key="w_cv_folds").set_value(2).run()
    at.button(key="run_cv").click().run()
    _ok(at)
    assert any("Best held-out likelihood" in m.value for m in at.markdown)
    at.button(key="apply_cv").click().run()
    _ok(at)
    n0 = at.session_state["settings"]["N0"]
    assert any("are now used" in m.value for m in at.success)
    # the N0 applied from the grid is the value Explore shows and runs, exactly
    at.switch_page("pages/explore.py").run()
    _ok(at)
    assert at.select_slider(key="w_N0").value == n0
    assert _titles(_chart(at, "animation"))[0].startswith(f"<b>MAP-DP</b> (N0 = {n0:g})")


def _simulated_subtypes(at, key: str, value: str) -> None:
    """Data page: simulate with one generator widget set (``key`` to ``value``), then open Subtypes."""
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Simulated").run()
    at.selectbox(key=key).set_value(value).run()
    at.button(key="generate").click().run()
    at.switch_page("pages/subtypes.py").run()
    _ok(at)


def test_k_is_read_with_its_outlier_groups_apart(at):
    """PLOS 5.3: MAP-DP's K = 5 holds the two outlier pairs; the K sentence says so, as the paper
    reads it (three clusters and two outlier groups)."""
    _simulated_subtypes(at, "w_gen_section", "5.3")
    said = [m.value for m in at.markdown if m.value.startswith("**How sure is K?**")]
    assert len(said) == 1 and "2 of the 5 clusters hold one or two rows (4 rows in all)" in said[0], said
    assert "3 clusters hold 3 rows or more" in said[0]


def test_subtypes_on_mixed_data_with_gaps(at):
    _simulated_subtypes(at, "w_generator", "Clinical patients, mixed types with gaps")
    d = at.session_state["data"]
    sizes = _table(at, {"cluster", "n", "fraction", "stability", "verdict"})
    assert sizes["n"].sum() == d.n_rows
    assert sizes["stability"].between(0, 1).all() and set(sizes["verdict"]) <= {"stable", "uncertain", "fragile"}
    tests = _table(at, {"rank", "feature", "q_value"})
    assert sorted(tests["feature"]) == sorted(d.features) and tests["rank"].tolist() == list(range(1, len(d.features) + 1))
    imputed = _table(at, {"row", "cluster"})
    assert len(imputed) == int(d.X.isna().any(axis=1).sum())
    downloads = {b.proto.label: b for b in at.get("download_button")}
    assert {"Assignments with the original rows (CSV)", "Profiles (CSV)",
            "Animated figure (self-contained HTML)"} <= set(downloads)


def test_predict_page_form_row(at):
    at.switch_page("pages/predict.py").run()
    _ok(at)
    result = _table(at, {"assigned", "probability", "log density"})
    assert len(result) == 1 and result["assigned"].iloc[0].startswith("cluster")
    assert 0 < result["probability"].iloc[0] <= 1 and np.isfinite(result["log density"].iloc[0])


def test_sessions_share_nothing():
    """Clinical data are private: what one session loads, another never sees."""
    first, second = _app(), _app()
    first.switch_page("pages/data.py").run()
    first.selectbox(key="w_builtin").set_value("hepatitis").run()
    first.button(key="use_builtin").click().run()
    assert first.session_state["data"].name == "hepatitis"
    second.run()
    assert second.session_state["data"].name.startswith("PLOS 5.2")
    hepatitis = first.session_state["data"].key
    runs = second.session_state["runs"] if "runs" in second.session_state else {}
    assert runs and all(key[0] != hepatitis for key in runs)
