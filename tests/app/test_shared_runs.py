"""Issue 43, item 1: work shared across sessions, never data. Runs on public data (built-in,
scenarios, simulated) are computed once per server and reused by every session
(explorer.shared_runs); an uploaded table's runs stay in its session."""
import threading

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from apptools import APP
from apptools import chart
from apptools import ok as _ok
from explorer import animation, figures, runner, shared_runs, sources

TIMEOUT = 240


def test_one_computation_for_many_threads_asking_at_once():
    store = shared_runs.SharedResults(max_entries=4)
    calls, release = [], threading.Event()

    def compute():
        calls.append(1)
        release.wait(5)
        return "value"

    results = []
    threads = [threading.Thread(target=lambda: results.append(store.get_or_compute("k", compute))) for _ in range(5)]
    for t in threads:
        t.start()
    release.set()
    for t in threads:
        t.join(10)
    assert results == ["value"] * 5 and len(calls) == 1 and store.computed == 1


def test_an_interrupted_computation_is_done_by_the_next_asker_and_a_cut_run_is_not_kept():
    store = shared_runs.SharedResults(max_entries=2)

    def interrupted():
        raise KeyboardInterrupt  # as Streamlit's stop/rerun exceptions: not an Exception

    with pytest.raises(KeyboardInterrupt):
        store.get_or_compute("k", interrupted)
    assert store.get_or_compute("k", lambda: 1) == 1
    assert store.get_or_compute("cut", lambda: 2, keep=lambda v: False) == 2 and "cut" not in store
    for k in "abc":
        store.get_or_compute(k, lambda: k)
    assert len(store) == 2  # bounded, least recently used first out


def _explore(d) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["data"] = d
    at.run()
    _ok(at)
    return at


def _counting(monkeypatch) -> list:
    calls, real = [], runner.run

    def counted(data, name, *args, **kwargs):
        calls.append((data.key, name))
        return real(data, name, *args, **kwargs)

    monkeypatch.setattr(runner, "run", counted)
    return calls


def test_a_second_session_on_public_data_reuses_the_first_sessions_runs(monkeypatch):
    d = sources.scenario_data("5.2", n=300, seed=0)
    shared_runs.mark_public(d.key)  # as ui.common.scenario does
    calls = _counting(monkeypatch)
    first = _explore(d)
    assert calls, "the first session computes its runs"
    done = len(calls)
    second = _explore(sources.scenario_data("5.2", n=300, seed=0))
    assert len(calls) == done, "the second session computed the same runs again"
    assert any(k[0] == d.key for k in shared_runs.SERVER.keys())
    assert any("animation" in (c.proto.id or "") for c in second.get("plotly_chart")), "no animation drawn"
    del first


def _counting_builds(monkeypatch) -> list:
    """Every figure (and set of animation frames) the page builds, by name."""
    built = []
    for module, name in ((animation, "animation_frames"), (figures, "animation_figure"), (figures, "trace_figure"),
                         (figures, "k_evidence_figure"), (figures, "expected_clusters_figure")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _real=real, _name=name, **k: built.append(_name) or _real(*a, **k))
    return built


def test_a_second_session_on_public_data_draws_the_first_sessions_figures(monkeypatch):
    """Issue 43: a class opening the same demo builds its figures once per server, not once per student
    (nor again on a rerun); the chart each session gets is the same."""
    d = sources.scenario_data("5.2", n=300, seed=0)
    shared_runs.mark_public(d.key)
    built = _counting_builds(monkeypatch)
    first = _explore(d)
    assert {"animation_frames", "animation_figure", "trace_figure"} <= set(built), built
    assert any(k[0] == d.key and k[1] == "animation_figure" for k in shared_runs.FIGURES.keys())
    done = len(built)
    second = _explore(sources.scenario_data("5.2", n=300, seed=0))
    assert len(built) == done, f"the second session built again: {built[done:]}"
    first.run()  # a rerun of the first session builds nothing either
    assert len(built) == done, f"a rerun built again: {built[done:]}"
    assert chart(second, "animation") == chart(first, "animation")


def test_an_uploads_figures_stay_in_its_session_and_are_built_once_there(monkeypatch):
    rng = np.random.default_rng(2)
    table = pd.DataFrame({"a": np.r_[rng.normal(0, 1, 60), rng.normal(6, 1, 60)], "b": rng.normal(0, 1, 120)})
    mine = sources.table_data(table, name="private.csv")
    built = _counting_builds(monkeypatch)
    at = _explore(mine)
    assert "animation_figure" in built
    assert all(k[0] != mine.key for k in shared_runs.FIGURES.keys()), "an upload's figure entered the server's store"
    assert any(k[0] == mine.key for k in at.session_state["figures"])
    done = len(built)
    at.run()
    assert len(built) == done, f"a rerun built again: {built[done:]}"
    other = _explore(sources.table_data(table.copy(), name="private.csv"))  # the same table, another student
    assert len(built) > done, "another session drew the upload's figures from the first session"
    assert all(k[0] != mine.key for k in shared_runs.FIGURES.keys())
    del other


def test_one_sessions_upload_never_reaches_the_shared_cache_or_another_session(monkeypatch):
    rng = np.random.default_rng(1)
    table = pd.DataFrame({"a": np.r_[rng.normal(0, 1, 60), rng.normal(6, 1, 60)], "b": rng.normal(0, 1, 120)})
    mine = sources.table_data(table, name="private.csv")
    calls = _counting(monkeypatch)
    first = _explore(mine)
    assert any(key == mine.key for key, _ in calls)
    assert not shared_runs.is_public(mine.key)
    assert all(k[0] != mine.key for k in shared_runs.SERVER.keys()), "an upload's run entered the server's cache"
    # another student on the default data never holds the upload's runs
    other = _explore(sources.scenario_data("5.2", n=300, seed=0))
    assert all(k[0] != mine.key for k in other.session_state["runs"])
    # the same table uploaded by a second student is computed again in their own session
    done = len(calls)
    _explore(sources.table_data(table.copy(), name="private.csv"))
    assert len(calls) > done
    assert all(k[0] != mine.key for k in shared_runs.SERVER.keys())
    del first


def _counting_estimates(monkeypatch) -> list:
    from explorer import comparison

    calls, real = [], comparison.run_estimate
    monkeypatch.setattr(comparison, "run_estimate",
                        lambda data, name, *a, **k: calls.append((data.key, name)) or real(data, name, *a, **k))
    return calls


def test_a_second_session_on_public_data_reads_the_first_sessions_estimates(monkeypatch):
    """Issue 43: the first steps of a run on public data are timed once per server, not once per
    student (thirty sessions' own probes were most of a class's CPU in one N0 step)."""
    d = sources.scenario_data("5.2", n=300, seed=0)
    shared_runs.mark_public(d.key)
    shared_runs.SERVER.clear()
    shared_runs.ESTIMATES.clear()
    calls = _counting_estimates(monkeypatch)
    _explore(d)
    assert calls, "the first session times its runs"
    done = len(calls)
    shared_runs.SERVER.clear()  # the runs gone (e.g. pushed out), so the next session must run them again
    _explore(sources.scenario_data("5.2", n=300, seed=0))
    assert len(calls) == done, f"the second session timed again: {calls[done:]}"
    assert any(k[0] == d.key for k in shared_runs.ESTIMATES.keys())


def test_an_uploads_estimates_stay_in_its_session(monkeypatch):
    rng = np.random.default_rng(3)
    table = pd.DataFrame({"a": np.r_[rng.normal(0, 1, 60), rng.normal(6, 1, 60)], "b": rng.normal(0, 1, 120)})
    mine = sources.table_data(table, name="private.csv")
    calls = _counting_estimates(monkeypatch)
    at = _explore(mine)
    assert any(key == mine.key for key, _ in calls)
    assert all(k[0] != mine.key for k in shared_runs.ESTIMATES.keys()), "an upload's estimate entered the server's store"
    assert any(k[0] == mine.key for k in at.session_state["estimates"])


# ------------------------------------------------------------------ item 2: a bounded place for each run

def test_at_most_slots_runs_compute_at_once_and_each_gets_its_turn():
    slots = shared_runs.RunSlots(2)
    lock, now, most, done = threading.Lock(), [0], [0], []

    def one(i):
        with slots.place(expected=0.1):
            with lock:
                now[0] += 1
                most[0] = max(most[0], now[0])
            threading.Event().wait(0.05)
            with lock:
                now[0] -= 1
        done.append(i)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert sorted(done) == list(range(6)) and most[0] == 2 and slots.busy() == 0 and slots.waiting() == 0


def test_the_line_is_first_come_first_served_and_says_whats_ahead():
    slots = shared_runs.RunSlots(1)
    order, said = [], {}

    def waiter(name):
        with slots.place(wait=lambda ahead, seconds: said.setdefault(name, (ahead, seconds))):
            order.append(name)

    with slots.place(expected=30.0):
        first = threading.Thread(target=waiter, args=("first",))
        first.start()
        while slots.waiting() < 1:
            threading.Event().wait(0.01)
        second = threading.Thread(target=waiter, args=("second",))
        second.start()
        while slots.waiting() < 2 or "second" not in said:
            threading.Event().wait(0.01)
    first.join(10)
    second.join(10)
    assert order == ["first", "second"]
    assert said["first"][0] == 0 and 25 < said["first"][1] <= 30  # the run holding the place: about 30 s left
    assert said["second"][0] == 1


def test_an_interrupted_wait_gives_its_place_in_line_up():
    slots = shared_runs.RunSlots(1)

    def leave(ahead, seconds):
        raise KeyboardInterrupt  # as Streamlit's stop (a click on Stop, a closed tab) at the page's call

    release, holding = threading.Event(), threading.Event()

    def other_student():  # a thread of its own: a thread that holds a place takes no second one
        with slots.place():
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=other_student)
    holder.start()
    holding.wait(10)
    with pytest.raises(KeyboardInterrupt):
        with slots.place(wait=leave):
            pass
    assert slots.waiting() == 0
    release.set()
    holder.join(10)
    with slots.place():
        assert slots.busy() == 1


def test_a_run_waiting_for_a_place_says_the_server_is_busy(monkeypatch):
    """The page says so while its run waits, then runs it (a place held by another 'student')."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    from streamlit.testing.v1.element_tree import parse_tree_from_messages

    slots = shared_runs.RunSlots(1)
    monkeypatch.setattr(shared_runs, "RUN_SLOTS", slots)
    seen, release = [], threading.Event()

    def hold():
        with slots.place(expected=5.0):
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    original = slots._cond.wait

    def watching(timeout=None):
        script_runner = get_script_run_ctx()
        if script_runner is not None:  # the page's thread, waiting in line: what has it said so far?
            tree = parse_tree_from_messages(list(script_runner._enqueue.__self__.forward_msgs()))
            seen.extend(i.value for i in tree.info)
            release.set()
        return original(timeout)

    monkeypatch.setattr(slots._cond, "wait", watching)
    _explore(sources.table_data(pd.DataFrame({"a": np.arange(60.0) % 7, "b": np.arange(60.0) % 5}), name="t"))
    holder.join(10)
    assert any("The server is busy" in s and "next in line" in s for s in seen), seen


# ------------------------------------------------------------------ item 6: thirty uploads, no leak

def test_thirty_sessions_with_their_own_uploads_never_see_each_others_tables_runs_or_cache():
    """Each session's table, runs and cache entries are its own: none reaches the server's shared
    store or another session (sessions one after the other in this process, as a server holds them)."""
    sessions, keys = [], []
    for i in range(30):
        rng = np.random.default_rng(100 + i)
        table = pd.DataFrame({"a": rng.normal(size=40) + 5 * (np.arange(40) % 2), "b": rng.normal(size=40)})
        mine = sources.table_data(table, name=f"student{i}.csv")
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.session_state["data"] = mine
        at.session_state["settings"] = {"algorithms": ["MAP-DP", "K-means"]}
        at.run()
        _ok(at)
        sessions.append(at)
        keys.append(mine.key)
    assert len(set(keys)) == 30
    assert not any(k[0] in set(keys) for k in shared_runs.SERVER.keys())
    assert not any(k[0] in set(keys) for k in shared_runs.FIGURES.keys())
    for i, at in enumerate(sessions):
        assert at.session_state["data"].key == keys[i]
        held = {k[0] for k in at.session_state["runs"]}
        assert held == {keys[i]}, (i, held)  # its own runs only
        assert {k[0] for k in at.session_state["figures"]} == {keys[i]}  # and its own figures
        assert "dataset" not in at.query_params


def test_a_run_interrupted_mid_way_frees_its_place_and_its_key_for_the_next_student():
    """A closed tab or a lost connection stops the session's script at its next Streamlit call (a
    BaseException inside the run): its place in the line and the shared key it was computing are
    given back, so another student's request computes it afresh and never waits forever."""
    store, slots = shared_runs.SharedResults(), shared_runs.RunSlots(1)

    class TabClosed(BaseException):
        pass

    def interrupted():
        with slots.place():
            raise TabClosed

    with pytest.raises(TabClosed):
        store.get_or_compute(("public", "MAP-DP"), interrupted)
    assert slots.busy() == 0 and slots.waiting() == 0 and ("public", "MAP-DP") not in store

    def fine():
        with slots.place():
            return "run"

    done = []
    other = threading.Thread(target=lambda: done.append(store.get_or_compute(("public", "MAP-DP"), fine)))
    other.start()
    other.join(10)
    assert done == ["run"] and store.computed == 1


def test_a_model_fitted_from_a_run_cut_short_stays_in_its_session(monkeypatch):
    """A run cut short (time limit or Stop) stays in its session, and so does the model fitted from
    it: another session on the same public data must never get a model of a run it did not see end."""
    import dataclasses

    d = sources.scenario_data("5.2", n=300, seed=0)
    shared_runs.mark_public(d.key)
    real = runner.run

    def cut_short(data, name, *args, **kwargs):
        return dataclasses.replace(real(data, name, *args, **kwargs), stopped=True)

    monkeypatch.setattr(runner, "run", cut_short)
    at = _explore(d)
    at.switch_page("pages/predict.py").run()  # a page that fits MAP-DP from the run shown
    kinds = {k[1] for k in at.session_state["runs"].keys()}
    assert "model" in kinds, kinds  # the page fitted a model
    shared = [k for k in shared_runs.SERVER.keys() if k[0] == d.key]
    assert not any(k[1] == "model" for k in shared), shared
    assert not any("cut_short" in repr(k) for k in shared), shared  # nor anything read from that model
    at.switch_page("pages/tune.py").run()  # K's evidence drawn from that model: its figure stays here too
    assert any(k[1] == "k_evidence_figure" and "cut_short" in repr(k) for k in at.session_state["figures"])
    assert not any("cut_short" in repr(k) for k in shared_runs.FIGURES.keys())
