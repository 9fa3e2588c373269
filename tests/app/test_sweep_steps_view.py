"""Issue 27: Explore shows one MAP-DP sweep of the run shown, a few rows at a time, with its own
player (MAPDP.sweep_steps; its exactness is tested in tests/engine/test_sweep_steps.py)."""
from apptools import chart, ok, plotly_array, start


def _points(at) -> dict:
    return {t["name"]: len(plotly_array(t["x"])) for t in chart(at, "sweep_steps_chart")["data"]}


def _step_caption(at) -> str:
    said = [c.value for c in at.caption if c.value.startswith("Step ")]
    assert len(said) == 1, said
    return said[0]


def test_one_sweep_row_by_row_from_one_cluster():
    at = start(300)
    at.radio(key="w_start").set_value("one cluster").run()
    ok(at)
    # the chart's MAP-DP starts from one cluster on this very rerun (the radio is drawn below where
    # the settings are read: it was taken one rerun late)
    assert "('start', 'one cluster')" in repr(at.session_state["frame_results"])
    assert any("Inside one sweep" in e.label for e in at.expander)
    assert not [c for c in at.get("plotly_chart") if "sweep_steps_chart" in (c.proto.id or "")]  # until asked
    at.toggle(key="w_sweep_steps_on").set_value(True).run()
    ok(at)
    assert "('start', 'one cluster')" in at.session_state["sweep_steps_results"][1]
    assert _step_caption(at).startswith("Step 40 of 40: rows 3,901 to 4,000 of 4,000")
    assert _points(at) == {"not visited yet in this sweep": 0, "visited": 3900, "visited in this step": 100}
    at.button(key="sweep_steps_first").click().run()
    ok(at)
    first = _step_caption(at)
    assert first.startswith("Step 1 of 40: rows 1 to 100 of 4,000") and "new cluster" in first
    assert _points(at) == {"not visited yet in this sweep": 3900, "visited": 0, "visited in this step": 100}
    at.number_input(key="w_sweep_steps_sweep").set_value(2).run()
    ok(at)
    # issue 43: new frames keep the step shown (the same step of the other sweep), as the main animation
    # keeps its frame; at the last step they stay at the last
    assert _step_caption(at).startswith("Step 1 of 40")
    at.button(key="sweep_steps_last").click().run()
    at.number_input(key="w_sweep_steps_sweep").set_value(1).run()
    ok(at)
    assert _step_caption(at).startswith("Step 40 of 40")
