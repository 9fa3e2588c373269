"""Settings files and links against hostile or broken input (issue 29): every bad file or link is
a plain sentence (ValueError, never OverflowError, RecursionError or TypeError), UTF-8, UTF-8 with
a BOM and UTF-16 files load, and whatever a link or a file supplies reaches the page escaped, so
that whoever sends it cannot plant a link, an image or HTML in the app's messages.
"""
import codecs
import json
import re

import numpy as np
import pytest

from apptools import ok as _ok
from apptools import start
from explorer import sharing
from explorer.runner import STARTS
from mapdp_core.models.registry import ALGORITHMS
from ui.common import escape_markdown

TIMEOUT = 240
LINK = "[log in](https://evil.example)"
HTML = "<img src=x onerror=alert(1)>"
PAYLOADS = [LINK, HTML, "![x](https://evil.example/a.png)", "<script>alert(1)</script>", "**bold** _it_ `code`",
            "line one\n# heading\r\n- item\u2028> quote", "https://evil.example www.evil.example me@evil.example",
            ":red[red] :material/home: :smile: $x^2$", "&lt;b&gt; &#60;i&#62;", "| a | b |\n|---|---|",
            "[ref]: https://evil.example", "<https://evil.example>", "\\[not a link\\](x)", "1. one",
            "\u202eevil\u202c", "~~gone~~ ==mark== [^1]"]


def _doc(settings) -> bytes:
    return json.dumps({"mapdp_explorer_settings": 1, "settings": settings}).encode()


def _raw(settings_text: str) -> bytes:
    return ('{"mapdp_explorer_settings": 1, "settings": {' + settings_text + "}}").encode()


def _plain(message: str) -> None:
    """One sentence in words: no traceback, no line break, not an exception's own text."""
    assert message and "\n" not in message and "Traceback" not in message and len(message) < 500, message
    assert not re.search(r"(Recursion|Overflow|Type|Key|Attribute|Unicode\w*)Error|maximum recursion|"
                         r"Exceeds the limit", message), message
    assert message.rstrip().endswith("."), message


# ------------------------------------------------------------------------------- files that must not load

BAD_FILES = [
    # numbers no float holds, or no setting allows
    pytest.param(_raw('"N0": ' + "1" * 400), r"'N0' must be a finite number from 1e-06 to 1e\+06", id="N0-400-digits"),
    pytest.param(_raw('"N0": -' + "1" * 400), r"'N0' must be a finite number", id="N0-minus-400-digits"),
    pytest.param(_raw('"restarts": ' + "9" * 5000), r"'restarts' must be a finite number from 1 to 20",
                 id="restarts-5000-digits-beyond-int-limit"),
    pytest.param(_raw('"seed": ' + "1" * 400 + ".5"), r"'seed' must be a finite number", id="seed-400-digit-float"),
    pytest.param(_raw('"N0": 1e400'), r"'N0' must be a finite number", id="N0-1e400"),
    pytest.param(_raw('"spread": -1e400'), r"'spread' must be a finite number", id="spread-minus-1e400"),
    pytest.param(_raw('"N0": 1e-400'), r"'N0' must be at least 1e-06", id="N0-underflows-to-zero"),
    pytest.param(_raw('"N0": 1e300'), r"'N0' must be at most 1e\+06", id="N0-absurd"),
    pytest.param(_raw('"N0": NaN'), r"'N0' must be a finite number", id="N0-NaN"),
    pytest.param(_raw('"weight": Infinity'), r"'weight' must be a finite number", id="weight-Infinity"),
    pytest.param(_raw('"time_budget": -Infinity'), r"'time_budget' must be a finite number",
                 id="budget-minus-Infinity"),
    pytest.param(_raw('"DP-means:lam": 1e999'), r"'DP-means:lam' must be a finite number of at least 0",
                 id="lam-unbounded-above-but-infinite"),
    pytest.param(_raw('"N0": "' + "9" * 5000 + '"'), r"'N0' must be a finite number", id="N0-5000-digit-text"),
    pytest.param(_raw('"restarts": 2.5'), r"'restarts' must be a whole number", id="restarts-fraction"),
    # nesting
    pytest.param(b"[" * 10_000 + b"]" * 10_000, r"nests lists or objects too deeply", id="10000-nested-lists"),
    pytest.param(b'{"a":' * 10_000 + b"1" + b"}" * 10_000, r"nests lists or objects too deeply",
                 id="10000-nested-objects"),
    pytest.param(_raw('"N0": ' + "[" * 10_000 + "]" * 10_000), r"nests lists or objects too deeply",
                 id="10000-nested-in-a-setting"),
    pytest.param(_raw('"algorithms": ' + "[" * 500 + '"MAP-DP"' + "]" * 500), r"'algorithms' must be a list of "
                 r"algorithm names, each written as text", id="algorithms-500-nested"),
    # algorithms of the wrong shape
    pytest.param(_doc({"algorithms": {"MAP-DP": True}}), r"'algorithms' must be a list of algorithm names, such as",
                 id="algorithms-dict"),
    pytest.param(_doc({"algorithms": [["MAP-DP"], "K-means"]}), r"'algorithms' must be a list of algorithm names, "
                 r"each written as text", id="algorithms-nested-list"),
    pytest.param(_doc({"algorithms": [{"name": "MAP-DP"}]}), r"each written as text", id="algorithms-list-of-dict"),
    pytest.param(_doc({"algorithms": ["MAP-DP", HTML]}), r"'algorithms' must list algorithms among",
                 id="algorithms-unknown-name"),
    pytest.param(_doc({"algorithms": 3}), r"'algorithms' must be a list", id="algorithms-number"),
    pytest.param(_doc({"algorithms": None}), r"'algorithms' must be a list", id="algorithms-null"),
    # not a settings document
    pytest.param(b"", r"the file is empty", id="empty"),
    pytest.param(b"  \r\n\t ", r"the file is empty", id="blank"),
    pytest.param(codecs.BOM_UTF8, r"the file is empty", id="only-a-BOM"),
    pytest.param(b"N0 = 3", r"not JSON", id="not-json"),
    pytest.param(b'{"settings": {"N0": 2}', r"not JSON", id="truncated-json"),
    pytest.param(bytes(range(256)), r"not (text|JSON)", id="binary-all-bytes"),
    pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xd8", r"not (text|JSON)", id="binary-png-header"),
    pytest.param(np.random.default_rng(29).bytes(4096), r"not (text|JSON)", id="binary-random"),
    pytest.param("{}".encode("cp1252") + "é".encode("cp1252"), r"not (text|JSON)", id="latin-1-byte"),
    pytest.param(codecs.BOM_UTF16_LE + b"\x00\xd8{\x00", r"not (text|JSON)", id="utf16-lone-surrogate"),
    pytest.param(b" " * (sharing.MAX_SETTINGS_BYTES + 1), r"far more than settings take", id="huge-file"),
    pytest.param(_raw('"' + "k" * sharing.MAX_SETTINGS_BYTES + '": 1'), r"far more than settings take",
                 id="huge-key"),
    pytest.param(b"[]", r"not settings saved by this app", id="json-list"),
    pytest.param(b"null", r"not settings saved by this app", id="json-null"),
    pytest.param(b'"settings"', r"not settings saved by this app", id="json-text"),
    pytest.param(b"{}", r"not settings saved by this app", id="json-empty-object"),
    pytest.param(b'{"N0": 2}', r"not settings saved by this app", id="settings-at-the-top"),
    pytest.param(b'{"settings": null}', r"'settings' entry must be an object.*got null", id="settings-null"),
    pytest.param(b'{"settings": [["N0", 2]]}', r"'settings' entry must be an object.*got a list", id="settings-list"),
    pytest.param(b'{"settings": "N0=2"}', r"'settings' entry must be an object.*got text", id="settings-text"),
    pytest.param(b'{"settings": true}', r"'settings' entry must be an object", id="settings-bool"),
    # bad values carrying markdown or HTML: refused in words (the page escapes the words)
    pytest.param(_doc({"N0": LINK}), r"'N0' must be a number", id="N0-markdown-link"),
    pytest.param(_doc({"start": HTML}), r"'start' must be one of", id="start-html"),
    pytest.param(_doc({"merge": LINK}), r"'merge' must be true or false", id="merge-markdown-link"),
]


@pytest.mark.parametrize("data, message", BAD_FILES)
def test_every_bad_file_is_refused_in_one_plain_sentence(data, message):
    with pytest.raises(ValueError, match=message) as raised:
        sharing.settings_from_json(data)
    _plain(str(raised.value))
    assert type(raised.value) is ValueError and raised.value.__cause__ is None


def test_a_bad_file_as_text_is_refused_as_its_bytes_are():
    for text in ("", "\ufeff", "[" * 10_000, '{"settings": {"N0": ' + "1" * 400 + "}}", " " * 2_000_000):
        with pytest.raises(ValueError) as raised:
            sharing.settings_from_json(text)
        _plain(str(raised.value))
    with pytest.raises(ValueError, match="must be the text of a JSON file"):
        sharing.settings_from_json(None)


# ------------------------------------------------------------------------------- files that must load

SAVED = sharing.settings_to_json({"N0": 0.5, "restarts": 4, "algorithms": ["K-means", "MAP-DP"], "merge": False})
WANT = {"N0": 0.5, "restarts": 4, "algorithms": ["MAP-DP", "K-means"], "merge": False}


@pytest.mark.parametrize("data", [
    pytest.param(SAVED.encode("utf-8"), id="utf-8"),
    pytest.param(SAVED.encode("utf-8-sig"), id="utf-8-with-BOM"),
    pytest.param(SAVED.encode("utf-16"), id="utf-16-with-BOM"),
    pytest.param(codecs.BOM_UTF16_BE + SAVED.encode("utf-16-be"), id="utf-16-big-endian-with-BOM"),
    pytest.param(SAVED.encode("utf-16-le"), id="utf-16-without-BOM"),
    pytest.param(SAVED.encode("utf-32"), id="utf-32-with-BOM"),
    pytest.param(SAVED, id="text"),
    pytest.param("\ufeff" + SAVED, id="text-with-BOM"),
    pytest.param(SAVED.replace("\n", "\r\n").encode(), id="windows-line-ends"),
    pytest.param(bytearray(SAVED.encode()), id="bytearray"),
])
def test_utf8_bom_and_utf16_files_load(data):
    assert sharing.settings_from_json(data) == (WANT, [])


def test_numbers_at_the_edges_of_their_bounds_load():
    settings, _ = sharing.settings_from_json(_raw('"N0": 1e-6, "spread": 1000000, "restarts": 20.0, "seed": 0, '
                                                  '"time_budget": 600, "DP-means:lam": 1e300'))
    assert settings == {"N0": 1e-6, "spread": 1e6, "restarts": 20, "seed": 0, "time_budget": 600.0,
                        "DP-means:lam": 1e300}
    assert isinstance(settings["restarts"], int)


def test_unknown_keys_carrying_markdown_or_html_are_ignored_not_used():
    settings, ignored = sharing.settings_from_json(_doc({"N0": 2, **{p: 1 for p in PAYLOADS},
                                                         "deep": [[[[[[[[[[1]]]]]]]]]], "huge": 10 ** 400}))
    assert settings == {"N0": 2.0} and ignored == PAYLOADS + ["deep", "huge"]


def test_a_file_just_under_the_size_limit_loads():
    data = _raw('"N0": 2, "' + "k" * (sharing.MAX_SETTINGS_BYTES - 100) + '": 1')
    assert len(data) <= sharing.MAX_SETTINGS_BYTES
    settings, ignored = sharing.settings_from_json(data)
    assert settings == {"N0": 2.0} and len(ignored) == 1


# ------------------------------------------------------------------------------- every setting, every odd value

ODD_VALUES = {"object": {}, "object with keys": {"a": 1}, "list": [], "list of one": [1], "nested list": [[["x"]]],
              "null": None, "true": True, "false": False, "markdown": LINK, "html": HTML, "empty text": "",
              "nan": float("nan"), "huge whole": 10 ** 400, "deep": None}


def _deep(levels: int):
    value = "MAP-DP"
    for _ in range(levels):
        value = [value]
    return value


SETTING_KEYS = list(sharing.APP_SETTINGS) + [f"{name}:{param}" for name, cls in ALGORITHMS.items() for param in cls.ui]


def _kind(key: str) -> str:
    if key in sharing.APP_SETTINGS:
        return sharing.APP_SETTINGS[key][0]
    name, _, param = key.partition(":")
    return ALGORITHMS[name].ui[param].kind


@pytest.mark.parametrize("key", SETTING_KEYS)
def test_every_setting_refuses_odd_values_in_words(key):
    """dict, list, null, booleans, text with markdown, NaN, a 400-digit number and 10 000 nested lists in
    every setting, from Python (check_settings) and from a file and a link: a plain ValueError or the
    value the setting means (true for a yes/no setting, an empty list of algorithms)."""
    kind = _kind(key)
    for name, value in ODD_VALUES.items():
        value = _deep(10_000) if name == "deep" else value
        try:
            settings, _ = sharing.check_settings({key: value})
        except ValueError as exc:
            message = str(exc)
            _plain(message)
            assert message.startswith(f"'{key}' ") and "got" in message
        else:
            if kind == "bool":
                assert name in ("true", "false") and settings[key] is value
            elif kind == "algorithms":
                assert name in ("list", "empty text") and settings[key] == []
            else:
                raise AssertionError(f"{key} took {name}: {settings}")
        if name != "deep":
            try:
                sharing.settings_from_json(json.dumps({"settings": {key: value}}))
            except ValueError as exc:
                _plain(str(exc))
            try:  # a link carries text only
                sharing.settings_from_query({key: str(value)})
            except ValueError as exc:
                _plain(str(exc))


@pytest.mark.parametrize("value, message", [
    ("nan", "finite"), ("inf", "finite"), ("-Infinity", "finite"), ("1e400", "finite"), ("1" * 400, "finite"),
    ("1" * 300, "at most"),
    ("0x10", "must be a number"), ("", "must be a number"), (LINK, "must be a number"), (HTML, "must be a number"),
    ("1,5", "must be a number"), ("true", "must be a number"),
])
def test_bad_link_values_are_refused_in_words(value, message):
    with pytest.raises(ValueError, match=message) as raised:
        sharing.settings_from_query({"N0": value})
    _plain(str(raised.value))


def test_link_choices_and_algorithms_refuse_payloads():
    for params in ({"start": HTML}, {"algorithms": f"MAP-DP,{LINK}"}, {"match_k": LINK}, {"DP search:heuristic": HTML}):
        with pytest.raises(ValueError) as raised:
            sharing.settings_from_query(params)
        _plain(str(raised.value))
    assert sharing.settings_from_query({"start": STARTS[1], LINK: HTML}) == ({"start": STARTS[1]}, [LINK])


def test_a_message_quotes_a_long_value_cut_short():
    with pytest.raises(ValueError) as raised:
        sharing.settings_from_query({"N0": "x" * 100_000})
    assert len(str(raised.value)) < 200


# ------------------------------------------------------------------------------- escaping

def _read_back(escaped: str) -> str:
    """What CommonMark shows for escaped text: each backslash escape is its mark; the word joiner is invisible."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", escaped.replace("\u2060", ""))


_UNESCAPED = re.compile(r"(?<!\\)[<>\[\]()`*_#|~$&!]")


@pytest.mark.parametrize("payload", PAYLOADS)
def test_escaped_text_reads_back_as_itself_and_cannot_link_or_tag(payload):
    escaped = escape_markdown(payload)
    plain = re.sub(r"[\n\r\u2028\u202e\u202c]", " ", payload)
    assert _read_back(escaped) == plain  # shown literally
    assert "\n" not in escaped and "\r" not in escaped and "\u2028" not in escaped
    assert not _UNESCAPED.search(escaped), escaped
    # the renderer's own link finders (GFM: https://, www., e-mail; Streamlit: :icon:) see no match
    assert not re.search(r"https?://|www\.|@\w|:\w", escaped, flags=re.I), escaped
    if len(payload) > 3:
        assert payload not in escaped


def test_escaping_cuts_long_text_and_leaves_plain_words_alone():
    assert escape_markdown("x" * 1000, limit=40) == "x" * 39 + "…"
    assert escape_markdown("'N0' must be a number, got 'lots'.") == "'N0' must be a number, got 'lots'."
    assert escape_markdown("1. first") == "1\\. first"
    assert escape_markdown("back\\slash") == "back\\\\slash"


# ------------------------------------------------------------------------------- the app, headless

def _shown_text(at) -> list[str]:
    """The text of everything the page renders as markdown (main area and sidebar)."""
    texts = []
    for kind in ("markdown", "caption", "warning", "success", "error", "info", "title", "header", "subheader", "toast"):
        texts += [str(element.value) for element in at.get(kind)]
    return texts


def _no_payload(texts: list[str], payloads=(LINK, HTML)) -> None:
    for text in texts:
        for payload in payloads:
            assert payload not in text, text
        assert not re.search(r"(?<!\\)<img|(?<!\\)\]\((?!\\)|https?://evil|(?<!\\)<script", text), text


def test_a_link_whose_values_and_keys_carry_markdown_or_html_shows_them_escaped():
    at = start(TIMEOUT, **{"N0": LINK, HTML: LINK, LINK: HTML})
    warnings = [w.value for w in at.warning]
    assert any("The link's settings were not used: 'N0' must be a number" in w and escape_markdown(LINK) in w
               for w in warnings), warnings
    _no_payload(_shown_text(at))
    assert at.session_state["settings"].get("N0") != LINK


def test_a_link_naming_an_html_algorithm_shows_it_escaped():
    at = start(TIMEOUT, algorithms=f"MAP-DP,{HTML}", start=LINK)
    warnings = [w.value for w in at.warning]
    assert any("must list algorithms among" in w and escape_markdown(HTML) in w for w in warnings), warnings
    _no_payload(_shown_text(at))


def test_uploaded_settings_files_show_their_names_keys_and_values_escaped():
    at = start(TIMEOUT)
    uploader = at.file_uploader(key="w_settings_file")
    # a good file (seed 0 is the default: nothing runs again) whose name and unknown keys carry payloads
    uploader.upload(f"{LINK}{HTML}.json", _doc({"seed": 0, LINK: 1, HTML: 2, "x\n# big": 3}), "application/json").run()
    _ok(at)
    said = [s.value for s in at.success]
    assert any(s.startswith("Loaded 1 settings from '") and escape_markdown(LINK) in s and escape_markdown(HTML) in s
               and "not used" in s and "\n" not in s for s in said), said
    _no_payload(_shown_text(at))
    # a bad value carrying payloads, in a file whose name does too
    at.file_uploader(key="w_settings_file").upload(f"{HTML}.json", _doc({"N0": LINK}), "application/json").run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any(f"'{escape_markdown(HTML)}.json' was not loaded: 'N0' must be a number" in e for e in errors), errors
    _no_payload(_shown_text(at))
    # a broken file: a plain sentence, not Streamlit's error box for an exception
    at.file_uploader(key="w_settings_file").upload("deep.json", b"[" * 10_000, "application/json").run()
    assert not at.exception and any("nests lists or objects too deeply" in e.value for e in at.error)


# ------------------------------------------------------------------------------- the prior's knobs (issue 27)

def test_a_link_says_what_the_prior_knobs_are_relative_to():
    """A link stored the spread × the data's own choice, so on other data it meant another prior
    (× 4 of the default where the chosen spread was 2). Written with the data's choice, the knobs
    are multiples of the empirical-Bayes default and mean the same prior anywhere; without, they say
    they are × chosen."""
    session = {"N0": 3.0, "spread": 2.0, "weight": 1.0}
    here, there = {"spread": 0.5, "weight": 1.0}, {"spread": 2.0, "weight": 4.0}
    query = sharing.settings_to_query(session, chosen=here)
    assert query["spread"] == "1.0" and query[sharing.RELATIVE_TO] == "default"  # 2 × 0.5: what ran here
    # read on other data: the same prior (1 × the default) is × 0.5 of that data's choice
    assert sharing.settings_from_query(query, chosen=there) == ({"N0": 3.0, "spread": 0.5, "weight": 0.25}, [])
    assert sharing.settings_from_query(query, chosen=here)[0]["spread"] == 2.0  # and × 2 where it was saved
    # a file the same way, and a line in it for a person reading it
    document = json.loads(sharing.settings_to_json(session, chosen=here))
    assert document["settings"][sharing.RELATIVE_TO] == "default" and "empirical-Bayes" in document["prior knobs"]
    assert sharing.settings_from_json(json.dumps(document), chosen=there)[0]["spread"] == 0.5
    # without the data's choice the knobs stay × chosen, and say so
    plain = sharing.settings_to_query(session)
    assert plain["spread"] == "2.0" and plain[sharing.RELATIVE_TO] == "chosen"
    assert "× chosen" in json.loads(sharing.settings_to_json(session))["prior knobs"]
    assert sharing.settings_from_query(plain) == (session, [])
    # old files without the marker are × chosen, as they were written
    assert sharing.settings_from_query({"spread": "2"}, chosen=there) == ({"spread": 2.0}, [])
    # knobs × the default read with no choice to convert them are not used, rather than used wrongly
    settings, ignored = sharing.settings_from_query(query)
    assert settings == {"N0": 3.0} and ignored == ["spread (× the empirical-Bayes default)",
                                                   "weight (× the empirical-Bayes default)"]
    with pytest.raises(ValueError, match="prior_relative_to"):
        sharing.settings_from_query({"spread": "2", sharing.RELATIVE_TO: "<b>x</b>"})


def test_numpy_booleans_are_booleans():
    settings, ignored = sharing.check_settings({"match_k": np.True_})
    assert settings["match_k"] is True and not ignored


@pytest.mark.parametrize("knob", ["not a number", None, -1.0, float("nan"), True, [1.0]])
def test_a_bad_automatic_choice_is_said_in_words(knob):
    with pytest.raises(ValueError, match=r"the automatic choice's prior knob 'spread' must be a positive number"):
        sharing.check_settings({"spread": 1.0, "prior_relative_to": "default"}, chosen={"spread": knob, "weight": 1.0})
