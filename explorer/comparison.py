"""Comparisons: every chosen algorithm over restarts in one tidy table (:func:`compare`), how long
that may take, measured before it runs (:func:`compare_estimate`, :func:`scale_estimate`), the
per-algorithm settings it takes (:func:`compare_options`) and its summary per algorithm.
"""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from mapdp_core.core.validation import check_int
from mapdp_core.evaluation.metrics import clustering_scores, match_labels
from mapdp_core.models.registry import ALGORITHMS

from explorer.runner import auto_settings, estimator, lambda_for_k, mapdp_settings, run
from explorer.sources import AppData, numeric_matrix, scenario_data

__all__ = ["COMPARED", "OVERVIEW_ALGORITHMS", "overview", "compare", "compare_estimate", "scale_estimate",
           "run_estimate", "expected_seconds", "compare_options", "compare_summary", "runs_once"]

#: The algorithms :func:`compare` knows, in display order (the registry's).
COMPARED = tuple(ALGORITHMS)


def compare(data: AppData, algorithms=None, *, N0: float = 3.0, spread: float = 1.0, weight: float = 1.0,
            structure: str | None = None, start: str = "one cluster", merge: float | None = None,
            partition_prior: str = "dp", choice=None,
            K: int = 3, lam: float | None = None, restarts: int = 5, seed: int = 0, gibbs_sweeps: int = 100, vdp_components: int = 20, options=None,
            time_budget: float = 600.0,
            should_stop: Callable[[], bool] | None = None, on_step: Callable[[int, int], None] | None = None,
            on_algorithm: Callable[[str, int, int], None] | None = None) -> pd.DataFrame:
    """Every chosen algorithm over ``restarts`` seeds: one tidy row per (algorithm, restart).

    Each algorithm is a :func:`run` with its restarts. MAP-DP restarts visit rows in random
    orders (PLOS Appendix C) and the collapsed Gibbs sampler (Neal's Algorithm 3, the PLOS
    comparator) reports the most probable partition it visits in ``gibbs_sweeps`` sweeps;
    every algorithm that reads a mixed table (MAP-DP, Gibbs, SUGS, DP search, ...) gets the
    data's own likelihoods and the same N0 and prior (``structure`` and ``start`` as
    :func:`explorer.runner.estimator` reads them: with ``start="search"`` MAP-DP's restarts begin
    from the partition of the automatic ``choice``, as ``MAPDP()`` does). K-means (k-means++), DP-means (``lam``,
    by default the lambda giving MAP-DP's K), E-M for a full-covariance Gaussian mixture with K
    components and the variational DP Gaussian mixture (Blei & Jordan, truncated at
    ``vdp_components``) run on :func:`numeric_matrix`. Any other setting of an algorithm's
    ``ui`` (DP search's beam, ...) is taken from ``options`` (``{"<algorithm>:<parameter>":
    value}`` as the app stores them, or such pairs), else its ``ui`` default. An algorithm
    without a random element (DP search in its default order) runs once whatever ``restarts``
    asks. ``time_budget`` (seconds, for the whole comparison) and ``should_stop`` end it early
    with the restarts done so far. ``on_step(restarts done, restarts in all)`` is called after
    every restart and ``on_algorithm(name, its position from 1, number of algorithms)`` before
    each algorithm.

    Returns
    -------
    DataFrame
        algorithm, restart, K, iterations, seconds, objective (each algorithm's own, not
        comparable across algorithms), and nmi, ari when the data have ground truth.
        ``attrs["stopped"]`` is True when the time budget or ``should_stop`` ended it early.
    """
    algorithms, restarts, Z, settings = _comparison_plan(
        data, list(ALGORITHMS) if algorithms is None else algorithms, restarts, N0=N0, spread=spread, weight=weight,
        structure=structure, start=start, merge=merge, partition_prior=partition_prior, choice=choice, K=K, lam=lam,
        gibbs_sweeps=gibbs_sweeps,
        vdp_components=vdp_components, options=options)
    deadline = time.perf_counter() + float(time_budget)
    planned = {name: _restart_count(name, settings[name], restarts) for name in algorithms}
    tables, done, total, stopped = [], 0, sum(planned.values()), False

    def step(finished, n):
        if on_step is not None:
            on_step(done + finished, total)

    for position, name in enumerate(algorithms, start=1):
        left = deadline - time.perf_counter()
        if left <= 0 or (should_stop is not None and should_stop()):
            stopped = True
            break
        if on_algorithm is not None:
            on_algorithm(name, position, len(algorithms))
        X = Z if ALGORITHMS[name].input == "numeric" else None
        result = run(data, name, settings[name], restarts=restarts, seed=seed, time_budget=left,
                     should_stop=should_stop, on_restart=step, X=X, choice=choice)
        tables.append(result.restarts.assign(algorithm=name))
        done += planned[name]
        stopped = stopped or result.stopped or len(result.restarts) < planned[name]
    first = ["algorithm", "restart", "K", "iterations", "seconds", "objective"]
    if any("components" in t for t in tables):
        first.insert(3, "components")
    if not tables:
        table = pd.DataFrame(columns=first)
    else:
        table = pd.concat(tables, ignore_index=True)
        table = table[first + [c for c in table.columns if c not in first]]
    table.attrs["stopped"] = stopped
    return table


def _restart_count(name: str, settings: dict, restarts: int) -> int:
    """How many restarts ``name`` runs with ``settings`` when ``restarts`` are asked (one for
    an algorithm without a random element, e.g. DP search in its default order)."""
    cls = ALGORITHMS[name]
    allowed = cls().get_params()
    params = {k: v for k, v in settings.items() if k in allowed}
    if "n_init" in allowed:
        params["n_init"] = max(int(restarts), 1)
    if "shuffle" in allowed:  # as :func:`estimator` runs it
        params["shuffle"] = True
    return cls(**params)._n_restarts()


def runs_once(algorithms) -> list:
    """The ``algorithms`` without a random element in their default settings (one run, whatever
    the restarts asked, e.g. DP search in its default order), in the order given."""
    return [name for name in algorithms if _restart_count(name, {}, 2) == 1]


#: The parameters :func:`compare`'s own arguments set, per algorithm (besides N0 and the prior of
#: every algorithm that reads a mixed table); an algorithm's other ``ui`` settings come from ``options``.
_COMPARE_SETS = {"Gibbs": ("n_sweeps",), "K-means": ("n_clusters",), "E-M": ("n_components",),
                 "Variational DP": ("n_components",), "DP-means": ("lam",)}
_MIXED_SETTINGS = ("N0", "spread", "weight", "structure", "start", "merge", "partition_prior")


def compare_options(settings: dict, algorithms) -> tuple:
    """The app's per-algorithm settings (``"<algorithm>:<parameter>"`` in ``settings``) that
    :func:`compare` takes for ``algorithms`` as ``options``: the ``ui`` parameters its own
    arguments do not set (DP search's beam, ...). Sorted pairs, so that they can key a cache."""
    chosen = []
    for name in algorithms:
        cls = ALGORITHMS.get(name)
        if cls is None:
            continue
        fixed = set(_COMPARE_SETS.get(name, ())) | (set(_MIXED_SETTINGS) if cls.input == "mixed" else set())
        chosen += [(f"{name}:{p}", settings[f"{name}:{p}"]) for p in cls.ui
                   if p not in fixed and f"{name}:{p}" in settings]
    return tuple(sorted(chosen))


def _comparison_plan(data: AppData, algorithms, restarts, options=None, **settings):
    """(algorithms, restarts, numeric view or None, each algorithm's settings) for
    :func:`compare` and :func:`compare_estimate`, with unknown names and a bad restart count
    refused in plain words."""
    algorithms = list(algorithms)
    unknown = [a for a in algorithms if a not in ALGORITHMS]
    if unknown:
        raise ValueError(f"unknown algorithm(s) {unknown}; choose among {list(ALGORITHMS)}.")
    restarts = check_int(restarts, "restarts", 1)
    Z = numeric_matrix(data) if any(ALGORITHMS[a].input == "numeric" for a in algorithms) else None
    return algorithms, restarts, Z, _compared_settings(data, algorithms, Z=Z, options=options, **settings)


def _compared_settings(data: AppData, algorithms, *, N0, spread, weight, structure, start, merge, choice, K, lam,
                       partition_prior="dp",
                       gibbs_sweeps, vdp_components, Z, options=None) -> dict:
    """Each compared algorithm's settings (see :func:`compare`): its ``ui`` defaults, replaced by
    ``options`` (``"<algorithm>:<parameter>"``), then by the comparison's own arguments: N0 and
    the prior for every algorithm that reads a mixed table, K, the Gibbs sweeps, the variational
    truncation and DP-means' lambda (when not given, the one that gives MAP-DP's K)."""
    mixed = {"N0": N0, "spread": spread, "weight": weight, "start": start, "merge": merge,
             "partition_prior": partition_prior}
    if structure is not None:
        mixed["structure"] = structure
    own = {"Gibbs": {"n_sweeps": int(gibbs_sweeps)}, "K-means": {"n_clusters": K}, "E-M": {"n_components": K},
           "Variational DP": {"n_components": vdp_components}}  # and DP-means' lambda, below (_COMPARE_SETS)
    given: dict = {}
    for key, value in dict(options or {}).items():
        name, _, param = str(key).partition(":")
        given.setdefault(name, {})[param] = value
    settings = {}
    for name in algorithms:
        cls = ALGORITHMS[name]
        chosen = {p: spec.default for p, spec in cls.ui.items() if spec.default is not None}
        chosen.update({p: v for p, v in given.get(name, {}).items() if p in cls.ui})
        if cls.input == "mixed":
            chosen.update(mixed)
        settings[name] = {**chosen, **own.get(name, {})}
    if "DP-means" in algorithms:
        if lam is None:
            lam = lambda_for_k(data, run(data, "MAP-DP", mixed, choice=choice).final.n_clusters, Z)[0]
        settings["DP-means"]["lam"] = float(lam)
    return settings


def compare_estimate(data: AppData, algorithms, *, N0: float = 3.0, spread: float = 1.0, weight: float = 1.0,
                     structure: str | None = None, start: str = "one cluster", merge: float | None = None,
                     partition_prior: str = "dp",
                     choice=None, K: int = 3, lam: float | None = None, restarts: int = 5,
                     seed: int = 0, gibbs_sweeps: int = 100, vdp_components: int = 20, options=None,
                     probe_steps: int = 4, probe_seconds: float = 1.0) -> pd.DataFrame:
    """How long :func:`compare` may take with these settings, from a short measurement on ``data``.

    Each algorithm runs the first steps of one restart (``probe_steps``, fewer once
    ``probe_seconds`` have passed): the first gives its set-up time, the slowest of the others
    the time of one step (step times vary by a factor of 2 or more on a busy machine, so the
    slowest is the safer guess). A restart may take up to its step limit (Gibbs: exactly
    ``gibbs_sweeps`` sweeps; the others stop earlier when they converge, so theirs is an upper bound).

    Returns
    -------
    DataFrame
        One row per algorithm: ``algorithm``, ``setup_seconds``, ``step_seconds``, ``max_steps``,
        ``one_run`` (True where the algorithm runs once whatever the restarts: it has no random
        element), ``restarts`` (how many it runs) and ``max_seconds`` (for all of them); see
        :func:`scale_estimate` for another number of restarts without timing again.
    """
    algorithms, restarts, Z, settings = _comparison_plan(
        data, algorithms, restarts, N0=N0, spread=spread, weight=weight, structure=structure, start=start,
        merge=merge, partition_prior=partition_prior, choice=choice, K=K, lam=lam, gibbs_sweeps=gibbs_sweeps,
        vdp_components=vdp_components,
        options=options)
    rows = []
    for name in algorithms:
        est, X = estimator(data, name, settings.get(name, {}), restarts=1, seed=seed, choice=choice)
        X = Z if ALGORITHMS[name].input == "numeric" else X
        params = est.get_params()
        max_steps = int(params.get("n_sweeps") or params.get("max_iter") or 100)
        t0 = time.perf_counter()
        marks = []
        for _ in est.iter_sweeps(X, restart=0):
            marks.append(time.perf_counter() - t0)
            if len(marks) >= max(int(probe_steps), 2) or (len(marks) >= 2 and marks[-1] > probe_seconds):
                break
        setup = marks[0] if marks else 0.0
        step = float(np.max(np.diff(marks))) if len(marks) >= 2 else setup
        rows.append({"algorithm": name, "setup_seconds": setup, "step_seconds": step, "max_steps": max_steps,
                     "one_run": _restart_count(name, settings[name], 2) == 1})
    return scale_estimate(pd.DataFrame(rows, columns=["algorithm", "setup_seconds", "step_seconds", "max_steps",
                                                      "one_run"]), restarts)


def scale_estimate(estimate: pd.DataFrame, restarts: int) -> pd.DataFrame:
    """:func:`compare_estimate`'s table for ``restarts`` restarts (``restarts`` and
    ``max_seconds`` recomputed from the timed steps; an algorithm with ``one_run`` runs once)."""
    restarts = check_int(restarts, "restarts", 1)
    out = estimate.copy()
    out["restarts"] = np.where(out["one_run"].astype(bool), 1, restarts).astype(int)
    per_restart = out["setup_seconds"] + out["step_seconds"] * np.maximum(out["max_steps"] - 1, 0)
    out["max_seconds"] = out["restarts"] * per_restart
    return out


def run_estimate(data: AppData, name: str, params: dict, *, seed: int = 0, choice=None, probe_steps: int = 4,
                 probe_seconds: float = 1.0) -> pd.DataFrame:
    """:func:`compare_estimate` of one algorithm with the app's settings for it, for one restart
    (scale it with :func:`scale_estimate`): ``params`` as :func:`explorer.runner.run` takes them (its
    ``ui`` settings and, for an algorithm that reads the mixed table, N0, spread, weight, structure,
    start and merge; ``restarts``, ``seed`` and ``time_budget`` are ignored). DP-means without a
    ``lam`` (matching MAP-DP's K before MAP-DP has run) is timed at its ``ui`` default."""
    cls = ALGORITHMS[name]
    params = {k: v for k, v in dict(params).items() if k not in ("restarts", "seed", "time_budget")}
    mixed = {k: params[k] for k in _MIXED_SETTINGS if k in params} if cls.input == "mixed" else {}
    lam = params.get("lam")
    if name == "DP-means" and lam is None:
        lam = cls.ui["lam"].default if "lam" in cls.ui and cls.ui["lam"].default is not None else 1.0
    size = params.get("n_clusters", params.get("n_components", 3)) if name in ("K-means", "E-M") else 3
    options = {f"{name}:{p}": v for p, v in params.items() if p in cls.ui}
    return compare_estimate(data, [name], restarts=1, seed=seed, choice=choice, K=int(size), lam=lam,
                            gibbs_sweeps=int(params.get("n_sweeps", 100)),
                            vdp_components=int(params.get("n_components", 20)), options=options,
                            probe_steps=probe_steps, probe_seconds=probe_seconds, **mixed)


def expected_seconds(estimate: pd.DataFrame, restarts: int, time_budget: float | None = None) -> pd.Series:
    """Per algorithm (indexed by name), the most seconds a run of ``restarts`` restarts may take by
    :func:`compare_estimate`'s timing (:func:`scale_estimate`), at most ``time_budget`` (each
    algorithm's time limit, all its restarts together; None: no limit)."""
    scaled = scale_estimate(estimate, restarts).set_index("algorithm")["max_seconds"].astype(float)
    return scaled if time_budget is None else scaled.clip(upper=float(time_budget))


def compare_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm: mean and sd over restarts of K (the clusters each reports), NMI, ARI,
    iterations and seconds, and the best objective; with ``components`` (MAP-DP's components,
    grouped into its clusters) their mean too."""
    cols = [c for c in ("K", "components", "nmi", "ari", "iterations", "seconds") if c in table]
    g = table.groupby("algorithm", sort=False)
    out = pd.DataFrame({"restarts": g.size()})
    for c in cols:
        out[f"{c} mean"] = g[c].mean()
        if c != "components":
            out[f"{c} sd"] = g[c].std(ddof=1) if len(table) > 1 else np.nan
    out["best objective"] = g["objective"].min()
    return out.reset_index()


#: The overview's columns (:func:`overview`): two methods told the true K, and MAP-DP told nothing.
OVERVIEW_ALGORITHMS = ("K-means", "E-M", "MAP-DP")


def overview(sections, n: int = 1000, seed: int = 0, restarts: int = 3) -> tuple[pd.DataFrame, dict]:
    """Every scenario beside every algorithm of :data:`OVERVIEW_ALGORITHMS`, as scikit-learn's
    clustering comparison lays out data sets x algorithms (issue 27): K-means (k-means++, best of
    ``restarts``) and E-M (a full-covariance Gaussian mixture, best of ``restarts``) are given
    the true K as Explore gives it (:attr:`explorer.sources.AppData.true_k`: 3 on 5.3, whose two
    outlier pairs are no groups); MAP-DP is given nothing and runs at the settings ``MAPDP()`` chooses from the
    data, from its search's partition (:func:`explorer.runner.mapdp_settings`).

    ``sections``: PLOS Section 5 scenarios ("5.1" ...), each drawn with ``n`` points and ``seed``.
    Returns one row per (scenario, algorithm): "scenario", "algorithm", "told" (what the method
    was given), "K" found, "nmi" against the truth, "labels" (one per row), "colours" (the labels
    matched to the true classes, Hungarian, so one class keeps its colour across the grid); and
    per scenario its points (N x 2)."""
    n = check_int(n, "n", 10)
    rows, points = [], {}
    for section in sections:
        data = scenario_data(section, n=n, seed=seed)
        true_k = int(data.true_k)  # as Explore tells K-means: the outlier pairs of 5.3 are not groups (issue 43)
        points[section] = data.X[data.features].to_numpy(dtype=float)  # as drawn: the units of the data
        for name in OVERVIEW_ALGORITHMS:
            if name == "MAP-DP":
                choice = auto_settings(data, random_state=seed)
                est, X = estimator(data, name, mapdp_settings(choice), restarts=1, seed=seed, choice=choice)
                told = "nothing"
            else:
                key = "n_clusters" if name == "K-means" else "n_components"
                est, X = estimator(data, name, {key: true_k}, restarts=restarts, seed=seed)
                told = f"K = {true_k}"
            labels = np.asarray(est.fit(X).labels_)
            scores = clustering_scores(data.truth, labels)
            rows.append({"scenario": section, "algorithm": name, "told": told, "K": int(scores["K"]),
                         "nmi": float(scores["nmi"]), "labels": labels,
                         "colours": match_labels(data.truth, labels)})
    return pd.DataFrame(rows), points
