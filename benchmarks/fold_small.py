#!/usr/bin/env python
"""``MAPDP(min_cluster_size="auto")`` beside ``min_cluster_size=None`` (issue 24): one default
fit per table; the clusters without folding are the same fit's components grouped by DEMP alone
(``engine.merging.group_components`` with no size), so both columns come from one partition.
Tables: the tuning set, the PLOS scenarios and held-out sets 1-4 (peers read from the result
files in ``merge_cutoffs.PEERS``, not refitted); with ``--unseal-heldout5`` set 5 too, whose
peers must then be in a result file named by ``--peers``. Prints K, NMI and ARI per table and,
per set, NMI within 0.02 of the better peer / K within a factor 2 of the truth.

    PYTHONPATH=. .venv/bin/python benchmarks/fold_small.py [--unseal-heldout5 --peers FILE] [--group NAME]
"""
import argparse
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

from merge_cutoffs import peers, per_set_lines, read_peers, scored_tables
from mapdp_core import MAPDP
from mapdp_core.engine.merging import group_components
from mapdp_core.evaluation.metrics import clustering_scores

threadpool_limits(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--unseal-heldout5", action="store_true")
    ap.add_argument("--peers", default=None, help="a defaults.py result file with set 5's peers")
    ap.add_argument("--group", default=None, help='only the tables of this group (e.g. "held-out 5")')
    args = ap.parse_args()
    P = read_peers()
    if args.peers:
        P.update(peers(ROOT / args.peers))
    rows = []
    for t, group, true, peer in scored_tables(P, plos_peer=0.92, unseal_heldout3=True, unseal_heldout4=True,
                                              unseal_heldout5=args.unseal_heldout5):
        if args.group and group != args.group:
            continue
        t0 = time.time()
        y = np.asarray(t.y)
        m = MAPDP(random_state=0).fit(t.X.copy())
        unfolded, _ = group_components(m._parsed, m.component_labels_, m.merge_cutoff_, None, m.partition_prior_)
        r = dict(name=t.name, group=group, true=true, peer=peer)
        for key, labels in (("none", unfolded[m.component_labels_]), ("fold", m.labels_)):
            sc = clustering_scores(y, labels)
            r[f"nmi_{key}"], r[f"K_{key}"], r[f"ari_{key}"] = sc["nmi"], sc["K"], sc["ari"]
        rows.append(r)
        print(f"{t.name} ({r['group']}) true K {r['true']}, peer NMI {r['peer']:.3f}: "
              f"none K {r['K_none']} NMI {r['nmi_none']:.3f} ARI {r['ari_none']:.3f} | "
              f"fold K {r['K_fold']} NMI {r['nmi_fold']:.3f} ARI {r['ari_fold']:.3f} "
              f"(min size {m.min_cluster_size_}, {m.n_components_} components; {time.time() - t0:.1f} s)", flush=True)
    df = pd.DataFrame(rows)
    print("\nper set, 'nmi wins / K within 2x' (PLOS: NMI >= 0.90 / K within 2x):")
    print("\n".join(per_set_lines(df, ["none", "fold"])))
    for key in ("none", "fold"):
        print(f"{key}: K summed {int(df[f'K_{key}'].sum())}; K = 1 on {int((df[f'K_{key}'] == 1).sum())}; "
              f"mean ARI {df[f'ari_{key}'].mean():.3f}; PLOS K = true K on "
              f"{int((df[df.group == 'PLOS'][f'K_{key}'] == df[df.group == 'PLOS'].true).sum())} of "
              f"{int((df.group == 'PLOS').sum())}")


if __name__ == "__main__":
    main()
