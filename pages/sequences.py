"""Sequences, groups and subjects: hidden states of a time series (MAP-iHMM beside the hard HDP-HMM
and the time-blind MAP-DP), clusters shared across groups (the hard HDP) and subjects clustered by
their trajectories (mixed-effects MAP-DP). Only the algorithms the data's column roles allow are
offered (:func:`mapdp_core.models.registry.available`)."""
import streamlit as st

from explorer import figures
from mapdp_core.models import registry
from explorer import sequences
from ui import common, player

st.title("Sequences, groups and subjects")
common.image_format_choice()
DEMOS = {"hmm": "a sticky 3-state sequence (600 steps)", "long": "60 subjects × 5 visits, 3 kinds of trajectory",
         "groups": "24 groups sharing 3 clusters"}
PENALTY_HELP = ("The hard models have no N0: a penalty λ per new state or cluster (and per extra successor or "
                "extra cluster in a group) sets how many they find. 1 is the data-driven default: for the hard HDP "
                "and HDP-HMM, set from the noise variance that a quick MAP-DP fit finds, in the units of the "
                "small-variance limit (hard_common.default_lambdas); for the direct HDP-HMM, from the data's "
                "spread (default_direct_params). Below 1 more states, above 1 fewer.")


def show_sequence(table, features, time_column, subject_column, truth, tag: str, allowed=sequences.SEQUENCE_ALGORITHMS):
    """The sequence algorithms ``allowed`` on the rows in time order, with a state ribbon each."""
    st.subheader("Hidden states over time")
    st.caption("MAP-iHMM (MAP inference in the infinite HMM, EJS Section 6) uses the order of the rows; the hard "
               "HDP-HMM is its small-variance limit; MAP-DP ignores time. States are coloured to match "
               + ("the true states." if truth is not None else "the first algorithm's."))
    offered = [a for a in sequences.SEQUENCE_ALGORITHMS if a in allowed]
    common.init_widget("w_seq_algorithms", [a for a in sequences.SEQUENCE_DEFAULTS if a in offered])
    chosen = st.multiselect("Algorithms", offered, key="w_seq_algorithms")
    chosen = [a for a in offered if a in chosen]
    if not chosen:
        st.info("Choose at least one algorithm.")
        return
    c1, c2 = st.columns(2)
    common.init_widget("w_seq_N0", 3.0)
    n0 = c1.select_slider("N0 (MAP-iHMM and MAP-DP)", [0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0], key="w_seq_N0")
    common.init_widget("w_seq_penalty", 1.0)
    penalty = c2.select_slider("Hard HDP-HMM penalty (× the default λs)", list(sequences.PENALTY_SCALES),
                               key="w_seq_penalty", help=PENALTY_HELP,
                               disabled=not any(a.startswith("Hard HDP-HMM") for a in chosen))
    try:
        seq = sequences.prepare_sequence(table, features, time_column, subject_column, truth)
    except ValueError as exc:
        common.plain_error(exc, "These rows cannot be read as a sequence")
        return
    if seq.note:
        st.caption(common.escape_markdown(seq.note, 2000))

    def compute():
        with st.spinner("Running " + ", ".join(chosen) + "... (the first run after an install also compiles the "
                        "hard models' kernels, once: about 15 s)"):
            return sequences.sequence_runs(seq.X, seq.lengths, seq.truth, N0=float(n0), algorithms=chosen,
                                           penalty=float(penalty))

    runs = common.cached("sequences", {"tag": tag, "time": time_column, "subject": subject_column, "N0": n0,
                                       "algorithms": tuple(chosen), "penalty": penalty}, compute)
    for r in runs:
        if r.error:
            # the error may quote a column or a value from the uploaded table: shown as plain text
            st.warning(f"{common.escape_markdown(r.name, 200)} could not run: {common.escape_markdown(r.error, 2000)}")
    shown = max((len(r.labels) for r in runs if not r.error), default=0)
    if not shown:
        return
    series = st.selectbox("Series drawn", seq.columns, key=f"w_seq_series_{tag}") if len(seq.columns) > 1 else seq.columns[0]
    done = [r for r in runs if not r.error]

    def draw(frame: int) -> None:
        # the page owns the sweep shown (ui.player), as on Explore: the chart carries no Plotly Play or
        # slider, so the camera button's PNG or SVG is the picture alone (issue 27: a dead Play in the image)
        fig = figures.sequence_figure(seq.x, seq.values[series], series, runs, frame=frame, truth=seq.truth,
                                      x_title=seq.x_title, animate=False)
        st.plotly_chart(fig, width="stretch", key="sequence_plot", config=common.chart_config("sequence_states"))

    def describe(frame: int) -> str:
        return " · ".join(f"{r.name}: sweep {r.sweeps[min(frame, len(r.sweeps) - 1)]}" for r in done)

    if shown > 1:  # the chart opens on where each algorithm stopped; Play runs the sweeps from the first
        player.player(shown, (tag, series, tuple((r.name, len(r.labels)) for r in done)), draw, describe,
                      keys=player.Keys(f"seq_{tag}"), unit="Sweep")
        st.caption("Play animates the sweeps (each ribbon stays on its algorithm's last sweep once it has "
                   "stopped); the slider picks one.")
    else:
        draw(0)
    summary = sequences.sequence_summary(runs)
    st.dataframe(summary, hide_index=True, width="stretch", key="sequence_summary")
    verdict = sequences.structure_verdict(summary, sequences.SEQUENCE_BLIND, "the order of the rows")
    if verdict:  # only where the truth is known (an NMI) and a time-blind model ran beside a structured one
        st.markdown(verdict)


def show_subjects(table, subject_column, time_column, truth_column, tag: str):
    """Subjects clustered by their lines (intercept + slope · time), EJS Section 7."""
    st.subheader("Subjects clustered by their trajectories")
    st.caption("Mixed-effects MAP-DP (EJS Section 7): each subject's response is a straight line in the covariate "
               "(intercept and slope, with noise); subjects whose lines are alike form a cluster, and the number "
               "of clusters is found from the data.")
    others = [c for c in table.columns if c != subject_column]
    c1, c2, c3 = st.columns(3)
    # without a time column marked, no column is taken for one: an identifier (a student's number)
    # drew zig-zag lines and one cluster (issue 27)
    common.init_widget(f"w_seq_cov_{tag}", time_column if time_column in others else None)
    covariate = c1.selectbox("Time or covariate", others, key=f"w_seq_cov_{tag}", index=None,
                             placeholder="choose the column the lines run along")
    if covariate is None:
        st.info("Trajectories need a time or covariate column, measured repeatedly for each subject (a visit's "
                "month, an age, a dose): choose it above, or mark it as the time column on the Data page.")
        return
    responses = [c for c in others if c not in (covariate, truth_column)]
    if not responses:
        st.info("Choose a table with a response column besides the subject and the time.")
        return
    preferred = "response" if "response" in responses else responses[0]
    if st.session_state.get(f"w_seq_resp_{tag}") not in responses:
        st.session_state[f"w_seq_resp_{tag}"] = preferred
    response = c2.selectbox("Response", responses, key=f"w_seq_resp_{tag}")
    common.init_widget("w_seq_sub_N0", 1.0)
    n0 = c3.select_slider("N0 (subjects)", [0.1, 0.3, 1.0, 3.0, 10.0], key="w_seq_sub_N0")

    def compute():
        with st.spinner("Clustering the subjects' trajectories..."):
            return sequences.trajectory_fit(table, subject_column, covariate, response, N0=float(n0),
                                            truth_column=truth_column)

    try:
        fit = common.cached("trajectories", {"tag": tag, "subject": subject_column, "time": covariate,
                                             "response": response, "N0": n0}, compute)
    except ValueError as exc:
        common.plain_error(exc, "The subjects could not be clustered")
        return
    k_line = f"**K = {fit.n_clusters}** clusters of {len(fit.subjects)} subjects"
    st.markdown(k_line + (f" · NMI with the true clusters {fit.nmi:.2f}" if fit.nmi is not None else ""))
    st.plotly_chart(figures.trajectory_figure(fit.long, fit.clusters, x_title=str(covariate), y_title=str(response)),
                    width="stretch", key="trajectory_plot", config=common.chart_config("trajectories"))
    st.dataframe(fit.clusters, hide_index=True, width="stretch", key="trajectory_clusters",
                 column_config={"intercept": st.column_config.NumberColumn(format="%.3f"),
                                "slope": st.column_config.NumberColumn(format="%.3f")})


def show_groups(table, features, group_column, truth, tag: str, exclude=()):
    """The hard HDP beside DP-means and MAP-DP that ignore the groups, with each group's mix of clusters."""
    st.subheader("Clusters shared across groups")
    st.caption("The hard HDP (the small-variance limit of the hierarchical DP, Huggins et al. eq 19) finds clusters "
               "shared by all the groups and charges each group for every cluster it uses beyond its first, so a "
               "group keeps to few clusters. DP-means (a row farther than a cluster's noise reaches from every "
               "centre opens a cluster) and MAP-DP ignore the groups.")
    common.init_widget("w_grp_penalty", 1.0)
    penalty = st.select_slider("Hard HDP penalty (× the default λs)", list(sequences.PENALTY_SCALES),
                               key="w_grp_penalty", help=PENALTY_HELP)

    def compute():
        with st.spinner("Running the hard HDP, DP-means and MAP-DP... (the first run after an install also compiles "
                        "the hard HDP's kernels, once: about 15 s)"):
            return sequences.group_fit(table, features, group_column, truth=truth, penalty=float(penalty),
                                       exclude=exclude)

    try:
        fit = common.cached("groups", {"tag": tag, "group": group_column, "penalty": penalty}, compute)
    except ValueError as exc:
        common.plain_error(exc, "The groups could not be clustered")
        return
    if fit.note:
        st.caption(common.escape_markdown(fit.note, 2000))
    st.dataframe(fit.summary, hide_index=True, width="stretch", key="group_summary")
    verdict = sequences.structure_verdict(fit.summary, sequences.GROUP_BLIND, "the groups")
    if verdict:
        st.markdown(verdict)
    shown = st.radio("Each group's clusters, by", list(fit.mix), horizontal=True, key=f"w_grp_shown_{tag}")
    n_groups = len(fit.mix[shown])
    if n_groups > 80:
        st.caption(f"The first 80 of {n_groups} groups are drawn.")
    st.plotly_chart(figures.group_mix_figure(fit.mix[shown], shown), width="stretch", key="group_mix",
                    config=common.chart_config("group_clusters"))


d = common.data()
roles = common.sequence_roles()
present = {role for role, column in (("time", roles["time"]), ("group", roles["subject"])) if column is not None}
allowed = [a for a in registry.available(present) if a in registry.STRUCTURED]  # what the data's roles allow
if not present:
    st.info("Mark a **time column** on the Data page (below *Current data*) to find hidden states in a time "
            "series, and a **group or subject column** to find clusters shared across groups, or to cluster "
            "subjects (repeated visits) by their trajectories. Or try a simulated example:")
    # one button a line: three to a row cut their names short at 1280 px (issue 27)
    if st.button(f"Demo: {DEMOS['hmm']}", key="seq_demo_hmm", icon=":material/timeline:"):
        st.session_state["seq_demo"] = "hmm"
    if st.button(f"Demo: {DEMOS['long']}", key="seq_demo_long", icon=":material/groups:"):
        st.session_state["seq_demo"] = "long"
    if st.button(f"Demo: {DEMOS['groups']}", key="seq_demo_groups", icon=":material/school:"):
        st.session_state["seq_demo"] = "groups"
    demo = st.session_state.get("seq_demo")
    if demo == "hmm":
        table = sequences.hmm_demo()
        st.caption("Demo: a 2-D Gaussian HMM with 3 states that each stay with probability 0.97.")
        show_sequence(table, table[["x1", "x2"]], "time", None, table["state"].to_numpy(), tag="demo-hmm")
    elif demo == "long":
        table = sequences.longitudinal_demo()
        st.caption("Demo: 60 subjects seen 5 times; their lines rise, stay flat or fall.")
        show_subjects(table, "subject", "time", "cluster", tag="demo-long")
    elif demo == "groups":
        table = sequences.grouped_demo()
        st.caption("Demo: 24 groups of 60 rows; three clusters are shared by all the groups, each group uses one "
                   "or two of them.")
        show_groups(table, table[["x1", "x2"]], "group", table["cluster"].to_numpy(), tag="demo-groups")
else:
    st.caption("Algorithms these data's column roles allow: " + ", ".join(allowed) + ".")
    if "time" in present:
        show_sequence(d.table, d.X, roles["time"], roles["subject"], d.truth, tag="data",
                      allowed=[a for a in sequences.SEQUENCE_ALGORITHMS if a in allowed or "time-blind" in a])
    if "group" in present:
        views = {"Trajectories (mixed-effects MAP-DP)": "long", "Clusters shared across groups (hard HDP)": "groups"}
        if "time" not in present:  # groups without a time (students in schools): the shared clusters first
            views = dict(reversed(list(views.items())))
        view = st.radio("Grouped view", list(views), horizontal=True, key="w_grp_view")
        if views[view] == "long":
            show_subjects(d.table, roles["subject"], roles["time"], None, tag="data")
        else:
            show_groups(d.table, d.X, roles["subject"], d.truth, tag="data", exclude=(roles["time"],))
