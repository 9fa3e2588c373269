"""What every page shares: the session's data set, its settings, its per-session run cache.

Privacy: an uploaded table lives only in this session's ``st.session_state``; it
is never written to disk, logged, or put in a cache shared between sessions. For that
reason runs are memoised in the session (``_remember``), not with ``st.cache_data``,
which is global to the server; only the public built-in data sets use ``st.cache_data``.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import streamlit as st

import mapdp_core
from mapdp_core import explorer

#: The demo a first visitor sees: PLOS Section 5.2, where K-means fails on unequal counts.
DEFAULT_SCENARIO = "5.2"
_RUNS_KEPT = 24


@st.cache_resource(show_spinner="Preparing the clustering engine (once per server)...")
def warm_up() -> float:
    """Load or compile the numba kernels once per server process."""
    return mapdp_core.warm_up()


@st.cache_data(show_spinner="Loading the data set...", max_entries=32)
def scenario(section: str, n: int = 4000, seed: int = 0) -> explorer.AppData:
    return explorer.scenario_data(section, n=n, seed=seed)


@st.cache_data(show_spinner="Loading the data set...", max_entries=16)
def builtin(name: str) -> explorer.AppData:
    return explorer.builtin_data(name)


@st.cache_data(show_spinner="Clustering the demo...", max_entries=8)
def demo_frames(section: str):
    """MAP-DP (N0 = 3) and K-means (the true K), each the best of 3 restarts on a PLOS scenario: frames, view, axis names."""
    d = scenario(section)
    K = int(d.truth.max() + 1)
    runs = [explorer.run(d, "MAP-DP", {"N0": 3.0}, restarts=3), explorer.run(d, "K-means", {"n_clusters": K}, restarts=3)]
    coords, names = explorer.projection(d)
    return explorer.animation_frames(runs, coords, None, d.truth), coords, names


def data() -> explorer.AppData:
    """The session's data set (the default scenario on a first visit)."""
    if "data" not in st.session_state:
        st.session_state["data"] = scenario(DEFAULT_SCENARIO)
    return st.session_state["data"]


def set_data(d: explorer.AppData) -> None:
    """Make ``d`` the session's data set; settings that depend on the data go back to their defaults."""
    st.session_state["data"] = d
    settings = st.session_state.setdefault("settings", {})
    # per-algorithm settings ("K-means:n_clusters") default from the data (e.g. the true K)
    from ui.controls import widget_key

    for key in [k for k in settings if ":" in k]:
        settings.pop(key)
        st.session_state.pop(widget_key(*key.split(":", 1)), None)
    # N0 and the prior knobs start again from the new data's automatic choice
    for key in ("view_x", "view_y", "N0", "spread", "weight"):
        settings.pop(key, None)
        st.session_state.pop(f"w_{key}", None)
    st.session_state.pop("runs", None)


def setting(key: str, default):
    """A setting that outlives the page that shows its widget (widget state is dropped on page change)."""
    return st.session_state.setdefault("settings", {}).get(key, default)


def remember_setting(key: str, value) -> None:
    st.session_state.setdefault("settings", {})[key] = value


def apply_setting(key: str, value) -> None:
    """Set a setting from elsewhere (e.g. Tune's "apply"), so its widget shows it next time."""
    remember_setting(key, value)
    st.session_state.pop(f"w_{key}", None)


def _remember(key: tuple, compute: Callable):
    runs: OrderedDict = st.session_state.setdefault("runs", OrderedDict())
    if key in runs:
        runs.move_to_end(key)
        return runs[key]
    value = compute()
    runs[key] = value
    while len(runs) > _RUNS_KEPT:
        runs.popitem(last=False)
    return value


def cached(kind: str, params: dict, compute: Callable):
    """``compute()`` once per (data set, kind, parameters) in this session."""
    d = data()
    return _remember((d.key, kind, tuple(sorted(params.items()))), compute)


def numeric(d: explorer.AppData):
    return _remember((d.key, "numeric"), lambda: explorer.numeric_matrix(d))


def run(kind: str, params: dict, progress_text: str | None = None):
    """A recorded run (:func:`mapdp_core.explorer.run`) of the registered algorithm ``kind`` with the
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

        def after_step():
            # a Streamlit call between steps: a click anywhere (e.g. Stop) interrupts the run here
            done[1] += 1
            bar.progress(min(done[0] / total, 1.0), text=f"{kind}: restart {done[0] + 1}, step {done[1]}")
            return False  # never asks to stop by itself; the time budget does

        reads_numbers = explorer.algorithm(kind).input == "numeric"
        try:
            return explorer.run(d, kind, settings, on_restart=restart_done, should_stop=after_step,
                                X=numeric(d) if reads_numbers else None, **options)
        finally:
            bar.empty()

    return cached(kind, params, compute)


def auto_choice():
    """What ``MAPDP()`` would choose for the session's data (N0, prior spread and weight, the
    Gaussian structure; :func:`mapdp_core.explorer.auto_settings`): the app's defaults."""
    d = data()

    def compute():
        with st.spinner("Choosing N0 and the prior from the data (the exact joint evidence of each candidate)..."):
            return explorer.auto_settings(d)

    return _remember((d.key, "auto"), compute)


def n0_setting() -> float:
    """N0 as chosen on Explore or Tune, else the automatic choice."""
    return float(setting("N0", auto_choice().N0))


def mapdp_params() -> dict:
    """The MAP-DP settings chosen on Explore (or their defaults): N0, and the prior's spread and
    weight as the automatic choice times the Explore knobs ("× chosen")."""
    settings = explorer.mapdp_settings(auto_choice(), n0_setting(), float(setting("spread", 1.0)),
                                       float(setting("weight", 1.0)))
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
        return params, result, cached("model", params, lambda: explorer.fitted_model(d, result))
    except ValueError as exc:
        plain_error(exc, "MAP-DP could not be fitted")
        st.stop()


def plain_error(exc: Exception, what: str = "That did not work") -> None:
    """Show an error as a sentence, never a traceback."""
    st.error(f"{what}: {exc}")


def data_badge() -> str:
    """One line (markdown) on the current data set, for the sidebar."""
    d = data()
    gaps = " · has missing values" if d.has_gaps else ""
    truth = " · ground truth known" if d.truth is not None else ""
    return f"**Data:** {d.name}  \n{d.n_rows:,} rows × {len(d.features)} features{gaps}{truth}"
