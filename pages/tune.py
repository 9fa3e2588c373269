"""Tune: N0 and the prior from the likelihood (PLOS Appendix G); one click applies a value."""
import numpy as np
import streamlit as st

from mapdp_core import cross_validate, figures, map_n0, n0_grid
from mapdp_core.tuning import scaled_prior
from ui import common

d = common.data()
st.title("Tune")
st.caption(f"{d.name}. Settings in use: N0 = {common.setting('N0', 3.0):g}, prior spread × "
           f"{common.setting('spread', 1.0):g}.")

c1, c2, c3 = st.columns(3)
lo, hi = c1.select_slider("N0 range", options=[0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0],
                          value=(0.1, 30.0), key="w_tune_range")
points = c2.slider("Grid points", 3, 15, 7, key="w_tune_points")
n_init = c3.slider("Restarts per N0", 1, 5, 2, key="w_tune_restarts")
grid = [float(f"{v:.3g}") for v in np.logspace(np.log10(lo), np.log10(hi), points)]
spread = float(common.setting("spread", 1.0))
weight = float(common.setting("weight", 1.0))


def _progress(kind, fn):
    bar = st.progress(0.0, text=f"{kind}...")
    try:
        return fn(lambda i, n: bar.progress(i / n, text=f"{kind}: {i} of {n}"))
    finally:
        bar.empty()


st.subheader("1. The exact joint likelihood over N0")
prior = scaled_prior(d.X, d.likelihood, spread, weight=weight) if (spread, weight) != (1.0, 1.0) else None
try:
    g = common.cached("n0_grid", {"grid": tuple(grid), "n_init": n_init, "spread": spread, "weight": weight},
                      lambda: _progress("N0 grid", lambda cb: n0_grid(d.X, grid, d.likelihood, prior, n_init=n_init,
                                                                      on_step=cb)))
except ValueError as exc:
    common.plain_error(exc, "The N0 grid could not run")
    st.stop()
st.plotly_chart(figures.n0_figure(g.table, g.best_N0), width="stretch", key="tune_grid_plot")
k_best = int(g.table.loc[g.table["N0"] == g.best_N0, "K"].iloc[0])
st.write(f"Lowest −ln p(X, z | N0): **N0 = {g.best_N0:g}** (K = {k_best}).")
if st.button(f"Apply N0 = {g.best_N0:g}", key="apply_grid"):
    common.apply_setting("N0", g.best_N0)
    st.success(f"N0 = {g.best_N0:g} is now used on Explore, Compare, Subtypes and Predict.")

st.subheader("2. The MAP N0 for a number of clusters")
a_col, b_col, k_col = st.columns(3)
a = a_col.number_input("Gamma prior shape a", 0.01, 100.0, 1.0, key="w_tune_a")
b = b_col.number_input("Gamma prior rate b", 0.0001, 100.0, 1.0, key="w_tune_b")
K_obs = k_col.number_input("K (default: MAP-DP's K now)", 1, d.n_rows, int(k_best), key="w_tune_K")
m = map_n0(d.n_rows, int(K_obs), a, b)
st.write(f"Under a Gamma({a:g}, {b:g}) prior, K = {int(K_obs)} clusters among {d.n_rows:,} rows give the MAP "
         f"**N0 = {m.N0:.3g}** (Newton on ln N0, {m.n_iter} steps).")
if st.button(f"Apply N0 = {m.N0:.3g}", key="apply_map"):
    common.apply_setting("N0", float(f"{m.N0:.3g}"))
    st.success("Applied.")

st.subheader("3. Held-out likelihood: N0 and the prior spread together")
st.caption("K-fold cross-validation of the mixture predictive density of new rows (PLOS Appendix E). "
           "Slower: it runs MAP-DP once per fold and setting.")
f1, f2, f3 = st.columns(3)
cv_n0 = f1.multiselect("N0 values", grid, default=grid[:: max(1, len(grid) // 3)], key="w_cv_n0")
cv_scale = f2.multiselect("Spread multipliers", [0.25, 0.5, 1.0, 2.0, 4.0, 8.0], default=[0.5, 1.0, 2.0],
                          key="w_cv_scale")
folds = f3.slider("Folds", 2, 10, 5, key="w_cv_folds")
if st.button("Run cross-validation", key="run_cv") or common.setting("cv_shown", False):
    if not cv_n0 or not cv_scale:
        st.info("Choose at least one N0 and one spread.")
        st.stop()
    common.remember_setting("cv_shown", True)
    try:
        cv = common.cached("cv", {"n0": tuple(cv_n0), "s": tuple(cv_scale), "folds": folds, "weight": weight},
                           lambda: _progress("Cross-validation", lambda cb: cross_validate(
                               d.X, cv_n0, cv_scale, d.likelihood, n_folds=folds, on_step=cb, weight=weight)))
    except ValueError as exc:
        common.plain_error(exc, "Cross-validation could not run")
        st.stop()
    st.plotly_chart(figures.cv_figure(cv.summary), width="stretch", key="tune_cv_plot")
    st.dataframe(cv.summary.round(4), hide_index=True, width="stretch")
    st.write(f"Best held-out likelihood: **N0 = {cv.best_N0:g}, spread × {cv.best_scale:g}**.")
    if st.button("Apply both", key="apply_cv"):
        common.apply_setting("N0", float(cv.best_N0))
        common.apply_setting("spread", float(cv.best_scale))
        st.success("Applied.")
