#!/usr/bin/env python
"""Components grouped by the coarsened posterior (issue 24; ``mapdp_core.engine.coarsening``)
beside DEMP and no grouping: one ``MAPDP(random_state=0, merge=None)`` fit per read table
(tuning and held-out sets 1-3; never the sealed set 4), then its components grouped

* not at all ("none");
* by DEMP at the default cutoff ("demp", ``MERGE_CUTOFF``: today's default);
* by greedy merges that lower the coarsened joint at zeta = alpha / (alpha + N) ("cA", for each
  alpha A), never below two clusters, as DEMP;
* by DEMP, then the coarsened merges ("dcA").

Scored as ``merge_cutoffs.py`` scores (the peers' NMI read from its result files, not refitted):
per set, the tables whose NMI is within 0.02 of the better peer's and those whose K is within a
factor 2 of the truth, printed as "nmi wins / K within 2x".

    PYTHONPATH=. .venv/bin/python benchmarks/merge_coarsened.py
"""
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
from mapdp_core.engine.coarsening import coarsened_merge, coarsening_power  # noqa: E402
from mapdp_core.engine.merging import MERGE_CUTOFF, merge_components  # noqa: E402
from mapdp_core.evaluation.metrics import clustering_scores  # noqa: E402

ALPHAS = (100, 300, 1000, 3000)


def grouped(parsed, labels, n0, zeta):
    """labels after the coarsened merges (at least two clusters), or as they are with two or fewer."""
    if labels.max() + 1 <= 2:
        return labels
    cluster_of, _ = coarsened_merge(parsed, labels, n0, zeta, min_clusters=2)
    return cluster_of[labels]


def main():
    threadpool_limits(1)
    peers = read_peers()
    tables = B.load_tables(None, [], unseal_heldout3=True)
    rows = []
    for t in tables:
        if t.name not in peers:
            continue
        t0 = time.time()
        fit = MAPDP(random_state=0, merge=None).fit(t.X.copy())
        comp = np.asarray(fit.labels_, dtype=np.int64)
        parsed, N = fit._parsed, len(comp)
        variants = {"none": comp}
        if comp.max() + 1 > 2:
            cluster_of, _ = merge_components(parsed, comp, MERGE_CUTOFF, min_clusters=2)
            variants["demp"] = cluster_of[comp]
        else:
            variants["demp"] = comp
        t1 = time.time()
        for alpha in ALPHAS:
            zeta = coarsening_power(N, alpha)
            variants[f"c{alpha}"] = grouped(parsed, comp, fit.N0_, zeta)
            variants[f"dc{alpha}"] = grouped(parsed, variants["demp"], fit.N0_, zeta)
        merge_s = (time.time() - t1) / (2 * len(ALPHAS))
        row = dict(table=t.name, group=t.group, true=peers[t.name]["true"],
                   peer=max(peers[t.name]["gmm"], peers[t.name]["dp"]))
        for key, labels in variants.items():
            scores = clustering_scores(np.asarray(t.y), labels)
            row[f"nmi_{key}"], row[f"K_{key}"] = scores["nmi"], scores["K"]
        rows.append(row)
        print(f"{t.name} ({t.group}) true K {row['true']}, peer NMI {row['peer']:.3f}: "
              + " ".join(f"{k} {row[f'K_{k}']}/{row[f'nmi_{k}']:.3f}" for k in variants)
              + f"  (fit {t1 - t0:.1f} s, one grouping {merge_s:.2f} s)", flush=True)
    df = pd.DataFrame(rows)
    keys = [c[4:] for c in df.columns if c.startswith("nmi_")]
    print("\nper set, 'nmi wins / K within 2x' (of the tables in the set):")
    print("\n".join(per_set_lines(df, keys)))


if __name__ == "__main__":
    main()
