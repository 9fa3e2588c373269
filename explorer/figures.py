"""Plotly figures of the MAP-DP Explorer, usable from a notebook as well as from the app.

Every function takes results already computed (by :mod:`explorer`,
:mod:`mapdp_core.selection.priors`, :mod:`mapdp_core.models.kmeans`) and only draws them.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

import html as _html
import math
import re

from explorer.animation import Frames, frame_state, step_word
from explorer.axes import log_axis, marker_size, outside_view, view_of, view_range  # noqa: F401 (figures' names too)

__all__ = ["PALETTE", "UNVISITED", "UNVISITED_LABEL", "colour_index", "animation_figure", "trace_figure",
           "scatter_figure", "bic_figure", "n0_figure", "cv_figure", "heatmap_figure", "sequence_figure",
           "trajectory_figure", "plain_number", "plain_numbers", "count_axis", "animation_html", "static_image",
           "midnight_dates", "overview_figure", "row_costs_figure"]


def plain_number(x, digits: int = 3) -> str:
    """``x`` as a person writes it (issue 27: "N0 = 1e+03"): up to ``digits`` significant digits,
    thousands separated ("1,000", "12,300", "0.3", "2.5"), no exponent from 1e-4 to below 1e15."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if not math.isfinite(x):
        return "–" if math.isnan(x) else ("∞" if x > 0 else "−∞")
    if x == 0:
        return "0"
    r = float(f"{x:.{digits}g}")
    if not 1e-4 <= abs(r) < 1e15:
        return f"{r:.{digits}g}"
    decimals = max(digits - 1 - math.floor(math.log10(abs(r))), 0)
    text = f"{r:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


_EXPONENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)e([+-]\d+)\b")


def plain_numbers(text: str) -> str:
    """Every number written with an exponent in ``text`` ("N0 = 1e+03") written plainly ("N0 = 1,000")."""
    return _EXPONENT.sub(lambda m: plain_number(float(m.group(0)), max(len(m.group(1).replace(".", "")), 1)), str(text))


def count_axis(values) -> dict:
    """Axis settings for a count (K, clusters): whole-number ticks only (issue 27: K axes read 2.2,
    2.4 clusters); one tick per value over a short range."""
    v = np.asarray(pd.to_numeric(pd.Series(np.ravel(values)), errors="coerce"), dtype=float)
    v = v[np.isfinite(v)]
    span = float(v.max() - v.min()) if v.size else 0.0
    return {"tickformat": ",d", "dtick": 1, "tick0": 0} if span <= 10 else {"tickformat": ",d"}


def midnight_dates(x) -> bool:
    """True when ``x`` holds dates (datetime64) whose times are all midnight: shown as dates alone
    (issue 27: dates read "2024-03-01 00:00:00")."""
    s = pd.Series(np.asarray(x).ravel()) if not isinstance(x, pd.Series) else x
    if not pd.api.types.is_datetime64_any_dtype(s):
        return False
    s = s.dropna()
    return bool((s == s.dt.normalize()).all())

#: Cluster colours (colour id modulo its length): distinguishable, colour-blind-aware first eight.
#: No black or white: every colour must read on Streamlit's light and dark backgrounds alike.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#882255",
           "#8C564B", "#7F7F7F", "#BCBD22", "#17BECF", "#9467BD", "#FF9896", "#98DF8A", "#C5B0D5",
           "#AEC7E8", "#FFBB78", "#C49C94", "#F7B6D2", "#DBDB8D", "#9EDAE5", "#393B79", "#637939"]


#: The colour of a row not visited (SUGS) or placed (DP search) yet, colour id -1: a light,
#: half-transparent neutral grey, unlike the palette's solid grey, on light and dark backgrounds.
UNVISITED = "rgba(150,150,150,0.3)"
UNVISITED_LABEL = "not yet visited"


def _colourscale():
    """One band per palette colour (value i: ``PALETTE[i]``), then one for :data:`UNVISITED`."""
    colours = PALETTE + [UNVISITED]
    n = len(colours)
    scale = []
    for i, c in enumerate(colours):
        scale += [[i / n, c], [(i + 1) / n, c]]
    return scale


def colour_index(ids) -> np.ndarray:
    """The colour-scale value of each colour id: the palette's, cycling; -1 (not visited yet) the grey band."""
    ids = np.asarray(ids)
    return np.where(ids < 0, len(PALETTE), ids % len(PALETTE)).astype(np.uint8)


def _marker(ids: np.ndarray, size: float) -> dict:
    return {"color": colour_index(ids), "colorscale": _colourscale(),
            "cmin": -0.5 + 0.0, "cmax": len(PALETTE) + 0.5, "size": size, "opacity": 0.75}


def _ellipse_xy(ellipses) -> tuple[np.ndarray, np.ndarray]:
    """All ellipses as one line trace: NaN between rings lifts the pen."""
    if not ellipses:
        return np.empty(0), np.empty(0)
    gap = np.full((1, 2), np.nan)
    xy = np.vstack([np.vstack([pts, gap]) for _, pts in ellipses]).astype(np.float32)
    return xy[:, 0], xy[:, 1]


# Pixel sizes of the animation figure's parts. The figure's height is fixed, so offsets below a
# panel can be given in pixels and turned into paper fractions: the controls then never land on
# an axis title, whatever the width of the page.
_TITLE_LINE_PX = 16      # one line of a panel title at font size 12
_MODEBAR_PX = 26         # the chart's toolbar (top right, on hover) sits above the titles, never on them (issue 43)
_TITLE_PX = 3 * _TITLE_LINE_PX + 6 + _MODEBAR_PX  # toolbar / name (settings) / sweep and K / NMI and ARI
_AXIS_PX = 44            # x tick labels and the x axis title under a panel
_CONTROLS_PX = 84        # play/pause buttons and the sweep slider (its value, rail and tick labels)
_BUTTONS_PX = 150        # width of "▶ Play" and "❚❚ Pause" side by side, with their padding
_MAX_COLUMNS = 3         # more algorithms wrap onto a second row of panels
# Two-tone rings read on any background and above any point colour (the panel background
# follows Streamlit's light or dark theme, the points use every colour of the palette).
_RING_HALO = {"color": "rgba(255,255,255,0.9)", "width": 4.5}
_RING_LINE = {"color": "rgba(25,25,25,0.95)", "width": 2}


def _plain(text) -> str:
    """Data-derived text (a column name, a category level, a group) to put into a Plotly title, axis
    title, legend, trace name, tick label or hover text: Plotly renders a subset of HTML there
    (``<a href>``, ``<b>``, ``<br>``, ``<span style>``), so ``<``, ``>`` and ``&`` are written as
    entities, which Plotly shows as the characters themselves (issue 29). The app's own markup
    around it (``<b>...</b>``) is added by the caller, outside."""
    return _html.escape(str(text), quote=False)


def _hover_text(text) -> str:
    """:func:`_plain` for text inside a hover template, where ``%{...}`` would also be read as a
    variable: its ``%`` is written as the entity ``&#37;``, which Plotly shows as ``%``."""
    return _plain(text).replace("%", "&#37;")


def _step_word(name: str) -> str:
    """What one frame of the registered algorithm ``name`` is (:func:`explorer.animation.step_word`)."""
    return step_word(name)


def _title(frames: Frames, a: int, f: int, settings: dict | None = None) -> str:
    """A panel's title on three short lines, so that side-by-side titles fit their panels: the
    algorithm (its settings); its own step at this frame (its own units: sweep, iteration, pass)
    and how it ended on its last frame; NMI and ARI. On the last frame of a sampler whose reported
    partition (its most probable) has another K than its last sweep, the third line says so
    (issue 27: the panel said K = 8 while the table said 7)."""
    info = frames.info[a]
    row = info.iloc[min(f, len(info) - 1)]
    step, ended = frame_state(frames, a, f)
    name = frames.algorithms[a]
    extra = f" ({_html.escape(plain_numbers(settings[name]))})" if settings and settings.get(name) else ""
    groups = frames.groups[a] if a < len(frames.groups) else None
    merged = groups is not None and min(f, len(info) - 1) == len(info) - 1
    # short: at 1280 px "K = 3 clusters of 9 components" ran into the next panel's title (issue 43)
    k_text = (f"K = {int(row['K'])} of {int(row['components'])} components" if merged else f"K = {int(row['K'])}")
    text = f"<b>{_html.escape(name)}</b>{extra}<br>{_step_word(name)} {step}{f' ({ended})' if ended else ''} · {k_text}"
    unvisited = int(row["unvisited"]) if "unvisited" in info else 0
    if unvisited:  # drawn grey (UNVISITED)
        text += f" · {unvisited:,} {UNVISITED_LABEL}"
    lines = []
    if "nmi" in info:
        scored = np.isfinite(row["nmi"])  # NaN: no row placed yet
        lines.append(f"NMI {row['nmi']:.2f} · ARI {row['ari']:.2f}" if scored else "NMI – · ARI –")
    said = frames.reported[a] if a < len(frames.reported) else None
    if ended and said and not said["last"] and said["K"] != int(row["K"]):
        lines.append(f"reports {_step_word(name)} {said['step']}: K = {said['K']}")
    if merged:  # which components each cluster joins, in the cluster's colour (issue 24)
        lines.append(" ".join(f"<span style='color:{PALETTE[c % len(PALETTE)]}'>●</span>" + _components(m)
                              for c, m in groups if len(m) > 1))
    if lines:
        text += "<br>" + " · ".join(lines)
    return text


def _components(members, most: int = 4) -> str:
    """Components "0+3+5", cut after ``most`` ("0+5+6+7+… (18)")."""
    shown = "+".join(map(str, members[:most]))
    return shown + (f"+… ({len(members)})" if len(members) > most else "")


def _grid(n_panels: int) -> tuple[int, int]:
    """Rows and columns for ``n_panels`` side-by-side panels, at most ``_MAX_COLUMNS`` a row, rows balanced."""
    rows = max(1, -(-n_panels // _MAX_COLUMNS))
    return rows, max(1, -(-n_panels // rows))


def animation_figure(frames: Frames, coords: np.ndarray, axis_names, start: int | None = None,
                     point_size: float | None = None, height: int = 480, show_ellipses: bool = True,
                     settings: dict | None = None, controls: bool = True, truth: tuple | None = None,
                     rows: np.ndarray | None = None, view: tuple | None = None) -> go.Figure:
    """The algorithms side by side, one frame per step, with play/pause and a frame slider.

    Parameters
    ----------
    frames : Frames
        From :func:`explorer.animation.animation_frames`; the colour ids index :data:`PALETTE`
        (-1: :data:`UNVISITED`).
    coords : ndarray (n, 2)
        Coordinates of the displayed rows (the same rows as ``frames.colours``; colour id -1, a
        row not visited yet, is drawn in the neutral grey :data:`UNVISITED`, and the panel's
        title counts such rows).
    axis_names : two str
    start : int, optional
        Frame shown before playing (default: the last, the converged clustering).
    height : int
        Height in pixels of one row of panels with its titles and controls; more than
        three algorithms wrap onto further rows, each adding a row of panels.
    show_ellipses : bool
        Draw each cluster's 2-sd ellipse (from the covariance of its points in this view), above the points.
    settings : dict, optional
        ``{algorithm: "N0 = 3"}``: shown after each algorithm's name in its title.
    controls : bool
        With Plotly's own frames, ▶ Play / ❚❚ Pause and a frame slider (a file that plays by
        itself, :meth:`~plotly.graph_objects.Figure.to_html`); without, frame ``start`` alone, for
        a page whose own controls own the frame shown (the Explore page: one position for its
        buttons, slider and Play, issue 27). The slider's steps are frame numbers; each panel's
        title gives its algorithm's own step (sweep, iteration, pass).
    truth : (ndarray (n,), ellipses), optional
        The true group's colour id of each displayed row and the groups' ellipses
        (:func:`explorer.animation.truth_view`; the algorithms' colours are matched to these): one
        more panel, "True groups", beside the algorithms, the same in every frame, so that a class
        sees what the algorithms are after.
    rows : ndarray (n,), optional
        The table row of each displayed point: hovering a point says its row (and, in the truth
        panel, its true group), so that a point can be found in the data.
    view : (x range, y range), optional
        The view (:func:`explorer.axes.view_of` of every displayed row; None: from ``coords``), kept by
        a figure of only some of the rows (the animation while it plays).

    Notes
    -----
    Trace ``3 a`` holds algorithm ``a``'s points, ``3 a + 1`` and ``3 a + 2`` its ellipses (a light halo
    under a dark line). The ellipses are WebGL traces like the points: Plotly draws every WebGL
    trace above every SVG trace, so SVG rings would vanish beneath thousands of points. No colour of
    the background is set, so the figure follows the Streamlit theme (light or dark).
    """
    A, F = len(frames.algorithms), frames.n_frames
    start = F - 1 if start is None else int(np.clip(start, 0, F - 1))
    n = coords.shape[0]
    size = point_size or marker_size(n)
    panels = A + (truth is not None)
    row_of_point = rows
    hover = ({"customdata": np.asarray(row_of_point), "hovertemplate": "row %{customdata}<extra>%{fullData.name}</extra>"}
             if row_of_point is not None else {"hoverinfo": "skip"})
    truth_title = None
    if truth is not None:
        true_k = len(np.unique(truth[0]))
        truth_title = f"<b>True groups</b><br>the labels the data came with · K = {true_k}<br>(not shown to the algorithms)"
    rows, cols = _grid(panels)
    controls_px = _CONTROLS_PX if controls else 0
    panel_px = max(height - _TITLE_PX - _AXIS_PX - _CONTROLS_PX, 120)
    gap_px = _AXIS_PX + _TITLE_PX  # between rows: the upper row's x axis, the lower row's titles
    total = _TITLE_PX + rows * panel_px + (rows - 1) * gap_px + _AXIS_PX + controls_px
    plot_px = total - _TITLE_PX - _AXIS_PX - controls_px  # the paper's height: fractions below are of it
    specs = [[{} if r * cols + c < panels else None for c in range(cols)] for r in range(rows)]
    fig = make_subplots(rows=rows, cols=cols, specs=specs, horizontal_spacing=0.035,
                        vertical_spacing=gap_px / plot_px if rows > 1 else 0.0,
                        subplot_titles=[_title(frames, a, start, settings) for a in range(A)]
                        + ([truth_title] if truth_title else []))
    # float32 is ample for drawing and halves what the browser receives
    x, y = coords[:, 0].astype(np.float32), coords[:, 1].astype(np.float32)

    def traces(f):
        out = []
        for a in range(A):
            g = min(f, len(frames.colours[a]) - 1)
            out.append(go.Scattergl(x=x, y=y, mode="markers", marker=_marker(frames.colours[a][g], size),
                                    showlegend=False, name=_plain(frames.algorithms[a]), **hover))
            ex, ey = _ellipse_xy(frames.ellipses[a][g] if show_ellipses else [])
            for line in (_RING_HALO, _RING_LINE):
                out.append(go.Scattergl(x=ex, y=ey, mode="lines", line=line, connectgaps=False,
                                        hoverinfo="skip", showlegend=False, name="2-sd ellipses"))
        return out

    for i, tr in enumerate(traces(start)):
        a = i // 3
        fig.add_trace(tr, row=a // cols + 1, col=a % cols + 1)
    if truth is not None:  # after the algorithms' traces, which the frames address by index
        truth_ids, truth_rings = np.asarray(truth[0]), truth[1]
        true_hover = ({"customdata": np.column_stack([np.asarray(row_of_point), truth_ids]),
                       "hovertemplate": "row %{customdata[0]}<br>true group %{customdata[1]}<extra></extra>"}
                      if row_of_point is not None else {"hoverinfo": "skip"})
        fig.add_trace(go.Scattergl(x=x, y=y, mode="markers", marker=_marker(truth_ids, size), showlegend=False,
                                   name="True groups", **true_hover), row=A // cols + 1, col=A % cols + 1)
        ex, ey = _ellipse_xy(truth_rings if show_ellipses else [])
        for line in (_RING_HALO, _RING_LINE):
            fig.add_trace(go.Scattergl(x=ex, y=ey, mode="lines", line=line, connectgaps=False, hoverinfo="skip",
                                       showlegend=False, name="2-sd ellipses"), row=A // cols + 1, col=A % cols + 1)
    fig.update_annotations(font_size=12)
    fig.update_layout(height=total, margin={"l": 10, "r": 10, "t": _TITLE_PX, "b": _AXIS_PX + controls_px})
    _shared_axes(fig, axis_names, rows, cols, panels)
    # a few far outliers (PLOS 5.3's pairs) squeezed the clusters into one blob: the view is the bulk
    # of the points; the toolbar's autoscale shows every point (issue 43)
    for j, (axis, values) in enumerate((("x", x), ("y", y))):
        shown = view_range(values) if view is None else view[j]
        if shown is not None:
            (fig.update_xaxes if axis == "x" else fig.update_yaxes)(range=shown, row=1, col=1)
    if not controls:
        return go.Figure(data=fig.data, layout=fig.layout, _validate=False)
    # The frames are plain dicts of the same few keys, added without plotly's validation:
    # at 47 frames of 4 000 points, validation was most of the 0.2 s the figure took to build.
    anim = []
    for f in range(F):
        data = []
        for a in range(A):
            g = min(f, len(frames.colours[a]) - 1)
            data.append({"type": "scattergl", "marker": {"color": colour_index(frames.colours[a][g])}})
            ex, ey = _ellipse_xy(frames.ellipses[a][g] if show_ellipses else [])
            data += [{"type": "scattergl", "x": ex, "y": ey}, {"type": "scattergl", "x": ex, "y": ey}]
        titles = [{"text": _title(frames, a, f, settings)} for a in range(A)] + ([{"text": truth_title}]
                                                                                 if truth_title else [])
        anim.append({"name": str(f), "data": data, "traces": list(range(3 * A)), "layout": {"annotations": titles}})
    step_args = {"mode": "immediate", "frame": {"duration": 0, "redraw": True}, "transition": {"duration": 0}}
    controls_y = -(_AXIS_PX + 6) / plot_px  # just under the bottom row's x axis titles
    fig.update_layout(
        updatemenus=[{
            "type": "buttons", "direction": "left", "x": 0.0, "y": controls_y, "xanchor": "left", "yanchor": "top",
            "showactive": False, "pad": {"r": 6, "t": 22},
            "buttons": [
                {"label": "▶ Play", "method": "animate",
                 "args": [None, {"frame": {"duration": 400, "redraw": True}, "fromcurrent": True,
                                 "transition": {"duration": 0}, "mode": "immediate"}]},
                {"label": "❚❚ Pause", "method": "animate", "args": [[None], step_args]},
            ]}],
        sliders=[{
            # the slider starts right of the two buttons, offset in pixels: a fraction of the width overlapped them
            "active": start, "x": 0.0, "len": 1.0, "y": controls_y, "yanchor": "top",
            "pad": {"t": 0, "b": 0, "l": _BUTTONS_PX},
            # frame numbers: the algorithms count their steps in their own units (sweeps, iterations,
            # passes), which each panel's title gives; one algorithm's sweeps here misled (issue 27)
            "currentvalue": {"prefix": "frame ", "visible": True, "xanchor": "right", "offset": 4},
            "steps": [{"label": str(f + 1), "method": "animate", "args": [[str(f)], step_args]} for f in range(F)],
        }],
    )
    return go.Figure(data=fig.data, layout=fig.layout, frames=anim, _validate=False)


def expected_clusters_figure(curve: pd.DataFrame, n0: float, n_rows: int, large: bool = False) -> go.Figure:
    """The prior's expected number of clusters E[K] against the rows N, one line per N0 of
    ``curve`` (:func:`explorer.report.expected_clusters_curve`; ``n0``, the value in use, drawn
    thick) and the data's size as a dashed line. ``large``: taller, with type and lines that
    read on a projector across a room (issue 27: the sidebar's version was 190 px wide)."""
    font = 20 if large else None
    picture = go.Figure()
    for value, part in curve.groupby("N0", sort=True):
        now = value == float(n0)
        picture.add_trace(go.Scatter(x=part["N"], y=part["expected_K"], mode="lines",
                                     name=f"N0 = {value:g}" + (" (now)" if now else ""),
                                     line={"width": (7 if large else 4) if now else (3 if large else 1.5),
                                           "dash": None if now else "dot"}))
    # the data's size as a legend entry, not an annotation: the animation's titles are the page's annotations
    picture.add_trace(go.Scatter(x=[n_rows, n_rows], y=[0, float(curve["expected_K"].max())], mode="lines",
                                 name=f"these data: {n_rows:,} rows",
                                 line={"color": "#888", "dash": "dash", "width": 3 if large else 2}))
    # in a narrow column the legend wraps onto several lines: it hangs below the x axis title (its top
    # anchored there), and the short y title cannot reach into it however short the plot gets
    picture.update_layout(height=560 if large else 340, margin={"l": 10, "r": 10, "t": 10, "b": 10},
                          xaxis_type="log", xaxis_title="rows N (log scale)",
                          yaxis_title="expected clusters E[K]" if large else "E[K]",
                          legend={"orientation": "h", "yanchor": "top", "y": -0.45, "x": 0.0},
                          font={"size": font} if font else None)
    return picture


def static_image(fig: go.Figure) -> go.Figure:
    """``fig`` as one still picture: without Plotly's frames, ▶ Play / ❚❚ Pause and the frame slider,
    which do nothing in a PNG or SVG (issue 27: the animation's image showed dead controls); the
    bottom margin they took is given back."""
    still = go.Figure(data=fig.data, layout=fig.layout, _validate=False)
    if fig.layout.updatemenus or fig.layout.sliders:
        still.layout.updatemenus, still.layout.sliders = (), ()
        still.layout.margin.b = _AXIS_PX
        still.layout.height = (fig.layout.height or 0) - _CONTROLS_PX or None
    return still


def animation_html(fig: go.Figure, title: str, caption: str) -> str:
    """A self-contained HTML page of ``fig`` (Plotly included, opens offline) with a title (the
    page's and a heading) and a one-line caption saying what it shows (issue 27: the exported file
    had neither). ``title`` and ``caption`` are plain text (escaped here)."""
    # outside Streamlit no theme widens the margins: the tick labels' minus signs were cut off and the
    # y title printed over the ticks (issue 43); axes now make room for their labels and titles
    fig = go.Figure(fig)
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    fig.update_layout(margin={"l": max(int(fig.layout.margin.l or 0), 60)})
    body = fig.to_html(include_plotlyjs=True, full_html=False, auto_play=False)
    t, c = _html.escape(str(title)), _html.escape(str(caption))
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{t}</title>\n"
            "<style>body{font-family:system-ui,sans-serif;margin:1.5em;} h1{font-size:1.3em;margin:0 0 .3em;} "
            "p.caption{color:#555;margin:0 0 1em;}</style>\n</head>\n<body>\n"
            f"<h1>{t}</h1>\n<p class=\"caption\">{c}</p>\n{body}\n</body>\n</html>\n")


def _shared_axes(fig, axis_names, rows: int, cols: int, A: int) -> None:
    """Axis titles, one scale for every panel (the first panel's), equal x and y scales."""
    fig.update_xaxes(title_text=_plain(axis_names[0]), title_standoff=4, showgrid=True, zeroline=False)
    fig.update_yaxes(showgrid=True, zeroline=False)
    fig.update_yaxes(title_text=_plain(axis_names[1]), title_standoff=4, col=1)
    # one scale for every panel: x and y match the first panel's, tick labels only on the left column
    for r in range(rows):
        for c in range(cols):
            if r * cols + c >= A or (r, c) == (0, 0):
                continue
            fig.update_xaxes(matches="x", row=r + 1, col=c + 1)
            fig.update_yaxes(matches="y", showticklabels=c == 0, row=r + 1, col=c + 1)
    if A:
        # equal axis scales so that round clusters look round (their shape is the point)
        fig.update_yaxes(scaleanchor="x", scaleratio=1, row=1, col=1)


def trace_figure(frames: Frames, height: int = 300) -> go.Figure:
    """K and the objective per sweep, one column per algorithm (objectives are in each algorithm's own units)."""
    A = len(frames.algorithms)
    # short titles (the name once, above its column): "DP-means: objective" side by side overlapped
    fig = make_subplots(rows=2, cols=A, shared_xaxes=True, vertical_spacing=0.16, horizontal_spacing=0.07,
                        subplot_titles=[f"<b>{_plain(a)}</b>: K" for a in frames.algorithms]
                        + ["objective"] * A)
    for a in range(A):
        info = frames.history[a]
        colour = PALETTE[a % len(PALETTE)]
        fig.add_trace(go.Scatter(x=info["sweep"], y=info["K"], mode="lines+markers", line={"color": colour},
                                 showlegend=False, name=f"{_plain(frames.algorithms[a])} K"), row=1, col=a + 1)
        fig.add_trace(go.Scatter(x=info["sweep"], y=info["objective"], mode="lines+markers",
                                 line={"color": colour}, showlegend=False, name=f"{_plain(frames.algorithms[a])} objective"),
                      row=2, col=a + 1)
        fig.update_xaxes(title_text="sweep", row=2, col=a + 1)
        fig.update_yaxes(row=1, col=a + 1, **count_axis(info["K"]))
    fig.update_annotations(font_size=12)
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 30, "b": 10})
    return fig


def scatter_figure(coords: np.ndarray, axis_names, colour=None, colour_name: str = "class",
                   height: int = 420) -> go.Figure:
    """A plain 2-D scatter of the displayed rows, coloured by ``colour`` (labels) if given."""
    fig = go.Figure()
    if colour is None:
        fig.add_trace(go.Scattergl(x=coords[:, 0], y=coords[:, 1], mode="markers",
                                   marker={"size": 4, "color": PALETTE[0], "opacity": 0.6}, showlegend=False))
    else:
        colour = pd.Series(colour).astype(str).to_numpy()
        for i, level in enumerate(pd.unique(colour)):
            m = colour == level
            fig.add_trace(go.Scattergl(x=coords[m, 0], y=coords[m, 1], mode="markers", name=_plain(level),
                                       marker={"size": 4, "color": PALETTE[i % len(PALETTE)], "opacity": 0.7}))
        fig.update_layout(legend_title_text=_plain(colour_name))
    # no background or grid colour: the figure follows the Streamlit theme, light or dark
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 10, "b": 10},
                      xaxis_title=_plain(axis_names[0]), yaxis_title=_plain(axis_names[1]))
    fig.update_xaxes(showgrid=True)
    fig.update_yaxes(showgrid=True)
    return fig


def _view_layout(fig: go.Figure, axis_names, height: int) -> go.Figure:
    """A one-panel 2-D view's layout: the axes named, grids, the legend in a row above the plot."""
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 10, "b": 10},
                      xaxis_title=_plain(axis_names[0]), yaxis_title=_plain(axis_names[1]),
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0.0})
    fig.update_xaxes(showgrid=True)
    fig.update_yaxes(showgrid=True)
    return fig


def centre_picker_figure(coords: np.ndarray, rows: np.ndarray, axis_names, picked_coords: np.ndarray,
                         picked_rows, height: int = 380) -> go.Figure:
    """The displayed rows (``coords``, their row numbers ``rows`` from 0) to pick K-means' starting
    centres from by clicking, a box or a lasso: trace 0 the rows, trace 1 the rows picked so far
    (numbered from 1, as the app numbers rows). Hovering a point gives its row."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=coords[:, 0], y=coords[:, 1], mode="markers", name="rows",
                             marker={"size": 6, "color": PALETTE[0], "opacity": 0.45},
                             customdata=np.asarray(rows) + 1, hovertemplate="row %{customdata}<extra></extra>"))
    picked = np.asarray(list(picked_rows), dtype=np.int64)
    fig.add_trace(go.Scatter(x=picked_coords[:, 0], y=picked_coords[:, 1], mode="markers+text", name="starting centres",
                             text=[str(i + 1) for i in range(len(picked))], textposition="top center",
                             customdata=picked + 1, hovertemplate="centre %{text}: row %{customdata}<extra></extra>",
                             marker={"size": 15, "color": PALETTE[5], "symbol": "x", "line": {"width": 1}}))
    return _view_layout(fig, axis_names, height)


def sweep_step_figure(coords: np.ndarray, frames, step: int, axis_names, height: int = 420) -> go.Figure:
    """Step ``step`` of one MAP-DP sweep (:class:`explorer.animation.SweepStepFrames`) on the displayed
    rows ``coords``: every row in its cluster's colour, the rows not visited yet in this sweep
    faint, the rows of this step large and outlined."""
    colours, visited, current = frames.colours[step], frames.visited[step], frames.current[step]
    fig = go.Figure()
    for mask, name, size, opacity, line in ((~visited, "not visited yet in this sweep", 5, 0.25, 0),
                                            (visited & ~current, "visited", 5, 0.8, 0),
                                            (current, "visited in this step", 10, 0.95, 1.5)):
        marker = {**_marker(colours[mask], size), "opacity": opacity}
        if line:
            marker["line"] = {"color": "rgba(25,25,25,0.9)", "width": line}
        fig.add_trace(go.Scattergl(x=coords[mask, 0], y=coords[mask, 1], mode="markers", name=name, marker=marker,
                                   hoverinfo="skip"))
    return _view_layout(fig, axis_names, height)


def bic_figure(curve: pd.DataFrame, chosen: int) -> go.Figure:
    """The K-means BIC curve (:func:`mapdp_core.kmeans_bic`), the chosen K marked."""
    fig = go.Figure(go.Scatter(x=curve["n_clusters"], y=curve["bic"], mode="lines+markers", name="BIC"))
    best = curve[curve["n_clusters"] == chosen]
    fig.add_trace(go.Scatter(x=best["n_clusters"], y=best["bic"], mode="markers", name=f"chosen K = {chosen}",
                             marker={"size": 14, "color": PALETTE[5], "symbol": "star"}))
    fig.update_layout(height=320, xaxis_title="K", yaxis_title="BIC (higher is better)",
                      margin={"l": 10, "r": 10, "t": 10, "b": 10})
    return fig


def n0_figure(table: pd.DataFrame, best: float | None = None, panel: str = "joint") -> go.Figure:
    """N0 grid (:func:`mapdp_core.n0_grid`) against N0, log scale: the exact -ln p(X, z | N0)
    (``panel="joint"``) or the number of clusters K (``panel="K"``); ``best`` marked. One panel
    per figure, so that a page sets the two side by side where there is room and one above the
    other on a phone (issue 27: side by side, the titles ran out of the chart at 390 px)."""
    if panel not in ("joint", "K"):
        raise ValueError(f"panel={panel!r}: the N0 grid is drawn as 'joint' or 'K'.")
    y = ("neg_log_joint" if "neg_log_joint" in table else table.columns[1]) if panel == "joint" else "K"
    fig = go.Figure(go.Scatter(x=table["N0"], y=table[y], mode="lines+markers", showlegend=False))
    if panel == "K":
        fig.update_yaxes(**count_axis(table["K"]))
    if best is not None:
        fig.add_vline(x=best, line_dash="dash", line_color=PALETTE[5])
    fig.update_xaxes(**log_axis(table["N0"]), title_text="N0")
    fig.update_layout(title={"text": "exact −ln p(X, z | N0), lower is better" if panel == "joint" else "clusters K",
                             "font": {"size": 14}}, height=320, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def search_figure(table: pd.DataFrame, against: str = "spread") -> go.Figure:
    """The automatic search (``MAPDP.hyperparameter_search_``, :func:`mapdp_core.selection.auto.choose_hyperparameters`):
    each candidate's evidence (its best exact -ln p(X, z | theta0, N0), lower is better) against the
    prior spread (``against="spread"``: stages 1 and 3, one line per structure) or against N0
    (``against="N0"``: stage 2, one line per prior weight); the chosen candidate is ringed. One
    panel per figure, so that a page can set the two side by side where there is room and one
    above the other on a phone (issue 27: side by side, their titles overlapped at 390 px)."""
    if against not in ("spread", "N0"):
        raise ValueError(f"against={against!r}: the search's evidence is drawn against 'spread' or 'N0'.")
    # one scale per axis: stages 1-3 judge every candidate on the same rows (a subsample of a large
    # table); stage 4 checks the best structures again on more rows, a joint on another scale (issue 42:
    # the chosen point was drawn at its stage-4 joint, 14 000, among candidates at 1 900), so it is left
    # out here and the chosen candidate is ringed where the search judged it beside the others
    searched = table[table["stage"] <= 3] if "stage" in table else table
    fig = go.Figure()
    dashes, symbols = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"], \
        ["circle", "square", "diamond", "triangle-up", "x", "star"]
    if against == "spread":
        spread = searched[searched["stage"] != 2]
        for i, (structure, g) in enumerate(spread.groupby("structure", sort=False)):
            g = g.drop_duplicates("spread", keep="last").sort_values("spread")
            # each structure its own dash and marker: two lines on the same values stay both visible
            fig.add_trace(go.Scatter(x=g["spread"], y=g["evidence"], mode="lines+markers", name=str(structure),
                                     line={"dash": dashes[i % len(dashes)], "width": 2.5 if i == 0 else 1.8},
                                     marker={"color": PALETTE[i % len(PALETTE)], "symbol": symbols[i % len(symbols)],
                                             "size": 9 if i == 0 else 7},
                                     customdata=g[["K_best", "N0"]],
                                     hovertemplate=f"{_plain(structure)}<br>spread × %{{x}}<br>evidence %{{y:.1f}}"
                                                   "<br>K %{customdata[0]}<br>N0 %{customdata[1]}<extra></extra>"))
    else:
        n0 = searched[searched["stage"] == 2]
        for i, (weight, g) in enumerate(n0.groupby("weight", sort=False)):
            g = g.sort_values("N0")
            fig.add_trace(go.Scatter(x=g["N0"], y=g["evidence"], mode="lines+markers", name=f"weight × {weight:g}",
                                     line={"dash": dashes[(i + 2) % len(dashes)]},
                                     marker={"color": PALETTE[(i + 3) % len(PALETTE)], "symbol": symbols[i % len(symbols)]},
                                     customdata=g[["K_best"]],
                                     hovertemplate="N0 %{x}<br>evidence %{y:.1f}<br>K %{customdata[0]}<extra></extra>"))
    best = _chosen_candidate(table, searched)
    if best is not None:
        fig.add_trace(go.Scatter(x=[best["spread" if against == "spread" else "N0"]], y=[best["evidence"]],
                                 mode="markers", name="chosen",
                                 marker={"size": 16, "symbol": "circle-open", "line": {"width": 3},
                                         "color": "#7F7F7F"}))  # grey reads on light and dark
    fig.update_xaxes(**log_axis([x for tr in fig.data for x in (tr.x if tr.x is not None else ())]),
                     title_text="spread × the empirical-Bayes default" if against == "spread" else "N0")
    fig.update_yaxes(title_text="−ln p(X, z | θ0, N0)")
    fig.update_layout(title={"text": f"evidence against {'the prior spread' if against == 'spread' else 'N0'}",
                             "font": {"size": 14}},
                      height=360, margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      legend={"orientation": "h", "y": -0.35, "yanchor": "top"})
    return fig


def _chosen_candidate(table: pd.DataFrame, searched: pd.DataFrame):
    """The chosen setting's row among the candidates judged on the same rows (stages 1-3): the
    last with the final choice's settings, else the row marked chosen there; None if none."""
    chosen = table[table["chosen"]]
    if not len(chosen):
        return None
    c = chosen.iloc[-1]  # the final choice (a stage-4 check may have changed the structure)
    keys = [k for k in ("structure", "spread", "weight", "N0") if k in searched]
    same = searched[np.logical_and.reduce([searched[k] == c[k] for k in keys])] if keys else searched.iloc[:0]
    if len(same):
        return same.iloc[-1]
    mine = searched[searched["chosen"]]
    return mine.iloc[-1] if len(mine) else None


def cv_figure(summary: pd.DataFrame) -> go.Figure:
    """Held-out log-likelihood per N0, one line per prior scale (:func:`mapdp_core.cross_validate`)."""
    fig = go.Figure()
    ycol = next(c for c in ("mean_heldout_loglik", "heldout_loglik", "mean") if c in summary) \
        if any(c in summary for c in ("mean_heldout_loglik", "heldout_loglik", "mean")) else summary.columns[-1]
    for i, (scale, g) in enumerate(summary.groupby("scale")):
        g = g.sort_values("N0")
        err = None
        for c in ("se", "sem", "std_error"):
            if c in g:
                err = {"type": "data", "array": g[c], "visible": True}
        fig.add_trace(go.Scatter(x=g["N0"], y=g[ycol], error_y=err, mode="lines+markers", name=f"scale {scale:g}",
                                 line={"color": PALETTE[i % len(PALETTE)]}))
    fig.update_xaxes(**log_axis(summary["N0"]), title_text="N0")
    fig.update_layout(height=340, yaxis_title="held-out log-likelihood per row (higher is better)",
                      margin={"l": 10, "r": 10, "t": 10, "b": 10}, legend_title_text="prior spread")
    return fig


#: The one colour convention of the clusters' heat maps, app and report alike: red above the
#: overall mean, blue below, white at it (Plotly's reversed RdBu; the report's cells use the same).
HEAT_COLOURS = "RdBu_r"


def heatmap_figure(values: pd.DataFrame, text: pd.DataFrame | None = None, title: str = "") -> go.Figure:
    """A features × clusters heatmap (for example standardised cluster means): red above the
    mean, blue below (:data:`HEAT_COLOURS`); a cell with no value is blank and written "–" (not
    "null"); the clusters are whole-numbered categories on the x axis (no -0.5 ... 3.5 ticks)."""
    z = values.to_numpy(dtype=float)
    if text is not None:
        words = np.asarray(text.to_numpy(), dtype=object)
        words = np.where(np.isfinite(z), words, "–")
        words = np.where(pd.isna(words) | (words == "nan"), "–", words)
    # the tick labels (and their hover text) are column names: plain text, never Plotly's HTML
    fig = go.Figure(go.Heatmap(z=np.where(np.isfinite(z), z, None), x=[_plain(c) for c in values.columns],
                               y=[_plain(i) for i in values.index], colorscale=HEAT_COLOURS, zmid=0,
                               text=None if text is None else words, texttemplate="%{text}" if text is not None else None,
                               hoverongaps=False, colorbar={"title": _plain(title)}))
    fig.update_layout(height=max(300, 22 * len(values) + 80), margin={"l": 10, "r": 10, "t": 10, "b": 10},
                      xaxis={"title": "cluster", "type": "category"}, yaxis={"autorange": "reversed"})
    return fig


def sequence_figure(x, series, series_name: str, runs, frame: int = -1, truth=None, x_title: str = "time",
                    height: int | None = None, animate: bool = True) -> go.Figure:
    """A series over time with one state ribbon per algorithm under it (and the true states, if known).

    ``runs``: :class:`explorer.sequences.SequenceRun` (labels per shown sweep, colours matched);
    ``frame``: which shown sweep of each run to draw first (clipped to the run's last; -1 the
    final one). With ``animate`` (and more than one shown sweep) the figure carries one Plotly
    frame per shown sweep, with Play / Pause buttons and a sweep slider, as the Explore page's
    animation: each ribbon shows its algorithm's sweep (its last once it has stopped).
    Ribbon colours are the animation's (:data:`PALETTE`)."""
    runs = [r for r in runs if not r.error]
    n_shown = max((len(r.labels) for r in runs), default=1)
    first = n_shown - 1 if frame < 0 else min(frame, n_shown - 1)

    def ribbons(f):
        out = ([("truth", "true states", np.asarray(truth))] if truth is not None else [])
        for r in runs:
            i = min(f, len(r.labels) - 1)
            out.append((r.name, f"<b>{_plain(r.name)}</b>: sweep {r.sweeps[i]}, K = {r.n_clusters[i]}", r.labels[i]))
        return out

    shown = ribbons(first)
    rows = 1 + len(shown)
    heights = [0.4] + [0.6 / max(len(shown), 1)] * len(shown)
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.06, row_heights=heights,
                        subplot_titles=[f"<b>{_plain(series_name)}</b>"] + [title for _, title, _ in shown])
    dates = midnight_dates(x)
    x = np.asarray(x)
    x_hover = "%{x|%Y-%m-%d}" if dates else "%{x}"  # a date alone, without 00:00:00 (issue 27)
    fig.add_trace(go.Scattergl(x=x, y=np.asarray(series, dtype=float), mode="lines", line={"color": "#7F7F7F",
                               "width": 1}, name=_plain(series_name), showlegend=False), row=1, col=1)
    for row, (name, _, labels) in enumerate(shown, start=2):
        labels = np.asarray(labels)
        fig.add_trace(go.Heatmap(x=x, z=[colour_index(labels)], customdata=[labels], colorscale=_colourscale(),
                                 zmin=-0.5, zmax=len(PALETTE) + 0.5, showscale=False, name=_plain(name),
                                 hovertemplate=x_hover + ": state %{customdata}<extra>" + _hover_text(name)
                                 + "</extra>"),
                      row=row, col=1)
        fig.update_yaxes(showticklabels=False, row=row, col=1)
    fig.update_xaxes(title_text=_plain(x_title), row=rows, col=1)
    if dates:
        fig.update_xaxes(hoverformat="%Y-%m-%d")
    fig.update_annotations(font_size=12)
    controls = animate and n_shown > 1
    fig.update_layout(height=(height or 160 + 90 * rows) + (70 if controls else 0),
                      margin={"l": 10, "r": 10, "t": 30, "b": 80 if controls else 10})
    if not controls:
        return fig
    # one frame per shown sweep: the ribbons' colours and the titles above them change, the series does not
    anim = []
    for f in range(n_shown):
        current = ribbons(f)
        anim.append({"name": str(f), "traces": list(range(1, 1 + len(current))),
                     "data": [{"type": "heatmap", "z": [colour_index(np.asarray(lab))], "customdata": [np.asarray(lab)]}
                              for _, _, lab in current],
                     "layout": {"annotations": [{"text": f"<b>{_plain(series_name)}</b>"}]
                                + [{"text": title} for _, title, _ in current]}})
    longest = max(runs, key=lambda r: (len(r.labels), r.sweeps[-1]))
    step_args = {"mode": "immediate", "frame": {"duration": 0, "redraw": True}, "transition": {"duration": 0}}
    fig.update_layout(
        updatemenus=[{"type": "buttons", "direction": "left", "x": 0.0, "y": 0.0, "xanchor": "left", "yanchor": "top",
                      "showactive": False, "pad": {"r": 6, "t": 50},
                      "buttons": [{"label": "▶ Play", "method": "animate",
                                   "args": [None, {"frame": {"duration": 500, "redraw": True}, "fromcurrent": True,
                                                   "transition": {"duration": 0}, "mode": "immediate"}]},
                                  {"label": "❚❚ Pause", "method": "animate", "args": [[None], step_args]}]}],
        sliders=[{"active": first, "x": 0.0, "len": 1.0, "y": 0.0, "yanchor": "top",
                  "pad": {"t": 30, "l": _BUTTONS_PX},
                  "currentvalue": {"prefix": "sweep ", "visible": True, "xanchor": "right", "offset": 4},
                  "steps": [{"label": str(longest.sweeps[min(f, len(longest.sweeps) - 1)]), "method": "animate",
                             "args": [[str(f)], step_args]} for f in range(n_shown)]}])
    return go.Figure(data=fig.data, layout=fig.layout, frames=anim, _validate=False)


def trajectory_figure(long: pd.DataFrame, clusters: pd.DataFrame, x_title: str = "time",
                      y_title: str = "response", height: int = 460) -> go.Figure:
    """Each subject's trajectory as a thin line coloured by its cluster, and each cluster's mean
    line (intercept + slope * time) drawn thick and dashed over the observed time range.

    ``long``: subject, time, response, cluster (rows in time order within subject);
    ``clusters``: cluster, size, intercept, slope (:func:`explorer.sequences.trajectory_fit`)."""
    fig = go.Figure()
    t_lo, t_hi = float(long["time"].min()), float(long["time"].max())
    for k in clusters["cluster"]:
        colour = PALETTE[int(k) % len(PALETTE)]
        xs, ys = [], []
        for _, rows in long[long["cluster"] == k].groupby("subject", sort=False):
            xs += list(rows["time"]) + [None]
            ys += list(rows["response"]) + [None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", line={"color": colour, "width": 1},
                                 marker={"size": 3}, opacity=0.45, name=f"cluster {k} subjects",
                                 legendgroup=str(k), connectgaps=False))
    for _, c in clusters.iterrows():
        colour = PALETTE[int(c["cluster"]) % len(PALETTE)]
        fig.add_trace(go.Scatter(x=[t_lo, t_hi], y=[c["intercept"] + c["slope"] * t_lo,
                                                     c["intercept"] + c["slope"] * t_hi],
                                 mode="lines", line={"color": colour, "width": 4, "dash": "dash"},
                                 name=f"cluster {int(c['cluster'])} mean", legendgroup=str(int(c["cluster"]))))
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 10, "b": 10}, xaxis_title=_plain(x_title),
                      yaxis_title=_plain(y_title), legend_title_text="cluster")
    if midnight_dates(long["time"]):
        fig.update_xaxes(hoverformat="%Y-%m-%d")  # a date alone, without 00:00:00 (issue 27)
    fig.update_xaxes(showgrid=True)
    fig.update_yaxes(showgrid=True)
    return fig


def group_mix_figure(mix: pd.DataFrame, title: str = "", max_groups: int = 80, height: int | None = None) -> go.Figure:
    """Each group's share of every cluster as one stacked bar (clusters in the animation's colours).

    ``mix``: groups as rows (in the order to draw), cluster ids as columns, shares summing to
    1 per row (:class:`explorer.sequences.GroupFit`); the first ``max_groups`` are drawn."""
    mix = mix.iloc[:max_groups]
    fig = go.Figure()
    names = [_plain(g) for g in mix.index]  # the table's group values: tick labels and hover, as plain text
    for k in mix.columns:
        fig.add_trace(go.Bar(x=names, y=mix[k].to_numpy(dtype=float), name=f"cluster {k}",
                             marker_color=PALETTE[int(k) % len(PALETTE)] if int(k) >= 0 else "#BBBBBB",
                             hovertemplate="group %{x}: %{y:.0%} in cluster " + _hover_text(k) + "<extra></extra>"))
    fig.update_layout(barmode="stack", height=height or 320, margin={"l": 10, "r": 10, "t": 40 if title else 10,
                      "b": 10}, title={"text": _plain(title), "font": {"size": 13}} if title else None,
                      yaxis={"title": "share of the group's rows", "tickformat": ".0%", "range": [0, 1]},
                      xaxis={"title": "group", "type": "category"}, legend_title_text="cluster")
    return fig


def k_evidence_figure(table: pd.DataFrame, height: int = 260) -> go.Figure:
    """How sure K is (:meth:`mapdp_core.MAPDP.k_evidence`): for each K, how many nats the best
    partition found with that K lies above the fitted one (0 at the fit; higher, less probable),
    the fitted K in the accent colour. Bars of thousands of nats are cut at the top of the
    axis, which stays readable for the near ones; every bar is labelled with its value."""
    delta = table["delta"].to_numpy(dtype=float)
    near = [abs(v) for v, k in zip(delta, table["K"]) if not np.isnan(v)
            and abs(k - int(table.loc[table["fitted"], "K"].iloc[0])) <= 1]
    top = max(10.0, 3.0 * max(near)) if near else 10.0
    colours = [PALETTE[0] if f else "#9aa0a6" for f in table["fitted"]]
    text = ["fit" if f else (f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}") for v, f in zip(delta, table["fitted"])]
    fig = go.Figure(go.Bar(x=[int(k) for k in table["K"]], y=[float(v) for v in np.clip(delta, -top, top)],
                           marker_color=colours, text=text,
                           textposition="outside", cliponaxis=False,
                           hovertext=[f"K = {k}: {h}; {v:.4g} nats above the fit" for k, h, v in
                                      zip(table["K"], table["how"], delta)], hoverinfo="text"))
    low = min(0.0, float(np.nanmin(delta)))
    fig.update_layout(height=height, margin={"l": 10, "r": 10, "t": 20, "b": 10},
                      xaxis={"title": "number of clusters K", "dtick": 1},
                      yaxis={"title": "nats less probable than the fit", "range": [max(low, -top) * 1.1, top * 1.15]})
    return fig


def overview_figure(table: pd.DataFrame, points: dict, height_per_row: int = 230) -> go.Figure:
    """Scenarios (rows) x algorithms (columns) of :func:`explorer.comparison.overview`, each panel
    the final clusters in colours matched to the true classes, titled with what the method was
    told, the K it found and its NMI (issue 27: scikit-learn's clustering-comparison layout)."""
    scenarios = list(dict.fromkeys(table["scenario"]))
    algorithms = list(dict.fromkeys(table["algorithm"]))
    cell = {(r["scenario"], r["algorithm"]): r for _, r in table.iterrows()}
    titles = [f"{_plain(a)} (told {_plain(cell[s, a]['told'])}): K = {cell[s, a]['K']}, NMI {cell[s, a]['nmi']:.2f}"
              for s in scenarios for a in algorithms]
    fig = make_subplots(rows=len(scenarios), cols=len(algorithms), subplot_titles=titles,
                        horizontal_spacing=0.03, vertical_spacing=0.28 / max(len(scenarios), 1))
    for i, s in enumerate(scenarios, start=1):
        xy = np.asarray(points[s])
        for j, a in enumerate(algorithms, start=1):
            fig.add_trace(go.Scattergl(x=xy[:, 0], y=xy[:, 1], mode="markers", showlegend=False,
                                       marker=_marker(np.asarray(cell[s, a]["colours"]), 3),
                                       hovertemplate=f"{_plain(s)} · {_plain(a)}<br>cluster %{{text}}<extra></extra>",
                                       text=np.asarray(cell[s, a]["labels"]).astype(str)),
                          row=i, col=j)
            fig.update_xaxes(showticklabels=False, row=i, col=j)
            fig.update_yaxes(showticklabels=False, row=i, col=j, title_text=_plain(s) if j == 1 else None)
    for annotation in fig.layout.annotations:
        annotation.font = {"size": 12}
    fig.update_layout(height=height_per_row * len(scenarios) + 40, margin={"l": 30, "r": 10, "t": 30, "b": 10})
    return fig


def row_costs_figure(costs: pd.DataFrame) -> go.Figure:
    """One row's costs in MAP-DP's sweep (:func:`mapdp_core.engine.decisions.row_costs`): a bar per
    option, split into how badly the row fits (-ln predictive) and the size term (-ln size, or
    -ln N0 for a new cluster), the chosen option (least total) marked."""
    names = [f"{o}{' (chosen)' if c else ''}" for o, c in zip(costs["option"], costs["chosen"])]
    fig = go.Figure()
    fig.add_trace(go.Bar(y=names, x=costs["fit"], orientation="h", name="−ln p(row | cluster)",
                         marker={"color": PALETTE[0]}))
    fig.add_trace(go.Bar(y=names, x=costs["size_term"], orientation="h", name="−ln size (new: −ln N0)",
                         marker={"color": PALETTE[1]}))
    fig.add_trace(go.Scatter(y=names, x=costs["cost"], mode="markers", name="cost (the sum; least wins)",
                             marker={"color": "#7F7F7F", "symbol": "diamond", "size": 11}))
    # the legend above the bars: below them it met the axis title on a phone (the layout checks)
    fig.update_layout(barmode="relative", height=150 + 34 * len(costs), margin={"l": 10, "r": 10, "t": 10, "b": 10},
                      xaxis_title="nats", yaxis={"autorange": "reversed"},
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0.0})
    return fig
