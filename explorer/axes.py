"""Axis ranges and ticks the app's figures share (issue 43), apart from figures.py for its size:
a view over the bulk of the points when a few far outliers would squeeze the clusters together,
and log axes whose ticks are labelled in full."""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["view_range", "view_of", "marker_size", "outside_view", "log_axis"]


def view_range(values, tail: float = 0.005, pad: float = 0.08) -> list | None:
    """An axis range over the bulk of ``values`` (the ``tail`` quantiles at each end, padded by
    ``pad`` of the span) when a few far values would otherwise stretch the axis to more than
    1.5 times it; None (Plotly's own range, every point) otherwise."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size < 50:
        return None
    lo, hi = np.quantile(v, [tail, 1 - tail])
    span = hi - lo
    if not span > 0 or v.max() - v.min() <= 1.5 * (1 + 2 * pad) * span:
        return None
    return [float(lo - pad * span), float(hi + pad * span)]


def view_of(coords) -> tuple:
    """The (x, y) ranges :func:`view_range` gives the points ``coords`` (N x 2) as a figure draws them
    (float32): a figure drawing only some of them (an animation while it plays) keeps this view."""
    xy = np.asarray(coords).astype(np.float32)
    return view_range(xy[:, 0]), view_range(xy[:, 1])


def marker_size(n: int) -> int:
    """The points' size in a scatter of ``n`` points: smaller as they crowd."""
    return 6 if n <= 1000 else 4 if n <= 5000 else 3


def outside_view(coords) -> int:
    """How many rows of ``coords`` (N x 2) lie outside :func:`view_range` of either axis."""
    coords = np.asarray(coords, dtype=float)
    out = np.zeros(len(coords), dtype=bool)
    for j in range(min(coords.shape[1], 2)):
        view = view_range(coords[:, j])
        if view is not None:
            out |= (coords[:, j] < view[0]) | (coords[:, j] > view[1])
    return int(out.sum())


def log_axis(values) -> dict:
    """A log axis over ``values`` with ticks at 1, 2 and 5 times the powers of ten, each labelled in
    full ("0.2", "0.5", "1", "2", "5", "10"; issue 43: Plotly's own minor labels read "2 5 1 2 5 10");
    every power of ten alone where that gives more than 12 ticks."""
    v = np.asarray(pd.to_numeric(pd.Series(list(values)), errors="coerce"), dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if not v.size:
        return {"type": "log"}
    lo, hi = np.floor(np.log10(v.min())), np.ceil(np.log10(v.max()))
    ticks = [m * 10.0 ** e for e in range(int(lo), int(hi) + 1) for m in (1, 2, 5)]
    ticks = [t for t in ticks if v.min() / 1.5 <= t <= v.max() * 1.5] or [10.0 ** lo]
    if len(ticks) > 12:
        ticks = [t for t in ticks if f"{t:.0e}".startswith("1")]
    return {"type": "log", "tickvals": ticks, "ticktext": [f"{t:,.10g}" for t in ticks]}
