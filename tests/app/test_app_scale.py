"""The app at a million rows (issue 13): the Data page generates the table, Explore fits it
under its time limit and draws a display sample, all without an error on the page.

One test, about 10 s here: MAP-DP alone with a one-second limit, so that the limit (not the
data) ends the run; the full-size timings are in benchmarks/app_scale.py.
"""
import numpy as np

from apptools import ok, start
from explorer import runner, sources

ROWS = 1_000_000
TIMEOUT = 300


def test_a_million_rows_generate_fit_under_the_time_limit_and_draw_a_sample():
    at = start(TIMEOUT)
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Simulated").run()
    at.number_input(key="w_gen_n").set_value(ROWS).run()
    at.button(key="generate").click().run()
    ok(at)
    d = at.session_state["data"]
    assert d.n_rows == ROWS

    at.session_state["w_algorithms"] = ["MAP-DP"]
    at.session_state["w_time_budget"] = 1.0
    at.switch_page("pages/explore.py").run()
    ok(at)
    runs = [v for v in at.session_state["runs"].values() if isinstance(v, runner.Run)]
    mapdp = [r for r in runs if r.algorithm == "MAP-DP" and r.final.labels.shape == (ROWS,)]
    assert mapdp, "MAP-DP did not run on the million rows"
    run = mapdp[-1]
    assert np.all(run.final.labels >= 0)  # every row placed, in input order
    # either the limit stopped it (and the page says so) or it finished within it
    said = [w.value for w in at.warning if "stopped by the time limit" in w.value]
    assert run.stopped == bool(said)
    notes = [c.value for c in at.caption if "Showing" in c.value]
    shown = len(sources.display_sample(ROWS))
    assert shown < ROWS and any(f"Showing {shown:,} of {ROWS:,} rows" in n for n in notes)
    assert at.get("plotly_chart"), "no chart drawn"
