#!/usr/bin/env python
"""The server's side of a class at once (issue 43), without browsers: ``n`` sessions open Explore on
the default demo (PLOS 5.2, 4 000 rows; MAP-DP, K-means and DP-means) at the same moment, each a
headless ``AppTest`` in its own thread of one process, as a Streamlit server runs each session's
script in its own thread. Printed per class size: each session's seconds from opening to its page
done (median, max), the wall time, the process's CPU seconds and how many runs were computed,
with the runs on public data shared across sessions (``explorer.shared_runs``, the app as it is)
and not shared (every session computing its own, as before issue 43), side by side.

``class_load.py`` times the same in Chromium (what a student sees); with every browser on the
server's own cores, there the browsers' work is most of each number, which this leaves out.

Caveat: AppTest gives each session its own script cache, so the sessions compile the page
scripts concurrently, which CPython 3.11.7's parser does not always survive ("AST constructor
recursion depth mismatch"; a server compiles each page once, under a lock): such a session is
counted as failed, not timed. Each AppTest also scans the installed packages for Streamlit
components when it starts (0.39 s of a second session's 0.57 s in one cProfile here), which a
server does once: the per-session figures here include it. ``--like-server`` gives every session
one script cache and one component registry, as one server has (each page compiled once, the
packages scanned once), so the figures are the sessions' own work::

    PYTHONPATH=. .venv/bin/python benchmarks/class_headless.py [--students 1,10,30] [--like-server]
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

from _timing import emit  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

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


def _class(n: int, shared: bool, like_server: Callable | None = None, figures: bool = True) -> dict:
    from streamlit.testing.v1 import AppTest

    from explorer import shared_runs
    from ui import common

    real_built = common.built
    if not figures:  # every session builds its own figures at every run, as before they were kept
        common.built = lambda kind, key, build, shareable=True: build()

    shared_runs.SERVER.clear()
    shared_runs.FIGURES.clear()  # each class starts as on a fresh server: no figure built before
    real = shared_runs.mark_public
    if not shared:
        shared_runs.mark_public = lambda key, recipe=None: None  # nothing public: every session computes its own
    with shared_runs._PUBLIC_LOCK:
        shared_runs._PUBLIC.clear()
    times, failed = [None] * n, []

    def one(i):
        start = time.perf_counter()
        try:
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=1800)
            if like_server is not None:
                like_server(at)
            at.run()
            if at.exception:
                failed.append(i)
                return
        except Exception:  # noqa: BLE001 -- counted, not the end of the benchmark
            failed.append(i)
            return
        times[i] = time.perf_counter() - start

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    cpu, wall = os.times(), time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = os.times()
    shared_runs.mark_public = real
    common.built = real_built
    done = [t for t in times if t is not None]
    return {"n": n, "shared": shared, "median": statistics.median(done) if done else float("nan"),
            "max": max(done) if done else float("nan"), "wall": time.perf_counter() - wall,
            "cpu": after.user + after.system - cpu.user - cpu.system, "failed": len(failed),
            "computed": shared_runs.SERVER.computed, "figures": figures}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", default="1,10,30")
    ap.add_argument("--out")
    ap.add_argument("--figures", action="store_true",
                    help="also each class with the runs shared but every figure built by each session at each run "
                         "(column 'figures kept': no), as before the figures were kept (ui.common.built)")
    ap.add_argument("--like-server", action="store_true",
                    help="one script cache and one component registry for every session, as one server has")
    args = ap.parse_args(argv)
    import mapdp_core

    mapdp_core.warm_up()
    like_server = None
    if args.like_server:
        from streamlit.testing.v1 import AppTest

        like_server = _like_a_server()
        first = AppTest.from_file(str(ROOT / "app.py"), default_timeout=1800)  # the server's start: compile, scan
        first.run()
        like_server.remember(first)
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    rows = []
    for n in [int(s) for s in args.students.split(",") if s.strip()]:
        for shared, figures in ((False, True), (True, False), (True, True)) if args.figures else ((False, True),
                                                                                                 (True, True)):
            rows.append(_class(n, shared, like_server, figures))
            print(f"... {n} sessions, shared {shared}, figures {figures}: done", file=sys.stderr, flush=True)
    lines = [f"# class_headless  {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC  {platform.node()}  "
             f"{os.cpu_count()} cores  load before {load}, after {' '.join(f'{v:.2f}' for v in os.getloadavg())}",
             "# n AppTest sessions at once on Explore's default demo; seconds per session from opening to the page done"
             + ("; like one server: one script cache, one component registry" if args.like_server else ""),
             f"{'sessions':>8} {'shared':>7} {'median':>7} {'max':>7} {'wall':>7} {'cpu s':>7} {'runs computed':>14} "
             f"{'failed':>6}" + (f" {'figures kept':>12}" if args.figures else "")]
    for r in rows:
        lines.append(f"{r['n']:>8} {'yes' if r['shared'] else 'no':>7} {r['median']:>7.1f} {r['max']:>7.1f} "
                     f"{r['wall']:>7.1f} {r['cpu']:>7.1f} {r['computed'] if r['shared'] else '-':>14} {r['failed']:>6}"
                     + (f" {'yes' if r['figures'] else 'no':>12}" if args.figures else ""))
    emit("\n".join(lines), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
