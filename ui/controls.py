"""Widgets for an algorithm's parameters, built from its ``ui`` hints (mapdp_core.core.estimator.Control).

A setting outlives the page that shows its widget (Streamlit drops widget state on a page
change), so each widget reads its value from, and writes it back to, the session's settings
under ``"<algorithm>:<parameter>"``.
"""
from __future__ import annotations


import numpy as np
import streamlit as st

from mapdp_core.core.estimator import Control
from ui import common
from ui.common import widget_key


def log_options(low: float, high: float, keep: float) -> list[float]:
    """Round values evenly spaced on a log scale between ``low`` and ``high``, plus ``keep``."""
    return sorted({float(f"{v:.3g}") for v in np.logspace(np.log10(low), np.log10(high), 41)} | {float(keep)})


def nearest(options, value):
    """The option closest to ``value`` on a log scale."""
    return min(options, key=lambda o: abs(np.log(o) - np.log(value)))


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
    for name, spec in algorithm_cls.ui.items():
        if name in params and spec.short:
            v = params[name]
            parts.append(f"{spec.short} = {v:.3g}" if isinstance(v, float) else f"{spec.short} = {v}")
    return ", ".join(parts)
