"""Issue 43: Play at two frames a second or more, in the browser. Each tick used to rerun the page's
fragment and send a whole new chart, which the browser drew from scratch (0.59 s a frame, 1.7 a
second). A browser that says it can play now gets every frame once and restyles one chart in place
(ui/play_component/player.js), reporting each frame it has drawn; the position stays the server's
(ui.player), so the slider, the caption, Pause, Back and Step follow the frame on screen. Headless
(AppTest runs no JavaScript) Play still ticks on the server: tests/app/test_animation_player.py.
The seconds a frame are the benchmark's (benchmarks/bench_browser_loop.py); the browser itself is
checked in tests/app/test_browser_play.py."""
import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from apptools import APP
from apptools import ok as _ok
from apptools import plotly_array
from explorer import animation, figures, playback, runner, sources

TIMEOUT = 240


@pytest.fixture(scope="module")
def small():
    d = sources.scenario_data("5.2", n=300, seed=0)
    runs = [runner.run(d, "K-means", {"n_clusters": 3}), runner.run(d, "Gibbs", {"N0": 1.0, "n_sweeps": 6})]
    coords, names = sources.projection(d)
    return animation.animation_frames(runs, coords, None, d.truth), coords, names, d


def _applied(payload: dict, f: int) -> dict:
    """What the browser shows at frame ``f``: the figure drawn first, frame ``f``'s values set as the
    component sets them (each trace's keys, each panel title)."""
    shown = json.loads(json.dumps(payload["figure"]))
    update = payload["frames"][f]
    for trace, values in zip(update["traces"], update["data"]):
        for key, value in values.items():
            if isinstance(value, dict) and "bdata" not in value:
                shown["data"][trace].setdefault(key, {}).update(value)
            else:
                shown["data"][trace][key] = value
    for i, text in enumerate(update["annotations"]):
        shown["layout"]["annotations"][i]["text"] = text
    return shown


def test_the_frames_sent_once_redraw_the_pages_chart_at_every_frame(small):
    f, coords, names, d = small
    truth = animation.truth_view(d.truth, coords, None)
    options = {"settings": {"K-means": "K = 3"}, "truth": truth, "rows": np.arange(len(coords))}
    payload = playback.browser_frames(f, coords, names, start=2, **options)
    assert len(payload["frames"]) == f.n_frames
    for frame in range(f.n_frames):
        page = json.loads(figures.animation_figure(f, coords, names, start=frame, controls=False, **options).to_json())
        shown = _applied(payload, frame)
        assert [a["text"] for a in shown["layout"]["annotations"]] == [a["text"] for a in page["layout"]["annotations"]]
        for mine, theirs in zip(shown["data"], page["data"]):
            for key in ("x", "y"):
                np.testing.assert_array_equal(plotly_array(mine[key]), plotly_array(theirs[key]))
            if "marker" in theirs:
                np.testing.assert_array_equal(plotly_array(mine["marker"]["color"]),
                                              plotly_array(theirs["marker"]["color"]))
    page = json.loads(figures.animation_figure(f, coords, names, start=2, controls=False, **options).to_json())
    page["layout"].pop("template")  # the browser keeps the theme Streamlit gave the chart at rest
    assert payload["figure"] == {"data": page["data"], "layout": page["layout"]}  # the same chart, same size


def _component(at) -> list:
    """The player's components on the page: (widget key, data)."""
    found = []

    def walk(node):
        for child in getattr(node, "children", {}).values():
            proto = getattr(child, "proto", None)
            if proto is not None and getattr(proto, "component_name", "") == "mapdp_explorer.player":
                found.append((proto.id.rsplit("-", 1)[-1], json.loads(proto.json)))
            walk(child)
    walk(at._tree)
    return found


def _frame(at) -> int:
    return [s for s in at.select_slider if s.label == "Frame"][0].value


def test_a_browser_that_can_play_gets_every_frame_once_and_the_server_does_not_tick():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["data"] = sources.scenario_data("5.2", n=400, seed=0)
    at.run()
    _ok(at)
    probes = [data for key, data in _component(at) if data["mode"] == "probe"]
    assert probes and probes[0]["chart"] == "animation" and probes[0]["plotly"].endswith("/plotly.min.js")
    at.session_state["frame_browser_ready"] = True  # what the probe's "ready" report sets
    at.button(key="frame_first").click().run()
    at.button(key="frame_play").click().run()
    _ok(at)
    assert at.session_state["frame_playing"]
    played = [data for key, data in _component(at) if data["mode"] == "play"]
    assert len(played) == 1 and not [c for c in at.get("plotly_chart") if "animation" in (c.proto.id or "")]
    n = len([s for s in at.select_slider if s.label == "Frame"][0].options)
    assert played[0]["start"] == 0 and len(played[0]["frames"]) == n and played[0]["figure"]["data"]
    assert played[0]["delay_ms"] <= 450  # more than two frames a second
    at.run()  # a run of the page while the browser plays: no tick, the browser's reports move the frame
    _ok(at)
    assert _frame(at) == 0 and at.session_state["frame_playing"]


def test_the_browsers_reports_move_the_one_position():
    """A report of the frame drawn moves the position (the slider follows); one of an earlier Play, or
    sent after Pause, moves nothing; once reported, later runs send the token alone; a browser that
    could not draw stops Play, and the next Play ticks on the server."""
    def script():
        import streamlit as st

        from ui import player

        keys = player.Keys("t")
        ss = st.session_state
        ss.setdefault("t_position", 0)
        ss.setdefault("t_last_index", 9)
        ss.setdefault("t_playing", True)
        ss.setdefault("t_browser_ready", True)
        ss.setdefault("t_browser_token", "t:2")
        ss["w"] = {"shown": st.session_state["said"]}
        player._shown(keys, "w")()
        st.write(f"{ss['t_position']} {ss['t_playing']} {ss.get('t_browser_sent')} {ss['t_browser_ready']}")

    at = AppTest.from_function(script)
    at.session_state["said"] = {"token": "t:2", "frame": 4}
    at.run()
    assert at.markdown[0].value == "4 True t:2 True"
    at.session_state["said"] = {"token": "t:1", "frame": 7}  # an earlier Play's
    at.run()
    assert at.markdown[0].value == "4 True t:2 True"
    at.session_state["said"] = {"token": "t:2", "frame": -1, "lost": True}  # redrawn: send the frames again
    at.run()
    assert at.markdown[0].value == "4 True None True"
    at.session_state["said"] = {"token": "t:2", "frame": 5, "failed": "no WebGL"}
    at.run()
    assert at.markdown[0].value == "5 False t:2 False"
    at.session_state["said"] = {"token": "t:2", "frame": 8}  # after Pause: nothing moves
    at.run()
    assert at.markdown[0].value == "5 False t:2 False"


def test_pause_and_step_start_from_the_browsers_latest_report_whichever_callback_runs_first():
    """A click on Pause comes with the browser's latest report; Streamlit may call Pause's callback
    before the report's. Pause (and Back, Step) read the report first: the frame on screen."""
    def script():
        import streamlit as st

        from ui import player

        keys = player.Keys("t")
        ss = st.session_state
        ss.setdefault("t_position", 4)
        ss.setdefault("t_last_index", 9)
        ss.setdefault("t_playing", True)
        ss.setdefault("t_browser_ready", True)
        ss.setdefault("t_browser_token", "t:2")
        ss.setdefault("t_browser_chart", {"shown": {"token": "t:2", "frame": 6}})
        if not ss.get("clicked"):  # once: the callback reruns the script
            ss["clicked"] = True
            if st.session_state["click"] == "pause":
                player._play_or_pause(keys, True)()
            else:
                player._move(keys, lambda p, n: p + 1)()
        st.write(f"{ss['t_position']} {ss['t_playing']}")

    at = AppTest.from_function(script)
    at.session_state["click"] = "pause"
    at.run()
    assert at.markdown[0].value == "6 False"
    at = AppTest.from_function(script)
    at.session_state["click"] = "step"
    at.run()
    assert at.markdown[0].value == "7 False"
