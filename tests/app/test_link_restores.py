"""Issue 43, item 3/4: the address bar holds the session's settings, its public data set and the
animation's frame, so a reload or a shared link comes back to the same scenario, frame and sliders.
The teacher's link made on PLOS 5.6 opened on 5.2 at the last frame, with the prior spread 1.0
read back as 0.25 (the knob converted against 5.2's automatic choice instead of 5.6's)."""
import pytest
from streamlit.testing.v1 import AppTest

from apptools import APP
from apptools import ok as _ok

TIMEOUT = 300


def _open(params: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    _ok(at)
    return at


def _params(at) -> dict:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def _frame(at) -> int:
    return [s for s in at.select_slider if s.label == "Frame"][0].value


def test_a_link_made_on_a_scenario_restores_the_scenario_the_frame_and_every_slider():
    first = _open({"dataset": "scenario:5.6:400:0", "algorithms": "MAP-DP,K-means"})
    assert first.session_state["data"].name.startswith("PLOS 5.6")
    first.select_slider(key="w_spread").set_value(2.0).run()
    first.slider(key="w_restarts").set_value(2).run()
    first.button(key="frame_first").click().run()
    first.button(key="frame_next").click().run()
    _ok(first)
    link = _params(first)
    assert link["dataset"] == "scenario:5.6:400:0" and link["frame"] == "2"
    second = _open(link)
    assert second.session_state["data"].name.startswith("PLOS 5.6")
    assert second.select_slider(key="w_spread").value == 2.0  # not converted against another data set's choice
    assert second.slider(key="w_restarts").value == 2
    assert _frame(second) == 1
    assert second.session_state["data_origin"]["w_gen_section"] == "5.6"  # the Data page shows what was loaded


@pytest.mark.parametrize("bad", ["builtin:../../etc/passwd", "scenario:9.9", "crp:5:1:1:0", "clinical:x:3:0.1:0"])
def test_a_link_naming_no_public_data_set_is_said_in_a_sentence_and_keeps_the_data(bad):
    at = _open({"dataset": bad, "algorithms": "K-means"})
    assert at.session_state["data"].name.startswith("PLOS 5.2")
    assert any("data set was not used" in w.value for w in at.warning)


def test_an_uploaded_table_is_never_named_in_the_address_bar():
    import numpy as np
    import pandas as pd
    from explorer import sources

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    rng = np.random.default_rng(0)
    at.session_state["data"] = sources.table_data(pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)}),
                                                  name="mine.csv")
    at.session_state["settings"] = {"algorithms": ["K-means"]}
    at.run()
    _ok(at)
    params = _params(at)
    assert "dataset" not in params and params.get("algorithms") == "K-means"


def test_the_address_bar_follows_the_frame_but_not_every_tick_of_play():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    from explorer import sources

    at.session_state["data"] = sources.scenario_data("5.2", n=400, seed=0)
    at.run()
    at.button(key="frame_first").click().run()
    assert _params(at)["frame"] == "1"
    at.button(key="frame_play").click().run()
    at.run()
    at.run()
    assert _frame(at) == 2 and _params(at)["frame"] == "1"  # playing: the address waits
    at.button(key="frame_pause").click().run()
    _ok(at)
    assert _params(at)["frame"] == str(_frame(at) + 1)
