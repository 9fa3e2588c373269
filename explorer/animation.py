"""Animation frames: :func:`animation_frames` turns recorded runs into what an animation draws (a
2-D view, colours stable across frames and across algorithms, 2-sd ellipses, K, the objective
and NMI/ARI per frame) as :class:`Frames`; :mod:`explorer.figures` draws them.
"""
from __future__ import annotations

import weakref

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from mapdp_core.evaluation.metrics import codes, match_labels

from explorer.runner import Run, _scores, fitted_model

__all__ = ["Frames", "animation_frames", "objective_note", "MAX_FRAMES", "ENDINGS", "ending", "step_word", "frame_label", "summary_rows",
           "merged_groups", "groups_text", "SWEEP_STEPS", "SweepStepFrames", "sweep_step_frames", "PLAY_POINTS",
           "play_rows", "frames_of_rows"]

#: Most frames kept per algorithm for an animation (evenly thinned beyond, first and last kept;
#: each panel's title gives its own step number). Every frame costs a redraw; the browser test
#: times the slider against the frame count (commit 4aad77c measured 60 against 20 frames).
MAX_FRAMES = 20


#: Points drawn in each panel while the animation plays (issue 43): the browser draws every panel anew
#: at every frame: in Chromium on this 2-core machine (load 4-5, side by side) a frame of Play took 0.63-1.10 s
#: with 4 000 points, 0.56-0.79 s with 1 000 (0.66-0.74 s with 500).
PLAY_POINTS = 1000


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
    endings : list of str
        Per algorithm, how its run ended (:data:`ENDINGS`): "converged", "stopped" (by the time
        limit or Stop) or "step limit" (its steps ran out without converging: a sampler's
        sweeps, an iteration cap).
    reported : list of dict
        Per algorithm, the partition it reports (:attr:`explorer.runner.Run.shown`: its last step,
        or a sampler's most probable one): step, K, last (True when it is the last step, the
        animation's last frame), and nmi, ari when the truth is known; with merged components
        (``MAPDP(merge=...)``), K is the number of clusters and ``components`` the number of
        components.
    groups : list of (list of (int, tuple of int)) or None
        Per algorithm, when its components were grouped into clusters (issue 24): for each
        cluster, its colour id on the last frame and the components (the model's numbering,
        ``component_labels_``) that form it, clusters in the model's order; None otherwise. The
        last frame is coloured by cluster; earlier frames by component, the largest component of
        each cluster already in its cluster's colour.
    """

    algorithms: list
    sweeps: list
    colours: list
    ellipses: list
    info: list
    n_frames: int
    history: list
    endings: list = field(default_factory=list)
    reported: list = field(default_factory=list)
    groups: list = field(default_factory=list)

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


def truth_view(truth: np.ndarray | None, coords: np.ndarray, sample: np.ndarray | None = None):
    """The true groups as a panel beside the algorithms draws them (``animation_figure``'s
    ``truth``): the colour id of each displayed row (the reference :func:`animation_frames`
    matches every algorithm's colours to; rows without a label, such as PLOS 5.3's outliers, one
    group of their own) and each group's 2-sd ellipse from all rows; None without labels."""
    if truth is None or not np.any(np.asarray(truth) >= 0):
        return None
    truth = np.asarray(truth)
    reference = np.where(truth >= 0, truth, truth.max() + 1)
    shown = reference if sample is None else reference[np.asarray(sample)]
    return shown, _ellipses(coords, reference)


def merged_groups(model) -> tuple[np.ndarray, np.ndarray] | None:
    """(component of each row, cluster of each component) of a fitted model whose components were
    grouped into clusters (``MAPDP(merge=...)`` with at least one merge), else None."""
    if model is None or not len(getattr(model, "merges_", ())):
        return None
    cluster_of = np.asarray(getattr(model, "cluster_of_component_", []), dtype=np.int64)
    components = np.asarray(getattr(model, "component_labels_", []), dtype=np.int64)
    if cluster_of.size == 0 or components.size == 0 or cluster_of.max() + 1 >= cluster_of.size:
        return None
    return components, cluster_of


def groups_text(groups, most: int | None = None) -> str:
    """Which components form each cluster, in words: "cluster 0 = components 0+3 · cluster 1 = component 1"
    (with ``most``, a cluster of more components lists that many: "0+5+6+… (18 components)")."""
    def members(c):
        if most is not None and len(c) > most:
            return "+".join(map(str, c[:most])) + f"+… ({len(c)} components)"
        return "+".join(map(str, c))
    return " · ".join(f"cluster {k} = component{'s' if len(c) > 1 else ''} {members(c)}"
                      for k, (_, c) in enumerate(groups))


def _merged_colours(reference, components: np.ndarray, cluster_of: np.ndarray):
    """The last frame's colour ids by cluster, the same frame's ids by component (each cluster's
    largest component in its cluster's colour, the others in new colours) and the groups."""
    clusters = cluster_of[components]
    by_cluster = match_labels(reference, clusters) if reference is not None else clusters.copy()
    colour_of_cluster = np.full(int(cluster_of.max()) + 1, -1, dtype=np.int64)
    colour_of_cluster[clusters] = by_cluster
    sizes = np.bincount(components, minlength=cluster_of.size)
    top = max(int(by_cluster.max()), int(np.max(reference)) if reference is not None and len(reference) else -1)
    colour_of_component = np.empty(cluster_of.size, dtype=np.int64)
    groups = []
    for k in range(colour_of_cluster.size):
        members = np.flatnonzero(cluster_of == k)
        largest = members[np.argmax(sizes[members])]
        for c in members:
            if c == largest:
                colour_of_component[c] = colour_of_cluster[k]
            else:
                top += 1
                colour_of_component[c] = top
        groups.append((int(colour_of_cluster[k]), tuple(int(c) for c in members)))
    return by_cluster, colour_of_component[components], groups


def animation_frames(runs: list[Run], coords: np.ndarray, sample: np.ndarray | None = None,
                     truth: np.ndarray | None = None, max_frames: int = MAX_FRAMES, *,
                     models: list | None = None, data=None) -> Frames:
    """Match clusters across frames and algorithms and compute what each frame shows.

    Colours follow DESIGN.md "Labels across frames": each algorithm's final clustering is
    matched (Hungarian, maximum overlap) to a shared reference (the ground truth when known,
    otherwise the first algorithm's final clustering), then every earlier frame to the
    frame after it, so a cluster keeps its colour as the sweeps go on.

    A row labelled -1 in a state (one SUGS has not visited, or DP search has not placed, yet)
    keeps the colour id -1 (:func:`explorer.figures.animation_figure` draws it grey): it is
    no cluster, has no ellipse, and is left out of the frame's NMI and ARI; the frame's
    ``unvisited`` counts such rows.

    Merged components (issue 24): ``models`` (one fitted estimator or None per run, e.g.
    :func:`explorer.runner.fitted_model`), or ``data`` (the runs' :class:`~explorer.sources.AppData`,
    from which the fitted model of each run that groups components is made), tell which
    components ``MAPDP(merge=...)`` grouped into clusters. The last frame of such a run is then
    coloured by cluster (the clusters a person reads, with their NMI and ARI), and
    :attr:`Frames.groups` says which components form each cluster.
    """
    if models is None:
        models = [_model_of(data, r) if data is not None else None for r in runs]
    N = coords.shape[0]
    sample = np.arange(N) if sample is None else np.asarray(sample)
    reference = None
    if truth is not None and np.any(truth >= 0):
        reference = np.where(truth >= 0, truth, truth.max() + 1)
    algorithms, sweeps, colours, ellipses, info, history, endings, reported = [], [], [], [], [], [], [], []
    all_groups = []
    for run, model in zip(runs, list(models) + [None] * (len(runs) - len(models))):
        history.append(pd.DataFrame([{"sweep": st.iteration, "K": st.n_clusters, "objective": st.objective,
                                      "changed": st.n_changed,
                                      "neg_log_joint": float(getattr(st, "neg_log_joint", np.nan))}
                                     for st in run.states]))
        keep = _thin(len(run.states), max_frames)
        states = [run.states[i] for i in keep]
        merged = merged_groups(model)
        if merged is not None and (len(merged[0]) != len(states[-1].labels)
                                   or not _same_partition(merged[0], states[-1].labels)):
            merged = None  # the model is not of this run's last frame
        matched = [None] * len(states)
        groups = None
        if merged is not None:
            if reference is None:
                reference = merged[1][merged[0]]
            matched[-1], following, groups = _merged_colours(reference, *merged)
        else:
            if reference is None:
                reference = np.asarray(states[-1].labels)
            matched[-1] = following = match_labels(reference, states[-1].labels)
        for t in range(len(states) - 2, -1, -1):
            matched[t] = following = match_labels(following, states[t].labels)
        rows = []
        for i, (st, lab) in enumerate(zip(states, matched)):
            row = {"sweep": st.iteration, "K": st.n_clusters, "objective": st.objective, "changed": st.n_changed,
                   "unvisited": int(np.count_nonzero(lab < 0))}
            if groups is not None:
                row["components"] = st.n_clusters
                if i == len(states) - 1:
                    row["K"] = len(groups)
            if truth is not None and np.any(truth >= 0):
                row.update(_scores(truth, lab))
            rows.append(row)
        algorithms.append(run.algorithm)
        sweeps.append([st.iteration for st in states])
        colours.append([lab[sample] for lab in matched])
        ellipses.append([_ellipses(coords, lab) for lab in matched])
        info.append(pd.DataFrame(rows))
        endings.append(ending(run))
        shown = run.shown if run.estimator is not None else run.final
        said = {"step": int(shown.iteration), "K": int(shown.n_clusters),
                "last": int(shown.iteration) == int(run.final.iteration)}
        said_labels = shown.labels
        if groups is not None and said["last"]:
            said.update(K=len(groups), components=int(shown.n_clusters))
            said_labels = matched[-1]
        if truth is not None and np.any(truth >= 0):
            said.update(_scores(truth, said_labels))
        reported.append(said)
        all_groups.append(groups)
    n_frames = max((len(s) for s in sweeps), default=0)
    return Frames(algorithms, sweeps, colours, ellipses, info, n_frames, history, endings, reported, all_groups)


def objective_note(info: pd.DataFrame, name: str = "MAP-DP") -> str:
    """Why an algorithm's objective rose between sweeps, in words ("" when it never rose): MAP-DP's
    E (PLOS Algorithm 3) sums each row's winning cost at the moment that row moved, against the
    partition as it stood then, so it depends on the visiting order and can rise a little; each
    move lowers the exact joint -ln p(X, z), which is what the sweep minimises. Measured on
    simulated mixed tables: E rose in 16 of 24 runs, the joint in none (issue 42)."""
    if "objective" not in info or len(info) < 2:
        return ""
    e = info["objective"].to_numpy(dtype=float)
    up = np.flatnonzero(np.diff(e) > 1e-9 * np.maximum(np.abs(e[1:]), 1.0))
    if not up.size:
        return ""
    i = int(up[0]) + 1
    sweeps = info["sweep"].to_numpy()
    text = (f"{name}'s objective E rose at sweep {int(sweeps[i])} (by {e[i] - e[i - 1]:.3g})"
            + (f" and {up.size - 1} more time{'s' if up.size > 2 else ''}" if up.size > 1 else "") + ". ")
    joint = info["neg_log_joint"].to_numpy(dtype=float) if "neg_log_joint" in info else np.full(len(e), np.nan)
    if np.isfinite(joint).all():
        rose = bool((np.diff(joint) > 1e-9 * np.maximum(np.abs(joint[1:]), 1.0)).any())
        text += ("E adds up each row's cost at the moment the row moved, against the partition as it stood then, so "
                 "it depends on the order of the rows and can rise a little. What each move lowers is the exact "
                 f"joint −ln p(X, z), which went from {joint[0]:,.1f} to {joint[-1]:,.1f}"
                 + (", though it rose too between some sweeps." if rose else ", never rising."))
    return text


def _same_partition(a, b) -> bool:
    """Whether two labellings are the same partition (up to renumbering)."""
    a, b = np.asarray(a), np.asarray(b)
    pairs = np.unique(np.column_stack([a, b]), axis=0)
    return len(pairs) == len(np.unique(a)) == len(np.unique(b))


#: The fitted model of each recorded run, made once: a page draws the same runs' frames at every
#: rerun (a slider move), and the model (every row scored for the grouping) does not change.
_FITTED_OF_RUN: "weakref.WeakKeyDictionary[Run, object]" = weakref.WeakKeyDictionary()


def _model_of(data, run: Run):
    """The fitted model of ``run`` when its estimator groups components (``merge`` set) and it
    reached every row; else None (nothing to group)."""
    est = run.estimator
    if est is None or getattr(est, "merge", None) is None or run.stopped:
        return None
    if run not in _FITTED_OF_RUN:
        try:
            _FITTED_OF_RUN[run] = fitted_model(data, run)
        except ValueError:
            _FITTED_OF_RUN[run] = None
    return _FITTED_OF_RUN[run]


#: How a recorded run ended, as the animation's last frame says it.
ENDINGS = ("converged", "stopped", "step limit")


def ending(run: Run) -> str:
    """"stopped" when the time limit or Stop cut the run, else "converged" when its last step
    converged, else "step limit" (issue 27: every last frame said "done", beside a warning that
    the run had been stopped)."""
    if run.stopped:
        return "stopped"
    return "converged" if run.final.converged else "step limit"


def step_word(name: str) -> str:
    """What one step of the registered algorithm ``name`` is: a sweep, an iteration or a pass;
    "step" for the others (a block of rows of a one-pass method, a batch of search expansions)."""
    from mapdp_core.models.registry import ALGORITHMS

    step = getattr(ALGORITHMS.get(name), "step", "sweep")
    return step if step in ("sweep", "iteration", "pass") else "step"


def frame_state(frames: Frames, a: int, f: int) -> tuple[int, str]:
    """Algorithm ``a``'s own step number at frame ``f`` and how it ended there ("" before its last
    frame; an algorithm with fewer frames holds its last one, said "converged", "stopped", ...)."""
    info = frames.info[a]
    g = min(int(f), len(info) - 1)
    ended = (frames.endings[a] if a < len(frames.endings) else "done") if g >= len(info) - 1 else ""
    return int(info["sweep"].iloc[g]), ended


def frame_label(frames: Frames, f: int) -> str:
    """Frame ``f`` in words, each algorithm in its own units (issue 27: the slider read "sweep 46",
    DP-means' passes, beside MAP-DP's "sweep 7"): "frame 7 of 20: MAP-DP sweep 7 (converged) ·
    DP-means pass 46"."""
    parts = []
    for a, name in enumerate(frames.algorithms):
        step, ended = frame_state(frames, a, f)
        part = f"{name} {step_word(name)} {step}" + (f" ({ended})" if ended else "")
        groups = frames.groups[a] if a < len(frames.groups) else None
        if groups is not None and int(f) >= len(frames.info[a]) - 1:
            part += f", its components grouped into {len(groups)} clusters ({groups_text(groups, most=6)})"
        parts.append(part)
    return f"frame {int(f) + 1} of {frames.n_frames}: " + " · ".join(parts)


def summary_rows(runs: list[Run], frames: Frames) -> list[dict]:
    """The table under the animation, one row per run: the partition each algorithm reports (K,
    NMI and ARI of the same partition: a sampler's most probable one, which may not be its last
    sweep), which partition that is, its steps and seconds."""
    rows = []
    for a, r in enumerate(runs):
        said = frames.reported[a]
        row = {"algorithm": r.algorithm, "K": said["K"],
               "partition": "last step" if said["last"] else f"most probable ({step_word(r.algorithm)} {said['step']})",
               "steps": int(r.final.iteration), "seconds": round(float(r.seconds), 3)}
        if "components" in said:
            row["components"] = said["components"]
        if "nmi" in said:
            row.update(NMI=round(float(said["nmi"]), 3), ARI=round(float(said["ari"]), 3))
        rows.append(row)
    return rows


#: steps a sweep is shown in, row by row (Explore's "inside one sweep")
SWEEP_STEPS = 40


@dataclass(frozen=True, eq=False)
class SweepStepFrames:
    """One MAP-DP sweep part-way (:meth:`mapdp_core.MAPDP.sweep_steps`), for the displayed rows.

    ``colours`` (steps x shown rows): each row's cluster after each step, as colour ids matched to
    the sweep's end partition (so a cluster keeps its colour); ``visited`` and ``current``
    (steps x shown rows): rows visited so far, and in that step; ``captions``: each step in words."""

    colours: np.ndarray
    visited: np.ndarray
    current: np.ndarray
    captions: list

    @property
    def n_frames(self) -> int:
        return len(self.captions)


def sweep_step_frames(steps: list, sample: np.ndarray, reference: np.ndarray | None = None) -> SweepStepFrames:
    """:class:`SweepStepFrames` of :meth:`mapdp_core.MAPDP.sweep_steps`' records for the displayed
    rows ``sample`` (row numbers from 0); ``reference``: colour ids of those rows to match the
    sweep's end partition to (the main animation's last MAP-DP frame), so a cluster keeps its colour."""
    N = len(steps[-1].labels)
    step_of = np.empty(N, dtype=np.int64)  # the step in which each row is visited
    for j, step in enumerate(steps):
        step_of[step.rows] = j
    end = steps[-1].labels[sample]
    if reference is not None:
        end = match_labels(np.asarray(reference), end)
    shown_step = step_of[sample]
    colours = np.stack([match_labels(end, step.labels[sample]) for step in steps])
    index = np.arange(len(steps))[:, None]
    captions, first = [], 1
    for j, step in enumerate(steps):
        what = (f"rows {first:,} to {step.visited:,} of {N:,} in the sweep's visiting order: {step.moved} of these "
                f"{len(step.rows)} changed cluster")
        if step.opened:
            what += f", {step.opened} new cluster{'s' if step.opened > 1 else ''} opened"
        captions.append(f"Step {j + 1} of {len(steps)}: {what}; K = {step.n_clusters} now.")
        first = step.visited + 1
    return SweepStepFrames(colours=colours, visited=shown_step[None, :] <= index, current=shown_step[None, :] == index,
                           captions=captions)


def play_rows(coords: np.ndarray, most: int = PLAY_POINTS, seed: int = 0) -> np.ndarray | None:
    """Which of the displayed rows (positions in ``coords``, sorted) the animation draws while it
    plays: None (every one) for at most ``most`` rows, else a uniform sample of ``most`` that keeps
    the lowest and highest point of each axis, so that the view Plotly fits to the points stays."""
    coords = np.asarray(coords)
    n = len(coords)
    if n <= most:
        return None
    ends = np.unique([f(coords[:, j]) for j in range(min(coords.shape[1], 2)) for f in (np.argmin, np.argmax)])
    rest = np.setdiff1d(np.arange(n), ends)
    drawn = np.random.default_rng(seed).choice(rest, size=max(most - len(ends), 0), replace=False)
    return np.sort(np.concatenate([ends, drawn]))


def frames_of_rows(frames: Frames, rows: np.ndarray) -> Frames:
    """``frames`` with the colours of the displayed rows at positions ``rows`` only (what
    :func:`play_rows` keeps); everything else (titles, scores, ellipses from all rows) as it is."""
    return dataclasses.replace(frames, colours=[[c[rows] for c in per] for per in frames.colours])
