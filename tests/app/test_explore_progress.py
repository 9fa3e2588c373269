"""Issue 27, waiting blind: Explore draws each algorithm's panel as soon as it finishes, with a
placeholder panel (and its progress) for each one still running, and says before a long run how
long it may take, from the first steps timed on the data (explorer.comparison, as Compare does).

Headless (streamlit.testing.v1.AppTest): the page runs in a thread of this process, so a test can
look at what the page had sent to the browser at a given moment: here, while the slow algorithm
runs (a wrapper around explorer.runner.run reads the page's messages so far). The slow algorithm
is made "slow" by its estimate (its timed steps scaled up, as on a table 10 000 times larger);
it then runs for real on the small table.
"""
import json

import pytest
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import parse_tree_from_messages

from apptools import APP
from apptools import chart as _chart
from apptools import ok as _ok
from explorer import comparison, runner, sources

TIMEOUT = 240
SLOW = "Variational DP"


def _page_so_far():
    """What the running page has sent to the browser so far (called from the page's own thread)."""
    script_runner = get_script_run_ctx()._enqueue.__self__  # AppTest's LocalScriptRunner
    return parse_tree_from_messages(list(script_runner.forward_msgs()))


def _titles(tree_or_at, key="animation") -> list[str]:
    for chart in tree_or_at.get("plotly_chart"):
        if chart.proto.id and key in chart.proto.id:
            return [a["text"] for a in json.loads(chart.proto.spec)["layout"]["annotations"]]
    return []


@pytest.fixture
def slow_estimate(monkeypatch):
    """The slow algorithm's timed steps scaled up 10 000 times (as on a much larger table)."""
    real = comparison.compare_estimate

    def scaled(data, algorithms, **kwargs):
        table = real(data, algorithms, **kwargs)
        slow = table["algorithm"] == SLOW
        table.loc[slow, ["setup_seconds", "step_seconds"]] *= 10_000
        return comparison.scale_estimate(table, kwargs.get("restarts", 1))

    monkeypatch.setattr(comparison, "compare_estimate", scaled)


@pytest.fixture
def seen_while_slow(monkeypatch):
    """The page as it stood when the slow algorithm started to run."""
    seen = {}
    real = runner.run

    def watched(data, name, *args, **kwargs):
        if name == SLOW:
            seen["tree"] = _page_so_far()
        return real(data, name, *args, **kwargs)

    monkeypatch.setattr(runner, "run", watched)
    return seen


def _app(n: int = 300, **settings) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["data"] = sources.scenario_data("5.2", n=n, seed=0)
    at.session_state["settings"] = {"restarts": 1, **settings}
    return at


def test_the_fast_panel_is_drawn_before_the_slow_algorithm_finishes(slow_estimate, seen_while_slow):
    at = _app(algorithms=["K-means", SLOW])
    at.run()
    _ok(at)
    tree = seen_while_slow["tree"]
    # while the slow one runs: the fast one's panel is on the page, alone ...
    titles = _titles(tree, "animation_so_far")
    assert len(titles) == 1 and titles[0].startswith("<b>K-means</b>"), titles
    # ... the slow one has a placeholder panel saying it runs, and the estimate was said first
    said = [m.value for m in tree.markdown]
    assert any(m.startswith(f"**{SLOW}**") and "running" in m for m in said), said
    assert any("may take up to about" in i.value and SLOW in i.value for i in tree.info)
    # when everything is done: one chart with both panels, no placeholder left, what the wait was
    titles = _titles(at)
    assert [t.split("</b>")[0] for t in titles] == ["<b>K-means", f"<b>{SLOW}"]
    assert not _titles(at, "animation_so_far")
    assert not any(m.value.startswith(f"**{SLOW}**") for m in at.markdown)
    assert any(c.value.startswith("Estimated before the run at up to about") for c in at.caption)
    # the animation's controls work on the chart drawn in the early chart's place
    last = next(s for s in at.select_slider if s.label == "Frame").value
    at.button(key="frame_back").click().run()
    _ok(at)
    assert next(s for s in at.select_slider if s.label == "Frame").value == last - 1


def test_a_quick_run_says_no_estimate_and_draws_once(seen_while_slow):
    """The teaching loop at a few hundred rows: nothing announced, no early chart, no placeholder."""
    at = _app(algorithms=["MAP-DP", "K-means", "DP-means"])
    at.run()
    _ok(at)
    assert not any("may take up to about" in i.value for i in at.info)
    assert not any(c.value.startswith("Estimated before the run") for c in at.caption)
    assert len(_titles(at)) == 3 and not _titles(at, "animation_so_far")
    at.select_slider(key="w_N0").set_value(1.0).run()
    _ok(at)
    assert _titles(at)[0].startswith("<b>MAP-DP</b> (N0 = 1)")


def test_a_large_table_is_announced_with_each_algorithms_share(slow_estimate, seen_while_slow):
    """The estimate is said before the run, per algorithm, at most each one's time limit."""
    at = _app(algorithms=["MAP-DP", SLOW], time_budget=20.0)
    at.run()
    _ok(at)
    said = [i.value for i in seen_while_slow["tree"].info]
    assert any(m.startswith("This run may take up to about 20 s") and f"{SLOW} up to 20 s (its time limit)" in m
               for m in said), said
    assert any(c.value.startswith("Estimated before the run at up to about 20 s; it took") for c in at.caption)


def test_run_estimate_times_one_algorithm_with_the_apps_settings():
    """explorer.comparison.run_estimate: compare_estimate for one algorithm's app settings (DP-means
    before its λ is known is timed at its default); expected_seconds scales and caps it."""
    d = sources.scenario_data("5.2", n=300, seed=0)
    for name, params in (("K-means", {"n_clusters": 3, "restarts": 4, "time_budget": 9.0}), ("DP-means", {}),
                         ("MAP-DP", {"N0": 1.0, "start": "one cluster"})):
        table = comparison.run_estimate(d, name, params)
        assert list(table["algorithm"]) == [name] and (table["step_seconds"] >= 0).all()
        assert int(table["restarts"].iloc[0]) == 1  # one restart: scaled afterwards
        many = comparison.expected_seconds(table, 5)
        assert many[name] == pytest.approx(5 * table["max_seconds"].iloc[0])
        assert comparison.expected_seconds(table, 5, time_budget=1e-9)[name] == pytest.approx(1e-9)
