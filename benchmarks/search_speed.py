#!/usr/bin/env python
"""``MAPDP(random_state=0).fit`` at an earlier commit against the working tree, side by side.

Issue 41, item 4: a change to the automatic search must not make the default fit slower. This
checks out ``--base`` (default: the commit before issue 41's search changes of 2026-12-07) into a
temporary git worktree and times one default fit per table in each tree, alternately, each in a
fresh process after an untimed warm-up fit (the new worktree compiles its numba cache then, a
minute or two), the median of ``--repeats``; the ratio new / base comes from the same run, on the
same machine, minutes apart.

Run from the repository root::

    python benchmarks/search_speed.py
    python benchmarks/search_speed.py --tables primary_biliary_cholangitis,plos5.2_400000_10 --repeats 5

A table is a shipped data set's name (``datasets/<name>.csv``, read as it is) or
``plos<section>_<rows>_<dimensions>`` (``plos_scenario`` at D = 2, ``plos_scenario_nd`` above) or
a labelled table of ``benchmarks/data/`` as ``<folder>/<name>`` (its ``label`` column left out;
never a sealed set's).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = "23f52c7"
TABLES = ("primary_biliary_cholangitis,pima_indians_diabetes,hepatitis,carnivore_scat,heart_disease_cleveland,"
          "palmer_penguins,wine,plos5.2_400000_10,plos5.2_400000_2")

CHILD = r'''
import sys, time, warnings, json
sys.path.insert(0, ".")
warnings.filterwarnings("ignore")
import pandas as pd
from mapdp_core import MAPDP
from mapdp_core.data.synthetic import plos_scenario, plos_scenario_nd
name, repeats = sys.argv[1], int(sys.argv[2])
if name.startswith("plos"):
    section, n, d = name[4:].split("_")
    n, d = int(n), int(d)
    X = plos_scenario(section, n, seed=0)[0] if d == 2 else plos_scenario_nd(section, n, d, seed=0)[0]
elif "/" in name:  # a labelled table of benchmarks/data/, its class left out
    X = pd.read_csv(f"benchmarks/data/{name}.csv").drop(columns=["label"], errors="ignore")
else:
    X = pd.read_csv(f"datasets/{name}.csv")
MAPDP.warm_up()
MAPDP(random_state=0).fit(plos_scenario("5.1", 500, seed=1)[0])  # the search's code paths compiled
seconds = []
for _ in range(repeats):
    t0 = time.perf_counter()
    MAPDP(random_state=0).fit(X)
    seconds.append(time.perf_counter() - t0)
print(json.dumps(seconds))
'''


def timed(tree: Path, name: str, repeats: int) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD, name, str(repeats)], cwd=tree, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{name} failed in {tree}:\n{out.stderr[-2000:]}")
    return statistics.median(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=BASE, help=f"the commit to compare with (default {BASE})")
    parser.add_argument("--tables", default=TABLES, help="comma-separated tables (see the module docstring)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        base_tree = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(base_tree), args.base], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            print(f"MAPDP(random_state=0).fit: {args.base} (base) against {head} (the working tree); "
                  f"seconds, median of {args.repeats}")
            print(f"{'table':32s} {'base s':>8s} {'new s':>8s} {'new/base':>8s}")
            for name in args.tables.split(","):
                base = timed(base_tree, name, args.repeats)
                new = timed(ROOT, name, args.repeats)
                print(f"{name:32s} {base:8.3f} {new:8.3f} {new / base:8.2f}", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=ROOT, capture_output=True)


if __name__ == "__main__":
    main()
