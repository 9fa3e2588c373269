#!/usr/bin/env python
"""The exact MAP-DP fit on a Dask cluster (``MAPDP().fit(dask_array)``): seconds against rows and
workers, rounds, rows moved and bytes sent per round, against the cost model of
``benchmarks/distributed_sim.py`` and against the same fit in one process.

The rows are generated part by part on the workers (PLOS scenario 5.4 by default, each part its
own seeded draw from the scenario's mixture), never as one array. Per size and worker count:

* ``fit s``: ``MAPDP(random_state=0).fit`` with every default (the automatic choices and the
  restarts on the 50 000-row sample, the extension, the sweeps in rounds);
* ``sample s``: reading the sample and fitting it here; ``sweeps s``: the start statistics (a
  chain over the parts) and the sweeps;
* ``rounds``: per sweep; ``moved``: rows moved per sweep; ``kB/round``: bytes sent per round
  (the statistics to every worker and one part's result back per worker, from their pickled
  sizes); ``NMI``: against the generating labels (a contingency table summed on the workers);
* ``model s``: what the cost model says for the sweeps: sweeps x N (K + 1) c / P, with c the
  cost of one row scored against one cluster in one thread, measured here on one process.

Peers, on the same cluster and rows: ``dask_ml.cluster.KMeans`` (k-means||, the true K) when
dask-ml is installed (it is not a requirement: ``pip install dask-ml``), and, up to
``--memory-rows``, ``MAPDP(random_state=0).fit`` on the rows gathered into this process.

Run from the repository root::

    .venv/bin/python benchmarks/bench_distributed.py --quick          # 1 and 4 million rows
    .venv/bin/python benchmarks/bench_distributed.py                  # 10 and 40 million rows
    .venv/bin/python benchmarks/bench_distributed.py --workers 1 2 4 8 16   # on a larger machine
"""
from __future__ import annotations

import argparse
import datetime
import os
import pickle
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from _timing import git_commit  # noqa: E402

from mapdp_core import MAPDP  # noqa: E402
from mapdp_core.data.synthetic import plos_scenario_parameters  # noqa: E402


def draw_part(section: str, n: int, seed: int):
    """(rows, labels): n rows drawn from the scenario's Gaussian mixture with their own seed."""
    p = plos_scenario_parameters(section)
    rng = np.random.default_rng(seed)
    z = rng.choice(len(p["weights"]), size=n, p=p["weights"] / p["weights"].sum())
    chol = np.linalg.cholesky(p["covariances"])
    X = p["means"][z] + np.einsum("nab,nb->na", chol[z], rng.standard_normal((n, 2)))
    return X, z


def dask_rows(section: str, N: int, parts: int):
    """(X, truth) as Dask arrays of ``parts`` parts, each generated where it is computed."""
    import dask
    import dask.array as da

    sizes = [N // parts + (1 if i < N % parts else 0) for i in range(parts)]
    xs, zs = [], []
    for i, n in enumerate(sizes):
        pair = dask.delayed(draw_part, nout=2, pure=True)(section, n, 1000 + i)
        xs.append(da.from_delayed(pair[0], shape=(n, 2), dtype=float))
        zs.append(da.from_delayed(pair[1], shape=(n,), dtype=np.int64))
    return da.concatenate(xs), da.concatenate(zs)


def nmi_on_workers(labels, truth) -> float:
    """NMI (arithmetic mean of the entropies, scikit-learn's default) from a contingency table
    summed on the workers."""
    import dask.array as da

    K, T = int(labels.max().compute()) + 1, int(truth.max().compute()) + 1
    table = da.bincount(labels * T + truth, minlength=K * T).compute().reshape(K, T)
    n = table.sum()
    pk, pt = table.sum(1) / n, table.sum(0) / n
    pj = table / n
    nz = pj > 0
    mi = float((pj[nz] * np.log(pj[nz] / np.outer(pk, pt)[nz])).sum())
    h = lambda p: float(-(p[p > 0] * np.log(p[p > 0])).sum())  # noqa: E731
    return mi / max((h(pk) + h(pt)) / 2, 1e-300)


def cost_per_score(section: str) -> float:
    """c: seconds to score one row against one cluster, one thread (a plain sweep from the
    converged labels on 400 000 rows, divided by N (K + 1))."""
    X, _ = draw_part(section, 400_000, 7)
    m = MAPDP(random_state=0).fit(X)
    likelihood, prior = {}, {}
    for block in m.prior_:  # the chosen model, given explicitly
        key = tuple(block["columns"]) if len(block["columns"]) > 1 else block["columns"][0]
        likelihood[key] = block["family"]
        prior[key] = {k: v for k, v in block.items() if k not in ("family", "columns")}
    one = MAPDP(N0=m.N0_, likelihood=likelihood, prior=prior, n_init=1, shuffle=False, n_jobs=1,
                init=m.component_labels_, tol=0.0, max_iter=1)
    sweep = next(iter(one.iter_sweeps(X)))
    return sweep.elapsed / (len(X) * (m.n_components_ + 1))


def main() -> None:
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=float, nargs="+", default=[10e6, 40e6])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--parts-per-worker", type=int, default=4)
    ap.add_argument("--scenario", default="5.4")
    ap.add_argument("--memory-rows", type=float, default=10e6, help="also fit in one process up to this many rows")
    ap.add_argument("--quick", action="store_true", help="1 and 4 million rows")
    ap.add_argument("--kmeans-rows", type=float, default=float("inf"),
                    help="run dask-ml's KMeans (when installed) only up to this many rows")
    args = ap.parse_args()
    rows = [1e6, 4e6] if args.quick else args.rows
    from distributed import Client, LocalCluster

    print(f"MAPDP().fit on a Dask LocalCluster, {datetime.date.today()}; command: python benchmarks/bench_distributed.py "
          + " ".join(sys.argv[1:]))
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}; commit {git_commit()}; python "
          f"{platform.python_version()}, numpy {np.__version__}; scenario {args.scenario} (D = 2, K = 3); workers are "
          f"processes of one thread, {args.parts_per_worker} parts per worker")
    c = cost_per_score(args.scenario)
    print(f"c = {c * 1e9:.1f} ns per row and cluster (one thread, this machine)\n")
    try:
        from dask_ml.cluster import KMeans as DaskKMeans
    except ImportError:
        DaskKMeans = None
    head = (f"{'rows':>11} {'P':>3} {'fit s':>7} {'sample s':>8} {'sweeps s':>8} {'model s':>7} {'K':>3} {'NMI':>5} "
            f"{'sweeps':>6} {'rounds per sweep':>18} {'moved per sweep':>22} {'kB/round':>8} {'KMeans s':>8} "
            f"{'in memory s':>11}")
    print(head)
    results = []
    for P in args.workers:
        with LocalCluster(n_workers=P, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=50, memory_limit=0) as cluster, Client(cluster) as client:
            small, _ = dask_rows(args.scenario, 20_000, P)
            MAPDP(random_state=0, restart_rows=2000).fit(small)  # every worker compiles (from numba's cache)
            for N in map(int, rows):
                X, truth = dask_rows(args.scenario, N, P * args.parts_per_worker)
                X = X.persist()  # generated on the workers before the clock starts
                truth = truth.persist()
                t0 = time.perf_counter()
                m = MAPDP(random_state=0).fit(X)
                fit_s = time.perf_counter() - t0
                info = m.partitions_
                nmi = nmi_on_workers(m.labels_, truth)
                stats_bytes = len(pickle.dumps(m._fitted_stats))
                parts = info.attrs["parts"]
                # per round: the statistics to every worker, then the result (statistics, mask, counts) of each
                # part that visited, one per worker at most (engine.partitioned's window)
                per_round = (P * stats_bytes + min(parts, P) * (stats_bytes + 64)) / 1e3
                model = len(info) * N * (m.n_components_ + 1) * c / P
                km_s = np.nan
                if DaskKMeans is not None and N <= args.kmeans_rows:
                    t1 = time.perf_counter()
                    DaskKMeans(n_clusters=3, random_state=0).fit(X)
                    km_s = time.perf_counter() - t1
                mem_s = np.nan
                if N <= args.memory_rows and P == args.workers[0]:
                    Xm = X.compute()
                    t1 = time.perf_counter()
                    MAPDP(random_state=0).fit(Xm)
                    mem_s = time.perf_counter() - t1
                    del Xm
                row = dict(N=N, P=P, fit=fit_s, sample=info.attrs["sample_seconds"], sweeps=info["seconds"].iloc[-1],
                           model=model, K=m.n_clusters_, nmi=nmi, n=len(info), rounds=list(info["rounds"]),
                           moved=list(info["moved"]), kb=per_round, km=km_s, mem=mem_s)
                results.append(row)
                print(f"{N:11,d} {P:3d} {fit_s:7.1f} {row['sample']:8.1f} {row['sweeps']:8.1f} {model:7.1f} "
                      f"{row['K']:3d} {nmi:5.3f} {row['n']:6d} {','.join(map(str, row['rounds'])):>18} "
                      f"{','.join(map(str, row['moved'])):>22} {per_round:8.1f} {km_s:8.1f} {mem_s:11.1f}", flush=True)
                del X, truth, m
    print("\nsample s: the sample read and fitted in this process (automatic choices, restarts); sweeps s: the start "
          "statistics (a chain over the parts) and every sweep; model s: sweeps x N (K + 1) c / P, the cost model's "
          "scoring term; kB/round: the statistics to each worker and one result back per worker; KMeans s: dask-ml, the true K "
          "(nan: dask-ml not installed, or above --kmeans-rows); in memory s: MAPDP().fit on the same rows in this process (nan: not run)")
    for N in sorted({r["N"] for r in results}):
        base = [r for r in results if r["N"] == N]
        if len(base) > 1:
            first = base[0]
            print(f"{N:,} rows: " + "; ".join(f"P={r['P']}: {first['fit'] / r['fit']:.2f}x the speed of P={first['P']}"
                                              for r in base[1:]))


if __name__ == "__main__":
    main()
