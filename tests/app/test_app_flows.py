"""The app's flows headless (streamlit.testing.v1.AppTest), one regression test per fixed behaviour:
one source of truth for settings, Stop, the Data page across page switches, Play from the frame
shown, the comparison's estimate, the Subtypes tables, Home's grouping, settings files and links,
chart exports and the N0 picture.
"""
import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from apptools import chart as _chart
from apptools import chart_config as _config
from apptools import ok as _ok
from apptools import simulate_clinical, start
from apptools import table as _table
from mapdp_core import n0_for_expected_clusters
from explorer import report, sharing
from mapdp_core.models import registry

TIMEOUT = 240


def _app(**query) -> AppTest:
    return start(TIMEOUT, **query)


def _title(at: AppTest) -> str:
    return _chart(at, "animation")["layout"]["annotations"][0]["text"]


@pytest.fixture
def at():
    return _app()


# ----------------------------------------------------------------------------- 1. one source of truth

def test_use_it_runs_shows_and_keeps_the_n0_it_names(at):
    at.number_input(key="w_expected_K").set_value(3.0).run()
    want = float(f"{n0_for_expected_clusters(3.0, 4000):.3g}")
    assert any(c.value == f"E[K] = 3 needs N0 = {want:g}." for c in at.caption)
    at.button(key="use_expected_K").click().run()
    _ok(at)
    slider = at.select_slider(key="w_N0")
    assert slider.value == want and _title(at).startswith(f"<b>MAP-DP</b> (N0 = {want:g})")
    # the browser is told to move the slider: before, it kept showing the old N0 and sent it back
    # with the next click, which silently ran the old N0 again
    assert slider.proto.set_value
    at.button(key="frame_next").click().run()
    _ok(at)
    assert at.select_slider(key="w_N0").value == want and _title(at).startswith(f"<b>MAP-DP</b> (N0 = {want:g})")


def test_the_mfm_prior_runs_on_every_page_and_tune_switches_back(at):
    at.radio(key="w_partition").set_value("mfm").run()
    _ok(at)
    assert _title(at).startswith("<b>MAP-DP</b> (MFM prior)")
    assert at.select_slider(key="w_N0").disabled
    assert any("the mixture of finite mixtures has none" in c.value for c in at.caption)
    k = _table(at, {"algorithm", "K"}).set_index("algorithm").loc["MAP-DP", "K"]
    for page in ("pages/subtypes.py", "pages/compare.py", "pages/predict.py"):
        at.switch_page(page).run()
        _ok(at)
        assert any("mixture-of-finite-mixtures prior" in c.value for c in at.caption), page
    at.switch_page("pages/subtypes.py").run()
    assert any(f"found **{k} cluster" in c.value for c in at.caption)  # the same fit as Explore's
    at.switch_page("pages/tune.py").run()
    _ok(at)
    assert any("mixture of finite mixtures, which has no N0" in i.value for i in at.info)
    at.button(key="apply_map").click().run()
    _ok(at)
    assert at.session_state["settings"]["partition"] == "dp"
    at.switch_page("pages/explore.py").run()
    _ok(at)
    assert at.radio(key="w_partition").value == "dp" and _title(at).startswith("<b>MAP-DP</b> (N0 = ")


def test_tune_explore_subtypes_round_trip_keeps_one_n0(at):
    at.switch_page("pages/tune.py").run()
    at.select_slider(key="w_tune_range").set_value((0.3, 10.0)).run()
    at.slider(key="w_tune_points").set_value(3).run()
    at.slider(key="w_tune_restarts").set_value(1).run()
    at.number_input(key="w_tune_K").set_value(5).run()
    at.button(key="apply_map").click().run()
    _ok(at)
    n0 = at.session_state["settings"]["N0"]
    at.switch_page("pages/explore.py").run()
    _ok(at)
    assert at.select_slider(key="w_N0").value == n0 and at.select_slider(key="w_N0").proto.set_value
    assert _title(at).startswith(f"<b>MAP-DP</b> (N0 = {n0:g})")
    at.switch_page("pages/subtypes.py").run()
    _ok(at)
    assert any(f"MAP-DP with N0 = {n0:g} " in c.value for c in at.caption)
    at.switch_page("pages/explore.py").run()
    at.button(key="frame_back").click().run()
    assert at.select_slider(key="w_N0").value == n0


def test_algorithm_settings_widgets_show_what_runs_after_a_change_elsewhere(at):
    at.session_state["settings"]["K-means:n_clusters"] = 3
    at.slider(key="w_kmeans_n_clusters").set_value(6).run()
    assert _table(at, {"algorithm", "K"}).set_index("algorithm").loc["K-means", "K"] == 6
    at.switch_page("pages/compare.py").run()
    assert at.slider(key="w_cmp_K").value == 6  # Compare starts from Explore's K
    at.switch_page("pages/explore.py").run()
    assert at.slider(key="w_kmeans_n_clusters").value == 6


# ----------------------------------------------------------------------------- 2. Stop

def test_stop_only_shows_while_a_run_is_in_progress(at):
    """Issue 27: Stop sat above every chart when nothing ran. The Stop/Run again logic itself:
    tests/app/test_animation_player.py::test_stop_button_helper_draws_nothing_when_nothing_runs."""
    before = _chart(at, "animation")
    assert "explore_stop" not in [b.key for b in at.button]  # the first run is over: Stop is gone
    at.run()
    _ok(at)
    assert "explore_stop" not in at.session_state  # nothing ran: Stop was never drawn
    assert _chart(at, "animation")["layout"]["annotations"] == before["layout"]["annotations"]


def test_busy_mark_survives_streamlits_interrupt_only():
    def script():
        import streamlit as st

        from ui import common

        if not st.session_state.get("interrupted"):
            st.session_state["interrupted"] = True
            with common.busy("probe"):
                st.rerun()  # raises Streamlit's control exception, as a click during a run does
        try:
            with common.busy("failing"):
                raise ValueError("bad input")
        except ValueError:
            pass
        st.write(f"probe {st.session_state.get('probe_busy')} failing {st.session_state.get('failing_busy')}")

    at = AppTest.from_function(script, default_timeout=TIMEOUT)
    at.run()
    assert at.markdown[0].value == "probe True failing False"


# ----------------------------------------------------------------------------- 3. the Data page

def test_data_page_shows_the_data_loaded_and_keeps_edits_across_pages(at):
    at.switch_page("pages/data.py").run()
    assert at.radio(key="w_data_source").value == "Built-in"
    assert at.selectbox(key="w_builtin").value.startswith("PLOS 5.2")  # the default data, not the first option
    at.selectbox(key="w_builtin").set_value("hepatitis").run()
    at.button(key="use_builtin").click().run()
    d = at.session_state["data"]
    # an edited likelihood, not applied yet
    key = f"w_families_{d.key}"
    row = d.features.index("age")
    at.session_state[key] = {"edited_rows": {row: {"family": "poisson"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    at.switch_page("pages/explore.py").run()
    at.switch_page("pages/data.py").run()
    _ok(at)
    assert at.radio(key="w_data_source").value == "Built-in" and at.selectbox(key="w_builtin").value == "hepatitis"
    assert any(s.value == "Current data: hepatitis" for s in at.subheader)
    assert any("not applied yet" in c.value for c in at.caption)
    assert at.button(key="apply_families")  # the edit is still there to apply


def test_data_page_keeps_the_generator_that_made_the_data(at):
    simulate_clinical(at)
    at.switch_page("pages/home.py").run()
    at.switch_page("pages/data.py").run()
    _ok(at)
    assert at.radio(key="w_data_source").value == "Simulated"
    assert at.selectbox(key="w_generator").value == "Clinical patients, mixed types with gaps"
    assert at.number_input(key="w_gen_cl_n").value == 300
    assert any("Source: simulated" in c.value for c in at.caption)


def test_data_page_keeps_an_uploaded_table_and_its_role_edits(at):
    rng = np.random.default_rng(0)
    csv = "id,a,b,group\n" + "\n".join(f"{i},{rng.normal():.3f},{rng.normal():.3f},{'xy'[i % 2]}" for i in range(40))
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Upload a table").run()
    at.file_uploader(key="w_upload").upload("mine.csv", csv.encode(), "text/csv").run()
    _ok(at)
    editor_key = next(k for k in at.session_state["kept_edits"] if k.startswith("w_upload_spec_"))
    roles = at.session_state["kept_edits"][editor_key]
    at.session_state[editor_key] = {"edited_rows": {list(roles["column"]).index("b"): {"role": "ignored"}},
                                    "added_rows": [], "deleted_rows": []}
    at.run()
    at.button(key="use_upload").click().run()
    _ok(at)
    assert at.session_state["data"].name == "mine.csv" and "b" not in at.session_state["data"].features
    at.switch_page("pages/explore.py").run()
    at.switch_page("pages/data.py").run()
    _ok(at)
    assert at.radio(key="w_data_source").value == "Upload a table"
    assert any("In use: **mine.csv**" in i.value for i in at.info)
    kept = at.session_state["kept_edits"][editor_key].set_index("column")
    assert kept.loc["b", "role"] == "ignored"


def test_one_likelihood_for_several_columns(at):
    at.switch_page("pages/data.py").run()
    at.multiselect(key="w_many_columns").set_value(["x", "y"]).run()
    at.selectbox(key="w_many_family").set_value("normal_gamma").run()
    at.button(key="apply_many").click().run()
    _ok(at)
    d = at.session_state["data"]
    assert d.likelihood == {"x": "normal_gamma", "y": "normal_gamma"}
    at.multiselect(key="w_many_columns").set_value(["x"]).run()
    at.selectbox(key="w_many_family").set_value("poisson").run()  # negative reals are not counts
    at.button(key="apply_many").click().run()
    assert not at.exception and at.error and "poisson" in at.error[0].value
    assert at.session_state["data"].family_of("x") == "normal_gamma"


# ----------------------------------------------------------------------------- 4. Play
# one position for Play, the buttons and the slider: tests/app/test_animation_player.py (issue 27)


# ----------------------------------------------------------------------------- 5. Compare

def test_a_long_comparison_warns_with_an_estimate_and_waits_for_a_click(at):
    at.switch_page("pages/compare.py").run()
    at.pills(key="w_cmp_algorithms").set_value(list(registry.ALGORITHMS)).run()
    _ok(at)
    warning = next(w.value for w in at.warning if "may take up to about" in w.value)
    assert "Variational DP up to" in warning and "restarts" in warning
    assert at.button(key="cmp_run") and not [df for df in at.dataframe if "restarts" in df.value.columns]
    at.pills(key="w_cmp_algorithms").set_value(["MAP-DP", "K-means"]).run()
    at.slider(key="w_cmp_restarts").set_value(2).run()
    _ok(at)
    summary = _table(at, {"algorithm", "restarts"})
    assert list(summary["algorithm"]) == ["MAP-DP", "K-means"]
    at.button(key="compare_stop").click().run()  # nothing running: the table stays
    assert not any("Stopped" in i.value for i in at.info) and len(_table(at, {"algorithm", "restarts"})) == 2


# ----------------------------------------------------------------------------- 6, 7. Subtypes

def test_subtypes_tables_read_plainly(at):
    simulate_clinical(at)
    at.switch_page("pages/subtypes.py").run()
    _ok(at)
    d = at.session_state["data"]
    tests = _table(at, {"rank", "feature", "p_value", "q_value"})
    assert tests["p_value"].map(lambda p: isinstance(p, str) and 0 < len(p) <= 9 or p.startswith("not testable")).all()
    assert tests["p_value"].notna().all() and tests["q_value"].notna().all()
    imputed = _table(at, {"row", "cluster", "filled"})
    gaps = d.X.isna().any(axis=1).to_numpy()
    assert imputed["row"].tolist() == list(np.flatnonzero(gaps) + 1)  # 1-based row numbers
    assert set(imputed["dominant_side"]) <= {"left", "right", "bilateral"}  # names, not codes
    first = np.flatnonzero(gaps)[0]
    assert set(imputed["filled"].iloc[0].split(", ")) == set(d.X.columns[d.X.iloc[first].isna()])


# ----------------------------------------------------------------------------- 8. Home

def test_home_does_not_say_kmeans_fails_on_5_5(at):
    at.switch_page("pages/home.py").run()
    _ok(at)
    headers = [s.value for s in at.subheader]
    assert "One-click demos: where K-means fails" in headers and "…and where it does not" in headers
    demo_keys = [b.key for b in at.button if b.key and b.key.startswith("demo_")]
    assert demo_keys.index("demo_5.5") == len(demo_keys) - 1  # after all the failures
    at.button(key="demo_5.5").click().run()
    at.switch_page("pages/data.py").run()
    assert at.selectbox(key="w_builtin").value.startswith("PLOS 5.5")


@pytest.mark.parametrize("section", report.scenarios_by_kmeans()["fails"])
def test_mapdp_beats_kmeans_on_every_demo_where_kmeans_fails(section):
    """Opened from Home, MAP-DP at the chosen settings (the library's answer: the search's start)
    beats K-means told the true K, in Explore's table and in Compare's mean over restarts."""
    at = _app(algorithms="MAP-DP,K-means")
    at.switch_page("pages/home.py").run()
    at.button(key=f"demo_{section}").click().run()
    at.switch_page("pages/explore.py").run()
    _ok(at)
    assert at.session_state["data"].name.startswith(f"PLOS {section}")
    shown = _table(at, {"algorithm", "K", "NMI"}).set_index("algorithm")
    assert shown.loc["MAP-DP", "NMI"] > shown.loc["K-means", "NMI"], shown
    at.switch_page("pages/compare.py").run()
    at.pills(key="w_cmp_algorithms").set_value(["MAP-DP", "K-means"]).run()
    _ok(at)
    summary = _table(at, {"algorithm", "nmi mean"}).set_index("algorithm")
    assert summary.loc["MAP-DP", "restarts"] == 5
    assert summary.loc["MAP-DP", "nmi mean"] > summary.loc["K-means", "nmi mean"], summary


def test_explore_tune_and_subtypes_say_how_sure_k_is(at):
    """K with its uncertainty, in words and a small plot, on every page that reports MAP-DP's K."""
    shown_k = int(_table(at, {"algorithm", "K"}).set_index("algorithm").loc["MAP-DP", "K"])
    for page in ("explore", "tune", "subtypes"):
        if page != "explore":
            at.switch_page(f"pages/{page}.py").run()
        _ok(at)
        said = [m.value for m in at.markdown if m.value.startswith("**How sure is K?**")]
        assert len(said) == 1 and f"K = {shown_k} cluster" in said[0] and "nats" in said[0], said
        bars = _chart(at, f"{page}_k_evidence")["data"][0]
        assert shown_k in bars["x"] and 1 in bars["x"]
        assert bars["text"][list(bars["x"]).index(shown_k)] == "fit"


# ----------------------------------------------------------------------------- 9. settings, exports, N0

def test_a_link_with_settings_sets_them_and_share_writes_them():
    at = _app(N0="0.5", restarts="2", algorithms="MAP-DP,K-means")
    assert at.select_slider(key="w_N0").value == 0.5 and _title(at).startswith("<b>MAP-DP</b> (N0 = 0.5)")
    assert at.slider(key="w_restarts").value == 2
    assert [a["text"].split("</b>")[0] for a in _chart(at, "animation")["layout"]["annotations"]] == [
        "<b>MAP-DP", "<b>K-means"]
    at.button(key="share_settings").click().run()
    assert at.query_params["N0"] in ("0.5", ["0.5"]) and at.query_params["restarts"] in ("2", ["2"])
    assert "data" not in at.query_params


def test_a_bad_link_is_said_in_a_sentence():
    at = _app(N0="lots")
    assert any("'N0' must be a number" in w.value for w in at.warning)


def test_settings_file_download_and_load(at):
    at.select_slider(key="w_N0").set_value(0.01).run()
    saved = json.loads(sharing.settings_to_json(at.session_state["settings"]))
    assert saved["settings"]["N0"] == 0.01
    saved["settings"].update(N0=2.0, restarts=4)
    at.file_uploader(key="w_settings_file").upload("s.json", json.dumps(saved).encode(), "application/json").run()
    _ok(at)
    assert at.select_slider(key="w_N0").value == 2.0 and at.slider(key="w_restarts").value == 4
    assert _title(at).startswith("<b>MAP-DP</b> (N0 = 2)")
    assert any("Loaded" in s.value for s in at.success)
    at.select_slider(key="w_N0").set_value(0.01).run()  # the file is applied once, not at every rerun
    assert at.select_slider(key="w_N0").value == 0.01
    at.file_uploader(key="w_settings_file").set_value(("bad.json", b"{", "application/json")).run()
    assert not at.exception and any("'bad.json' was not loaded" in e.value for e in at.error)


def test_charts_export_png_or_svg_and_the_whole_animation_as_html(at):
    assert _config(at, "animation")["toImageButtonOptions"]["format"] == "png"
    at.sidebar.radio(key="w_image_format").set_value("svg").run()
    assert _config(at, "animation")["toImageButtonOptions"]["format"] == "svg"
    assert _config(at, "traces")["toImageButtonOptions"]["format"] == "svg"
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download the animation (self-contained HTML)" in labels


def test_n0_picture_draws_expected_clusters_for_the_current_n0(at):
    n0 = at.select_slider(key="w_N0").value
    spec = _chart(at, "n0_picture")
    names = [t["name"] for t in spec["data"]]
    assert f"N0 = {n0:g} (now)" in names and "N0 = 0.1" in names and "N0 = 10" in names
    assert spec["layout"]["xaxis"]["type"] == "log"
    assert any(r"\sum_{i=1}^{N}" in e.proto.body for e in at.get("markdown") if hasattr(e.proto, "body")) or \
        any(r"\sum_{i=1}^{N}" in str(e.proto) for e in at.get("latex"))
    # a large version for a projector (issue 27: the sidebar's was about 190 px wide)
    at.button(key="n0_large").click().run()
    _ok(at)
    large = _chart(at, "n0_picture_large")
    assert large["layout"]["height"] >= 500 and large["layout"]["font"]["size"] >= 18
    assert max(t["line"]["width"] for t in large["data"]) > max(t["line"]["width"] for t in spec["data"])


# ----------------------------------------------------------------------------- 10. CSV downloads

def _download_id(at: AppTest, label: str) -> str:
    button = next(b for b in at.get("download_button") if b.proto.label == label)
    return button.proto.url.rsplit("/", 1)[-1].split(".")[0]


def test_csv_downloads_neutralise_spreadsheet_formulas(at):
    from streamlit.runtime.memory_media_file_storage import _calculate_file_id

    from mapdp_core.data.loading.export import csv_bytes

    rng = np.random.default_rng(1)
    rows = [f"{'=HYPERLINK(1)' if i == 0 else f'p{i}'},{rng.normal() + 4 * (i % 2):.3f},{rng.normal():.3f}"
            for i in range(40)]
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Upload a table").run()
    at.file_uploader(key="w_upload").upload("f.csv", ("who,a,b\n" + "\n".join(rows)).encode(), "text/csv").run()
    at.button(key="use_upload").click().run()
    d = at.session_state["data"]
    assert d.id_column == "who"
    at.switch_page("pages/subtypes.py").run()
    _ok(at)
    table = report.assignments(d, at.session_state["runs"][next(k for k in at.session_state["runs"]
                                                                 if k[1] == "model")].labels_)
    safe, naive = csv_bytes(table), table.to_csv(index=False).encode()
    assert b"'=HYPERLINK(1)" in safe and safe != naive
    got = _download_id(at, "Assignments with the original rows (CSV)")
    assert got == _calculate_file_id(safe, "text/csv", "assignments.csv")
    assert got != _calculate_file_id(naive, "text/csv", "assignments.csv")


def test_expected_k_that_no_n0_gives_is_said_in_a_sentence(at):
    at.number_input(key="w_expected_K").set_value(1.0).run()
    assert not at.exception and "No N0 gives 1 expected clusters" in at.error[0].value
    at.number_input(key="w_expected_K").set_value(3999.0).run()  # needs an N0 of millions
    assert not at.exception and not at.error and any("outside the slider's range" in c.value for c in at.caption)
    assert not [b for b in at.button if b.key == "use_expected_K"]


def test_subtypes_with_one_cluster_still_shows_sizes_profiles_and_downloads():
    """Issue 27: with K = 1, Subtypes showed nothing but an error ("found 1 clusters")."""
    import pandas as pd

    from explorer import sources

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"a": rng.normal(size=120), "b": rng.normal(size=120)})  # one round blob
    at = _app()
    at.session_state["data"] = sources.table_data(table, name="one blob")
    at.switch_page("pages/subtypes.py").run()
    _ok(at)
    assert at.session_state["data"].name == "one blob"  # the page ran on these data
    assert any("found **1 cluster**" in c.value for c in at.caption)
    assert _table(at, {"cluster", "n"}) is not None
    assert any("nothing to test between clusters" in i.value for i in at.info)
    assert {b.key for b in at.get("download_button")} >= {"download_assignments", "download_profiles"}


def test_dpmeans_matching_mapdps_k_shows_one_lambda_only(at):
    """Issue 27: with "match MAP-DP's K", a disabled λ box showed 4.00 while another λ ran."""
    assert any("λ for DP-means: chosen to match MAP-DP's K" in c.value for c in at.caption)
    assert not any(getattr(w, "disabled", False) for w in at.number_input)
    said = [c.value for c in at.caption if c.value.startswith("DP-means λ = ")]
    assert len(said) == 1 and "chosen to give MAP-DP's K" in said[0]
    at.checkbox(key="w_match_k").uncheck().run()
    _ok(at)
    assert not any("λ for DP-means: chosen" in c.value for c in at.caption)
    assert not any(c.value.startswith("DP-means λ = ") for c in at.caption)


def test_explore_says_which_k_a_sampler_reports():
    """Issue 27: Gibbs's panel (last sweep) and the table (most probable partition) gave different
    K without a word; the page says which is which exactly when they differ."""
    from explorer.runner import Run

    at = _app(algorithms="MAP-DP,Gibbs")
    _ok(at)
    gibbs = [r for r in at.session_state["runs"].values() if isinstance(r, Run) and r.algorithm == "Gibbs"]
    assert gibbs
    r = gibbs[-1]
    differ = r.shown.iteration != r.final.iteration and r.shown.n_clusters != r.final.n_clusters
    said = [c.value for c in at.caption if c.value.startswith("Gibbs: the table gives the most probable partition")]
    assert bool(said) == differ
    if said:
        assert f"K = {r.shown.n_clusters}" in said[0] and f"(K = {r.final.n_clusters})" in said[0]


def test_subtypes_says_which_components_form_each_cluster_when_small_groups_are_folded():
    """Issue 24: a few stray rows open components of their own; Subtypes reads them as part of
    the large cluster that explains them best, as MAPDP() does, and says so."""
    import pandas as pd

    from explorer import sources
    from mapdp_core import MAPDP

    rng = np.random.default_rng(0)
    table = pd.DataFrame(np.vstack([rng.normal([0, 0], 1.0, (150, 2)), rng.normal([7, 0], 1.0, (150, 2)),
                                    [[3.5, 6.0], [3.6, 6.3], [-4.0, -5.0]]]), columns=["x", "y"])
    at = _app()
    at.session_state["data"] = sources.table_data(table, name="stray rows")
    at.switch_page("pages/subtypes.py").run()
    _ok(at)
    library = MAPDP(random_state=0).fit(table)
    assert library.n_clusters_ < library.n_components_  # the case: groups were folded
    from apptools import shown

    said = " ".join(shown(m.value) for m in at.markdown)
    assert f"MAP-DP found {library.n_components_} components" in said
    assert "small group" in said and f"so there are {library.n_clusters_} clusters" in said
    sizes = _table(at, {"cluster", "n"})
    assert len(sizes) == library.n_clusters_ and sizes["n"].sum() == len(table)
