#!/usr/bin/env python
"""Speed of the MAP-DP kernels (``mapdp_core.kernels.dp_mixture``) on a few fixed data sets, optionally
old code against new code side by side.

Run from the repository root::

    python benchmarks/bench_kernels.py                       # this tree
    python benchmarks/bench_kernels.py --root /tmp/old --root .   # two trees, interleaved

Each measurement is the CPU time of this process (``time.process_time``; the fit is single
threaded) for ``MAPDP(N0=3, prior=None, n_init=1, shuffle=False).fit(X)``: fixed N0, the
empirical-Bayes prior and the rows in input order, so that every tree does the same sweeps
(their number is printed; different counts mean the trees' engines differ) after a warm-up fit (so numba's
compilation or cache loading is not timed). CPU time, not wall time, because the machines
this runs on are shared: waiting for a core is not the kernels' cost. Every tree runs in its own fresh process, and the
processes alternate (old, new, old, new, ...) so that a busy machine slows both alike; the
table reports, per data set and tree, the median over all rounds and repeats, and with two
trees the ratio second / first (below 1: the second is faster).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def _datasets():
    """name -> (X, likelihood). Fixed seeds: the same arrays in every process and tree."""
    import numpy as np

    from mapdp_core.synthetic import plos_scenario  # the public path, in old trees and new

    out = {}
    X, _ = plos_scenario("5.1", n=40_000, seed=0)
    out["nw 2-D PLOS 5.1, N=40000"] = (X, "normal_wishart")

    rng = np.random.default_rng(1)
    n = 20_000
    z = rng.integers(0, 3, n)  # three clusters that shift every column
    X = np.column_stack([
        rng.normal(z, 1.0), rng.normal(-z, 1.0),            # normal_wishart block
        rng.normal(2 * z, 1.0),                             # normal_gamma
        rng.normal(z, 1.0),                                 # spherical_gaussian
        rng.binomial(1, 0.2 + 0.3 * z),                     # bernoulli
        rng.binomial(4, 0.2 + 0.25 * z),                    # binomial (0..4)
        (z + rng.integers(0, 2, n)) % 3,                    # categorical
        rng.poisson(1.0 + 2 * z),                           # poisson
        rng.exponential(1.0 + z),                           # exponential
        rng.geometric(0.6 - 0.15 * z) - 1,                  # geometric
        rng.normal(z, 1.0),                                 # gaussian_known_cov
    ]).astype(float)
    like = {(0, 1): "normal_wishart", 2: "normal_gamma", 3: "spherical_gaussian", 4: "bernoulli",
            5: "binomial", 6: "categorical", 7: "poisson", 8: "exponential", 9: "geometric",
            10: "gaussian_known_cov"}
    out["every family, N=20000"] = (X, like)

    n = 40_000
    z = rng.integers(0, 3, n)
    X = np.column_stack([
        rng.poisson(1.0 + 2 * z), rng.poisson(3.0 - z), rng.exponential(1.0 + z),
        rng.geometric(0.6 - 0.15 * z) - 1, rng.binomial(1, 0.2 + 0.3 * z),
    ]).astype(float)
    out["count families, N=40000"] = (X, ["poisson", "poisson", "exponential", "geometric", "bernoulli"])
    return out


def child(repeats: int) -> None:
    """Time every data set ``repeats`` times in this process; print JSON {name: [seconds]}."""
    from mapdp_core import MAPDP

    res = {}
    for name, (X, like) in _datasets().items():
        MAPDP(N0=3, likelihood=like, prior=None, n_init=1, random_state=0, max_iter=2).fit(X[:500])  # compile / load cache
        times = []
        for _ in range(repeats):
            t0 = time.process_time()
            m = MAPDP(N0=3, likelihood=like, prior=None, n_init=1, shuffle=False).fit(X)
            times.append(time.process_time() - t0)
        res[name] = times
        res[name + "#sweeps"] = [m.n_iter_]
    print(json.dumps(res))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", action="append", help="repository root to benchmark (repeatable)")
    ap.add_argument("--rounds", type=int, default=3, help="processes per tree, alternating")
    ap.add_argument("--repeats", type=int, default=3, help="fits per data set and process")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.repeats)
        return
    roots = [str(Path(r).resolve()) for r in (args.root or [HERE.parents[1]])]
    samples = {r: {} for r in roots}
    for _ in range(args.rounds):
        for r in roots:
            env = dict(os.environ, PYTHONPATH=r)
            out = subprocess.run([sys.executable, str(HERE), "--child", "--repeats", str(args.repeats)],
                                 cwd=r, env=env, capture_output=True, text=True, check=True)
            for name, times in json.loads(out.stdout.strip().splitlines()[-1]).items():
                samples[r].setdefault(name, []).extend(times)
    names = [n for n in samples[roots[0]] if not n.endswith("#sweeps")]
    head = f"{'data set':<28}" + "".join(f"{Path(r).name or r:>14}" for r in roots)
    head += f"{'ratio':>8}" if len(roots) == 2 else ""
    print(f"median CPU seconds of MAPDP(N0=3).fit, {args.rounds} rounds x {args.repeats} repeats per tree")
    print(head)
    for name in names:
        meds = [statistics.median(samples[r][name]) for r in roots]
        line = f"{name:<28}" + "".join(f"{m:>14.3f}" for m in meds)
        if len(roots) == 2:
            line += f"{meds[1] / meds[0]:>8.3f}"
        sweeps = [samples[r][name + "#sweeps"][0] for r in roots]
        print(line + f"   sweeps: {', '.join(str(n) for n in sweeps)}")


if __name__ == "__main__":
    main()
