"""One row's decision in a MAP-DP sweep, in numbers: why the row joins the cluster it joins.

PLOS Algorithm 3 visits each row i in turn, takes it out of its cluster, and gives it to the
option with the least cost

    d_{i,k}   = -ln f(x_i | X_{-i,k}, theta0) - ln N_{k,-i}      (an existing cluster k; eq 13)
    d_{i,new} = -ln f(x_i | theta0)            - ln N0            (a new cluster)

where f(x_i | X_{-i,k}, theta0) is the posterior predictive of cluster k without row i and
N_{k,-i} its size without row i. The first term says how well the row fits the cluster, the
second how large the cluster is: N0 plays the size of the new cluster (the teaching point of
the concentration). Under a mixture of finite mixtures (Miller & Harrison 2018, their restaurant process) the
size term is -ln(N_{k,-i} + gamma), and a new cluster's is -ln(gamma V_N(t+1) / V_N(t)) with t the
clusters of the other rows (:mod:`mapdp_core.engine.partition_prior`). At a converged partition every row's least cost is its own cluster (the
partition is a fixed point of the sweep), which is how this module is tested against the
kernel. The predictive densities here include the data-only constants of the row (the same in
every option, so they change no choice).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from mapdp_core.core.spec import ParsedData
from mapdp_core.engine.model_data import ModelData
from mapdp_core.engine.partition_prior import DirichletProcess, as_partition_prior

__all__ = ["row_costs"]


def row_costs(parsed: ParsedData, labels: np.ndarray, row: int, N0) -> pd.DataFrame:
    """The costs of PLOS Algorithm 3 for ``row`` of the partition ``labels`` (0..K-1) at ``N0``
    (the concentration, or any :class:`~mapdp_core.engine.partition_prior.PartitionPrior`):
    one line per cluster the row could join (its clusters numbered as in ``labels``) and one for
    a new cluster, with ``size`` (without the row), ``fit`` (-ln of the predictive density),
    ``size_term`` (-ln size, or -ln N0 for a new cluster),
    ``cost`` = fit + size_term, and ``chosen`` (the least cost: where the sweep puts the row).
    A cluster that holds only this row is not an option (without the row it is empty); its
    place is the new cluster's."""
    labels = np.asarray(labels, dtype=np.int64)
    N = len(labels)
    if not 0 <= row < N:
        raise ValueError(f"row={row}: the partition has rows 0 to {N - 1}.")
    if N < 2:
        raise ValueError("a table of one row has no decision to show: the row is its own cluster, and there is no "
                         "other row to compare it with.")
    others = np.flatnonzero(np.arange(N) != row)
    rest = ParsedData(np.ascontiguousarray(parsed.X[others]), parsed.names, parsed.blocks, parsed.categories)
    kept = np.unique(labels[others])  # the clusters left without the row, in label order
    model = ModelData(rest)
    K = model.start(np.searchsorted(kept, labels[others]).astype(np.int64))
    fit, fit_new = model.score_rows(parsed.X[row:row + 1], K)[:2]
    sizes = model.cnt[:K].astype(np.int64)
    prior = as_partition_prior(N0)
    if isinstance(prior, DirichletProcess):
        size_terms = list(-np.log(sizes)) + [-math.log(prior.N0)]
    else:
        size_terms = list(-np.log(sizes + prior.gamma)) + [-float(prior.new_cluster_log_weights(N, K + 1)[K])]
    lines = pd.DataFrame({"option": [f"cluster {int(k)}" for k in kept] + ["new cluster"],
                          "cluster": list(kept.astype(int)) + [-1],
                          "size": list(sizes) + [0],
                          "fit": list(fit[0]) + [float(fit_new[0])],
                          "size_term": size_terms})
    lines["cost"] = lines["fit"] + lines["size_term"]
    lines["chosen"] = False
    lines.loc[int(np.argmin(lines["cost"].to_numpy())), "chosen"] = True
    return lines
