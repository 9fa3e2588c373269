"""An outcome left out of the clustering, shown across the subtypes: the figure and the table
the Subtypes page and the subtype report share (the numbers come from
:func:`mapdp_core.evaluation.outcomes.compare_outcome`; nothing is computed here).

Colours are the clusters' colours everywhere else in the app (:data:`explorer.figures.PALETTE`)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from mapdp_core.evaluation.outcomes import OutcomeComparison, compare_outcome

from .figures import PALETTE

__all__ = ["OUTCOME_WHY", "outcome_comparison", "outcome_figure", "outcome_table"]

#: Why this comparison is shown apart from the profiles, in the words of the page and the report.
OUTCOME_WHY = ("The outcome was left out when the clusters were formed, so comparing it across them is not "
               "circular: unlike the profiles' tests (†), this is evidence that the subtypes mean something "
               "beyond the columns that made them.")


def outcome_comparison(table: pd.DataFrame, labels, role: dict) -> OutcomeComparison:
    """The comparison that ``role`` asks for on the rows of ``table`` (in the order of ``labels``):
    ``{"kind": "time_to_event", "time": column, "event": column}`` or ``{"kind": "binary" |
    "numeric", "column": column}``."""
    kind = role["kind"]
    if kind == "time_to_event":
        return compare_outcome(labels, table[role["time"]].to_numpy(), kind, event=table[role["event"]].to_numpy(),
                               name=str(role["time"]))
    return compare_outcome(labels, table[role["column"]].to_numpy(), kind, name=str(role["column"]))


def _colour(cluster) -> str:
    return PALETTE[int(cluster) % len(PALETTE)]


def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def outcome_figure(comparison: OutcomeComparison, height: int = 380) -> go.Figure:
    """Kaplan-Meier curves per cluster with their 95 % bands (time to event), or each cluster's
    rate or mean with its 95 % interval (binary, numeric)."""
    fig = go.Figure()
    if comparison.kind == "time_to_event":
        follow_up = comparison.table.set_index("cluster")["follow_up"]
        for cluster, curve in comparison.curves.groupby("cluster", sort=True):
            colour = _colour(cluster)
            # a step function: each value holds until the next event time, the last until the
            # cluster's longest follow-up (a cluster without events is a flat line at 100 %)
            times = np.r_[curve["time"].to_numpy(), max(float(follow_up[cluster]), float(curve["time"].iloc[-1]))]
            x = np.repeat(times, 2)[1:-1]
            band_x = np.r_[x, x[::-1]]
            s = np.repeat(curve["survival"].to_numpy(), 2)
            lo = np.repeat(curve["low"].to_numpy(), 2)
            hi = np.repeat(curve["high"].to_numpy(), 2)
            fig.add_trace(go.Scatter(x=band_x, y=np.r_[hi, lo[::-1]], fill="toself", fillcolor=_rgba(colour, 0.12),
                                     mode="lines", line={"width": 0}, hoverinfo="skip", showlegend=False))
            n = int(curve["at_risk"].iloc[0])
            fig.add_trace(go.Scatter(x=x, y=s, mode="lines", line={"color": colour, "width": 2.5},
                                     name=f"cluster {cluster} ({n} rows)",
                                     hovertemplate="time %{x:.3g}<br>still event-free %{y:.0%}<extra></extra>"))
        fig.update_layout(xaxis_title=f"{comparison.name} (time)", yaxis_title="share still event-free",
                          yaxis={"range": [0, 1.02], "tickformat": ".0%"})
    else:
        t = comparison.table
        value = "rate" if comparison.kind == "binary" else "mean"
        clusters = [f"cluster {c}" for c in t["cluster"]]
        fig.add_trace(go.Scatter(
            x=clusters, y=t[value], mode="markers", marker={"size": 12, "color": [_colour(c) for c in t["cluster"]]},
            error_y={"type": "data", "symmetric": False, "array": t["high"] - t[value],
                     "arrayminus": t[value] - t["low"], "color": "#555"},
            showlegend=False, hovertemplate="%{x}: %{y:.3g}<extra></extra>"))
        fig.update_layout(xaxis_title="cluster", yaxis_title=("share with the outcome" if value == "rate"
                                                               else f"mean {comparison.name}"))
        if value == "rate":
            fig.update_yaxes(tickformat=".0%", range=[0, 1])
    fig.update_layout(height=height, margin={"l": 60, "r": 20, "t": 30, "b": 50},
                      legend={"orientation": "h", "y": -0.2}, template="plotly_white")
    return fig


def _fmt(x, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}g}"


def outcome_table(comparison: OutcomeComparison) -> pd.DataFrame:
    """The comparison's table as a person reads it: one row per cluster, estimates with their
    95 % intervals written out, and the words "not reached" / "no events" where a number would
    mislead."""
    rows = []
    for r in comparison.table.to_dict("records"):
        row = {"cluster": int(r["cluster"]), "rows with the outcome": int(r["n"])}
        if comparison.kind == "binary":
            row["with the outcome"] = int(r["events"])
            row["rate (95 % CI)"] = f"{100 * r['rate']:.0f} % ({100 * r['low']:.0f}–{100 * r['high']:.0f} %)"
        elif comparison.kind == "numeric":
            row["mean (95 % CI)"] = f"{_fmt(r['mean'])} ({_fmt(r['low'])} to {_fmt(r['high'])})"
            row["sd"] = _fmt(r["sd"])
        else:
            row["events"] = int(r["events"])
            row["median time"] = "not reached" if not math.isfinite(r["median"]) else _fmt(r["median"])
            if int(r["cluster"]) == comparison.reference:
                row["hazard ratio (95 % CI)"] = "1 (reference: the largest cluster)"
            elif r["hazard_ratio"] == 0.0:
                row["hazard ratio (95 % CI)"] = "no events"
            elif not math.isfinite(r["hazard_ratio"]):
                row["hazard ratio (95 % CI)"] = "no estimate"
            else:
                row["hazard ratio (95 % CI)"] = (f"{_fmt(r['hazard_ratio'])} ({_fmt(r['hr_low'])}–"
                                                 f"{_fmt(r['hr_high'])})")
        rows.append(row)
    return pd.DataFrame(rows)
