"""Runs: :func:`run` records every step of any registered algorithm (:data:`mapdp_core.ALGORITHMS`)
as :class:`~mapdp_core.SweepState` frames, over restarts, and keeps the best restart as a
:class:`Run`; beside it the estimator the app builds for a data set, MAP-DP's automatic settings,
the fitted model of a recorded run and DP-means' lambda for a number of clusters.

K-means and DP-means need numbers without gaps: they run on
:func:`explorer.sources.numeric_matrix`, the features standardised (categories one-hot), with a
missing entry set to its column's mean, which the app says whenever data have gaps. MAP-DP runs
on the features themselves with one likelihood per column and marginalises the gaps (PLOS
Appendix F).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sklearn.base import clone

from mapdp_core.models.dpmeans import dpmeans_lambda_for_k
from mapdp_core.core.estimator import TIE_TOLERANCE, SweepEstimator, best_restart, summarize_restart
from mapdp_core.evaluation.metrics import clustering_scores
from mapdp_core.models.registry import algorithm
from mapdp_core.core.spec import parse
from mapdp_core.families import FAMILIES
from mapdp_core.engine.merging import MERGE_CUTOFF, auto_min_cluster_size
from mapdp_core.engine.partition_prior import MixtureOfFiniteMixtures
from mapdp_core.core.state import SweepState
from mapdp_core.selection.auto import AutoChoice, choose_hyperparameters
from mapdp_core.selection.auto import sparse_real_columns
from mapdp_core.selection.auto import CATEGORICAL_SCALES, is_block, shape_words
from mapdp_core.selection.auto import structured_likelihood as structured
from mapdp_core.selection.priors import scaled_prior

from explorer.sources import AppData, numeric_matrix

__all__ = ["Run", "run", "estimator", "run_mapdp", "run_kmeans", "run_dpmeans", "auto_settings", "mapdp_settings",
           "search_likelihood", "likelihood_for", "STARTS",
           "fitted_model", "lambda_for_k", "count_steps", "sweep_steps"]


@dataclass(frozen=True, eq=False)
class Run:
    """Every recorded step of the best of several restarts of one algorithm.

    Attributes
    ----------
    algorithm : str
        The registry name (:data:`mapdp_core.ALGORITHMS`).
    states : tuple of SweepState
        The steps of the best restart (lowest ``restart_key``), in order.
    restarts : DataFrame
        One row per restart: restart, K, objective (the value minimised across restarts),
        iterations, seconds, complete (False for a restart the time budget or a stop cut short,
        which is kept only when no restart completed), and nmi, ari when ground truth exists.
    params : dict
        The settings as the app named them (for captions and cache keys).
    seconds : float
        Wall time of all restarts.
    stopped : bool
        True if a time budget or a stop request cut the run short.
    estimator : SweepEstimator
        The unfitted estimator whose restarts these are: ``clone(estimator).fit(X)`` gives the
        same result as :func:`fitted_model` (when the run was not stopped).
    """

    algorithm: str
    states: tuple
    restarts: pd.DataFrame = field(repr=False)
    params: dict = field(default_factory=dict)
    seconds: float = 0.0
    stopped: bool = False
    estimator: SweepEstimator | None = field(default=None, repr=False)

    @property
    def final(self) -> SweepState:
        return self.states[-1]

    @property
    def best_index(self) -> int:
        """The restart (from 0) whose steps ``states`` holds, by :func:`run`'s rule: the lowest
        objective among the complete restarts, ties to the earliest."""
        complete = self.restarts["complete"].to_numpy(dtype=bool)
        return best_restart(np.where(complete, self.restarts["objective"].to_numpy(dtype=float), np.inf))

    @property
    def shown(self) -> SweepState:
        """The state the algorithm reports: its last, or a sampler's most probable."""
        return summarize_restart(iter(self.states), self.estimator.restart_key, self.estimator.keep).state

    @property
    def labels(self) -> np.ndarray:
        return self.final.labels


def _scores(truth: np.ndarray, labels) -> dict:
    """NMI and ARI against the known truth, on the rows the labelling has placed (a frame of
    SUGS or DP search leaves the rows it has not reached at -1); NaN when it has placed none."""
    labels = np.asarray(labels)
    rows = (truth >= 0) & (labels >= 0)
    if not rows.any():
        return {"nmi": np.nan, "ari": np.nan}
    sc = clustering_scores(truth[rows], labels[rows])
    return {"nmi": sc["nmi"], "ari": sc["ari"]}


def count_steps(step: str, n: int) -> str:
    """``n`` of an estimator's ``step``, in words: "1 sweep", "7 sweeps", "2 passes", "5 blocks of rows"."""
    head, space, rest = step.partition(" ")
    if n != 1:
        head += "es" if head.endswith(("s", "sh", "ch", "x")) else "s"
    return f"{n:,} {head}{space}{rest}"


def _collect(gen, deadline: float, should_stop) -> tuple[list, bool]:
    """The states of one run until it ends, the time limit passes or ``should_stop()``, and
    whether it was cut short. A converged state is never cut: a run that finished just after the
    deadline is done, not "stopped by the time limit"."""
    states = []
    for st in gen:
        states.append(st)
        if not st.converged and (time.perf_counter() > deadline or (should_stop is not None and should_stop())):
            return states, True
    return states, False


def _prior(data: AppData, likelihood, spread: float, weight: float):
    return None if spread == 1.0 and weight == 1.0 else scaled_prior(data.X, likelihood, spread, weight=weight)


def search_likelihood(data: AppData) -> tuple[dict, bool]:
    """The likelihood the automatic search starts from, and whether it may choose the Gaussian
    structure: as ``MAPDP()`` sees a table, real-valued columns as independent ``normal_gamma``
    columns that the search may join into one block (``structure="joint"``: a covariance per
    cluster; ``"shared"``: one covariance shared by all clusters).

    The data's likelihood is read that way when its real-valued columns are all independent or
    all in one Normal-Wishart block (per-cluster or shared) of two or more (the defaults of every source: a scenario's
    block over (x, y), a table's suggested families); any other arrangement is a user's choice
    and is kept as given, with no structure searched."""
    likelihood = dict(data.likelihood)
    blocks = [k for k, f in likelihood.items() if f in ("normal_wishart", "normal_wishart_tied")
              and isinstance(k, tuple) and len(k) > 1]
    single = [k for k, f in likelihood.items() if f == "normal_gamma" and not isinstance(k, tuple)]
    if len(blocks) > 1 or (blocks and single):
        return likelihood, False
    if not blocks:
        return likelihood, True
    split = {}
    for key, family in likelihood.items():
        if key == blocks[0]:
            split.update({c: "normal_gamma" for c in key})
        else:
            split[key] = family
    return split, True


def likelihood_for(data: AppData, structure: str | None) -> dict:
    """The likelihood MAP-DP fits to ``data`` with a ``structure`` (:func:`mapdp_settings`): the
    real-valued columns of :func:`search_likelihood` on their own ("independent") or as one
    Normal-Wishart block ("joint", a covariance per cluster; "shared", one for all clusters),
    either with "+categorical scales" appended (the binomial columns categorical); None: the
    data's likelihood as it is."""
    if structure is None:
        return dict(data.likelihood)
    likelihood = search_likelihood(data)[0]
    return structured(likelihood, structure, sparse_real_columns(data.X, likelihood))  # as MAPDP() builds its block


def structure_phrase(structure: str, likelihood: dict | None = None) -> str:
    """What a chosen ``structure`` (:func:`mapdp_core.selection.auto.structures`) adds to a
    sentence on the chosen settings: the clusters' shape in words (with its mclust name), unless
    ``likelihood`` (the chosen one) has no Gaussian column, and the ordinal scales read as
    categories when they are."""
    said = []
    if likelihood is None or any(FAMILIES[f].gaussian for f in likelihood.values()):
        said.append(("the real-valued features as one correlated block, " if is_block(structure)
                     else "the real-valued features each on its own, ") + shape_words(structure))
    if structure.endswith(CATEGORICAL_SCALES):
        said.append("the ordinal scales' levels each with its own probability (categorical, not binomial)")
    return "".join(", " + part for part in said)


def auto_settings(data: AppData, random_state=0, partition: str = "dp") -> AutoChoice:
    """The prior's spread and weight, the Gaussian structure and N0 that ``MAPDP()`` would choose
    for ``data`` (:func:`mapdp_core.selection.auto.choose_hyperparameters`, the exact joint evidence,
    on the likelihood of :func:`search_likelihood`), for the app's defaults. The knobs are absolute
    (relative to the empirical-Bayes prior); ``choice.start_on`` gives the search's best partition.
    ``partition="mfm"``: what ``MAPDP(partition_prior="mfm")`` chooses (the same search under the
    mixture of finite mixtures, no N0; ``choice.N0`` is that prior)."""
    likelihood, free = search_likelihood(data)
    if partition == "mfm":
        return choose_hyperparameters(data.X, likelihood, allow_joint=free, random_state=random_state,
                                      search_N0=False, N0=MixtureOfFiniteMixtures())
    return choose_hyperparameters(data.X, likelihood, allow_joint=free, random_state=random_state)


#: Where MAP-DP's restarts begin (the app's ``start`` setting): the automatic search's best partition,
#: as ``MAPDP()`` does, or one cluster (PLOS Appendix B), to watch clusters form sweep by sweep.
STARTS = ("search", "one cluster")


#: the priors on partitions MAP-DP can run under in the app, in words
PARTITION_PRIORS = {"dp": "Dirichlet process (N0)",
                    "mfm": "mixture of finite mixtures (Miller & Harrison 2018)"}


def mapdp_settings(choice: AutoChoice, N0: float | None = None, spread: float = 1.0, weight: float = 1.0,
                   start: str = "search", merge: bool = True, partition: str = "dp") -> dict:
    """MAP-DP's app parameters from an automatic choice and the app's knobs: ``N0`` (None: the
    chosen one), ``spread`` and ``weight`` as multiples of the chosen ones, where restarts
    begin (:data:`STARTS`) and whether components are grouped into the clusters a person reads
    (``MAPDP(merge=...)``, at :data:`mapdp_core.engine.merging.MERGE_CUTOFF`, and, in
    :func:`estimator`, ``min_cluster_size`` at MAPDP()'s size for the table). With every knob
    left as chosen, :func:`run` and :func:`fitted_model` give what
    ``MAPDP(random_state=seed, n_init=restarts, restart_rows=None).fit`` gives. ``partition``:
    the prior on partitions, "dp" (the Dirichlet process with that N0) or "mfm" (the mixture of
    finite mixtures, ``MAPDP(partition_prior="mfm")``, at the chosen likelihood prior; N0 unused)."""
    if start not in STARTS:
        raise ValueError(f"start={start!r}: MAP-DP starts from one of {list(STARTS)}.")
    if partition not in PARTITION_PRIORS:
        raise ValueError(f"partition={partition!r}: the prior on partitions is one of {list(PARTITION_PRIORS)}.")
    if N0 is None:
        N0 = choice.N0 if isinstance(choice.N0, (int, float)) else math.nan  # an MFM choice has no N0
    return {"N0": float(N0), "spread": float(choice.spread * spread),
            "weight": float(choice.weight * weight), "structure": choice.structure, "start": start,
            "merge": MERGE_CUTOFF if merge else None, "partition_prior": partition}


def _centres_from_rows(data: AppData, name: str, X: np.ndarray, rows, takes_centres: bool) -> dict:
    """The starting centres a user picked as rows of the data (``start_rows``, 0-based): those rows of
    the matrix the algorithm reads, one centre each (a row picked twice counts once), and K."""
    if not takes_centres:
        raise ValueError(f"{name} does not start from centres; only K-means takes rows as its starting centres.")
    picked = np.unique(np.asarray(list(rows), dtype=np.int64))
    if picked.size == 0:
        raise ValueError("no rows were picked as K-means' starting centres: pick at least one point on the chart, "
                         "or let k-means++ choose them.")
    if picked[0] < 0 or picked[-1] >= data.n_rows:
        raise ValueError(f"a starting centre names a row outside the data (rows 1 to {data.n_rows:,}); pick the "
                         "points again on the chart.")
    return {"init": X[picked], "n_clusters": int(picked.size)}


def estimator(data: AppData, name: str, params: dict | None = None, *, restarts: int = 1, seed: int = 0,
              choice: AutoChoice | None = None):
    """The registered estimator ``name`` for ``data`` with the app's ``params``, and the matrix it reads.

    Algorithms that read a mixed table (MAP-DP, Gibbs, SUGS, DP search) get the data's likelihood per column
    (with ``structure`` "independent", "joint" or "shared", the real-valued columns of :func:`search_likelihood`
    on their own or as one Normal-Wishart block, and with "+categorical scales" the binomial columns
    categorical; absent, the data's likelihood as it is) and the prior
    scaled by the app's knobs ``spread`` and ``weight``
    (:func:`mapdp_core.selection.priors.scaled_prior`); numeric ones get :func:`numeric_matrix`. Restarts
    visit rows in random orders where the algorithm has a visiting order (PLOS Appendix C). With
    ``start="search"`` an estimator that takes a starting partition (MAP-DP) begins every restart
    from the automatic search's best partition (``choice``, computed by :func:`auto_settings` when
    not given), extended to every row (PLOS Appendix E), as ``MAPDP()`` does. ``start_rows`` (row
    numbers from 0) makes those rows of the numeric matrix K-means' starting centres (K = their number,
    one run whatever ``restarts`` is): a teacher places the centres to show a poor local optimum.
    """
    cls = algorithm(name)
    params = dict(params or {})
    allowed = cls().get_params()
    start = params.pop("start", "one cluster") if cls.input == "mixed" else "one cluster"
    merge = params.pop("merge", None) if cls.input == "mixed" else None
    partition = params.pop("partition_prior", "dp") if cls.input == "mixed" else "dp"
    if "partition_prior" in allowed:  # MAP-DP: the mixture of finite mixtures has no N0
        params["partition_prior"] = partition
        if partition != "dp":
            params.pop("N0", None)
    if "merge" in allowed:  # MAP-DP's grouping of components; explicit, so that no setting turns it on unseen
        params["merge"] = merge
        # small groups are folded with the same switch, at MAPDP()'s size for this table
        params["min_cluster_size"] = None if merge is None else auto_min_cluster_size(data.n_rows)
    if start not in STARTS:
        raise ValueError(f"start={start!r}: MAP-DP starts from one of {list(STARTS)}.")
    if cls.input == "mixed":
        likelihood = likelihood_for(data, params.pop("structure", None))
        if not getattr(cls, "shared_statistics", True):  # e.g. the DP search: a covariance per cluster instead
            likelihood = {k: "normal_wishart" if f == "normal_wishart_tied" else f for k, f in likelihood.items()}
        prior = _prior(data, likelihood, float(params.pop("spread", 1.0)), float(params.pop("weight", 1.0)))
        params.update(likelihood=likelihood, prior=prior)
        if start == "search" and "init" in allowed:
            choice = auto_settings(data) if choice is None else choice
            params["init"] = choice.start_on(parse(data.X, likelihood, prior).X)
        X = data.X
    else:
        X = numeric_matrix(data)
    start_rows = params.pop("start_rows", None)
    if start_rows is not None:
        params.update(_centres_from_rows(data, name, X, start_rows, "init" in allowed))
    if "n_clusters" in params:
        params["n_clusters"] = int(min(max(int(params["n_clusters"]), 1), data.n_rows))
    if "n_components" in params:
        params["n_components"] = int(min(max(int(params["n_components"]), 1), data.n_rows))
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(f"{name} has no setting {unknown}; its settings are {sorted(allowed)}.")
    fixed = {"n_init": max(int(restarts), 1), "random_state": int(seed)}
    if "shuffle" in allowed:
        fixed["shuffle"] = True
    if "restart_rows" in allowed:  # the app records every restart's sweeps over every row
        fixed["restart_rows"] = None
    return cls(**{**params, **{k: v for k, v in fixed.items() if k in allowed}}), X


def run(data: AppData, name: str, params: dict | None = None, *, restarts: int = 1, seed: int = 0,
        time_budget: float = 120.0, should_stop: Callable[[], bool] | None = None,
        on_restart: Callable[[int, int], None] | None = None, X=None, choice: AutoChoice | None = None) -> Run:
    """Record every step of each restart of the registered algorithm ``name`` and keep the
    restart with the lowest ``restart_key``, exactly as the estimator's ``fit`` would choose.

    ``time_budget`` (seconds, all restarts together) and ``should_stop`` (called after every
    step; a Streamlit call there lets a click interrupt the run) cut a run short; what it
    reached is kept and ``Run.stopped`` says so. ``X`` may pass the matrix the algorithm
    reads (e.g. a cached :func:`numeric_matrix`), ``choice`` the automatic choice whose search
    partition ``start="search"`` begins from (see :func:`estimator`).
    """
    est, matrix = estimator(data, name, params, restarts=restarts, seed=seed, choice=choice)
    X = matrix if X is None else X
    t0 = time.perf_counter()
    deadline = t0 + float(time_budget)
    n = est._n_restarts()
    rows, kept, values, stopped = [], {}, [], False  # kept: the restarts that may still win (ties, below)
    for r in range(n):
        t = time.perf_counter()
        states, cut = _collect(est.iter_sweeps(X, restart=r), deadline, should_stop)
        summary = summarize_restart(iter(states), est.restart_key, est.keep)
        shown = summary.state
        row = {"restart": r + 1, "K": shown.n_clusters, "objective": summary.value, "iterations": summary.n_steps,
               "seconds": time.perf_counter() - t, "complete": not cut}
        reported = _clusters_of(est, X, states) if not cut else None
        labels = shown.labels
        if reported is not None:  # K counts the clusters a reader is shown; its components said apart
            row["K"], row["components"], labels = reported
        if data.truth is not None and np.any(data.truth >= 0):
            row.update(_scores(data.truth, labels))
        rows.append(row)
        # a restart cut short is scored on what it reached (a one-pass method on the rows it
        # visited), so it never competes with complete ones; it is kept only when none completed
        values.append(summary.value if not cut else math.inf)
        kept[r] = states
        low = np.nanmin(values) if np.any(np.asarray(values) == np.asarray(values)) else np.nan
        kept = {i: s for i, s in kept.items()  # one that is not tied with the lowest so far can never win
                if not values[i] > low + TIE_TOLERANCE * max(1.0, abs(low))}
        if on_restart is not None:
            on_restart(r + 1, n)
        if cut:
            stopped = True
            break
    shown_params = {**(params or {}), "restarts": restarts, "seed": seed}
    best = kept[best_restart(values)] if kept else []  # the estimator's own rule (ties to the earliest)
    return Run(algorithm=name, states=tuple(best), restarts=pd.DataFrame(rows), params=shown_params,
               seconds=time.perf_counter() - t0, stopped=stopped, estimator=est)


def run_mapdp(data: AppData, N0: float = 3.0, spread: float = 1.0, restarts: int = 1, seed: int = 0, *,
              weight: float = 1.0, max_iter: int = 100, **options) -> Run:
    """:func:`run` of MAP-DP with N0, the Gaussian spread of the prior times ``spread`` and the
    other families' prior weight times ``weight``."""
    return run(data, "MAP-DP", {"N0": N0, "spread": spread, "weight": weight, "max_iter": max_iter},
               restarts=restarts, seed=seed, **options)


def run_kmeans(data: AppData, K: int = 3, restarts: int = 1, seed: int = 0, *, max_iter: int = 300,
               Z: np.ndarray | None = None, **options) -> Run:
    """:func:`run` of K-means (k-means++ seeding) on :func:`numeric_matrix`."""
    return run(data, "K-means", {"n_clusters": K, "max_iter": max_iter}, restarts=restarts, seed=seed, X=Z,
               **options)


def run_dpmeans(data: AppData, lam: float, restarts: int = 1, seed: int = 0, *, max_iter: int = 100,
                Z: np.ndarray | None = None, **options) -> Run:
    """:func:`run` of DP-means with penalty ``lam`` on :func:`numeric_matrix`."""
    return run(data, "DP-means", {"lam": float(lam), "max_iter": max_iter}, restarts=restarts, seed=seed, X=Z,
               **options)


def sweep_steps(data: AppData, run: Run, sweep: int, steps: int) -> list:
    """Sweep ``sweep`` of a recorded MAP-DP :class:`Run` (its best restart, as animated) stopped
    every ceil(N / ``steps``) rows (:meth:`mapdp_core.MAPDP.sweep_steps`)."""
    return clone(run.estimator).sweep_steps(data.X, restart=run.best_index, sweep=int(sweep), steps=int(steps))


def _clusters_of(est, X, states) -> tuple[int, int, np.ndarray] | None:
    """For an estimator that groups its components into the clusters it reports (MAP-DP's
    ``merge`` and ``min_cluster_size``), one restart's clusters as its fit would report them:
    (the number of clusters, of components, the cluster of each row); None for any other."""
    if not states or not hasattr(est, "_group_components"):
        return None
    grouping = est.get_params()
    if grouping.get("merge") is None and grouping.get("min_cluster_size") is None:
        return None
    try:
        fit = clone(est).from_states(X, states)
    except (ValueError, TypeError):  # a restart the estimator cannot read back: its components stand
        return None
    return int(fit.n_clusters_), int(fit.n_components_), np.asarray(fit.labels_)


def fitted_model(data: AppData, run: Run):
    """The fitted estimator of a recorded :class:`Run` (its best restart, as animated), for
    prediction, imputation and profiles, without running the algorithm again: the estimator's
    public :meth:`~mapdp_core.SweepEstimator.from_states`, so it equals a refit."""
    X = data.X if run.estimator.input == "mixed" else numeric_matrix(data)
    return clone(run.estimator).from_states(X, run.states, run.restarts["objective"].to_numpy())


def lambda_for_k(data: AppData, K: int, Z: np.ndarray | None = None) -> tuple[float, bool]:
    """The DP-means lambda giving K clusters on :func:`numeric_matrix` (EJS Appendix D), and whether K was reached."""
    Z = numeric_matrix(data) if Z is None else Z
    found = dpmeans_lambda_for_k(Z, int(min(max(K, 1), data.n_rows)))
    return float(found.lam), bool(found.reached)
