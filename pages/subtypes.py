"""Subtypes: cluster profiles (PLOS Tables 3-4), tests between clusters, ranked features, imputed values, downloads."""
import numpy as np
import streamlit as st

from explorer import animation, figures, outcomes, report, sources, subtype_report
from mapdp_core.data.loading.export import csv_bytes
from mapdp_core.evaluation.profiles import cluster_profiles, feature_tests, split_sample_tests
from mapdp_core.evaluation.stability import stability_summary
from ui import common

d = common.data()
st.title("Subtypes")
common.image_format_choice()
params, run, model = common.fitted_mapdp()
labels = model.labels_
raw, profiled = report.profile_inputs(d)  # a wide table: its principal components, and the columns ranked below
headline, stable_note = st.empty(), st.container()  # filled again once the stability is known


def _headline(found: str) -> None:
    headline.caption(f"{common.escape_markdown(d.name, 120)}: MAP-DP with {common.prior_words(params)} (change it on "
                     f"Explore or Tune) found **{found}** among {d.n_rows:,} rows. Every row is kept, gaps included.")


_headline(f"{model.n_clusters_} cluster{'s' if model.n_clusters_ != 1 else ''}")
common.show_components(model)
common.show_k_evidence("subtypes")
k_table = common.cached("k_evidence_clusters", params,  # computed by show_k_evidence: for the report
                        lambda: model.k_evidence(of="clusters"))

try:
    prof = common.cached("profiles", params, lambda: cluster_profiles(raw, labels, profiled))
except ValueError as exc:
    common.plain_error(exc, "The profiles could not be computed")
    st.stop()
tests = None  # tests between clusters need two; sizes, profiles and downloads do not
if model.n_clusters_ >= 2:
    try:
        tests = common.cached("tests", params, lambda: feature_tests(raw, labels, profiled))
    except ValueError as exc:
        common.plain_error(exc, "The tests between clusters could not be computed")

st.subheader("Cluster sizes, and how sure each one is")
st.caption("Stability: MAP-DP is refitted, with the same settings, on 20 random samples of 80 % of the rows; for each "
           "cluster, the Jaccard overlap with its closest refitted cluster, averaged (Hennig 2007). From 0.75 a cluster "
           "is stable, below 0.6 fragile: it splits, merges or dissolves when a few rows change.")
try:
    with st.spinner("Refitting on 20 subsamples..."):
        stab = common.cached("stability_summary", params,
                             lambda: stability_summary(model, n_resamples=20, random_state=0))
    sizes = prof.sizes.merge(stab.table[["cluster", "stability", "dissolved", "verdict"]].round(2), on="cluster",
                             how="left")
except (ValueError, KeyError) as exc:
    common.plain_error(exc, "The stability could not be computed")
    stab, sizes = None, prof.sizes
st.dataframe(sizes, hide_index=True, width="stretch", key="sub_sizes")
if stab is not None:
    found, stable_words = subtype_report.stability_words(stab)  # the library's words: nothing the user typed
    _headline(found)
    if stable_words:
        stable_note.warning(common.escape_markdown(stable_words, limit=None))
        if stab.alternative is not None:
            st.caption(f"The {stab.alternative.K} clusters the data support stably, each made of whole fitted "
                       "clusters:")
            st.dataframe(stab.alternative.stability.rename(columns={"made_of": "fitted clusters"}).round(2),
                         hide_index=True, width="stretch", key="sub_stable")
outcome = None
if d.outcome is not None:
    st.subheader("The outcome across the clusters (it did not form them)")
    st.caption(outcomes.OUTCOME_WHY)
    try:
        outcome = common.cached("outcome", params, lambda: outcomes.outcome_comparison(
            sources.analysed_table(d), labels, d.outcome))
    except ValueError as exc:
        common.plain_error(exc, "The outcome could not be compared across the clusters")
    else:
        st.markdown(common.escape_markdown(outcome.sentence(why=False), limit=None))
        st.plotly_chart(outcomes.outcome_figure(outcome), width="stretch", key="sub_outcome",
                        config=common.chart_config("outcome_by_cluster"))
        st.dataframe(outcomes.outcome_table(outcome), hide_index=True, width="stretch", key="sub_outcome_table")
        if outcome.kind == "time_to_event":
            st.caption("Kaplan-Meier curves with 95 % bands; the log-rank test asks whether any cluster's hazard differs; "
                       "the hazard ratios (Cox model, the cluster as its only covariate) compare each cluster with the "
                       "largest one.")
elif any("Outcome:" in n for n in d.notes):
    st.info("No outcome compared: " + common.escape_markdown(next(n for n in d.notes if "Outcome:" in n)[9:], None))
else:
    st.caption("An outcome (a later diagnosis, a death and its time) can be given the role 'outcome' on the Data page: "
               "it is left out of the clustering and compared across the clusters here, the one comparison that is "
               "not circular.")
st.subheader("Profile of each cluster")
st.caption("Per feature, the summary that suits its type: proportion for yes/no, mean score and distribution for "
           "ordinal scores, category shares, mean ± sd for measurements, rate for counts (as PLOS Tables 3-4).")
st.dataframe(prof.table, width="stretch", key="sub_profile")
heat = report.cluster_heatmap(d, labels)
if len(heat):
    st.plotly_chart(figures.heatmap_figure(heat.round(2), heat.round(1).astype(str), "sd from overall mean"),
                    width="stretch", key="sub_heatmap", config=common.chart_config("cluster_heatmap"))
    st.caption("Red: the cluster's mean lies above the overall mean; blue: below; white: at it (in overall standard "
               "deviations, observed values only; the report uses the same colours).")
    if len(d.features) > report.HEATMAP_FEATURES:
        st.caption(f"At most {report.HEATMAP_FEATURES} features (of {len(d.features):,}): those whose cluster means lie "
                   "farthest from the overall mean, farthest first; the profile table above has every one.")

if d.wide is not None:
    st.subheader(f"The columns that differ most between the clusters (of {len(d.wide.columns):,})")
    st.caption(f"MAP-DP clustered the {len(d.wide.columns):,} real-valued columns through their principal components "
               f"({', '.join(d.wide.names)}). Here are the columns themselves, ranked by the share of their variance that "
               "lies between the clusters (eta squared), with each cluster's mean in standard deviations from the "
               "column's mean. The assignments download keeps every column.")
    st.dataframe(common.cached("top_features", params, lambda: report.top_features(d, labels)).round(3),
                 hide_index=True, width="stretch", key="sub_top_features")

st.subheader("Which features separate the clusters")
st.caption("One test per feature across clusters (Welch t / Mann-Whitney / Kruskal-Wallis for numbers and scores, "
           "chi-square or Fisher for categories), q = Benjamini-Hochberg adjusted p; rank 1 separates best. "
           "p and q are given to two significant figures (scientific below 0.001; '< 1e-300' is past what the "
           "computer's numbers resolve). A note says when a cluster's constant values called for the rank test.")
# p and q as text (report.tests_for_display): as plain decimals a p of 1e-300 filled its column with
# zeros, and a feature that could not be tested showed "None" instead of the reason
if tests is not None:
    st.warning(f"**Read these as a description, not as proof of subtypes.** {subtype_report.SELECTION_CAVEAT}")
    st.dataframe(report.tests_for_display(tests), hide_index=True, width="stretch", key="sub_tests")
    with st.expander("Test on rows the clusters were not formed from (sample splitting)"):
        st.caption("MAP-DP is refitted, with the same settings, on a random half of the rows (half A); the other half "
                   "(half B) is assigned to half A's clusters and only half B is tested. This removes the fit to the "
                   "tested rows' own noise, at the cost of half the rows, and half A's clusters may differ from "
                   "those above. It is not a full cure: half B is still sorted by its own features, so a feature "
                   "that decides the assignment can still look different with no subtypes at all (Gao, Bien & "
                   "Witten, JASA 2022). Read it beside the stability above.")
        if st.button("Refit on half the rows and test the other half", key="split_tests_run") or \
                common.has_cached("split_tests", params):
            try:
                with st.spinner("Refitting on half the rows..."):
                    split = common.cached("split_tests", params, lambda: split_sample_tests(model, raw, profiled))
            except ValueError as exc:
                common.plain_error(exc, "The split-sample tests could not be computed")
            else:
                st.caption(split.attrs["message"])  # the library's own sentence: nothing the user typed
                if len(split):
                    st.dataframe(report.tests_for_display(split), hide_index=True, width="stretch",
                                 key="sub_split_tests")
elif model.n_clusters_ < 2:
    st.info("MAP-DP found one cluster at these settings, so there is nothing to test between clusters; a larger N0 "
            "or a narrower prior spread on Explore asks for more.")

imputed = None
if d.has_gaps:
    st.subheader("Imputed values")
    st.caption(report.IMPUTED_WORDS)
    filled, was_missing = imputed = model.impute()
    shown, was_filled = report.imputed_rows(d, labels, filled, was_missing)
    id_name = shown.columns[0]
    # the identifier column's name is the uploader's: shown as plain text
    st.caption(f"Rows are named by {'their ' + common.escape_markdown(id_name, 80) if id_name != 'row' else 'their row number (from 1)'}; "
               "filled cells are shaded and listed in the column 'filled'.")
    numbers = [c for c in shown.columns if c not in ("cluster", id_name) and shown[c].dtype.kind == "f"]
    shaded = shown.style.apply(lambda _: np.where(was_filled, "background-color: #fde9a9", ""), axis=None) \
        .format(report.cell_text, subset=numbers)  # as rounded: "5.13", not the Styler's "5.130000"
    st.dataframe(shaded, hide_index=True, width="stretch", key="sub_imputed")

st.subheader("Downloads")
choice, settings = common.auto_choice(), dict(st.session_state.get("settings", {}))


def _report_html() -> bytes:
    """Built when the button is pressed, from what this page shows (in memory; nothing is stored)."""
    try:
        return subtype_report.subtype_report_html(d, model, params, choice=choice, settings=settings, run=run,
                                                  profiles=prof, tests=tests, stability=stab, k_evidence=k_table,
                                                  imputed=imputed, outcome=outcome).encode()
    except Exception as exc:  # a failed download says why, in the file, rather than failing silently
        return subtype_report.failed_report_html(exc).encode()


st.download_button("Subtype report: one HTML file to keep or file", _report_html, subtype_report.REPORT_FILE_NAME,
                   "text/html", key="download_report", on_click="ignore", type="primary",
                   icon=":material/description:")
st.caption("Everything above in one self-contained file that opens in any browser and prints: the data and what was "
           "done to each column and why, the settings and how they were chosen, K and how sure it is, sizes with "
           "stability, profiles, the tests with their caveat, the imputed cells marked, a methods paragraph with "
           "citations and package versions, and the settings (JSON) to run it again. Made in this session's memory.")
c1, c2 = st.columns(2)  # two to a row: three cut the assignments' label short at 1280 px (issue 27)
table = report.assignments(d, labels)
c1.download_button("Assignments with the original rows (CSV)", csv_bytes(table),
                   "assignments.csv", "text/csv", key="download_assignments")
c2.download_button("Profiles (CSV)", csv_bytes(prof.tidy), "profiles.csv", "text/csv",
                   key="download_profiles")
coords, names = common.cached("view", {"features": None}, lambda: sources.projection(d))
sample = sources.display_sample(d.n_rows)
frames = animation.animation_frames([run], coords, sample, d.truth, models=[model])  # last frame: the clusters


def _figure_html() -> bytes:
    """Built when the button is pressed: the page does not carry a 5 MB file on every run."""
    settings = {"MAP-DP": common.prior_words(params)}
    fig = figures.animation_figure(frames, coords[sample], names, settings=settings)
    merged = frames.groups[0]
    caption = (f"{d.name}: MAP-DP, {common.prior_words(params)}, prior spread × "
               f"{figures.plain_number(params.get('spread', 1.0))}, {params.get('restarts', 1)} restart(s), seed "
               f"{params.get('seed', 0)}; every sweep on {len(sample):,} of {d.n_rows:,} rows, in the view "
               f"{names[0]} / {names[1]}"
               + (f"; the last frame colours the clusters ({animation.groups_text(merged)})." if merged else "."))
    return figures.animation_html(fig, f"MAP-DP clusters of {d.name}", caption).encode()


c1.download_button("Animated figure (self-contained HTML)", _figure_html, "mapdp_clusters.html", "text/html",
                   key="download_figure", on_click="ignore")
