"""The subtype report's figures, drawn as inline SVG and coloured HTML (the report is one
self-contained file: no script, nothing loaded from outside): K's evidence on a logarithmic
scale where near and far K can be compared, the cluster sizes coloured by their stability, and the clusters'
heat map in the app's one colour convention (red above the overall mean, blue below;
:data:`explorer.figures.HEAT_COLOURS`)."""
from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd

__all__ = ["evidence_svg", "sizes_svg", "heat_color", "heatmap_table", "outcome_svg", "VERDICT_COLOURS"]

#: stable / uncertain / fragile (mapdp_core.evaluation.stability's verdicts), and no verdict
VERDICT_COLOURS = {"stable": "#54a24b", "uncertain": "#f2a93b", "fragile": "#e45756"}


def _e(text) -> str:
    text = "".join(c if c in "\t\n" or c.isprintable() or c == " " else " " for c in str(text))
    return html.escape(text, quote=True)


def _short(v: float) -> str:
    if not math.isfinite(v):
        return "–"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def _log_nats(d: float) -> float:
    """The height of a bar of ``d`` nats: sign(d) log10(1 + |d|), so that 3, 30 and 3 000 nats are
    all readable on one axis (a linear axis let K = 1's thousands of nats flatten the rest)."""
    return math.copysign(math.log10(1.0 + abs(d)), d) if math.isfinite(d) else 0.0


def evidence_svg(table: pd.DataFrame) -> str:
    """Bars of each K's best partition: nats above the fit (0 at the fit), on a logarithmic axis
    (:func:`_log_nats`, gridlines at 3, 10, 100, ... nats) and labelled with the full value."""
    ks = table["K"].astype(int).tolist()
    deltas = table["delta"].astype(float).tolist()
    shown = [_log_nats(d) for d in deltas]
    width, height, left, bottom, top = 560, 230, 54, 34, 22
    hi, lo = max(max(shown), 1.0), min(min(shown), 0.0)
    span = hi - lo
    plot_h = height - bottom - top
    step = (width - left - 10) / max(len(ks), 1)

    def y(v):
        return top + (hi - v) / span * plot_h

    parts = [f'<svg role="img" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" aria-label="nats above the fitted partition, by number of clusters '
             '(logarithmic axis)">']
    for tick in (3, 10, 100, 1000, 10000, 100000):
        if _log_nats(tick) <= hi:
            ty = y(_log_nats(tick))
            parts.append(f'<line class="grid" x1="{left}" y1="{ty:.1f}" x2="{width - 10}" y2="{ty:.1f}" '
                         'stroke="#ddd" stroke-dasharray="3 3"/>')
            parts.append(f'<text x="{left - 4}" y="{ty + 4:.1f}" font-size="10" text-anchor="end">{tick:,}</text>')
    parts.append(f'<line x1="{left}" y1="{y(0):.1f}" x2="{width - 10}" y2="{y(0):.1f}" stroke="#333"/>')
    for k, d, s, fitted, i in zip(ks, deltas, shown, table["fitted"].tolist(), range(len(ks))):
        x = left + i * step + step * 0.15
        w = step * 0.7
        y0, y1 = sorted((y(0), y(s)))
        color = "#e45756" if fitted else ("#4c78a8" if d >= 0 else "#54a24b")
        parts.append(f'<rect x="{x:.1f}" y="{y0:.1f}" width="{w:.1f}" height="{max(y1 - y0, 1.5):.1f}" '
                     f'fill="{color}"/>')
        label = "fit" if fitted else _short(d)
        parts.append(f'<text x="{x + w / 2:.1f}" y="{y0 - 4:.1f}" font-size="11" text-anchor="middle">{_e(label)}</text>')
        parts.append(f'<text x="{x + w / 2:.1f}" y="{height - bottom + 16:.1f}" font-size="12" '
                     f'text-anchor="middle">{k}</text>')
    parts.append(f'<text x="{(left + width) / 2:.1f}" y="{height - 4}" font-size="12" text-anchor="middle">'
                 'number of clusters</text>')
    parts.append(f'<text x="12" y="{top + plot_h / 2:.1f}" font-size="12" text-anchor="middle" '
                 f'transform="rotate(-90 12 {top + plot_h / 2:.1f})">nats above the fit (log)</text>')
    parts.append("</svg>")
    return "".join(parts)


def sizes_svg(sizes: pd.DataFrame) -> str:
    """One bar per cluster, its height the rows it holds, coloured by its stability verdict
    (:data:`VERDICT_COLOURS`; grey without one) and labelled with its size and stability."""
    n = sizes["n"].astype(float).to_numpy()
    clusters = sizes["cluster"].tolist()
    verdicts = sizes["verdict"].tolist() if "verdict" in sizes else [None] * len(n)
    stab = sizes["stability"].astype(float).tolist() if "stability" in sizes else [float("nan")] * len(n)
    width = max(320, min(900, 60 + 56 * len(n)))
    height, left, bottom, top = 244, 50, 40, 40
    plot_h = height - bottom - top
    step = (width - left - 10) / max(len(n), 1)
    hi = max(float(n.max()) if len(n) else 1.0, 1.0)
    parts = [f'<svg role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             'aria-label="rows per cluster, coloured by stability">']
    parts.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{width - 10}" y2="{top + plot_h}" stroke="#333"/>')
    for i, (c, v, verdict, s) in enumerate(zip(clusters, n, verdicts, stab)):
        x = left + i * step + step * 0.15
        w = step * 0.7
        h = max(plot_h * v / hi, 1.5)
        colour = VERDICT_COLOURS.get(str(verdict), "#9aa0a6")
        said = verdict if isinstance(verdict, str) else "no verdict"
        tip = _e(f"cluster {c}: {int(v):,} rows, {said}")
        parts.append(f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{w:.1f}" height="{h:.1f}" '
                     f'fill="{colour}"><title>{tip}</title></rect>')
        label = f"{int(v):,}" + (f" · {s:.2f}" if math.isfinite(s) else "")
        parts.append(f'<text x="{x + w / 2:.1f}" y="{top + plot_h - h - 4:.1f}" font-size="11" '
                     f'text-anchor="middle">{_e(label)}</text>')
        parts.append(f'<text x="{x + w / 2:.1f}" y="{top + plot_h + 16:.1f}" font-size="12" '
                     f'text-anchor="middle">{_e(c)}</text>')
    parts.append(f'<text x="{(left + width) / 2:.1f}" y="{height - 4}" font-size="12" text-anchor="middle">'
                 "cluster (bar: rows; label: rows · stability)</text>")
    legend = " ".join(f'<tspan fill="{col}">■</tspan> {name}' for name, col in VERDICT_COLOURS.items())
    parts.append(f'<text x="{left}" y="14" font-size="11">{legend}</text>')
    parts.append("</svg>")
    return "".join(parts)


def heat_color(v: float) -> str:
    """A heat-map cell's colour: red above the overall mean, blue below, white at it; ±2 sd saturates."""
    if not np.isfinite(v):
        return "#ffffff"
    t = max(-1.0, min(1.0, v / 2.0))
    if t >= 0:
        r, g, b = 255, int(255 - 120 * t), int(255 - 160 * t)
    else:
        r, g, b = int(255 + 160 * t), int(255 + 100 * t), 255
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap_table(heat: pd.DataFrame, number) -> str:
    """The clusters' heat map as a coloured table (``number``: how a value is written)."""
    head = "<th>feature</th>" + "".join(f"<th>cluster {_e(c)}</th>" for c in heat.columns)
    rows = []
    for feature, values in heat.iterrows():
        cells = "".join(f'<td class="num" style="background:{heat_color(float(v))}">{_e(number(v, 2))}</td>'
                        for v in values)
        rows.append(f"<tr><th>{_e(feature)}</th>{cells}</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def outcome_svg(comparison) -> str:
    """An outcome across the clusters (:class:`mapdp_core.evaluation.outcomes.OutcomeComparison`):
    Kaplan-Meier steps per cluster in the clusters' colours (time to event), or each cluster's
    rate or mean with its 95 % interval (binary, numeric)."""
    from .figures import PALETTE

    width, height, left, bottom, top, right = 560, 260, 56, 40, 16, 130
    plot_w, plot_h = width - left - right, height - bottom - top
    parts = [f'<svg role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             f'aria-label="{_e(comparison.name)} by cluster">']
    parts.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#333"/>'
                 f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#333"/>')
    if comparison.kind == "time_to_event":
        curves = comparison.curves
        follow_up = comparison.table.set_index("cluster")["follow_up"]
        t_max = float(max(curves["time"].max(), follow_up.max())) or 1.0
        for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
            ty = top + (1 - tick) * plot_h
            parts.append(f'<text x="{left - 4}" y="{ty + 4:.1f}" font-size="10" text-anchor="end">{tick:.0%}</text>')
        for tick in np.linspace(0, t_max, 5):
            tx = left + tick / t_max * plot_w
            parts.append(f'<text x="{tx:.1f}" y="{top + plot_h + 14:.1f}" font-size="10" '
                         f'text-anchor="middle">{_short(float(tick))}</text>')
        for i, (cluster, curve) in enumerate(curves.groupby("cluster", sort=True)):
            colour = PALETTE[int(cluster) % len(PALETTE)]
            xs = left + curve["time"].to_numpy() / t_max * plot_w
            ys = top + (1 - curve["survival"].to_numpy()) * plot_h
            path = [f"M{xs[0]:.1f},{ys[0]:.1f}"]
            for x_, y_ in zip(xs[1:], ys[1:]):  # hold the level to the next event time, then drop
                path.append(f"H{x_:.1f}V{y_:.1f}")
            path.append(f"H{left + float(follow_up[cluster]) / t_max * plot_w:.1f}")  # to the longest follow-up
            parts.append(f'<path d="{"".join(path)}" fill="none" stroke="{colour}" stroke-width="2.2">'
                         f'<title>{_e(f"cluster {cluster}")}</title></path>')
            parts.append(f'<text x="{left + plot_w + 8}" y="{top + 14 + 16 * i}" font-size="11" fill="{colour}">'
                         f'■ cluster {_e(cluster)} ({int(curve["at_risk"].iloc[0]):,})</text>')
        x_title, y_title = f"{comparison.name} (time)", "still event-free"
    else:
        t = comparison.table
        value = "rate" if comparison.kind == "binary" else "mean"
        lo_v = min(0.0, float(np.nanmin(t["low"]))) if value == "rate" else float(np.nanmin(t["low"]))
        hi_v = 1.0 if value == "rate" else float(np.nanmax(t["high"]))
        span = (hi_v - lo_v) or 1.0
        step = plot_w / max(len(t), 1)
        for tick in np.linspace(lo_v, hi_v, 5):
            ty = top + (hi_v - tick) / span * plot_h
            label = f"{tick:.0%}" if value == "rate" else _short(float(tick))
            parts.append(f'<text x="{left - 4}" y="{ty + 4:.1f}" font-size="10" text-anchor="end">{label}</text>')
        for i, r in enumerate(t.itertuples()):
            colour = PALETTE[int(r.cluster) % len(PALETTE)]
            x = left + (i + 0.5) * step

            def y(v):
                return top + (hi_v - v) / span * plot_h
            if math.isfinite(r.low) and math.isfinite(r.high):
                parts.append(f'<line x1="{x:.1f}" y1="{y(r.low):.1f}" x2="{x:.1f}" y2="{y(r.high):.1f}" stroke="#555"/>')
            parts.append(f'<circle cx="{x:.1f}" cy="{y(getattr(r, value)):.1f}" r="6" fill="{colour}"/>')
            parts.append(f'<text x="{x:.1f}" y="{top + plot_h + 14:.1f}" font-size="11" text-anchor="middle">'
                         f'{_e(r.cluster)}</text>')
        x_title = "cluster"
        y_title = "share with the outcome" if value == "rate" else f"mean {comparison.name}"
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" font-size="12" text-anchor="middle">'
                 f'{_e(x_title)}</text>')
    parts.append(f'<text x="12" y="{top + plot_h / 2:.1f}" font-size="12" text-anchor="middle" '
                 f'transform="rotate(-90 12 {top + plot_h / 2:.1f})">{_e(y_title)}</text>')
    parts.append("</svg>")
    return "".join(parts)
