#!/usr/bin/env python
"""The loop that teaching lives on (issue 27), in a real browser: the app served by
``streamlit run app.py`` and driven by Playwright in the system Chromium (1280 x 720), timed
from the key press or click to what a person sees. ``bench_app_loop.py`` times the same loop
headless (the script's run only); this adds the browser: the websocket, Plotly's drawing and
the page settling.

(a) **N0 slider -> new chart**: Explore on its default data (PLOS 5.2, 4 000 rows, MAP-DP,
    K-means and DP-means); the N0 slider is moved one step right with the keyboard, each time
    to a value not run before in the session (so MAP-DP and DP-means really run again).
    Seconds until a chart title reads "MAP-DP (N0 = <new value>)", and until the page has
    settled (Streamlit's status widget gone).
(b) **Step -> next frame**: from the first frame, the Step button; seconds until the frame
    slider reads the next frame, and until the subplot titles have changed.
(c) **Play**: seconds per frame while playing from the first frame to the last (from the click on
    Play to the frame slider on the last frame); and, when the browser plays the frames in place
    (issue 43), the seconds between the frames it drew, first to last.
(d) **Cold**: seconds from opening the page on a freshly started server to the first chart.

Medians and ranges over ``--repeats``. Nothing here is a pass/fail test. Run it on a quiet
machine (other work inflates every number)::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_browser_loop.py [--repeats 8] [--out FILE]
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
import urllib.request
from pathlib import Path

from _browser import CHROMIUM, FRAME_TEXT, SHOWS_N0, TITLES, free_port  # noqa: E402  (benchmarks/ is on sys.path)
from _timing import emit, git_commit  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SETTLED = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
# the times at which the browser drew each frame in place (Play in the browser, issue 43: the player's
# chart carries the frame it shows as data-frame); none when each frame is a new chart
DRAWN = """() => { window.__drawn = []; new MutationObserver(ms => { for (const m of ms)
    if (m.attributeName === 'data-frame') window.__drawn.push(performance.now()); })
    .observe(document.body, {subtree: true, attributes: true, attributeFilter: ['data-frame']}); }"""
TITLE_TEXT = "() => [...document.querySelectorAll('.js-plotly-plot .annotation-text')].map(e => e.textContent).join('|')"


def _serve(port: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.address",
         "127.0.0.1", "--server.headless", "true", "--server.fileWatcherType", "none",
         "--browser.gatherUsageStats", "false"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while True:
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok":
                return proc
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            raise SystemExit("the Streamlit server did not start")
        time.sleep(0.2)


def _row(name: str, values: list[float]) -> str:
    if not values:
        return f"{name:<46} {0:>3}"
    return (f"{name:<46} {len(values):>3} {statistics.median(values):>9.3f} {min(values):>9.3f} "
            f"{max(values):>9.3f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=8)
    ap.add_argument("--out", help="also write the report to this file")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    port = free_port()
    t_server = time.perf_counter()
    server = _serve(port)
    lines = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.set_default_timeout(360_000)  # a cold server may still be loading the kernels
            t0 = time.perf_counter()
            page.goto(f"http://127.0.0.1:{port}")
            page.wait_for_selector(TITLES)
            cold = time.perf_counter() - t0
            page.wait_for_function(SETTLED)
            served = t0 - t_server

            slider = page.get_by_role("slider", name="N0, the concentration (log scale)")
            to_chart, to_settled = [], []
            for _ in range(args.repeats):
                slider.focus()
                start = time.perf_counter()
                page.keyboard.press("ArrowRight")
                wanted = float(slider.get_attribute("aria-valuetext"))
                page.wait_for_function(SHOWS_N0, arg=wanted)
                to_chart.append(time.perf_counter() - start)
                page.wait_for_function(SETTLED)
                to_settled.append(time.perf_counter() - start)

            page.set_default_timeout(60_000)
            frame = page.get_by_role("slider", name="Frame")
            step_frame, step_titles = [], []
            page.get_by_role("button", name="First").click()
            page.wait_for_function(SETTLED)
            page.wait_for_function(f"() => ({FRAME_TEXT})() !== null && ({FRAME_TEXT})().startsWith('1 of')")
            n_frames = int(frame.get_attribute("aria-valuetext").split(" of ")[1])
            for _ in range(min(args.repeats, n_frames - 1)):
                before_frame = frame.get_attribute("aria-valuetext")
                before_titles = page.evaluate(TITLE_TEXT)
                start = time.perf_counter()
                page.get_by_role("button", name="Step").click()
                page.wait_for_function(f"(b) => ({FRAME_TEXT})() !== b", arg=before_frame)
                step_frame.append(time.perf_counter() - start)
                page.wait_for_function(f"(b) => ({TITLE_TEXT})() !== b", arg=before_titles)
                step_titles.append(time.perf_counter() - start)
                page.wait_for_function(SETTLED)

            page.get_by_role("button", name="First").click()
            page.wait_for_function(f"() => (({FRAME_TEXT})() || '').startsWith('1 of')")
            page.wait_for_function(SETTLED)
            page.wait_for_timeout(1500)  # as a person would: the page has settled before Play
            page.evaluate(DRAWN)
            start = time.perf_counter()
            page.get_by_role("button", name="Play").click()
            page.wait_for_function(f"(n) => ({FRAME_TEXT})() === `${{n}} of ${{n}}`", arg=n_frames)
            per_frame = (time.perf_counter() - start) / max(n_frames - 1, 1)
            drawn = page.evaluate("() => window.__drawn")  # [ms] each frame the browser drew in place
            in_chart = [(drawn[-1] - drawn[0]) / 1000 / (len(drawn) - 1)] if len(drawn) > 1 else []
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)

    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    fps = f"# Play: {1 / per_frame:.2f} frames a second (click to the slider on the last frame)" + (
        f"; the chart drew {len(drawn)} frames in place, {1 / in_chart[0]:.2f} a second" if in_chart else
        "; each frame a new chart (no frames drawn in place)")
    lines += [f"# bench_browser_loop  {datetime.date.today()}  commit {git_commit()}  {platform.node()}  "
              f"{os.cpu_count()} cores  load {load}",
              "# Explore on PLOS 5.2, 4,000 rows (MAP-DP, K-means, DP-means), Chromium 1280 x 720, headless",
              f"# server up in {served:.1f} s; {n_frames} animation frames",
              f"{'measure (seconds)':<46} {'n':>3} {'median':>9} {'min':>9} {'max':>9}",
              _row("(a) N0 slider -> MAP-DP's new chart drawn", to_chart),
              _row("(a) N0 slider -> page settled", to_settled),
              _row("(b) Step -> frame slider on the next frame", step_frame),
              _row("(b) Step -> subplot titles of the next frame", step_titles),
              _row("(c) Play: seconds per frame, first to last", [per_frame]),
              _row("(c) Play: between frames the chart drew", in_chart),
              _row("(d) cold: page opened -> first chart", [cold]), fps]
    emit("\n".join(lines), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
