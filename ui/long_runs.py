"""A long run's own thread at a lower CPU priority (issue 43: a fair share for each student).

``ui.common.run`` computes a run expected to take longer than :data:`LONG_RUN_SECONDS` here: in a
thread of its own whose nice value is :data:`NICE` (Linux sets it per thread; the thread ends with
its run, so nothing is restored), while the session's script thread waits with a Streamlit call
every 0.25 s, so Stop, a slider or a closed tab still interrupts it: the run's ``should_stop`` then
reads ``stop`` and the run ends at its next step. The run still holds its place in
:data:`explorer.shared_runs.RUN_SLOTS`; the priority only lets the other students' short runs and
pages have the cores first while it computes."""
from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

#: Seconds: a run expected to take longer computes in a thread of its own at a lower CPU priority
#: (:func:`at_low_priority`), so that on a small server the other students' short runs and pages
#: get the cores first (issue 43: a fair share beside a heavy job).
LONG_RUN_SECONDS = 5.0
#: The nice value of such a thread (Linux: per thread; the thread ends with its run).
NICE = 10


def at_low_priority(work: Callable, stop: threading.Event) -> object:
    """``work()`` in a thread of its own at nice :data:`NICE` (Linux; elsewhere at the
    usual priority), while this session's script thread waits with a Streamlit call every 0.25 s:
    a click (Stop, a slider) or a closed tab interrupts the wait, sets ``stop`` (the run's
    ``should_stop`` reads it, so the run ends at its next step) and is raised again once it has."""
    ctx, box = get_script_run_ctx(), {}

    def target():
        add_script_run_ctx(threading.current_thread(), ctx)  # its progress bar writes to this session's page
        if sys.platform.startswith("linux"):
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)  # this thread only
            except OSError:
                pass
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 -- raised again in the script thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="mapdp-long-run", daemon=True)
    worker.start()
    beat = st.empty()
    try:
        while worker.is_alive():
            worker.join(0.25)
            beat.empty()  # a Streamlit call: an interruption is raised here
    except BaseException:
        stop.set()
        worker.join()
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]
