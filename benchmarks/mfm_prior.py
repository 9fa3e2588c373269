#!/usr/bin/env python
"""The mixture-of-finite-mixtures prior on partitions beside the Dirichlet process (issue 24).

One call per read table (tuning and held-out sets 1-4; never a sealed set), everything else at
its default: ``MAPDP(random_state=0)`` (the Dirichlet process, N0 searched) and
``MAPDP(random_state=0, partition_prior=MixtureOfFiniteMixtures(...))`` for each prior on K in
``PRIORS`` (the likelihood's prior still searched, by the MFM's own joint; components grouped by
DEMP as by default). Miller & Harrison (JASA 2018) argue that the MFM's posterior on K, unlike
the Dirichlet process's, does not grow with N: this measures what that does to K and NMI on
real tables, where components are rarely of the model's shape.

Scored as ``merge_coarsened.py`` scores (the peers' NMI read from ``merge_cutoffs.py``'s result
files, not refitted): per set, the tables whose NMI is within 0.02 of the better peer's and those
whose K is within a factor 2 of the truth, printed as "nmi wins / K within 2x"; then the
components (before grouping) summed over the tables.

    PYTHONPATH=. .venv/bin/python benchmarks/mfm_prior.py [--tables iris,wine]
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import defaults as B  # noqa: E402
from merge_cutoffs import per_set_lines, read_peers  # noqa: E402
from mapdp_core import MAPDP  # noqa: E402
from mapdp_core.engine.partition_prior import MixtureOfFiniteMixtures  # noqa: E402
from mapdp_core.evaluation.metrics import clustering_scores  # noqa: E402

#: the MFM priors compared: the class's default (K geometric with mean 10, gamma 1), a prior
#: that puts most of its mass on few components (K - 1 ~ Poisson(1)), and gamma 1/2
PRIORS = {
    "mfm-geo10": MixtureOfFiniteMixtures(),
    "mfm-poi2": MixtureOfFiniteMixtures(k_prior="poisson", k_mean=2.0),
    "mfm-geo10-g0.5": MixtureOfFiniteMixtures(gamma=0.5),
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", help="comma-separated table names")
    args = ap.parse_args(argv)
    threadpool_limits(1)
    peers = read_peers()
    wanted = None if not args.tables else set(args.tables.split(","))
    tables = B.load_tables(wanted, [], unseal_heldout3=True, unseal_heldout4=True)  # both read already
    rows = []
    for t in tables:
        if t.name not in peers:
            continue
        row = dict(table=t.name, group=t.group, true=peers[t.name]["true"],
                   peer=max(peers[t.name]["gmm"], peers[t.name]["dp"]))
        cells = []
        for key, prior in {"dp": "dp", **PRIORS}.items():
            t0 = time.time()
            fit = MAPDP(random_state=0, partition_prior=prior).fit(t.X.copy())
            seconds = time.time() - t0
            scores = clustering_scores(np.asarray(t.y), fit.labels_)
            row[f"nmi_{key}"], row[f"K_{key}"], row[f"comp_{key}"] = scores["nmi"], scores["K"], fit.n_components_
            cells.append(f"{key} {fit.n_components_}/{scores['K']}/{scores['nmi']:.3f} ({seconds:.1f} s)")
        rows.append(row)
        print(f"{t.name} ({t.group}) true K {row['true']}, peer NMI {row['peer']:.3f}: " + " ".join(cells),
              flush=True)
    df = pd.DataFrame(rows)
    keys = [c[4:] for c in df.columns if c.startswith("nmi_")]
    print("\n(each cell: components/clusters/NMI)")
    print("per set, 'nmi wins / K within 2x' (of the tables in the set):")
    print("\n".join(per_set_lines(df, keys)))
    print("components summed over the tables: " + ", ".join(f"{k} {int(df[f'comp_{k}'].sum())}" for k in keys))


if __name__ == "__main__":
    main()
