#!/usr/bin/env python
"""First visit on a fresh clone: seconds from ``make run`` to the first chart in a browser.

Clones this repository's committed HEAD into a new temporary folder (no ``.venv``, no numba
cache: the install and the compilation are both timed), runs ``make run`` there on a free
port, and drives the system Chromium (Playwright) to the app as soon as the server answers.
Prints when the packages were installed (make's "Compiling the clustering kernels" line), when
the install step was done (numba's cache filled, ``.venv/.installed`` written), when the server
answered, when the sidebar first listed the app's pages, and when the first chart (the Explore
page's three panels) appeared, all counted from the ``make run`` command, with each stage's own
seconds; and how many of numba's cache files (``*.nbc``) were written after the server answered,
i.e. compiled on the first visitor's path. Package downloads come from this machine's caches
where it has them (uv's cache), as they would for a user who installed anything before.

Run from the repository root (after ``make .venv/.installed``, which provides Playwright)::

    .venv/bin/python benchmarks/first_visit.py            # one fresh clone
    .venv/bin/python benchmarks/first_visit.py --keep      # keep the clone for inspection

The target: the first chart within 30 s of ``make run`` (issue 43; issues 13 and 14 asked 60 s).
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("MAPDP_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGE_TITLES = ("Home", "Data", "Explore", "Compare", "Tune", "Subtypes", "Predict")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        return urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok"
    except OSError:
        return False


def _cache_files(clone: Path) -> dict:
    """numba's cache files in the clone (``cache=True`` writes them beside the modules), with their times."""
    return {str(p): p.stat().st_mtime_ns for p in clone.glob("mapdp_core/**/__pycache__/*.nbc")}


def _written(before: dict, after: dict) -> int:
    """How many cache files were written (new or rewritten) between two looks."""
    return sum(1 for p, t in after.items() if before.get(p) != t)


def measure(clone: Path, timeout: float) -> dict:
    from playwright.sync_api import sync_playwright

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, STREAMLIT_SERVER_PORT=str(port), STREAMLIT_SERVER_ADDRESS="127.0.0.1",
               STREAMLIT_SERVER_HEADLESS="true")
    env.pop("VIRTUAL_ENV", None)
    log = open(clone / "first_visit.log", "w")
    t0, started = time.perf_counter(), time.time()
    proc = subprocess.Popen(["make", "run"], cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    marks = {}
    log_path, stamp = clone / "first_visit.log", clone / ".venv" / ".installed"
    try:
        while not _healthy(url):
            if proc.poll() is not None:
                raise RuntimeError(f"`make run` exited with {proc.returncode}; see {clone / 'first_visit.log'}")
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError("the server did not answer in time")
            now = time.perf_counter() - t0
            if "packages installed" not in marks and "Compiling the clustering kernels" in log_path.read_text(errors="replace"):
                marks["packages installed"] = now
            if "install step done" not in marks and stamp.exists() and stamp.stat().st_mtime > started:
                marks["install step done"] = now
            kernels = clone / ".venv" / ".kernels"
            if "cache checked" not in marks and kernels.exists() and kernels.stat().st_mtime > started:
                marks["cache checked"] = now
            time.sleep(0.1)
        marks["server answered"] = time.perf_counter() - t0
        marks["cache at server"] = _cache_files(clone)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.goto(url)
            nav = page.locator('[data-testid="stSidebar"]')  # the app lists its pages as links there
            while "sidebar shows the pages" not in marks or "first chart" not in marks:
                now = time.perf_counter() - t0
                if now > timeout:
                    break
                if "sidebar shows the pages" not in marks and nav.count():
                    text = nav.first.inner_text().split("\n")
                    if all(t in text for t in PAGE_TITLES):
                        marks["sidebar shows the pages"] = now
                if "first chart" not in marks and page.locator(".js-plotly-plot .annotation-text").count() >= 3:
                    marks["first chart"] = now
                time.sleep(0.25)
            page.screenshot(path=str(clone / "first_visit.png"))
            marks["cache at first chart"] = _cache_files(clone)
            browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
    return marks


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep the fresh clone")
    ap.add_argument("--timeout", type=float, default=600.0, help="give up after this many seconds")
    ap.add_argument("--rev", default="HEAD", help="the commit to check out in the clone (default: HEAD)")
    ap.add_argument("--after-pull", metavar="FILE", default=None,
                    help="install first (untimed), then change FILE (e.g. mapdp_core/kernels/dp_mixture.py) as a "
                         "pull would, then time `make run`: numba's cache is stale for that file's kernels")
    args = ap.parse_args()
    load_before = " ".join(f"{v:.2f}" for v in os.getloadavg())
    head = subprocess.run(["git", "rev-parse", "--short", args.rev], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    clone = Path(tempfile.mkdtemp(prefix="mapdp_first_visit_")) / "repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "checkout", "-q", head], cwd=clone, check=True)
    try:
        if args.after_pull:
            env = dict(os.environ)
            env.pop("VIRTUAL_ENV", None)
            subprocess.run(["make", ".venv/.installed"], cwd=clone, env=env, check=True, capture_output=True)
            if (clone / ".venv" / ".installed").exists():
                subprocess.run(["touch", ".venv/.kernels"], cwd=clone)  # as an earlier `make run` left it
            time.sleep(1.1)
            changed = clone / args.after_pull
            changed.write_text(changed.read_text() + "\n# changed by a pull\n")
        marks = measure(clone, args.timeout)
    finally:
        if not args.keep:
            shutil.rmtree(clone.parent, ignore_errors=True)
    load_after = " ".join(f"{v:.2f}" for v in os.getloadavg())
    what = (f"a clone of {head}, installed, then {args.after_pull} changed as by a pull" if args.after_pull else
            f"a fresh clone of {head}")
    print(f"first visit on {what} (seconds after `make run`; install and compilation included; "
          f"load before {load_before}, after {load_after})")
    print(f"  {'':<26} {'at':>7} {'stage':>7}")
    last = 0.0
    for name, stage in (("packages installed", "venv and packages (uv)"),
                        ("install step done", "numba's cache filled, kernel registered"),
                        ("cache checked", "`make run`'s cache check (a fill when a source changed)"),
                        ("server answered", "Streamlit started"), ("sidebar shows the pages", "app's first page"),
                        ("first chart", "first chart drawn")):
        value = marks.get(name)
        if value is None:
            if name in ("server answered", "sidebar shows the pages", "first chart"):
                print(f"  {name:<26}  not seen within {args.timeout:.0f} s")
            continue
        print(f"  {name:<26} {value:7.1f} {value - last:7.1f}  {stage}")
        last = value
    if "cache at server" in marks and "cache at first chart" in marks:
        print(f"  numba cache files: {len(marks['cache at server'])} when the server answered, "
              f"{_written(marks['cache at server'], marks['cache at first chart'])} written after it "
              f"(compiled on the first visitor's path)")
    if args.keep:
        print(f"clone kept at {clone}")
    return 0 if "first chart" in marks else 1


if __name__ == "__main__":
    raise SystemExit(main())
