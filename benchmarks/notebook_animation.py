#!/usr/bin/env python
"""The notebook animation at the app's display size (issue 44): ``explorer.notebook.animate`` on
PLOS 5.2 at 4 000 rows (MAP-DP, K-means and DP-means and the true groups), then its inline HTML
opened in the system Chromium, as a notebook's output frame is.

What is timed:

(a) **compute**: ``animate(table, truth=...)``: MAP-DP's automatic choice and run, K-means at its
    K, the λ search and DP-means, the frames (colours matched, ellipses) and the Plotly figure;
    median of 3 (numba's cache warm).
(b) **size**: the output a notebook stores: the whole ``<iframe srcdoc>`` HTML, and the figure
    without plotly.js (what grows with the rows and frames).
(c) **open**: seconds from loading the page to the drawn figure with its buttons.
(d) **Step / Back**: seconds from a click on Step (or Back) to Plotly's ``plotly_animated`` event
    (the frame redrawn), median and range over ``--steps`` clicks, all in the browser: no kernel
    is involved.
(e) **Play**: seconds per frame while playing from the first frame to the last (the figure asks
    for 400 ms a frame; more means the redraw is the limit).

Nothing here is a pass/fail test; the machine is shared and noisy (run on a quiet one)::

    PYTHONPATH=. .venv/bin/python benchmarks/notebook_animation.py [--rows 4000] [--steps 10] [--out FILE]
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pandas as pd  # noqa: E402

from _timing import git_commit, timed  # noqa: E402
from explorer.notebook import animate  # noqa: E402
from mapdp_core.synthetic import plos_scenario  # noqa: E402

CHROMIUM = os.environ.get("MAPDP_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# one click on the button labelled `label`, resolved when Plotly has drawn the frame it asked for
CLICK_AND_WAIT = """(label) => new Promise(resolve => {
    const gd = document.querySelector('.js-plotly-plot');
    const button = [...document.querySelectorAll('.updatemenu-button')].find(b => b.textContent.includes(label));
    const t0 = performance.now();
    gd.once('plotly_animated', () => resolve((performance.now() - t0) / 1000));
    button.dispatchEvent(new MouseEvent('click', {bubbles: true}));
})"""
PLAY = """() => new Promise(resolve => {
    const gd = document.querySelector('.js-plotly-plot');
    const n = gd._transitionData._frames.length;
    let seen = 0; const t0 = performance.now();
    gd.on('plotly_animatingframe', () => { seen += 1; });
    gd.once('plotly_animated', () => resolve([(performance.now() - t0) / 1000, seen, n]));
    const play = [...document.querySelectorAll('.updatemenu-button')].find(b => b.textContent.includes('Play'));
    play.dispatchEvent(new MouseEvent('click', {bubbles: true}));
})"""


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _spread(values) -> str:
    return f"median {statistics.median(values):.3f} s (range {min(values):.3f}-{max(values):.3f}, n = {len(values)})"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    X, truth = plos_scenario("5.2", n=args.rows, seed=0)
    table = pd.DataFrame(X, columns=["x", "y"])
    animate(table.iloc[:300], truth=truth[:300])  # kernels loaded before anything is timed
    _say("computing the animation (3 times)...")
    seconds, movie = timed(lambda: animate(table, truth=truth))
    inline = movie._repr_html_()
    bare = movie.to_html(include_plotlyjs=False)
    lines = [f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"command: PYTHONPATH=. python benchmarks/notebook_animation.py --rows {args.rows} --steps {args.steps}",
             f"commit: {git_commit()}  nproc: {os.cpu_count()}  python: {platform.python_version()}  "
             f"load average at start: {os.getloadavg()[0]:.2f}", "",
             f"PLOS 5.2, {args.rows:,} rows drawn, panels: {', '.join(movie.frames.algorithms)} + true groups; "
             f"{movie.frames.n_frames} frames; steps per algorithm: "
             + ", ".join(f"{a} {len(h)}" for a, h in zip(movie.frames.algorithms, movie.frames.history)),
             f"(a) compute, animate(table, truth=...): {seconds:.2f} s (median of 3)",
             f"(b) size: inline output {len(inline) / 1e6:.2f} MB; the figure without plotly.js {len(bare) / 1e6:.2f} MB"]
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as p:
        page_file = Path(folder) / "cell.html"
        page_file.write_text(f"<!DOCTYPE html><html><body>{inline}</body></html>", encoding="utf-8")
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            t0 = time.perf_counter()
            page.goto(page_file.as_uri())
            frame = page.frame_locator("iframe")
            frame.locator(".updatemenu-button").first.wait_for(timeout=120_000)
            opened = time.perf_counter() - t0
            inner = next(f for f in page.frames if f.url.startswith("about:srcdoc"))
            _say(f"opened in {opened:.1f} s; stepping...")
            lines.append(f"(c) open: {opened:.2f} s from loading the page to the drawn figure with its buttons")
            backs = [inner.evaluate(CLICK_AND_WAIT, "Back") for _ in range(args.steps)]
            steps = [inner.evaluate(CLICK_AND_WAIT, "Step") for _ in range(args.steps)]
            lines.append(f"(d) Back -> frame drawn: {_spread(backs)}")
            lines.append(f"    Step -> frame drawn: {_spread(steps)}")
            inner.evaluate("() => Plotly.animate(document.querySelector('.js-plotly-plot'), ['0'], "
                           "{mode: 'immediate', frame: {duration: 0, redraw: true}, transition: {duration: 0}})")
            inner.wait_for_timeout(500)
            _say("playing...")
            played, seen, n = inner.evaluate(PLAY)
            lines.append(f"(e) Play from frame 1: {played:.2f} s for {seen} frames of {n}: "
                         f"{played / max(seen, 1):.3f} s per frame (400 ms asked)")
        finally:
            browser.close()
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
