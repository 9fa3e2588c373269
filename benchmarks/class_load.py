#!/usr/bin/env python
"""A class at once (issue 43, item 7): many students open the app on one server at the same
moment, each in their own browser context (its own session), in the system Chromium driven by
Playwright. Per student, timed from the action to what the student sees:

- **first chart**: the page opened -> Explore's animation drawn (the default demo, PLOS 5.2,
  4 000 rows, MAP-DP, K-means and DP-means);
- **one N0 step**: the N0 slider one step right (keyboard) -> MAP-DP's panel titled with the new N0;
- **one Step**: First, then Step -> the frame slider on frame 2.

For each class size in ``--students`` a fresh server is started (``scripts/serve.py``, so the
first chart includes the class's one shared computation), the students start together, and the
medians and maxima are printed as a table. ``--heavy`` adds one more student who opens a heavy
run first (a link: a simulated 200 000-row table, 10 restarts) to see what it costs the others.
Nothing here is a pass/fail test; one Chromium holds every student, so on a small machine the
browser's own work is part of every number (said in the header with the machine's load)::

    .venv/bin/python benchmarks/class_load.py --students 1,10 [--heavy] [--out FILE]
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from _browser import CHROMIUM, FRAME_TEXT, SHOWS_N0, TITLES, free_port  # noqa: E402  (benchmarks/ is on sys.path)
from _timing import emit, git_commit  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HEAVY_LINK = "?dataset=crp:200000:3.0:2:0&restarts=10&time_budget=300&algorithms=MAP-DP,K-means"


def _serve(port: int, folder: Path) -> subprocess.Popen:
    config = folder / "mapdp_app.toml"
    config.write_text(f'[server]\nport = {port}\naddress = "127.0.0.1"\n')
    proc = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "serve.py"), "--python", sys.executable,
                             "--no-precompile"], cwd=ROOT, env={**os.environ, "MAPDP_APP_CONFIG": str(config)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while True:
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok":
                return proc
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            raise SystemExit("the server did not start")
        time.sleep(0.2)


async def _student(browser, url: str, out: dict) -> None:
    context = await browser.new_context(viewport={"width": 1280, "height": 720})
    page = await context.new_page()
    page.set_default_timeout(900_000)
    try:
        start = time.perf_counter()
        await page.goto(url)
        await page.wait_for_selector(TITLES)
        out["first chart"] = time.perf_counter() - start
        slider = page.get_by_role("slider", name="N0, the concentration (log scale)")
        await slider.focus()
        start = time.perf_counter()
        await page.keyboard.press("ArrowRight")
        wanted = float(await slider.get_attribute("aria-valuetext"))
        await page.wait_for_function(SHOWS_N0, arg=wanted)
        out["one N0 step"] = time.perf_counter() - start
        await page.get_by_role("button", name="First").first.click()  # the frame player's (a rerun may hold two a moment)
        await page.wait_for_function(f"() => (({FRAME_TEXT})() || '').startsWith('1 of')")
        start = time.perf_counter()
        await page.get_by_role("button", name="Step").first.click()
        await page.wait_for_function(f"() => (({FRAME_TEXT})() || '').startsWith('2 of')")
        out["one Step"] = time.perf_counter() - start
    except Exception as exc:  # noqa: BLE001 -- a student who fails is counted, not the end of the benchmark
        out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
    finally:
        await context.close()


async def _heavy(browser, url: str, out: dict) -> None:
    context = await browser.new_context(viewport={"width": 1280, "height": 720})
    page = await context.new_page()
    out["page"] = page
    await page.goto(url + HEAVY_LINK)


async def _class(n: int, heavy: bool, port: int) -> tuple[list[dict], float]:
    from playwright.async_api import async_playwright

    url = f"http://127.0.0.1:{port}/"
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM,
                                          args=["--headless", "--no-sandbox", "--disable-gpu"])
        held = {}
        if heavy:
            await _heavy(browser, url, held)
            await asyncio.sleep(20)  # its run under way (the data simulated, the search started)
        results = [{} for _ in range(n)]
        start = time.perf_counter()
        await asyncio.gather(*(_student(browser, url, r) for r in results))
        wall = time.perf_counter() - start
        await browser.close()
    return results, wall


def _cell(values: list[float]) -> str:
    if not values:
        return f"{'-':>7} {'-':>7}"
    return f"{statistics.median(values):>7.1f} {max(values):>7.1f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", default="1,10", help="class sizes, comma-separated (e.g. 1,10,30)")
    ap.add_argument("--heavy", action="store_true", help="also each size with one student running a heavy job")
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.students.split(",") if s.strip()]
    load_before = " ".join(f"{v:.2f}" for v in os.getloadavg())
    rows = []
    for heavy in ([False, True] if args.heavy else [False]):
        for n in sizes:
            with tempfile.TemporaryDirectory() as folder:
                port = free_port()
                server = _serve(port, Path(folder))
                try:
                    results, wall = asyncio.run(_class(n, heavy, port))
                finally:
                    os.killpg(server.pid, 15)
                    server.wait(timeout=30)
            ok = [r for r in results if "error" not in r]
            errors = sorted({r["error"] for r in results if "error" in r})
            rows.append((n, heavy, ok, len(results) - len(ok), wall, errors))
            print(f"... {n} students{' + 1 heavy' if heavy else ''}: {len(ok)} done in {wall:.0f} s", flush=True)
    lines = [f"# class_load  {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC  commit {git_commit()}  "
             f"{platform.node()}  {os.cpu_count()} cores  load before {load_before}",
             "# Explore's default demo (PLOS 5.2, 4,000 rows; MAP-DP, K-means, DP-means), one Chromium, one context "
             "per student, 1280 x 720; seconds, median and max over the students",
             f"{'students':>8} {'heavy':>5} {'first chart':>15} {'one N0 step':>15} {'one Step':>15} {'failed':>6} "
             f"{'wall':>6}",
             f"{'':>8} {'':>5} {'median':>7} {'max':>7} {'median':>7} {'max':>7} {'median':>7} {'max':>7}"]
    for n, heavy, ok, failed, wall, errors in rows:
        cells = " ".join(_cell([r[k] for r in ok if k in r]) for k in ("first chart", "one N0 step", "one Step"))
        lines.append(f"{n:>8} {'yes' if heavy else 'no':>5} {cells} {failed:>6} {wall:>6.0f}")
        lines += [f"#   failed: {e}" for e in errors]
    lines.append(f"# load after {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    emit("\n".join(lines), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
