#!/usr/bin/env python
"""A wide table from upload to the app's data (issue 28, part 4): seconds to read a CSV of 200
rows x D columns, suggest roles and families, and prepare the app's data (encoding, the
principal components MAPDP() clusters), with the one-pass suggestion for plainly real columns
beside the careful per-column rules it replaces for them, measured side by side in one run.

    PYTHONPATH=. .venv/bin/python benchmarks/wide_use.py [--cols 1000,5000,20000]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import mapdp_core.data.loading.suggest as suggest
from explorer import sources
from mapdp_core.data.loading import read_table, suggest_roles_and_families


def table_csv(D: int, seed: int = 0) -> bytes:
    """Issue 28's generated case: groups of 80, 70 and 50 rows, 50 columns shifted by 1.5 sd."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], [80, 70, 50])
    X = rng.normal(size=(200, D))
    X[:, :50] += 1.5 * y[:, None]
    return (",".join(f"g{j}" for j in range(D)) + "\n"
            + "\n".join(",".join(f"{v:.3f}" for v in row) for row in X)).encode()


def seconds(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cols", default="1000,5000,20000")
    args = ap.parse_args(argv)
    rows = []
    for D in [int(c) for c in args.cols.split(",")]:
        data = table_csv(D)
        t_read, (table, _) = seconds(lambda: read_table(data, name="wide.csv"))
        t_fast, fast = seconds(lambda: suggest_roles_and_families(table))
        plain = suggest._plain_real_rows
        suggest._plain_real_rows = lambda df, notes: {}
        try:
            t_careful, careful = seconds(lambda: suggest_roles_and_families(table))
        finally:
            suggest._plain_real_rows = plain
        same = fast.equals(careful)
        t_use, d = seconds(lambda: sources.table_data(table, roles=fast, families=fast, name="wide.csv"))
        rows.append({"table": f"200 x {D}", "read_table s": t_read, "suggest s": t_fast,
                     "suggest, careful path s": t_careful, "careful / one-pass": t_careful / t_fast,
                     "same suggestion": same, "app data s": t_use,
                     "components": len(d.wide.names) if d.wide is not None else 0})
        print(pd.DataFrame(rows[-1:]).round(2).to_string(index=False), flush=True)
    print()
    print(pd.DataFrame(rows).round(2).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
