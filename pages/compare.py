"""Compare: every algorithm over restarts (K, NMI, ARI, iterations, time, objective), and the K-means BIC curve."""
import streamlit as st

from mapdp_core import explorer, figures, kmeans_bic
from ui import common

d = common.data()
st.title("Compare")
mixed = common.mapdp_params()
st.caption(f"{d.name}. MAP-DP and Gibbs use the likelihood chosen per column and the N0 and prior of Explore "
           f"(N0 = {mixed['N0']:g}, spread × {common.setting('spread', 1.0):g} the chosen); the others run on "
           "the standardised numbers" + (" with each gap at its column's mean." if d.has_gaps else "."))

c1, c2, c3, c4, c5 = st.columns(5)
algorithms = c1.multiselect("Algorithms", list(explorer.ALGORITHMS), default=["MAP-DP", "K-means", "DP-means", "E-M"],
                            key="w_cmp_algorithms")
restarts = c2.slider("Restarts", 1, 30, 5, key="w_cmp_restarts")
K = c3.slider("K for K-means and E-M", 1, 30, int(common.setting("K-means:n_clusters", 3)), key="w_cmp_K")
sweeps = c4.slider("Gibbs sweeps", 10, 600, 100, step=10, key="w_cmp_sweeps",
                   help="PLOS Section 5 ran 600; the most probable partition visited is reported.")
budget = c5.number_input("Time limit (s)", 5.0, 1800.0, 120.0, step=5.0, key="w_cmp_budget",
                         help="The comparison stops here and shows the restarts it finished.")
if not algorithms:
    st.info("Choose at least one algorithm.")
    st.stop()
if st.button("Stop", icon=":material/stop:", key="cmp_stop", help="Stops a long comparison; change a setting to start again."):
    st.info("Stopped. Change a setting to compare again.")
    st.stop()
params = {"algorithms": tuple(algorithms), "restarts": restarts, "K": K, "gibbs_sweeps": sweeps,
          "N0": mixed["N0"], "spread": mixed["spread"], "weight": mixed["weight"], "structure": mixed["structure"],
          "seed": int(common.setting("seed", 0)), "time_budget": float(budget)}


def _compute():
    bar = st.progress(0.0, text="Comparing...")
    state = {"done": 0, "total": len(algorithms) * restarts}

    def on_step(i, n):
        state["done"] = i
        bar.progress(i / n, text=f"restart {i} of {n}")

    def after_step():
        # a Streamlit call between steps: a click on Stop interrupts the comparison here
        bar.progress(state["done"] / state["total"], text=f"restart {state['done'] + 1} of {state['total']}")
        return False

    try:
        return explorer.compare(d, on_step=on_step, should_stop=after_step, **params)
    finally:
        bar.empty()


try:
    table = common.cached("compare", params, _compute)
except ValueError as exc:
    common.plain_error(exc, "The comparison could not run")
    st.stop()
finished = table.groupby("algorithm").size() if len(table) else None
if finished is None or len(finished) < len(algorithms) or (finished < restarts).any():
    st.warning(f"The time limit of {budget:g} s ended the comparison early; the table shows the restarts that finished.")
summary = explorer.compare_summary(table)
st.dataframe(summary.round(3), hide_index=True, width="stretch", key="cmp_summary")
st.caption("Objectives are each algorithm's own (MAP-DP and Gibbs: the exact −ln p(X, z); K-means: the sum of "
           "squared distances; DP-means: that plus λK; E-M and variational DP: −N × the mean log-likelihood or "
           "bound), so compare them within a row, not across rows.")
with st.expander("Every restart"):
    st.dataframe(table.round(4), hide_index=True, width="stretch")
st.download_button("Download the comparison (CSV)", table.to_csv(index=False).encode(), "comparison.csv",
                   "text/csv", key="cmp_download")

st.subheader("K-means: choosing K by BIC")
st.caption("K-means cannot choose K itself; the usual fix is to run it for every K and pick the highest BIC "
           "(PLOS Section 5 does this for the comparison).")
kmax = st.slider("Largest K tried", 2, 40, 20, key="w_bic_kmax")
try:
    bic = common.cached("bic", {"kmax": kmax, "seed": params["seed"]},
                        lambda: kmeans_bic(common.numeric(d), range(1, min(kmax, d.n_rows) + 1), n_init=5,
                                           random_state=params["seed"]))
except ValueError as exc:
    common.plain_error(exc, "The BIC curve could not be computed")
    st.stop()
st.plotly_chart(figures.bic_figure(bic.curve, bic.n_clusters), width="stretch", key="bic_plot")
st.write(f"BIC chooses **K = {bic.n_clusters}**.")
