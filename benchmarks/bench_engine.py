#!/usr/bin/env python
"""Speed and accuracy of the numba MAP-DP engine against scikit-learn and the naive reference.

Run from the repository root::

    python benchmarks/bench_engine.py            # N = 4000, 40000, 400000
    python benchmarks/bench_engine.py --quick    # N = 4000, 40000

Prints one table (see benchmarks/README.md for the columns) and ratio lines, all
measured in the same run on the same data: a synthetic scenario of the PLOS paper,
Section 5 (``mapdp_core.data.synthetic``), at D = 2 and embedded in D = 10.

Timing rules (shared/TESTING.md): numba is warmed up first; any measurement under
5 s is repeated and the median of 3 is reported; all ratios come from this run.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sklearn.cluster import KMeans  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.metrics import normalized_mutual_info_score  # noqa: E402
from sklearn.mixture import BayesianGaussianMixture  # noqa: E402

from _timing import timed  # noqa: E402
from mapdp_core.data.synthetic import PLOS_SCENARIOS, plos_scenario, plos_scenario_nd  # noqa: E402

N0 = 3.0          # PLOS Section 5 fixes the prior count to 3
TOL = 1e-6


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def nmi(y_true, labels) -> float:
    return float(normalized_mutual_info_score(y_true, labels))


@dataclass
class Row:
    method: str
    D: int
    N: int
    wall: float
    iters: int | None = None
    k_found: int | None = None
    nmi: float | None = None
    ns_per_eval: float | None = None
    note: str = ""


def fmt_rows(rows: list[Row]) -> str:
    header = ["method", "D", "N", "wall (s)", "iters", "K found", "NMI", "ns/pt·cluster/sweep", "note"]
    right = [False, True, True, True, True, True, True, True, False]
    table = [header]
    for r in rows:
        table.append([
            r.method, str(r.D), str(r.N), f"{r.wall:.3f}",
            "" if r.iters is None else str(r.iters),
            "" if r.k_found is None else str(r.k_found),
            "" if r.nmi is None else f"{r.nmi:.3f}",
            "" if r.ns_per_eval is None else f"{r.ns_per_eval:.1f}",
            r.note,
        ])
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = []
    for j, row in enumerate(table):
        cells = [c.rjust(w) if right[i] else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def get_data(section: str, n: int, d: int, seed: int):
    if d == 2:
        return plos_scenario(section, n=n, seed=seed)
    return plos_scenario_nd(section, n=n, d=d, seed=seed)


# ---------------------------------------------------------------------------
# Methods
# ---------------------------------------------------------------------------

def run_mapdp(X, y, likelihood: str, max_iter: int, prior=None) -> tuple[Row, list]:
    """Time MAP-DP in identity order (one run, no restarts).

    ``map_dp`` is the per-sweep generator that ``MAPDP.fit`` consumes for each
    restart; using it directly gives the number of clusters after every sweep,
    which the per-evaluation cost needs.
    """
    from mapdp_core import map_dp

    def go():
        return list(map_dp(X, N0, likelihood, prior, tol=TOL, max_iter=max_iter))

    wall, states = timed(go)
    last = states[-1]
    iters = len(states)
    k_avg = float(np.mean([s.n_clusters for s in states]))
    # Each point is scored against every live cluster plus the "new cluster" option.
    ns = wall / (iters * X.shape[0] * (k_avg + 1.0)) * 1e9
    note = f"K_avg={k_avg:.1f}"
    if not last.converged:
        note += f", hit max_iter={max_iter}"
    name = {"normal_wishart": "MAP-DP NW", "spherical_gaussian": "MAP-DP spherical"}[likelihood]
    return Row(name, X.shape[1], X.shape[0], wall, iters, int(last.n_clusters), nmi(y, last.labels),
               ns, note), states


def run_mapdp_estimator_check(X, y, max_iter: int) -> str:
    """One untimed MAPDP(...).fit with the documented estimator API, as a cross-check."""
    from mapdp_core import MAPDP

    est = MAPDP(N0=N0, likelihood="normal_wishart", prior=None, n_init=1, shuffle=False,
                tol=TOL, max_iter=max_iter).fit(X)
    return (f"MAPDP.fit cross-check (D={X.shape[1]}, N={X.shape[0]}): K={est.n_clusters_}, "
            f"iters={est.n_iter_}, NMI={nmi(y, est.labels_):.3f}, "
            f"final E={est.objective_history_[-1]:.3f}")


def run_kmeans(X, y, seed: int) -> Row:
    def go():
        return KMeans(n_clusters=3, n_init=1, random_state=seed).fit(X)

    wall, km = timed(go)
    return Row("KMeans k=3", X.shape[1], X.shape[0], wall, int(km.n_iter_), 3, nmi(y, km.labels_))


def run_bgm(X, y, seed: int) -> Row:
    def go():
        bgm = BayesianGaussianMixture(n_components=10, weight_concentration_prior_type="dirichlet_process",
                                      covariance_type="full", random_state=seed)
        with warnings.catch_warnings():
            # reported in the note column instead
            warnings.simplefilter("ignore", ConvergenceWarning)
            labels = bgm.fit_predict(X)
        return bgm, labels

    wall, (bgm, labels) = timed(go)
    note = "K = distinct predicted labels"
    if not bgm.converged_:
        note += f"; not converged in max_iter={bgm.max_iter}"
    return Row("BayesianGMM DP", X.shape[1], X.shape[0], wall, int(bgm.n_iter_), int(np.unique(labels).size),
               nmi(y, labels), note=note)


def nw_prior_for(X) -> tuple[dict, str]:
    """The hyperparameters MAP-DP uses by default, for the naive reference."""
    from mapdp_core import default_prior

    return dict(default_prior("normal_wishart", X)), "mapdp_core.default_prior"


def run_naive(X, y, sweeps: int):
    """The slow NumPy reference for ``sweeps`` sweeps, and the engine on the same work.

    Both get identical hyperparameters and the identity visiting order, so their
    labels after the same number of sweeps must agree.
    """
    from tests.naive import naive_mapdp
    from mapdp_core import map_dp

    prior, source = nw_prior_for(X)
    blocks = [("normal_wishart", list(range(X.shape[1])), prior)]
    t0 = time.perf_counter()
    labels_naive, e_hist = naive_mapdp(X, N0, blocks, tol=TOL, max_iter=sweeps)
    naive_wall = time.perf_counter() - t0  # far above 5 s: measured once
    n_sweeps = len(e_hist)

    def go():
        return list(map_dp(X, N0, "normal_wishart", prior, tol=TOL, max_iter=n_sweeps))

    engine_wall, states = timed(go)
    agree = bool(np.array_equal(np.asarray(states[-1].labels), np.asarray(labels_naive)))
    k = int(np.max(labels_naive)) + 1
    row = Row("naive NumPy NW", X.shape[1], X.shape[0], naive_wall, n_sweeps, k, nmi(y, labels_naive),
              note=f"capped at {sweeps} sweep(s); prior from {source}")
    return row, naive_wall / n_sweeps, engine_wall / n_sweeps, agree


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="N = 4000 and 40000 only")
    ap.add_argument("--sizes", type=int, nargs="+", help="override the list of N")
    ap.add_argument("--scenario", default="5.6", choices=sorted(PLOS_SCENARIOS),
                    help="PLOS Section 5 scenario to draw the data from (default 5.6)")
    ap.add_argument("--seed", type=int, default=0, help="data and sklearn seed (default 0)")
    ap.add_argument("--max-iter", type=int, default=100, help="MAP-DP sweep cap (default 100)")
    ap.add_argument("--naive-sweeps", type=int, default=1,
                    help="sweeps of the naive reference at N=4000 (one sweep takes about a minute; default 1)")
    ap.add_argument("--skip-naive", action="store_true", help="do not run the naive reference")
    ap.add_argument("--single-thread", action="store_true",
                    help="limit BLAS/OpenMP (sklearn) to one thread, like the sequential MAP-DP sweep")
    args = ap.parse_args(argv)

    sizes = args.sizes or ([4000, 40000] if args.quick else [4000, 40000, 400000])
    dims = [2, 10]

    limiter = None
    if args.single_thread:
        from threadpoolctl import threadpool_limits
        limiter = threadpool_limits(limits=1)

    import numba
    import sklearn
    print(f"MAP-DP engine benchmark — scenario {args.scenario}: {PLOS_SCENARIOS[args.scenario]}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
          f"scikit-learn {sklearn.__version__}, {os.cpu_count()} CPUs"
          f"{', sklearn limited to 1 thread' if limiter else ''}; N0={N0}, tol={TOL}, seed={args.seed}")

    import mapdp_core
    t0 = time.perf_counter()
    if hasattr(mapdp_core, "warm_up"):
        mapdp_core.warm_up()
    Xw, _ = plos_scenario(args.scenario, n=200, seed=1)
    for lik in ("normal_wishart", "spherical_gaussian"):  # compile/load the exact call paths timed below
        for Xd in (Xw, plos_scenario_nd(args.scenario, n=200, d=10, seed=1)[0]):
            list(mapdp_core.map_dp(Xd, N0, lik, max_iter=2))
    KMeans(n_clusters=3, n_init=1, random_state=0).fit(Xw)
    print(f"warm-up (numba compile or cache load): {time.perf_counter() - t0:.2f} s\n")

    rows: list[Row] = []
    walls: dict[tuple[str, int, int], float] = {}
    per_sweep: dict[tuple[str, int, int], float] = {}
    checks: list[str] = []
    naive_info = None

    for n in sizes:
        for d in dims:
            X, y = get_data(args.scenario, n, d, args.seed)
            # The spherical model (one known variance for every coordinate) is run at D = 2
            # only: on the D = 10 embedding it tiles the elongated clusters with hundreds of
            # small ones (K = 286 at N = 4000), which says nothing about the engine's speed.
            for lik in ("normal_wishart", "spherical_gaussian") if d == 2 else ("normal_wishart",):
                row, _ = run_mapdp(X, y, lik, args.max_iter)
                rows.append(row)
                walls[(row.method, d, n)] = row.wall
                per_sweep[(row.method, d, n)] = row.wall / row.iters
                print(f"  done: {row.method:<17} D={d:<3} N={n:<7} {row.wall:8.3f} s", flush=True)
            if n == sizes[0]:
                checks.append(run_mapdp_estimator_check(X, y, args.max_iter))
            for runner in (lambda: run_kmeans(X, y, args.seed), lambda: run_bgm(X, y, args.seed)):
                row = runner()
                rows.append(row)
                walls[(row.method, d, n)] = row.wall
                print(f"  done: {row.method:<17} D={d:<3} N={n:<7} {row.wall:8.3f} s", flush=True)
            if n == 4000 and d == 2 and not args.skip_naive:
                print(f"  running the naive reference ({args.naive_sweeps} sweep(s), about a minute each) ...",
                      flush=True)
                row, naive_sweep, engine_sweep, agree = run_naive(X, y, args.naive_sweeps)
                rows.append(row)
                naive_info = (naive_sweep, engine_sweep, agree, row.iters)
                print(f"  done: {row.method:<17} D={d:<3} N={n:<7} {row.wall:8.3f} s", flush=True)

    print()
    print(fmt_rows(rows))
    print()
    print("ns/pt·cluster/sweep = wall / (iters * N * (K_avg + 1)); K_avg = mean number of clusters "
          "after each sweep.")
    for c in checks:
        print(c)
    print()

    # ---- ratios, all from this run ----
    print("Ratios (same run, same data):")
    n_big = max(sizes)
    for method in ("MAP-DP NW", "MAP-DP spherical"):
        km = walls.get(("KMeans k=3", 2, n_big))
        mp = walls.get((method, 2, n_big))
        if km and mp:
            print(f"  {method} time / KMeans time   (N={n_big}, D=2): {mp / km:8.2f}")
    for n in sizes:
        for d in dims:
            bgm = walls.get(("BayesianGMM DP", d, n))
            mp = walls.get(("MAP-DP NW", d, n))
            if bgm and mp:
                print(f"  BayesianGMM time / MAP-DP NW time (N={n}, D={d}): {bgm / mp:8.2f}")
    if naive_info is not None:
        naive_sweep, engine_sweep, agree, sweeps = naive_info
        print(f"  naive per-sweep / MAP-DP NW per-sweep (N=4000, D=2, same {sweeps} sweep(s), same prior): "
              f"{naive_sweep / engine_sweep:10.1f}   ({naive_sweep:.2f} s vs {engine_sweep * 1e3:.2f} ms; "
              f"labels {'identical' if agree else 'DIFFER'})")
        full = per_sweep.get(("MAP-DP NW", 2, 4000))
        if full:
            print(f"  naive per-sweep / MAP-DP NW mean per-sweep of the full run (N=4000, D=2): "
                  f"{naive_sweep / full:10.1f}")
    elif 4000 in sizes and not args.skip_naive:
        print("  naive reference not run")
    if limiter is not None:
        limiter.restore_original_limits()
    return 0


if __name__ == "__main__":
    sys.exit(main())
