"""Data: built-in, simulated or uploaded; column roles and a likelihood per column; preview and gaps."""
import dataclasses
import hashlib
import time

import pandas as pd
import streamlit as st

from mapdp_core import FAMILIES
from explorer import figures, large_tables, session_memory, sources
from explorer import report as tables
from mapdp_core.data.datasets import list_datasets, list_structured
from mapdp_core.data.loading import ROLES, DataLoadError, missing_summary, read_table, suggest_roles_and_families
from mapdp_core.data.synthetic import PLOS_SCENARIOS
from ui import common

st.title("Data")
common.image_format_choice()
FAMILY_NAMES = sorted(FAMILIES)
FAMILY_HELP = " · ".join(f"{f.name}: {f.help}" for f in FAMILIES.values())
SOURCES = ["Built-in", "Simulated", "Upload a table"]
LARGE_SOURCE = "A large table on this server"
# the operator's config file (never the browser) turns on the large tables and says which folders and cluster
try:
    LARGE, LARGE_PROBLEM = large_tables.load_config(), None
except large_tables.ConfigProblem as exc:
    LARGE, LARGE_PROBLEM = None, str(exc)
if LARGE is not None or LARGE_PROBLEM is not None:
    SOURCES = SOURCES + [LARGE_SOURCE]
GENERATORS = ["PLOS Section 5 scenario", "Dirichlet-process mixture (CRP)", "Clinical patients, mixed types with gaps"]
# each generator widget and its starting value; the values used for the data loaded come back from its origin
GENERATOR_DEFAULTS = {"w_generator": GENERATORS[0], "w_gen_seed": 0, "w_gen_section": "5.2", "w_gen_n": 4000,
                      "w_gen_crp_n": 2000, "w_gen_crp_n0": 3.0, "w_gen_crp_d": 2, "w_gen_cl_n": 500, "w_gen_cl_k": 3,
                      "w_gen_cl_miss": 0.1}


def _change_many(editor_key: str, spec: pd.DataFrame, fields: dict, prefix: str) -> None:
    """Set a role or likelihood for every column a filter picks, in the data editor under
    ``editor_key`` (``spec``: its table as edited so far). A table of thousands of columns is not
    edited one cell at a time (issue 28); the editor is drawn again from the changed table."""
    contains = st.text_input("Column names containing (blank: any name)", key=f"{prefix}_contains")
    now = {field: column.selectbox(f"Now with the {field}", ["any", *options], key=f"{prefix}_now_{field}")
           for (field, options), column in zip(fields.items(), st.columns(len(fields)))}
    mask = tables.matching_columns(spec, contains, **now)
    n = int(mask.sum())
    first = ", ".join(common.escape_markdown(c, 40) for c in spec.loc[mask, "column"].astype(str)[:5])
    st.caption(f"{n:,} of {len(spec):,} columns match" + (f": {first}{', …' if n > 5 else ''}" if n else "."))
    wanted = {field: column.selectbox(f"Set the {field} to", ["(unchanged)", *options], key=f"{prefix}_set_{field}")
              for (field, options), column in zip(fields.items(), st.columns(len(fields)))}
    changes = {field: value for field, value in wanted.items() if value != "(unchanged)"}
    if st.button(f"Apply to the {n:,} matching columns", key=f"{prefix}_apply", disabled=not (n and changes)):
        changed = spec.copy()
        for field, value in changes.items():
            changed.loc[mask, field] = value
        common.replace_editor_table(editor_key, changed)
        st.rerun()


def _fit_progress(job) -> None:
    """The running fit's phase, sweep, round, parts committed and rows moved, and Stop."""
    step = job.step or {}
    if step.get("phase") == "sweep" and step.get("parts"):
        st.progress(min(step["committed"] / step["parts"], 1.0), text=large_tables.progress_text(step))
    else:
        st.progress(0.0, text=large_tables.progress_text(step))
    st.caption(f"Fitting {common.escape_markdown(job.choice, 200)} out of core: {time.time() - job.started:,.0f} s so "
               "far. The rows stay on the cluster's workers; only a sample comes here.")
    if st.button("Stop", icon=":material/stop:", key="large_fit_stop", disabled=job.stopping,
                 help="Ends the fit after the round in progress, keeping the last complete sweep over every row."):
        job.request_stop()
    if job.stopping:
        st.info("Stopping after the round in progress...")


@st.fragment(run_every=1.0)
def _watch_fit() -> None:
    """Polls the fit running in its thread once a second (only this part of the page reruns); when
    it has finished, the whole page runs again to show the result."""
    job = st.session_state.get("large_fit_job")
    if job is None:
        return
    if job.done:
        st.rerun()
    _fit_progress(job)


def _fit_result(config, job, rows: int) -> None:
    """The finished fit: K, the cluster sizes, the sweeps, how it ended; and the sample to explore."""
    if job.model is None:
        (st.warning if job.stopped_early else st.error)(common.escape_markdown(job.error, 1000))
        return
    m = job.model
    parts = m.partitions_
    how = ("converged" if m.converged_ else "stopped by Stop: the result is the last complete sweep over every row"
           if parts.attrs.get("stopped") else "not converged: it reached the most sweeps allowed")
    st.success(f"**K = {m.n_clusters_}** clusters in {parts.attrs.get('rows', rows):,} rows of "
               f"{common.escape_markdown(job.choice, 200)}, after {len(parts)} sweep(s) in "
               f"{parts.attrs.get('seconds', 0.0):,.1f} s ({how}).")
    sizes = pd.DataFrame({"cluster": range(len(m.cluster_sizes_)), "rows": m.cluster_sizes_})
    sizes["share"] = sizes["rows"] / max(int(sizes["rows"].sum()), 1)
    c1, c2 = st.columns([2, 3])
    c1.markdown("**Cluster sizes**")
    c1.dataframe(sizes, hide_index=True, width="stretch", key="large_fit_sizes",
                 column_config={"share": st.column_config.ProgressColumn("share", min_value=0.0, max_value=1.0,
                                                                         format="%.3f")})
    c2.markdown("**Sweeps** (each over every row, in rounds of parts)")
    c2.dataframe(parts, hide_index=True, width="stretch", key="large_fit_sweeps")
    c2.caption(f"Parts: {parts.attrs.get('parts')}; the automatic choices were made on a uniform sample of "
               f"{parts.attrs.get('sample_rows', 0):,} rows ({parts.attrs.get('sample_seconds', 0.0):,.1f} s).")
    n = min(config.sample_rows, int(parts.attrs.get("rows", rows)))
    if st.button(f"Explore a sample of {n:,} rows", type="primary", key="large_sample"):
        try:
            with st.spinner(f"Drawing {n:,} rows uniformly from the whole table..."):
                sample = large_tables.sample_of(large_tables.open_table(config, job.choice), m, n, seed=0, config=config)
                label = [c for c in sample.columns if c.endswith(large_tables.LABEL_COLUMN)][-1]
                row = [c for c in sample.columns if c.endswith(large_tables.ROW_COLUMN)][-1]
                roles = {c: "feature" if job.columns is None or c in job.columns else "ignored" for c in sample.columns}
                roles |= {label: "label", row: "identifier"}
                d = sources.table_data(sample, roles=roles, name=f"{job.choice} (a sample of {len(sample):,} rows)")
            d = dataclasses.replace(d, description=d.description + (
                f" Drawn uniformly from the {parts.attrs.get('rows', rows):,} rows of the table; the label column "
                f"'{label}' holds each row's cluster in the out-of-core fit (K = {m.n_clusters_}), to compare "
                "the fits made here with."))
            common.set_data(d, origin={"w_data_source": LARGE_SOURCE, "w_large_table": job.choice})
            st.success(f"Using a sample of {len(sample):,} rows: Explore, Compare and Subtypes work on it; the "
                       f"column '{common.escape_markdown(label)}' is the out-of-core fit's cluster of each row.")
        except (large_tables.LargeTableError, DataLoadError, ValueError) as exc:
            common.plain_error(exc, "The sample could not be made")


def large_table_section(config, problem, origin) -> None:
    """A table on this server too large for the session: the operator's tables, a fit out of core
    on the operator's cluster with progress and Stop, then a sample to explore."""
    if problem is not None:  # the details name the server's paths: for the operator's console, not the page
        large_tables.tell_operator(problem)
        st.error("This server's settings for large tables have a problem, so this source is off; its operator can "
                 "read what in the server's console. The other sources work as usual.")
        return
    offered = large_tables.list_tables(config)
    if not offered:
        st.info("The server's operator allows large tables, but the allowed folders hold no .parquet or .csv table.")
        return
    names = [t.name for t in offered]
    common.init_widget("w_large_table", origin.get("w_large_table") if origin.get("w_large_table") in names else names[0])
    choice = st.selectbox("Table", names, key="w_large_table",
                          help="The tables the server's operator offers. Each is read part by part on the cluster; "
                               "only a sample of its rows ever comes into this session.")
    try:
        with st.spinner("Counting the table's rows on the cluster..."):
            info = large_tables.describe_table(config, choice)
            features = st.session_state.setdefault("large_features", {})
            if choice not in features:
                features[choice] = large_tables.suggested_features(large_tables.open_table(config, choice))
    except (ValueError, OSError, RuntimeError, TimeoutError) as exc:  # a part that cannot be read, no cluster
        common.plain_error(exc, "This table cannot be used now")
        return
    st.write(f"**{info['rows']:,} rows × {info['columns']} columns** in {info['parts']} part(s).")
    columns_key = f"w_large_columns_{hashlib.sha256(choice.encode()).hexdigest()[:12]}"
    common.init_widget(columns_key, [c for c in features[choice] if c in info["names"]])
    columns = st.multiselect("Columns to cluster", info["names"], key=columns_key,
                             help="Suggested from the table's first rows: identifiers, labels and constant columns "
                                  "are left out. Every likelihood, the prior and N0 are MAPDP()'s automatic choices.")
    job = st.session_state.get("large_fit_job")
    running = job is not None and not job.done
    if st.button("Fit out of core", type="primary", key="large_fit_start", disabled=running or not columns,
                 help="MAP-DP with its automatic defaults on every row, on the cluster: a uniform sample chooses the "
                      "likelihoods, prior and N0, then sweeps over the parts in rounds give the exact MAP-DP result."):
        try:
            st.session_state["large_fit_job"] = large_tables.start_fit(config, choice, columns)
            st.rerun()  # drawn again with this button off while the fit runs
        except large_tables.LargeTableError as exc:
            common.plain_error(exc, "The fit could not start")
    if job is None:
        return
    if running:
        _watch_fit()
    elif job.choice == choice:
        _fit_result(config, job, info["rows"])
    else:
        st.caption(f"This session's last fit was of {common.escape_markdown(job.choice, 200)}: pick it to see it.")


# The widgets open on the data actually loaded (Streamlit forgets widget values on a page switch):
# the Data page's own record of how they were made, or the default scenario as a built-in data set.
origin = common.data_origin()
common.init_widget("w_data_source", origin.get("w_data_source", SOURCES[0]))
if st.session_state["w_data_source"] not in SOURCES:  # the operator turned the large tables off since
    st.session_state["w_data_source"] = SOURCES[0]
source = st.radio("Source", SOURCES, horizontal=True, key="w_data_source")

if source == "Built-in":
    catalogue = list_datasets()
    structured = list_structured().set_index("name")
    ordered = {f"{name} ({row['kind']})": name for name, row in structured.iterrows()}  # shown -> registry name
    options = [f"PLOS {s}: {t}" for s, t in PLOS_SCENARIOS.items()] + list(catalogue["name"]) + list(ordered)
    loaded = origin.get("w_builtin") if origin.get("w_data_source") == "Built-in" else None
    common.init_widget("w_builtin", loaded if loaded in options else options[0])
    pick = st.selectbox("Data set", options, key="w_builtin")
    if pick in set(catalogue["name"]):
        st.caption(catalogue.set_index("name").loc[pick, "description"])
    elif pick in ordered:
        st.caption(structured.loc[ordered[pick], "description"] + " Its time and group columns are marked for the "
                   "Sequences, groups and subjects page.")
    if st.button("Use this data set", type="primary", key="use_builtin"):
        try:
            if pick.startswith("PLOS "):
                common.set_data(common.scenario(pick.split(":")[0][5:]), origin={"w_data_source": source, "w_builtin": pick})
            elif pick in ordered:
                loaded_data, roles = common.structured(ordered[pick])
                common.set_data(loaded_data, origin={"w_data_source": source, "w_builtin": pick})
                common.set_sequence_roles(roles)
            else:
                common.set_data(common.builtin(pick), origin={"w_data_source": source, "w_builtin": pick})
            st.success(f"Loaded {pick}.")
        except (ValueError, FileNotFoundError) as exc:
            common.plain_error(exc, "The data set could not be loaded")

elif source == "Simulated":

    def kept(key: str) -> str:
        """``key``, its widget given the value that made the data in use (or its default) on a first draw."""
        common.init_widget(key, origin.get(key, GENERATOR_DEFAULTS[key]))
        return key

    kind = st.selectbox("Generator", GENERATORS, key=kept("w_generator"))
    c1, c2, c3, c4 = st.columns(4)
    seed = c4.number_input("Seed", 0, 10**6, key=kept("w_gen_seed"))
    try:
        if kind.startswith("PLOS"):
            section = c1.selectbox("Scenario", list(PLOS_SCENARIOS), key=kept("w_gen_section"),
                                   format_func=lambda s: f"{s}: {PLOS_SCENARIOS[s][:40]}")
            n = c2.number_input("Points", 20, 1_000_000, step=1000, key=kept("w_gen_n"))
            make = lambda: common.scenario(section, int(n), int(seed))  # noqa: E731
        elif kind.startswith("Dirichlet"):
            n = c1.number_input("Points", 20, 1_000_000, step=500, key=kept("w_gen_crp_n"))
            n0 = c2.number_input("N0 of the generator", 0.1, 50.0, key=kept("w_gen_crp_n0"))
            dim = c3.number_input("Dimensions", 1, 10, key=kept("w_gen_crp_d"))
            make = lambda: common.crp(int(n), float(n0), int(dim), int(seed))  # noqa: E731
        else:
            n = c1.number_input("Patients", 20, 50_000, step=100, key=kept("w_gen_cl_n"))
            k = c2.number_input("Subtypes", 1, 8, key=kept("w_gen_cl_k"))
            miss = c3.slider("Missing entries", 0.0, 0.6, step=0.05, key=kept("w_gen_cl_miss"))
            make = lambda: common.clinical(int(n), int(k), float(miss), int(seed))  # noqa: E731
        if st.button("Generate", type="primary", key="generate"):
            used = {"w_data_source": source} | {key: st.session_state[key] for key in GENERATOR_DEFAULTS
                                                  if key in st.session_state}
            common.set_data(make(), origin=used)
            st.success("New data generated.")
    except ValueError as exc:
        common.plain_error(exc, "The generator refused these settings")

elif source == LARGE_SOURCE:
    large_table_section(LARGE, LARGE_PROBLEM, origin)

else:
    up = st.file_uploader("CSV, TSV or Excel table: one row per patient or sample, one column per feature",
                          type=["csv", "tsv", "txt", "xlsx", "xls"], key="w_upload")
    st.caption("The file is read in memory for this session only; it is never saved or shared.")
    kept = origin if origin.get("w_data_source") == source and "upload_table" in origin else {}
    table = name = None
    if up is not None:
        try:
            # a shared server's memory (issue 43): a table over the session's bound is refused before it is kept
            session_memory.check_file(up.size, up.name)
            table, report = read_table(up.getvalue(), name=up.name)
            session_memory.check_table(table, up.name)
        except session_memory.TableTooLarge as exc:
            table = None  # not kept in this session
            common.plain_error(exc, "Too large for this server")
            st.stop()
        except DataLoadError as exc:
            common.plain_error(exc, f"'{up.name}' could not be read")
            st.stop()
        name = up.name
        # the downloads give the rows back as uploaded ("1,452", "79%"), not as read (1452.0, 79.0)
        tables.keep_uploaded_cells(table, up.getvalue(), report)
        for w in getattr(report, "warnings", []) or []:
            st.warning(common.escape_markdown(w, 2000))
        st.write(f"Read **{len(table):,} rows × {table.shape[1]} columns** from {common.escape_markdown(name, 200)}.")
    elif kept:
        table, name = kept["upload_table"], kept["upload_name"]
        st.info(f"In use: **{common.escape_markdown(name, 200)}**, uploaded earlier in this session ({len(table):,} rows × {table.shape[1]} "
                "columns, held in this session's memory only). Upload a file to replace it.")
    if table is not None:
        suggested = suggest_roles_and_families(table)
        # one editor per table, so that the edits of one file never land on another's columns
        identity = hashlib.sha256(repr((name, table.shape, list(map(str, table.columns)))).encode()).hexdigest()[:12]
        editor_key = f"w_upload_spec_{identity}"
        st.markdown("**Column roles and likelihoods** (suggested; edit the cells, then press *Use*)")
        st.caption(FAMILY_HELP)
        st.caption("Role **outcome**: what happened after the measurements (a later diagnosis, a relapse, a death and "
                   "its time). It is left out of the clustering and compared across the clusters on Subtypes: mark "
                   "one column (yes/no or a number) or two (a follow-up time and its 0/1 event flag).")
        edited = st.data_editor(
            common.editor_start(editor_key, suggested[["column", "role", "family", "reason", "n_missing"]]),
            hide_index=True, key=editor_key, disabled=["column", "reason", "n_missing"], width="stretch",
            column_config={"role": st.column_config.SelectboxColumn("role", options=list(ROLES), required=True),
                           "family": st.column_config.SelectboxColumn("family", options=FAMILY_NAMES),
                           "reason": st.column_config.TextColumn("reason", width="large")})
        common.keep_edits(editor_key, edited)
        with st.expander("Change many columns at once"):
            _change_many(editor_key, edited, {"role": list(ROLES), "family": FAMILY_NAMES}, "w_upload_bulk")
        # the reasons (thousands separators, percentages, zeros that look like "not measured") are
        # longer than a cell: each in full, as plain text (the column names are the uploader's)
        with st.expander("Why each column is handled this way"):
            reasons = [(c, r) for c, r in zip(suggested["column"], suggested["reason"]) if str(r).strip()]
            REASONS_SHOWN = 300  # a wide table's 20 000 lines would not be read, and take the page long to draw
            st.markdown("\n".join(f"- **{common.escape_markdown(c, 80)}**: {common.escape_markdown(r, 1000)}"
                                   for c, r in reasons[:REASONS_SHOWN]))
            if len(reasons) > REASONS_SHOWN:
                st.caption(f"The first {REASONS_SHOWN} of {len(reasons):,} columns; every reason is in the table above.")
        zero_counts = tables.zero_counts(table)  # every numeric column with a zero, flagged ones first
        flagged = {c: int(n) for c, n in zip(suggested["column"], suggested["suspect_zeros"]) if n}
        offered = sorted(zero_counts, key=lambda c: c not in flagged)
        if offered:
            common.init_widget("w_upload_zeros", [c for c in kept.get("w_upload_zeros", []) if c in offered])
            zeros = st.multiselect(
                "Columns where 0 means 'not measured' (their zeros become gaps)", offered, key="w_upload_zeros",
                format_func=lambda c: (f"{c}: {zero_counts[c]:,} zero(s)"
                                       + (", far below its other values" if c in flagged else "")),
                help="Every number column that holds a zero is listed; those whose zeros lie far below their other "
                     "values, as a blood pressure of 0 does, come first. A chosen column's zeros become gaps "
                     "everywhere: in the clustering (a gap is left out of the row's likelihood), the profiles, the "
                     "tests, the imputed values, the missing-value counts, the downloads and the report. Nothing "
                     "changes unless you choose: a zero can be a real value.")
        else:
            zeros = []
        common.init_widget("w_upload_std", kept.get("w_upload_std", "none"))
        standardize = st.radio("Standardise real-valued columns", ["none", "zscore", "robust"], horizontal=True,
                               key="w_upload_std")
        if st.button("Use this table", type="primary", key="use_upload"):
            try:
                common.set_data(sources.table_data(table, roles=edited, families=edited, standardize=standardize,
                                                    name=name, zeros_as_missing=list(zeros) or None),
                                origin={"w_data_source": source, "upload_name": name, "upload_table": table,
                                        "w_upload_std": standardize, "w_upload_zeros": list(zeros)})
                st.success(f"Using {common.escape_markdown(name, 200)}.")
            except (DataLoadError, ValueError) as exc:
                common.plain_error(exc, "These settings do not work with this table")

d = common.data()
st.divider()
st.subheader(f"Current data: {common.escape_markdown(d.name, 200)}")
made = common.data_origin()
how = {"Built-in": "built-in data set", "Simulated": "simulated", "Upload a table": "uploaded table",
       LARGE_SOURCE: "a sample of a large table on this server, with its out-of-core fit's clusters as the label"}
st.caption(f"Source: {how.get(made.get('w_data_source'), 'loaded elsewhere')}. {common.escape_markdown(d.description, 1000)}")
for note in d.notes:
    st.warning(common.escape_markdown(note, 2000))
choices = sources.zero_choices(d) if made.get("w_data_source") != "Upload a table" else {}
if choices:  # an uploaded table chooses these before "Use this table", above
    with st.expander("Zeros that mean 'not measured'" + (f" ({len(d.zeros_missing)} column(s) marked)"
                                                         if d.zeros_missing else "")):
        zeros_key = f"w_zeros_{d.name}"
        common.init_widget(zeros_key, list(d.zeros_missing))
        picked = st.multiselect("Columns whose zeros become gaps", list(choices), key=zeros_key,
                                format_func=lambda c: f"{c}: {choices[c]:,} zero(s)",
                                help="A blood pressure, glucose or BMI of 0 is not a measurement. A chosen column's "
                                     "zeros become gaps everywhere: in the clustering, the profiles, the tests, the "
                                     "imputed values, the missing-value counts, the downloads and the report.")
        if sorted(picked) != sorted(d.zeros_missing) and st.button("Apply", key="apply_zeros", type="primary"):
            try:
                common.set_data(sources.with_zeros_missing(d, picked))
                st.rerun()
            except ValueError as exc:
                common.plain_error(exc, "These zeros cannot be read as missing")
common.sequence_role_choice()  # optional: for the Sequences page only

left, right = st.columns([2, 3])
with left:
    st.markdown("**Likelihood per feature**")
    st.caption(FAMILY_HELP)
    current = pd.DataFrame({"column": d.features, "family": [d.family_of(c) for c in d.features]})
    families_key = f"w_families_{d.key}"
    edited = st.data_editor(common.editor_start(families_key, current), hide_index=True, disabled=["column"],
                            key=families_key, width="stretch",
                            column_config={"family": st.column_config.SelectboxColumn("family", options=FAMILY_NAMES,
                                                                                      required=True)})
    common.keep_edits(families_key, edited)
    if not edited["family"].equals(current["family"]):
        st.caption("Edited here and not applied yet: press Apply to cluster with these likelihoods.")
        if st.button("Apply these likelihoods", type="primary", key="apply_families"):
            try:
                common.set_data(sources.with_likelihood(d, dict(zip(edited["column"], edited["family"]))))
                st.rerun()
            except ValueError as exc:
                common.plain_error(exc, "These likelihoods do not fit the data")
    with st.expander("Set one likelihood for several columns"):
        many = st.multiselect("Columns", d.features, key="w_many_columns")
        if not many:  # thousands of columns are picked by what they share, not one by one (issue 28)
            contains = st.text_input("…or every column whose name contains (blank: any name)", key="w_many_contains")
            now = st.selectbox("…and whose likelihood now is", ["any", *FAMILY_NAMES], key="w_many_now")
            if contains.strip() or now != "any":
                many = list(current.loc[tables.matching_columns(current, contains, family=now), "column"])
                st.caption(f"{len(many):,} of {len(current):,} columns match.")
        family = st.selectbox("Likelihood", FAMILY_NAMES, key="w_many_family",
                              index=FAMILY_NAMES.index("normal_gamma") if "normal_gamma" in FAMILY_NAMES else 0)
        if st.button(f"Apply to these {len(many):,} columns" if many else "Apply to these columns", key="apply_many",
                     disabled=not many):
            try:
                common.set_data(sources.with_likelihood(d, {c: family for c in many}))
                st.session_state.pop("w_many_columns", None)
                st.rerun()
            except ValueError as exc:
                common.plain_error(exc, f"{family} does not fit every chosen column")
with right:
    coords, names = common.cached("view", {"features": None}, lambda: sources.projection(d))
    sample = sources.display_sample(d.n_rows)
    colour = None
    if d.truth is not None:
        colour = [d.truth_names[t] if t >= 0 else "unknown" for t in d.truth[sample]]
    st.plotly_chart(figures.scatter_figure(coords[sample], names, colour, "ground truth"),
                    width="stretch", key="data_preview_plot", config=common.chart_config("data_preview"))
    if len(sample) < d.n_rows:
        st.caption(f"A random {len(sample):,} of the {d.n_rows:,} rows.")

PREVIEW_COLUMNS = 200  # a wide table's 20 000 columns would take the browser minutes to draw
analysed = sources.analysed_table(d)  # zeros marked "not measured" as gaps, as MAP-DP and the profiles see them
shown = analysed if analysed.shape[1] <= PREVIEW_COLUMNS else analysed.iloc[:, :PREVIEW_COLUMNS]
st.markdown("**Preview** (first 200 rows" + (f", first {PREVIEW_COLUMNS} of {d.table.shape[1]:,} columns; every column "
                                             "is used and downloaded)" if shown is not analysed else ")"))
if d.zeros_missing:
    st.caption("Zeros read as 'not measured' are shown as empty cells in "
               + ", ".join(common.escape_markdown(c, 80) for c in d.zeros_missing) + ".")
head = shown.head(200)
st.dataframe(head, width="stretch", key="data_preview_table",  # dates without "00:00:00" (issue 27)
             column_config={c: st.column_config.DateColumn(format="YYYY-MM-DD")
                            for c in head.columns if figures.midnight_dates(head[c])})
summary, gappy = missing_summary(analysed)
n_gaps = int(summary["n_missing"].sum())
in_features = int(d.X.isna().to_numpy().sum())  # the count the sidebar gives: what MAP-DP leaves out
st.markdown(f"**Missing values:** {n_gaps:,} cells in {len(gappy):,} rows"
            + (f"; {in_features:,} of them in the clustered features." if n_gaps and d.wide is None else "."))
if n_gaps:
    st.dataframe(summary[summary["n_missing"] > 0], hide_index=True, width="stretch",
                 column_config={"fraction": st.column_config.ProgressColumn("fraction", min_value=0.0,
                                                                            max_value=1.0, format="%.2f")})
    st.caption("No row is dropped: MAP-DP leaves a missing value out of that row's likelihood.")
