"""How sure is each cluster? Cluster-wise stability under subsampling, and a stable headline.

Hennig (2007), "Cluster-wise assessment of cluster stability", Computational Statistics & Data
Analysis 52: each cluster C of the fit is compared, on every resample S (a random share of the
rows, drawn without replacement), with the most similar cluster C' of a refit on S by the
Jaccard index |C ∩ C'| / |C ∪ C'| over the rows of S. The mean over resamples is the cluster's
stability: Hennig reads >= 0.75 as stable, 0.6-0.75 as pattern-like, <= 0.5 as dissolved.

The refits keep the fitted model's settings fixed (its likelihood, prior and N0, as chosen or
given): what is measured is how much a cluster depends on the particular rows, not on the
hyperparameter search. Each refit starts as the search starts a candidate of the same structure,
on the resample's own rows (:func:`mapdp_core.selection.starts.starts_for`: one cluster, PLOS
Appendix B, the fine K-means start and, for a correlated block, its K-means and classification-EM
starts), and keeps the lowest exact joint; none starts from the fit's partition, so no refit is
steered towards the answer it is compared with. (From one cluster alone a correlated block often
stays at one cluster where the fit, started by the search, found several: the refits then called
every cluster of such a fit fragile.)

The refits are drawn once (:func:`refit_resamples`) and any partition of the fitted rows can be
scored against them (:func:`partition_stability`): :func:`cluster_stability` scores the fitted
clusters, and :func:`stability_summary` says in a headline how many of them are fragile and,
when most are, looks for a coarser partition the data support stably (the rule is in its
docstring), scored against the same refits.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from mapdp_core.core.validation import check_int, check_real

__all__ = ["FRAGILE", "RULE", "STABLE", "Refits", "StablePartition", "StabilitySummary", "cluster_stability",
           "partition_stability", "refit_resamples", "stability_headline", "stability_summary"]

#: Hennig's (2007) thresholds on the mean Jaccard index: from STABLE a cluster is stable, below
#: FRAGILE it is fragile, between them uncertain ("pattern-like")
STABLE, FRAGILE = 0.75, 0.6


def _refit_arguments(model):
    """The fitted model's data (encoded), likelihood and prior as explicit MAPDP arguments."""
    from mapdp_core.selection.priors import _prior_argument

    parsed = model._parsed
    likelihood = {(tuple(b.names) if len(b.names) > 1 else b.names[0]): b.family for b in parsed.blocks}
    prior = _prior_argument(parsed, likelihood, 1.0)
    return pd.DataFrame(parsed.X, columns=parsed.names), likelihood, prior


@dataclass
class Refits:
    """MAP-DP refitted on resamples of a fitted model's rows (:func:`refit_resamples`).

    ``rows[r]`` are the rows of the fitted table in resample r (sorted), ``labels[r]`` the
    refit's clusters of those rows (its ``labels_``). :meth:`coarsened` gives a refit's
    clusters merged down to a number of clusters by the refit's own greedy merge path."""

    rows: list
    labels: list
    _fits: list = field(default_factory=list, repr=False)  # (ParsedData, prior on partitions) per refit
    _paths: dict = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.rows)

    def coarsened(self, r: int, k: int) -> np.ndarray:
        """Refit r's clusters merged down to ``k`` clusters along its greedy merge path by its own
        exact joint on its resample (:func:`mapdp_core.engine.k_evidence.k_evidence`, the path
        the fitted clusters' coarser partitions follow); its clusters as they are when it has
        ``k`` or fewer."""
        labels = self.labels[r]
        if int(labels.max()) + 1 <= k:
            return labels
        if r not in self._paths:
            from mapdp_core.engine.k_evidence import k_evidence

            parsed, prior = self._fits[r]
            self._paths[r] = k_evidence(parsed, np.asarray(labels, dtype=np.int64), prior, more=0).attrs["partitions"]
        return self._paths[r][k]


def _check_resampling(n_resamples, fraction):
    n_resamples = check_int(n_resamples, "n_resamples", 1)
    fraction = check_real(fraction, "fraction", positive=True)
    if not fraction < 1:
        raise ValueError(f"fraction must be below 1 (a share of the rows), got {fraction!r}.")
    return n_resamples, fraction


def refit_resamples(model, n_resamples: int = 20, fraction: float = 0.8, random_state=0, n_init: int = 2,
                    n_jobs=None) -> Refits:
    """MAP-DP refitted, with the fitted model's settings, on ``n_resamples`` random shares
    ``fraction`` of its rows (drawn without replacement), each from the search's starts for its
    structure (module docstring; the one-cluster start with ``n_init`` random orders), the lowest
    exact joint kept; the arguments are :func:`cluster_stability`'s, and the same arguments give
    the same refits."""
    from sklearn.utils.validation import check_is_fitted

    from mapdp_core.core.spec import parse
    from mapdp_core.models.mapdp import MAPDP
    from mapdp_core.selection.starts import starts_for

    check_is_fitted(model, "labels_")
    n_resamples, fraction = _check_resampling(n_resamples, fraction)
    X, likelihood, prior = _refit_arguments(model)
    N = len(model.labels_)
    m = max(2, int(round(fraction * N)))
    rng = np.random.default_rng(random_state)
    refits = Refits([], [])
    for _ in range(n_resamples):
        rows = np.sort(rng.choice(N, m, replace=False))
        seed = int(rng.integers(0, 2**31 - 1))
        sample = X.iloc[rows].reset_index(drop=True)
        starts = starts_for(parse(sample, likelihood, prior), seed)
        refit = min((MAPDP(**model.partition_arguments(), likelihood=likelihood, prior=prior,
                           n_init=n_init if start is None else 1, random_state=seed, n_jobs=n_jobs, init=start,
                           tol=model.tol, max_iter=model.max_iter,
                           merge=getattr(model, "merge_cutoff_", None)).fit(sample) for start in starts),
                    key=lambda fit: fit.neg_log_joint_)
        refits.rows.append(rows)
        refits.labels.append(np.asarray(refit.labels_, dtype=np.int64))
        refits._fits.append((refit._parsed, refit._fitted_prior()))
    return refits


def _verdicts(mean: np.ndarray) -> np.ndarray:
    return np.where(mean >= STABLE, "stable", np.where(mean >= FRAGILE, "uncertain",
                                                       np.where(np.isnan(mean), "not resampled", "fragile")))


def partition_stability(labels, refits: Refits, *, coarsen: bool = False) -> pd.DataFrame:
    """Hennig's (2007) cluster-wise stability of any partition ``labels`` (0..K-1) of the fitted
    rows against the refits: per cluster, the mean over resamples of the Jaccard index with its
    most similar refit cluster, over the rows of the resample.

    ``coarsen``: compare with each refit's clusters merged down to K along the refit's own greedy
    merge path (:meth:`Refits.coarsened`) rather than with the refit's clusters as they are: the
    stability of a partition made by merging the fitted clusters, measured by the same procedure
    (fit, then merge to K) run on each resample.

    Returns :func:`cluster_stability`'s table for ``labels``.
    """
    labels = np.asarray(labels, dtype=np.int64)
    K = int(labels.max()) + 1
    scores = np.full((len(refits), K), np.nan)
    for r, (rows, theirs) in enumerate(zip(refits.rows, refits.labels)):
        if coarsen:
            theirs = refits.coarsened(r, K)
        mine = labels[rows]
        table = np.zeros((K, int(theirs.max()) + 1))
        np.add.at(table, (mine, theirs), 1.0)
        size_mine, size_theirs = table.sum(axis=1), table.sum(axis=0)
        union = size_mine[:, None] + size_theirs[None, :] - table
        with np.errstate(invalid="ignore", divide="ignore"):
            jaccard = np.where(union > 0, table / union, 0.0)
        present = size_mine > 0  # a cluster with no row in the resample says nothing there
        scores[r, present] = jaccard[present].max(axis=1)
    seen = np.isfinite(scores)
    counts = seen.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(counts > 0, np.where(seen, scores, 0.0).sum(axis=0) / counts, np.nan)
        dissolved = np.where(counts > 0, (seen & (scores <= 0.5)).sum(axis=0) / counts, np.nan)
    lowest = np.where(counts > 0, np.where(seen, scores, np.inf).min(axis=0), np.nan)
    return pd.DataFrame({
        "cluster": np.arange(K), "n": np.bincount(labels, minlength=K), "stability": mean,
        "lowest": lowest, "dissolved": dissolved, "verdict": _verdicts(mean),
    })


def cluster_stability(model, n_resamples: int = 20, fraction: float = 0.8, random_state=0, n_init: int = 2,
                      n_jobs=None) -> pd.DataFrame:
    """Per cluster of a fitted :class:`~mapdp_core.MAPDP`, its stability under subsampling
    (Hennig 2007).

    Parameters
    ----------
    model : fitted MAPDP
    n_resamples : int, default 20
    fraction : float in (0, 1), default 0.8
        Share of the rows in each resample.
    random_state : int, Generator or None
    n_init : int, default 2
        Restarts of each refit.
    n_jobs : int, optional
        Threads for the refits' restarts.

    Returns
    -------
    DataFrame
        One row per cluster: ``cluster``, ``n`` (its size), ``stability`` (mean Jaccard index),
        ``lowest`` (the smallest over resamples), ``dissolved`` (share of resamples with a
        Jaccard index <= 0.5) and ``verdict`` (stable / uncertain / fragile, Hennig's
        thresholds 0.75 and 0.6).

    See :func:`stability_summary` for the same table with a headline and, when most clusters are
    fragile, the partition the data support stably.
    """
    n_resamples, fraction = _check_resampling(n_resamples, fraction)
    refits = refit_resamples(model, n_resamples, fraction, random_state, n_init, n_jobs)
    return partition_stability(model.labels_, refits)


# ----------------------------------------------------------------------------- the headline

def _count(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def stability_headline(stability: pd.DataFrame) -> str:
    """The clusters of a stability table (:func:`cluster_stability`) counted in a headline:
    "5 clusters, 4 of them fragile (stability below 0.6 under subsampling)", with the uncertain
    ones (0.6 to 0.75) counted too when there are any, and just "5 clusters" when every cluster
    is stable."""
    verdict = stability["verdict"].astype(str)
    K = len(verdict)
    fragile, uncertain = int((verdict == "fragile").sum()), int((verdict == "uncertain").sum())
    unseen = int((verdict == "not resampled").sum())
    said = []
    if fragile:
        said.append(f"{fragile} fragile (stability below {FRAGILE:g} under subsampling)")
    if uncertain:
        said.append(f"{uncertain} uncertain (stability {FRAGILE:g} to {STABLE:g}"
                    + (")" if fragile else " under subsampling)"))
    if unseen:
        said.append(f"{unseen} too small to resample")
    if not said:
        return _count(K, "cluster")
    if K == 1:  # "1 cluster, fragile (...)"
        return "1 cluster, " + said[0].split(" ", 1)[1]
    first, rest = said[0].split(" ", 1)
    if len(said) == 1 and int(first) == K:  # "2 clusters, both fragile (...)"
        return f"{_count(K, 'cluster')}, {'both' if K == 2 else 'all'} {rest}"
    return f"{_count(K, 'cluster')}, {first} of them {rest}" + "".join(
        (" and " if i == len(said) - 1 else ", ") + s for i, s in enumerate(said[1:], 1))


def _and(items: list) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


#: how :func:`stability_summary` chooses the stable partition, in words
RULE = ("How it was chosen, from the data alone (no diagnosis or other label is read): the fitted clusters were "
        "merged two at a time, each time the pair whose merge lowers the model's probability (its exact joint) "
        "least; of these coarser partitions, this is the one with the most clusters (two or more) whose clusters "
        f"are all stable ({STABLE:g} or more) when each subsample's refit is merged down the same way.")


@dataclass
class StablePartition:
    """A coarser partition the data support stably (:func:`stability_summary`).

    ``K`` clusters; ``labels`` (0..K-1, one per fitted row); ``clusters``: for each, the fitted
    clusters it unites; ``stability``: :func:`partition_stability`'s table of its clusters (with
    ``made_of``); ``neg_log_joint``: its exact -ln p(X, z | N0, theta0); ``delta``: that minus the
    fitted partition's (the row ``fitted`` of ``model.k_evidence()``), in nats."""

    K: int
    labels: np.ndarray
    clusters: tuple
    stability: pd.DataFrame
    neg_log_joint: float
    delta: float

    def sentence(self) -> str:
        """What it is and how it was chosen, in words."""
        from mapdp_core.engine.k_evidence import _nats, odds_words

        parts = []
        for j, (c, n, v) in enumerate(zip(self.clusters, self.stability["n"], self.stability["stability"])):
            what = f"cluster {c[0]}" if len(c) == 1 else "clusters " + _and([str(k) for k in c]) + " together"
            parts.append(f"{what} ({_count(int(n), 'row')}, {'stability ' if j == 0 else ''}{v:.2f})")
        if self.delta >= 0:
            odds = (f"By the model's probability it is {odds_words(self.delta)} than MAP-DP's fitted partition "
                    f"({_nats(self.delta)} nats above it, Kass & Raftery's scale).")
        else:
            odds = (f"By the model's probability it is more probable than MAP-DP's fitted partition "
                    f"({_nats(-self.delta)} nats below it): the fit stopped in a local optimum.")
        return f"The data support {self.K} clusters stably: {_and(parts)}. {RULE} {odds}"


@dataclass
class StabilitySummary:
    """A fitted MAP-DP's stability in words (:func:`stability_summary`).

    ``table``: :func:`cluster_stability`'s; ``headline``: :func:`stability_headline`'s;
    ``n_fragile``, ``n_uncertain``; ``most_fragile``: more than half of the clusters fragile;
    ``alternative``: the :class:`StablePartition` found, or None; ``tried``: the coarser
    partitions scored (``K``, ``lowest`` stability of its clusters, ``all_stable``), empty when
    none was looked for; ``sentence``: the alternative, or that none is stable, in words ("" when
    none was looked for)."""

    table: pd.DataFrame
    headline: str
    n_fragile: int
    n_uncertain: int
    most_fragile: bool
    alternative: StablePartition | None
    tried: pd.DataFrame
    sentence: str


def _merge_path(model):
    """The fitted clusters' coarser partitions (K -> labels) by greedy merges on the exact joint,
    and -ln p(X, z) of each, with the fitted partition's (of ``model.k_evidence()``)."""
    from mapdp_core.engine.k_evidence import k_evidence

    evidence = model.k_evidence()
    fitted = float(evidence.loc[evidence["fitted"], "neg_log_joint"].iloc[0])
    labels = np.asarray(model.labels_, dtype=np.int64)
    if int(model.n_clusters_) == int(getattr(model, "n_components_", model.n_clusters_)):
        path = evidence  # the clusters are MAP-DP's components: k_evidence's merge path is theirs
    else:
        path = k_evidence(model._parsed, labels, model._fitted_prior(), more=0, seed=model._fixed_seed())
    joints = dict(zip(path["K"].astype(int), path["neg_log_joint"].astype(float)))
    return path.attrs["partitions"], joints, fitted


def _stable_partition(model, labels, scored, neg_log_joint, delta) -> StablePartition:
    """The candidate ``labels`` as a :class:`StablePartition`, its clusters numbered in the order
    of the first fitted cluster each unites."""
    fitted = np.asarray(model.labels_, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    K = int(labels.max()) + 1
    made_of = [tuple(int(c) for c in np.unique(fitted[labels == j])) for j in range(K)]
    order = np.argsort([m[0] for m in made_of], kind="stable")
    new = np.empty(K, dtype=np.int64)
    new[order] = np.arange(K)
    table = scored.iloc[order].reset_index(drop=True)
    table["cluster"] = np.arange(K)
    table.insert(2, "made_of", [" + ".join(str(c) for c in made_of[j]) for j in order])
    return StablePartition(K, new[labels], tuple(made_of[j] for j in order), table, float(neg_log_joint),
                           float(delta))


def stability_summary(model, stability: pd.DataFrame | None = None, *, n_resamples: int = 20,
                      fraction: float = 0.8, random_state=0, n_init: int = 2, n_jobs=None,
                      refits: Refits | None = None) -> StabilitySummary:
    """A fitted :class:`~mapdp_core.MAPDP`'s cluster-wise stability (Hennig 2007) as a headline,
    and, when most clusters are fragile, the partition the data support stably, if there is one.

    The headline counts the fragile clusters (:func:`stability_headline`). When more than half
    of the clusters are fragile, the coarser partitions are scored, by this rule (no label is
    read):

    * the candidates are the partitions on the fitted clusters' greedy merge path by the exact
      joint (:func:`mapdp_core.engine.k_evidence.k_evidence`: at each step the two clusters whose
      merge raises -ln p(X, z | N0, theta0) least become one), with K - 1 down to 2 clusters,
      each cluster a union of fitted clusters;
    * a candidate with K' clusters is scored against the same refits as the fitted clusters
      (one set of refits in all), each refit merged down to K' clusters by the same greedy path
      on its own resample (its clusters as they are when it has K' or fewer): Hennig's Jaccard
      index of each candidate cluster with its most similar merged refit cluster, averaged over
      resamples. This measures the stability of the procedure that made the candidate (MAP-DP,
      then merging to K'), as Hennig's scheme asks. Comparing with the refits' unmerged clusters
      would call a union of fragile pieces unstable even when the refits cut the same group
      into different pieces; allowing any union of refit clusters would call every coarse
      partition stable (one cluster, trivially);
    * the partition chosen is the candidate with the most clusters whose clusters are all
      stable (mean Jaccard >= 0.75); if none is, the summary says so.

    Parameters
    ----------
    model : fitted MAPDP
    stability : DataFrame, optional
        :func:`cluster_stability`'s table of the model; None: computed here from the refits.
    n_resamples, fraction, random_state, n_init, n_jobs
        As :func:`cluster_stability`; pass those the table was computed with, so that a search
        for a stable partition refits the same resamples.
    refits : Refits, optional
        :func:`refit_resamples`' refits, when already drawn.

    Returns
    -------
    StabilitySummary
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model, "labels_")
    if stability is None:
        if refits is None:
            refits = refit_resamples(model, n_resamples, fraction, random_state, n_init, n_jobs)
        stability = partition_stability(model.labels_, refits)
    verdict = stability["verdict"].astype(str)
    K = len(verdict)
    n_fragile, n_uncertain = int((verdict == "fragile").sum()), int((verdict == "uncertain").sum())
    most = 2 * n_fragile > K
    tried = pd.DataFrame({"K": pd.Series(dtype=int), "lowest": pd.Series(dtype=float),
                          "all_stable": pd.Series(dtype=bool)})
    alternative, sentence = None, ""
    if most:
        if K == 1:
            sentence = "The one cluster is fragile: refits on subsamples divide its rows in other ways."
        elif K == 2:
            sentence = (f"Most of these clusters are fragile, and there is no coarser partition with two clusters or "
                        f"more to try: the data do not support {_count(K, 'cluster')} stably at these settings.")
        else:
            if refits is None:
                refits = refit_resamples(model, n_resamples, fraction, random_state, n_init, n_jobs)
            partitions, joints, fitted = _merge_path(model)
            rows = []
            for k in range(K - 1, 1, -1):
                scored = partition_stability(partitions[k], refits, coarsen=True)
                values = scored["stability"].to_numpy(dtype=float)
                ok = bool(np.all(np.isfinite(values)) and np.all(values >= STABLE))
                rows.append({"K": k, "lowest": float(np.nanmin(values)) if np.isfinite(values).any() else np.nan,
                             "all_stable": ok})
                if ok:
                    alternative = _stable_partition(model, partitions[k], scored, joints[k], joints[k] - fitted)
                    break
            tried = pd.DataFrame(rows, columns=["K", "lowest", "all_stable"])
            if alternative is not None:
                sentence = "Most of these clusters are fragile. " + alternative.sentence()
            else:
                sentence = ("Most of these clusters are fragile, and no coarser partition is stable either (the "
                            "fitted clusters merged two at a time, each time the pair whose merge lowers the model's "
                            "probability least, down to two clusters, each scored against the subsamples' refits "
                            "merged the same way): the data do not support a partition into two clusters or more "
                            "stably at these settings.")
    return StabilitySummary(stability, stability_headline(stability), n_fragile, n_uncertain, most, alternative,
                            tried, sentence)
