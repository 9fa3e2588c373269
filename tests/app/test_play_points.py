"""Issue 43: Play at least two frames a second for one student. The browser draws every panel anew at
each frame, so while the animation plays each panel draws a uniform sample of at most
``animation.PLAY_POINTS`` of the points shown, in the same view and at the same point size, with a
caption saying so; Pause, or the last frame, draws every point again. The frame shown is the player's
one position as before (tests/app/test_animation_player.py)."""
import numpy as np
from streamlit.testing.v1 import AppTest

from apptools import APP
from apptools import chart as _chart
from apptools import ok as _ok
from apptools import plotly_array
from explorer import animation, sources

TIMEOUT = 240
ROWS = 1500  # more than PLAY_POINTS: the sample while playing is smaller than what is shown paused


def _markers(at) -> list:
    return [t for t in _chart(at, "animation")["data"] if t.get("mode") == "markers"]


def _frame(at) -> int:
    return [s for s in at.select_slider if s.label == "Frame"][0].value


def _while_playing_said(at) -> list:
    return [c.value for c in at.caption if c.value.startswith("While playing")]


def test_the_rows_drawn_while_playing_are_a_sample_that_keeps_each_axis_ends():
    coords = np.random.default_rng(0).normal(size=(ROWS, 2))
    rows = animation.play_rows(coords, most=animation.PLAY_POINTS, seed=3)
    assert len(rows) == animation.PLAY_POINTS and np.all(np.diff(rows) > 0)
    for j in range(2):
        assert coords[:, j].argmin() in rows and coords[:, j].argmax() in rows
    assert animation.play_rows(coords[:animation.PLAY_POINTS], most=animation.PLAY_POINTS) is None  # few: all drawn
    np.testing.assert_array_equal(animation.play_rows(coords, seed=3), rows)  # the same rows at every tick


def test_play_draws_fewer_points_in_the_same_view_and_pause_draws_them_all():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["data"] = sources.scenario_data("5.2", n=ROWS, seed=0)
    at.run()
    _ok(at)
    at.button(key="frame_first").click().run()
    paused = _markers(at)
    assert [len(plotly_array(t["x"])) for t in paused] == [ROWS] * 3 and not _while_playing_said(at)
    full_layout = _chart(at, "animation")["layout"]

    at.button(key="frame_play").click().run()
    _ok(at)
    assert at.session_state["frame_playing"] and _frame(at) == 0
    at.run()  # one tick
    assert _frame(at) == 1
    playing = _markers(at)
    assert [len(plotly_array(t["x"])) for t in playing] == [animation.PLAY_POINTS] * 3
    assert _while_playing_said(at) == [f"While playing, {animation.PLAY_POINTS:,} of the {ROWS:,} points shown are "
                                       "drawn in each panel, so that the frames keep pace; Pause, or the last frame, "
                                       "draws them all."]
    layout = _chart(at, "animation")["layout"]
    for t_play, t_full in zip(playing, paused):  # the same view: each axis' ends drawn, the same point size
        assert t_play["marker"]["size"] == t_full["marker"]["size"]
        for axis in ("x", "y"):
            drawn, every = plotly_array(t_play[axis]), plotly_array(t_full[axis])
            assert (drawn.min(), drawn.max()) == (every.min(), every.max())
    for axis in ("xaxis", "yaxis"):
        assert layout[axis].get("range") == full_layout[axis].get("range")

    at.button(key="frame_pause").click().run()
    _ok(at)
    assert not at.session_state["frame_playing"] and _frame(at) == 1  # Pause keeps the frame shown
    assert [len(plotly_array(t["x"])) for t in _markers(at)] == [ROWS] * 3 and not _while_playing_said(at)
