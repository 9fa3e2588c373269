"""Subtypes: cluster profiles (PLOS Tables 3-4), tests between clusters, ranked features, imputed values, downloads."""
import streamlit as st

from mapdp_core import explorer, figures
from mapdp_core.profiles import cluster_profiles, feature_tests
from mapdp_core.stability import cluster_stability
from ui import common

d = common.data()
st.title("Subtypes")
params, run, model = common.fitted_mapdp()
labels = model.labels_
raw = d.table[d.features]
st.caption(f"{d.name}: MAP-DP with N0 = {params['N0']:g} (change it on Explore or Tune) found "
           f"**{model.n_clusters_} clusters** among {d.n_rows:,} rows. Every row is kept, gaps included.")

try:
    prof = common.cached("profiles", params, lambda: cluster_profiles(raw, labels, d.likelihood))
    tests = common.cached("tests", params, lambda: feature_tests(raw, labels, d.likelihood))
except ValueError as exc:
    common.plain_error(exc, "The profiles could not be computed")
    st.stop()

st.subheader("Cluster sizes, and how sure each one is")
st.caption("Stability: MAP-DP is refitted, with the same settings, on 20 random samples of 80 % of the rows; for each "
           "cluster, the Jaccard overlap with its closest refitted cluster, averaged (Hennig 2007). From 0.75 a cluster "
           "is stable, below 0.6 fragile: it splits, merges or dissolves when a few rows change.")
try:
    with st.spinner("Refitting on 20 subsamples..."):
        stab = common.cached("stability", params, lambda: cluster_stability(model, n_resamples=20, random_state=0))
    sizes = prof.sizes.merge(stab[["cluster", "stability", "dissolved", "verdict"]].round(2), on="cluster", how="left")
except (ValueError, KeyError) as exc:
    common.plain_error(exc, "The stability could not be computed")
    sizes = prof.sizes
st.dataframe(sizes, hide_index=True, width="stretch", key="sub_sizes")
st.subheader("Profile of each cluster")
st.caption("Per feature, the summary that suits its type: proportion for yes/no, mean score and distribution for "
           "ordinal scores, category shares, mean ± sd for measurements, rate for counts (as PLOS Tables 3-4).")
st.dataframe(prof.table, width="stretch", key="sub_profile")
heat = explorer.cluster_heatmap(d, labels)
if len(heat):
    st.plotly_chart(figures.heatmap_figure(heat.round(2), heat.round(1).astype(str), "sd from overall mean"),
                    width="stretch", key="sub_heatmap")

st.subheader("Which features separate the clusters")
st.caption("One test per feature across clusters (Welch t / Mann-Whitney / Kruskal-Wallis for numbers and scores, "
           "chi-square or Fisher for categories), q = Benjamini-Hochberg adjusted p; rank 1 separates best.")
st.dataframe(tests, hide_index=True, width="stretch", key="sub_tests")

if d.has_gaps:
    st.subheader("Imputed values")
    st.caption("For display only (the clustering itself leaves gaps out): each missing entry is filled from its "
               "row's cluster, the predictive mean for measurements and the most probable value otherwise "
               "(PLOS Appendix F).")
    filled, was_missing = model.impute()
    rows = was_missing.any(axis=1).to_numpy()
    shown = filled[rows].copy()
    shown.insert(0, "cluster", labels[rows])
    shown.insert(0, "row", d.table.index[rows])
    st.dataframe(shown, hide_index=True, width="stretch", key="sub_imputed")

st.subheader("Downloads")
c1, c2, c3 = st.columns(3)
table = explorer.assignments(d, labels)
c1.download_button("Assignments with the original rows (CSV)", table.to_csv(index=False).encode(),
                   "assignments.csv", "text/csv", key="download_assignments")
c2.download_button("Profiles (CSV)", prof.tidy.to_csv(index=False).encode(), "profiles.csv", "text/csv",
                   key="download_profiles")
coords, names = common.cached("view", {"features": None}, lambda: explorer.projection(d))
sample = explorer.display_sample(d.n_rows)
frames = explorer.animation_frames([run], coords, sample, d.truth)
html = figures.animation_figure(frames, coords[sample], names).to_html(include_plotlyjs=True, full_html=True)
c3.download_button("Animated figure (self-contained HTML)", html.encode(), "mapdp_clusters.html", "text/html",
                   key="download_figure")
