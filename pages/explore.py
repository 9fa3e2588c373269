"""Explore: move N0 and the prior, watch MAP-DP beside K-means, DP-means or any registered algorithm, step by step."""
import time

import streamlit as st

from mapdp_core import n0_for_expected_clusters
from explorer import animation, figures, playback, report, runner, sharing, sources
from mapdp_core.models import registry
from mapdp_core.evaluation.explain import describe_priors
from mapdp_core.selection.priors import SCALED_FAMILIES, expected_clusters, scaled_prior
from ui import common, controls, player

d = common.data()
st.title("Explore")
st.caption(common.escape_markdown(d.description, 1000))
common.image_format_choice()
if "link_problem" in st.session_state:  # a sentence whose quotes of the link are escaped (common.settings_from_link)
    st.warning(st.session_state.pop("link_problem"))
# the prior on partitions (drawn below, in the settings column) decides which search the knobs start from:
# a click on it is read now, not one rerun later
if "w_partition" in st.session_state:
    common.remember_setting("partition", st.session_state["w_partition"])
choice = common.auto_choice()  # what MAPDP() would choose: the starting point of every knob below

# the chosen and the applied N0 are options themselves, so the slider shows exactly the value that runs
N0_OPTIONS = sorted(set(controls.log_options(1e-2, 1e3, 3.0)) | {float(common.auto_choice("dp").N0),
                                                                  common.n0_setting()})
SPREAD_OPTIONS = [0.1, 0.15, 0.2, 0.25, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 8.0, 12.0, 16.0, 32.0]
WEIGHT_OPTIONS = [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0]
# a value applied elsewhere (Tune) is an option itself, so the slider shows exactly the value that runs
SPREAD_OPTIONS = sorted(set(SPREAD_OPTIONS) | {float(common.setting("spread", 1.0))})
WEIGHT_OPTIONS = sorted(set(WEIGHT_OPTIONS) | {float(common.setting("weight", 1.0))})
ALGORITHMS = list(registry.ALGORITHMS)  # the registry: every algorithm the library knows
SHOWN_FIRST = ["MAP-DP", "K-means", "DP-means"]  # the teaching default: MAP-DP beside the two K-means relatives
#: Seconds: a run estimated longer is announced before it starts (with each algorithm's share) ...
SAY_ESTIMATE_ABOVE = 10.0
#: ... and a wait estimated longer shows each algorithm's panel as soon as it is done, with a
#: placeholder panel (and its progress) for each one still running (issue 27)
DRAW_AS_READY_ABOVE = 2.0
_nearest = controls.nearest
#: where K-means' restarts begin: its own seeding, or rows a teacher picks on a chart (issue 27)
#: the priors on partitions as the settings column names them (their sources are in the radio's help)
PARTITION_LABELS = {"dp": "Dirichlet process (N0)", "mfm": "Mixture of finite mixtures"}
KMEANS_STARTS = {"k-means++": "k-means++ (spread-out rows drawn at random)", "picked": "rows I pick on a chart"}


N0_WORDS = (
    "MAP-DP goes through the rows one by one. A row may join an existing cluster, with a weight that grows with the "
    "cluster's size and how well the row fits it, or start a **new cluster**, with a weight proportional to **N0** "
    "(PLOS eq 7). So N0 is how many rows' worth of support a new cluster gets: small N0, few clusters; large N0, "
    "more. Before any data are seen, the expected number of clusters among N rows grows with N, slowly:")
N0_FORMULA = r"E[K] = \sum_{i=1}^{N} \frac{N_0}{N_0 + i - 1} \approx N_0 \ln\left(1 + \frac{N}{N_0}\right)"


@st.dialog("What N0 does", width="large")
def _n0_large(curve, n0: float, n_rows: int) -> None:
    """The N0 picture at a size a projector shows across a room."""
    st.markdown(f"#### {N0_WORDS}")
    st.latex(r"\Large " + N0_FORMULA)
    st.plotly_chart(figures.expected_clusters_figure(curve, n0, n_rows, large=True), width="stretch",
                    key="n0_picture_large", config=common.chart_config("n0_expected_k"))
    st.markdown("#### The data then decide how many clusters there really are.")


def _centre_picker(coords, sample, axis_names) -> None:
    """A chart of the rows on which a teacher picks K-means' starting centres (one per row picked)."""
    picked = [int(r) for r in common.setting("K-means:start_rows", [])]
    with st.expander("K-means' starting centres: pick rows on this chart", expanded=True):
        st.caption("Each click on a point adds it (shift or not); the box or the lasso in the chart's toolbar adds "
                   f"every point inside (at most {controls.MAX_PICKED_CENTRES} centres in all). Each row picked is one "
                   "starting centre and K is their number. Put two centres in one group and none in another to watch "
                   "K-means stop in a poor optimum.")
        shown = figures.centre_picker_figure(coords[sample], sample, axis_names,
                                             coords[picked] if picked else coords[:0], picked)
        event = st.plotly_chart(shown, width="stretch", key="kmeans_centres", on_select="rerun",
                                selection_mode=("points", "box", "lasso"), config=common.chart_config("kmeans_centres"))
        rows = common.selected_rows(event, sample)
        # a selection is read once: the same event comes back on every rerun until the next one
        if rows and tuple(rows) != st.session_state.get("kmeans_centres_event"):
            st.session_state["kmeans_centres_event"] = tuple(rows)
            now, refused = controls.add_picks(picked, rows)
            if refused:
                st.session_state["kmeans_centres_refused"] = refused
            elif now != picked:
                common.remember_setting("K-means:start_rows", now)
                st.rerun()
        if "kmeans_centres_refused" in st.session_state:
            st.warning(st.session_state.pop("kmeans_centres_refused"))
        if picked:
            st.caption(f"Starting centres: row{'s' if len(picked) > 1 else ''} "
                       f"{', '.join(f'{r + 1:,}' for r in picked)} (K = {len(picked)}; one run, since every restart "
                       "would start from the same centres).")
            if st.button("Clear the picked rows", key="kmeans_centres_clear"):
                common.remember_setting("K-means:start_rows", [])
                st.session_state.pop("kmeans_centres_event", None)
                st.rerun()
        else:
            st.info("No rows picked yet: K-means starts from k-means++ meanwhile.")


def _sweep_in_steps(mapdp_run, coords, sample, axis_names, reference) -> None:
    """One sweep of MAP-DP's shown run, row by row, with its own player (issue 27: the decisions
    inside a sweep, the idea the N0 text explains)."""
    with st.expander("Inside one sweep: MAP-DP's rows, a few at a time",
                     expanded=bool(st.session_state.get("w_sweep_steps_on"))):
        st.caption("A sweep visits every row once, in a random order, and moves each to the cluster of least cost "
                   "(the step above explains one row). Here one sweep of the run shown is stopped every "
                   f"{1 / animation.SWEEP_STEPS:.1%} of the rows: faint rows are not visited yet in this sweep, "
                   "outlined ones were visited in this step. Colours are the clusters the sweep ends with. To watch "
                   "clusters form, let MAP-DP start from one cluster (under “Restarts, seed, view”).")
        # computed only when asked for: a sweep in 40 pieces on every N0 move would slow the teaching loop
        if not st.toggle("Show one sweep row by row", key="w_sweep_steps_on"):
            return
        n_sweeps = len(mapdp_run.states)
        common.init_widget("w_sweep_steps_sweep", 1)
        if int(st.session_state["w_sweep_steps_sweep"]) > n_sweeps:  # a new run with fewer sweeps
            st.session_state["w_sweep_steps_sweep"] = n_sweeps
        sweep = st.number_input(f"Sweep (1 to {n_sweeps})", 1, n_sweeps, key="w_sweep_steps_sweep")
        key = {**mapdp_run.params, "sweep": int(sweep), "restart": mapdp_run.best_index, "rows": d.key,
               "shown": len(sample), "colours": hash(reference.tobytes())}
        try:
            frames = common.cached("sweep_steps", key, lambda: animation.sweep_step_frames(
                runner.sweep_steps(d, mapdp_run, int(sweep), animation.SWEEP_STEPS), sample, reference))
        except ValueError as exc:
            common.plain_error(exc, "That sweep cannot be shown")
            return

        def draw(step: int) -> None:
            st.plotly_chart(figures.sweep_step_figure(coords[sample], frames, step, axis_names), width="stretch",
                            key="sweep_steps_chart", config=common.chart_config("mapdp_sweep_steps"))

        player.player(frames.n_frames, ("sweep_steps", repr(sorted(key.items()))), draw, frames.captions.__getitem__,
                      keys=player.Keys("sweep_steps"), unit="Step")


left, right = st.columns([1, 3], gap="medium")
with left:
    st.subheader("Settings")
    common.init_widget("w_partition", common.partition_setting())
    # short labels: in the narrow settings column the long one wrapped, its button between two lines
    partition = st.radio(
        "Prior on partitions", list(runner.PARTITION_PRIORS), key="w_partition",
        format_func=lambda p: PARTITION_LABELS.get(p, runner.PARTITION_PRIORS[p]),
        help="The papers' MAP-DP uses the Dirichlet process: a new cluster weighs like N0 rows, however many rows "
             "there are. The mixture of finite mixtures puts a prior on the number of components (geometric, mean "
             "10) and Dirichlet(1) weights on them, so a new cluster weighs less as rows are added and K does not "
             "keep growing with the table (Miller & Harrison 2018). The likelihood's prior stays as chosen.")
    common.remember_setting("partition", partition)
    dp = partition == "dp"
    common.init_widget("w_N0", _nearest(N0_OPTIONS, common.n0_setting()))
    n0 = st.select_slider(
        "N0, the concentration (log scale)", options=N0_OPTIONS, key="w_N0", disabled=not dp,
        help="The prior count of a new cluster: larger N0, more clusters a priori (PLOS eq 7). It starts at the "
             "value chosen from the data (the Tune page shows how).")
    common.remember_setting("N0", n0)
    if dp:
        st.caption(f"Before seeing the data this N0 expects **{expected_clusters(n0, d.n_rows):.1f} clusters** "
                   f"among {d.n_rows:,} rows (CRP, PLOS Appendix G).")
    else:
        st.caption("N0 is the Dirichlet process's: the mixture of finite mixtures has none. MAP-DP runs with "
                   "`MAPDP(partition_prior=\"mfm\")` at the prior chosen from the data, and so does the Gibbs "
                   "sampler; SUGS and DP search keep the Dirichlet process at this N0.")
    # empty until asked (issue 43: it read "0.00", a number of clusters no one expects)
    want_k = st.number_input("…or set N0 from an expected number of clusters", min_value=1.0, value=None, step=1.0,
                             format="%g", placeholder="e.g. 4", key="w_expected_K",
                             help="Empty leaves N0 as on the slider.", disabled=not dp)
    if want_k is not None and dp:
        try:
            implied = float(f"{n0_for_expected_clusters(want_k, d.n_rows):.3g}")  # the value shown is the value used
        except ValueError as exc:
            common.plain_error(exc, f"No N0 gives {want_k:g} expected clusters among {d.n_rows:,} rows")
        else:
            st.caption(f"E[K] = {want_k:g} needs N0 = {implied:g}.")
            if not N0_OPTIONS[0] <= implied <= N0_OPTIONS[-1]:
                st.caption(f"That is outside the slider's range ({N0_OPTIONS[0]:g} to {N0_OPTIONS[-1]:g}); ask for "
                           "fewer or more clusters.")
            elif st.button("Use it", key="use_expected_K"):
                common.apply_setting("N0", implied)  # the slider is drawn above: it takes the value on the rerun
                st.rerun()
    gaussian = [f for f in d.features if d.family_of(f) in SCALED_FAMILIES]  # the families "spread" scales
    spread = 1.0
    if gaussian:
        common.init_widget("w_spread", _nearest(SPREAD_OPTIONS, common.setting("spread", 1.0)))
        spread = st.select_slider(
            controls.SPREAD_NAME.capitalize(), options=SPREAD_OPTIONS, key="w_spread",
            help=f"Multiplies the within-cluster (co)variance the prior expects for every Gaussian feature, from the "
                 f"value chosen from the data ({choice.spread:g} × the empirical-Bayes default): above 1 asks for "
                 "wider, hence fewer, clusters.")
        common.remember_setting("spread", spread)
    others = [f for f in d.features if f not in gaussian]
    weight = 1.0
    if others:
        common.init_widget("w_weight", _nearest(WEIGHT_OPTIONS, common.setting("weight", 1.0)))
        weight = st.select_slider(
            controls.WEIGHT_NAME.capitalize() + " (yes/no, scores, categories, counts)", options=WEIGHT_OPTIONS, key="w_weight",
            help="For yes/no, score, category and count features the prior is a guess about each cluster's "
                 "proportions or rates that weighs like a few observations; this multiplies that weight. "
                 "Lighter lets small differences between clusters count.")
        common.remember_setting("weight", weight)
    # pills wrap onto a second line in the narrow settings column, where a multiselect cut off a name
    common.init_widget("w_algorithms", [a for a in common.setting("algorithms", SHOWN_FIRST) if a in ALGORITHMS])
    algorithms = st.pills("Algorithms", ALGORITHMS, selection_mode="multi", key="w_algorithms") or []
    algorithms = [a for a in ALGORITHMS if a in algorithms]  # display order, whatever the click order
    common.remember_setting("algorithms", algorithms)
    n_truth = d.true_k or 3  # K-means and E-M are told the true K (outliers not counted: PLOS 5.3)
    # each other algorithm's settings come from its own ui hints; MAP-DP's N0 and prior block above are
    # shared with every algorithm that reads the mixed table (Gibbs, SUGS, DP search, ...), and DP-means
    # may take MAP-DP's K instead of its own lambda
    # "MAP-DP starts from" and the grouping checkbox are drawn further down (under "Restarts, seed,
    # view") but shape MAP-DP's settings here: a click on them is read now, not one rerun later
    for widget, name in (("w_start", "start"), ("w_merge", "merge")):
        if widget in st.session_state:
            common.remember_setting(name, st.session_state[widget])
    chosen_params = {"MAP-DP": runner.mapdp_settings(choice, n0, spread, weight, common.start_setting(),
                                                     bool(common.setting("merge", True)), partition)}
    st.caption("Chosen from the data by the exact joint evidence: "
               + (f"N0 = {choice.N0:g}; " if partition == "dp" else "under the mixture of finite mixtures, ")
               + f"prior spread {choice.spread:g} "
               f"and weight {choice.weight:g} × the empirical-Bayes defaults (the sliders' × 1 chosen)"
               + runner.structure_phrase(choice.structure, choice.likelihood)
               + (f" (searched on {choice.rows_searched:,} of {d.n_rows:,} rows)" if choice.rows_searched < d.n_rows
                  else "") + ". The Tune page shows the search.")
    match_k = False
    lambda_slot = None  # where the λ that runs is said, once MAP-DP's K is known
    kmeans_start = "k-means++"
    for name in algorithms:
        cls = registry.algorithm(name)
        params = dict(chosen_params["MAP-DP"]) if cls.input == "mixed" else {}
        if name == "K-means":
            start_key = common.widget_key(name, "start")
            common.init_widget(start_key, common.setting("K-means:start", "k-means++"))
            kmeans_start = st.radio("K-means starts from", list(KMEANS_STARTS), format_func=KMEANS_STARTS.get,
                                    key=start_key, help="k-means++ draws spread-out rows as the starting centres, "
                                    "again for every restart. Picking them yourself (on a chart beside the results) "
                                    "shows how K-means' answer depends on where it starts.")
            common.remember_setting("K-means:start", kmeans_start)
            picked = [int(r) for r in common.setting("K-means:start_rows", [])]
            if kmeans_start == "picked" and picked:
                st.caption(f"K for K-means: {len(picked)}, one cluster per row picked.")
                params.update(start_rows=tuple(picked), n_clusters=len(picked))
        if name == "DP-means":
            common.init_widget("w_match_k", bool(common.setting("match_k", True)))
            match_k = st.checkbox("DP-means: match MAP-DP's K", key="w_match_k")
            common.remember_setting("match_k", match_k)
        for param, spec in cls.ui.items():
            if name == "MAP-DP" and param == "N0":
                continue  # the slider above
            if name == "K-means" and "start_rows" in params:
                continue  # K is the number of rows picked
            if name == "DP-means" and param == "lam" and match_k:
                # the lambda that runs is found from MAP-DP's K and said under the chart; a disabled box
                # here showed another number (issue 27)
                lambda_slot = st.empty()
                lambda_slot.caption("λ for DP-means: chosen to match MAP-DP's K (found once MAP-DP has run).")
                continue
            size = {"n_clusters": n_truth, "n_components": n_truth if name == "E-M" else None}.get(param)
            params[param] = controls.control(name, param, spec, default=size)
        chosen_params[name] = params
    with st.expander("Restarts, seed, view"):
        common.init_widget("w_restarts", int(common.setting("restarts", 3)))
        restarts = st.slider("Restarts (best kept)", 1, 20, key="w_restarts")
        common.remember_setting("restarts", restarts)
        common.init_widget("w_seed", int(common.setting("seed", 0)))
        seed = st.number_input("Seed", 0, 10**6, key="w_seed")
        common.remember_setting("seed", int(seed))
        common.init_widget("w_time_budget", float(common.setting("time_budget", 60.0)))
        budget = st.number_input("Time limit per algorithm (s)", 1.0, 600.0, key="w_time_budget",
                                 help="A run stops here and shows what it reached.")
        common.remember_setting("time_budget", budget)
        starts = {"search": "the automatic search's best partition (as MAPDP() does)",
                  "one cluster": "one cluster, to watch clusters form (PLOS Appendix B)"}
        common.init_widget("w_start", common.start_setting())
        start = st.radio("MAP-DP starts from", list(starts), format_func=starts.get, key="w_start",
                         help="Every restart of MAP-DP begins here and then visits the rows in a random order. The "
                              "search's partition is the answer MAPDP() gives from a notebook; from one cluster the "
                              "animation shows clusters appear, and a restart may stop in a poorer optimum.")
        common.remember_setting("start", start)
        common.init_widget("w_merge", bool(common.setting("merge", True)))
        merge = st.checkbox("Group components into the clusters a person reads", key="w_merge",
                            help="As MAPDP() does: components whose rows the model gives to each other at least 5 % of "
                                 "the time form one cluster (Hennig 2010), since a group that is not of the model's "
                                 "shape is often covered by several components; then a small group (under 1 % of the "
                                 "rows, or 3) is read as part of the large cluster that explains it best, unless its "
                                 "rows are far outliers.")
        common.remember_setting("merge", merge)
        views = ["principal components"] if len(d.features) > 2 else []
        views += ["two features"] if len(d.features) >= 2 else ["one feature"]
        view = st.radio("2-D view", views, key="w_view", horizontal=True)
        chosen = None
        if view == "two features":
            fx = st.selectbox("x", d.features, index=0, key="w_view_x")
            fy = st.selectbox("y", d.features, index=min(1, len(d.features) - 1), key="w_view_y")
            chosen = [fx, fy] if fx != fy else None
            if chosen is None:
                st.warning("Choose two different features; showing principal components meanwhile.")
        ellipses = st.checkbox("2-sd ellipses", value=True, key="w_ellipses")
        show_truth = d.truth is not None and st.checkbox(
            "True groups beside the algorithms", value=False, key="w_truth",
            help="One more panel with the labels the data came with (the algorithms never see them); hover a "
                 "point for its row.")
    with st.expander("What the prior means, in words"):
        try:
            mixed = chosen_params["MAP-DP"]
            likelihood = runner.likelihood_for(d, mixed["structure"])
            prior = scaled_prior(d.X, likelihood, mixed["spread"], weight=mixed["weight"])
            # sentences wrap in the narrow settings column, where a table's text column was cut off
            for _, described in describe_priors(d.X, likelihood, prior).iterrows():
                st.markdown(f"**{common.escape_markdown(described['columns'], 200)}** ({described['family']}): "
                            f"{common.escape_markdown(described['meaning'], None)}")
        except ValueError as exc:
            common.plain_error(exc, "The prior could not be described")
    with st.expander("What N0 does, in a picture"):
        st.markdown(N0_WORDS)
        st.latex(N0_FORMULA)
        st.caption("The data then decide how many clusters there really are.")
        curve = report.expected_clusters_curve(sorted({0.1, 1.0, 10.0, float(n0)}), max(d.n_rows, 2))
        st.plotly_chart(common.built("n0_picture", (float(n0), d.n_rows),
                                     lambda: figures.expected_clusters_figure(curve, n0, d.n_rows)),
                        width="stretch", key="n0_picture",
                        config=common.chart_config("n0_expected_k"))
        if st.button("Show it large (for a projector)", key="n0_large", icon=":material/fullscreen:"):
            _n0_large(curve, float(n0), d.n_rows)
    with st.expander("Save, load or share these settings"):
        st.caption("Settings only (N0, the prior, the algorithms and theirs, restarts, seed): never the data.")
        everything = st.session_state.get("settings", {})
        st.download_button("Download the settings (JSON)", sharing.settings_to_json(everything, chosen=choice).encode(),
                           "mapdp_settings.json", "application/json", key="download_settings", on_click="ignore")
        loaded = st.file_uploader("Load settings (JSON)", type=["json"], key="w_settings_file")
        if loaded is not None and st.session_state.get("settings_file_used") != loaded.file_id:
            st.session_state["settings_file_used"] = loaded.file_id  # applied once, not at every rerun
            try:
                new_settings, ignored = sharing.settings_from_json(loaded.getvalue(), chosen=choice)
            except Exception as exc:  # noqa: BLE001 -- any file (ValueError and, as a safety net, anything else) gets
                # the same plain sentence, never a traceback; only the parsing is in this block, so Streamlit's
                # own st.rerun/st.stop exceptions are never caught here
                common.plain_error(exc, f"'{loaded.name}' was not loaded")
            else:
                common.apply_settings(new_settings)
                # the file's name and unknown keys are the sender's text: escaped, so none becomes a link or HTML
                not_used = ", ".join(common.escape_markdown(k, limit=40) for k in ignored[:10]) + (
                    f" and {len(ignored) - 10:,} more" if len(ignored) > 10 else "")
                st.session_state["settings_loaded"] = (
                    f"Loaded {len(new_settings)} settings from '{common.escape_markdown(loaded.name, limit=100)}'"
                    + (f" (not used: {not_used})" if ignored else "") + ".")
                st.rerun()
        if "settings_loaded" in st.session_state:
            st.success(st.session_state.pop("settings_loaded"))
        st.caption("The address bar always holds these settings, the animation's frame and, for a built-in or "
                   "simulated data set, its name: a reload comes back here, and the address is a link to share. An "
                   "uploaded table is never named in it: whoever opens the link gets the settings on their own data.")
        if st.button("Put these settings in the address bar", key="share_settings", icon=":material/link:"):
            common.keep_in_address_bar(choice, player.position())
            st.success("The address bar holds a link with these settings: copy it to share them (the link carries "
                       "no data).")

with right:
    if not algorithms:
        st.info("Choose at least one algorithm on the left.")
        st.stop()
    shared = {"restarts": restarts, "seed": int(seed), "time_budget": float(budget)}
    what_runs = (d.key, tuple(algorithms), repr(sorted((name, sorted(p.items())) for name, p in chosen_params.items())), repr(shared),
                 match_k)
    # The places on the page, made before anything runs, in the order they are shown: while a new run
    # computes (its progress in `working`), the last chart stays where it is, in `chart_area`, until
    # the first new panel is ready.
    stop_slot = st.empty()
    working = st.container()
    chart_area = st.container()

    matched = {}  # DP-means matching MAP-DP's K: (MAP-DP's K, the λ found, whether it gives that K)

    def params_for(name: str, compute: bool = True) -> dict | None:
        """The settings ``name`` runs with; DP-means matching MAP-DP's K needs MAP-DP's run and the λ
        search (None with ``compute=False`` when either is not in the session yet)."""
        params = {**chosen_params[name], **shared}
        if name == "DP-means" and match_k:
            mapdp = {**chosen_params["MAP-DP"], **shared}
            if not compute and not common.has_cached("MAP-DP", mapdp):
                return None
            target = common.run("MAP-DP", mapdp).final.n_clusters
            if not compute and not common.has_cached("lambda", {"K": target}):
                return None
            lam, reached = common.cached("lambda", {"K": target},
                                         lambda: runner.lambda_for_k(d, target, Z=common.numeric(d)))
            params["lam"] = float(lam)
            matched[name] = (target, float(lam), bool(reached))
        return params

    def must_run(name: str) -> bool:
        params = params_for(name, compute=False)
        return params is None or not common.has_cached(name, params)

    waiting = [name for name in algorithms if must_run(name)]  # the others are in the session already

    # Stop only while something runs (issue 27: it sat above every chart); a run it stopped stays
    # stopped for the same settings
    if common.stop_button("explore", what_runs, container=stop_slot, running=bool(waiting),
                          help="Stops the run in progress; it stays stopped until you change a setting or press "
                               "Run again."):
        stop_slot.empty()  # nothing runs while stopped
        st.stop()
    coords, axis_names = common.cached("view", {"features": tuple(chosen) if chosen else None},
                                       lambda: sources.projection(d, chosen))
    sample = sources.display_sample(d.n_rows, seed=int(seed))
    shown_coords = coords[sample]
    if "K-means" in algorithms and kmeans_start == "picked":
        with working:
            _centre_picker(coords, sample, axis_names)
    truth_panel = animation.truth_view(d.truth, coords, sample) if show_truth else None

    # How long the runs may take, from their first steps timed on these data (as Compare does), said
    # before a long run starts (issue 27: nine algorithms on 200 000 rows showed progress bars for 244 s)
    expected = {}
    if waiting:
        try:
            with working, st.spinner("Timing the first steps of each algorithm on these data..."):
                # DP-means matching MAP-DP's K is timed at its default λ until MAP-DP has run
                expected = {name: common.run_estimate(name, {**chosen_params[name], **shared}) for name in waiting}
        except ValueError:
            expected = {}  # the run itself says what is wrong, below
    total = sum(expected.values())
    long_wait = total > DRAW_AS_READY_ABOVE
    estimate_slot = working.empty()
    if total > SAY_ESTIMATE_ABOVE:
        slow = sorted(expected.items(), key=lambda item: -item[1])
        estimate_slot.info(
            f"This run may take up to about {total:.0f} s: "
            + ", ".join(f"{name} up to {seconds:.0f} s" + (" (its time limit)" if seconds >= budget else "")
                        for name, seconds in slow if seconds >= 1)
            + ". Timed from each algorithm's first steps on these data; algorithms that converge stop sooner. "
              "Each panel is drawn as soon as its algorithm finishes. Fewer restarts or a shorter time limit "
              "(under “Restarts, seed, view”) shortens the wait.")

    # The algorithms already in the session first, then the quickest first; DP-means matching
    # MAP-DP's K after MAP-DP
    order = [n for n in algorithms if n not in waiting] + sorted(waiting, key=lambda n: expected.get(n, 0.0))
    if match_k and "DP-means" in waiting and "MAP-DP" in waiting and order.index("DP-means") < order.index("MAP-DP"):
        order.remove("MAP-DP")
        order.insert(order.index("DP-means"), "MAP-DP")
    # on a long wait each algorithm still to run has a placeholder panel with its progress (issue 27)
    places_area = working.empty()
    places = {}
    if long_wait:
        with places_area.container():
            columns = st.columns(min(len(waiting), 3))
            for i, name in enumerate(n for n in order if n in waiting):
                places[name] = columns[i % 3].empty()
                places[name].container(border=True).markdown(
                    f"**{name}**  \nwaiting its turn: up to about {expected.get(name, 0.0):.0f} s")
    done = {}
    drawn_early = {}  # "slot": the chart's place, made when the first panels are drawn before every run is done

    def draw_so_far() -> None:
        """The finished algorithms' panels at their last step, while the others run."""
        finished = [done[n] for n in algorithms if n in done]
        so_far = animation.animation_frames(finished, coords, sample, d.truth, data=d)
        fig = figures.animation_figure(so_far, shown_coords, axis_names, start=so_far.n_frames - 1,
                                       show_ellipses=ellipses, controls=False, truth=truth_panel, rows=sample,
                                       settings={r.algorithm: controls.caption(registry.algorithm(r.algorithm),
                                                                               chosen_params[r.algorithm])
                                                 for r in finished})
        if "slot" not in drawn_early:
            drawn_early["slot"] = chart_area.empty()  # replaces the last chart
        drawn_early["slot"].plotly_chart(fig, width="stretch", key=f"animation_so_far_{len(finished)}",
                                         config=common.chart_config("mapdp_explore"))

    notes = []  # said under the chart, so that the chart starts near the top of the page
    started = time.perf_counter()
    try:
        with common.busy("explore"):
            for name in order:
                if done and name in waiting and (long_wait or time.perf_counter() - started > 1.0):
                    draw_so_far()  # the chart grows as results arrive
                place = places.get(name)
                with place.container(border=True) if place is not None else working:
                    if place is not None:
                        st.markdown(f"**{name}**  \nrunning: up to about {expected.get(name, 0.0):.0f} s")
                    params = params_for(name)
                    if name == "DP-means" and match_k:
                        target, lam, reached = matched[name]
                        note = "" if reached else f" (K = {target} could not be reached exactly; closest kept)"
                        notes.append(f"DP-means λ = {lam:.3g}, chosen to give MAP-DP's K = {target} (its components){note}.")
                        chosen_params[name] = {**chosen_params[name], "lam": lam}
                    done[name] = common.run(name, params, expected=expected.get(name))
                if place is not None:
                    place.empty()
                if name == "DP-means" and match_k:
                    got = done[name].shown.n_clusters
                    if got != target:
                        notes[-1] = (notes[-1][:-1] + f"; with these restarts DP-means ends at K = {got}, since the "
                                     f"λ search found K = {target} on its own run.")
                    if lambda_slot is not None:  # the settings column says the λ that runs, and the K it gives
                        lambda_slot.caption(f"λ for DP-means: chosen to match MAP-DP's K = {target} (its components): λ = {lam:.3g}, "
                                            f"which gives DP-means K = {got}"
                                            + ("." if got == target else " (not exactly MAP-DP's K: see under the "
                                                                         "chart)."))
    except ValueError as exc:
        with working:
            common.plain_error(exc, "The clustering could not run")
        st.stop()
    finally:
        stop_slot.empty()
        places_area.empty()
    if total > SAY_ESTIMATE_ABOVE:  # what was said before the run, beside what it took
        estimate_slot.caption(f"Estimated before the run at up to about {total:.0f} s; it took "
                              f"{time.perf_counter() - started:.0f} s.")
    runs = [done[name] for name in algorithms]
    for r in runs:
        if r.stopped:
            working.warning(f"{r.algorithm} was stopped by the time limit after "
                            f"{runner.count_steps(r.estimator.step, len(r.states))}; it shows what it reached "
                            "(its last frame says “stopped”).")
    # what is drawn, built once per (runs, view) and kept (issue 43): on public data once per server, so a class
    # opening the same demo (or playing it) builds each figure once; a run cut short stays its session's own
    shareable = not any(r.stopped for r in runs)
    results = (d.key, tuple((r.algorithm, repr(sorted(r.params.items()))) for r in runs))
    drawn_from = (results, tuple(chosen) if chosen else None, int(seed))
    frames = common.built("frames", drawn_from, lambda: animation.animation_frames(runs, coords, sample, d.truth, data=d),
                          shareable)  # merged clusters on the last frame
    if len(sample) < d.n_rows:
        notes.append(f"Showing {len(sample):,} of {d.n_rows:,} rows, drawn at random so the page stays quick; "
                    "the algorithms use every row and the ellipses are computed from all of them.")
    hidden = figures.outside_view(shown_coords)
    if hidden:
        notes.append(f"{hidden:,} far point{'s lie' if hidden > 1 else ' lies'} outside the view, so that a few outliers "
                     "do not squeeze the clusters together; the chart's autoscale button (its toolbar, top right) "
                     "shows every point.")
    if frames.thinned:
        notes.append(f"{' and '.join(frames.thinned)} ran more than {animation.MAX_FRAMES} steps (sweeps, iterations "
                     f"or blocks): the animation shows {animation.MAX_FRAMES} of them, evenly spaced (each panel's "
                     "title gives its own step); the curves below show every step.")
    if frames.partial:
        notes.append(f"{' and '.join(frames.partial)} build{'s' if len(frames.partial) == 1 else ''} the "
                     "clustering row by row: until the last frame, the rows not reached yet are drawn in light grey "
                     f"(“{figures.UNVISITED_LABEL}” in the titles) and count for no cluster, nor for NMI and ARI.")
    numeric_only = [a for a in algorithms if registry.algorithm(a).input == "numeric"]
    if d.has_gaps and numeric_only:
        notes.append(f"{', '.join(numeric_only)} cannot skip missing values: for them each gap is set to its column's "
                    "mean. MAP-DP leaves gaps out of the likelihood (PLOS Appendix F).")

    settings = {name: controls.caption(registry.algorithm(name), chosen_params[name]) for name in algorithms}

    # while playing, fewer points in each panel, in the same view and at the same size (issue 43: the browser
    # draws every panel anew at each frame); None: few enough to draw them all
    playing_rows = animation.play_rows(shown_coords, seed=int(seed))

    def play_in_browser() -> dict:
        """Every frame at once, for the browser to play in place from any frame (ui.player, issue 43)."""
        key = (drawn_from, ellipses, show_truth, repr(sorted(settings.items())))
        rows = playing_rows if playing_rows is not None else slice(None)
        return common.built("browser_frames", key, lambda: playback.browser_frames(
            animation.frames_of_rows(frames, playing_rows) if playing_rows is not None else frames,
            shown_coords[rows], axis_names, 0, point_size=figures.marker_size(len(sample)),
            show_ellipses=ellipses, settings=settings,
            truth=None if truth_panel is None else (truth_panel[0][rows], truth_panel[1]), rows=sample[rows],
            view=figures.view_of(shown_coords)), shareable)

    def draw(frame: int) -> None:
        key = (drawn_from, frame, ellipses, show_truth, repr(sorted(settings.items())))
        thin = player.playing() and playing_rows is not None
        if player.browser_plays():  # the browser plays the frames in place (ui.player)
            player.browser_chart(play_in_browser, config=common.chart_config("mapdp_explore"))
        else:
            if thin:
                fig = common.built("play_figure", key, lambda: figures.animation_figure(
                    animation.frames_of_rows(frames, playing_rows), shown_coords[playing_rows], axis_names,
                    start=frame, point_size=figures.marker_size(len(sample)), show_ellipses=ellipses,
                    settings=settings, controls=False,
                    truth=None if truth_panel is None else (truth_panel[0][playing_rows], truth_panel[1]),
                    rows=sample[playing_rows], view=figures.view_of(shown_coords)), shareable)
            else:
                fig = common.built("animation_figure", key, lambda: figures.animation_figure(
                    frames, shown_coords, axis_names, start=frame, show_ellipses=ellipses, settings=settings,
                    controls=False, truth=truth_panel, rows=sample), shareable)
            st.plotly_chart(fig, width="stretch", key="animation", config=common.chart_config("mapdp_explore"))
        if thin:
            st.caption(f"While playing, {len(playing_rows):,} of the {len(sample):,} points shown are drawn in each "
                       "panel, so that the frames keep pace; Pause, or the last frame, draws them all.")
        if not player.playing():  # a reload or a shared link comes back to this frame (issue 43); not at every
            common.keep_in_address_bar(choice, frame)  # tick of Play: the browser may add each address to its history

    with drawn_early["slot"].container() if drawn_early else chart_area:
        # one position for First, Back, Play, Step, Last and the slider (issue 27): ui.player
        player.player(frames.n_frames, results, draw, lambda f: animation.frame_label(frames, f), in_browser="animation")
    for note in notes:
        st.caption(note)  # the app's own sentences (algorithm names, counts, settings): no user text

    def animation_html() -> bytes:
        """Every algorithm shown, side by side, with Play and the frame slider, in one file that opens offline."""
        whole = figures.animation_figure(frames, coords[sample], axis_names, show_ellipses=ellipses, settings=settings,
                                         truth=truth_panel, rows=sample)
        about = (f"{d.name}: {', '.join(algorithms)}, every frame ({len(sample):,} of {d.n_rows:,} rows shown; axes "
                 f"{' and '.join(map(str, axis_names))}).")
        return figures.animation_html(whole, f"MAP-DP Explorer: {d.name}", about).encode()

    st.download_button("Download the animation (self-contained HTML)", animation_html, "mapdp_explore.html",
                       "text/html", key="download_animation", on_click="ignore", icon=":material/download:",
                       help=f"{', '.join(algorithms)} side by side, every frame, Play and the slider; opens in any "
                            "browser without this app.")

    rows = animation.summary_rows(runs, frames)
    st.dataframe(rows, hide_index=True, width="stretch")
    for r, said in zip(runs, frames.reported):  # a sampler reports its most probable partition (issue 27: say which)
        if not said["last"] and said["K"] != r.final.n_clusters:
            st.caption(f"{r.algorithm}: the table gives the most probable partition it visited (step "
                       f"{said['step']}, K = {said['K']}); the animation's last frame is its last step "
                       f"(K = {r.final.n_clusters}).")
    if "MAP-DP" in algorithms and not any(r.stopped for r in runs if r.algorithm == "MAP-DP"):
        common.show_components(common.fitted_mapdp()[2])
        common.show_k_evidence("explore")
        common.show_row_decision("explore")
        _sweep_in_steps(done["MAP-DP"], coords, sample, axis_names,
                        frames.colours[frames.algorithms.index("MAP-DP")][-1])
    st.plotly_chart(common.built("trace_figure", drawn_from, lambda: figures.trace_figure(frames), shareable),
                    width="stretch", key="traces",
                    config=common.chart_config("mapdp_traces"))
    if "MAP-DP" in frames.algorithms:  # why MAP-DP's E can rise (issue 42): said where the curve is
        note = animation.objective_note(frames.history[frames.algorithms.index("MAP-DP")])
        if note:
            st.caption(note)
