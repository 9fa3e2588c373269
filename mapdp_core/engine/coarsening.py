"""Clusters a person reads, from MAP-DP's components, by the coarsened posterior (Miller & Dunson,
"Robust Bayesian inference via coarsening", JASA 114:1113-1125, 2019).

A Dirichlet-process mixture fitted to groups that are not exactly of the model's shape (skewed,
heavy-tailed, correlated beyond the model) covers each group with several components: with n
rows, a small misfit of every row adds up to a likelihood gain of order n for every extra
component, which outweighs the prior's fixed cost (Miller & Harrison 2014). The coarsened
posterior conditions on the data being close to the model rather than exactly from it; with a
relative-entropy neighbourhood of size ~ 1/alpha it is approximately the power posterior

    p_zeta(theta | x) ~ p(x | theta)^zeta p(theta),    zeta = alpha / (alpha + n)      (their eq 7)

so that the data weigh as about alpha observations, whatever n. For a mixture, Miller & Dunson
(Section 5) raise the complete-data likelihood prod_i pi_{z_i} f(x_i | theta_{z_i}) to zeta. With
conjugate families that is a fractional count: every sufficient statistic, and every cluster's
size in the partition prior, is multiplied by zeta. Here the partition prior is the CRP (PLOS
eq 12) with the sizes zeta n_k:

    -ln p_zeta(X, z) = -K ln N0 - sum_k ln Gamma(zeta n_k) - ln Gamma(N0) + ln Gamma(N0 + zeta N)
                       - sum_k ln m(zeta T_k)

with ln m(zeta T_k) each family's closed-form marginal of the statistics T_k scaled by zeta
(``log_marginal_from`` in each family module; at zeta = 1 the kernels' ``logml``).

MAP-DP's own sweep (zeta = 1) finds the components, which describe the density. The clusters
are then the greedy merges of components that lower the coarsened joint, the pair that lowers it
most first, until no merge lowers it (the agglomerative scheme of Baudry, Raftery, Celeux, Lo &
Gottardo 2010, judged by the coarsened posterior instead of an entropy). Merging only groups
components: the fit, its joint and its predictions are the components'.

The scaling makes the criterion independent of a column's unit as the uncoarsened one is:
rescaling a real column by c changes every cluster's term by zeta (observed cells) ln c, and the
observed cells of a column sum to the same number in every grouping of the same rows.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.special import gammaln

from mapdp_core.core.spec import ParsedData, refuse_shared_statistics
from mapdp_core.engine.model_data import ModelData
from mapdp_core.families import KERNEL_SLOTS

__all__ = ["coarsened_log_marginals", "coarsened_merge", "coarsening_power",
           "component_statistics"]


def coarsening_power(n_rows: int, alpha: float) -> float:
    """zeta = alpha / (alpha + n) (Miller & Dunson 2019, Section 3)."""
    return float(alpha) / (float(alpha) + float(n_rows))


def component_statistics(model: ModelData, labels: np.ndarray, K: int) -> list:
    """Per kernel slot that has columns: (module, its family arrays, the additive statistics of
    each of the K clusters of ``labels``), after ``model.start(labels)`` (which leaves the
    completed values of rows with gaps that a Normal-Wishart block adds)."""
    out = []
    for module, fam in zip(KERNEL_SLOTS, model.fams):
        if fam[0].shape[1]:
            out.append((module, fam, module.additive_statistics(fam, labels, K)))
    return out


def coarsened_log_marginals(stats: list, zeta: float, take=None) -> np.ndarray:
    """sum over slots of ln m(zeta T_k) for the clusters of ``stats`` (component_statistics), or
    for the groups ``take`` (an index array into the clusters, or a pair of index arrays whose
    statistics are added: the union of two clusters)."""
    total = None
    for module, fam, parts in stats:
        if take is None:
            chosen = parts
        elif isinstance(take, tuple):
            chosen = tuple(p[take[0]] + p[take[1]] for p in parts)
        else:
            chosen = tuple(p[take] for p in parts)
        lm = module.log_marginal_from(fam, tuple(zeta * p for p in chosen))
        total = lm if total is None else total + lm
    return total


def _crp_pair_change(n_a, n_b, zeta: float, n0: float):
    """Change of the coarsened -ln CRP when clusters of sizes n_a and n_b merge."""
    return math.log(n0) + gammaln(zeta * n_a) + gammaln(zeta * n_b) - gammaln(zeta * (n_a + n_b))


def coarsened_merge(parsed: ParsedData, labels: np.ndarray, n0: float, zeta: float,
                    min_clusters: int = 1) -> tuple[np.ndarray, pd.DataFrame]:
    """Group the components of ``labels`` (0..K-1) into clusters by greedy merges that lower the
    coarsened joint at power ``zeta`` (module docstring), never below ``min_clusters``.

    Returns
    -------
    cluster_of : ndarray of int, shape (K,)
        The cluster of each component, numbered 0.. by each cluster's first component.
    merges : DataFrame
        One row per merge, in order: ``step``, ``merged`` (the two groups, as "0+3" and "1"),
        ``nats`` (how much the merge lowered the coarsened -ln joint) and ``clusters`` left.
    """
    refuse_shared_statistics(parsed, "The coarsened merge", "scores each cluster from additive statistics of its own")
    labels = np.asarray(labels, dtype=np.int64)
    K = int(labels.max()) + 1
    model = ModelData(parsed)
    model.start(labels)
    stats = component_statistics(model, labels, K)
    # every group's statistics stay in these arrays: a merge adds row b into row a
    stats = [(module, fam, tuple(np.array(p, dtype=float) for p in parts)) for module, fam, parts in stats]
    sizes = np.bincount(labels, minlength=K).astype(float)
    own = coarsened_log_marginals(stats, zeta)
    groups = {k: [k] for k in range(K)}
    # change[a, b] (a < b): how a merge of groups a and b changes the coarsened -ln joint; only
    # the pairs with the merged group are scored again after a merge
    change = np.full((K, K), np.inf)
    union = np.zeros((K, K))

    def score(a, b):
        union[a, b] = coarsened_log_marginals(stats, zeta, (a, b))
        change[a, b] = -(union[a, b] - own[a] - own[b]) + _crp_pair_change(sizes[a], sizes[b], zeta, n0)

    score(*np.triu_indices(K, 1))
    rows = []
    while len(groups) > max(1, int(min_clusters)):
        i, j = np.unravel_index(int(np.argmin(change)), change.shape)
        if not change[i, j] < 0.0:
            break
        rows.append({"step": len(rows) + 1, "merged": "+".join(map(str, groups[i])) + " with "
                     + "+".join(map(str, groups[j])), "nats": float(-change[i, j]), "clusters": len(groups) - 1})
        for _, _, parts in stats:
            for p in parts:
                p[i] += p[j]
        sizes[i] += sizes[j]
        own[i] = union[i, j]
        groups[i] = sorted(groups[i] + groups.pop(j))
        change[j, :] = change[:, j] = change[i, :] = change[:, i] = np.inf
        others = np.array([g for g in groups if g != i], dtype=np.int64)
        if len(others):
            score(np.minimum(others, i), np.maximum(others, i))
    cluster_of = np.empty(K, dtype=np.int64)
    for c, members in enumerate(sorted(groups.values(), key=min)):
        cluster_of[members] = c
    return cluster_of, pd.DataFrame(rows, columns=["step", "merged", "nats", "clusters"])
