#!/usr/bin/env python
"""Search failure or model failure? (issue 24, diagnosis). For each read table, ``MAPDP(random_state=0)``
is fitted without grouping (``merge=None, min_cluster_size=None``), and the exact -ln p(X, z) of its
fitted model (structure, prior, N0 as chosen) is computed for three partitions of the same rows:
MAP-DP's own, GMM-BIC's (refitted as ``defaults.py`` fits it) and the true classes'. A partition
with a lower joint than MAP-DP's is one the MAP objective prefers but the sweeps did not find (a
search failure); a higher one is a partition the model itself rejects (a model failure). The labels
are used for this diagnosis only; no rule reads them.

    PYTHONPATH=. .venv/bin/python benchmarks/joint_gap.py [--unseal-heldout5] [--unseal-heldout6] [--part I/J]
"""
import sys, warnings, time, argparse
warnings.filterwarnings("ignore")
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'benchmarks'))
sys.path.insert(0, str(ROOT))
import numpy as np
import defaults as B
import merge_cutoffs as MC
from mapdp_core import MAPDP
from mapdp_core.engine.k_evidence import cluster_cost
from mapdp_core.engine.partition_prior import as_partition_prior
from mapdp_core.evaluation.metrics import clustering_scores
from threadpoolctl import threadpool_limits
threadpool_limits(1)


def neg_log_joint(parsed, labels, prior_value) -> float:
    """-ln p(X, z) of the partition ``labels`` under the fitted model: each cluster's exact
    marginal (``cluster_cost``, which leaves out the prior on partitions) plus -ln p(z)."""
    prior = as_partition_prior(prior_value)
    _, z = np.unique(labels, return_inverse=True)
    sizes = np.bincount(z)
    costs = sum(cluster_cost(parsed, np.flatnonzero(z == k), prior_value) for k in range(len(sizes)))
    return float(costs - prior.log_prob(list(sizes)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--unseal-heldout5", action="store_true")
    ap.add_argument("--unseal-heldout6", action="store_true")
    ap.add_argument("--part", default="0/1")
    ap.add_argument("--group", default=None, help='only the tables of this group (e.g. "held-out 6")')
    a = ap.parse_args()
    i, j = map(int, a.part.split("/"))
    P = MC.read_peers()
    if a.unseal_heldout5:
        P.update(MC.peers(ROOT / "benchmarks/results/defaults-2026-11-27-heldout5.txt"))
    if a.unseal_heldout6:
        P.update(MC.peers(ROOT / "benchmarks/results/defaults-2026-11-27-heldout6.txt"))
    for n, (t, group, true, peer) in enumerate(MC.scored_tables(P, unseal_heldout3=True, unseal_heldout4=True,
                                                                 unseal_heldout5=a.unseal_heldout5,
                                                                 unseal_heldout6=a.unseal_heldout6)):
        if n % j != i or group == "tuning" or (a.group and group != a.group):
            continue
        t0 = time.time()
        m = MAPDP(random_state=0, merge=None, min_cluster_size=None).fit(t.X.copy())
        parsed, prior_value = m._parsed, m._fitted_prior()
        own = np.asarray(m.labels_)
        Z = B.numeric_view(t.X.copy())
        gmm = np.asarray(B.run_gmm_bic(Z, B._subsample(len(Z))).labels)
        y = np.unique(np.asarray(t.y).astype(str), return_inverse=True)[1]
        J = {k: neg_log_joint(parsed, lab, prior_value) for k, lab in (("own", own), ("gmm", gmm), ("true", y))}
        s = {k: clustering_scores(np.asarray(t.y), lab) for k, lab in (("own", own), ("gmm", gmm))}
        print(f"{t.name} ({group}) true K {true} peer {peer:.3f} | own K {s['own']['K']} NMI {s['own']['nmi']:.3f}"
              f" | gmm K {s['gmm']['K']} NMI {s['gmm']['nmi']:.3f} joint-own {J['gmm'] - J['own']:+.1f}"
              f" | true joint-own {J['true'] - J['own']:+.1f} | {m.hyperparameters_.get('structure')} N0 {m.N0_:.3g}"
              f" ({time.time() - t0:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
