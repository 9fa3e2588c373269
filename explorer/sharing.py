"""Settings to save or share: the app's settings checked against their kinds and bounds
(:func:`check_settings`), written to and read from a small JSON file or the URL's query
parameters (settings only, never data).

The prior's knobs (``spread``, ``weight``) are kept in the session as multiples of the automatic
choice for the data in use ("× chosen", the app's one scale), and that choice differs between
data sets: "spread 2" saved on one table (chosen 0.5, so 1 × the empirical-Bayes default ran)
meant 4 × the default on a table whose chosen spread is 2. So a file or link says what its knobs
are relative to (:data:`RELATIVE_TO`, the setting ``prior_relative_to``): written with the data's
``chosen`` knobs they are multiples of the empirical-Bayes default (``"default"``), which mean the
same prior on any data and are turned back into × chosen when read with the reader's ``chosen``;
written without, they are × chosen (``"chosen"``), and say so.
"""
from __future__ import annotations

import json
import math
import numbers
import reprlib

import numpy as np

from mapdp_core.models.registry import ALGORITHMS

from explorer.runner import PARTITION_PRIORS, STARTS

__all__ = ["APP_SETTINGS", "MAX_SETTINGS_BYTES", "PRIOR_KNOBS", "RELATIVE_TO", "check_settings", "settings_to_json", "settings_from_json",
           "settings_to_query", "settings_from_query"]

#: The app's own settings beside the algorithms' ("<algorithm>:<parameter>"): kind and bounds.
APP_SETTINGS = {"N0": ("float", 1e-6, 1e6), "spread": ("float", 1e-6, 1e6), "weight": ("float", 1e-6, 1e6),
                "algorithms": ("algorithms", None, None), "match_k": ("bool", None, None),
                "restarts": ("int", 1, 20), "seed": ("int", 0, 10**6), "time_budget": ("float", 1.0, 600.0),
                "start": ("choice", STARTS, None), "merge": ("bool", None, None),
                "partition": ("choice", tuple(PARTITION_PRIORS), None)}
_SETTINGS_VERSION = 1
#: The settings that are multiples of the prior (see the module's docstring).
PRIOR_KNOBS = ("spread", "weight")
#: The setting that says what :data:`PRIOR_KNOBS` multiply, and its values: the automatic choice
#: for the data the settings are used on, or the empirical-Bayes default (the same on any data).
RELATIVE_TO = "prior_relative_to"
_RELATIVE = {"chosen": "the automatic choice for the data they are used on (× chosen, as Explore's sliders)",
             "default": "the empirical-Bayes default prior (the same on any data)"}
#: The largest settings file read: the app writes a few hundred bytes.
MAX_SETTINGS_BYTES = 1_000_000
_AGAIN = "download the settings from the Explore page and load that file"
_JSON_TYPES = {dict: "an object", list: "a list", str: "text", bool: "true or false", type(None): "null",
               int: "a number", float: "a number"}

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict = 3, 6, 6, 4
_REPR.maxstring, _REPR.maxother, _REPR.maxlong = 60, 60, 40


def _shown(value) -> str:
    """A user-supplied value as a message shows it: short (a long text, deep nesting or a huge
    number is cut off) and never failing (reprlib stops at depth 3, so no recursion)."""
    if isinstance(value, _Huge):
        return repr(value)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"a number with about {int(value.bit_length() * math.log10(2)) + 1} digits"
    try:
        return _REPR.repr(value)
    except Exception:  # an exotic object from a caller: its kind is enough
        return f"a {type(value).__name__}"


def _kind_of(value) -> str:
    return _JSON_TYPES.get(type(value), f"a {type(value).__name__}")


class _Huge(float):
    """A number in a JSON file too large for a float (or, whole, too long for int()): infinite,
    so that its setting's bounds reject it, and shown as written (cut short)."""

    def __new__(cls, text: str):
        number = super().__new__(cls, -math.inf if text.lstrip().startswith("-") else math.inf)
        number.text = text
        return number

    def __repr__(self) -> str:
        shown = self.text if len(self.text) <= 24 else f"{self.text[:12]}...{self.text[-6:]}"
        return f"a number too large to read ({shown}, {len(self.text)} characters)"


def _parse_float(text: str):
    number = float(text)
    return number if math.isfinite(number) else _Huge(text)


def _parse_int(text: str):
    """JSON's whole numbers: int() refuses more than 4300 digits, so a long one is read as a
    float, and one beyond any float (400 digits) is a :class:`_Huge`."""
    return int(text) if len(text) <= 30 else _parse_float(text)


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


def _bounds(low, high) -> str:
    if low is not None and high is not None:
        return f"from {low:g} to {high:g}"
    if low is not None:
        return f"of at least {low:g}"
    return f"of at most {high:g}" if high is not None else ""


def _setting_value(key: str, value, rule):
    kind, low, high = rule
    if kind == "algorithms":
        names = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value
        if not isinstance(names, (list, tuple)):
            raise ValueError(f"'{key}' must be a list of algorithm names, such as [\"MAP-DP\", \"K-means\"], got "
                             f"{_kind_of(value)}.")
        if not all(isinstance(n, str) for n in names):
            raise ValueError(f"'{key}' must be a list of algorithm names, each written as text (such as "
                             f"[\"MAP-DP\", \"K-means\"]), got {_shown(value)}.")
        unknown = [n for n in names if n not in ALGORITHMS]
        if unknown:
            raise ValueError(f"'{key}' must list algorithms among {list(ALGORITHMS)}, got {_shown(unknown[0])}.")
        return [n for n in ALGORITHMS if n in names]
    if kind == "choice":
        if not isinstance(value, str) or value not in low:
            raise ValueError(f"'{key}' must be one of {list(low)}, got {_shown(value)}.")
        return value
    if kind == "bool":
        if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "false", "0", "no"):
            return value.strip().lower() in ("true", "1", "yes")
        if isinstance(value, (bool, np.bool_)):  # numpy's True, e.g. from a setting computed on an array
            return bool(value)
        raise ValueError(f"'{key}' must be true or false, got {_shown(value)}.")
    bounds = _bounds(low, high)
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        raise ValueError(f"'{key}' must be a number{' ' + bounds if bounds else ''}, got "
                         f"{str(value).lower() if isinstance(value, bool) else _kind_of(value)}.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"'{key}' must be a number{' ' + bounds if bounds else ''}, got {_shown(value)}.") from None
    except OverflowError:  # a whole number too large for a float
        number = math.inf if value > 0 else -math.inf
    if not math.isfinite(number):
        raise ValueError(f"'{key}' must be a finite number{' ' + bounds if bounds else ''}, got {_shown(value)}.")
    if kind == "int":
        if number != round(number):
            raise ValueError(f"'{key}' must be a whole number, got {_shown(value)}.")
        number = int(round(number))
    if low is not None and number < low:
        raise ValueError(f"'{key}' must be at least {low:g}, got {_shown(value)}.")
    if high is not None and number > high:
        raise ValueError(f"'{key}' must be at most {high:g}, got {_shown(value)}.")
    return number


def _chosen_knobs(chosen) -> dict | None:
    """``{"spread": s, "weight": w}`` of an automatic choice (an object with those attributes, or
    a dict), or None."""
    if chosen is None:
        return None
    get = chosen.get if isinstance(chosen, dict) else (lambda k, d=None: getattr(chosen, k, d))
    out = {}
    for k in PRIOR_KNOBS:
        value = get(k, 1.0)
        try:
            out[k] = float(value)
        except (TypeError, ValueError):
            out[k] = math.nan
        if isinstance(value, bool) or not (math.isfinite(out[k]) and out[k] > 0):
            raise ValueError(f"the automatic choice's prior knob '{k}' must be a positive number (a multiple of the "
                             f"empirical-Bayes default), got {_shown(value)}.")
    return out


def _round(x: float) -> float:
    return float(f"{x:.6g}")


def check_settings(raw: dict, chosen=None) -> tuple[dict, list]:
    """Validate settings read from a file or a link: ``(settings, ignored keys)``.

    Known settings (:data:`APP_SETTINGS` and each registered algorithm's ``"<name>:<parameter>"``)
    are converted to their types and checked against their bounds; a bad value raises
    ValueError naming the setting and what it must be. Unknown keys are returned, not used.

    The prior's knobs come back × chosen, the session's scale: given as multiples of the
    empirical-Bayes default (``prior_relative_to`` = ``"default"``), they are divided by
    ``chosen``'s (the automatic choice for the reader's data: an object with ``spread`` and
    ``weight``, or such a dict); without ``chosen`` they cannot be, and are returned among the
    ignored keys, said as such. Without ``prior_relative_to`` (files saved before it) they are × chosen.
    """
    if not isinstance(raw, dict):
        raise ValueError(f"the settings must be an object of names and values, got {_kind_of(raw)}; {_AGAIN}.")
    raw = dict(raw)
    relative = raw.pop(RELATIVE_TO, "chosen")
    if not isinstance(relative, str) or relative.strip().lower() not in _RELATIVE:
        raise ValueError(f"'{RELATIVE_TO}' must be one of {list(_RELATIVE)}, got {_shown(relative)}.")
    relative = relative.strip().lower()
    knobs = _chosen_knobs(chosen)
    settings, ignored = {}, []
    for key, value in raw.items():
        key = key if isinstance(key, str) else _shown(key)
        rule = _setting_rule(key)
        if rule is None:
            ignored.append(key)
            continue
        try:
            settings[key] = _setting_value(key, value, rule)
        except (TypeError, OverflowError, RecursionError):  # an odd value no check above foresaw
            raise ValueError(f"'{key}' holds a value that is not a setting ({_kind_of(value)}); {_AGAIN}.") from None
    if relative == "default":
        for key in [k for k in PRIOR_KNOBS if k in settings]:
            if knobs is None:  # no automatic choice to divide by: not used rather than used on the wrong scale
                settings.pop(key)
                ignored.append(f"{key} (× the empirical-Bayes default)")
            else:
                settings[key] = _round(settings[key] / knobs[key])
    return settings, ignored


def _written(settings: dict, chosen) -> dict:
    """The known settings to write, with the prior's knobs on the scale said by ``prior_relative_to``
    (multiples of the empirical-Bayes default when ``chosen`` is given; see the module docstring)."""
    known = {k: v for k, v in settings.items() if _setting_rule(k) is not None}
    clean = {k: (v.item() if hasattr(v, "item") else list(v) if isinstance(v, tuple) else v) for k, v in known.items()}
    if any(k in clean for k in PRIOR_KNOBS):
        knobs = _chosen_knobs(chosen)
        if knobs is not None:
            for k in PRIOR_KNOBS:
                if k in clean:
                    clean[k] = _round(float(clean[k]) * knobs[k])
        clean[RELATIVE_TO] = "chosen" if knobs is None else "default"
    return clean


def settings_to_json(settings: dict, chosen=None) -> str:
    """The session's settings as a small JSON document (settings only, never data).

    With ``chosen`` (the automatic choice for the data in use, or ``{"spread": s, "weight": w}``)
    the prior's knobs are written as multiples of the empirical-Bayes default, which mean the same
    on any data; without it, × chosen. Either way ``prior_relative_to`` and the document's
    ``"prior knobs"`` line say which."""
    clean = _written(settings, chosen)
    document = {"mapdp_explorer_settings": _SETTINGS_VERSION, "settings": clean}
    if RELATIVE_TO in clean:
        document["prior knobs"] = f"spread and weight are multiples of {_RELATIVE[clean[RELATIVE_TO]]}"
    return json.dumps(document, indent=2, sort_keys=True)


def _text(data) -> str:
    """The file's text: UTF-8 with or without a byte-order mark, or UTF-16/32 (with a BOM, or
    recognised by its zero bytes as JSON allows). Raises ValueError for a file too large to be
    settings or one that is not text."""
    if not isinstance(data, (bytes, bytearray, memoryview, str)):
        raise ValueError(f"the settings must be the text of a JSON file, got {_kind_of(data)}.")
    if len(data) > MAX_SETTINGS_BYTES:
        raise ValueError(f"the file is {len(data) / 1e6:.1f} MB, far more than settings take (at most "
                         f"{MAX_SETTINGS_BYTES // 1_000_000} MB; the app writes a few hundred bytes); {_AGAIN}.")
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    data = bytes(data)
    encoding = json.detect_encoding(data)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        raise ValueError("the file is not text in UTF-8 or UTF-16 (it may be another kind of file); "
                         f"{_AGAIN}.") from None


def settings_from_json(text, chosen=None) -> tuple[dict, list]:
    """Settings from :func:`settings_to_json`'s text (str or bytes): ``(settings, ignored keys)``.

    Reads UTF-8 (with or without a BOM) and UTF-16 or UTF-32 files. Raises ValueError, in a
    sentence naming the problem and what to do, for anything else: a file over
    :data:`MAX_SETTINGS_BYTES`, not text, empty, not JSON, nested too deeply, not a settings
    document, or a setting of the wrong kind or out of its bounds (numbers too large for a float,
    NaN and Infinity included)."""
    text = _text(text)
    if not text.strip():
        raise ValueError(f"the file is empty; {_AGAIN}.")
    try:
        document = json.loads(text, parse_int=_parse_int, parse_float=_parse_float)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the file is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                         f"{_AGAIN}.") from None
    except RecursionError:
        raise ValueError(f"the file nests lists or objects too deeply to be settings; {_AGAIN}.") from None
    except (ValueError, OverflowError, TypeError):
        raise ValueError(f"the file's JSON holds a value that cannot be read; {_AGAIN}.") from None
    if not isinstance(document, dict) or "settings" not in document:
        raise ValueError("the file is JSON but not settings saved by this app (no 'settings' entry); "
                         f"{_AGAIN}.")
    if not isinstance(document["settings"], dict):
        raise ValueError(f"the file's 'settings' entry must be an object of names and values, got "
                         f"{_kind_of(document['settings'])}; {_AGAIN}.")
    return check_settings(document["settings"], chosen)


def settings_to_query(settings: dict, chosen=None) -> dict:
    """The settings as URL query parameters (text values; algorithms comma-separated), the prior's
    knobs with ``prior_relative_to`` as :func:`settings_to_json` writes them."""
    out = {}
    for key, value in _written(settings, chosen).items():
        if isinstance(value, (list, tuple)):
            out[key] = ",".join(map(str, value))
        elif isinstance(value, float):
            out[key] = repr(value)
        else:
            out[key] = str(value)
    return out


def settings_from_query(params, chosen=None) -> tuple[dict, list]:
    """Settings from URL query parameters (:func:`settings_to_query`): ``(settings, ignored keys)``,
    the prior's knobs × ``chosen`` as :func:`check_settings` says. Raises ValueError naming a bad value."""
    try:
        params = dict(params)
    except (TypeError, ValueError):
        raise ValueError(f"the link's settings must be names and values, got {_kind_of(params)}.") from None
    return check_settings({k if isinstance(k, str) else _shown(k): v for k, v in params.items()}, chosen)
