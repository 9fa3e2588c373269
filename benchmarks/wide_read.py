#!/usr/bin/env python
"""Reading wide tables (issue 28, part 1): ``read_table`` seconds against the number of columns.

The tables are generated in memory (nothing is written to disk), in these variants:

* ``numeric``: a header row ``v1, v2, ...`` then numbers written with 3 decimals;
* ``mixed``: the same, except that every tenth column is text (a few words), and other
  columns hold some blank cells, a few ``"1,452"``-style cells (thousands separators, quoted)
  or a few ``79%`` cells, and whole numbers, so that the per-column rules (missing cells,
  separators, units, int64 against float64) all run;
* ``excel`` (not run unless asked): the ``numeric`` table as an .xlsx workbook, numbers as
  numbers (Excel holds at most 16 384 columns; the workbook is written by openpyxl).

Each (variant, shape) is read once, in a fresh process (so that one read cannot warm the
next, and a read that runs past ``--limit`` seconds is stopped and printed as ``> limit``);
only the ``read_table`` call is timed, not the generation. Files above
``FAST_PATH_BYTES`` (2 MiB) go through pandas' C reader (``fast`` in the table), the others
through the careful path (``careful``).

Run from the repository root::

    PYTHONPATH=. python benchmarks/wide_read.py                  # every shape, both variants
    PYTHONPATH=. python benchmarks/wide_read.py --limit 60       # stop a read after 60 s
    PYTHONPATH=. python benchmarks/wide_read.py --variant excel --shapes 50x1000 50x5000 200x5000
    PYTHONPATH=. python benchmarks/wide_read.py --root /tmp/old     # time another tree's mapdp_core
    PYTHONPATH=. python benchmarks/wide_read.py --profile 50x2000 --variant numeric
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]
SHAPES = ["50x1000", "50x2000", "50x5000", "200x5000", "200x20000"]
VARIANTS = ["numeric", "mixed"]
CHOICES = VARIANTS + ["excel"]
_WORDS = np.array(["alpha", "beta", "gamma", "delta", "none", "mild"])


def table_bytes(n_rows: int, n_cols: int, variant: str, seed: int = 0) -> bytes:
    """A table of ``n_rows`` data rows and ``n_cols`` columns (plus a header row), as the bytes of
    a CSV file (or of an .xlsx workbook for the ``excel`` variant)."""
    rng = np.random.default_rng(seed)
    numbers = np.round(rng.normal(50.0, 20.0, size=(n_rows, n_cols)), 3)
    cells = np.char.mod("%.3f", numbers).astype(object)
    if variant == "mixed":
        for j in range(n_cols):
            kind = j % 10
            if kind == 0:  # a text column
                cells[:, j] = _WORDS[rng.integers(0, len(_WORDS), n_rows)]
            elif kind == 1:  # blank cells (about 10 %)
                cells[rng.random(n_rows) < 0.1, j] = ""
            elif kind == 2 and j % 20 == 2:  # a few numbers with thousands separators, quoted
                hit = rng.random(n_rows) < 0.05
                hit[0] = True
                cells[hit, j] = [f'"{v:,}"' for v in rng.integers(1000, 9999, hit.sum())]
            elif kind == 2:  # a few percentages (the column reads as numbers in %)
                hit = rng.random(n_rows) < 0.05
                hit[0] = True
                cells[hit, j] = [f"{v}%" for v in rng.integers(1, 100, hit.sum())]
            elif kind == 3:  # whole numbers (int64)
                cells[:, j] = rng.integers(0, 500, n_rows).astype(str)
    elif variant == "excel":
        return _xlsx_bytes(numbers)
    elif variant != "numeric":
        raise ValueError(f"unknown variant {variant!r}")
    header = ",".join(f"v{j + 1}" for j in range(n_cols))
    body = "\n".join(",".join(row) for row in cells.tolist())
    return (header + "\n" + body + "\n").encode()


def _xlsx_bytes(numbers: np.ndarray) -> bytes:
    import io

    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("data")
    sheet.append([f"v{j + 1}" for j in range(numbers.shape[1])])
    for row in numbers.tolist():
        sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _path(variant: str, data: bytes) -> str:
    """Which reader takes the bytes: pandas' C reader (fast), the careful path, or Excel's."""
    from mapdp_core.data.loading import FAST_PATH_BYTES

    return "excel" if variant == "excel" else "fast" if len(data) > FAST_PATH_BYTES else "careful"


def _shape(text: str) -> tuple[int, int]:
    n, d = text.lower().split("x")
    return int(n), int(d)


def _one(shape: str, variant: str, limit: float) -> dict:
    """Generate one table and time one ``read_table`` call on it (in this process), stopped
    by an alarm after ``limit`` seconds."""
    import signal
    import warnings

    from mapdp_core.data.loading import read_table

    n, d = _shape(shape)
    data = table_bytes(n, d, variant)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        signal.signal(signal.SIGALRM, _stop)
        signal.setitimer(signal.ITIMER_REAL, limit)
        t0 = time.perf_counter()
        try:
            df, report = read_table(data)
        except TimeoutError:
            return {"seconds": None, "bytes": len(data), "path": _path(variant, data)}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        seconds = time.perf_counter() - t0
    return {"seconds": seconds, "bytes": len(data), "path": _path(variant, data),
            "shape": list(df.shape), "warnings": len(report.warnings), "notes": len(report.column_notes),
            "dtypes": {str(k): int(v) for k, v in df.dtypes.astype(str).value_counts().items()}}


def _stop(signum, frame):
    raise TimeoutError


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", nargs="+", default=SHAPES, help="ROWSxCOLUMNS, e.g. 50x2000")
    ap.add_argument("--variant", choices=CHOICES, action="append", help="repeatable; default numeric and mixed")
    ap.add_argument("--limit", type=float, default=300.0, help="seconds before a read is stopped")
    ap.add_argument("--profile", metavar="SHAPE", help="profile one read (cProfile, top 25 by cumulative time)")
    ap.add_argument("--root", default=str(ROOT), help="repository root whose mapdp_core is timed (default: this one)")
    ap.add_argument("--child", nargs=3, metavar=("SHAPE", "VARIANT", "LIMIT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    variants = args.variant or VARIANTS
    if args.child:
        shape, variant, limit = args.child
        print(json.dumps(_one(shape, variant, float(limit))))
        return
    if args.profile:
        import cProfile
        import pstats
        import warnings

        from mapdp_core.data.loading import read_table

        n, d = _shape(args.profile)
        data = table_bytes(n, d, variants[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prof = cProfile.Profile()
            prof.enable()
            read_table(data)
            prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
        return
    root = str(Path(args.root).resolve())
    env = dict(os.environ, PYTHONPATH=root)
    print(f"read_table seconds of {root}, one read per row in a fresh process (stopped after {args.limit:g} s)")
    print(f"{'variant':<8} {'shape':>10} {'cells':>10} {'MB':>6} {'path':>8} {'seconds':>9} {'us/cell':>8}  result")
    for variant in variants:
        for shape in args.shapes:
            n, d = _shape(shape)
            cells = n * d
            try:
                proc = subprocess.run([sys.executable, str(HERE), "--child", shape, variant, str(args.limit)],
                                      env=env, cwd=root, capture_output=True, text=True, timeout=args.limit + 300)
            except subprocess.TimeoutExpired:  # the alarm did not stop it (a long call in C)
                print(f"{variant:<8} {shape:>10} {cells:>10} {'':>6} {'':>8} {'> ' + format(args.limit, 'g'):>9}")
                continue
            if proc.returncode:
                print(f"{variant:<8} {shape:>10} {cells:>10}  failed: {proc.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            if r["seconds"] is None:
                print(f"{variant:<8} {shape:>10} {cells:>10} {r['bytes'] / 1e6:>6.1f} {r['path']:>8} "
                      f"{'> ' + format(args.limit, 'g'):>9}", flush=True)
                continue
            dtypes = ", ".join(f"{k} {v}" for k, v in sorted(r["dtypes"].items()))
            print(f"{variant:<8} {shape:>10} {cells:>10} {r['bytes'] / 1e6:>6.1f} {r['path']:>8} {r['seconds']:>9.2f} "
                  f"{1e6 * r['seconds'] / cells:>8.1f}  {r['shape'][0]}x{r['shape'][1]}: {dtypes}; "
                  f"{r['notes']} notes, {r['warnings']} warnings", flush=True)


if __name__ == "__main__":
    main()
