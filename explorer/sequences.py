"""Time series and longitudinal (subject) data in the app, kept free of Streamlit.

* :func:`order_rows` puts a table's rows in time order (within subject), giving the
  ``lengths`` that :class:`~mapdp_core.MAPIHMM` and :class:`~mapdp_core.HardHDPHMM` take.
* :func:`sequence_runs` runs MAP-iHMM (EJS Section 6), the hard HDP-HMM and the time-blind
  MAP-DP on the same numbers and records their states per sweep, colours matched to the
  truth (or to MAP-iHMM) so that a state keeps its colour across algorithms.
* :func:`trajectory_fit` clusters subjects by their regression lines with
  :class:`~mapdp_core.MixedEffectsMAPDP` (EJS Section 7), X = [1, time].
* :func:`group_fit` finds clusters shared across groups (schools, wards) with the hard HDP
  (Huggins et al., eq 19) beside the group-blind MAP-DP, with each group's mix of clusters.
* :func:`hmm_demo`, :func:`longitudinal_demo` and :func:`grouped_demo` simulate data for the
  page's demos.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from mapdp_core.models.dpmeans import DPMeans
from mapdp_core.models.hard_common import default_lambdas
from mapdp_core.models.hdp import HardHDP
from mapdp_core.models.hdp_hmm import HardHDPHMM
from mapdp_core.models.hdp_hmm_direct import HardHDPHMMDirect, default_direct_params
from mapdp_core.models.ihmm import BEST_STARTS, MAPIHMM
from mapdp_core.models.mapdp import MAPDP
from mapdp_core.evaluation.metrics import clustering_scores, match_labels
from mapdp_core.models.mixed_effects import MixedEffectsMAPDP
from mapdp_core.data.synthetic import hmm_sequence

__all__ = ["SEQUENCE_ALGORITHMS", "SequenceRun", "Trajectories", "order_rows", "sequence_matrix", "sequence_runs",
           "sequence_summary", "SequenceData", "prepare_sequence", "trajectory_fit", "hmm_demo", "longitudinal_demo",
           "GroupFit", "group_fit", "grouped_demo", "PENALTY_SCALES", "structure_verdict", "SEQUENCE_BLIND",
           "GROUP_BLIND"]

SEQUENCE_ALGORITHMS = ("MAP-iHMM", "Hard HDP-HMM", "Hard HDP-HMM (direct)", "MAP-DP (time-blind)")
#: What the page runs until the user chooses: MAP-iHMM beside its hard limit and the time-blind MAP-DP.
SEQUENCE_DEFAULTS = ("MAP-iHMM", "Hard HDP-HMM", "MAP-DP (time-blind)")
#: The sequence algorithms that ignore the order of the rows (:func:`structure_verdict`).
SEQUENCE_BLIND = ("MAP-DP (time-blind)",)
#: Most sweeps kept per algorithm for the sweep selector (first and last always kept).
MAX_SWEEPS_SHOWN = 20


def order_rows(table: pd.DataFrame, time_column, subject_column=None) -> tuple[np.ndarray, list[int] | None]:
    """Row positions of ``table`` in time order (stable; within subject when ``subject_column``
    is given, subjects in order of first appearance) and the sequence lengths (None: one sequence).

    Rows whose time (or subject) is missing are left out."""
    if time_column not in table.columns:
        raise ValueError(f"time column {time_column!r} is not in the table.")
    t = table[time_column]
    if not pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_datetime64_any_dtype(t):
        converted = pd.to_numeric(t, errors="coerce")
        t = converted if converted.notna().sum() >= 0.9 * t.notna().sum() else pd.to_datetime(t, errors="coerce")
    keep = t.notna().to_numpy().copy()
    frame = pd.DataFrame({"t": t.to_numpy(), "pos": np.arange(len(table))})
    if subject_column is None:
        frame = frame[keep]
        return frame.sort_values("t", kind="stable")["pos"].to_numpy(), None
    if subject_column not in table.columns:
        raise ValueError(f"subject column {subject_column!r} is not in the table.")
    s = table[subject_column]
    keep &= s.notna().to_numpy()
    frame["s"] = pd.Categorical(s, categories=pd.unique(s.dropna()), ordered=True).codes
    frame = frame[keep].sort_values(["s", "t"], kind="stable")
    lengths = frame.groupby("s", sort=True).size()
    return frame["pos"].to_numpy(), [int(n) for n in lengths[lengths > 0]]


def sequence_matrix(X: pd.DataFrame, exclude=(), keep_gaps: bool = False) -> tuple[np.ndarray, list]:
    """The numeric feature columns of ``X`` (less ``exclude``) z-scored; a gap stays NaN with
    ``keep_gaps`` (for the models that leave gaps out of the likelihood), else is set to 0 (its mean)."""
    cols = [c for c in X.columns if c not in set(exclude) and pd.api.types.is_numeric_dtype(X[c])]
    if not cols:
        raise ValueError("no numeric feature column is left besides the time and subject columns.")
    Z = X[cols].to_numpy(dtype=float)
    mu, sd = np.nanmean(Z, axis=0), np.nanstd(Z, axis=0)
    sd[~(sd > 0)] = 1.0
    Z = (Z - mu) / sd
    if not keep_gaps:
        Z[np.isnan(Z)] = 0.0
    return np.ascontiguousarray(Z), cols


@dataclass
class SequenceRun:
    """One algorithm's run on a sequence: labels per shown sweep (colours matched), K and NMI."""

    name: str
    sweeps: list            # sweep numbers shown
    labels: list            # ndarray (T,) per shown sweep, ids matched to the reference
    n_clusters: list        # K per shown sweep
    nmi: float | None = None
    ari: float | None = None
    seconds: float = 0.0
    error: str | None = None

    @property
    def final(self) -> np.ndarray:
        return self.labels[-1]


def _thin(states: list, cap: int = MAX_SWEEPS_SHOWN) -> list:
    if len(states) <= cap:
        return states
    keep = np.unique(np.linspace(0, len(states) - 1, cap).round().astype(int))
    return [states[i] for i in keep]


#: The multiples of the hard models' data-driven penalties offered by the page (for the hard HDP
#: and the hard HDP-HMM, :func:`~mapdp_core.models.hard_common.default_lambdas`: from the noise
#: variance of a quick MAP-DP fit; for the direct one, ``default_direct_params``): below 1, more
#: states or clusters; above 1, fewer.
PENALTY_SCALES = (0.25, 0.5, 1.0, 2.0, 4.0)


def _scaled_lambdas(X: np.ndarray, model: str, scale: float) -> dict:
    lam_global, lam_local = default_lambdas(X, model=model)
    return {"lambda_global": float(scale) * lam_global, "lambda_local": float(scale) * lam_local}


def _direct_params(X: np.ndarray, scale: float) -> dict:
    lam_global, lam_local, zeta = default_direct_params(X)
    return {"lambda_global": float(scale) * lam_global, "lambda_local": float(scale) * lam_local, "zeta": zeta}


def _filled(X: np.ndarray) -> np.ndarray:
    """The z-scored X with each gap at its column's mean (0), for the models without gaps."""
    return np.where(np.isnan(X), 0.0, X) if np.isnan(X).any() else X


def _lowest_nll(run, n_restarts: int) -> list:
    """The states of the restart whose last state has the lowest ``neg_log_joint`` (as ``fit``
    keeps: MAP-iHMM's ``init="best"`` runs one restart per start on numeric data)."""
    runs = [list(run(r)) for r in range(n_restarts)]
    return min(runs, key=lambda states: states[-1].neg_log_joint)


def _estimators(N0: float, M0: float, penalty: float) -> dict:
    return {"MAP-iHMM": lambda X, L: _lowest_nll(lambda r: MAPIHMM(N0=N0, M0=M0, likelihood="normal_wishart",
                                                                   prior=None, max_iter=50).iter_sweeps(X, L, restart=r),
                                                 len(BEST_STARTS)),
            "Hard HDP-HMM": lambda X, L: HardHDPHMM(max_iter=50, **_scaled_lambdas(_filled(X), "hmm", penalty)
                                                    ).iter_sweeps(_filled(X), L),
            "Hard HDP-HMM (direct)": lambda X, L: HardHDPHMMDirect(max_iter=50, **_direct_params(_filled(X), penalty)
                                                                   ).iter_sweeps(_filled(X), L),
            "MAP-DP (time-blind)": lambda X, L: MAPDP(N0=N0, likelihood="normal_wishart", prior=None,
                                                      max_iter=50, random_state=0).iter_sweeps(X)}


def sequence_runs(X: np.ndarray, lengths=None, truth=None, *, N0: float = 3.0, M0: float = 2.0,
                  algorithms=SEQUENCE_DEFAULTS, penalty: float = 1.0) -> list[SequenceRun]:
    """Run the sequence algorithms on ``X`` (T, D), rows in time order; ``lengths`` splits the rows
    into sequences. Every shown sweep's labels are matched to ``truth`` (codes, -1 unknown) when
    given, else to the first algorithm's final labels, so that one state keeps one colour.
    ``penalty`` multiplies the hard HDP-HMMs' data-driven λs (ζ of the direct one unchanged). An algorithm that fails is
    recorded with its error (the others still run)."""
    import time

    X = np.ascontiguousarray(X, dtype=float)
    unknown = [a for a in algorithms if a not in SEQUENCE_ALGORITHMS]
    if unknown:
        raise ValueError(f"unknown sequence algorithm(s) {unknown}; choose among {list(SEQUENCE_ALGORITHMS)}.")
    if not float(penalty) > 0:
        raise ValueError(f"penalty must be a positive multiple of the default λs, got {penalty!r}.")
    makers = _estimators(float(N0), float(M0), float(penalty))
    runs = []
    for name in algorithms:
        t0 = time.perf_counter()
        try:
            states = _thin(list(makers[name](X, lengths)))
        except (ValueError, np.linalg.LinAlgError) as exc:
            runs.append(SequenceRun(name, [], [], [], error=str(exc)))
            continue
        runs.append(SequenceRun(name, [int(s.iteration) for s in states], [np.asarray(s.labels) for s in states],
                                [int(s.n_clusters) for s in states], seconds=time.perf_counter() - t0))
    reference = None if truth is None else np.asarray(truth)
    for run in runs:
        if run.error:
            continue
        if reference is not None:
            scores = clustering_scores(reference, run.final) if (reference >= 0).any() else {}
            run.nmi, run.ari = scores.get("nmi"), scores.get("ari")
        ref = reference if reference is not None else next(r.final for r in runs if not r.error)
        run.labels = [match_labels(ref, lab) for lab in run.labels]
    return runs


def sequence_summary(runs: list[SequenceRun]) -> pd.DataFrame:
    """One row per algorithm: K, sweeps, NMI and ARI (when the truth is known), seconds."""
    rows = []
    for r in runs:
        row = {"algorithm": r.name, "K": r.n_clusters[-1] if r.n_clusters else None,
               "sweeps": r.sweeps[-1] if r.sweeps else None, "seconds": round(r.seconds, 2)}
        if r.nmi is not None:
            row |= {"NMI": round(float(r.nmi), 3), "ARI": round(float(r.ari), 3)}
        if r.error:
            row["error"] = r.error
        rows.append(row)
    return pd.DataFrame(rows)


def _phrase(name: str) -> str:
    """An algorithm's name as it reads in a sentence: "Hard HDP-HMM (direct)" -> "the direct
    hard HDP-HMM", "MAP-DP (time-blind)" -> "the time-blind MAP-DP", "MAP-iHMM" as it is."""
    base, _, tag = name.partition(" (")
    tag = tag.rstrip(")")
    if base.startswith("Hard "):
        base = "hard " + base[len("Hard "):]
    if tag:
        return f"the {tag} {base}"
    return f"the {base}" if base.startswith("hard ") else base


def _listed(names: list) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


#: NMIs (at the two decimals shown) this far apart or less are said to be equal within noise
#: (a convention of the sentence, not a measured noise level)
NMI_NOISE = 0.02


def structure_verdict(summary: pd.DataFrame, blind, what: str) -> str | None:
    """One sentence saying whether the models that use the structure beat the best of the
    structure-blind ones ``blind`` (names of rows of ``summary``), by the summary's NMI
    compared at the two decimals shown, those at most :data:`NMI_NOISE` apart equal within noise; ``what`` names the structure ("the order of the
    rows", "the groups"). None when the summary has no NMI (the truth is unknown) or lacks
    a structure-blind or a structured row with one.

    The page shows it under its table so that it says plainly when a structure-blind model
    wins (issue 27)."""
    if "NMI" not in summary.columns:
        return None
    scored = summary[summary["NMI"].notna()]
    nmi = {str(a): round(float(v), 2) for a, v in zip(scored["algorithm"], scored["NMI"])}
    blind_scored = [a for a in blind if a in nmi]
    structured = [a for a in nmi if a not in set(blind)]
    if not blind_scored or not structured:
        return None
    ref = max(blind_scored, key=lambda a: nmi[a])  # the best structure-blind model (first on a tie)
    b = f"{_phrase(ref)} (NMI {nmi[ref]:.2f})"

    def named(names):
        return _listed([f"{_phrase(a)} (NMI {nmi[a]:.2f})" for a in names])

    # NMIs this close are equal within noise (issue 43: "does better" on 1.00 against 0.99)
    better = [a for a in structured if nmi[a] > nmi[ref] + NMI_NOISE + 1e-9]
    worse = [a for a in structured if nmi[a] < nmi[ref] - NMI_NOISE - 1e-9]
    same = [a for a in structured if a not in better and a not in worse]
    verb = "does" if len(better) == 1 else "do"
    if better and worse:
        return (f"Here {named(better)} {verb} better than {b}, which does better than {named(worse)}: "
                f"using {what} helps the first, not the second.")
    if better:
        return f"Here {named(better)} {verb} better than {b}: using {what} helps."
    if worse:
        them = "it" if len(worse) == 1 else "them"
        return (f"Here {b} does better than {named(worse)}: on these data, using {what} does not help {them}"
                + (f" ({named(same)} does as well)." if same else "."))
    verb = "does" if len(same) == 1 else "do"
    return (f"Here {named(same)} {verb} as well as {b}, equal within noise (NMIs {NMI_NOISE:.2f} or less apart are "
            f"not told apart): using {what} neither helps nor hurts.")


@dataclass
class Trajectories:
    """Subjects clustered by their lines (intercept + slope * time)."""

    subjects: np.ndarray          # subject ids
    labels: np.ndarray            # cluster per subject (matched to the truth when known)
    coef: np.ndarray              # (n_subjects, 2) intercept, slope per subject
    means: np.ndarray             # (K, 2) per cluster (rows in cluster-id order)
    clusters: pd.DataFrame        # cluster, size, intercept, slope
    long: pd.DataFrame = field(repr=False)  # subject, time, response, cluster (rows in time order)
    nmi: float | None = None

    @property
    def n_clusters(self) -> int:
        return len(self.clusters)


def trajectory_fit(table: pd.DataFrame, subject_column, time_column, response_column, *, N0: float = 1.0,
                   truth_column=None, seed: int = 0) -> Trajectories:
    """Cluster the subjects of a long table (one row per visit) by MixedEffectsMAPDP with X = [1, time].

    ``truth_column``: a per-row class constant within subject (e.g. a simulated cluster), used
    for the NMI and to match cluster ids. Rows with a missing subject, time or response are left out."""
    for c in (subject_column, time_column, response_column):
        if c not in table.columns:
            raise ValueError(f"column {c!r} is not in the table.")
    if len({subject_column, time_column, response_column}) < 3:
        raise ValueError("the subject, time and response columns must be three different columns.")
    cols = [subject_column, time_column, response_column] + ([truth_column] if truth_column is not None else [])
    long = table[cols].copy()
    long.columns = ["subject", "time", "response"] + (["truth"] if truth_column is not None else [])
    long["time"] = pd.to_numeric(long["time"], errors="coerce")
    long["response"] = pd.to_numeric(long["response"], errors="coerce")
    long = long.dropna(subset=["subject", "time", "response"])
    if long.empty:
        raise ValueError("no row has a numeric time and response and a subject.")
    if long["subject"].nunique() < 2:
        raise ValueError("at least two subjects are needed to cluster subjects.")
    order = pd.Categorical(long["subject"], categories=pd.unique(long["subject"]), ordered=True).codes
    long = long.assign(_s=order).sort_values(["_s", "time"], kind="stable").drop(columns="_s").reset_index(drop=True)
    t = long["time"].to_numpy(dtype=float)
    design = np.column_stack([np.ones(len(t)), t])
    try:
        model = MixedEffectsMAPDP(N0=float(N0), random_state=seed).fit(design, long["response"].to_numpy(dtype=float),
                                                                      long["subject"].to_numpy())
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"the subjects' lines could not be fitted ({exc}); are the times all the same?") from exc
    labels = np.asarray(model.labels_, dtype=np.int64)
    means = np.asarray(model.cluster_means_, dtype=float)
    nmi = None
    if truth_column is not None:
        truth_by_subject = long.groupby("subject", sort=False)["truth"].first().reindex(model.subjects_)
        codes = pd.Categorical(truth_by_subject).codes.astype(np.int64)
        nmi = float(clustering_scores(codes, labels)["nmi"])
        matched = match_labels(codes, labels)
        # cluster means follow their clusters' new ids
        new_means = np.full((int(matched.max()) + 1, means.shape[1]), np.nan)
        for old, new in zip(labels, matched):
            new_means[new] = means[old]
        labels, means = matched, new_means
    ids = np.unique(labels)
    sizes = pd.Series(labels).value_counts()
    clusters = pd.DataFrame({"cluster": ids, "size": [int(sizes[k]) for k in ids],
                             "intercept": means[ids, 0], "slope": means[ids, 1]})
    by_subject = dict(zip(model.subjects_, labels))
    long["cluster"] = long["subject"].map(by_subject).astype(np.int64)
    return Trajectories(np.asarray(model.subjects_), labels, np.asarray(model.coef_), means, clusters, long, nmi)


def hmm_demo(T: int = 600, seed: int = 0) -> pd.DataFrame:
    """A sticky 3-state Gaussian HMM in two dimensions (stay 0.97), as a table: time, x1, x2, state."""
    X, z, _ = hmm_sequence(T=T, K=3, seed=seed, d=2, means=[[0.0, 0.0], [3.0, -1.0], [1.0, 3.0]], sigma=0.5,
                           self_transition=0.97)
    return pd.DataFrame({"time": np.arange(T), "x1": X[:, 0], "x2": X[:, 1], "state": z})


def longitudinal_demo(n_subjects: int = 60, visits: int = 5, seed: int = 0) -> pd.DataFrame:
    """Three clusters of straight lines (rising, flat, falling), ``n_subjects`` subjects with
    ``visits`` visits at times 0..visits-1, in long form: subject, time, response, cluster."""
    rng = np.random.default_rng(seed)
    lines = np.array([[10.0, 2.0], [14.0, 0.0], [18.0, -2.0]])  # intercept, slope
    cluster = rng.integers(0, len(lines), n_subjects)
    beta = lines[cluster] + rng.normal(0.0, [0.5, 0.15], (n_subjects, 2))
    t = np.tile(np.arange(visits, dtype=float), n_subjects)
    s = np.repeat(np.arange(n_subjects), visits)
    y = beta[s, 0] + beta[s, 1] * t + rng.normal(0.0, 0.5, len(t))
    return pd.DataFrame({"subject": [f"S{i + 1:02d}" for i in s], "time": t, "response": y,
                         "cluster": cluster[s]})


#: Most time steps the app runs the sequence algorithms on (the first in time order beyond it).
MAX_SEQUENCE_ROWS = 5000


@dataclass
class SequenceData:
    """Rows in time order, ready for :func:`sequence_runs`."""

    X: np.ndarray               # (T, D) z-scored numeric features
    columns: list               # their names
    values: pd.DataFrame        # the same columns, original units, rows in time order
    x: np.ndarray               # what the x axis shows: the time, or the step when there are several sequences
    x_title: str
    lengths: list | None
    truth: np.ndarray | None
    note: str = ""


def prepare_sequence(table: pd.DataFrame, features: pd.DataFrame, time_column, subject_column=None, truth=None,
                     max_rows: int = MAX_SEQUENCE_ROWS) -> SequenceData:
    """Order the rows of ``table`` by ``time_column`` (within ``subject_column``), take the numeric
    columns of ``features`` (rows aligned with ``table``) other than the time and subject, and keep
    at most ``max_rows`` time steps (whole sequences first; said in ``note``)."""
    order, lengths = order_rows(table, time_column, subject_column)
    note = []
    if len(order) < len(table):
        note.append(f"{len(table) - len(order):,} rows without a time or subject are left out.")
    if len(order) > max_rows:
        if lengths is None:
            order = order[:max_rows]
        else:
            ends = np.cumsum(lengths)
            n_seq = max(int(np.searchsorted(ends, max_rows, side="right")), 1)
            lengths = lengths[:n_seq]
            order = order[:int(ends[n_seq - 1])]
        note.append(f"The first {len(order):,} time steps are used (of {len(table):,} rows).")
    if len(order) < 2:
        raise ValueError("at least two rows with a time are needed for a sequence.")
    values = features.iloc[order].reset_index(drop=True)
    X, cols = sequence_matrix(values, exclude=(time_column, subject_column), keep_gaps=True)
    gaps = int(np.isnan(X).sum())
    if gaps:
        note.append(f"{gaps:,} gaps: MAP-iHMM and MAP-DP leave them out of the likelihood; the hard HDP-HMMs "
                    "set each to its column's mean.")
    if lengths is None:
        x, x_title = table[time_column].to_numpy()[order], str(time_column)
    else:
        x, x_title = np.arange(len(order)), f"step (the {len(lengths)} subjects' sequences one after another)"
    t = None if truth is None else np.asarray(truth)[order]
    return SequenceData(X, cols, values[cols], x, x_title, lengths, t, " ".join(note))


# ----------------------------------------------------------------------------- groups

#: The algorithms of the grouped view: the hard HDP and, for contrast, two that ignore the groups.
GROUP_ALGORITHMS = ("Hard HDP", "DP-means (group-blind)", "MAP-DP (group-blind)")
#: The grouped view's algorithms that ignore the groups (:func:`structure_verdict`).
GROUP_BLIND = ("DP-means (group-blind)", "MAP-DP (group-blind)")


@dataclass
class GroupFit:
    """Clusters shared across groups: each algorithm's labels (rows as given, colours matched),
    the summary per algorithm and, per algorithm, each group's share of every cluster."""

    columns: list                # the features used (z-scored for the fits)
    values: pd.DataFrame         # those columns, original units, the rows used
    groups: np.ndarray           # the group of each row used
    labels: dict                 # algorithm -> ndarray of cluster ids
    summary: pd.DataFrame        # algorithm, K, clusters per group (mean), seconds, NMI/ARI
    mix: dict                    # algorithm -> DataFrame (group x cluster shares, rows sum to 1)
    note: str = ""


def group_fit(table: pd.DataFrame, features: pd.DataFrame, group_column, *, truth=None, penalty: float = 1.0,
              N0: float = 3.0, exclude=()) -> GroupFit:
    """Cluster the rows of a grouped table three ways: the hard HDP (clusters shared across the
    groups, each group paying ``lambda_local`` for every cluster it uses beyond its first;
    Huggins et al. eq 19 with erratum H5), DP-means ignoring the groups, and MAP-DP (its
    automatic choices), ignoring them too.

    ``features``: rows aligned with ``table``; its numeric columns other than the group (and
    ``exclude``) are z-scored, a gap set to 0. ``penalty`` multiplies the hard HDP's
    data-driven λs (:func:`~mapdp_core.models.hard_common.default_lambdas`: ``(3u, u)``, u the
    reach of a cluster from the noise variance of a MAP-DP fit) and DP-means' threshold, the
    reach ``u`` itself (``lambda_local``): a row farther than √u from every centre is beyond
    any cluster's noise and opens its own. (The HDP's one-group threshold ``4u``, which an
    earlier version gave DP-means, left it at one cluster on the grouped demo: without the
    groups, nothing else opens a cluster.) Rows without a group are left out."""
    import time

    if group_column not in table.columns:
        raise ValueError(f"group column {group_column!r} is not in the table.")
    if not float(penalty) > 0:
        raise ValueError(f"penalty must be a positive multiple of the default λs, got {penalty!r}.")
    keep = table[group_column].notna().to_numpy()
    if keep.sum() < 2:
        raise ValueError("at least two rows with a group are needed.")
    groups = table[group_column].to_numpy()[keep]
    if len(pd.unique(groups)) < 2:
        raise ValueError(f"the column {group_column!r} has a single group: choose a column with several groups.")
    values = features[keep].reset_index(drop=True)
    X, cols = sequence_matrix(values, exclude=(group_column, *exclude))
    note = f"{int((~keep).sum()):,} rows without a group are left out." if (~keep).any() else ""
    lam = _scaled_lambdas(X, "hdp", penalty)
    makers = {
        "Hard HDP": lambda: HardHDP(**lam).fit(X, groups=groups).labels_,
        "DP-means (group-blind)": lambda: DPMeans(lam=lam["lambda_local"]).fit(X).labels_,
        "MAP-DP (group-blind)": lambda: MAPDP(N0=N0, likelihood="normal_wishart", prior=None,
                                             random_state=0).fit(X).labels_,
    }
    reference = None if truth is None else np.asarray(truth)[keep]
    labels, rows, mix = {}, [], {}
    codes = pd.Categorical(groups, categories=pd.unique(groups), ordered=True).codes
    for name, make in makers.items():
        t0 = time.perf_counter()
        z = np.asarray(make(), dtype=np.int64)
        seconds = time.perf_counter() - t0
        ref = reference if reference is not None and (reference >= 0).any() else labels.get("Hard HDP")
        if ref is not None:
            z = match_labels(ref, z)
        labels[name] = z
        used = pd.DataFrame({"g": codes, "k": z}).drop_duplicates().groupby("g").size()
        row = {"algorithm": name, "K": int(len(np.unique(z))), "clusters per group": round(float(used.mean()), 2),
               "seconds": round(seconds, 2)}
        if reference is not None and (reference >= 0).any():
            sc = clustering_scores(reference[reference >= 0], z[reference >= 0])
            row |= {"NMI": round(float(sc["nmi"]), 3), "ARI": round(float(sc["ari"]), 3)}
        rows.append(row)
        shares = pd.crosstab(pd.Series(groups, name="group"), pd.Series(z, name="cluster"), normalize="index")
        mix[name] = shares.reindex(pd.unique(groups))
    return GroupFit(cols, values[cols], groups, labels, pd.DataFrame(rows), mix, note)


def grouped_demo(n_groups: int = 24, per_group: int = 60, seed: int = 0) -> pd.DataFrame:
    """Rows in ``n_groups`` groups (say, schools) drawn from three clusters shared by all groups,
    each group using one or two of them: group, x1, x2, cluster."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [5.0, 0.0], [2.5, 4.5]])
    parts = []
    for g in range(n_groups):
        used = rng.choice(3, size=int(rng.integers(1, 3)), replace=False)
        z = rng.choice(used, size=per_group)
        x = centres[z] + rng.normal(0.0, 0.8, (per_group, 2))
        parts.append(pd.DataFrame({"group": f"G{g + 1:02d}", "x1": x[:, 0], "x2": x[:, 1], "cluster": z}))
    return pd.concat(parts, ignore_index=True)
