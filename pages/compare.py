"""Compare: every algorithm over restarts (K, NMI, ARI, iterations, time, objective), and the K-means BIC curve."""
import streamlit as st

from mapdp_core import kmeans_bic
from explorer import comparison, figures, runner
from mapdp_core.models import registry
from mapdp_core.data.loading.export import csv_bytes
from ui import common, controls

#: Above this estimate (seconds) a comparison waits for a click instead of starting by itself.
ASK_ABOVE_SECONDS = 15.0

d = common.data()
st.title("Compare")
common.image_format_choice()
mixed = common.mapdp_params()
on_table = [a for a in registry.ALGORITHMS if registry.algorithm(a).input == "mixed"]  # the registry's
st.caption(f"{common.escape_markdown(d.name.rstrip('.'), 120)}. {', '.join(on_table[:-1])} and {on_table[-1]} use the likelihood chosen per column and the N0 "
           f"and prior of Explore ({common.prior_words(mixed)}, "
           f"{controls.prior_knobs(common.setting('spread', 1.0), common.setting('weight', 1.0), common.auto_choice())}); "
           "the others run on the standardised numbers" + (" with each gap at its column's mean" if d.has_gaps else "")
           + ". Settings not chosen here (DP search's beam, ...) are those of Explore.")

# pills on a row of their own wrap onto a second line; a multiselect in a fifth of the page cut the
# names short ("MAP-DP ×", "K…") at every width (issue 27)
common.init_widget("w_cmp_algorithms", ["MAP-DP", "K-means", "DP-means", "E-M"])
algorithms = st.pills("Algorithms", list(registry.ALGORITHMS), selection_mode="multi", key="w_cmp_algorithms") or []
c2, c3, c4, c5 = st.columns(4)
restarts = c2.slider("Restarts", 1, 30, 5, key="w_cmp_restarts")
K = c3.slider("K for K-means and E-M", 1, 30, int(common.setting("K-means:n_clusters", d.true_k or 3)), key="w_cmp_K")
sweeps = 100  # the Gibbs sampler's sweeps, asked only when it is compared
if "Gibbs" in algorithms:
    sweeps = c4.slider("Gibbs sweeps", 10, 600, 100, step=10, key="w_cmp_sweeps",
                       help="PLOS Section 5 ran 600; the most probable partition visited is reported.")
budget = c5.number_input("Time limit (s)", 5.0, 1800.0, 120.0, step=5.0, key="w_cmp_budget",
                         help="The comparison stops here and shows the restarts it finished.")
if not algorithms:
    st.info("Choose at least one algorithm.")
    st.stop()
algorithms = [a for a in registry.ALGORITHMS if a in algorithms]  # display order, whatever the click order
lam = None
if "DP-means" in algorithms:  # DP-means gets the lambda that gives MAP-DP's K, as on Explore
    try:
        target = common.mapdp_run().final.n_clusters
        lam = common.cached("lambda", {"K": target}, lambda: runner.lambda_for_k(d, target, Z=common.numeric(d)))[0]
    except ValueError as exc:
        common.plain_error(exc, "DP-means' lambda could not be chosen")
        st.stop()
params = {"algorithms": tuple(algorithms), "restarts": restarts, "K": K, "gibbs_sweeps": sweeps,
          "N0": mixed["N0"], "spread": mixed["spread"], "weight": mixed["weight"], "structure": mixed["structure"],
          "start": mixed["start"], "merge": mixed["merge"], "partition_prior": mixed["partition_prior"],
          "lam": lam, "seed": int(common.setting("seed", 0)), "time_budget": float(budget),
          "options": comparison.compare_options(st.session_state.get("settings", {}), algorithms)}
stopped_by_you = common.stop_button(
    "compare", tuple(sorted(params.items())),
    help="Stops the comparison in progress and shows the restarts that finished; it stays stopped until you change "
         "a setting or press Run again.")
# the restarts a click on Stop left (see _compute), for these data and settings only
partial_key = (d.key, tuple(sorted(params.items())))
partial = st.session_state.get("compare_partial")
partial = partial[1] if partial is not None and partial[0] == partial_key else None
if stopped_by_you and partial is None:
    st.stop()

# the estimate and its Run button are shown only before a run: emptied once Run is pressed
ask = st.empty()
if not stopped_by_you and not common.has_cached("compare", params):
    # timed for one restart, so that moving the restarts or the time limit does not time it again
    probe = {k: v for k, v in params.items() if k not in ("time_budget", "restarts")}
    try:
        with st.spinner("Timing the first steps of each algorithm on these data..."):
            estimate = common.cached("compare_estimate", probe,
                                     lambda: comparison.compare_estimate(d, restarts=1, choice=common.auto_choice(),
                                                                         **probe))
    except ValueError as exc:
        common.plain_error(exc, "The comparison could not run")
        st.stop()
    estimate = comparison.scale_estimate(estimate, restarts)  # an algorithm without randomness runs once
    longest = float(estimate["max_seconds"].sum())
    if longest > ASK_ABOVE_SECONDS:
        slow = estimate.sort_values("max_seconds", ascending=False)
        parts = ", ".join(f"{r.algorithm} up to {r.max_seconds:.0f} s ({r.max_steps} steps × "
                          f"{r.step_seconds:.2g} s, × {r.restarts} restart{'s' if r.restarts != 1 else ''})"
                          for r in slow.itertuples() if r.max_seconds >= 1)
        with ask.container():
            st.warning(f"This comparison may take up to about {longest:.0f} s"
                       + (f"; the time limit stops it at {budget:g} s" if longest > budget else "")
                       + f". Measured on these data: {parts}. Algorithms that converge stop sooner. Fewer restarts, "
                         "fewer Gibbs sweeps or leaving out the slowest algorithm shortens it.")
            run_it = st.button("Run the comparison", type="primary", icon=":material/play_arrow:", key="cmp_run")
        if not run_it:
            st.stop()
        ask.empty()


def _compute():
    bar = st.progress(0.0, text="Comparing...")
    total = len(algorithms) * restarts
    state = {"done": 0, "name": algorithms[0], "position": 1}

    def label() -> str:
        return (f"{state['name']} ({state['position']} of {len(algorithms)}): restart "
                f"{min(state['done'] - (state['position'] - 1) * restarts + 1, restarts)} of {restarts}")

    def on_algorithm(name, position, n):
        state.update(name=name, position=position)
        bar.progress(state["done"] / total, text=label())

    def on_step(i, n):
        state["done"] = i
        bar.progress(i / n, text=label())

    # a Streamlit call between steps: a click on Stop interrupts the script there; the comparison
    # then ends as its time limit ends it, and the restarts that finished are kept before the click
    # is handled (they were thrown away)
    stop = controls.Interruption()

    def after_step():
        return stop.checkpoint(lambda: bar.progress(state["done"] / total, text=label()))

    with common.busy("compare"):
        try:
            result = comparison.compare(d, on_step=on_step, on_algorithm=on_algorithm, should_stop=after_step,
                                        choice=choice, **params)
        finally:
            if not stop.interrupted:
                bar.empty()
        if stop.interrupted:
            st.session_state["compare_partial"] = (partial_key, result)
            stop.resume()
    return result


try:
    # the automatic choice before the comparison takes its place in the server's line: a computation
    # holding a place never waits inside it for another session's run that waits for a place
    choice = None if stopped_by_you else common.auto_choice()
    table = partial if stopped_by_you else common.cached("compare", params, _compute)
except ValueError as exc:
    common.plain_error(exc, "The comparison could not run")
    st.stop()
if stopped_by_you:
    st.warning(f"You stopped the comparison: the table shows the {len(table)} restart{'s' if len(table) != 1 else ''} "
               "that finished.")
elif table.attrs.get("stopped", False):
    st.warning(f"The time limit of {budget:g} s ended the comparison early; the table shows the restarts that finished.")
summary = comparison.compare_summary(table)
st.dataframe(summary.round(3), hide_index=True, width="stretch", key="cmp_summary")
st.caption("K counts the clusters each algorithm reports, as Explore and Subtypes show them; for MAP-DP, "
           "'components' counts its components before the overlapping ones are grouped into clusters. NMI and ARI score "
           "the clusters. Objectives are each algorithm's own (MAP-DP, Gibbs, SUGS and DP search: the exact −ln p(X, z); "
           "V-SUGS: minus its ELBO; K-means: the sum of squared distances; DP-means: that plus λK; E-M and "
           "variational DP: −N × the mean log-likelihood or bound), so compare them within a row, not across rows."
           + "".join(f" {name} has no random element: it runs once, whatever the restarts."
                     for name in comparison.runs_once(algorithms)))
with st.expander("Every restart"):
    st.dataframe(table.round(4), hide_index=True, width="stretch")
st.download_button("Download the comparison (CSV)", csv_bytes(table), "comparison.csv",
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
st.plotly_chart(figures.bic_figure(bic.curve, bic.n_clusters), width="stretch", key="bic_plot",
                config=common.chart_config("kmeans_bic"))
st.write(f"BIC chooses **K = {bic.n_clusters}**.")
st.caption("How to read it: BIC scores each K-means partition as round clusters sharing one spread, on the columns as "
           "K-means sees them (each standardised to mean 0 and sd 1, categories one-hot), by its log-likelihood less "
           "half the parameters times ln N (Pelleg & Moore 2000; higher is better). On round, well-separated "
           "clusters of one spread it peaks at their number. Where the clusters are not round after standardising, "
           "differ in spread or in size (PLOS 5.1, 5.2), it can be highest at K = 1 or keep rising with K, and it is "
           "jagged where K-means' restarts stop at different partitions: K-means' own assumptions failing, the case "
           "MAP-DP is for."
           + (" This table has gaps: K-means reads a missing value as its column's mean, so rows with gaps can form "
              "small clusters of their own and push the curve's peak to a large K." if d.has_gaps else ""))
