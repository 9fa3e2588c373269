"""Tune: N0 and the prior from the likelihood (PLOS Appendix G); one click applies a value."""
import numpy as np
import streamlit as st

from mapdp_core import cross_validate, map_n0, n0_grid
from explorer import figures, runner
from explorer import report as tables
from mapdp_core.selection.priors import scaled_prior
from ui import common, controls

d = common.data()
st.title("Tune")
common.image_format_choice()


def _applied(message: str) -> None:
    """Say it on the next run, which shows the new settings everywhere (this run drew the old ones).
    A value applied here is the Dirichlet process's, so MAP-DP runs under it again."""
    common.apply_setting("partition", "dp")
    st.session_state["tune_applied"] = message
    st.rerun()


if "tune_applied" in st.session_state:
    st.success(st.session_state.pop("tune_applied"))
if common.partition_setting() != "dp":
    st.info("Explore runs MAP-DP under the mixture of finite mixtures, which has no N0. This page searches the "
            "Dirichlet process's N0 and prior; a value applied here switches MAP-DP back to the Dirichlet process.")
choice = common.auto_choice("dp")  # Tune searches N0: the Dirichlet process's
mixed = common.mapdp_params("dp")  # the settings in use: absolute spread and weight, the Gaussian structure
likelihood = runner.likelihood_for(d, mixed["structure"])
knob_spread, knob_weight = float(common.setting("spread", 1.0)), float(common.setting("weight", 1.0))
st.caption(f"{common.escape_markdown(d.name.rstrip('.'), 120)}. Settings in use: N0 = {mixed['N0']:g}, "
           f"{controls.prior_knobs(knob_spread, knob_weight, choice)}. The knobs are × chosen here, on Explore, "
           "Compare and in shared links.")

st.subheader("The automatic choice: the evidence of every candidate")
st.caption("MAPDP() fits each candidate setting and compares them by the exact joint −ln p(X, z | θ0, N0) of the best "
           "partition found for it (PLOS Appendix G, approach 2, extended to the prior); lower is better. Stage 1 "
           "tries the spread (and whether the real-valued features form one correlated block), stage 2 the other "
           "features' prior weight and N0, stage 3 the spread again.")
left, right = st.columns(2)  # side by side where there is room, one above the other on a phone
left.plotly_chart(figures.search_figure(choice.table, "spread"), width="stretch", key="tune_search_plot",
                  config=common.chart_config("tune_search_spread"))
right.plotly_chart(figures.search_figure(choice.table, "N0"), width="stretch", key="tune_search_n0_plot",
                   config=common.chart_config("tune_search_n0"))
search = tables.search_facts(choice, d.n_rows)
st.write(f"Chosen: **N0 = {choice.N0:g}, prior spread {choice.spread:g} and weight {choice.weight:g} × the "
         "empirical-Bayes defaults** (× 1 chosen)"
         + runner.structure_phrase(choice.structure, choice.likelihood) + ".")
st.caption(f"The search tries N0 = {search['n0_text']} only (the range of the papers' experiments: the joint keeps "
           f"falling with N0 on many tables, towards more and smaller clusters), on {search['rows_text']}. Each "
           "candidate is fitted from two starts (one cluster and an over-segmented K-means start; a correlated "
           "block also from 2 and 3 K-means clusters) and judged by the best partition any candidate found.")
if tables.search_scale_words(choice):
    st.caption(tables.search_scale_words(choice))
with st.expander("Every candidate"):
    st.dataframe(choice.table.round(3), hide_index=True, width="stretch")
common.show_k_evidence("tune")
if st.button("Go back to the automatic choice", key="apply_auto"):
    for key, value in (("N0", float(choice.N0)), ("spread", 1.0), ("weight", 1.0)):
        common.apply_setting(key, value)
    _applied(f"N0 = {choice.N0:g} and the chosen prior are used again on Explore, Compare, Subtypes and Predict.")

c1, c2, c3 = st.columns(3)
lo, hi = c1.select_slider("N0 range", options=[0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0],
                          value=(0.1, 30.0), key="w_tune_range")
points = c2.slider("Grid points", 3, 15, 7, key="w_tune_points")
n_init = c3.slider("Restarts per N0", 1, 5, 2, key="w_tune_restarts",
                   help="Section 1 fits MAP-DP from one cluster at each N0, this many times in random row orders, "
                        "and keeps the lowest joint.")
grid = [float(f"{v:.3g}") for v in np.logspace(np.log10(lo), np.log10(hi), points)]
spread, weight = mixed["spread"], mixed["weight"]


def _progress(kind, fn):
    bar = st.progress(0.0, text=f"{kind}...")
    try:
        return fn(lambda i, n: bar.progress(i / n, text=f"{kind}: {i} of {n}"))
    finally:
        bar.empty()


st.subheader("1. The exact joint likelihood over N0")
st.caption(f"Every row ({d.n_rows:,}), at the prior in use; each N0 of this grid ({grid[0]:g} to {grid[-1]:g}, "
           f"{len(grid)} points) fitted from one cluster, best of {n_init} restart{'s' if n_init != 1 else ''} in "
           "random row orders.")
prior = scaled_prior(d.X, likelihood, spread, weight=weight) if (spread, weight) != (1.0, 1.0) else None
try:
    g = common.cached("n0_grid", {"grid": tuple(grid), "n_init": n_init, "spread": spread, "weight": weight,
                                  "structure": mixed["structure"]},
                      lambda: _progress("N0 grid", lambda cb: n0_grid(d.X, grid, likelihood, prior, n_init=n_init,
                                                                      on_step=cb)))
except ValueError as exc:
    common.plain_error(exc, "The N0 grid could not run")
    st.stop()
left, right = st.columns(2)  # side by side where there is room, one above the other on a phone
left.plotly_chart(figures.n0_figure(g.table, g.best_N0, "joint"), width="stretch", key="tune_grid_plot",
                  config=common.chart_config("tune_n0_grid"))
if "K" in g.table:
    right.plotly_chart(figures.n0_figure(g.table, g.best_N0, "K"), width="stretch", key="tune_grid_k_plot",
                       config=common.chart_config("tune_n0_grid_k"))
k_best = int(g.table.loc[g.table["N0"] == g.best_N0, "K"].iloc[0])
st.write(f"Lowest −ln p(X, z | N0): **N0 = {g.best_N0:g}** (K = {k_best}).")
said = tables.grid_versus_search(g.best_N0, k_best, choice, search)
if said:
    st.info(said)
if st.button(f"Apply N0 = {g.best_N0:g}", key="apply_grid"):
    common.apply_setting("N0", g.best_N0)
    _applied(f"N0 = {g.best_N0:g} is now used on Explore, Compare, Subtypes and Predict.")

st.subheader("2. The MAP N0 for a number of clusters")
a_col, b_col, k_col = st.columns(3)
a = a_col.number_input("Gamma prior shape a", 0.01, 100.0, 1.0, key="w_tune_a")
b = b_col.number_input("Gamma prior rate b", 0.0001, 100.0, 1.0, key="w_tune_b")
model_now = common.fitted_mapdp()[2]  # MAP-DP at the settings in use
k_now, parts_now = int(model_now.n_clusters_), int(model_now.n_components_)
# the box starts at the K of the model in use, and starts there again when that model changes (a
# number box under a key keeps its old value otherwise: it held 15 while MAP-DP's K was 5)
if st.session_state.get("tune_K_default") != k_now:
    st.session_state["tune_K_default"] = k_now
    st.session_state.pop("w_tune_K", None)
common.init_widget("w_tune_K", min(k_now, d.n_rows))
K_obs = k_col.number_input("K (default: MAP-DP's K now)", 1, d.n_rows, key="w_tune_K",
                           help="The number of clusters MAP-DP reports at the settings in use (Explore's K).")
if parts_now != k_now:
    st.caption(f"MAP-DP's K now is {k_now}: {parts_now} components grouped into {k_now} clusters. The CRP that N0 "
               f"governs counts components; enter {parts_now} for the N0 that its own partition implies.")
try:
    m = map_n0(d.n_rows, int(K_obs), a, b)
except ValueError as exc:  # K + a <= 2: the posterior of N0 has no mode above 0 (a plain sentence, not a crash)
    m = None
    st.info(f"No MAP N0 for K = {int(K_obs)} under a Gamma({a:g}, {b:g}) prior: {common.escape_markdown(exc, 500)}")
if m is not None:
    st.write(f"Under a Gamma({a:g}, {b:g}) prior, K = {int(K_obs)} clusters among {d.n_rows:,} rows give the MAP "
             f"**N0 = {m.N0:.3g}** (Newton on ln N0, {m.n_iter} steps).")
    if st.button(f"Apply N0 = {m.N0:.3g}", key="apply_map"):
        common.apply_setting("N0", float(f"{m.N0:.3g}"))
        _applied(f"N0 = {float(f'{m.N0:.3g}'):g} is now used on Explore, Compare, Subtypes and Predict.")

st.subheader("3. Held-out likelihood: N0 and the prior spread together")
st.caption("K-fold cross-validation of the mixture predictive density of new rows (PLOS Appendix E). "
           "Slower: it runs MAP-DP once per fold and setting.")
# pills wrap; in a third of the page a multiselect cut its chips off (issue 27's layout checks)
common.init_widget("w_cv_n0", list(grid[:: max(1, len(grid) // 3)]))
cv_n0 = st.pills("N0 values", grid, selection_mode="multi", key="w_cv_n0", format_func=lambda v: f"{v:g}") or []
common.init_widget("w_cv_scale", [0.5, 1.0, 2.0])
cv_scale = st.pills(f"Prior spread, × chosen (chosen: {choice.spread:g} × the empirical-Bayes default)",
                    [0.25, 0.5, 1.0, 2.0, 4.0, 8.0], selection_mode="multi", key="w_cv_scale",
                    format_func=lambda v: f"{v:g}") or []
folds = st.slider("Folds", 2, 10, 5, key="w_cv_folds")
if st.button("Run cross-validation", key="run_cv") or common.setting("cv_shown", False):
    if not cv_n0 or not cv_scale:
        st.info("Choose at least one N0 and one spread.")
        st.stop()
    common.remember_setting("cv_shown", True)
    try:
        absolute = tables.spread_of_default(cv_scale, choice)  # what cross_validate scales: the default
        cv = common.cached("cv", {"n0": tuple(cv_n0), "s": tuple(absolute), "folds": folds, "weight": weight,
                                  "structure": mixed["structure"]},
                           lambda: _progress("Cross-validation", lambda cb: cross_validate(
                               d.X, cv_n0, absolute, likelihood, n_folds=folds, on_step=cb, weight=weight)))
        cv = tables.cv_in_chosen_spread(cv, choice)  # shown and applied × chosen, as everywhere
    except ValueError as exc:
        common.plain_error(exc, "Cross-validation could not run")
        st.stop()
    st.plotly_chart(figures.cv_figure(cv.summary), width="stretch", key="tune_cv_plot",
                    config=common.chart_config("tune_cross_validation"))
    st.dataframe(cv.summary.round(4), hide_index=True, width="stretch")
    st.write(f"Best held-out likelihood: **N0 = {cv.best_N0:g}, prior spread × {cv.best_scale:g} chosen**.")
    if tables.cv_edge_words(cv):
        st.warning(tables.cv_edge_words(cv))  # numbers and words of the app's own: nothing the user typed
    if st.button("Apply both", key="apply_cv"):
        common.apply_setting("N0", float(cv.best_N0))
        common.apply_setting("spread", float(cv.best_scale))  # the one scale: × chosen, as Explore's slider
        _applied(f"N0 = {cv.best_N0:g} and the prior spread × {cv.best_scale:g} chosen are now used on Explore, "
                 "Compare, Subtypes and Predict.")
