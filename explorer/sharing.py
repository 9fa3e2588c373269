"""Settings to save or share: the app's settings checked against their kinds and bounds
(:func:`check_settings`), written to and read from a small JSON file or the URL's query
parameters (settings only, never data).
"""
from __future__ import annotations

import json

import numpy as np

from mapdp_core.models.registry import ALGORITHMS

from explorer.runner import STARTS

__all__ = ["APP_SETTINGS", "check_settings", "settings_to_json", "settings_from_json", "settings_to_query",
           "settings_from_query"]

#: The app's own settings beside the algorithms' ("<algorithm>:<parameter>"): kind and bounds.
APP_SETTINGS = {"N0": ("float", 1e-6, 1e6), "spread": ("float", 1e-6, 1e6), "weight": ("float", 1e-6, 1e6),
                "algorithms": ("algorithms", None, None), "match_k": ("bool", None, None),
                "restarts": ("int", 1, 20), "seed": ("int", 0, 10**6), "time_budget": ("float", 1.0, 600.0),
                "start": ("choice", STARTS, None), "merge": ("bool", None, None)}
_SETTINGS_VERSION = 1


def _setting_rule(key: str):
    if key in APP_SETTINGS:
        return APP_SETTINGS[key]
    name, _, param = key.partition(":")
    spec = ALGORITHMS[name].ui.get(param) if name in ALGORITHMS else None
    if spec is None:
        return None
    if spec.kind == "choice":
        return ("choice", tuple(spec.options), None)
    return (spec.kind, spec.low, spec.high)


def _setting_value(key: str, value, rule):
    kind, low, high = rule
    if kind == "algorithms":
        names = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value
        if not isinstance(names, (list, tuple)) or any(n not in ALGORITHMS for n in names):
            raise ValueError(f"'{key}' must list algorithms among {list(ALGORITHMS)}, got {value!r}.")
        return [n for n in ALGORITHMS if n in names]
    if kind == "choice":
        if value not in low:
            raise ValueError(f"'{key}' must be one of {list(low)}, got {value!r}.")
        return value
    if kind == "bool":
        if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "false", "0", "no"):
            return value.strip().lower() in ("true", "1", "yes")
        if isinstance(value, bool):
            return value
        raise ValueError(f"'{key}' must be true or false, got {value!r}.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"'{key}' must be a number, got {value!r}.") from None
    if isinstance(value, bool) or not np.isfinite(number):
        raise ValueError(f"'{key}' must be a finite number, got {value!r}.")
    if kind == "int":
        if number != round(number):
            raise ValueError(f"'{key}' must be a whole number, got {value!r}.")
        number = int(round(number))
    if low is not None and number < low:
        raise ValueError(f"'{key}' must be at least {low:g}, got {value!r}.")
    if high is not None and number > high:
        raise ValueError(f"'{key}' must be at most {high:g}, got {value!r}.")
    return number


def check_settings(raw: dict) -> tuple[dict, list]:
    """Validate settings read from a file or a link: ``(settings, ignored keys)``.

    Known settings (:data:`APP_SETTINGS` and each registered algorithm's ``"<name>:<parameter>"``)
    are converted to their types and checked against their bounds; a bad value raises
    ValueError naming the setting and what it must be. Unknown keys are returned, not used.
    """
    if not isinstance(raw, dict):
        raise ValueError(f"settings must be a mapping of names to values, got {type(raw).__name__}.")
    settings, ignored = {}, []
    for key, value in raw.items():
        rule = _setting_rule(str(key))
        if rule is None:
            ignored.append(str(key))
            continue
        settings[str(key)] = _setting_value(str(key), value, rule)
    return settings, ignored


def settings_to_json(settings: dict) -> str:
    """The session's settings as a small JSON document (settings only, never data)."""
    known = {k: v for k, v in settings.items() if _setting_rule(k) is not None}
    clean = {k: (v.item() if hasattr(v, "item") else list(v) if isinstance(v, tuple) else v) for k, v in known.items()}
    return json.dumps({"mapdp_explorer_settings": _SETTINGS_VERSION, "settings": clean}, indent=2, sort_keys=True)


def settings_from_json(text) -> tuple[dict, list]:
    """Settings from :func:`settings_to_json`'s text (str or bytes): ``(settings, ignored keys)``.
    Raises ValueError, in words, for a file that is not such a document or holds a bad value."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the file is not JSON ({exc.msg} at line {exc.lineno}); save the settings from this app "
                         "and load that file.") from None
    if not isinstance(document, dict) or "settings" not in document:
        raise ValueError("the file is JSON but not settings saved by this app (no 'settings' entry).")
    return check_settings(document["settings"])


def settings_to_query(settings: dict) -> dict:
    """The settings as URL query parameters (text values; algorithms comma-separated)."""
    out = {}
    for key, value in settings.items():
        if _setting_rule(key) is None:
            continue
        if isinstance(value, (list, tuple)):
            out[key] = ",".join(map(str, value))
        elif isinstance(value, float):
            out[key] = repr(value)
        else:
            out[key] = str(value)
    return out


def settings_from_query(params) -> tuple[dict, list]:
    """Settings from URL query parameters (:func:`settings_to_query`): ``(settings, ignored keys)``.
    Raises ValueError naming a bad value."""
    return check_settings({str(k): v for k, v in dict(params).items()})
