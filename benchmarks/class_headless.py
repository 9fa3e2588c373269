#!/usr/bin/env python
"""The server's side of a class at once (issue 43), without browsers: ``n`` sessions open Explore on
the default demo (PLOS 5.2, 4 000 rows; MAP-DP, K-means and DP-means) at the same moment, each a
headless ``AppTest`` in its own thread of one process, as a Streamlit server runs each session's
script in its own thread. Printed per class size: each session's seconds from opening to its page
done (median, max), the wall time, the process's CPU seconds and how many runs were computed,
with the runs on public data shared across sessions (``explorer.shared_runs``, the app as it is)
and not shared (every session computing its own, as before issue 43), side by side.

Then each session makes **one N0 step** (N0's slider one option right, as a student's first
change after the chart) and is timed from the change to its page redrawn (the new runs and the
chart). Every session of a class moves the same slider the same way, as a class following the
teacher does, so on shared runs the class's N0 step is one computation too. ``--heavy`` adds,
per class size, the same class with one more student running a heavy job throughout (class_load's
link: a simulated 200 000-row table, 10 restarts of MAP-DP and K-means, time limit 300 s), started
before the class and stopped (as a closed tab stops it) once the class is done; the heavy
student is not counted. Issue 43's targets: 30 students' first chart median <= 15 s, max <= 30 s;
one N0 step median <= 3 s; with the heavy job, the N0 step median <= 2x the figure without.

``class_load.py`` times the same in Chromium (what a student sees); with every browser on the
server's own cores, there the browsers' work is most of each number, which this leaves out.

Each AppTest sets a mock Streamlit Runtime for its run and removes it at the end; with sessions
in threads the benchmark keeps the last one for all (:func:`_one_runtime`), as a server has one.

Caveat: AppTest gives each session its own script cache, so the sessions compile the page
scripts concurrently, which CPython 3.11.7's parser does not always survive ("AST constructor
recursion depth mismatch"; a server compiles each page once, under a lock): such a session is
counted as failed, not timed. Each AppTest also scans the installed packages for Streamlit
components when it starts (0.39 s of a second session's 0.57 s in one cProfile here), which a
server does once: the per-session figures here include it. ``--like-server`` gives every session
one script cache and one component registry, as one server has (each page compiled once, the
packages scanned once), so the figures are the sessions' own work::

    PYTHONPATH=. .venv/bin/python benchmarks/class_headless.py [--students 1,10,30] [--like-server] [--heavy]
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from _timing import emit, git_commit  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

ROOT = Path(__file__).resolve().parents[1]


def _like_a_server() -> Callable:
    """One script cache for every AppTest (a server compiles each page once, under the cache's lock)
    and one component registry (a server scans the packages once); returns what sets it on an AppTest."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    one_cache = ScriptCache()
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: one_cache
    registry = []

    def shared(at):
        if registry:
            at._bidi_component_manager = registry[0]
        return at

    def remember(at):
        if not registry and getattr(at, "_bidi_component_manager", None) is not None:
            registry.append(at._bidi_component_manager)

    shared.remember = remember
    return shared


#: The heavy student's link (as class_load.py's): a simulated 200 000-row table, 10 restarts of two algorithms.
HEAVY = {"dataset": "crp:200000:3.0:2:0", "restarts": "10", "time_budget": "300", "algorithms": "MAP-DP,K-means"}
HEAVY_MARK = "_class_headless_heavy"


def _n0_step(at) -> None:
    """N0's slider one option right (the next larger value), then the page run again."""
    slider = at.select_slider(key="w_N0")
    options = [float(o) for o in slider.options]
    now = float(slider.value)
    larger = [o for o in options if o > now * (1 + 1e-9)]
    slider.set_value(larger[0] if larger else options[-2]).run()


def _script_threads_of(mark: str) -> list:
    """The ScriptRunContexts of the running scripts whose session state holds ``mark``."""
    from streamlit.runtime.scriptrunner_utils.script_run_context_attr import SCRIPT_RUN_CONTEXT_ATTR_NAME

    found = []
    for thread in threading.enumerate():
        ctx = getattr(thread, SCRIPT_RUN_CONTEXT_ATTR_NAME, None)
        if ctx is not None:
            try:
                if mark in ctx.session_state:
                    found.append(ctx)
            except Exception:  # noqa: BLE001 -- a script ending meanwhile
                pass
    return found


def _start_heavy(like_server: Callable | None) -> tuple[threading.Thread, dict]:
    """The heavy student: opens the heavy link and runs it in its own thread; returns once its run
    holds a place (computing), or after 180 s."""
    from streamlit.testing.v1 import AppTest

    from explorer import shared_runs

    state = {"start": time.perf_counter()}

    def heavy():
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=1800)
        if like_server is not None:
            like_server(at)
        at.session_state[HEAVY_MARK] = True
        for key, value in HEAVY.items():
            at.query_params[key] = value
        try:
            at.run()
        except Exception as exc:  # noqa: BLE001 -- said in the table's notes
            state["error"] = f"{type(exc).__name__}: {exc}"[:200]
        state["end"] = time.perf_counter()

    thread = threading.Thread(target=heavy, name="heavy student")
    thread.start()
    while shared_runs.RUN_SLOTS.busy() == 0 and thread.is_alive() and time.perf_counter() - state["start"] < 180:
        time.sleep(0.1)
    state["computing"] = shared_runs.RUN_SLOTS.busy() > 0
    state["running"] = time.perf_counter()
    state["threads"] = [ctx for ctx in _script_threads_of(HEAVY_MARK)]
    state["cpu at start"] = _thread_cpu(state["threads"])
    return thread, state


def _thread_cpu(contexts: list) -> float:
    """CPU seconds used so far by the script threads running ``contexts`` (Linux: /proc)."""
    total = 0.0
    for thread in threading.enumerate():
        from streamlit.runtime.scriptrunner_utils.script_run_context_attr import SCRIPT_RUN_CONTEXT_ATTR_NAME

        if getattr(thread, SCRIPT_RUN_CONTEXT_ATTR_NAME, None) in contexts and thread.native_id:
            try:
                fields = Path(f"/proc/self/task/{thread.native_id}/stat").read_text().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
            except (OSError, IndexError, ValueError):
                pass
    return total


def _stop_heavy(thread: threading.Thread, state: dict) -> None:
    """As a closed tab: Streamlit asks the heavy session's script to stop (at its next step)."""
    state["still running at the class end"] = thread.is_alive()
    state["cpu during class"] = _thread_cpu(state["threads"]) - state["cpu at start"]
    state["class wall"] = time.perf_counter() - state["running"]
    for ctx in _script_threads_of(HEAVY_MARK):
        ctx.script_requests.request_stop()
    thread.join(300)


def _one_runtime() -> None:
    """A server has one Streamlit Runtime for all its sessions; each AppTest sets a mock one for its
    run and sets it back to None at the end, so with sessions in threads one session's end left the
    others without a Runtime ("Runtime hasn't been created!", e.g. in ``declare_component``). Keep
    the last one set for the threads that find none."""
    from streamlit.runtime.runtime import Runtime

    last, plain = {}, Runtime.instance.__func__

    def instance(cls):
        if cls._instance is not None:
            last["runtime"] = cls._instance
            return cls._instance
        return last["runtime"] if "runtime" in last else plain(cls)

    Runtime.instance = classmethod(instance)


def _class(n: int, shared: bool, like_server: Callable | None = None, figures: bool = True,
           heavy: bool = False, low_priority: bool = True) -> dict:
    from streamlit.testing.v1 import AppTest

    from explorer import shared_runs
    from ui import common

    try:
        from ui import long_runs
    except ImportError:  # before long runs had a thread of their own
        long_runs = None
    plain_long = long_runs.LONG_RUN_SECONDS if long_runs is not None else None
    if long_runs is not None and not low_priority:
        long_runs.LONG_RUN_SECONDS = float("inf")  # every run in its session's thread, as before

    real_built = common.built
    if not figures:  # every session builds its own figures at every run, as before they were kept
        common.built = lambda kind, key, build, shareable=True: build()

    shared_runs.SERVER.clear()
    shared_runs.FIGURES.clear()  # each class starts as on a fresh server: no figure built before
    if hasattr(shared_runs, "ESTIMATES"):  # nor any run timed
        shared_runs.ESTIMATES.clear()
    real = shared_runs.mark_public
    if not shared:
        shared_runs.mark_public = lambda key, recipe=None: None  # nothing public: every session computes its own
    with shared_runs._PUBLIC_LOCK:
        shared_runs._PUBLIC.clear()
    times, steps, failed = [None] * n, [None] * n, []
    held = _start_heavy(like_server) if heavy else None

    def one(i):
        start = time.perf_counter()
        try:
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=1800)
            if like_server is not None:
                like_server(at)
            at.run()
            if at.exception:
                failed.append(f"first chart: {at.exception[0].message or at.exception[0].value}")
                return
            times[i] = time.perf_counter() - start
            start = time.perf_counter()
            _n0_step(at)
            if at.exception:
                failed.append(f"N0 step: {at.exception[0].message or at.exception[0].value}")
                return
            steps[i] = time.perf_counter() - start
        except Exception as exc:  # noqa: BLE001 -- counted, not the end of the benchmark
            failed.append(f"{'N0 step' if times[i] is not None else 'first chart'}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    cpu, wall = os.times(), time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = os.times()
    wall = time.perf_counter() - wall
    if held is not None:
        _stop_heavy(*held)
    shared_runs.mark_public = real
    common.built = real_built
    if long_runs is not None:
        long_runs.LONG_RUN_SECONDS = plain_long
    done = [t for t in times if t is not None]
    stepped = [t for t in steps if t is not None]
    nan = float("nan")
    return {"n": n, "shared": shared, "median": statistics.median(done) if done else nan,
            "max": max(done) if done else nan, "wall": wall,
            "step median": statistics.median(stepped) if stepped else nan, "step max": max(stepped) if stepped else nan,
            "cpu": after.user + after.system - cpu.user - cpu.system, "failed": len(failed), "errors": failed,
            "computed": shared_runs.SERVER.computed, "figures": figures, "heavy": held[1] if held else None,
            "low priority": low_priority}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", default="1,10,30")
    ap.add_argument("--out")
    ap.add_argument("--figures", action="store_true",
                    help="also each class with the runs shared but every figure built by each session at each run "
                         "(column 'figures kept': no), as before the figures were kept (ui.common.built)")
    ap.add_argument("--like-server", action="store_true",
                    help="one script cache and one component registry for every session, as one server has")
    ap.add_argument("--heavy", action="store_true",
                    help="also each class size (runs shared) with one more student running a heavy job throughout")
    ap.add_argument("--no-unshared", action="store_true", help="leave out the classes whose runs are not shared")
    ap.add_argument("--repeat", type=int, default=1, help="each class this many times (rows one after another)")
    ap.add_argument("--compare-priority", action="store_true",
                    help="with --heavy, each heavy class also with long runs in their session's thread at the usual "
                         "priority (ui.long_runs off), alternately (column 'long runs': own = ui.long_runs, session)")
    args = ap.parse_args(argv)
    import mapdp_core

    mapdp_core.warm_up()
    _one_runtime()
    like_server = None
    if args.like_server:
        from streamlit.testing.v1 import AppTest

        like_server = _like_a_server()
        first = AppTest.from_file(str(ROOT / "app.py"), default_timeout=1800)  # the server's start: compile, scan
        first.run()
        like_server.remember(first)
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    rows = []
    kinds = ((False, True, False), (True, False, False), (True, True, False)) if args.figures else \
        ((False, True, False), (True, True, False))
    if args.no_unshared:
        kinds = tuple(k for k in kinds if k[0])
    kinds = tuple(k + (True,) for k in kinds)
    if args.heavy:
        kinds += ((True, True, True, True),) + (((True, True, True, False),) if args.compare_priority else ())
    for n in [int(s) for s in args.students.split(",") if s.strip()]:
        for _ in range(max(args.repeat, 1)):
            for shared, figures, heavy, low in kinds:
                rows.append(_class(n, shared, like_server, figures, heavy, low))
            print(f"... {n} sessions, shared {shared}, figures {figures}, heavy {heavy}: done", file=sys.stderr,
                  flush=True)
    from explorer import shared_runs

    lines = [f"# class_headless  {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC  commit {git_commit()}  "
             f"{platform.node()}  {os.cpu_count()} cores  load before {load}, after "
             f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}  run slots {shared_runs.RUN_SLOTS.slots}",
             "# n AppTest sessions at once on Explore's default demo; seconds per session: first chart (opening to the "
             "page done), then one N0 step (N0's slider one option right to the page redrawn), median and max"
             + ("; like one server: one script cache, one component registry" if args.like_server else ""),
             f"{'sessions':>8} {'shared':>7} {'heavy':>5} {'first chart':>15} {'one N0 step':>15} {'wall':>7} "
             f"{'cpu s':>7} {'runs computed':>14} {'failed':>6}" + (f" {'figures kept':>12}" if args.figures else "")
             + (f" {'long runs':>9}" if args.compare_priority else ""),
             f"{'':>22} {'median':>7} {'max':>7} {'median':>7} {'max':>7}"]
    notes = []
    for r in rows:
        lines.append(f"{r['n']:>8} {'yes' if r['shared'] else 'no':>7} {'yes' if r['heavy'] else 'no':>5} "
                     f"{r['median']:>7.1f} {r['max']:>7.1f} {r['step median']:>7.1f} {r['step max']:>7.1f} "
                     f"{r['wall']:>7.1f} {r['cpu']:>7.1f} {r['computed'] if r['shared'] else '-':>14} {r['failed']:>6}"
                     + (f" {'yes' if r['figures'] else 'no':>12}" if args.figures else "")
                     + (f" {('own' if r['low priority'] else 'session') if r['heavy'] else '':>9}"
                        if args.compare_priority else ""))
        if r["errors"]:
            notes.append(f"# failed in the {r['n']}-session class (shared {'yes' if r['shared'] else 'no'}), first of "
                         f"{len(r['errors'])}: {str(r['errors'][0]).splitlines()[0][:200]}")
        h = r["heavy"]
        if h:
            notes.append(f"# heavy job beside the {r['n']}-session class: computing (a run holding a place) when the "
                         f"class started: {'yes' if h['computing'] else 'no'}, {h['running'] - h['start']:.0f} s after "
                         f"it opened; still running when the class was done: "
                         f"{'yes' if h['still running at the class end'] else 'no'}; its script thread used "
                         f"{h['cpu during class']:.1f} CPU s in those {h['class wall']:.1f} s"
                         + (f"; error: {h['error']}" if "error" in h else ""))
    emit("\n".join(lines + notes), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
