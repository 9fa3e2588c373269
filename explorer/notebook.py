"""The Explore page's animation in a notebook: :func:`animate` runs MAP-DP beside K-means and
DP-means (or replays a fitted estimator beside them) and shows every sweep inline in Jupyter, with
▶ Play, ❚❚ Pause, ◀ Back, Step ▶ and a frame slider, in the app's colours and 2-sd ellipses.

>>> from explorer.notebook import animate
>>> animate(df)                        # any table: MAPDP()'s own choice beside K-means and DP-means at its K
>>> animate(model, X)                  # a fitted estimator of the registry, replayed sweep by sweep

No Streamlit server and no notebook extension is involved: the result is one Plotly figure with
its frames (:func:`explorer.figures.animation_figure`, the figure the app exports), which plays in
the browser by itself. Displayed in a notebook, it is a self-contained ``<iframe>`` (plotly.js
inlined, so it plays offline, in JupyterLab, Jupyter Notebook 7 and a rendered notebook page
alike, and cannot clash with another plotly.js loaded by the page); Back and Step are two more
buttons that move the slider one frame (Plotly's own buttons only play or jump to a named frame).

Why a figure with frames rather than a widget (ipywidgets or anywidget): the frames are computed
once, in Python, and every later move (Play, Step, the slider) is a redraw in the browser with no
round trip to the kernel, so the animation stays responsive however busy the kernel is, keeps
working when the kernel is gone (a saved notebook, the docs' gallery), and needs no JupyterLab
extension. Its cost is the size of the output: the colour of every drawn point in every frame
(at most :data:`explorer.animation.MAX_FRAMES` frames, at most ``max_points`` points) and
plotly.js itself.
"""
from __future__ import annotations

import html as _html
import json
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from sklearn.base import clone

from mapdp_core.core.estimator import SweepEstimator, best_restart, summarize_restart

from explorer import animation, figures, runner, sources
from explorer.sources import AppData

__all__ = ["animate", "Animation", "BESIDE"]

#: The algorithms drawn beside MAP-DP (or beside a fitted estimator): K-means told MAP-DP's K and
#: DP-means with the λ that gives that K (the Explore page's "match MAP-DP's K").
BESIDE = ("K-means", "DP-means")

# Back and Step: buttons Plotly draws but does not act on ("skip"); the script below moves the
# slider by one frame when they are clicked.
_BACK, _STEP = "◀ Back", "Step ▶"
_BUTTONS_PX = 290  # the four buttons side by side: the slider starts right of them
_STEP_SCRIPT = """
(function () {
  var gd = document.getElementById('{plot_id}');
  function current() {
    var s = gd.layout.sliders && gd.layout.sliders[0];
    return s && typeof s.active === 'number' ? s.active : (gd._fullLayout.sliders[0].active || 0);
  }
  gd.on('plotly_buttonclicked', function (e) {
    var label = e.button.label, n = gd._transitionData._frames.length, f = current();
    if (label !== %BACK% && label !== %STEP%) { return; }
    f = Math.max(0, Math.min(n - 1, f + (label === %STEP% ? 1 : -1)));
    Plotly.animate(gd, [String(f)], {mode: 'immediate', frame: {duration: 0, redraw: true},
                                     transition: {duration: 0}});
  });
  gd.setAttribute('data-steps', 'ready');  // Back and Step act from here on (a page or a test can wait for it)
})();
""".replace("%BACK%", json.dumps(_BACK)).replace("%STEP%", json.dumps(_STEP))  # ASCII escapes: any page encoding


@dataclass(eq=False, repr=False)
class Animation:
    """An animation of recorded runs, shown inline when it is the value of a notebook cell.

    Attributes
    ----------
    figure : plotly.graph_objects.Figure
        The algorithms side by side with one frame per kept step (Play, Pause, Back, Step and
        the frame slider); ``figure.show()`` draws it with any Plotly renderer.
    frames : explorer.animation.Frames
        What each frame shows: colours, ellipses, K, the objective and NMI/ARI per step.
    runs : list of explorer.runner.Run
        Every recorded step of each algorithm.
    rows : ndarray
        The table rows drawn (all, or a random sample of ``max_points``).
    """

    figure: go.Figure
    frames: animation.Frames
    runs: list
    rows: np.ndarray
    notes: list = field(default_factory=list)

    def __repr__(self) -> str:  # the text a notebook shows where it cannot draw HTML
        return (f"<Animation of {', '.join(self.frames.algorithms)}: {self.frames.n_frames} frames, "
                f"{len(self.rows):,} rows drawn>")

    def summary(self) -> pd.DataFrame:
        """One row per algorithm: its steps, how it ended, K (and NMI, ARI with a truth)."""
        rows = []
        for a, name in enumerate(self.frames.algorithms):
            said = self.frames.reported[a]
            row = {"algorithm": name, "steps": len(self.frames.history[a]), "ended": self.frames.endings[a],
                   "K": said["K"]}
            row.update({k: said[k] for k in ("nmi", "ari") if k in said})
            rows.append(row)
        return pd.DataFrame(rows)

    def to_html(self, include_plotlyjs: bool | str = True, full_html: bool = True) -> str:
        """The figure as HTML with the Back/Step script (``include_plotlyjs`` as in Plotly's
        ``to_html``; True: plotly.js inlined, plays offline)."""
        return self.figure.to_html(include_plotlyjs=include_plotlyjs, full_html=full_html, auto_play=False,
                                   post_script=_STEP_SCRIPT, config={"responsive": True})

    def save(self, path) -> None:
        """Write a self-contained HTML file that plays offline."""
        with open(path, "w", encoding="utf-8") as out:
            out.write(self.to_html())

    def _repr_html_(self) -> str:
        page = self.to_html()
        height = int(self.figure.layout.height or 480) + 24
        return (f'<iframe srcdoc="{_html.escape(page, quote=True)}" style="width:100%;height:{height}px;border:0" '
                'sandbox="allow-scripts" title="MAP-DP animation"></iframe>')


def _as_data(X, truth=None, name: str = "notebook table") -> AppData:
    """A DataFrame or array as the app holds a table: roles and likelihoods suggested (as the Data
    page suggests them), every row kept; ``truth`` (one label per row) as its known classes."""
    if isinstance(X, AppData):
        data = X
    else:
        table = X if isinstance(X, pd.DataFrame) else pd.DataFrame(
            np.asarray(X, dtype=float).reshape(len(X), -1),
            columns=[f"x{j}" for j in range(np.asarray(X).reshape(len(X), -1).shape[1])])
        data = sources.table_data(table.reset_index(drop=True), name=name)
    if truth is not None:
        truth = np.asarray(truth)
        if truth.shape != (data.n_rows,):
            raise ValueError(f"truth has {truth.size} labels for {data.n_rows} rows; give one label per row.")
        known = pd.notna(truth)
        codes = np.full(data.n_rows, -1, dtype=np.int64)
        levels, inverse = np.unique(truth[known].astype(str), return_inverse=True)
        codes[known] = inverse
        data = replace(data, truth=codes, truth_names=list(levels), n_groups=None)
    return data


def _replay(model: SweepEstimator, X, fit_args: dict) -> runner.Run:
    """The winning restart of a fitted ``model`` recorded again step by step (its ``iter_sweeps``
    with the restart ``fit`` kept, so the last step is the fitted partition)."""
    values = np.asarray(getattr(model, "restart_values_", [0.0]), dtype=float)
    best = best_restart(values)
    fresh = clone(model)
    states = tuple(fresh.iter_sweeps(X, restart=best, **fit_args))
    summary = summarize_restart(iter(states), fresh.restart_key, fresh.keep)
    restarts = pd.DataFrame([{"restart": best + 1, "K": summary.state.n_clusters, "objective": summary.value,
                              "iterations": summary.n_steps, "seconds": np.nan, "complete": True}])
    return runner.Run(algorithm=type(model).name, states=states, restarts=restarts,
                      params={"restart": best + 1}, estimator=fresh)


def _caption(run: runner.Run) -> str:
    p = run.params
    if run.algorithm == "K-means" and "n_clusters" in p:
        return f"K = {p['n_clusters']}"
    if run.algorithm == "DP-means" and "lam" in p:
        return f"λ = {figures.plain_number(p['lam'])}"
    if run.algorithm == "MAP-DP" and run.estimator is not None:
        n0 = getattr(run.estimator, "N0", None)
        if isinstance(n0, (int, float)) and np.isfinite(n0):
            return f"N0 = {figures.plain_number(n0)}"
    return ""


def _beside(data: AppData, K: int, names, seed: int, time_budget: float) -> list:
    """K-means at ``K`` and DP-means at the λ giving ``K`` (or the nearest it reaches), as the app runs them."""
    runs = []
    for name in names:
        if name == "K-means":
            runs.append(runner.run(data, "K-means", {"n_clusters": K}, seed=seed, time_budget=time_budget))
        elif name == "DP-means":
            lam, _ = runner.lambda_for_k(data, K)
            runs.append(runner.run(data, "DP-means", {"lam": lam}, seed=seed, time_budget=time_budget))
        else:
            raise ValueError(f"beside takes 'K-means' and 'DP-means', got {name!r}.")
    return runs


def animate(source, X=None, *, truth=None, beside=BESIDE, features=None, start: str = "search",
            max_points: int = sources.DISPLAY_MAX, max_frames: int = animation.MAX_FRAMES, seed: int = 0,
            height: int = 480, show_truth: bool = True, show_ellipses: bool = True, time_budget: float = 120.0,
            **fit_args) -> Animation:
    """MAP-DP beside K-means and DP-means, sweep by sweep, as the Explore page shows them.

    Parameters
    ----------
    source : DataFrame, array, or a fitted estimator of the registry
        A table (numbers, text, categories, gaps: roles and likelihoods as the Data page suggests
        them; a column named like a label is the truth): MAP-DP runs as ``MAPDP()`` chooses
        (:func:`explorer.runner.auto_settings`; restarts begin from ``start``), K-means is told
        MAP-DP's K and DP-means gets the λ that gives it. A fitted estimator (any
        :data:`mapdp_core.ALGORITHMS` entry, or a structured one with its ``fit_args`` such as
        ``lengths=`` or ``groups=``): its winning restart is replayed on ``X`` step by step (the
        last frame is its fitted partition) and drawn beside K-means and DP-means at its K.
    X : DataFrame or array
        The table a fitted estimator was fitted on (only with an estimator).
    truth : array, optional
        One known class per row (NaN/None: unknown): NMI and ARI per frame, colours matched to
        it, and a "True groups" panel (``show_truth``).
    beside : tuple of str
        The algorithms beside MAP-DP or the estimator: "K-means", "DP-means", or none (``()``).
    features : two column names, optional
        The axes; default the two columns, or the first two principal components.
    start : "search" or "one cluster"
        Where MAP-DP's sweeps begin: the automatic search's best partition (as ``MAPDP()``), or
        one cluster (PLOS Appendix B), to watch clusters form.
    max_points : int
        Rows drawn (a uniform random sample beyond; every row is clustered and the ellipses use all).
    max_frames : int
        Frames kept per algorithm (evenly thinned beyond, first and last kept).

    Returns
    -------
    Animation
        Shown inline as the value of a cell; ``.figure`` is the Plotly figure, ``.summary()`` a table.
    """
    if start not in runner.STARTS:
        raise ValueError(f"start={start!r}: MAP-DP starts from one of {list(runner.STARTS)}.")
    beside = tuple(beside)
    if isinstance(source, SweepEstimator):
        if X is None:
            raise ValueError("animate(model, X): give the table the estimator was fitted on as X.")
        if not hasattr(source, "labels_"):
            raise ValueError(f"the {type(source).name} estimator is not fitted: call .fit(X) first, or pass the "
                             "table itself (animate(X)) to run MAP-DP beside K-means and DP-means.")
        data = _as_data(X, truth)
        own = _replay(source, X, fit_args)
        if len(own.final.labels) != data.n_rows:
            raise ValueError(f"X has {data.n_rows} rows but the estimator's steps label {len(own.final.labels)}.")
        K = max(int(source.n_clusters_), 1)
        runs = [own] + _beside(data, K, [b for b in beside if b != own.algorithm], seed, time_budget)
        models = [source] + [None] * (len(runs) - 1)
    else:
        if X is not None:
            raise ValueError("X is only for a fitted estimator: animate(model, X). For a table, call animate(table).")
        if fit_args:
            raise ValueError(f"{sorted(fit_args)}: settings of a fitted estimator's replay; a table takes none.")
        data = _as_data(source, truth)
        choice = runner.auto_settings(data, random_state=seed)
        mapdp = runner.run(data, "MAP-DP", runner.mapdp_settings(choice, start=start), seed=seed, choice=choice,
                           time_budget=time_budget)
        K = max(int(mapdp.final.n_clusters), 1)
        runs = [mapdp] + _beside(data, K, beside, seed, time_budget)
        models = [runner.fitted_model(data, r) if getattr(r.estimator, "merge", None) is not None
                  and not r.stopped else None for r in runs]
    coords, axis_names = sources.projection(data, features)
    rows = sources.display_sample(data.n_rows, max_points=int(max_points), seed=seed)
    frames = animation.animation_frames(runs, coords, rows, data.truth, int(max_frames), models=models)
    truth_panel = animation.truth_view(data.truth, coords, rows) if show_truth else None
    settings = {r.algorithm: _caption(r) for r in runs}
    fig = figures.animation_figure(frames, coords[rows], axis_names, settings=settings, height=height,
                                   show_ellipses=show_ellipses, truth=truth_panel, rows=rows)
    _add_step_buttons(fig)
    notes = []
    if len(rows) < data.n_rows:
        notes.append(f"{len(rows):,} of {data.n_rows:,} rows drawn, at random; every row is clustered.")
    if frames.thinned:
        notes.append(f"{', '.join(frames.thinned)}: {max_frames} frames of more steps, evenly spaced.")
    return Animation(figure=fig, frames=frames, runs=runs, rows=rows, notes=notes)


def _add_step_buttons(fig: go.Figure) -> None:
    """◀ Back and Step ▶ beside Play and Pause (acted on by :data:`_STEP_SCRIPT`), the slider moved right of them."""
    menu = fig.layout.updatemenus[0]
    play, pause = menu.buttons
    menu.buttons = [play, pause, {"label": _BACK, "method": "skip", "args": [None]},
                    {"label": _STEP, "method": "skip", "args": [None]}]
    fig.layout.sliders[0].pad.l = _BUTTONS_PX
