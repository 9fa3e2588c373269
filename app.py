"""MAP-DP Explorer: MAP-DP beside K-means and DP-means, sweep by sweep.

Run with ``make run`` (or ``streamlit run app.py``). The pages live in pages/ (pages only: their
shared Streamlit helpers are in ui/, so the sidebar never lists a helper); what they compute
lives in mapdp_core (explorer, figures, tuning, profiles). A first visitor lands on Explore
with PLOS Section 5.2 already clustered, a scenario where K-means fails.
"""
import streamlit as st

from ui import common

st.set_page_config(page_title="MAP-DP Explorer", page_icon=":material/scatter_plot:", layout="wide")

PAGES = [
    st.Page("pages/home.py", title="Home", icon=":material/home:"),
    st.Page("pages/data.py", title="Data", icon=":material/table:"),
    st.Page("pages/explore.py", title="Explore", icon=":material/play_circle:", default=True),
    st.Page("pages/compare.py", title="Compare", icon=":material/leaderboard:"),
    st.Page("pages/tune.py", title="Tune", icon=":material/tune:"),
    st.Page("pages/subtypes.py", title="Subtypes", icon=":material/groups:"),
    st.Page("pages/predict.py", title="Predict", icon=":material/person_search:"),
]
page = st.navigation(PAGES)  # before anything slow: the sidebar shows these pages from the first paint
common.warm_up()
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
