"""Widgets for an algorithm's parameters, built from its ``ui`` hints (mapdp_core.core.estimator.Control).

A setting outlives the page that shows its widget (Streamlit drops widget state on a page
change), so each widget reads its value from, and writes it back to, the session's settings
under ``"<algorithm>:<parameter>"``.
"""
from __future__ import annotations


import numpy as np
import streamlit as st

from explorer.figures import plain_number
from mapdp_core.core.estimator import Control
from ui import common
from ui.common import widget_key


def log_options(low: float, high: float, keep: float) -> list[float]:
    """Round values evenly spaced on a log scale between ``low`` and ``high``, plus ``keep``."""
    return sorted({float(f"{v:.3g}") for v in np.logspace(np.log10(low), np.log10(high), 41)} | {float(keep)})


def nearest(options, value):
    """The option closest to ``value`` on a log scale."""
    return min(options, key=lambda o: abs(np.log(o) - np.log(value)))


#: The most starting centres a teacher may pick for K-means on a chart (issue 43: a small box drag
#: picked a band of 204 rows and K-means ran with K = 204 without a word)
MAX_PICKED_CENTRES = 20


def add_picks(picked, selected, cap: int = MAX_PICKED_CENTRES) -> tuple[list[int], str | None]:
    """The rows picked as K-means' starting centres after a new selection on the chart: every
    selection adds its rows to those already picked (a click adds one, as shift-click would: the
    chart is drawn anew after each pick, which empties Plotly's own selection, so a shift-click
    replaced the pick before, issue 43). A selection that would make more than ``cap`` centres is
    not used: the rows stay as they were and the sentence says why (None when it was used)."""
    picked = [int(r) for r in picked]
    new = [int(r) for r in selected if int(r) not in set(picked)]
    if len(picked) + len(new) > cap:
        return picked, (f"That selection picked {len(selected):,} rows: K-means starts from at most {cap} centres "
                        f"(one per row picked; {len(picked)} picked so far), so it was not used. Click points one by "
                        "one, or drag a smaller box.")
    return sorted(picked + new), None


def control(algorithm: str, parameter: str, spec: Control, *, default=None, container=st, disabled: bool = False):
    """Show the widget for one parameter and return its value (remembered in the session).

    The widget gets its value through the session state (:func:`ui.common.init_widget`), so a
    value set elsewhere (a settings file, a link) is the value it shows and the value that runs."""
    setting = f"{algorithm}:{parameter}"
    value = common.setting(setting, spec.default if default is None else default)
    key = widget_key(algorithm, parameter)
    if spec.kind == "int":
        low, high = int(spec.low if spec.low is not None else 0), int(spec.high if spec.high is not None else 100)
        common.init_widget(key, int(np.clip(value, low, high)))
        value = container.slider(spec.label, low, high, key=key, help=spec.help or None, disabled=disabled)
    elif spec.kind == "float" and spec.log:
        options = log_options(spec.low, spec.high, spec.default)
        common.init_widget(key, nearest(options, value))
        value = container.select_slider(spec.label, options=options, key=key, help=spec.help or None,
                                        disabled=disabled)
    elif spec.kind == "float":
        common.init_widget(key, float(value))
        value = container.number_input(spec.label, min_value=spec.low, max_value=spec.high, key=key,
                                       help=spec.help or None, disabled=disabled)
    elif spec.kind == "bool":
        common.init_widget(key, bool(value))
        value = container.checkbox(spec.label, key=key, help=spec.help or None, disabled=disabled)
    else:
        options = list(spec.options)
        common.init_widget(key, value if value in options else options[0])
        value = container.selectbox(spec.label, options, key=key, help=spec.help or None, disabled=disabled)
    common.remember_setting(setting, value)
    return value


def caption(algorithm_cls, params: dict) -> str:
    """A short statement of an algorithm's settings for a subplot title ("K = 3")."""
    parts = []
    if params.get("partition_prior", "dp") != "dp" and "partition_prior" in algorithm_cls().get_params():
        parts.append("MFM prior")  # the mixture of finite mixtures: no N0 runs
        params = {k: v for k, v in params.items() if k != "N0"}
    for name, spec in algorithm_cls.ui.items():
        if name in params and spec.short:
            v = params[name]
            parts.append(f"{spec.short} = {plain_number(v)}" if isinstance(v, float) else f"{spec.short} = {v}")
    return ", ".join(parts)


#: The one name of the prior's knobs wherever a page shows them (Explore's sliders, Tune, Compare,
#: shared links): each is a multiple of the automatic choice for the data in use ("× chosen"), whose own
#: value is a multiple of the empirical-Bayes default and is said beside it.
SPREAD_NAME = "prior spread, × chosen"
WEIGHT_NAME = "prior weight, × chosen"


def prior_knobs(spread: float, weight: float, choice, *, weight_too: bool = True) -> str:
    """The prior's knobs in the app's one scale, e.g. "prior spread × 2 chosen (chosen: 0.5 × the
    empirical-Bayes default, so 1 × it runs)": ``spread`` and ``weight`` are the session's settings
    (multiples of ``choice``'s, :func:`ui.common.mapdp_params` multiplies them out)."""
    def one(word: str, knob: float, chosen: float) -> str:
        return (f"prior {word} × {knob:g} chosen (the chosen {word} is {chosen:g} × the empirical-Bayes default"
                + (f", so {knob * chosen:.3g} × it runs)" if knob != 1 else ")"))
    parts = [one("spread", float(spread), float(choice.spread))]
    if weight_too:
        parts.append(one("weight", float(weight), float(choice.weight)))
    return " and ".join(parts)


class Interruption:
    """A long computation's checkpoints between steps that a click elsewhere (Stop) ends the way
    its time limit does, keeping the steps done. Streamlit answers the click by interrupting the
    script at its next drawing call with a control exception, which threw the finished restarts
    away (issue 27); :meth:`checkpoint` catches it there and says "stop", and once the steps done
    are kept, :meth:`resume` raises it again, so the click is handled as before."""

    def __init__(self):
        self.caught = None

    def checkpoint(self, draw) -> bool:
        """Call ``draw`` (a Streamlit call, e.g. a progress bar's update): True when the script was
        interrupted there (or before), i.e. the computation should stop now."""
        if self.caught is not None:
            return True
        try:
            draw()
        except _CONTROL as exc:
            self.caught = exc
            return True
        return False

    @property
    def interrupted(self) -> bool:
        return self.caught is not None

    def resume(self) -> None:
        """Raise the interruption caught, if any (after the partial result is kept)."""
        if self.caught is not None:
            caught, self.caught = self.caught, None
            raise caught


try:  # Streamlit's rerun and stop requests (BaseException, not Exception)
    from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException as _CONTROL
except ImportError:  # pragma: no cover - an older layout
    from streamlit.runtime.scriptrunner.exceptions import ScriptControlException as _CONTROL
