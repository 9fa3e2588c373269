"""The Sequences, groups and subjects page, headless (streamlit.testing.v1.AppTest): its three
demos, the time and group columns marked on the Data page, and the registry's gating (only the
algorithms the roles allow)."""
import pytest

from apptools import chart as _chart
from apptools import ok as _ok
from apptools import start
from apptools import table as _table
from explorer import sequences, sources

TIMEOUT = 240


@pytest.fixture
def at():
    return start(TIMEOUT)


def test_without_roles_the_page_explains_and_runs_both_demos(at):
    at.switch_page("pages/sequences.py").run()
    _ok(at)
    assert at.title[0].value == "Sequences, groups and subjects"
    assert any("time column" in i.value for i in at.info)
    at.button(key="seq_demo_hmm").click().run()
    _ok(at)
    spec = _chart(at, "sequence_plot")
    heatmaps = [t for t in spec["data"] if t["type"] == "heatmap"]
    assert len(heatmaps) == 4  # the true states and one ribbon per algorithm
    # the page's own player moves the sweep shown: the chart has no Plotly Play or slider to show dead
    # in its PNG (issue 27), and First shows every ribbon's first sweep
    assert not spec.get("frames") and not spec["layout"].get("updatemenus") and not spec["layout"].get("sliders")
    last_titles = [a["text"] for a in spec["layout"]["annotations"]]
    at.button(key="seq_demo-hmm_first").click().run()
    _ok(at)
    first_titles = [a["text"] for a in _chart(at, "sequence_plot")["layout"]["annotations"]]
    assert first_titles != last_titles and any(": sweep 1," in t for t in first_titles), first_titles
    shown = _table(at, {"algorithm", "K", "NMI"}).set_index("algorithm")
    assert list(shown.index) == list(sequences.SEQUENCE_DEFAULTS) and (shown["K"] >= 1).all()
    assert shown.loc["MAP-iHMM", "NMI"] > 0.8
    # issue 27: a sentence under the table says which side wins, computed from the table
    assert any(m.value.startswith("Here ") and "the time-blind MAP-DP" in m.value for m in at.markdown)
    at.button(key="seq_demo_long").click().run()
    _ok(at)
    assert _chart(at, "trajectory_plot")["data"]
    assert any(m.value.startswith("**K = ") for m in at.markdown)
    clusters = _table(at, {"cluster", "size", "intercept", "slope"})
    assert clusters["size"].sum() == 60 and len(clusters) == 3


def test_the_grouped_demo_shows_each_groups_mix_and_the_penalty_changes_the_hard_hdp(at):
    at.switch_page("pages/sequences.py").run()
    at.button(key="seq_demo_groups").click().run()
    _ok(at)
    summary = _table(at, {"algorithm", "K", "clusters per group", "NMI"}).set_index("algorithm")
    assert list(summary.index) == list(sequences.GROUP_ALGORITHMS)
    bars = _chart(at, "group_mix")["data"]
    assert bars and all(t["type"] == "bar" for t in bars)
    assert len(bars[0]["x"]) == 24  # one bar per group
    assert any(m.value.startswith("Here ") and "group-blind" in m.value for m in at.markdown)
    before = summary.loc["Hard HDP", "K"]
    at.select_slider(key="w_grp_penalty").set_value(0.25).run()
    _ok(at)
    after = _table(at, {"algorithm", "K", "clusters per group"}).set_index("algorithm").loc["Hard HDP", "K"]
    assert after > before  # a smaller penalty per cluster: more clusters


def test_the_sequence_view_runs_only_the_algorithms_chosen_with_the_penalty_given(at):
    at.switch_page("pages/sequences.py").run()
    at.button(key="seq_demo_hmm").click().run()
    assert at.multiselect(key="w_seq_algorithms").options == list(sequences.SEQUENCE_ALGORITHMS)
    at.multiselect(key="w_seq_algorithms").set_value(["Hard HDP-HMM (direct)"]).run()
    _ok(at)
    assert list(_table(at, {"algorithm", "K"})["algorithm"]) == ["Hard HDP-HMM (direct)"]
    at.multiselect(key="w_seq_algorithms").set_value(["Hard HDP-HMM"]).run()
    _ok(at)
    shown = _table(at, {"algorithm", "K"})
    assert list(shown["algorithm"]) == ["Hard HDP-HMM"]
    k_default = int(shown["K"].iloc[0])
    at.select_slider(key="w_seq_penalty").set_value(4.0).run()
    _ok(at)
    assert int(_table(at, {"algorithm", "K"})["K"].iloc[0]) <= k_default


def test_data_page_roles_drive_the_page(at):
    long = sequences.longitudinal_demo(n_subjects=30, visits=4)
    at.session_state["data"] = sources.table_data(long, roles={"subject": "identifier", "cluster": "label"},
                                                   name="longitudinal")
    at.switch_page("pages/data.py").run()
    _ok(at)
    assert at.selectbox(key="w_seq_time").value == "(none)"
    at.selectbox(key="w_seq_time").set_value("time").run()
    at.selectbox(key="w_seq_subject").set_value("subject").run()
    _ok(at)
    at.switch_page("pages/sequences.py").run()
    _ok(at)
    spec = _chart(at, "sequence_plot")
    assert len([t for t in spec["data"] if t["type"] == "heatmap"]) == 4  # truth (the label) + 3 algorithms
    assert _chart(at, "trajectory_plot")["data"]
    assert _table(at, {"cluster", "size", "intercept", "slope"})["size"].sum() == 30
    # the registry's gating: with a time and a group column, every structured algorithm is allowed
    allowed = next(c.value for c in at.caption if c.value.startswith("Algorithms these data"))
    for name in ("MAP-iHMM", "Hard HDP-HMM", "Hard HDP", "Mixed-effects MAP-DP"):
        assert name in allowed
    at.radio(key="w_grp_view").set_value("Clusters shared across groups (hard HDP)").run()
    _ok(at)
    assert _chart(at, "group_mix")["data"]
    # the roles outlive a page switch and are shown again on the Data page
    at.switch_page("pages/data.py").run()
    assert at.selectbox(key="w_seq_time").value == "time"
    assert at.selectbox(key="w_seq_subject").value == "subject"


def test_a_time_column_alone_allows_only_the_sequence_algorithms(at):
    table = sequences.hmm_demo(T=200)
    at.session_state["data"] = sources.table_data(table, roles={"state": "label"}, name="hmm")
    at.switch_page("pages/data.py").run()
    at.selectbox(key="w_seq_time").set_value("time").run()
    at.switch_page("pages/sequences.py").run()
    _ok(at)
    allowed = next(c.value for c in at.caption if c.value.startswith("Algorithms these data"))
    assert "MAP-iHMM" in allowed and "Hard HDP-HMM" in allowed and "Hard HDP-HMM (direct)" in allowed
    assert "Hard HDP," not in allowed + "," and "Mixed-effects" not in allowed
    assert not any(r.key == "w_grp_view" for r in at.radio)
    assert _chart(at, "sequence_plot")["data"]


@pytest.mark.parametrize("shown, view", [("beaver2 (sequence)", "sequence_plot"), ("exam (groups)", "group_mix"),
                                         ("chickweight (longitudinal)", "trajectory_plot")])
def test_a_shipped_structured_set_loads_with_its_roles_marked(at, shown, view):
    at.switch_page("pages/data.py").run()
    at.selectbox(key="w_builtin").set_value(shown).run()
    at.button(key="use_builtin").click().run()
    _ok(at)
    name = shown.split(" ")[0]
    assert at.session_state["data"].name == name
    at.switch_page("pages/sequences.py").run()
    if view == "group_mix":
        at.radio(key="w_grp_view").set_value("Clusters shared across groups (hard HDP)").run()
    _ok(at)
    assert _chart(at, view)["data"]
    at.switch_page("pages/data.py").run()  # the Data page's boxes show the roles the set came with
    roles = {"beaver2": ("minutes", "(none)"), "exam": ("(none)", "school"), "chickweight": ("Time", "Chick")}[name]
    assert (at.selectbox(key="w_seq_time").value, at.selectbox(key="w_seq_subject").value) == roles


def test_groups_without_a_time_open_on_the_shared_clusters_and_take_no_column_for_time(at):
    """Issue 27: the shipped exam set (students in schools, no time) opened its trajectory view with
    the student number as the time axis (zig-zag lines, K = 1)."""
    at.switch_page("pages/data.py").run()
    at.selectbox(key="w_builtin").set_value("exam (groups)").run()
    at.button(key="use_builtin").click().run()
    at.switch_page("pages/sequences.py").run()
    _ok(at)
    assert at.radio(key="w_grp_view").value == "Clusters shared across groups (hard HDP)"
    assert _chart(at, "group_mix")["data"]
    at.radio(key="w_grp_view").set_value("Trajectories (mixed-effects MAP-DP)").run()
    _ok(at)
    assert at.selectbox(key="w_seq_cov_data").value is None
    assert any("Trajectories need a time or covariate column" in i.value for i in at.info)
    assert not [c for c in at.get("plotly_chart") if "trajectory_plot" in (c.proto.id or "")]
