#!/usr/bin/env python
"""DEMP merge cutoffs (issue 24): one ``MAPDP(random_state=0, merge=None)`` fit per read table
(tuning and held-out sets 1-3; never the sealed set 4), then its components grouped at each
cutoff (the greedy merge path is the same for every cutoff; a cutoff says where it stops), scored
against the better peer's NMI (GMM-BIC, DP-GMM) read from the benchmark result files named in
``PEERS`` (the peers are not refitted). Prints, per set, NMI within 0.02 of the better peer and K
within a factor 2 of the truth. A lower cutoff merges more.

    PYTHONPATH=. .venv/bin/python benchmarks/merge_cutoffs.py
"""
import sys, warnings, time
warnings.filterwarnings("ignore")
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'benchmarks'))
sys.path.insert(0, str(ROOT))
import numpy as np, pandas as pd
import defaults as B
from mapdp_core import MAPDP
from mapdp_core.engine.merging import merge_components, posterior_weights
from mapdp_core.evaluation.metrics import clustering_scores
from threadpoolctl import threadpool_limits
threadpool_limits(1)

def peers(path):
    out = {}
    lines = open(path).read().splitlines()
    i = next(k for k, l in enumerate(lines) if l.startswith("NMI, K found"))
    for l in lines[i + 2:]:
        if not l.strip():
            break
        f = l.split()
        name = f[0]
        # columns: table group(1-2 tokens) N x D trueK MAPDPNMI MAPDPK s GMMNMI GMMK s DPNMI DPK s ...
        j = f.index('x')
        nums = f[j + 2:]
        out[name] = dict(true=int(nums[0]), gmm=float(nums[4]), dp=float(nums[7]))
    return out

PEERS = ["benchmarks/results/defaults-2026-11-26.txt", "benchmarks/results/defaults-2026-11-26-heldout3-first-use.txt",
         "benchmarks/results/defaults-2026-11-27-heldout4.txt"]


def per_set_lines(df, keys) -> list[str]:
    """One line per set (and "all") of "key wins/within" for each variant in ``keys``: the tables
    whose NMI (column ``nmi_<key>``) is within 0.02 of ``peer`` and those whose K (``K_<key>``) is
    within a factor 2 of ``true``."""
    lines = []
    for name, g in [("all", df)] + list(df.groupby("group")):
        cells = []
        for k in keys:
            wins = int((g[f"nmi_{k}"] >= g.peer - 0.02).sum())
            within = int(((g[f"K_{k}"] / g.true >= 0.5) & (g[f"K_{k}"] / g.true <= 2)).sum())
            cells.append(f"{k} {wins}/{within}")
        lines.append(f"{name} ({len(g)}): " + " | ".join(cells))
    return lines


def read_peers() -> dict:
    """table name -> true K and the peers' NMI (GMM-BIC, DP-GMM), from the ``PEERS`` result files."""
    out = {}
    for p in PEERS:
        out.update(peers(ROOT / p))
    return out


def scored_tables(P: dict, plos_peer: float | None = None, **unseal):
    """(table, group, true K, peer NMI) for every table read with ``unseal`` (``load_tables``'
    flags) whose peers ``P`` (:func:`read_peers`) holds; with ``plos_peer`` the PLOS scenarios too,
    in group "PLOS", their true K from their labels and ``plos_peer`` as the NMI to be within 0.02 of."""
    for t in B.load_tables(None, [], **unseal):
        if t.name.startswith("5."):
            if plos_peer is not None:
                yield t, "PLOS", len(np.unique(np.asarray(t.y))), plos_peer
        elif t.name in P:
            yield t, t.group, P[t.name]["true"], max(P[t.name]["gmm"], P[t.name]["dp"])


def main():
    P = read_peers()
    notes = []
    tables = B.load_tables(None, notes, unseal_heldout3=True)
    CUTS = [0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2]
    rows = []
    for t in tables:
        if t.name not in P or t.name.startswith("5."):
            continue
        t0 = time.time()
        m = MAPDP(random_state=0, merge=None).fit(t.X.copy())
        comp = np.asarray(m.labels_, dtype=np.int64)
        r = dict(name=t.name, group=t.group, true=P[t.name]['true'], peer=max(P[t.name]['gmm'], P[t.name]['dp']), Kc=m.n_clusters_)
        tau = posterior_weights(m._parsed, comp) if m.n_clusters_ > 2 else None
        for c in CUTS:
            if tau is None:
                lab = comp
            else:
                cl, _ = merge_components(m._parsed, comp, c, tau=tau, min_clusters=2)
                lab = cl[comp]
            sc = clustering_scores(np.asarray(t.y), lab)
            r[f"nmi{c}"] = sc["nmi"]; r[f"K{c}"] = sc["K"]
        rows.append(r)
        print(t.name, t.group, r['true'], 'peer %.3f' % r['peer'], ' '.join(f"{c}:{r[f'K{c}']}/{r[f'nmi{c}']:.3f}" for c in CUTS), '%.1fs' % (time.time() - t0), flush=True)
    df = pd.DataFrame(rows)
    for grp, g in [("all", df)] + list(df.groupby("group")):
        line = [grp, len(g)]
        for c in CUTS:
            win = (g[f"nmi{c}"] >= g.peer - 0.02).sum()
            k2 = ((g[f"K{c}"] / g.true >= 0.5) & (g[f"K{c}"] / g.true <= 2)).sum()
            line.append(f"{c}: nmi {win} K2x {k2}")
        print(*line, sep=" | ")


if __name__ == "__main__":
    main()
