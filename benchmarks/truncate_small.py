#!/usr/bin/env python
"""Small clusters folded into large ones (issue 24): one ``MAPDP(random_state=0)`` fit per read
table (tuning and held-out sets 1-4; never the sealed set 5), then the rows of every cluster
smaller than a size threshold given to the large cluster of highest posterior probability
(``predict_proba`` over the clusters that stay), which is the truncation step of a
merge-truncate-merge post-processing. Scored against the better peer's NMI read from the result
files in ``merge_cutoffs.PEERS`` (the peers are not refitted). Prints, per set, NMI within 0.02
of the better peer and K within a factor 2 of the truth, and the components summed.

    PYTHONPATH=. .venv/bin/python benchmarks/truncate_small.py
"""
import math
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
from mapdp_core.engine.coarsening import _crp_pair_change, coarsened_log_marginals, component_statistics
from mapdp_core.engine.model_data import ModelData
from mapdp_core.evaluation.metrics import clustering_scores

threadpool_limits(1)

#: name -> the smallest size a cluster keeps, from the number of rows N
RULES = {
    "none": lambda n: 0,
    "le2": lambda n: 3,
    "lnN": lambda n: math.log(n),
    "1pc": lambda n: max(3.0, 0.01 * n),
    "2pc": lambda n: max(3.0, 0.02 * n),
    "sqrtN": lambda n: math.sqrt(n),
}


#: the variants printed: rows folded one by one, and (W) clusters folded whole
KEYS = list(RULES) + ["W" + k for k in RULES if k != "none"]


def folded(model, X, keep_from: float) -> np.ndarray:
    """labels_ with the rows of clusters under ``keep_from`` rows given to the most probable
    cluster that stays (the largest cluster always stays)."""
    lab = np.asarray(model.labels_)
    sizes = np.bincount(lab, minlength=model.n_clusters_)
    keep = sizes >= keep_from
    keep[np.argmax(sizes)] = True
    if keep.all():
        return lab
    proba = model.predict_proba(X)[:, :model.n_clusters_]
    proba[:, ~keep] = -1.0
    out = lab.copy()
    move = ~keep[lab]
    out[move] = np.argmax(proba[move], axis=1)
    return out


def folded_whole(model, keep_from: float) -> np.ndarray:
    """The prototype of :func:`mapdp_core.engine.merging.fold_small_clusters` on which its size was
    chosen, kept as the record of that choice (the library adds the far-outlier rule and scores a
    union by its rows' exact marginal, a correlated block with gaps by its observed cells):
    labels_ with each cluster under ``keep_from`` rows merged, whole, into the large cluster
    whose union with it has the best exact joint (its rows' marginal likelihood together and the
    CRP's change); never below two clusters (the largest small one then stays)."""
    lab = np.asarray(model.labels_, dtype=np.int64)
    K = model.n_clusters_
    sizes = np.bincount(lab, minlength=K).astype(float)
    keep = sizes >= keep_from
    keep[np.argmax(sizes)] = True
    if keep.sum() < 2 and K >= 2:
        order = np.argsort(-sizes)
        keep[order[1]] = True
    if keep.all():
        return lab
    data = ModelData(model._parsed)
    data.start(lab)
    stats = component_statistics(data, lab, K)
    own = coarsened_log_marginals(stats, 1.0)
    n0 = model.N0_ if np.isfinite(model.N0_) else 1.0
    target = np.arange(K)
    big = np.flatnonzero(keep)
    for s_ in np.flatnonzero(~keep):
        a = np.full(len(big), s_)
        union = coarsened_log_marginals(stats, 1.0, (a, big))
        change = -(union - own[s_] - own[big]) + np.array([_crp_pair_change(sizes[s_], sizes[b], 1.0, n0) for b in big])
        target[s_] = big[int(np.argmin(change))]
    return target[lab]


def main():
    P = read_peers()
    rows = []
    for t, group, true, peer in scored_tables(P, unseal_heldout3=True, unseal_heldout4=True):
        t0 = time.time()
        m = MAPDP(random_state=0, min_cluster_size=None).fit(t.X.copy())  # the clusters before any folding
        r = dict(name=t.name, group=group, true=true, peer=peer)
        for key, rule in RULES.items():
            sc = clustering_scores(np.asarray(t.y), folded(m, t.X, rule(len(t.y))))
            r[f"nmi_{key}"] = sc["nmi"]
            r[f"K_{key}"] = sc["K"]
            if key != "none":
                sc = clustering_scores(np.asarray(t.y), folded_whole(m, rule(len(t.y))))
                r[f"nmi_W{key}"] = sc["nmi"]
                r[f"K_W{key}"] = sc["K"]
        rows.append(r)
        print(t.name, f"({t.group})", "true K", r["true"], "peer NMI %.3f:" % r["peer"],
              " ".join(f"{k} {r[f'K_{k}']}/{r[f'nmi_{k}']:.3f}" for k in KEYS), "(%.1f s)" % (time.time() - t0),
              flush=True)
    df = pd.DataFrame(rows)
    print("\nper set, 'nmi wins / K within 2x' (of the tables in the set):")
    print("\n".join(per_set_lines(df, KEYS)))
    for key in KEYS:
        print(f"{key}: K summed {int(df[f'K_{key}'].sum())}; K = 1 on {int((df[f'K_{key}'] == 1).sum())}")


if __name__ == "__main__":
    main()
