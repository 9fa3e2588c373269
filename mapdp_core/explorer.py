"""What the MAP-DP Explorer app computes, kept free of Streamlit so a notebook can call it too.

The flow is the library's (data -> spec -> arrays -> kernel -> state): an :class:`AppData`
holds one data set as the app sees it (the table as loaded, every row in order, its
encoded features and the likelihood per column); :func:`run` records every step of any
registered algorithm (:data:`mapdp_core.ALGORITHMS`) as :class:`~mapdp_core.SweepState`
frames, over restarts; :func:`animation_frames` turns runs into what an animation draws
(a 2-D view, colours stable across frames and across algorithms, 2-sd ellipses, K, the
objective and NMI/ARI per frame). :mod:`mapdp_core.figures` draws them.

K-means and DP-means need numbers without gaps: they run on :func:`numeric_matrix`, the
features standardised (categories one-hot), with a missing entry set to its column's mean,
which the app says whenever data have gaps. MAP-DP runs on the features themselves with
one likelihood per column and marginalises the gaps (PLOS Appendix F).
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sklearn.base import clone

from ._validation import check_int
from .datasets import load_dataset, load_structured
from .dpmeans import dpmeans_lambda_for_k
from .estimator import SweepEstimator, summarize_restart
from .loading import prepare
from .metrics import clustering_scores, codes, match_labels
from .registry import ALGORITHMS, algorithm
from .spec import parse
from .state import SweepState
from .synthetic import PLOS_SCENARIOS, clinical_simulator, crp_normal_wishart, plos_scenario
from .auto import AutoChoice, choose_hyperparameters
from .auto import structured_likelihood as structured
from .tuning import scaled_prior

__all__ = [
    "AppData", "Run", "Frames", "scenario_data", "builtin_data", "crp_data", "clinical_data", "table_data",
    "numeric_matrix", "projection", "display_sample", "run", "estimator", "algorithm", "ALGORITHMS", "run_mapdp", "run_kmeans", "run_dpmeans",
    "with_likelihood", "encode_new_rows", "lambda_for_k", "fitted_model", "compare", "compare_estimate", "scale_estimate", "compare_options", "count_steps", "compare_summary", "COMPARED", "assignments", "cluster_heatmap", "animation_frames", "DISPLAY_MAX", "MAX_FRAMES",
]

#: Most points drawn in a scatter; above this a random sample is shown (and the app says so).
DISPLAY_MAX = 4000
#: Most frames kept per algorithm for an animation (evenly thinned beyond, first and last kept;
#: the sweep slider shows the true sweep numbers). Every frame costs a redraw; the browser test
#: times the slider against the frame count (commit 4aad77c measured 60 against 20 frames).
MAX_FRAMES = 20


# ----------------------------------------------------------------------------- data

@dataclass(frozen=True, eq=False)
class AppData:
    """One data set as the app holds it.

    Attributes
    ----------
    name : str
        What to call it on screen.
    table : DataFrame
        The table as loaded, every row in input order (labels and identifiers included).
    X : DataFrame
        The encoded feature columns (float64, NaN = missing), one row per row of ``table``.
    likelihood : dict
        ``{column or tuple of columns: family}`` for :class:`~mapdp_core.MAPDP`; a tuple
        is one joint (Normal-Wishart) block.
    truth : ndarray of int or None
        Ground-truth class per row (codes 0..C-1, -1 where unknown), if the data have one.
    truth_names : list
        The class of each code.
    description : str
    notes : tuple of str
        Warnings from loading, to show.
    encodings : dict
        Per feature, how it was encoded (see :func:`mapdp_core.loading.prepare`).
    key : str
        A digest of the features and likelihood: equal keys mean the same clustering problem.
    id_column : str or None
        The column of ``table`` that identifies each row (role "identifier"), if there is one.
    """

    name: str
    table: pd.DataFrame = field(repr=False)
    X: pd.DataFrame = field(repr=False)
    likelihood: dict
    truth: np.ndarray | None = field(default=None, repr=False)
    truth_names: list = field(default_factory=list, repr=False)
    description: str = ""
    notes: tuple = ()
    encodings: dict = field(default_factory=dict, repr=False)
    key: str = ""
    id_column: str | None = None

    def __post_init__(self):
        if not self.key:
            h = hashlib.sha256()
            h.update(np.ascontiguousarray(self.X.to_numpy(dtype=float)).tobytes())
            h.update(repr(sorted((str(k), v) for k, v in self.likelihood.items())).encode())
            h.update(repr(list(self.X.columns)).encode())
            object.__setattr__(self, "key", h.hexdigest()[:16])

    @property
    def n_rows(self) -> int:
        return len(self.X)

    @property
    def features(self) -> list:
        return list(self.X.columns)

    @property
    def has_gaps(self) -> bool:
        return bool(self.X.isna().to_numpy().any())

    def family_of(self, column) -> str:
        for key, fam in self.likelihood.items():
            if key == column or (isinstance(key, tuple) and column in key):
                return fam
        raise KeyError(column)


def _codes(labels) -> tuple[np.ndarray | None, list]:
    if labels is None:
        return None, []
    s = pd.Series(labels).reset_index(drop=True)
    known = s.notna()
    names = sorted(pd.unique(s[known]), key=lambda v: (isinstance(v, str), v))
    lookup = {v: i for i, v in enumerate(names)}
    codes = np.full(len(s), -1, dtype=np.int64)
    codes[known.to_numpy()] = [lookup[v] for v in s[known]]
    return codes, [v.item() if hasattr(v, "item") else v for v in names]


def scenario_data(section: str = "5.2", n: int = 4000, seed: int = 0) -> AppData:
    """One of the six PLOS Section 5 scenarios, with a Normal-Wishart block over (x, y)."""
    X, y = plos_scenario(section, n=n, seed=seed)
    table = pd.DataFrame(X, columns=["x", "y"])
    table["truth"] = y
    title = PLOS_SCENARIOS[section]
    truth, names = _codes(y)
    return AppData(name=f"PLOS {section}: {title}", table=table, X=table[["x", "y"]].astype(float),
                   likelihood={("x", "y"): "normal_wishart"}, truth=truth, truth_names=names,
                   description=f"PLOS ONE 2016, Section {section} ({n} points, seed {seed}).")


def builtin_data(name: str) -> AppData:
    """A data set shipped in datasets/, with its documented default likelihoods (text columns
    encoded as :func:`mapdp_core.loading.prepare` encodes an uploaded table's)."""
    X, y, spec = load_dataset(name)
    table = X.copy()
    table["label"] = y.to_numpy()
    description = f"Built-in data set '{name}' ({len(X)} rows, {X.shape[1]} features)."
    if all(pd.api.types.is_numeric_dtype(X[c]) for c in X.columns):
        truth, names = _codes(y)
        return AppData(name=name, table=table, X=X.astype(float), likelihood=spec, truth=truth, truth_names=names,
                       description=description)
    per_column = {c: fam for key, fam in spec.items() for c in (key if isinstance(key, tuple) else (key,))}
    data = with_likelihood(table_data(table, roles={"label": "label"}, families=per_column, name=name), per_column)
    return AppData(name=name, table=table, X=data.X, likelihood=data.likelihood, truth=data.truth,
                   truth_names=data.truth_names, encodings=data.encodings, notes=data.notes, description=description,
                   id_column=data.id_column)


def structured_data(name: str) -> tuple[AppData, dict]:
    """A shipped sequence, grouped or longitudinal table (:func:`mapdp_core.datasets.load_structured`)
    as app data, and its column roles for the Sequences page: ``{"time": column or None,
    "subject": column or None}``. The features are the set's modelled columns (a longitudinal
    set's response and covariates); the truth, when known, is the label; the other columns
    stay in the table, unmodelled."""
    s = load_structured(name)
    modelled = list(s.features) + ([s.response] if s.response and s.response not in s.features else [])
    roles = {c: "ignored" for c in s.table.columns if c not in modelled}
    if s.truth is not None:
        roles[s.truth] = "label"
    data = table_data(s.table, roles=roles, name=s.name)
    data = AppData(name=data.name, table=data.table, X=data.X, likelihood=data.likelihood, truth=data.truth,
                   truth_names=data.truth_names, notes=data.notes, encodings=data.encodings,
                   description=s.description, id_column=data.id_column)
    return data, {"time": s.time, "subject": s.subject}


def crp_data(n: int = 2000, N0: float = 3.0, d: int = 2, seed: int = 0) -> AppData:
    """Data drawn from the DP mixture itself: a CRP partition with Normal-Wishart clusters (EJS Section 5)."""
    out = crp_normal_wishart(n, N0=N0, d=d, seed=seed)
    X, y = out[0], out[1]
    cols = [f"x{j + 1}" for j in range(X.shape[1])]
    table = pd.DataFrame(X, columns=cols)
    table["truth"] = y
    truth, names = _codes(y)
    return AppData(name=f"CRP mixture (N0={N0:g}, d={d})", table=table, X=table[cols].astype(float),
                   likelihood={tuple(cols): "normal_wishart"}, truth=truth, truth_names=names,
                   description=f"{n} points from a Chinese restaurant process with N0 = {N0:g}, seed {seed}.")


def clinical_data(n: int = 500, n_subtypes: int = 3, missing_rate: float = 0.1, seed: int = 0) -> AppData:
    """Simulated patients of mixed feature types with gaps (PLOS Section 6 style)."""
    out = clinical_simulator(n=n, n_subtypes=n_subtypes, missing_rate=missing_rate, seed=seed)
    df, y, spec = out[0], out[1], out[2]
    table = df.copy()
    table.attrs = {}  # the simulator's outlier mask is not part of the table shown or downloaded
    table["subtype"] = np.asarray(y)
    roles = {c: "feature" for c in df.columns} | {"subtype": "label"}
    data = table_data(table, roles=roles, families=dict(spec), name=f"Simulated clinical ({n_subtypes} subtypes)")
    return AppData(name=data.name, table=table, X=data.X, likelihood=data.likelihood, truth=data.truth,
                   truth_names=data.truth_names, encodings=data.encodings, notes=data.notes,
                   description=f"{n} simulated patients, {missing_rate:.0%} of entries missing, seed {seed}.")


def table_data(table: pd.DataFrame, roles=None, families=None, standardize: str = "none",
               name: str = "uploaded table") -> AppData:
    """A user's table: roles and families as chosen (or suggested), features encoded by
    :func:`mapdp_core.loading.prepare`. Every row is kept, in order."""
    prepared = prepare(table, roles=roles, families=families, standardize=standardize)
    truth, names = _codes(prepared.labels)
    ids = prepared.ids
    return AppData(name=name, table=table, X=prepared.X.astype(float), likelihood=dict(prepared.likelihood),
                   truth=truth, truth_names=names, notes=tuple(prepared.notes), encodings=prepared.encodings,
                   description=f"{name}: {len(table)} rows, {prepared.X.shape[1]} features.",
                   id_column=None if ids is None else ids.name)


def with_likelihood(data: AppData, families: dict) -> AppData:
    """``data`` with a new family per feature column; the columns given ``normal_wishart``
    form one joint block (full covariance), every other column is modelled on its own.

    Raises ValueError (with the engine's message) when a family does not fit its column.
    """
    unknown = [c for c in families if c not in data.features]
    if unknown:
        raise ValueError(f"column(s) {unknown} are not features of '{data.name}'.")
    chosen = {c: families.get(c, data.family_of(c)) for c in data.features}
    block = tuple(c for c in data.features if chosen[c] == "normal_wishart")
    likelihood = {c: f for c, f in chosen.items() if f != "normal_wishart"}
    if len(block) == 1:
        likelihood[block[0]] = "normal_wishart"
    elif block:
        likelihood[block] = "normal_wishart"
    ordered = {}
    for c in data.features:  # keep the column order of the data
        for key, fam in likelihood.items():
            if (key == c or (isinstance(key, tuple) and key[0] == c)) and key not in ordered:
                ordered[key] = fam
    parse(data.X, ordered)  # the engine's own checks, with its messages
    return AppData(name=data.name, table=data.table, X=data.X, likelihood=ordered, truth=data.truth,
                   truth_names=data.truth_names, description=data.description, notes=data.notes,
                   encodings=data.encodings, id_column=data.id_column)


def encode_new_rows(data: AppData, rows: pd.DataFrame, *, unseen: list | None = None) -> pd.DataFrame:
    """New rows, given as in the original table, encoded as ``data.X`` was (category codes,
    shifts, standardisation; see :func:`mapdp_core.loading.prepare`). Text in a numeric column
    raises ValueError naming it; so does a value never seen in a categorical column, unless
    ``unseen`` is a list: then that cell becomes missing and is recorded there (see
    :func:`mapdp_core.encoding.unseen_notes`)."""
    from .encoding import encode_new_rows as encode  # the one encoding path (mapdp_core.encoding)

    return encode(rows, data.features, data.encodings, unseen=unseen)


def numeric_matrix(data: AppData) -> np.ndarray:
    """Features as plain numbers for K-means, DP-means and PCA: every column z-scored,
    categorical columns one-hot (each indicator scaled by 1/sqrt(2) so that two different
    categories lie at distance 1, as two standard deviations of a real feature roughly do),
    and a missing entry set to 0, its column's mean."""
    parts = []
    for c in data.features:
        x = data.X[c].to_numpy(dtype=float)
        if data.family_of(c) == "categorical":
            levels = np.unique(x[~np.isnan(x)])
            onehot = (x[:, None] == levels[None, :]).astype(float) / np.sqrt(2.0)
            onehot[np.isnan(x)] = np.nan
            cols = onehot
        else:
            cols = x[:, None]
        mu = np.nanmean(cols, axis=0)
        sd = np.nanstd(cols, axis=0)
        sd[~(sd > 0)] = 1.0
        z = (cols - mu) / sd if data.family_of(c) != "categorical" else cols - mu
        z[np.isnan(z)] = 0.0
        parts.append(z)
    return np.ascontiguousarray(np.hstack(parts))


def projection(data: AppData, features=None) -> tuple[np.ndarray, list[str]]:
    """2-D coordinates of every row: two chosen features (gaps at the column mean), the
    only two features, or the first two principal components of :func:`numeric_matrix`.

    Returns
    -------
    coords : ndarray (N, 2)
    axis_names : list of two str (with the share of variance for principal components)
    """
    feats = data.features
    if features is not None:
        features = list(features)
        if len(features) != 2 or any(f not in feats for f in features) or features[0] == features[1]:
            raise ValueError(f"choose two different features among {feats}.")
    elif len(feats) == 2:
        features = feats
    elif len(feats) == 1:
        x = data.X[feats[0]].to_numpy(dtype=float)
        x = np.where(np.isnan(x), np.nanmean(x), x)
        jitter = np.random.default_rng(0).uniform(-0.5, 0.5, x.size)
        return np.column_stack([x, jitter]), [feats[0], "(spread out at random)"]
    if features is not None:
        cols = []
        for f in features:
            x = data.X[f].to_numpy(dtype=float)
            cols.append(np.where(np.isnan(x), np.nanmean(x), x))
        return np.column_stack(cols), list(map(str, features))
    Z = numeric_matrix(data)
    Z = Z - Z.mean(axis=0)
    _, s, vt = np.linalg.svd(Z, full_matrices=False)
    share = s ** 2 / max(float((s ** 2).sum()), 1e-300)
    coords = Z @ vt[:2].T
    if coords.shape[1] < 2:
        coords = np.column_stack([coords, np.zeros(len(coords))])
    return coords, [f"PC1 ({share[0]:.0%} of variance)", f"PC2 ({share[1] if share.size > 1 else 0:.0%})"]


def display_sample(n_rows: int, max_points: int = DISPLAY_MAX, seed: int = 0) -> np.ndarray:
    """Sorted indices of the rows to draw: all of them, or a uniform random sample of ``max_points``."""
    if n_rows <= max_points:
        return np.arange(n_rows)
    return np.sort(np.random.default_rng(seed).choice(n_rows, size=max_points, replace=False))


# ----------------------------------------------------------------------------- runs

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
        iterations, seconds, and nmi, ari when ground truth exists.
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
    states = []
    for st in gen:
        states.append(st)
        if time.perf_counter() > deadline or (should_stop is not None and should_stop()):
            return states, True
    return states, False


def _prior(data: AppData, likelihood, spread: float, weight: float):
    return None if spread == 1.0 and weight == 1.0 else scaled_prior(data.X, likelihood, spread, weight=weight)


def auto_settings(data: AppData, random_state=0) -> AutoChoice:
    """The prior's spread and weight, the Gaussian structure and N0 that ``MAPDP()`` would choose
    for ``data`` (:func:`mapdp_core.auto.choose_hyperparameters`, the exact joint evidence),
    for the app's defaults. The knobs are absolute (relative to the empirical-Bayes prior)."""
    return choose_hyperparameters(data.X, data.likelihood, allow_joint=True, random_state=random_state)


def mapdp_settings(choice: AutoChoice, N0: float | None = None, spread: float = 1.0, weight: float = 1.0) -> dict:
    """MAP-DP's app parameters from an automatic choice and the app's knobs: ``N0`` (None: the
    chosen one), and ``spread`` and ``weight`` as multiples of the chosen ones."""
    return {"N0": float(choice.N0 if N0 is None else N0), "spread": float(choice.spread * spread),
            "weight": float(choice.weight * weight), "structure": choice.structure}


def estimator(data: AppData, name: str, params: dict | None = None, *, restarts: int = 1, seed: int = 0):
    """The registered estimator ``name`` for ``data`` with the app's ``params``, and the matrix it reads.

    Algorithms that read a mixed table (MAP-DP, Gibbs, SUGS, DP search) get the data's likelihood per column (its
    real-valued columns as one Normal-Wishart block with ``structure="joint"``) and the prior
    scaled by the app's knobs ``spread`` and ``weight``
    (:func:`mapdp_core.tuning.scaled_prior`); numeric ones get :func:`numeric_matrix`. Restarts
    visit rows in random orders where the algorithm has a visiting order (PLOS Appendix C).
    """
    cls = algorithm(name)
    params = dict(params or {})
    allowed = cls().get_params()
    if cls.input == "mixed":
        likelihood = structured(data.likelihood, params.pop("structure", "independent"))
        prior = _prior(data, likelihood, float(params.pop("spread", 1.0)), float(params.pop("weight", 1.0)))
        params.update(likelihood=likelihood, prior=prior)
        X = data.X
    else:
        X = numeric_matrix(data)
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
        on_restart: Callable[[int, int], None] | None = None, X=None) -> Run:
    """Record every step of each restart of the registered algorithm ``name`` and keep the
    restart with the lowest ``restart_key``, exactly as the estimator's ``fit`` would choose.

    ``time_budget`` (seconds, all restarts together) and ``should_stop`` (called after every
    step; a Streamlit call there lets a click interrupt the run) cut a run short; what it
    reached is kept and ``Run.stopped`` says so. ``X`` may pass the matrix the algorithm
    reads (e.g. a cached :func:`numeric_matrix`).
    """
    est, matrix = estimator(data, name, params, restarts=restarts, seed=seed)
    X = matrix if X is None else X
    t0 = time.perf_counter()
    deadline = t0 + float(time_budget)
    n = est._n_restarts()
    rows, best, best_value, stopped = [], None, np.inf, False
    for r in range(n):
        t = time.perf_counter()
        states, cut = _collect(est.iter_sweeps(X, restart=r), deadline, should_stop)
        summary = summarize_restart(iter(states), est.restart_key, est.keep)
        shown = summary.state
        row = {"restart": r + 1, "K": shown.n_clusters, "objective": summary.value, "iterations": summary.n_steps,
               "seconds": time.perf_counter() - t}
        if data.truth is not None and np.any(data.truth >= 0):
            row.update(_scores(data.truth, shown.labels))
        rows.append(row)
        if best is None or summary.value < best_value:
            best, best_value = states, summary.value
        if on_restart is not None:
            on_restart(r + 1, n)
        if cut:
            stopped = True
            break
    shown_params = {**(params or {}), "restarts": restarts, "seed": seed}
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


#: The algorithms :func:`compare` knows, in display order (the registry's).
COMPARED = tuple(ALGORITHMS)


def compare(data: AppData, algorithms=None, *, N0: float = 3.0, spread: float = 1.0, weight: float = 1.0,
            structure: str = "independent", K: int = 3, lam: float | None = None, restarts: int = 5, seed: int = 0, gibbs_sweeps: int = 100,
            vdp_components: int = 20, options=None, time_budget: float = 600.0,
            should_stop: Callable[[], bool] | None = None, on_step: Callable[[int, int], None] | None = None,
            on_algorithm: Callable[[str, int, int], None] | None = None) -> pd.DataFrame:
    """Every chosen algorithm over ``restarts`` seeds: one tidy row per (algorithm, restart).

    Each algorithm is a :func:`run` with its restarts. MAP-DP restarts visit rows in random
    orders (PLOS Appendix C) and the collapsed Gibbs sampler (Neal's Algorithm 3, the PLOS
    comparator) reports the most probable partition it visits in ``gibbs_sweeps`` sweeps;
    every algorithm that reads a mixed table (MAP-DP, Gibbs, SUGS, DP search, ...) gets the
    data's own likelihoods and the same N0 and prior. K-means (k-means++), DP-means (``lam``,
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
        data, list(ALGORITHMS) if algorithms is None else algorithms, restarts, N0=N0, spread=spread, weight=weight, structure=structure, K=K, lam=lam,
        gibbs_sweeps=gibbs_sweeps, vdp_components=vdp_components, options=options)
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
                     should_stop=should_stop, on_restart=step, X=X)
        tables.append(result.restarts.assign(algorithm=name))
        done += planned[name]
        stopped = stopped or result.stopped or len(result.restarts) < planned[name]
    first = ["algorithm", "restart", "K", "iterations", "seconds", "objective"]
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
_MIXED_SETTINGS = ("N0", "spread", "weight", "structure")


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


def _compared_settings(data: AppData, algorithms, *, N0, spread, weight, structure, K, lam, gibbs_sweeps,
                       vdp_components, Z, options=None) -> dict:
    """Each compared algorithm's settings (see :func:`compare`): its ``ui`` defaults, replaced by
    ``options`` (``"<algorithm>:<parameter>"``), then by the comparison's own arguments: N0 and
    the prior for every algorithm that reads a mixed table, K, the Gibbs sweeps, the variational
    truncation and DP-means' lambda (when not given, the one that gives MAP-DP's K)."""
    mixed = {"N0": N0, "spread": spread, "weight": weight, "structure": structure}
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
            lam = lambda_for_k(data, run(data, "MAP-DP", mixed).final.n_clusters, Z)[0]
        settings["DP-means"]["lam"] = float(lam)
    return settings


def compare_estimate(data: AppData, algorithms, *, N0: float = 3.0, spread: float = 1.0, weight: float = 1.0,
                     structure: str = "independent", K: int = 3, lam: float | None = None, restarts: int = 5,
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
        data, algorithms, restarts, N0=N0, spread=spread, weight=weight, structure=structure, K=K, lam=lam,
        gibbs_sweeps=gibbs_sweeps, vdp_components=vdp_components, options=options)
    rows = []
    for name in algorithms:
        est, X = estimator(data, name, settings.get(name, {}), restarts=1, seed=seed)
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


def compare_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm: mean and sd over restarts of K, NMI, ARI, iterations and seconds, and the best objective."""
    cols = [c for c in ("K", "nmi", "ari", "iterations", "seconds") if c in table]
    g = table.groupby("algorithm", sort=False)
    out = pd.DataFrame({"restarts": g.size()})
    for c in cols:
        out[f"{c} mean"] = g[c].mean()
        out[f"{c} sd"] = g[c].std(ddof=1) if len(table) > 1 else np.nan
    out["best objective"] = g["objective"].min()
    return out.reset_index()


def assignments(data: AppData, labels, column: str = "cluster") -> pd.DataFrame:
    """The table as loaded, every row in input order and every missing value kept, with the
    cluster of each row added as ``column`` (renamed with a suffix if the table has one)."""
    labels = np.asarray(labels)
    if labels.shape != (len(data.table),):
        raise ValueError(f"{labels.size} labels for {len(data.table)} rows; pass one label per row.")
    out = data.table.copy()
    name = column
    while name in out.columns:
        name += "_"
    out[name] = labels
    return out


def cluster_heatmap(data: AppData, labels) -> pd.DataFrame:
    """Features x clusters: how far each cluster's mean lies from the overall mean, in overall
    standard deviations (observed values only). Categorical columns with more than two levels
    have no meaningful mean and are left out."""
    labels = np.asarray(labels)
    ids = np.unique(labels[labels >= 0])  # -1: a row not assigned to a cluster
    rows = {}
    for c in data.features:
        x = data.X[c].to_numpy(dtype=float)
        if data.family_of(c) == "categorical" and np.unique(x[~np.isnan(x)]).size > 2:
            continue
        mu, sd = np.nanmean(x), np.nanstd(x)
        sd = sd if sd > 0 else 1.0
        vals = []
        for k in ids:
            xk = x[labels == k]
            xk = xk[~np.isnan(xk)]
            vals.append((xk.mean() - mu) / sd if xk.size else np.nan)
        rows[c] = vals
    return pd.DataFrame.from_dict(rows, orient="index", columns=[int(k) for k in ids])


# ----------------------------------------------------------------------------- animation frames

@dataclass(frozen=True, eq=False)
class Frames:
    """What an animation draws, per algorithm and frame.

    Attributes
    ----------
    algorithms : list of str
    sweeps : list of list of int
        The sweep number of each kept frame, per algorithm.
    colours : list of list of ndarray
        Per algorithm and frame, the colour id of every displayed row (ids shared across
        frames and algorithms: equal ids, the same cluster as far as a matching can say);
        -1 for a row not visited yet (SUGS, DP search: every frame but the last).
    ellipses : list of list of list of (colour id, ndarray (m, 2))
        2-sd ellipses of the clusters' displayed coordinates (all rows, not just the sample).
    info : list of DataFrame
        Per algorithm one row per kept frame: sweep, K, objective, changed, unvisited (rows
        not visited yet), nmi, ari (on the rows visited).
    n_frames : int
        Frames of the longest algorithm; shorter ones hold their last frame.
    history : list of DataFrame
        Per algorithm one row per sweep, every sweep (also those not kept as frames):
        sweep, K, objective, changed.
    """

    algorithms: list
    sweeps: list
    colours: list
    ellipses: list
    info: list
    n_frames: int
    history: list

    @property
    def thinned(self) -> list:
        """The algorithms that ran more sweeps than they have frames."""
        return [a for a, s, h in zip(self.algorithms, self.sweeps, self.history) if len(h) > len(s)]

    @property
    def partial(self) -> list:
        """The algorithms with frames in which some rows are not visited yet (drawn grey)."""
        return [a for a, info in zip(self.algorithms, self.info)
                if "unvisited" in info and bool((info["unvisited"] > 0).any())]


def _thin(n: int, cap: int) -> np.ndarray:
    if n <= cap:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0, n - 1, cap)).astype(int))


def _ellipses(coords: np.ndarray, labels: np.ndarray, max_clusters: int = 40, n_std: float = 2.0):
    """(cluster id, ring of points) for the ``max_clusters`` largest clusters of 3 or more rows:
    the n_std-sd ellipse of the cluster's coordinates (sample covariance, from one pass of sums)."""
    labels = np.asarray(labels)
    if (labels < 0).any():  # rows not visited yet (-1) belong to no cluster
        coords, labels = coords[labels >= 0], labels[labels >= 0]
    if labels.size == 0:
        return []
    ids, inv, counts = codes(labels, return_counts=True)
    x, y = coords[:, 0], coords[:, 1]
    s = [np.bincount(inv, weights=w, minlength=ids.size) for w in (x, y, x * x, x * y, y * y)]
    t = np.linspace(0.0, 2.0 * np.pi, 31)
    circle = np.column_stack([np.cos(t), np.sin(t)])
    out = []
    for j in np.argsort(-counts, kind="stable")[:max_clusters]:
        n = counts[j]
        if n < 3:
            continue
        mean = np.array([s[0][j], s[1][j]]) / n
        cxy = (s[3][j] - n * mean[0] * mean[1]) / (n - 1)
        cov = np.array([[(s[2][j] - n * mean[0] ** 2) / (n - 1), cxy],
                        [cxy, (s[4][j] - n * mean[1] ** 2) / (n - 1)]])
        w, v = np.linalg.eigh(cov)
        out.append((int(ids[j]), mean + n_std * (circle * np.sqrt(np.clip(w, 0.0, None))) @ v.T))
    return out


def animation_frames(runs: list[Run], coords: np.ndarray, sample: np.ndarray | None = None,
                     truth: np.ndarray | None = None, max_frames: int = MAX_FRAMES) -> Frames:
    """Match clusters across frames and algorithms and compute what each frame shows.

    Colours follow DESIGN.md "Labels across frames": each algorithm's final clustering is
    matched (Hungarian, maximum overlap) to a shared reference (the ground truth when known,
    otherwise the first algorithm's final clustering), then every earlier frame to the
    frame after it, so a cluster keeps its colour as the sweeps go on.

    A row labelled -1 in a state (one SUGS has not visited, or DP search has not placed, yet)
    keeps the colour id -1 (:func:`mapdp_core.figures.animation_figure` draws it grey): it is
    no cluster, has no ellipse, and is left out of the frame's NMI and ARI; the frame's
    ``unvisited`` counts such rows.
    """
    N = coords.shape[0]
    sample = np.arange(N) if sample is None else np.asarray(sample)
    reference = None
    if truth is not None and np.any(truth >= 0):
        reference = np.where(truth >= 0, truth, truth.max() + 1)
    algorithms, sweeps, colours, ellipses, info, history = [], [], [], [], [], []
    for run in runs:
        history.append(pd.DataFrame([{"sweep": st.iteration, "K": st.n_clusters, "objective": st.objective,
                                      "changed": st.n_changed} for st in run.states]))
        keep = _thin(len(run.states), max_frames)
        states = [run.states[i] for i in keep]
        if reference is None:
            reference = np.asarray(states[-1].labels)
        matched = [None] * len(states)
        matched[-1] = match_labels(reference, states[-1].labels)
        for t in range(len(states) - 2, -1, -1):
            matched[t] = match_labels(matched[t + 1], states[t].labels)
        rows = []
        for st, lab in zip(states, matched):
            row = {"sweep": st.iteration, "K": st.n_clusters, "objective": st.objective, "changed": st.n_changed,
                   "unvisited": int(np.count_nonzero(lab < 0))}
            if truth is not None and np.any(truth >= 0):
                row.update(_scores(truth, lab))
            rows.append(row)
        algorithms.append(run.algorithm)
        sweeps.append([st.iteration for st in states])
        colours.append([lab[sample] for lab in matched])
        ellipses.append([_ellipses(coords, lab) for lab in matched])
        info.append(pd.DataFrame(rows))
    n_frames = max((len(s) for s in sweeps), default=0)
    return Frames(algorithms, sweeps, colours, ellipses, info, n_frames, history)


# ----------------------------------------------------------------------------- what the pages display

#: The smallest p-value shown as a number; below it the test is past double precision (scipy returns 0).
P_FLOOR = 1e-300


def format_p(p) -> str:
    """A p- or q-value as a person reads it: 2 significant figures, scientific below 1e-3
    ("3.2e-05"), "< 1e-300" at the floor of double precision, "" when missing."""
    if p is None or not np.isfinite(p):
        return ""
    p = float(p)
    if p < P_FLOOR:
        return "< 1e-300"
    if p < 1e-3:
        return f"{p:.1e}"
    return f"{p:.2g}"


def _format_number(x) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{float(x):.3g}"


def tests_for_display(tests: pd.DataFrame) -> pd.DataFrame:
    """:func:`mapdp_core.profiles.feature_tests` for reading: p and q formatted by :func:`format_p`,
    the statistic and effect size to 3 significant figures ("–" where a test has none, as Fisher's),
    and, where a feature could not be tested, its reason in place of a blank p-value."""
    out = tests.copy()
    untested = out["p_value"].isna()
    reason = out["note"].where(out["note"].astype(bool), "not tested")
    out["p_value"] = [f"not testable: {r}" if miss else format_p(p)
                      for p, miss, r in zip(tests["p_value"], untested, reason)]
    out["q_value"] = ["–" if miss else format_p(q) for q, miss in zip(tests["q_value"], untested)]
    out["significant"] = ["–" if miss else ("yes" if sig else "no") for sig, miss in zip(tests["significant"], untested)]
    for col in ("statistic", "effect_size"):
        out[col] = [_format_number(x) for x in tests[col]]
    out["test"] = out["test"].fillna("–")
    out["effect"] = out["effect"].fillna("–")
    out["note"] = out["note"].where(~untested, "")  # said once, in the p-value column
    return out


def decoded_features(data: AppData, X: pd.DataFrame) -> pd.DataFrame:
    """Feature values in the table's own terms: category codes back to their names, shifted
    scores and standardised measurements back to their original units (see
    :func:`mapdp_core.loading.prepare`); columns already holding names are left alone."""
    out = X.copy()
    for c in out.columns:
        enc = data.encodings.get(c, {})
        col = out[c]
        if not pd.api.types.is_numeric_dtype(col):
            continue
        if "codes" in enc:
            names = list(enc["codes"])
            out[c] = [None if not np.isfinite(v) else names[int(round(v))] if 0 <= round(v) < len(names) else v
                      for v in col.to_numpy(dtype=float)]
            continue
        x = col.to_numpy(dtype=float)
        if "center" in enc:
            x = x * enc["scale"] + enc["center"]
        if "shift" in enc:
            x = x + enc["shift"]
        out[c] = x
    return out


def row_ids(data: AppData) -> tuple[str, pd.Series]:
    """How to name each row on screen: the identifier column if the data have one, else the
    1-based row number. Returns the column's name and the values, one per row in order."""
    if data.id_column is not None and data.id_column in data.table.columns:
        return str(data.id_column), data.table[data.id_column].reset_index(drop=True)
    return "row", pd.Series(np.arange(1, data.n_rows + 1))


def imputed_rows(data: AppData, labels, filled: pd.DataFrame, was_missing: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows that had gaps, with the gaps filled (from :meth:`mapdp_core.MAPDP.impute`), for display.

    Returns
    -------
    table : DataFrame
        The row's id (see :func:`row_ids`), its cluster, ``filled`` (the names of the features
        filled in that row) and the features in the table's own terms (:func:`decoded_features`).
    mask : DataFrame of bool, same shape as ``table``
        True where a cell was filled.
    """
    labels = np.asarray(labels)
    missing = was_missing.to_numpy(dtype=bool)
    if labels.shape != (data.n_rows,) or missing.shape != (data.n_rows, len(filled.columns)):
        raise ValueError(f"need one label and one row of gaps per row of '{data.name}' ({data.n_rows} rows).")
    rows = missing.any(axis=1)
    id_name, ids = row_ids(data)
    values = decoded_features(data, filled.reset_index(drop=True))
    names = np.asarray(filled.columns, dtype=object)
    table = pd.DataFrame({id_name: ids.to_numpy()[rows], "cluster": labels[rows],
                          "filled": [", ".join(map(str, names[m])) for m in missing[rows]]})
    table = pd.concat([table, values[rows].reset_index(drop=True)], axis=1)
    mask = pd.DataFrame(False, index=table.index, columns=table.columns)
    mask.loc[:, list(filled.columns)] = missing[rows]
    return table, mask


def expected_clusters_curve(n0_values, n_max: int, points: int = 60) -> pd.DataFrame:
    """The CRP prior's expected number of clusters against the number of rows, for each N0:
    E[K | N] = sum_{i=1..N} N0 / (N0 + i - 1) (PLOS Appendix G), at about ``points`` values
    of N from 1 to ``n_max`` spaced on a log scale.

    Returns
    -------
    DataFrame
        ``N0``, ``N``, ``expected_K``.
    """
    n_max = check_int(n_max, "n_max", 1)
    n0_values = [float(v) for v in n0_values]
    if not n0_values or any(not np.isfinite(v) or v <= 0 for v in n0_values):
        raise ValueError(f"N0 values must be positive numbers, got {n0_values}.")
    grid = np.unique(np.round(np.logspace(0, np.log10(n_max), points)).astype(np.int64))
    i = np.arange(1, n_max + 1, dtype=float)
    frames = []
    for n0 in n0_values:
        cumulative = np.cumsum(n0 / (n0 + i - 1.0))
        frames.append(pd.DataFrame({"N0": n0, "N": grid, "expected_K": cumulative[grid - 1]}))
    return pd.concat(frames, ignore_index=True)


#: K-means' NMI on the six PLOS Section 5 scenarios as published (PLOS Table 1; given the true K,
#: best of restarts). benchmarks/reproduce_tables.py measures them again beside these values.
PLOS_KMEANS_NMI = {"5.1": 0.57, "5.2": 0.48, "5.3": 0.67, "5.4": 0.56, "5.5": 1.00, "5.6": 0.56}


def scenarios_by_kmeans(threshold: float = 0.9) -> dict:
    """The PLOS scenarios split by how K-means does on them (:data:`PLOS_KMEANS_NMI`):
    ``{"fails": [...], "succeeds": [...]}``, failing below NMI ``threshold``."""
    return {"fails": [s for s, v in PLOS_KMEANS_NMI.items() if v < threshold],
            "succeeds": [s for s, v in PLOS_KMEANS_NMI.items() if v >= threshold]}


# ----------------------------------------------------------------------------- settings to save or share

#: The app's own settings beside the algorithms' ("<algorithm>:<parameter>"): kind and bounds.
APP_SETTINGS = {"N0": ("float", 1e-6, 1e6), "spread": ("float", 1e-6, 1e6), "weight": ("float", 1e-6, 1e6),
                "algorithms": ("algorithms", None, None), "match_k": ("bool", None, None),
                "restarts": ("int", 1, 20), "seed": ("int", 0, 10**6), "time_budget": ("float", 1.0, 600.0)}
_SETTINGS_VERSION = 1


def _setting_rule(key: str):
    if key in APP_SETTINGS:
        return APP_SETTINGS[key]
    name, _, param = key.partition(":")
    spec = ALGORITHMS[name].ui.get(param) if name in ALGORITHMS else None
    if spec is None:
        return None
    if spec.kind == "choice":
        return ("choice", tuple(spec.options), None)
    return (spec.kind, spec.low, spec.high)


def _setting_value(key: str, value, rule):
    kind, low, high = rule
    if kind == "algorithms":
        names = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value
        if not isinstance(names, (list, tuple)) or any(n not in ALGORITHMS for n in names):
            raise ValueError(f"'{key}' must list algorithms among {list(ALGORITHMS)}, got {value!r}.")
        return [n for n in ALGORITHMS if n in names]
    if kind == "choice":
        if value not in low:
            raise ValueError(f"'{key}' must be one of {list(low)}, got {value!r}.")
        return value
    if kind == "bool":
        if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "false", "0", "no"):
            return value.strip().lower() in ("true", "1", "yes")
        if isinstance(value, bool):
            return value
        raise ValueError(f"'{key}' must be true or false, got {value!r}.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"'{key}' must be a number, got {value!r}.") from None
    if isinstance(value, bool) or not np.isfinite(number):
        raise ValueError(f"'{key}' must be a finite number, got {value!r}.")
    if kind == "int":
        if number != round(number):
            raise ValueError(f"'{key}' must be a whole number, got {value!r}.")
        number = int(round(number))
    if low is not None and number < low:
        raise ValueError(f"'{key}' must be at least {low:g}, got {value!r}.")
    if high is not None and number > high:
        raise ValueError(f"'{key}' must be at most {high:g}, got {value!r}.")
    return number


def check_settings(raw: dict) -> tuple[dict, list]:
    """Validate settings read from a file or a link: ``(settings, ignored keys)``.

    Known settings (:data:`APP_SETTINGS` and each registered algorithm's ``"<name>:<parameter>"``)
    are converted to their types and checked against their bounds; a bad value raises
    ValueError naming the setting and what it must be. Unknown keys are returned, not used.
    """
    if not isinstance(raw, dict):
        raise ValueError(f"settings must be a mapping of names to values, got {type(raw).__name__}.")
    settings, ignored = {}, []
    for key, value in raw.items():
        rule = _setting_rule(str(key))
        if rule is None:
            ignored.append(str(key))
            continue
        settings[str(key)] = _setting_value(str(key), value, rule)
    return settings, ignored


def settings_to_json(settings: dict) -> str:
    """The session's settings as a small JSON document (settings only, never data)."""
    known = {k: v for k, v in settings.items() if _setting_rule(k) is not None}
    clean = {k: (v.item() if hasattr(v, "item") else list(v) if isinstance(v, tuple) else v) for k, v in known.items()}
    return json.dumps({"mapdp_explorer_settings": _SETTINGS_VERSION, "settings": clean}, indent=2, sort_keys=True)


def settings_from_json(text) -> tuple[dict, list]:
    """Settings from :func:`settings_to_json`'s text (str or bytes): ``(settings, ignored keys)``.
    Raises ValueError, in words, for a file that is not such a document or holds a bad value."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the file is not JSON ({exc.msg} at line {exc.lineno}); save the settings from this app "
                         "and load that file.") from None
    if not isinstance(document, dict) or "settings" not in document:
        raise ValueError("the file is JSON but not settings saved by this app (no 'settings' entry).")
    return check_settings(document["settings"])


def settings_to_query(settings: dict) -> dict:
    """The settings as URL query parameters (text values; algorithms comma-separated)."""
    out = {}
    for key, value in settings.items():
        if _setting_rule(key) is None:
            continue
        if isinstance(value, (list, tuple)):
            out[key] = ",".join(map(str, value))
        elif isinstance(value, float):
            out[key] = repr(value)
        else:
            out[key] = str(value)
    return out


def settings_from_query(params) -> tuple[dict, list]:
    """Settings from URL query parameters (:func:`settings_to_query`): ``(settings, ignored keys)``.
    Raises ValueError naming a bad value."""
    return check_settings({str(k): v for k, v in dict(params).items()})
