"""MAP-DP Explorer: MAP-DP beside K-means and DP-means, sweep by sweep.

Run with ``make run`` (or ``streamlit run app.py``). The pages live in pages/ (pages only: their
shared Streamlit helpers are in ui/, so the sidebar never lists a helper); what they compute
lives in explorer/ (one module a job, on top of mapdp_core). A first visitor lands on Explore
with PLOS Section 5.2 already clustered, a scenario where K-means fails.
"""
import sys

import streamlit as st

from ui import layout  # Streamlit only: the page frame is drawn before the numerical libraries load

st.set_page_config(page_title="MAP-DP Explorer", page_icon=":material/scatter_plot:", layout="wide")
layout.apply()  # page padding, wrapping pills, charts that scroll rather than squash (ui/layout.py)

#: The status line while a fresh server imports the library (what it waits for, measured).
STARTING = ("Starting the clustering engine, once per server: importing the numerical libraries (scikit-learn, "
            "SciPy, pandas and numba) and the MAP-DP library takes about 4-5 s on a 2-core machine, then the "
            "compiled kernels load from numba's cache (about 1 s).")

PAGES = [
    st.Page("pages/home.py", title="Home", icon=":material/home:"),
    st.Page("pages/data.py", title="Data", icon=":material/table:"),
    st.Page("pages/explore.py", title="Explore", icon=":material/play_circle:", default=True),
    st.Page("pages/compare.py", title="Compare", icon=":material/leaderboard:"),
    st.Page("pages/tune.py", title="Tune", icon=":material/tune:"),
    st.Page("pages/subtypes.py", title="Subtypes", icon=":material/groups:"),
    st.Page("pages/predict.py", title="Predict", icon=":material/person_search:"),
    st.Page("pages/sequences.py", title="Sequences, groups and subjects", icon=":material/timeline:"),
]
# Because pages/ exists, Streamlit first runs a "pages folder" shim that lists every file of pages/
# by its lower-case name ("app", "compare", ...) until this script's st.navigation replaces the
# list: that list is what a visitor saw first. .streamlit/config.toml hides it
# (client.showSidebarNavigation = false), which hides st.navigation's own list too, so the pages
# are listed here as links, before anything slow.
page = st.navigation(PAGES, position="hidden")
for listed in PAGES:
    st.sidebar.page_link(listed)
st.sidebar.divider()
# Cold start (issue 27): on a fresh server the page stood blank for about 10 s while the imports
# below ran, before anything was drawn. Now the title, the sidebar's pages and a status line come
# first, and the status says what the wait is for (measured on the 2-core machine: importing
# scikit-learn, SciPy, pandas and numba with the library, about 4.3 s; then the kernels, below).
status = None  # only then a place on the page, so that every later run's page sits where it did before
if "mapdp_core" not in sys.modules:  # the first visit since the server started: the imports run now
    status = st.empty()
    with status.container():
        st.title("MAP-DP Explorer")
        st.info(STARTING, icon=":material/hourglass_top:")
from ui import common  # noqa: E402  (after the page frame, on purpose: it imports mapdp_core and numba)

common.warm_up()  # the numba kernels, once per server (its own spinner says what it waits for)
if status is not None:
    status.empty()
common.settings_from_link()  # a shared link's settings (never data), once per session, before any page reads them
badge = st.sidebar.empty()
named = common.data_badge()
badge.markdown(named)  # before the page, so the sidebar never stands empty during a run
st.sidebar.caption("Uploaded data stay in this browser session only: nothing is written to disk or shared.")
try:
    page.run()
finally:  # data the page loaded are named in the same run (also when the page stops early)
    latest = common.data_badge()
    if latest != named:
        badge.markdown(latest)
