"""Issue 27, settings and pages: the prior's spread under one name and scale on Tune and Compare;
Tune shows what the automatic search tried and why section 1 may disagree, and its K box follows
the model in use; Compare's estimate and Run button only before a run, and Stop keeps the restarts
that finished."""
from types import SimpleNamespace

import pandas as pd
import pytest

from apptools import ok, start
from explorer import comparison, report
from ui import controls

TIMEOUT = 240


@pytest.fixture
def at():
    return start(TIMEOUT)


def _quick_tune(at):
    at.switch_page("pages/tune.py").run()
    at.select_slider(key="w_tune_range").set_value((0.3, 30.0)).run()
    at.slider(key="w_tune_points").set_value(3).run()
    at.slider(key="w_tune_restarts").set_value(1).run()
    ok(at)


def test_the_spread_has_one_name_and_scale_on_tune_and_compare(at):
    at.session_state["settings"]["spread"] = 2.0  # as Explore's slider "× chosen" keeps it
    _quick_tune(at)
    choice = at.session_state["runs"][next(k for k in at.session_state["runs"] if k[1] == "auto")]
    said = controls.prior_knobs(2.0, 1.0, choice)
    assert said.startswith("prior spread × 2 chosen (the chosen spread is ")
    assert any(said in c.value for c in at.caption), [c.value for c in at.caption][:3]
    at.switch_page("pages/compare.py").run()
    ok(at)
    assert any(said in c.value for c in at.caption)
    assert not any("the chosen);" in c.value or ".." in c.value.replace("...", "") for c in at.caption)


def test_tune_shows_the_searchs_range_and_restarts_and_says_why_the_grid_differs(at):
    _quick_tune(at)
    captions = " ".join(c.value for c in at.caption)
    assert "The search tries N0 = 0.1, 0.3, 1 and 3 only" in captions
    assert "best of 1 restart in random row orders" in captions
    # the explanation, whichever N0 the grid's lowest point is
    choice = SimpleNamespace(N0=1.0, table=pd.DataFrame({"N0": [0.1, 0.3, 1.0, 3.0]}), rows_searched=500)
    facts = report.search_facts(choice, 4000)
    assert facts["n0_max"] == 3.0 and facts["rows_text"] == "a random 500 of the 4,000 rows"
    above = report.grid_versus_search(11.6, 15, choice, facts)
    assert "N0 = 11.6 lies above the largest N0 the automatic choice tries (3)" in above and "K = 15" in above
    assert "within the same range" in report.grid_versus_search(0.3, 4, choice, facts)
    assert report.grid_versus_search(1.0, 5, choice, facts) == ""


def test_tunes_k_box_starts_at_the_k_of_the_model_in_use_and_follows_it(at):
    _quick_tune(at)
    model = at.session_state["runs"][next(k for k in at.session_state["runs"] if k[1] == "model")]
    assert at.number_input(key="w_tune_K").value == model.n_clusters_
    at.number_input(key="w_tune_K").set_value(15).run()  # the user's own K stays while the model does
    assert at.number_input(key="w_tune_K").value == 15
    # another model in use, with another K (as after Explore or Tune's apply): the box starts there again
    at.session_state["tune_K_default"] = 99  # the K the box last started from
    at.run()
    ok(at)
    assert at.number_input(key="w_tune_K").value == model.n_clusters_ != 15


def test_tune_cross_validation_speaks_the_one_scale():
    choice = SimpleNamespace(spread=0.5, weight=1.0)
    assert report.spread_of_default([0.5, 1.0, 2.0], choice) == [0.25, 0.5, 1.0]
    from mapdp_core.evaluation.model_selection import CrossValidation

    cv = CrossValidation(pd.DataFrame({"scale": [0.25, 1.0]}), pd.DataFrame({"N0": [1.0, 1.0], "scale": [0.25, 1.0]}),
                         1.0, 1.0)
    back = report.cv_in_chosen_spread(cv, choice)
    assert back.best_scale == 2.0 and list(back.summary["scale"]) == [0.5, 2.0] and list(back.folds["scale"]) == [0.5, 2.0]


def test_compares_estimate_and_run_button_only_before_a_run(at, monkeypatch):
    real = comparison.scale_estimate
    monkeypatch.setattr(comparison, "scale_estimate",
                        lambda e, r: real(e, r).assign(max_seconds=30.0))  # a "long" comparison, quickly run
    at.switch_page("pages/compare.py").run()
    at.pills(key="w_cmp_algorithms").set_value(["MAP-DP", "K-means"]).run()
    at.slider(key="w_cmp_restarts").set_value(2).run()
    ok(at)
    assert any("may take up to about" in w.value for w in at.warning) and at.button(key="cmp_run")
    at.button(key="cmp_run").click().run()
    ok(at)
    assert not any("may take up to about" in w.value for w in at.warning)
    assert not [b for b in at.button if b.key == "cmp_run"]
    assert any({"algorithm", "restarts"} <= set(df.value.columns) for df in at.dataframe)
    assert not any(s.key == "w_cmp_sweeps" for s in at.slider)  # Gibbs not compared: no sweeps slider


def test_stop_keeps_the_restarts_that_finished(at, monkeypatch):
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    real = comparison.compare
    calls = []

    def interrupted(data, *, should_stop, on_step, **kw):
        calls.append(1)
        if len(calls) > 1:
            return real(data, should_stop=should_stop, on_step=on_step, **kw)
        done = real(data, **{**kw, "algorithms": kw["algorithms"][:1]})  # the first algorithm's restarts
        ctx = get_script_run_ctx()  # a click elsewhere (Stop) while the second algorithm would run
        ctx.script_requests.request_rerun(RerunData(query_string=ctx.query_string,
                                                    page_script_hash=ctx.page_script_hash))
        assert should_stop()  # the page's checkpoint caught Streamlit's interruption
        done.attrs["stopped"] = True
        return done

    at.switch_page("pages/compare.py").run()
    at.pills(key="w_cmp_algorithms").set_value(["MAP-DP", "K-means"]).run()
    monkeypatch.setattr(comparison, "compare", interrupted)
    at.slider(key="w_cmp_restarts").set_value(2).run()  # a new comparison, interrupted after MAP-DP
    ok(at)
    key, kept = at.session_state["compare_partial"]
    assert list(kept["algorithm"]) == ["MAP-DP", "MAP-DP"]  # kept, not thrown away
    # as the page shows it after a click on Stop
    at.session_state["compare_stopped"] = key[1]
    at.run()
    ok(at)
    assert any("You stopped the comparison: the table shows the 2 restarts that finished" in w.value
               for w in at.warning)
    summary = next(df.value for df in at.dataframe if {"algorithm", "restarts"} <= set(df.value.columns))
    assert list(summary["algorithm"]) == ["MAP-DP"]


def test_interruption_is_kept_then_raised_again():
    from streamlit.runtime.scriptrunner_utils.exceptions import RerunException

    stop = controls.Interruption()
    assert not stop.checkpoint(lambda: None) and not stop.interrupted

    def click():
        raise RerunException(None)

    assert stop.checkpoint(click) and stop.interrupted and stop.checkpoint(lambda: None)
    with pytest.raises(RerunException):
        stop.resume()
    stop.resume()  # raised once only
