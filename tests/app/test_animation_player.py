"""Issue 27, the Explore page's animation headless (streamlit.testing.v1.AppTest): one position for
First, Back, Play, Step, Last and the frame slider (ui.player); frames labelled in each algorithm's
own units; numbers that agree between the panels, the settings column and the table; Stop only
while something runs; the last chart kept in its place while a new run computes.

Before, Play and the slider were Plotly's, inside the chart, and moved the picture in the browser
only: after Play to the end Back went to frame 1, after a click on the middle of the slider Step
went to frame 2. Play is now the page's: every run of its fragment while playing is one tick, so a
test plays by running the page again, once per frame (the browser's timer does the same,
tests/app/test_browser.py).
"""
import re

import pytest
from streamlit.testing.v1 import AppTest

from apptools import APP
from apptools import chart as _chart
from apptools import ok as _ok
from apptools import table as _table
from explorer import sources

TIMEOUT = 240


def _app(n: int = 400, **settings) -> AppTest:
    """Explore on a small PLOS 5.2 (few rows: quick runs)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["data"] = sources.scenario_data("5.2", n=n, seed=0)
    if settings:
        at.session_state["settings"] = dict(settings)
    at.run()
    _ok(at)
    return at


@pytest.fixture
def at():
    return _app()


def _slider(at):
    """The frame slider (its key changes whenever the page moves the frame itself: ui.player)."""
    found = [s for s in at.select_slider if s.label == "Frame"]
    assert len(found) == 1
    return found[0]


def _frame(at) -> int:
    """The frame the page shows (0-based), read from the slider, checked against the caption under it."""
    shown = _slider(at).value
    said = [c.value for c in at.caption if c.value.startswith("frame ")]
    assert said and said[0].startswith(f"frame {shown + 1} of "), (shown, said)
    return shown


def _last(at) -> int:
    return len(_slider(at).options) - 1


def _titles(at) -> list:
    return [a["text"] for a in _chart(at, "animation")["layout"]["annotations"]]


def _play_to_the_end(at, limit: int = 200) -> int:
    """Press Play and let it run: each run of the page while playing is one tick. Returns the ticks."""
    at.button(key="frame_play").click().run()
    _ok(at)
    ticks = 0
    while at.session_state["frame_playing"]:
        assert at.button(key="frame_pause").label == "Pause"
        at.run()
        ticks += 1
        assert ticks <= limit
    _ok(at)
    assert at.button(key="frame_play").label == "Play"
    return ticks


def test_the_chart_is_drawn_at_the_pages_frame_without_plotlys_own_controls(at):
    spec = _chart(at, "animation")
    assert not spec.get("frames") and not spec["layout"].get("sliders") and not spec["layout"].get("updatemenus")
    last = _last(at)
    assert last >= 4 and _frame(at) == last  # new results open on their last frame
    at.button(key="frame_first").click().run()
    assert _frame(at) == 0 and all(re.search(r"<br>(sweep|iteration|pass) 1 ·", t) for t in _titles(at))


def test_play_to_the_end_then_back_shows_the_second_to_last_frame(at):
    at.button(key="frame_first").click().run()
    ticks = _play_to_the_end(at)
    last = _last(at)
    assert ticks == last and _frame(at) == last
    at.button(key="frame_back").click().run()
    _ok(at)
    assert _frame(at) == last - 1
    at.button(key="frame_next").click().run()
    assert _frame(at) == last


def test_the_slider_then_step_and_back_move_from_the_slider_s_frame(at):
    last = _last(at)
    middle = last // 2
    _slider(at).set_value(middle).run()
    _ok(at)
    assert _frame(at) == middle
    at.button(key="frame_next").click().run()
    assert _frame(at) == middle + 1
    at.button(key="frame_back").click().run()
    at.button(key="frame_back").click().run()
    assert _frame(at) == middle - 1
    # and Play goes on from the slider's frame
    _slider(at).set_value(middle).run()
    at.button(key="frame_play").click().run()
    assert _frame(at) == middle  # the Play click draws the frame it starts from
    at.run()
    assert _frame(at) == middle + 1
    at.run()
    assert _frame(at) == middle + 2


def test_pause_keeps_the_frame_and_step_goes_on_from_it(at):
    at.button(key="frame_first").click().run()
    at.button(key="frame_play").click().run()
    at.run()
    at.run()
    assert _frame(at) == 2
    at.button(key="frame_pause").click().run()
    assert not at.session_state["frame_playing"] and at.button(key="frame_play").label == "Play"
    at.run()  # no tick while paused
    assert _frame(at) == 2
    at.button(key="frame_next").click().run()
    assert _frame(at) == 3


def test_a_move_while_playing_pauses_there(at):
    at.button(key="frame_first").click().run()
    at.button(key="frame_play").click().run()
    at.run()
    at.button(key="frame_next").click().run()
    assert _frame(at) == 2 and not at.session_state["frame_playing"]
    at.run()
    assert _frame(at) == 2


def test_play_at_the_last_frame_plays_again_from_the_first(at):
    last = _last(at)
    assert _frame(at) == last
    at.button(key="frame_play").click().run()
    assert _frame(at) == 0 and at.session_state["frame_playing"]
    at.run()
    assert _frame(at) == 1
    at.button(key="frame_last").click().run()
    assert _frame(at) == last and not at.session_state["frame_playing"]


def test_new_results_keep_the_frame_and_stop_playing(at):
    """Issue 43: changing N0, the prior or an algorithm's setting sent the animation to its last
    frame (frame 8 became 20); it now stays on the frame shown (the nearest the new runs have)."""
    at.button(key="frame_first").click().run()
    at.button(key="frame_play").click().run()
    at.run()
    at.run()
    assert _frame(at) == 2 and at.session_state["frame_playing"]
    at.slider(key="w_kmeans_n_clusters").set_value(5).run()
    _ok(at)
    assert not at.session_state["frame_playing"] and _frame(at) == min(2, _last(at))
    n0 = at.select_slider(key="w_N0")
    n0.set_value(n0.options[n0.options.index(str(n0.value)) + 3] if str(n0.value) in n0.options else 10.0).run()
    _ok(at)
    assert _frame(at) == min(2, _last(at))
    at.button(key="frame_last").click().run()
    at.slider(key="w_kmeans_n_clusters").set_value(4).run()  # at the end: stays at the (new) end
    assert _frame(at) == _last(at)
    # a page switch and back keeps the frame
    at.button(key="frame_back").click().run()
    kept = _frame(at)
    at.switch_page("pages/compare.py").run()
    at.switch_page("pages/explore.py").run()
    _ok(at)
    assert _frame(at) == kept


def test_a_pause_the_browser_still_showed_after_playback_ended_does_not_restart_it(at):
    """Issue 43: a click on Pause that reached the server after playback had ended was read as
    Play and restarted from frame 1. Pause and Play are now different buttons."""
    at.button(key="frame_first").click().run()
    at.button(key="frame_play").click().run()
    at.run()
    pause = at.button(key="frame_pause")
    at.session_state["frame_playing"] = False  # playback ended meanwhile (the last tick, server side)
    at.run()
    shown = _frame(at)
    pause.click().run()  # the stale Pause the browser still showed
    _ok(at)
    assert not at.session_state["frame_playing"] and _frame(at) == shown


def test_each_algorithm_counts_frames_in_its_own_units(at):
    """Issue 27: the slider read "sweep 46" (DP-means' passes) beside MAP-DP's "sweep 7 (done)"."""
    last = _last(at)
    label = [c.value for c in at.caption if c.value.startswith("frame ")][0]
    assert re.fullmatch(rf"frame {last + 1} of {last + 1}: MAP-DP sweep \d+ \(converged\)(, its components grouped into \d+ clusters "
                        r"\([^)]*\))? · K-means iteration \d+ "
                        r"\((converged|step limit)\) · DP-means pass \d+ \((converged|step limit)\)", label), label
    steps = dict(re.findall(r"(MAP-DP|K-means|DP-means) (?:sweep|iteration|pass) (\d+)", label))
    titles = _titles(at)
    assert f"sweep {steps['MAP-DP']} (converged)" in titles[0] and f"iteration {steps['K-means']} (" in titles[1]
    assert f"pass {steps['DP-means']} (" in titles[2]
    table = _table(at, {"algorithm", "K", "steps"}).set_index("algorithm")
    assert all(int(table.loc[a, "steps"]) == int(steps[a]) for a in steps)  # the last frame: each one's last step


def test_dpmeans_lambda_is_said_once_with_the_k_it_reaches(at):
    """Issue 27: "λ = 8.35, chosen to give MAP-DP's K = 5" beside DP-means at K = 7, and a disabled
    box showing 4.00. The settings column now says the λ that runs and the K it gives; the panel's
    title and the note under the chart say the same λ."""
    said = [c.value for c in at.caption if c.value.startswith("λ for DP-means: chosen to match MAP-DP's K")]
    assert len(said) == 1
    m = re.fullmatch(r"λ for DP-means: chosen to match MAP-DP's K = (\d+) \(its components\): λ = ([\d.e+-]+), "
                     r"which gives DP-means "
                     r"K = (\d+)(\.| \(not exactly MAP-DP's K: see under the chart\)\.)", said[0])
    assert m, said[0]
    target, lam, got = int(m.group(1)), m.group(2), int(m.group(3))
    table = _table(at, {"algorithm", "K"}).set_index("algorithm")
    components = table.loc["MAP-DP", "components"] if "components" in table.columns else table.loc["MAP-DP", "K"]
    assert int(components) == target and int(table.loc["DP-means", "K"]) == got  # merged: K counts clusters
    assert _titles(at)[2].startswith(f"<b>DP-means</b> (λ = {lam})")
    note = [c.value for c in at.caption if c.value.startswith("DP-means λ = ")]
    assert len(note) == 1 and note[0].startswith(f"DP-means λ = {lam}, chosen to give MAP-DP's K = {target} (its components)")
    assert (f"ends at K = {got}" in note[0]) == (got != target)


def test_a_run_cut_by_the_time_limit_says_stopped_in_its_panel_and_its_warning():
    """Issue 27: Variational DP read "iteration 200 (done)" beside "stopped by the time limit"."""
    at = _app(n=4000, algorithms=["MAP-DP", "Gibbs"], time_budget=1.0, **{"Gibbs:n_sweeps": 1000})
    warned = [w.value for w in at.warning if "stopped by the time limit" in w.value]
    titles = _titles(at)
    assert warned and warned[0].startswith("Gibbs was stopped by the time limit after ")
    assert "(stopped)" in titles[1] and "(converged)" not in titles[1] and "(step limit)" not in titles[1]
    assert "Gibbs sweep" in [c.value for c in at.caption if c.value.startswith("frame ")][0]


def test_stop_shows_only_while_something_runs(at):
    """Issue 27: a Stop button sat above every chart when nothing ran."""
    assert "explore_stop" in at.session_state  # the first run computed: Stop was there meanwhile
    assert not [b for b in at.button if b.key == "explore_stop"]  # and is gone once it is done
    at.run()  # everything in the session: no Stop at all
    assert "explore_stop" not in at.session_state and not [b for b in at.button if b.key == "explore_stop"]
    at.button(key="frame_back").click().run()
    assert "explore_stop" not in at.session_state
    at.slider(key="w_kmeans_n_clusters").set_value(4).run()  # a new run: Stop while it computes
    _ok(at)
    assert "explore_stop" in at.session_state and not [b for b in at.button if b.key == "explore_stop"]


def _path(at, key: str) -> tuple:
    """Where the chart keyed ``key`` sits in the page (block indices from the root)."""
    def walk(node, path):
        for i, child in getattr(node, "children", {}).items():
            here = path + (i,)
            if child.type == "plotly_chart" and key in (getattr(child.proto, "id", "") or ""):
                return here
            found = walk(child, here)
            if found:
                return found
        return None
    return walk(at._tree, ())


def test_the_chart_keeps_its_place_while_a_new_run_computes(at):
    """Issue 27: a new run's progress bars took the chart's place on the page (the browser showed
    them instead of the last chart until the new one was ready). They now have their own place
    above the chart, so the chart is at the same place whether a run computes or not."""
    cached = _path(at, "animation")
    at.slider(key="w_kmeans_n_clusters").set_value(4).run()  # computes, with progress bars
    assert _path(at, "animation") == cached
    at.button(key="frame_first").click().run()
    assert _path(at, "animation") == cached


def test_stop_button_helper_draws_nothing_when_nothing_runs():
    def script():
        import streamlit as st

        from ui import common

        slot = st.empty()
        if common.stop_button("p", "same settings", container=slot, running=st.session_state.get("running", True)):
            st.stop()
        st.write("shown")

    at = AppTest.from_function(script).run()
    assert [b.key for b in at.button] == ["p_stop"]
    at.session_state["running"] = False
    at.run()
    assert not at.button and at.markdown[0].value == "shown"
    # a click that interrupted a run (the run marked busy) stops; it stays stopped with nothing running
    at.session_state["running"] = True
    at.run()
    at.session_state["p_busy"] = True
    at.button(key="p_stop").click().run()
    assert any("Stopped" in i.value for i in at.info)
    at.session_state["running"] = False
    at.run()
    assert any("Stopped" in i.value for i in at.info) and "p_stop" not in [b.key for b in at.button]
    at.button(key="p_run_again").click().run()
    assert not at.info and at.markdown[0].value == "shown"


def test_a_value_sent_for_an_older_slider_is_not_a_move():
    """In the browser, Play's next tick could carry the slider's value from before the page moved on:
    taken for a move of the slider, it paused Play a frame back. Each page move draws a new slider
    (a new key); a value for an older one is ignored."""
    def script():
        import streamlit as st

        from ui import player

        keys = player.Keys("t")
        ss = st.session_state
        ss.setdefault("t_position", 5)
        ss.setdefault("t_moves", 3)
        ss.setdefault("t_playing", True)
        ss[st.session_state["which"]] = st.session_state["value"]
        player._slid(keys, st.session_state["which"])()
        st.write(f"{ss['t_position']} {ss['t_playing']}")

    at = AppTest.from_function(script)
    at.session_state["which"], at.session_state["value"] = "w_t_2", 0
    at.run()
    assert at.markdown[0].value == "5 True"  # an older slider: nothing moves, Play goes on
    at.session_state["which"], at.session_state["value"] = "w_t_3", 1
    at.run()
    assert at.markdown[0].value == "1 False"  # the slider on screen: moved there, and paused


def test_the_true_groups_panel_on_request(at):
    """Issue 27, what teachers look for: the labels the data came with as a panel beside the
    algorithms (off by default), and points that say their row on hover."""
    before = _chart(at, "animation")
    A = len(before["layout"]["annotations"])
    assert not any("True groups" in a["text"] for a in before["layout"]["annotations"])
    assert all("row %{customdata}" in t["hovertemplate"] for t in before["data"] if t.get("mode") == "markers")
    at.checkbox(key="w_truth").check().run()
    _ok(at)
    after = _chart(at, "animation")
    titles = [a["text"] for a in after["layout"]["annotations"]]
    assert len(titles) == A + 1 and "True groups" in titles[-1] and "K = 3" in titles[-1]
    truth_points = [t for t in after["data"] if t.get("name") == "True groups"]
    assert len(truth_points) == 1 and "true group" in truth_points[0]["hovertemplate"]
