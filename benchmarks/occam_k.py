#!/usr/bin/env python
"""The fewest clusters the evidence cannot tell from the fit (issue 24): one
``MAPDP(random_state=0, merge=None)`` fit per read table (tuning and held-out sets 1-4; never
the sealed set 5), its greedy merge path by the exact joint (``MAPDP.k_evidence``), and the
partition of fewest clusters on that path whose -ln p(X, z) lies within ``c`` nats of the fit's
(exp(-c) its posterior odds against the fit). Also each table's PLOS-style reading: K of the
default fit (DEMP merges). Scored against the better peer's NMI read from the result files in
``merge_cutoffs.PEERS`` (not refitted); PLOS scenarios scored against their true K.

    PYTHONPATH=. .venv/bin/python benchmarks/occam_k.py
"""
import sys
import time
import warnings

warnings.filterwarnings("ignore")
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from merge_cutoffs import per_set_lines, read_peers, scored_tables
from mapdp_core import MAPDP
from mapdp_core.evaluation.metrics import clustering_scores

threadpool_limits(1)
NATS = [1.0, 3.0, 5.0, 10.0, 20.0]


def occam(table: pd.DataFrame, c: float) -> np.ndarray:
    """The partition of fewest clusters on the merge path within ``c`` nats of the fit."""
    inside = table[(table["K"] <= int(table.loc[table["fitted"], "K"].iloc[0])) & (table["delta"] <= c)]
    return table.attrs["partitions"][int(inside["K"].min())]


def main():
    P = read_peers()
    keys = ["demp", "none"] + [f"c{c:g}" for c in NATS]
    rows = []
    for t, group, true, peer in scored_tables(P, plos_peer=0.9, unseal_heldout3=True, unseal_heldout4=True):
        t0 = time.time()
        y = np.asarray(t.y)
        m = MAPDP(random_state=0).fit(t.X.copy())
        r = dict(name=t.name, group=group, true=true, peer=peer)
        labels = {"demp": m.labels_, "none": m.component_labels_}
        table = m.k_evidence(more=0)
        for c in NATS:
            labels[f"c{c:g}"] = occam(table, c)
        for k in keys:
            sc = clustering_scores(y, labels[k])
            r[f"nmi_{k}"], r[f"K_{k}"] = sc["nmi"], sc["K"]
        rows.append(r)
        print(t.name, f"({r['group']})", "true K", r["true"], "peer NMI %.3f:" % r["peer"],
              " ".join(f"{k} {r[f'K_{k}']}/{r[f'nmi_{k}']:.3f}" for k in keys), "(%.1f s)" % (time.time() - t0),
              flush=True)
    df = pd.DataFrame(rows)
    print("\nper set, 'nmi wins / K within 2x' (of the tables in the set; PLOS: NMI >= 0.88):")
    print("\n".join(per_set_lines(df, keys)))
    for k in keys:
        print(f"{k}: K summed {int(df[f'K_{k}'].sum())}; K = 1 on {int((df[f'K_{k}'] == 1).sum())}")


if __name__ == "__main__":
    main()
