"""Page layout rules the Streamlit API cannot express: one small style sheet for every page.

Each rule fixes something seen in a real browser (tests/app/test_browser.py measures it):

- Streamlit's default page padding (6rem on top, 5rem on each side in the wide layout) pushed
  Explore's chart below the fold at 1280×720 and squeezed its panels; the padding is trimmed
  while keeping the top clear of Streamlit's 60 px header.
- ``st.pills`` lays its options out in one row that scrolls sideways, so in a narrow column the
  last options were cut mid-word ("DP-mea"); here they wrap onto further lines instead.
- On a phone side-by-side chart panels cannot each get a readable width; such a chart keeps a
  minimum width and scrolls sideways in its own box rather than squashing its
  titles into one another.
"""
from __future__ import annotations

import streamlit as st

#: Narrowest width (px) at which a chart panel and its title still read, and the keys of the charts
#: with panels side by side, with how many a row (Explore's animation wraps after three, its
#: curves have one column per algorithm, Home shows two).
PANEL_MIN_WIDTH = 220
WIDE_CHARTS = {"animation": 3, "traces": 3, "home_picture": 2}

_STYLE = f"""
<style>
[data-testid="stMainBlockContainer"] {{ padding-top: 3.75rem; padding-bottom: 4rem; }}
@media (min-width: 736px) {{
  [data-testid="stMainBlockContainer"] {{ padding-left: 2.5rem; padding-right: 2.5rem; }}
}}
[data-testid="stMainBlockContainer"] h1 {{ padding-top: 0.5rem; }}
[data-testid="stButtonGroup"] [role="toolbar"]:has(> button[data-variant="pills"]) {{
  flex-wrap: wrap; row-gap: 0.4rem; overflow-x: visible;
}}
</style>
"""
# A chart narrower than its panels need keeps that width and scrolls sideways in its own box;
# wider, the minimum does nothing.
_STYLE += "<style>" + "".join(
    f".st-key-{key} {{ overflow-x: auto; }} .st-key-{key} > div {{ min-width: {panels * PANEL_MIN_WIDTH}px; }}"
    for key, panels in WIDE_CHARTS.items()) + "</style>"
# Explore's chart drawn while slower algorithms still run (keys animation_so_far_<n>) scrolls the same way
_STYLE += ("<style>[class*=\"st-key-animation_so_far\"] { overflow-x: auto; } "
           f"[class*=\"st-key-animation_so_far\"] > div {{ min-width: {WIDE_CHARTS['animation'] * PANEL_MIN_WIDTH}px; }}"
           "</style>")


def apply() -> None:
    """Add the style sheet to the page (call once per run, before the page draws)."""
    st.html(_STYLE)
