"""Issue 43, item 2: a fair share for each student (explorer.shared_runs.RunSlots, ui.common.run).

Streamlit runs one session's script in one thread at a time (a rerun or a Stop interrupts that
thread at its next Streamlit call; it never starts a second one beside it), and a page takes a
place for each algorithm's run separately (``ui.common.run``), giving it back when that run ends.
So one session holds at most one ticket in the line, and its next run joins the line behind
every run already waiting: first come first served across tickets is round robin across
sessions, run by run. These tests pin that down, and that a run holds its place no longer than
the page says: Stop (or a closed tab) gives a place in line up at once, and a place held by a
running run within one step."""
import threading
import time

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from apptools import APP
from apptools import ok as _ok
from explorer import runner, shared_runs, sources
from ui import common, long_runs

TIMEOUT = 240


def _wait_until(condition, seconds: float = 10.0) -> None:
    end = time.perf_counter() + seconds
    while not condition():
        assert time.perf_counter() < end, "timed out"
        time.sleep(0.005)


# ------------------------------------------------------------------ the line: round robin across sessions

def test_a_sessions_next_run_goes_behind_the_runs_already_waiting():
    """Session A runs its algorithms one after another (a place each); B's run, waiting meanwhile,
    gets the place between A's first and second run, not after all of A's."""
    slots = shared_runs.RunSlots(1)
    order, b_waits, a_done_first = [], threading.Event(), threading.Event()

    def session_a():
        with slots.place(expected=1.0):
            b_waits.wait(10)
            order.append("A1")
        a_done_first.set()
        with slots.place(expected=1.0):  # A's next algorithm
            order.append("A2")

    def session_b():
        with slots.place(expected=1.0, wait=lambda ahead, seconds: b_waits.set()):
            order.append("B1")

    a = threading.Thread(target=session_a)
    a.start()
    _wait_until(lambda: slots.busy() == 1)
    b = threading.Thread(target=session_b)
    b.start()
    a.join(10)
    b.join(10)
    assert order == ["A1", "B1", "A2"]


def test_a_session_never_holds_two_tickets_its_rerun_takes_the_place_of_its_last():
    """A rerun (a slider moved while the run waits) interrupts the waiting script at its next
    Streamlit call: the old ticket leaves the line before the new run asks, so the session is
    in line once, at the back."""
    slots = shared_runs.RunSlots(1)

    class Rerun(BaseException):  # as Streamlit's RerunException
        pass

    seen = []

    def moved(ahead, seconds):
        seen.append((slots.waiting(), ahead))
        raise Rerun

    release, holder = _another_student_holds(slots)
    with pytest.raises(Rerun):
        with slots.place(wait=moved):
            pass
    assert slots.waiting() == 0  # the interrupted run's ticket left the line
    second = []
    t = threading.Thread(target=lambda: slots.place(wait=lambda a, s: second.append(slots.waiting())).__enter__())
    t.start()
    _wait_until(lambda: second)
    assert second[0] == 1  # the rerun's run: one ticket for the session
    release.set()
    holder.join(10)
    t.join(10)
    assert seen == [(1, 0)]


# ------------------------------------------------------------------ Stop and a closed tab, on the page

def _session(d) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["data"] = d
    return at


def _table():
    return sources.table_data(pd.DataFrame({"a": np.arange(80.0) % 7, "b": np.arange(80.0) % 5}), name="t")


def _click_stop_now() -> None:
    """What a click on the page's Stop does while the script runs: Streamlit asks the session's
    script thread to rerun, with the Stop button triggered (called from that thread here)."""
    from streamlit.proto.WidgetStates_pb2 import WidgetStates
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
    from streamlit.testing.v1.element_tree import parse_tree_from_messages

    ctx = get_script_run_ctx()
    tree = parse_tree_from_messages(list(ctx._enqueue.__self__.forward_msgs()))
    stop = [b for b in tree.get("button") if b.key == "explore_stop"]
    assert stop, "no Stop button on the page while its run waits or runs"
    states = WidgetStates()  # the click; the other widgets keep their values (not sent: unchanged)
    clicked = states.widgets.add()
    clicked.id, clicked.trigger_value = stop[0].id, True
    ctx.script_requests.request_rerun(RerunData(widget_states=states, query_string=ctx.query_string,
                                                page_script_hash=ctx.page_script_hash))


def _hold_the_only_place(monkeypatch):
    """One place on the server, held by another student's run until ``release`` is set."""
    slots = shared_runs.RunSlots(1)
    monkeypatch.setattr(shared_runs, "RUN_SLOTS", slots)
    release, holder = _another_student_holds(slots)
    return slots, release, holder


def _another_student_holds(slots):
    """A place of ``slots`` held by another student's run (a thread of its own: a thread that holds
    a place takes no second one) until ``release`` is set; returns (release, its thread)."""
    release, holding = threading.Event(), threading.Event()

    def hold():
        with slots.place(expected=30.0):
            holding.set()
            release.wait(60)

    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait(10)
    return release, holder


def _stop_on_page() -> bool:
    """Whether the page being run shows its Stop button yet (the runs' line; the automatic
    search before them waits in line without one)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
    from streamlit.testing.v1.element_tree import parse_tree_from_messages

    tree = parse_tree_from_messages(list(get_script_run_ctx()._enqueue.__self__.forward_msgs()))
    return any(b.key == "explore_stop" for b in tree.get("button"))


def _in_line_hook(monkeypatch, slots, act, when=lambda: True) -> list:
    """Call ``act()`` once, from the page's thread, when it is waiting in line and ``when()``;
    returns what the line looked like then (tickets waiting)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    original, seen = slots._cond.wait, []

    def watching(timeout=None):
        if get_script_run_ctx() is not None and not seen and when():
            seen.append(len(slots._queue))
            act()
        return original(timeout)

    monkeypatch.setattr(slots._cond, "wait", watching)
    return seen


def _counting_runs(monkeypatch) -> list:
    calls, real = [], runner.run
    monkeypatch.setattr(runner, "run", lambda data, name, *a, **k: calls.append(name) or real(data, name, *a, **k))
    return calls


def test_stop_while_waiting_in_line_gives_the_place_up_and_the_page_says_stopped(monkeypatch):
    slots, release, holder = _hold_the_only_place(monkeypatch)
    try:
        monkeypatch.setattr(common, "_in_line", lambda compute: compute)  # the search before the run: no place here
        seen = _in_line_hook(monkeypatch, slots, _click_stop_now, _stop_on_page)
        calls = _counting_runs(monkeypatch)
        at = _session(_table())
        at.run()
        _ok(at)
        assert seen == [1], seen  # the page's run was in line when Stop was clicked
        assert slots.waiting() == 0 and slots.busy() == 1  # its ticket left; the other student's run goes on
        assert calls == []  # nothing of it computed
        assert any("Stopped" in i.value for i in at.info), [i.value for i in at.info]
        assert [b for b in at.button if b.key == "explore_run_again"]
    finally:
        release.set()
        holder.join(10)
    assert slots.busy() == 0 and slots.waiting() == 0


def test_a_closed_tab_while_waiting_in_line_gives_the_place_up(monkeypatch):
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    slots, release, holder = _hold_the_only_place(monkeypatch)
    try:
        monkeypatch.setattr(common, "_in_line", lambda compute: compute)  # the search before the run: no place here
        seen = _in_line_hook(monkeypatch, slots, lambda: get_script_run_ctx().script_requests.request_stop(),
                              _stop_on_page)
        calls = _counting_runs(monkeypatch)
        at = _session(_table())
        at.run()  # the session's script stops (as Streamlit stops a disconnected session's script)
        assert seen == [1]
        assert slots.waiting() == 0 and slots.busy() == 1 and calls == []
    finally:
        release.set()
        holder.join(10)


def test_stop_while_running_frees_the_place_within_one_step(monkeypatch):
    """A run holds its place while it computes; Stop interrupts it at its next step (the page's
    progress bar after every step is a Streamlit call), and the place is free at once."""
    slots = shared_runs.RunSlots(1)
    monkeypatch.setattr(shared_runs, "RUN_SLOTS", slots)
    steps, held = [], []

    def endless(data, name, settings, *, should_stop, on_restart=None, **kw):
        for i in range(10_000):  # a heavy run: far more steps than the test could wait for
            steps.append(i)
            held.append(slots.busy())
            if i == 2:
                _click_stop_now()
            should_stop()
            time.sleep(0.001)
        raise AssertionError("the run was not interrupted")

    monkeypatch.setattr(runner, "run", endless)
    at = _session(_table())
    at.run()
    _ok(at)
    assert len(steps) == 3, len(steps)  # interrupted at the step when Stop was clicked
    assert held == [1, 1, 1] and slots.busy() == 0 and slots.waiting() == 0
    assert any("Stopped" in i.value for i in at.info), [i.value for i in at.info]


def test_a_waiting_run_says_how_many_runs_are_ahead_and_about_how_long(monkeypatch):
    """The line's message counts the runs ahead of this one (not the session's own) and the work
    left of the runs holding places and ahead, shared among the places."""
    said = []
    monkeypatch.setattr(shared_runs, "RUN_SLOTS", shared_runs.RunSlots(2))
    slots = shared_runs.RUN_SLOTS
    release = threading.Event()

    def hold(expected):
        with slots.place(expected=expected):
            release.wait(30)

    holders = [threading.Thread(target=hold, args=(e,)) for e in (20.0, 40.0)]
    for h in holders:
        h.start()
    _wait_until(lambda: slots.busy() == 2)
    ahead = threading.Thread(target=lambda: slots.place(expected=10.0, wait=lambda a, s: None).__enter__())
    ahead.start()
    _wait_until(lambda: slots.waiting() == 1)
    mine = threading.Thread(target=lambda: slots.place(expected=5.0, wait=lambda a, s: said.append(
        common._busy_sentence(a, s)) or release.set()).__enter__())
    mine.start()
    for t in holders:
        t.join(10)
    ahead.join(10)
    mine.join(10)
    assert "1 run is ahead of it" in said[0] and "2 places" in said[0]
    seconds = float(said[0].split("about ")[1].split(" s")[0])
    assert 33 <= seconds <= 35, said[0]  # (20 + 40 + 10) / 2 places


# ------------------------------------------------------------------ a long run at a lower priority

def _long(monkeypatch, seconds: float = 60.0):
    """Every run of the page estimated at ``seconds`` (above ui.long_runs.LONG_RUN_SECONDS)."""
    monkeypatch.setattr(common, "run_estimate", lambda kind, params: seconds)


def test_a_long_run_computes_in_a_thread_of_its_own_at_a_lower_priority(monkeypatch):
    import os
    import sys

    _long(monkeypatch)
    seen, real = [], runner.run

    def where(data, name, *a, **k):
        tid = threading.get_native_id()
        seen.append((threading.current_thread().name, os.getpriority(os.PRIO_PROCESS, tid)
                     if sys.platform.startswith("linux") else None))
        return real(data, name, *a, **k)

    monkeypatch.setattr(runner, "run", where)
    at = _session(_table())
    at.run()
    _ok(at)
    assert seen and all(name == "mapdp-long-run" for name, _ in seen), seen
    if sys.platform.startswith("linux"):
        assert all(nice >= long_runs.NICE for _, nice in seen), seen
    assert any("animation" in (c.proto.id or "") for c in at.get("plotly_chart")), "no animation drawn"


def test_a_short_run_computes_in_the_sessions_own_thread(monkeypatch):
    _long(monkeypatch, 0.5)
    seen, real = [], runner.run
    monkeypatch.setattr(runner, "run", lambda data, name, *a, **k: seen.append(threading.current_thread().name)
                        or real(data, name, *a, **k))
    at = _session(_table())
    at.run()
    _ok(at)
    assert seen and "mapdp-long-run" not in seen


def test_stop_during_a_long_run_ends_it_at_its_next_step_and_frees_the_place(monkeypatch):
    _long(monkeypatch)
    slots = shared_runs.RunSlots(1)
    monkeypatch.setattr(shared_runs, "RUN_SLOTS", slots)
    steps = []

    def endless(data, name, settings, *, should_stop, on_restart=None, **kw):
        for i in range(10_000):
            steps.append(i)
            if i == 2:
                _click_stop_now()  # from the run's own thread, as a click arrives while it computes
            if should_stop():
                return "stopped"
            time.sleep(0.01)
        raise AssertionError("the run was not stopped")

    monkeypatch.setattr(runner, "run", endless)
    at = _session(_table())
    at.run()
    _ok(at)
    assert 3 <= len(steps) < 200, len(steps)  # ended within a few steps of the click, not at the end
    assert slots.busy() == 0 and slots.waiting() == 0
    assert any("Stopped" in i.value for i in at.info), [i.value for i in at.info]


# ------------------------------------------------------------------ a page's heavy computations

def test_a_thread_holding_a_place_takes_no_second_one():
    """A heavy computation that runs an algorithm inside it (a place each) must not wait for
    itself where there is one place; another student's run still waits for it."""
    slots = shared_runs.RunSlots(1)
    nested, waited, other_done = threading.Event(), [], threading.Event()

    def inside():
        with slots.place(1.0):
            with slots.place(1.0):
                nested.set()

    t = threading.Thread(target=inside, daemon=True)
    t.start()
    t.join(5)
    assert nested.is_set(), "a place inside a place waited for itself"
    assert slots.busy() == 0 and slots.waiting() == 0

    def other():
        with slots.place(1.0, wait=lambda ahead, seconds: waited.append(ahead)):
            other_done.set()

    with slots.place(1.0):
        with slots.place(1.0):
            assert slots.busy() == 1
        o = threading.Thread(target=other)
        o.start()
        _wait_until(lambda: waited)
        assert not other_done.is_set()  # the outer place is still held
    o.join(10)
    assert other_done.is_set() and slots.busy() == 0


def _heavy_page_script():
    import streamlit as st

    from ui import common

    st.write(f"compare {common.cached('compare', {'probe': 1}, lambda: 42)}")
    st.write(f"profiles {common.cached('profiles', {'probe': 1}, lambda: 7)}")


def test_a_pages_heavy_computation_waits_in_line_as_a_run_does(monkeypatch):
    """Compare's table (and Tune's grid, cross-validation, stability, the search ...) computes
    only with a place in the server's line, saying so while it waits; a quick table takes none.
    Before, Compare took no place at all: a heavy comparison beside thirty runs was unbounded."""
    slots, release, holder = _hold_the_only_place(monkeypatch)
    said = []
    try:
        seen = _in_line_hook(monkeypatch, slots, release.set)  # the other student's run ends while this waits
        monkeypatch.setattr(common, "_busy_sentence", lambda a, s, stop=True: said.append(stop) or "busy")
        at = AppTest.from_function(_heavy_page_script, default_timeout=TIMEOUT)
        at.session_state["data"] = _table()
        at.run()
        _ok(at)
        assert seen == [1], seen  # the comparison waited in line, once
        assert said == [False]  # in words without a Stop button
        assert [m.value for m in at.markdown] == ["compare 42", "profiles 7"]
    finally:
        release.set()
        holder.join(10)
    assert slots.busy() == 0 and slots.waiting() == 0
