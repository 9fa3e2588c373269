"""How sure is K? The exact joint of the best partitions found at neighbouring numbers of clusters.

MAP-DP returns one partition z, the (local) maximum of p(z | X, N0, theta0). Its K is as
believable as the partitions with other K are improbable beside it. For a fitted partition
this module finds, with the exact collapsed joint (PLOS eqs 11-12, ``ModelData.neg_log_joint``)

* fewer clusters: the greedy merge path, at each step the merge of the two clusters that
  raises -ln p(X, z) least, down to one cluster (the agglomerative step of Baudry, Raftery,
  Celeux, Lo & Gottardo 2010 and Hennig 2010, scored here by the model's own joint instead
  of an entropy or a classification criterion);
* more clusters: the best split of one cluster in two (2-means on the standardised columns,
  then the exact joint), twice in a row.

Each row is then a partition with its K and -ln p(X, z); ``delta`` = its -ln p minus the
fitted one's, in nats, so exp(-delta) is the posterior odds of that partition against the
fitted one (Bayes' rule: the evidence p(X) cancels). A large delta at K - 1 and K + 1 says
that no nearby partition with another K comes close; a small one, that K is uncertain.
These are odds between two partitions, not between two values of K (each K sums over many
partitions); the scale of Kass & Raftery (1995, JASA 90:773) for log odds, ln 3 ~ 1.1
("positive"), 3 ("strong") and 5 ("very strong"), reads them in words
(:data:`ODDS_WORDS`).

Cost: one pass over the rows of each cluster per merge or split tried, O(K N) in all for the
first merge step (every pair), O(N) per later step.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from mapdp_core.core.spec import ParsedData, shares_statistics
from mapdp_core.engine.lloyd import kmeans_labels, standardized_view
from mapdp_core.engine.model_data import ModelData
from mapdp_core.engine.partition_prior import as_partition_prior

__all__ = ["ODDS_WORDS", "OUTLIER_ROWS", "PartitionCost", "cluster_cost", "k_evidence", "k_sentence", "merge_rise",
           "odds_words", "outlier_sentence"]

#: (least log odds in nats, words) in increasing order: Kass & Raftery (1995), Section 3.2,
#: their 2 ln B thresholds 2, 6 and 10 halved.
ODDS_WORDS = ((0.0, "about as probable"), (1.0, "somewhat less probable"), (3.0, "much less probable"),
              (5.0, "far less probable"))


def odds_words(delta: float) -> str:
    """How much less probable a partition ``delta`` nats above the fitted one is, in words."""
    words = ODDS_WORDS[0][1]
    for bound, said in ODDS_WORDS:
        if delta >= bound:
            words = said
    return words


def _subset(parsed: ParsedData, rows: np.ndarray) -> ParsedData:
    return ParsedData(X=np.ascontiguousarray(parsed.X[rows]), names=parsed.names, blocks=parsed.blocks,
                      categories=parsed.categories)


def cluster_cost(parsed: ParsedData, rows: np.ndarray, n0) -> float:
    """-ln p(X_S | theta0) plus the data-only constants of the rows S, as one cluster: the
    part of -ln p(X, z) that a cluster contributes besides the prior on partitions."""
    model = ModelData(_subset(parsed, rows))
    model.start(np.zeros(len(rows), dtype=np.int64))
    prior = as_partition_prior(n0)
    return model.neg_log_joint(1, prior) + prior.log_prob([len(rows)])


class PartitionCost:
    """-ln p(X, z | prior, theta0) of partitions of all the rows of ``parsed``, each given as a list
    of row groups, and the rise of a merge of two of its groups.

    Where p(X | z) is a product over clusters, a group's cost (:func:`cluster_cost`) is computed
    once and reused, and a partition's is the prior's term plus its groups'. With a family whose
    clusters share statistics (the tied covariance) a group has no cost of its own: every partition
    is scored whole (one ``ModelData`` reloaded per partition, O(N D^2)), and a merge's rise is the
    difference of two such joints."""

    def __init__(self, parsed: ParsedData, n0):
        self.parsed, self.n0, self.N = parsed, n0, parsed.X.shape[0]
        self.factor = as_partition_prior(n0).log_cluster_factor
        self.shared = shares_statistics(parsed)
        self._model = ModelData(parsed) if self.shared else None
        self._group: dict[bytes, float] = {}
        self._whole: dict[bytes, float] = {}

    def group(self, rows: np.ndarray) -> float:
        """:func:`cluster_cost` of the rows (sorted), computed once."""
        key = rows.tobytes()
        if key not in self._group:
            self._group[key] = cluster_cost(self.parsed, rows, self.n0)
        return self._group[key]

    def total(self, groups: list) -> float:
        """-ln p(X, z) of the partition whose clusters are ``groups`` (arrays of rows, sorted)."""
        if not self.shared:
            return _crp([len(g) for g in groups], self.n0, self.N) + sum(self.group(g) for g in groups)
        labels = np.empty(self.N, dtype=np.int64)
        for k, g in enumerate(groups):
            labels[g] = k
        key = labels.tobytes()  # a merge's rise reads the partition it starts from once per pair
        if key not in self._whole:
            self._whole[key] = self._model.neg_log_joint(self._model.start(labels), self.n0)
        return self._whole[key]

    def data_cost(self, groups: list) -> float:
        """The data's part of :meth:`total`, -ln p(X | z) plus the data-only constants."""
        return self.total(groups) - _crp([len(g) for g in groups], self.n0, self.N)

    def rise(self, groups: list, a: int, b: int) -> float:
        """:func:`merge_rise` of merging ``groups[a]`` and ``groups[b]`` within the partition ``groups``."""
        union = np.sort(np.concatenate([groups[a], groups[b]]))
        n_a, n_b = len(groups[a]), len(groups[b])
        if not self.shared:
            return merge_rise(self.group(union), self.group(groups[a]), self.group(groups[b]), n_a, n_b, self.factor)
        merged = [g for k, g in enumerate(groups) if k not in (a, b)] + [union]
        return merge_rise(self.data_cost(merged) - self.data_cost(groups), 0.0, 0.0, n_a, n_b, self.factor)


def merge_rise(union_cost: float, cost_a: float, cost_b: float, n_a: int, n_b: int, factor) -> float:
    """How much -ln p(X, z) rises when clusters a and b (costs :func:`cluster_cost`, sizes n_a
    and n_b) become one of cost ``union_cost``: the data's part, and the prior on partitions'
    cluster factors (``factor``: the prior's ``log_cluster_factor``, Gamma(n) for the CRP, eq 12);
    what the prior's number of clusters adds is left out, being the same for every pair."""
    return union_cost - cost_a - cost_b - factor(n_a + n_b) + factor(n_a) + factor(n_b)


def _crp(sizes, n0, N: int) -> float:
    """-ln p(z) of a partition with these cluster sizes: the CRP's (PLOS eq 12) for a number
    ``n0``, else that prior on partitions'."""
    return -as_partition_prior(n0).log_prob(np.asarray(sizes, dtype=float), N)


def _split(parsed: ParsedData, rows: np.ndarray, seed: int):
    """The two halves 2-means gives the rows of one cluster (on their standardised columns),
    or None when they cannot be split."""
    if len(rows) < 4:
        return None
    Z = standardized_view(parsed, rows)
    if Z.shape[1] == 0 or not np.any(Z):
        return None
    halves = kmeans_labels(Z, 2, seed)
    if halves.min() == halves.max():
        return None
    return rows[halves == 0], rows[halves == 1]


def k_evidence(parsed: ParsedData, labels: np.ndarray, n0, *, more: int = 2, seed: int = 0) -> pd.DataFrame:
    """The fitted partition ``labels`` (0..K-1) of ``parsed`` beside the best partitions found at
    every smaller K (greedy merges) and at ``more`` larger K (greedy splits), by the exact joint.

    Returns
    -------
    DataFrame
        One row per K, sorted: ``K``, ``neg_log_joint`` (-ln p(X, z | N0, theta0) of that
        partition), ``delta`` (that minus the fitted partition's, nats; 0 for the fitted one;
        negative if a merge or split found a better partition than the fit), ``how`` (in words)
        and ``fitted`` (True for the fitted partition). ``attrs["partitions"]`` maps K to the
        labels of each partition.
    """
    labels = np.asarray(labels, dtype=np.int64)
    N = len(labels)
    K = int(labels.max()) + 1
    groups = [np.flatnonzero(labels == k) for k in range(K)]
    cost = PartitionCost(parsed, n0)
    fitted = cost.total(groups)
    rows = [{"K": K, "neg_log_joint": fitted, "how": "the fitted partition", "fitted": True}]
    partitions = {K: labels.copy()}

    # fewer clusters: merge the pair that costs least, again and again (what the prior's number
    # of clusters adds is the same for every pair)
    ids = list(range(K))
    members = dict(enumerate(groups))
    names = {k: str(k) for k in range(K)}
    next_id = K
    while len(ids) > 1:
        best = None
        current = [members[i] for i in ids]
        for a_pos, a in enumerate(ids):
            for b_pos in range(a_pos + 1, len(ids)):
                gain = cost.rise(current, a_pos, b_pos)
                if best is None or gain < best[0]:
                    best = (gain, a, ids[b_pos])
        _, a, b = best
        members[next_id] = np.sort(np.concatenate([members.pop(a), members.pop(b)]))
        names[next_id] = f"{names[a]}+{names[b]}"
        ids = [i for i in ids if i not in (a, b)] + [next_id]
        next_id += 1
        merged = np.empty(N, dtype=np.int64)
        for new, i in enumerate(ids):
            merged[members[i]] = new
        partitions[len(ids)] = merged
        rows.append({"K": len(ids), "neg_log_joint": cost.total([members[i] for i in ids]),
                     "how": "clusters " + ", ".join(f"({names[i]})" if "+" in names[i] else names[i] for i in ids),
                     "fitted": False})

    # more clusters: split the cluster whose best split in two costs least, ``more`` times
    current = [(str(k), g) for k, g in enumerate(groups)]
    for step in range(int(more)):
        best = None
        for pos, (name, rows_k) in enumerate(current):
            halves = _split(parsed, rows_k, seed + step)
            if halves is None:
                continue
            total = cost.total([g for _, g in current if g is not rows_k] + [halves[0], halves[1]])
            if best is None or total < best[0]:
                best = (total, pos, halves)
        if best is None:
            break
        total, pos, halves = best
        name = current[pos][0]
        current = current[:pos] + current[pos + 1:] + [(f"{name}a", halves[0]), (f"{name}b", halves[1])]
        split = np.empty(N, dtype=np.int64)
        for new, (_, g) in enumerate(current):
            split[g] = new
        partitions[len(current)] = split
        rows.append({"K": len(current), "neg_log_joint": total,
                     "how": f"cluster {name} split in two" if step == 0 else f"then cluster {name} split in two",
                     "fitted": False})

    table = pd.DataFrame(rows).sort_values("K", ignore_index=True)
    table.insert(2, "delta", table["neg_log_joint"] - fitted)
    table = table[["K", "neg_log_joint", "delta", "how", "fitted"]]
    table.attrs["partitions"] = partitions
    return table


def _nats(delta: float) -> str:
    return f"{delta:,.0f}" if abs(delta) >= 100 else f"{delta:.3g}"


def k_sentence(table: pd.DataFrame) -> str:
    """:func:`k_evidence`'s table in one or two sentences: the fitted K, how much less probable
    the best partitions found with one cluster fewer and one more are (nats and words), and any
    other K within 3 nats; a partition better than the fit is said as such (the fit stopped in
    a local optimum). A table of ``MAPDP.k_evidence`` names what K counts ("K = 9 components",
    "K = 4 clusters")."""
    fitted = table.loc[table["fitted"]].iloc[0]
    K = int(fitted["K"])
    parts = []
    for k in (K - 1, K + 1):
        row = table.loc[table["K"] == k]
        if len(row) and row["delta"].iloc[0] >= 0:
            delta = float(row["delta"].iloc[0])
            parts.append(f"with K = {k}, {_nats(delta)} nats (odds about 1 : {_odds(delta)}: {odds_words(delta)})")
    of = table.attrs.get("of")  # MAPDP.k_evidence says what K counts: MAP-DP's components or the clusters reported
    unit = "" if of not in ("components", "clusters") else " " + (of[:-1] if K == 1 else of)
    text = f"K = {K}{unit}."
    if parts:
        text += " Beside it, the best partition found " + " and ".join(parts) + "."
    close = table.loc[~table["fitted"] & (table["delta"] >= 0) & (table["delta"] < 3.0)
                      & ~table["K"].isin([K - 1, K + 1])]
    if len(close):
        text += " Also within 3 nats: " + ", ".join(f"K = {int(r.K)} ({_nats(r.delta)} nats)"
                                                    for r in close.itertuples()) + "."
    better = table.loc[table["delta"] < 0]
    if len(better):
        r = better.sort_values("delta").iloc[0]
        text += (f" A partition with K = {int(r['K'])} ({r['how']}) is more probable than the fit by "
                 f"{_nats(-float(r['delta']))} nats: the fit stopped in a local optimum; more restarts may find it.")
    return text


#: clusters of at most this many rows are said to be outliers rather than subtypes: rows that no
#: larger cluster explains, as the two outlier pairs of PLOS Section 5.3 (whose K = 5 the paper
#: reads as three clusters and two outlier groups)
OUTLIER_ROWS = 2


def outlier_sentence(sizes) -> str:
    """What the clusters of at most :data:`OUTLIER_ROWS` rows among clusters of ``sizes`` are, in
    one sentence ("" when there are none, or when every cluster is that small): a K counted with
    a dozen one-row clusters is not a dozen subtypes."""
    sizes = np.asarray(sizes, dtype=np.int64)
    small = sizes <= OUTLIER_ROWS
    if not small.any() or small.all():
        return ""
    n, rows, rest = int(small.sum()), int(sizes[small].sum()), int((~small).sum())
    return (f"{n} of the {len(sizes)} clusters hold{'s' if n == 1 else ''} "
            f"{'one or two rows' if OUTLIER_ROWS == 2 else 'a few rows'} "
            f"({rows} row{'s' if rows != 1 else ''} in all): rows that no larger cluster explains, to be read as "
            f"outliers rather than subtypes (as the outlier pairs of PLOS Section 5.3); {rest} cluster"
            f"{'s hold' if rest != 1 else ' holds'} {OUTLIER_ROWS + 1} rows or more.")


def _odds(delta: float) -> str:
    """e^delta, rounded for reading."""
    if delta > 690:
        return "e^" + f"{delta:,.0f}"
    value = math.exp(delta)
    if value >= 1e6:
        return f"{value:.0e}".replace("e+0", "e").replace("e+", "e")
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"
