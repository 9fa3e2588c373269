#!/usr/bin/env python
"""The app at scale (issue 13): a table of a million rows, generated on the Data page, then
clustered on the Explore page with the app's defaults, driven headless through Streamlit's
AppTest (the same script runs as in a browser; only the drawing in the browser is not timed).

Prints, per stage, the seconds of the page run and what the page showed: the automatic
choice of N0 and the prior, each algorithm's steps, K, whether the time limit stopped it, the
rows drawn (the display sample) and the page's own notes. Also one upload of the same table as
a CSV file through the Data page's reader (``read_table``, what the uploader calls).

Run from the repository root::

    .venv/bin/python benchmarks/app_scale.py              # 1 000 000 rows
    .venv/bin/python benchmarks/app_scale.py --rows 200000

Nothing here is a pass/fail test; the numbers belong in the issue's note.
"""
from __future__ import annotations

import argparse
import datetime
import io
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from _timing import git_commit  # noqa: E402  (benchmarks/ is on sys.path when run as a script)



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--scenario", default="5.4")
    parser.add_argument("--budget", type=float, default=60.0, help="the Explore page's time limit per algorithm (s)")
    args = parser.parse_args()

    import numpy as np
    from streamlit.testing.v1 import AppTest

    from explorer import runner, sources
    from mapdp_core.data.loading import read_table, suggest_roles_and_families

    print(f"The app at scale (issue 13), {datetime.date.today()}; command: python benchmarks/app_scale.py "
          + " ".join(sys.argv[1:]))
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, {platform.system()}; commit {git_commit()}; "
          f"python {platform.python_version()}, numpy {np.__version__}")
    print(f"data: PLOS scenario {args.scenario}, {args.rows:,} rows, D = 2; Explore with its defaults "
          f"(MAP-DP, K-means, DP-means; 3 restarts; time limit {args.budget:g} s per algorithm)\n")

    rows = []

    def stage(name: str, seconds: float, shown: str):
        rows.append((name, seconds, shown))
        print(f"  {name:<44} {seconds:8.2f} s   {shown}", flush=True)

    # 1. the upload path: the same table as a CSV file, read as the uploader reads it
    d = sources.scenario_data(args.scenario, n=args.rows, seed=0)
    buffer = io.StringIO()
    d.table.to_csv(buffer, index=False)
    raw = buffer.getvalue().encode()
    t0 = time.perf_counter()
    table, _ = read_table(raw, name="big.csv")
    stage("upload: read a CSV of the table", time.perf_counter() - t0,
          f"{len(raw) / 1e6:.1f} MB, {len(table):,} rows x {table.shape[1]} columns")
    t0 = time.perf_counter()
    suggested = suggest_roles_and_families(table)
    suggested.loc[suggested["column"] == "truth", "role"] = "label"  # as a user marks it
    sources.table_data(table, roles=suggested, families=suggested)
    stage("upload: suggest likelihoods, build the data", time.perf_counter() - t0, "")
    del raw, buffer, table, d

    # 2. the app: generate on the Data page, then Explore
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=1800)
    t0 = time.perf_counter()
    at.run()
    stage("first page (home, built-in demo)", time.perf_counter() - t0, "")
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Simulated").run()
    at.selectbox(key="w_gen_section").set_value(args.scenario).run()
    at.number_input(key="w_gen_n").set_value(args.rows).run()
    t0 = time.perf_counter()
    at.button(key="generate").click().run()
    data = at.session_state["data"]
    stage("Data page: generate", time.perf_counter() - t0, f"{data.n_rows:,} rows")
    failures = [e.value for e in list(at.exception) + list(at.error)]

    t0 = time.perf_counter()
    at.switch_page("pages/explore.py").run()
    seconds = time.perf_counter() - t0
    failures += [e.value for e in list(at.exception) + list(at.error)]
    runs = [v for k, v in at.session_state["runs"].items() if len(k) > 1 and isinstance(v, runner.Run)]
    choice = next((v for k, v in at.session_state["runs"].items() if len(k) == 2 and k[1] == "auto"), None)
    stage("Explore page: choose, run, draw", seconds, f"{len(at.get('plotly_chart'))} charts")
    if choice is not None:
        print(f"     automatic choice: N0 = {choice.N0:g}, spread x {choice.spread:g}, structure {choice.structure}")
    for r in runs:
        print(f"     {r.algorithm:<10} {len(r.states):4d} steps  K = {r.final.n_clusters:3d}  "
              f"{r.seconds:7.2f} s  stopped by the time limit: {r.stopped}")
    for w in at.warning:
        print(f"     warning shown: {w.value}")
    for c in at.caption:
        if "Showing" in c.value or "rows" in c.value and "drawn" in c.value:
            print(f"     note shown: {c.value}")
    print(f"\n  failures shown on the pages: {failures or 'none'}")
    print(f"  total of the timed stages: {sum(s for _, s, _ in rows):.1f} s")


if __name__ == "__main__":
    main()
