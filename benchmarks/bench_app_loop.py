#!/usr/bin/env python
"""The loop that teaching lives on (issue 27), headless: how long the Explore page takes from a
widget change to the end of its rerun, on this machine, with Streamlit's AppTest (the same
script runs as in a browser; the browser's own drawing is not timed).

(a) **N0 slider → new chart**: PLOS 5.2 at 4 000 rows (the app's default data), the default
    algorithms (MAP-DP, K-means, DP-means matching MAP-DP's K); each repeat moves the N0 slider
    to a value not run before in the session, so MAP-DP really runs again (3 restarts).
(b) **Step → new frame**: the Step button under the chart (the page's one frame position,
    ui.player). AppTest reruns the whole page for a click; a browser reruns only the player's
    fragment (the chart and its controls), so (c) times that part alone: drawing one frame
    (the figure built and serialised as ``st.plotly_chart`` does).
(d) **Cold start**, in fresh processes (``--cold``, as on a freshly started server): seconds from
    the start of the first page run to the sidebar's page list, to the first element of the main
    area, to the moment the library (mapdp_core, numba) begins to import, and to the end of that
    first run (the default chart drawn); and what the page showed when the import began.

Each is the time from setting the widget to the end of the rerun, median and range over
``--repeats`` repeats, after one warm-up run of the page (the numba kernels loaded, the
automatic choice of N0 and the prior made). ``--profile`` adds cProfile's top entries of one
N0 rerun. Nothing here is a pass/fail test.

Run from the repository root::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_app_loop.py
    PYTHONPATH=. .venv/bin/python benchmarks/bench_app_loop.py --repeats 5 --profile
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from _timing import git_commit  # noqa: E402  (benchmarks/ is on sys.path when run as a script)
APP = str(ROOT / "app.py")



def _ok(at) -> None:
    if at.exception or at.error:
        raise RuntimeError([e.value for e in at.exception] + [e.value for e in at.error])


def _frame_slider(at):
    return next(s for s in at.select_slider if s.label == "Frame")


def _row(name: str, times: list[float]) -> str:
    return (f"{name:<48} {len(times):>3} {statistics.median(times):>9.3f} {min(times):>9.3f} "
            f"{max(times):>9.3f}")


def cold_start_child() -> None:
    """(d) in a fresh process (the first visit to a freshly started server): what the page had
    drawn when the library (mapdp_core, numba) started to import, when that was, and when the
    first page run ended. Prints one JSON line (tests/app/test_explore_progress_cold_start.py
    reads it)."""
    import importlib.abc
    import json

    t0 = time.perf_counter()
    seen: dict = {}

    class Watch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name in ("mapdp_core", "numba") and name not in seen:
                drawn = _drawn_so_far(time.perf_counter() - t0)
                if drawn is not None:  # an import by the page (Streamlit also looks packages up, not importing)
                    seen[name] = drawn
            return None

    sys.meta_path.insert(0, Watch())
    from streamlit.runtime.forward_msg_queue import ForwardMsgQueue
    from streamlit.testing.v1 import AppTest

    firsts: dict = {}  # seconds from the start of this process to the first element in the main area, the sidebar
    enqueue = ForwardMsgQueue.enqueue

    def timed_enqueue(self, msg):
        if msg.HasField("delta") and msg.delta.WhichOneof("type") == "new_element":
            where = {0: "main", 1: "sidebar"}.get(msg.metadata.delta_path[0])
            if where and where not in firsts and msg.delta.new_element.WhichOneof("type") != "empty":
                firsts[where] = time.perf_counter() - t0
        return enqueue(self, msg)

    ForwardMsgQueue.enqueue = timed_enqueue

    ready = time.perf_counter() - t0
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    print(json.dumps({"streamlit_imported": ready, "first_run_done": time.perf_counter() - t0, "seen": seen,
                      "first_main": firsts.get("main"), "first_sidebar": firsts.get("sidebar"),
                      "title_after": [t.value for t in at.title], "errors": [e.value for e in at.exception]}))


def _drawn_so_far(t: float) -> dict | None:
    """What the running page has sent so far (None outside a page run)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return None
    from streamlit.testing.v1.element_tree import parse_tree_from_messages

    tree = parse_tree_from_messages(list(ctx._enqueue.__self__.forward_msgs()))  # AppTest's LocalScriptRunner
    return {"seconds": t, "titles": [e.value for e in tree.title], "info": [e.value for e in tree.info],
            "page_links": len(tree.get("page_link"))}


def cold_start(repeats: int) -> list[dict]:
    import json

    out = []
    for _ in range(repeats):
        done = subprocess.run([sys.executable, __file__, "--cold-child"], cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
        out.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cold-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cold", type=int, default=3, help="fresh processes for the cold start (0: none)")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--profile", action="store_true", help="cProfile one N0 rerun (top 25 by cumulative time)")
    args = parser.parse_args()
    if args.cold_child:
        cold_start_child()
        return
    colds = cold_start(args.cold) if args.cold else []  # first: nothing of the library imported yet

    from streamlit.testing.v1 import AppTest

    import mapdp_core
    from explorer import figures, sources

    t0 = time.perf_counter()
    mapdp_core.warm_up()
    warm = time.perf_counter() - t0

    at = AppTest.from_file(APP, default_timeout=600)
    if args.rows != 4000:
        at.session_state["data"] = sources.scenario_data("5.2", n=args.rows, seed=0)
    t0 = time.perf_counter()
    at.run()
    first = time.perf_counter() - t0
    _ok(at)
    options = list(at.select_slider(key="w_N0").options)
    now = float(at.select_slider(key="w_N0").value)
    # N0 values near the chosen one (the clustering a teacher moves around), each new to the session
    around = sorted((float(o) for o in options if float(o) != now), key=lambda o: abs(o - now) / max(o, now))
    fresh = around[:args.repeats]

    def n0_rerun(value: float) -> float:
        t = time.perf_counter()
        at.select_slider(key="w_N0").set_value(value).run()
        elapsed = time.perf_counter() - t
        _ok(at)
        return elapsed

    n0_times = [n0_rerun(v) for v in fresh]

    # Step: from the first frame on, one frame a click (the same runs: nothing computes again)
    at.button(key="frame_first").click().run()
    _ok(at)
    last = len(_frame_slider(at).options) - 1
    step_times = []
    for _ in range(args.repeats):
        if _frame_slider(at).value >= last:
            at.button(key="frame_first").click().run()
        before = _frame_slider(at).value
        t = time.perf_counter()
        at.button(key="frame_next").click().run()
        step_times.append(time.perf_counter() - t)
        _ok(at)
        assert _frame_slider(at).value == before + 1

    # the fragment's part of a Step in a browser: one frame's figure, built and serialised
    import plotly.io as pio

    from explorer import animation
    from ui import common  # noqa: F401  (the session cache's helpers are not needed: rebuild from the runs)

    runs = [v for k, v in at.session_state["runs"].items() if k[1] in ("MAP-DP", "K-means", "DP-means")][-3:]
    d = at.session_state["data"]
    coords, names = sources.projection(d)
    sample = sources.display_sample(d.n_rows, seed=0)
    frames = animation.animation_frames(runs, coords, sample, d.truth)
    draw_times = []
    for i in range(args.repeats):
        t = time.perf_counter()
        fig = figures.animation_figure(frames, coords[sample], names, start=i % frames.n_frames, controls=False)
        pio.to_json(fig, validate=False)
        draw_times.append(time.perf_counter() - t)

    profile_text = ""
    if args.profile:
        import cProfile
        import io
        import pstats

        import threading

        value = around[args.repeats] if len(around) > args.repeats else around[-1]
        prof = cProfile.Profile()

        def start(*_):  # AppTest runs the page in a new thread: profile that thread from its first call
            threading.setprofile(None)
            prof.enable()

        threading.setprofile(start)
        n0_rerun(value)
        threading.setprofile(None)
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(25)
        profile_text = out.getvalue()

    load = os.getloadavg()
    print(f"# bench_app_loop  {datetime.date.today()}  commit {git_commit()}  {platform.node()}  "
          f"{os.cpu_count()} cores  load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"# PLOS 5.2, {d.n_rows:,} rows; algorithms {', '.join(r.algorithm for r in runs)}; kernels loaded in "
          f"{warm:.2f} s; first page run (automatic choice + every run) {first:.2f} s")
    print(f"{'measure (seconds)':<48} {'n':>3} {'median':>9} {'min':>9} {'max':>9}")
    print(_row("(a) N0 slider -> new chart (whole rerun)", n0_times))
    print(_row("(b) Step -> new frame (whole rerun, AppTest)", step_times))
    print(_row("(c) one frame drawn (the fragment's part)", draw_times))
    if colds:
        drawn = [c["seen"].get("mapdp_core") or {} for c in colds]
        first = [c["streamlit_imported"] for c in colds]
        print(_row("(d) cold: sidebar's pages listed", [c["first_sidebar"] - f for c, f in zip(colds, first)]))
        print(_row("(d) cold: first element in the main area", [c["first_main"] - f for c, f in zip(colds, first)]))
        print(_row("(d) cold: the library begins to import", [d.get("seconds", float("nan")) - f
                                                               for d, f in zip(drawn, first)]))
        print(_row("(d) cold: first run done (the chart drawn)", [c["first_run_done"] - f
                                                                  for c, f in zip(colds, first)]))
        print(f"# cold start, when the library began to import: titles {drawn[0].get('titles')}, "
              f"{drawn[0].get('page_links')} page links, status {[i[:60] for i in drawn[0].get('info', [])]}")
    print(f"# N0 values: {', '.join(f'{v:g}' for v in fresh)} (from {now:g})")
    if profile_text:
        print(profile_text)


if __name__ == "__main__":
    main()
