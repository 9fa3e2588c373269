"""What every page shares: the session's data set, its settings, its per-session run cache.

Privacy: an uploaded table lives only in this session's ``st.session_state``; it
is never written to disk, logged, or put in a cache shared between sessions. Runs are
memoised per session (``_remember``); runs on *public* data (the built-in tables, the PLOS
scenarios, the simulated data, each made here from its name and settings alone and registered
with :func:`explorer.shared_runs.mark_public`) are also computed once per server and shared by
every session (:data:`explorer.shared_runs.SERVER`): work is shared, uploaded data never.
"""
from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable
from contextlib import contextmanager

import streamlit as st

import mapdp_core
from explorer import animation, comparison, figures, report, runner, sharing, shared_runs, sources
from mapdp_core import DirichletProcess, grouping_sentence, outlier_sentence
from mapdp_core.models import registry
from ui import long_runs

#: The demo a first visitor sees: PLOS Section 5.2, where K-means fails on unequal counts.
DEFAULT_SCENARIO = "5.2"
_RUNS_KEPT = 24
_FIGURES_KEPT = 48  # a session's own figures (an upload's): an animation's frames and the charts beside it


@st.cache_resource(show_spinner="Loading the compiled clustering kernels from numba's cache, once per server: "
                   "about 1 s on a 2-core machine (measured: 0.7-1.0 s); where they were never compiled "
                   "(`make` compiles them at install), compiling them takes about 30-60 s...")
def warm_up() -> float:
    """Load or compile the numba kernels once per server process."""
    return mapdp_core.warm_up()


def _public(d: sources.AppData, recipe: str) -> sources.AppData:
    shared_runs.mark_public(d.key, recipe)  # made from a name and settings alone: its runs may be shared
    return d


@st.cache_data(show_spinner="Loading the data set...", max_entries=32)
def _scenario(section: str, n: int = 4000, seed: int = 0) -> sources.AppData:
    return sources.scenario_data(section, n=n, seed=seed)


def scenario(section: str, n: int = 4000, seed: int = 0) -> sources.AppData:
    """A PLOS scenario (public: its runs are shared across sessions, a link names it)."""
    recipe = f"scenario:{section}" + ("" if (int(n), int(seed)) == (4000, 0) else f":{int(n)}:{int(seed)}")
    return _public(_scenario(section, int(n), int(seed)), recipe)


@st.cache_data(show_spinner="Loading the data set...", max_entries=16)
def _builtin(name: str) -> sources.AppData:
    return sources.builtin_data(name)


def builtin(name: str) -> sources.AppData:
    """A shipped data set (public)."""
    return _public(_builtin(name), f"builtin:{name}")


@st.cache_data(show_spinner="Loading the data set...", max_entries=8)
def _structured(name: str) -> tuple:
    return sources.structured_data(name)


def structured(name: str) -> tuple:
    """A shipped sequence or grouped data set and its column roles (public)."""
    d, roles = _structured(name)
    return _public(d, f"structured:{name}"), roles


def crp(n: int, N0: float, d: int, seed: int) -> sources.AppData:
    """The Data page's simulated Dirichlet-process mixture (public: made from its settings alone;
    not kept itself, only its runs are shared)."""
    n, N0, d, seed = int(n), float(N0), int(d), int(seed)
    return _public(sources.crp_data(n, N0, d, seed), f"crp:{n}:{N0!r}:{d}:{seed}")


def clinical(n: int, k: int, missing: float, seed: int) -> sources.AppData:
    """The Data page's simulated clinical table (public: made from its settings alone)."""
    n, k, missing, seed = int(n), int(k), float(missing), int(seed)
    return _public(sources.clinical_data(n, k, missing, seed), f"clinical:{n}:{k}:{missing!r}:{seed}")


@st.cache_data(show_spinner="Clustering the demo...", max_entries=8)
def demo_frames(section: str):
    """MAP-DP (N0 = 3) and K-means (the true K), each the best of 3 restarts on a PLOS scenario: frames, view, axis names."""
    d = scenario(section)
    K = d.true_k
    runs = [runner.run(d, "MAP-DP", {"N0": 3.0}, restarts=3), runner.run(d, "K-means", {"n_clusters": K}, restarts=3)]
    coords, names = sources.projection(d)
    return animation.animation_frames(runs, coords, None, d.truth), coords, names


#: The Data page's generators (pages/data.py's GENERATORS), for the record of data a link loaded
_GENERATOR_NAMES = {"scenario": "PLOS Section 5 scenario", "crp": "Dirichlet-process mixture (CRP)",
                    "clinical": "Clinical patients, mixed types with gaps"}
#: A link's parameter naming a public data set by its recipe (never data: an upload has none)
DATASET_PARAM = "dataset"
#: A link's parameter naming the animation's frame (1-based, as the slider shows it)
FRAME_PARAM = "frame"


def _number(text: str, kind, low, high, what: str):
    try:
        value = kind(text)
    except (TypeError, ValueError):
        raise ValueError(f"the data set's {what} must be a number from {low:g} to {high:g}, got "
                         f"'{escape_markdown(text, 40)}'.") from None
    if not low <= value <= high:
        raise ValueError(f"the data set's {what} must be from {low:g} to {high:g}, got {value:g}.")
    return value


def data_from_recipe(recipe: str) -> tuple[sources.AppData, dict, dict | None]:
    """The public data set a link names (:data:`DATASET_PARAM`, written by :func:`scenario`,
    :func:`builtin`, ...): (data, the Data page's record of it, column roles or None). Only names
    and numbers are read, each checked (a built-in name against the catalogue); ValueError in words."""
    from mapdp_core.data.datasets import list_datasets, list_structured
    from mapdp_core.data.synthetic import PLOS_SCENARIOS

    kind, _, rest = str(recipe).partition(":")
    parts = rest.split(":") if rest else []
    if kind == "scenario" and len(parts) in (1, 3) and parts[0] in PLOS_SCENARIOS:
        n, seed = (4000, 0) if len(parts) == 1 else (_number(parts[1], int, 20, 1_000_000, "size"),
                                                     _number(parts[2], int, 0, 10**6, "seed"))
        origin = scenario_origin(parts[0]) if (n, seed) == (4000, 0) else {
            "w_data_source": "Simulated", "w_generator": _GENERATOR_NAMES["scenario"], "w_gen_section": parts[0],
            "w_gen_n": n, "w_gen_seed": seed}
        return scenario(parts[0], n, seed), origin, None
    if kind == "builtin" and rest in set(list_datasets()["name"]):
        return builtin(rest), {"w_data_source": "Built-in", "w_builtin": rest}, None
    if kind == "structured":
        table = list_structured().set_index("name")
        if rest in table.index:
            d, roles = structured(rest)
            return d, {"w_data_source": "Built-in", "w_builtin": f"{rest} ({table.loc[rest, 'kind']})"}, roles
    if kind == "crp" and len(parts) == 4:
        n, n0 = _number(parts[0], int, 20, 1_000_000, "size"), _number(parts[1], float, 0.1, 50.0, "N0")
        dim, seed = _number(parts[2], int, 1, 10, "dimension"), _number(parts[3], int, 0, 10**6, "seed")
        return crp(n, n0, dim, seed), {"w_data_source": "Simulated", "w_generator": _GENERATOR_NAMES["crp"],
                                       "w_gen_crp_n": n, "w_gen_crp_n0": n0, "w_gen_crp_d": dim,
                                       "w_gen_seed": seed}, None
    if kind == "clinical" and len(parts) == 4:
        n, k = _number(parts[0], int, 20, 50_000, "size"), _number(parts[1], int, 1, 8, "number of subtypes")
        miss, seed = _number(parts[2], float, 0.0, 0.6, "missing rate"), _number(parts[3], int, 0, 10**6, "seed")
        return clinical(n, k, miss, seed), {"w_data_source": "Simulated", "w_generator": _GENERATOR_NAMES["clinical"],
                                            "w_gen_cl_n": n, "w_gen_cl_k": k, "w_gen_cl_miss": miss,
                                            "w_gen_seed": seed}, None
    raise ValueError(f"'{escape_markdown(recipe, 80)}' names no built-in or simulated data set.")


def link_params(chosen, frame: int | None = None) -> dict:
    """The address bar's parameters for this session: its settings (:func:`explorer.sharing.settings_to_query`,
    the prior's knobs relative to the empirical-Bayes default, with ``chosen``), the data set when it
    is public (its recipe; an upload is never named) and the animation's frame (0-based here, 1-based
    in the link)."""
    params = sharing.settings_to_query(st.session_state.get("settings", {}), chosen=chosen)
    recipe = shared_runs.recipe_of(data().key)
    if recipe is not None:
        params[DATASET_PARAM] = recipe
    if frame is not None:
        params[FRAME_PARAM] = str(int(frame) + 1)
    return params


def keep_in_address_bar(chosen, frame: int | None = None) -> None:
    """Write :func:`link_params` to the address bar when they changed: a reload restores this
    session's data set, settings and frame, and the address is a link to share."""
    params = link_params(chosen, frame)
    if st.session_state.get("address_bar") != params:
        st.session_state["address_bar"] = params
        st.query_params.from_dict(params)


def data() -> sources.AppData:
    """The session's data set (the default scenario on a first visit)."""
    if "data" not in st.session_state:
        st.session_state["data"] = scenario(DEFAULT_SCENARIO)
    return st.session_state["data"]


def set_data(d: sources.AppData, origin: dict | None = None) -> None:
    """Make ``d`` the session's data set; settings that depend on the data go back to their defaults.

    ``origin`` records how the Data page made it (its widgets' values: the source, the data set
    or generator chosen, ...), so that the Data page shows the data actually loaded when it opens
    again (see :func:`data_origin`). None keeps the current record (e.g. new likelihoods for the
    same table)."""
    st.session_state["data"] = d
    if origin is not None:
        st.session_state["data_origin"] = dict(origin)
    settings = st.session_state.setdefault("settings", {})
    # per-algorithm settings ("K-means:n_clusters") default from the data (e.g. the true K)
    for key in [k for k in settings if ":" in k]:
        settings.pop(key)
        st.session_state.pop(widget_key(*key.split(":", 1)), None)
    # N0 and the prior knobs start again from the new data's automatic choice
    for key in ("view_x", "view_y", "N0", "spread", "weight"):
        settings.pop(key, None)
        st.session_state.pop(f"w_{key}", None)
    st.session_state.pop("runs", None)


def data_origin() -> dict:
    """How the session's data were made, as the Data page's widget values (the default
    scenario, as a built-in data set, until something else is loaded)."""
    if "data_origin" not in st.session_state:
        st.session_state["data_origin"] = scenario_origin(DEFAULT_SCENARIO)
    return st.session_state["data_origin"]


def scenario_origin(section: str) -> dict:
    """The Data page's record (see :func:`set_data`) of a PLOS scenario loaded as a built-in data set."""
    from mapdp_core.data.synthetic import PLOS_SCENARIOS

    return {"w_data_source": "Built-in", "w_builtin": f"PLOS {section}: {PLOS_SCENARIOS[section]}"}


def widget_key(algorithm: str, parameter: str) -> str:
    """The Streamlit key of a parameter's widget, e.g. ``w_kmeans_n_clusters``."""
    return "w_" + re.sub(r"[^a-z0-9]+", "", algorithm.lower()) + "_" + parameter


def init_widget(widget_key: str, value) -> None:
    """Give a widget its value before it is drawn, if it has none yet (its first draw, or the
    first after a page switch, which drops widget state, or after :func:`apply_setting`).

    The value goes through ``st.session_state``, so the browser is told to show it: a widget
    given a new ``value=`` argument under the same key keeps showing, and later sends back, the
    old one. Draw the widget with ``key=widget_key`` and no ``value``/``index``/``default``."""
    if widget_key not in st.session_state:
        st.session_state[widget_key] = value


def editor_start(editor_key: str, base):
    """The table a ``st.data_editor`` under ``editor_key`` starts from: ``base``, or the edits the
    user made on an earlier visit (Streamlit drops an editor's state when the page changes; pass
    the editor's result to :func:`keep_edits`). While the page stays open the start stays the
    same, so the editor keeps its own state."""
    starts = st.session_state.setdefault("editor_starts", {})
    if editor_key not in st.session_state:  # its first draw, or the first since a page switch
        starts[editor_key] = st.session_state.setdefault("kept_edits", {}).get(editor_key, base)
    return starts.get(editor_key, base)


def keep_edits(editor_key: str, edited) -> None:
    """Remember a data editor's edited table for :func:`editor_start` (this session's memory only)."""
    st.session_state.setdefault("kept_edits", {})[editor_key] = edited


def replace_editor_table(editor_key: str, table) -> None:
    """Start the data editor under ``editor_key`` again from ``table``, a change made outside it
    (a bulk edit; ``table`` holds the editor's cell edits so far): its widget state is dropped."""
    keep_edits(editor_key, table)
    st.session_state.setdefault("editor_starts", {}).pop(editor_key, None)
    st.session_state.pop(editor_key, None)


def setting(key: str, default):
    """A setting that outlives the page that shows its widget (widget state is dropped on page change)."""
    return st.session_state.setdefault("settings", {}).get(key, default)


def remember_setting(key: str, value) -> None:
    st.session_state.setdefault("settings", {})[key] = value


def apply_setting(key: str, value) -> None:
    """Set a setting from elsewhere (Tune's "apply", Explore's "Use it", a settings file or link).

    Its widget's state is dropped, so that where the widget is drawn next, :func:`init_widget`
    hands it the new value through the session state: the widget shows the value that runs.
    Call ``st.rerun()`` afterwards when the widget was already drawn in this run."""
    remember_setting(key, value)
    st.session_state.pop(f"w_{key}", None)


def apply_settings(settings: dict) -> None:
    """:func:`apply_setting` for each of ``settings`` (app settings and "<algorithm>:<parameter>")."""
    for key, value in settings.items():
        remember_setting(key, value)
        if ":" in key:
            st.session_state.pop(widget_key(*key.split(":", 1)), None)
        else:
            st.session_state.pop(f"w_{key}", None)


def settings_from_link() -> None:
    """Once per session: apply the settings a shared link carries in its query parameters
    (:func:`explorer.sharing.settings_to_query`; settings only, never data). A bad value is
    said in a sentence (the link's text escaped: whoever wrote the link cannot put a link or
    HTML on the page) and then none of the link's settings is used."""
    if st.session_state.get("link_read"):
        return
    st.session_state["link_read"] = True
    params = {k: st.query_params.get(k) for k in st.query_params.keys()}
    if not params:
        return
    # a link written on Explore carries the prior's knobs × the empirical-Bayes default: they become
    # × chosen against this session's data, which needs its automatic choice (the search, cached)
    recipe = params.pop(DATASET_PARAM, None)
    frame = params.pop(FRAME_PARAM, None)
    try:
        if frame is not None:
            frame = _number(frame, int, 1, 10**6, "frame") - 1  # said "the data set's frame": reworded below
    except ValueError:
        st.session_state["link_problem"] = (f"The link's frame was not used: it must be a whole number of at least 1, "
                                            f"got '{escape_markdown(frame, 40)}'.")
        frame = None
    if recipe is not None:  # the data set first: the prior's knobs are read against its automatic choice
        try:
            d, origin, roles = data_from_recipe(recipe)
        except (ValueError, FileNotFoundError) as exc:
            st.session_state["link_problem"] = f"The link's data set was not used: {escape_markdown(exc)}"
        else:
            set_data(d, origin)
            if roles:
                set_sequence_roles(roles)
    absolute = str(params.get(sharing.RELATIVE_TO, "")).strip().lower() == "default"
    try:
        settings, _ = sharing.settings_from_query(params, chosen=auto_choice() if absolute else None)
    except ValueError as exc:
        st.session_state["link_problem"] = f"The link's settings were not used: {escape_markdown(exc)}"
        return
    apply_settings(settings)
    if frame is not None:
        st.session_state["frame_position"] = int(frame)  # ui.player keeps it when the runs are drawn


_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()<>#+\-!|~$&^=])")
_WORD_JOINER = "\u2060"  # invisible, not a space: it only keeps the renderer from seeing a link or an icon


def _unsafe_character(c: str) -> bool:
    """Line breaks, tabs and other control characters, and the invisible ones that reorder text."""
    return unicodedata.category(c) in ("Cc", "Zl", "Zp") or c in "\u200e\u200f\u202a\u202b\u202c\u202d\u202e" \
        "\u2066\u2067\u2068\u2069\ufeff"


def escape_markdown(text, limit: int | None = 300) -> str:
    """User-supplied text (a value or key from a link or a settings file, a file name, an error
    message quoting them) to put inside a sentence that Streamlit renders as markdown
    (``st.warning``, ``st.success``, ``st.error``, ``st.caption``, ``st.markdown``): it shows as the
    literal text, never as a link, image, HTML, formatting, formula or icon.

    Line breaks and control characters become spaces (no new paragraph, heading or list); text
    over ``limit`` characters is cut short with "…"; the marks markdown reads
    (``\\ ` * _ { } [ ] ( ) # + - ! | ~ $ ^ =``) and ``< > &`` are backslash-escaped (CommonMark
    shows an escaped mark as itself, and ``\\<`` can start no HTML tag, ``\\&`` no entity); and an
    invisible word joiner goes after ``:`` (before a non-space), ``@`` and ``www``, because the
    renderer turns bare ``https://...``, ``www.`` and e-mail addresses, and ``:emoji:`` and
    ``:material/...:`` names, into links and icons after reading the escapes. Meant for text
    inside a line, not at the start of one."""
    text = "".join(" " if _unsafe_character(c) else c for c in str(text))
    if limit is not None and len(text) > limit:
        text = text[:max(limit - 1, 0)] + "…"
    text = _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)
    text = re.sub(r":(?=\S)", ":" + _WORD_JOINER, text)
    text = re.sub(r"(?i)(www)(?=\.)", r"\1" + _WORD_JOINER, text).replace("@", "@" + _WORD_JOINER)
    return re.sub(r"^(\s*\d+)\.", r"\1\\.", text)  # "1." would start a numbered list at a line's start


@contextmanager
def busy(page: str):
    """A context for a page's long computation: while it runs, the page counts as busy, so
    that :func:`stop_button` knows a click on Stop interrupted it. Streamlit interrupts a run
    with its own control exceptions (BaseException, not Exception): those leave the mark set."""
    st.session_state[f"{page}_busy"] = True
    try:
        yield
    except Exception:
        st.session_state[f"{page}_busy"] = False
        raise
    st.session_state[f"{page}_busy"] = False


def stop_button(page: str, params_key, container=st, help: str = "Stops a run in progress.",
                running: bool = True) -> bool:
    """Draw a Stop button; True when the page must stop here and say so.

    A click stops only a run in progress (one :func:`busy` marked and Streamlit interrupted for
    the click): with nothing running it changes nothing. A stopped run stays stopped for the
    same settings (``params_key``) until "Run again" or a change of setting. With ``running``
    False (the page knows nothing will run: every result is in the session) no button is drawn
    (issue 27: Stop sat above every chart); pass ``container=st.empty()`` and empty it when the
    run is over, so that Stop shows only while something runs."""
    clicked = container.button("Stop", icon=":material/stop:", key=f"{page}_stop", help=help) if running else False
    was_busy = st.session_state.pop(f"{page}_busy", False)
    if clicked and was_busy:
        st.session_state[f"{page}_stopped"] = params_key
    elif clicked:
        st.toast("Nothing is running: Stop interrupts a run in progress.")
    if st.session_state.get(f"{page}_stopped") is None:
        return False
    if st.session_state[f"{page}_stopped"] != params_key:
        st.session_state.pop(f"{page}_stopped")
        return False
    if st.session_state.get(f"{page}_run_again"):  # clicked: read before drawing, so nothing stale stays on screen
        st.session_state.pop(f"{page}_stopped")
        return False
    st.info("Stopped. Change a setting, or press Run again.")
    st.button("Run again", icon=":material/play_arrow:", key=f"{page}_run_again")
    return True


IMAGE_FORMATS = ("png", "svg")


def image_format_choice() -> None:
    """The sidebar's choice of what a chart's camera button saves (PNG or SVG); call once per page."""
    init_widget("w_image_format", setting("image_format", "png"))
    chosen = st.sidebar.radio("Charts' camera button saves", IMAGE_FORMATS, key="w_image_format", horizontal=True,
                              format_func=str.upper, help="The camera icon above each chart (top right, on hover) "
                              "saves it as an image, drawn by your browser.")
    remember_setting("image_format", chosen)


def chart_config(filename: str) -> dict:
    """The ``config`` for ``st.plotly_chart``: its modebar camera button (Plotly's toImage, drawn
    in the browser, no server-side engine) saves the chart as the chosen format (PNG at twice the
    size, or SVG) under ``filename``."""
    image_format = setting("image_format", "png")
    return {"toImageButtonOptions": {"format": image_format if image_format in IMAGE_FORMATS else "png",
                                     "filename": filename, "scale": 2}, "displaylogo": False}


def _wait_for_other_session(event) -> None:
    note = st.empty()
    try:
        while not event.is_set():
            # written again at every wait: a Streamlit call lets a click or a closed tab interrupt the wait
            note.caption("Another student's session is computing this same run on the same data; it is shared, "
                         "so this page waits for it instead of computing it again...")
            event.wait(0.5)
    finally:
        note.empty()


def _wait_quietly(event) -> None:
    """Wait for another session's short computation (an estimate's probe) without a word on the page;
    an empty placeholder written at every wait lets a click or a closed tab interrupt it."""
    place = st.empty()
    while not event.wait(0.25):
        place.empty()


def _busy_sentence(ahead: int, seconds: float, stop: bool = True) -> str:
    """What a page says while its run waits for a place (:data:`explorer.shared_runs.RUN_SLOTS`);
    ``stop``: the page has a Stop button."""
    queue = "it is next in line" if ahead == 0 else f"{ahead} run{'s are' if ahead > 1 else ' is'} ahead of it"
    wait = f", about {seconds:.0f} s" if seconds >= 1 else ""
    return (f"The server is busy with other students' runs: yours starts when one of its "
            f"{shared_runs.RUN_SLOTS.slots} places is free ({queue}{wait})."
            + (" Stop gives up the place in line." if stop else " Leaving the page gives up the place in line."))


#: What pages compute through :func:`cached` by running algorithms: each takes a place in the server's
#: line (:data:`explorer.shared_runs.RUN_SLOTS`) as a run of :func:`run` does (issue 43); a quick table takes none.
HEAVY_KINDS = frozenset({"compare", "bic", "n0_grid", "cv", "stability_summary", "split_tests", "sequences",
                         "trajectories", "groups", "k_evidence_clusters"})


def _in_line(compute: Callable) -> Callable:
    """``compute`` run while it holds a place in the server's line, the page saying so while it waits."""
    def computed():
        note = []  # its place on the page only once it waits: a free place moves nothing on the page

        def wait(ahead, seconds):
            note[:] = note or [st.empty()]
            note[0].info(_busy_sentence(ahead, seconds, stop=False), icon=":material/hourglass_top:")
        try:
            with shared_runs.RUN_SLOTS.place(None, wait=wait):
                for n in note:
                    n.empty()
                return compute()
        finally:
            for n in note:
                n.empty()
    return computed


def _shareable(value) -> bool:
    return not getattr(value, "stopped", False)  # a run cut short by a time limit or Stop stays in its session


def _remember(key: tuple, compute: Callable, shareable: bool = True):
    """``compute()`` once per ``key`` (whose first item is the data set's key) in this session; on
    public data, when ``shareable``, once per server (:mod:`explorer.shared_runs`), every session
    reusing it."""
    runs: OrderedDict = st.session_state.setdefault("runs", OrderedDict())
    if key in runs:
        runs.move_to_end(key)
        return runs[key]
    if shareable and shared_runs.is_public(key[0]):
        value = shared_runs.SERVER.get_or_compute(key, compute, keep=_shareable, wait=_wait_for_other_session)
    else:
        value = compute()
    runs[key] = value
    while len(runs) > _RUNS_KEPT:
        runs.popitem(last=False)
    return value


def cached(kind: str, params: dict, compute: Callable):
    """``compute()`` once per (data set, kind, parameters) in this session, and on public data once
    per server (:func:`_remember`) unless ``params`` are those of a run cut short
    (:func:`fitted_mapdp`), whose results never leave the session."""
    d = data()
    compute = _in_line(compute) if kind in HEAVY_KINDS else compute
    return _remember((d.key, kind, tuple(sorted(params.items()))), compute, not params.get("cut_short", False))


def built(kind: str, key: tuple, build: Callable, shareable: bool = True):
    """A built figure (or what figures are drawn from) of the session's data: ``build()`` once per
    (data set, kind, key), never again on a rerun. On public data, and when ``shareable`` (no run
    behind it was cut short, which only its session has), once per server
    (:data:`explorer.shared_runs.FIGURES`), every session drawing the same object; else in this
    session only, the last few kept. The value is shared as it is: never change it."""
    full = (data().key, kind, key)
    if shareable and shared_runs.is_public(full[0]):
        return shared_runs.FIGURES.get_or_compute(full, build)
    kept: OrderedDict = st.session_state.setdefault("figures", OrderedDict())
    if full in kept:
        kept.move_to_end(full)
        return kept[full]
    value = kept[full] = build()
    while len(kept) > _FIGURES_KEPT:
        kept.popitem(last=False)
    return value


def has_cached(kind: str, params: dict) -> bool:
    """Whether :func:`cached` already holds ``kind`` with ``params`` for the session's data."""
    key = (data().key, kind, tuple(sorted(params.items())))
    return key in st.session_state.get("runs", {}) or (shared_runs.is_public(key[0]) and key in shared_runs.SERVER)


def numeric(d: sources.AppData):
    return _remember((d.key, "numeric"), lambda: sources.numeric_matrix(d))


def run(kind: str, params: dict, progress_text: str | None = None, expected: float | None = None):
    """A recorded run (:func:`explorer.runner.run`) of the registered algorithm ``kind`` with the
    app's ``params`` (its settings plus ``restarts``, ``seed`` and ``time_budget``), from the session
    cache or computed behind a progress bar over restarts and steps."""
    d = data()
    settings = dict(params)
    options = {k: settings.pop(k) for k in ("restarts", "seed", "time_budget") if k in settings}

    def compute():
        bar = st.progress(0.0, text=progress_text or f"Running {kind}...")
        done = [0, 0]  # restarts finished, steps in this restart
        total = max(int(options.get("restarts", 1)), 1)

        def restart_done(finished, n):
            done[:] = [finished, 0]
            bar.progress(finished / n, text=f"{kind}: restart {finished} of {n}")

        stop = threading.Event()  # set when a long run's wait in the script thread was interrupted

        def after_step():
            # a Streamlit call between steps: a click anywhere (e.g. Stop) interrupts the run here
            done[1] += 1
            bar.progress(min(done[0] / total, 1.0), text=f"{kind}: restart {done[0] + 1}, step {done[1]}")
            return stop.is_set()  # else never asks to stop by itself; the time budget does

        reads_numbers = registry.algorithm(kind).input == "numeric"
        choice = auto_choice() if settings.get("start") == "search" else None  # the search's partition
        note = st.empty()
        try:
            # at most RUN_SLOTS runs compute at once on the server, first come first served (issue 43)
            with shared_runs.RUN_SLOTS.place(expected, wait=lambda ahead, seconds: note.info(
                    _busy_sentence(ahead, seconds), icon=":material/hourglass_top:")):
                note.empty()

                def work():
                    return runner.run(d, kind, settings, on_restart=restart_done, should_stop=after_step,
                                      X=numeric(d) if reads_numbers else None, choice=choice, **options)

                if expected is not None and expected > long_runs.LONG_RUN_SECONDS:
                    return long_runs.at_low_priority(work, stop)
                return work()
        finally:
            note.empty()
            bar.empty()

    return cached(kind, params, compute)


_ESTIMATES_KEPT = 64


def run_estimate(kind: str, params: dict) -> float:
    """The most seconds a run of ``kind`` with the app's ``params`` (as :func:`run` takes them) may
    take: its first steps timed on the session's data (:func:`explorer.comparison.run_estimate`, as
    Compare does), scaled to the restarts asked and at most the time limit. The timing is kept in
    the session per setting (restarts and time limit aside), apart from the runs, so that it never
    pushes a run out of the session's cache."""
    d = data()
    settings = dict(params)
    restarts = int(settings.pop("restarts", 1))
    budget = settings.pop("time_budget", None)
    key = (d.key, kind, tuple(sorted(settings.items())))
    kept: OrderedDict = st.session_state.setdefault("estimates", OrderedDict())
    if key in kept:
        kept.move_to_end(key)
    else:
        choice = auto_choice() if settings.get("start") == "search" else None

        def probe():
            return comparison.run_estimate(d, kind, settings, seed=int(settings.get("seed", 0)), choice=choice,
                                           probe_seconds=0.5)

        # on public data timed once per server, every session reading the same estimate (issue 43)
        kept[key] = (shared_runs.ESTIMATES.get_or_compute(key, probe, wait=_wait_quietly)
                     if shared_runs.is_public(d.key) else probe())
        while len(kept) > _ESTIMATES_KEPT:
            kept.popitem(last=False)
    seconds = comparison.expected_seconds(kept[key], restarts, None if budget is None else float(budget))
    return float(seconds.iloc[0])


def auto_choice(partition: str | None = None):
    """What ``MAPDP()`` would choose for the session's data (N0, prior spread and weight, the
    Gaussian structure; :func:`explorer.runner.auto_settings`): the app's defaults. Under the prior
    on partitions ``partition`` (None: the one chosen on Explore): "mfm" is what
    ``MAPDP(partition_prior="mfm")`` would choose, with no N0."""
    d = data()
    partition = partition_setting() if partition is None else partition

    def compute():
        with st.spinner("Choosing N0 and the prior from the data (the exact joint evidence of each candidate)..."):
            return runner.auto_settings(d, partition=partition)

    return _remember((d.key, "auto") if partition == "dp" else (d.key, "auto", partition), _in_line(compute))


def n0_setting() -> float:
    """N0 as chosen on Explore or Tune, else the automatic choice."""
    return float(setting("N0", auto_choice("dp").N0))


def start_setting() -> str:
    """Where MAP-DP's restarts begin (:data:`explorer.runner.STARTS`): the automatic search's
    partition, as ``MAPDP()`` does, unless Explore asked for one cluster."""
    value = setting("start", runner.STARTS[0])
    return value if value in runner.STARTS else runner.STARTS[0]


def prior_words(params: dict) -> str:
    """MAP-DP's prior on partitions as a page says it: "N0 = 3", or the mixture of finite mixtures."""
    if params.get("partition_prior", "dp") != "dp":
        return "the mixture-of-finite-mixtures prior (no N0)"
    return f"N0 = {figures.plain_number(float(params['N0']))}"


def partition_setting() -> str:
    """The prior on partitions chosen on Explore ("dp" unless the mixture of finite mixtures was asked for)."""
    value = setting("partition", "dp")
    return value if value in runner.PARTITION_PRIORS else "dp"


def mapdp_params(partition: str | None = None) -> dict:
    """The MAP-DP settings chosen on Explore (or their defaults): N0, the prior's spread and
    weight as the automatic choice times the Explore knobs ("× chosen") and where restarts begin,
    under the prior on partitions ``partition`` (None: the one chosen on Explore)."""
    partition = partition_setting() if partition is None else partition
    settings = runner.mapdp_settings(auto_choice(partition), n0_setting(), float(setting("spread", 1.0)),
                                     float(setting("weight", 1.0)), start_setting(), bool(setting("merge", True)),
                                     partition)
    return {**settings, "restarts": int(setting("restarts", 3)), "seed": int(setting("seed", 0)),
            "time_budget": float(setting("time_budget", 60.0))}


def mapdp_run():
    return run("MAP-DP", mapdp_params())


def fitted_mapdp():
    """(parameters, the recorded run, the fitted MAPDP) for the current data and settings,
    memoised in the session; if MAP-DP cannot run, says why in a sentence and stops the page."""
    d, params = data(), mapdp_params()
    try:
        result = mapdp_run()
        if result.stopped:  # cut short (time limit): the run stays in its session (_shareable), and so
            params = {**params, "cut_short": True}  # do its model and all that pages read from it (cached)
        return params, result, cached("model", params, lambda: runner.fitted_model(d, result))
    except ValueError as exc:
        plain_error(exc, "MAP-DP could not be fitted")
        st.stop()


def show_components(model) -> None:
    """Which of MAP-DP's components form each cluster, when overlapping components were grouped
    (``MAPDP(merge=...)``) or small ones folded (``min_cluster_size``), in a sentence; nothing
    when each component is a cluster."""
    said = grouping_sentence(model.cluster_of_component_, getattr(model, "merges_", ()), model.merge_cutoff_,
                             getattr(model, "min_cluster_size_", None))
    if said:
        st.markdown(escape_markdown(said, limit=None) + " The animation's sweeps show the components; its last frame colours them "
                    "by cluster.")


def show_k_evidence(page: str) -> None:
    """How sure MAP-DP's K is, in words and a small plot, about the clusters shown
    (:meth:`mapdp_core.MAPDP.k_evidence` with ``of="clusters"``, :func:`explorer.report.k_words`):
    the best partitions found with fewer and more clusters, by the exact joint."""
    params, _, model = fitted_mapdp()
    table = cached("k_evidence_clusters", params, lambda: model.k_evidence(of="clusters"))
    outliers = outlier_sentence(model.cluster_sizes_)  # the clusters read, after any grouping
    st.markdown("**How sure is K?** " + report.k_words(model, table)  # the library's words: nothing the user typed
                + (f" Of the {model.n_clusters_} clusters: {outliers}" if outliers else ""))
    with st.expander("The best partition found at each number of clusters"):
        st.caption("Fewer clusters: the clusters shown merged two at a time, always the pair that loses least; more: "
                   "the cluster whose split in two loses least, split. Each bar is how many nats (natural-log units) "
                   "the partition's −ln p(X, z) lies above the fit's: exp(−nats) is its posterior odds against the "
                   "fit. Above 3 nats (odds 1 : 20) is much less probable, above 5 (1 : 150) far less (Kass & "
                   "Raftery 1995). These are odds between partitions, not a probability of each K.")
        st.plotly_chart(built("k_evidence_figure", tuple(sorted(params.items())), lambda: figures.k_evidence_figure(table),
                              not params.get("cut_short", False)), width="stretch", key=f"{page}_k_evidence",
                        config=chart_config("k_evidence"))
        shown = table.drop(columns="fitted").round(3).rename(columns={"K": "clusters"})
        shown.attrs = {}  # the partitions stay out of the page
        st.dataframe(shown, hide_index=True, width="stretch", key=f"{page}_k_evidence_table")


def selected_rows(event, shown_rows) -> list[int]:
    """The rows (numbered from 0) of the points selected on a chart drawn with ``on_select``: its
    first trace's points, the rows ``shown_rows`` in order (other traces are markers drawn over
    them, e.g. :func:`explorer.figures.centre_picker_figure`'s picked centres)."""
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):  # no event (the chart's first draw) or no selection
        return []
    rows = {int(shown_rows[int(p["point_index"])]) for p in points
            if int(p.get("curve_number", 0)) == 0 and 0 <= int(p.get("point_index", -1)) < len(shown_rows)}
    return sorted(rows)


def show_row_decision(page: str) -> None:
    """One row's decision in MAP-DP's sweep (PLOS Algorithm 3; :meth:`mapdp_core.MAPDP.row_costs`):
    the cost of each cluster it could join and of a new cluster, at the fitted partition, the
    least one chosen: the step the N0 text explains, for a row the user picks."""
    params, _, model = fitted_mapdp()
    with st.expander("Why a row joins its cluster: one step of the sweep"):
        n = len(model.component_labels_)
        # rows are numbered from 1, as Subtypes and the downloads number them
        row = st.number_input(f"Row (1 to {n:,}, in the table's order)", 1, n, 1, step=1, key=f"w_{page}_decision_row")
        costs = cached("row_costs", {**params, "row": int(row)}, lambda: model.row_costs(int(row) - 1))
        chosen = costs[costs["chosen"]].iloc[0]
        new = costs[costs["cluster"] == -1].iloc[0]
        if isinstance(model.partition_prior_, DirichletProcess):
            sizes = ("−ln p(row | cluster) − ln (cluster size), where a new cluster's size is N0 "
                     f"({figures.plain_number(float(model.N0_))})")
        else:
            gamma = figures.plain_number(float(model.partition_prior_.gamma))
            sizes = (f"−ln p(row | cluster) − ln (cluster size + {gamma}), where a new cluster's size is "
                     f"{gamma} V(t + 1) / V(t) for t clusters of the other rows (the mixture of finite mixtures, "
                     f"here {figures.plain_number(float(math.exp(-new['size_term'])))})")
        st.markdown(f"MAP-DP takes row {int(row):,} out of its cluster and gives it to the option of least cost, "
                    f"{sizes}. Row {int(row):,} goes to **{chosen['option']}** "
                    f"(cost {chosen['cost']:.2f}); a new cluster would cost {new['cost']:.2f}."
                    + (" These are MAP-DP's components, before any grouping into clusters."
                       if len(getattr(model, "merges_", ())) else ""))
        st.plotly_chart(built("row_costs_figure", tuple(sorted({**params, "row": int(row)}.items())),
                              lambda: figures.row_costs_figure(costs), not params.get("cut_short", False)),
                        width="stretch", key=f"{page}_row_costs", config=chart_config("row_decision"))


def plain_error(exc: Exception, what: str = "That did not work") -> None:
    """Show an error as a sentence, never a traceback. Both parts are escaped (:func:`escape_markdown`):
    they often quote what the user supplied (a file's name, a value, a column)."""
    st.error(f"{escape_markdown(what, limit=500)}: {escape_markdown(exc, limit=2000)}")


def data_badge() -> str:
    """One line (markdown) on the current data set, for the sidebar."""
    d = data()
    n_gaps = int(d.X.isna().to_numpy().sum()) if d.has_gaps else 0  # as the Data page's summary counts them
    gaps = f" · {n_gaps:,} missing cell{'s' if n_gaps != 1 else ''} in the features" if n_gaps else ""
    truth = " · ground truth known" if d.truth is not None else ""
    # the name may be an uploaded file's: shown escaped, never as markdown or a link
    return f"**Data:** {escape_markdown(d.name, 120)}  \n{d.n_rows:,} rows × {len(d.features)} features{gaps}{truth}"


NO_COLUMN = "(none)"


def _roles_owner(d: sources.AppData) -> tuple:
    return (d.name, tuple(map(str, d.table.columns)), len(d.table))


def sequence_roles() -> dict:
    """The Data page's time and subject columns for the session's data: ``{"time": column or None,
    "subject": column or None}`` (both None until set, and again when other data are loaded).
    Kept in this session's memory only, like the data."""
    d = data()
    kept = st.session_state.get("sequence_roles", {})
    if kept.get("owner") != _roles_owner(d):
        return {"time": None, "subject": None}
    columns = set(d.table.columns)
    return {role: kept.get(role) if kept.get(role) in columns else None for role in ("time", "subject")}


def set_sequence_roles(roles: dict) -> None:
    """Mark the time and subject (group) columns of the session's data, as the Data page's boxes do."""
    d = data()
    st.session_state["sequence_roles"] = {"owner": _roles_owner(d), "time": roles.get("time"),
                                          "subject": roles.get("subject")}
    for role in ("time", "subject"):
        st.session_state.pop(f"w_seq_{role}", None)  # the boxes show the new roles
    st.session_state.pop("seq_role_widgets_owner", None)


def sequence_role_choice() -> dict:
    """The Data page's two optional selectboxes, the time column and the subject column; returns
    :func:`sequence_roles`. Nothing else on the page depends on them."""
    d = data()
    current = sequence_roles()
    options = [NO_COLUMN] + list(d.table.columns)
    if st.session_state.get("seq_role_widgets_owner") != _roles_owner(d):  # other data: the boxes start again from theirs
        for role in ("time", "subject"):
            st.session_state.pop(f"w_seq_{role}", None)
        st.session_state["seq_role_widgets_owner"] = _roles_owner(d)
    picked = {}
    left, right = st.columns(2)
    for role, box, label, help in (
            ("time", left, "Time column (for sequences)",
             "Rows ordered by this column are a time series: the Sequences page finds its hidden states."),
            ("subject", right, "Group or subject column",
             "Rows with the same value belong to one group (a school, a ward) or one subject (repeated visits): "
             "the Sequences page finds clusters shared across the groups, or clusters subjects by their "
             "trajectories.")):
        key = f"w_seq_{role}"
        if key in st.session_state and st.session_state[key] not in options:
            st.session_state.pop(key)
        init_widget(key, current[role] if current[role] is not None else NO_COLUMN)
        value = box.selectbox(label, options, key=key, help=help)
        picked[role] = None if value == NO_COLUMN else value
    if picked != current:
        st.session_state["sequence_roles"] = {"owner": _roles_owner(d), **picked}
    return picked
