"""The Sequences and subjects page, headless (streamlit.testing.v1.AppTest): its two demos, and the
time and subject columns marked on the Data page."""
import pytest

from apptools import chart as _chart
from apptools import ok as _ok
from apptools import start
from apptools import table as _table
from mapdp_core import explorer, sequences

TIMEOUT = 240


@pytest.fixture
def at():
    return start(TIMEOUT)


def test_without_roles_the_page_explains_and_runs_both_demos(at):
    at.switch_page("pages/sequences.py").run()
    _ok(at)
    assert at.title[0].value == "Sequences and subjects"
    assert any("time column" in i.value for i in at.info)
    at.button(key="seq_demo_hmm").click().run()
    _ok(at)
    spec = _chart(at, "sequence_plot")
    heatmaps = [t for t in spec["data"] if t["type"] == "heatmap"]
    assert len(heatmaps) == 4  # the true states and one ribbon per algorithm
    shown = _table(at, {"algorithm", "K", "NMI"}).set_index("algorithm")
    assert list(shown.index) == list(sequences.SEQUENCE_ALGORITHMS) and (shown["K"] >= 1).all()
    assert shown.loc["MAP-iHMM", "NMI"] > 0.8
    at.button(key="seq_demo_long").click().run()
    _ok(at)
    assert _chart(at, "trajectory_plot")["data"]
    assert any(m.value.startswith("**K = ") for m in at.markdown)
    clusters = _table(at, {"cluster", "size", "intercept", "slope"})
    assert clusters["size"].sum() == 60 and len(clusters) == 3


def test_data_page_roles_drive_the_page(at):
    long = sequences.longitudinal_demo(n_subjects=30, visits=4)
    at.session_state["data"] = explorer.table_data(long, roles={"subject": "identifier", "cluster": "label"},
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
    # the roles outlive a page switch and are shown again on the Data page
    at.switch_page("pages/data.py").run()
    assert at.selectbox(key="w_seq_time").value == "time"
    assert at.selectbox(key="w_seq_subject").value == "subject"
