"""The Explore animation played in the browser (issue 43): one figure drawn once, and what changes
from frame to frame (each panel's colours, ellipses and title), as plain JSON for the page's player
(``ui/player.py`` and its component, ``ui/play_component/player.js``, which restyles the figure in
place instead of drawing a new chart for every frame). No Streamlit here."""
from __future__ import annotations

import json

import plotly.graph_objects as go

from explorer import figures

__all__ = ["browser_frames"]


def browser_frames(frames, coords, axis_names, start: int, **options) -> dict:
    """``{"figure": {"data", "layout"}, "frames": [{"traces", "data", "annotations"}]}``.

    ``figure`` is :func:`explorer.figures.animation_figure` at frame ``start`` as the page draws it
    (``controls=False``: no Plotly buttons or slider, the same height); ``frames[f]`` holds frame
    ``f``'s new values of the traces ``traces`` (points' colours, ellipses) and every panel title.
    Arrays stay plotly.py's compact typed arrays (``{"dtype", "bdata"}``). ``options`` are
    :func:`~explorer.figures.animation_figure`'s (``show_ellipses``, ``settings``, ``truth``, ...).
    """
    options = {k: v for k, v in options.items() if k != "controls"}
    whole = figures.animation_figure(frames, coords, axis_names, start=start, controls=True, **options)
    spec = json.loads(whole.to_json())
    layout = spec["layout"]
    for key in ("updatemenus", "sliders"):
        layout.pop(key, None)
    # the figure without Plotly's controls is shorter by their strip, at the same paper height
    layout["height"] -= figures._CONTROLS_PX
    layout["margin"]["b"] -= figures._CONTROLS_PX
    layout.pop("template", None)  # the browser keeps the theme Streamlit gave the chart at rest
    played = []
    for frame in spec.get("frames", []):
        titles = [a.get("text", "") for a in frame.get("layout", {}).get("annotations", [])]
        played.append({"traces": frame["traces"], "data": [{k: v for k, v in d.items() if k != "type"}
                                                           for d in frame["data"]], "annotations": titles})
    return {"figure": {"data": spec["data"], "layout": layout}, "frames": played}


def still_figure(payload: dict) -> go.Figure:
    """The figure the browser first draws (for tests: the same as the page's chart at that frame)."""
    return go.Figure(payload["figure"], skip_invalid=True)
