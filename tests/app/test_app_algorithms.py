"""The registry's algorithms in the app, headless (streamlit.testing.v1.AppTest): SUGS and DP search
appear on Explore and Compare with their own controls, take MAP-DP's N0 and prior, and their frames'
rows not visited yet are drawn grey, said in the titles and under the chart.
"""
import re

import pytest

from apptools import chart as _chart
from apptools import ok as _ok
from apptools import plotly_array, start
from apptools import table as _table
from explorer import figures

TIMEOUT = 240
NEW = ["SUGS", "DP search"]


@pytest.fixture
def at():
    return start(TIMEOUT)


def _titles(at) -> list[str]:
    return [a["text"] for a in _chart(at, "animation")["layout"]["annotations"]]


def _run_params(at, name: str) -> dict:
    """The settings the session's cached run of ``name`` ran with (ui.common.run's cache key)."""
    keys = [key for key in at.session_state["runs"] if key[1] == name]
    assert keys, f"no run of {name} in the session"
    return dict(keys[-1][2])


def test_explore_runs_sugs_and_dp_search_from_the_registry(at):
    assert set(NEW) <= set(at.pills(key="w_algorithms").options)
    at.pills(key="w_algorithms").set_value(["MAP-DP", *NEW]).run()
    _ok(at)
    # DP search's own controls, from its ui hints; SUGS has none beyond MAP-DP's N0 and prior
    beam, heuristic = at.slider(key="w_dpsearch_beam_size"), at.selectbox(key="w_dpsearch_heuristic")
    assert beam.value == 10 and heuristic.value == "inadmissible"
    assert heuristic.options == ["trivial", "inadmissible", "admissible"]
    titles = _titles(at)
    assert [t.split("</b>")[0] for t in titles] == ["<b>MAP-DP", "<b>SUGS", "<b>DP search"]
    assert titles[2].startswith("<b>DP search</b> (beam = 10, h = inadmissible)")
    # the last frame says how each run ended, and every row is placed
    assert all(any(f"({e})" in t for e in ("converged", "step limit")) and "not yet visited" not in t for t in titles)
    shown = _table(at, {"algorithm", "K", "NMI"}).set_index("algorithm")
    assert list(shown.index) == ["MAP-DP", *NEW] and (shown["K"] >= 1).all()
    assert shown.loc["SUGS", "NMI"] > 0.5  # the best of SUGS's visiting orders finds PLOS 5.2's clusters
    # MAP-DP's chosen N0 and prior reach the algorithms that read the mixed table
    n0 = at.select_slider(key="w_N0").value
    for name in ["MAP-DP", *NEW]:
        params = _run_params(at, name)
        assert params["N0"] == n0 and {"spread", "weight", "structure"} <= set(params)
    assert _run_params(at, "DP search")["beam_size"] == 10
    assert any("build the clustering row by row" in c.value for c in at.caption)
    curves = _chart(at, "traces")
    assert {t["name"] for t in curves["data"]} >= {"SUGS K", "DP search objective"}

    # the first frame: the rows not visited yet are grey and counted in the titles
    at.button(key="frame_first").click().run()
    _ok(at)
    spec = _chart(at, "animation")
    titles = [a["text"] for a in spec["layout"]["annotations"]]
    assert "not yet visited" not in titles[0] and "not yet visited" in titles[1] and "not yet visited" in titles[2]
    colours = plotly_array(spec["data"][3]["marker"]["color"])  # SUGS's points
    assert spec["data"][3]["marker"]["colorscale"][-1][1] == figures.UNVISITED
    grey = int((colours == len(figures.PALETTE)).sum())
    said = int(re.search(r"K = \d+ · ([\d,]+) not yet visited", titles[1]).group(1).replace(",", ""))
    assert grey == said > 0

    # DP search's controls change what runs (beam 1: greedy, quick whatever the heuristic)
    at.slider(key="w_dpsearch_beam_size").set_value(1).run()
    at.selectbox(key="w_dpsearch_heuristic").set_value("trivial").run()
    _ok(at)
    assert _titles(at)[2].startswith("<b>DP search</b> (beam = 1, h = trivial)")
    assert at.session_state["settings"]["DP search:beam_size"] == 1
    assert _run_params(at, "DP search")["heuristic"] == "trivial"


def test_compare_includes_sugs_and_dp_search(at):
    at.switch_page("pages/compare.py").run()
    at.slider(key="w_cmp_restarts").set_value(2).run()
    at.pills(key="w_cmp_algorithms").set_value(["MAP-DP", *NEW]).run()
    _ok(at)
    summary = _table(at, {"algorithm", "restarts", "K mean", "nmi mean"}).set_index("algorithm")
    assert list(summary.index) == ["MAP-DP", *NEW]
    # DP search has no random element: it runs once, and that is no early end
    assert summary["restarts"].to_dict() == {"MAP-DP": 2, "SUGS": 2, "DP search": 1}
    assert not any("ended the comparison early" in w.value for w in at.warning)
    assert any("SUGS" in c.value and "DP search" in c.value and "N0" in c.value for c in at.caption)
