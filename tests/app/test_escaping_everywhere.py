"""No user-supplied text reaches a page unescaped (issue 29): a table whose file name, column
names and category levels carry markdown links and HTML goes through every page, and no
markdown element (text, captions, warnings, errors, infos, successes) shows the raw payload,
and no Plotly title carries its tags."""
import json
import re

import numpy as np
import pytest

from apptools import chart, ok, start

LINK = "[log in](https://evil.example)"
TAG = "<img src=x onerror=alert(1)>"
PAGES = ("explore", "subtypes", "tune", "compare", "predict", "data")


def _csv() -> bytes:
    rng = np.random.default_rng(0)
    n = 90
    group = np.repeat([0, 1, 2], 30)
    a = rng.normal(0, 1, n) + 4 * group
    b = rng.normal(0, 1, n) - 3 * group
    levels = np.array([LINK, TAG, "plain"])[group]
    header = f'"{LINK}","{TAG}",ward'
    rows = "\n".join(f'{x:.3f},{y:.3f},"{w}"' for x, y, w in zip(a, b, levels))
    return (header + "\n" + rows).encode()


def _shown_text(at) -> list[str]:
    out = []
    for kind in ("markdown", "caption", "warning", "error", "info", "success", "title", "header", "subheader"):
        out += [str(e.value) for e in getattr(at, kind)]
    return out


def _chart_titles(at) -> list[str]:
    titles = []
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        layout = spec.get("layout", {})
        titles.append(json.dumps(layout.get("title", "")))
        titles += [json.dumps(a.get("text", "")) for a in layout.get("annotations", [])]
    return titles


@pytest.mark.parametrize("page", PAGES)
def test_names_and_values_with_markdown_or_html_are_shown_escaped(page):
    at = start(300)
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Upload a table").run()
    at.file_uploader(key="w_upload").upload(f"{LINK}.csv", _csv(), "text/csv").run()
    ok(at)
    at.button(key="use_upload").click().run()
    ok(at)
    at.switch_page(f"pages/{page}.py").run()
    ok(at)
    for text in _shown_text(at):
        assert LINK not in text, text
        assert TAG not in text, text
    for title in _chart_titles(at):
        assert "<img" not in title, title


# ---------------------------------------------------------------------------------------------
# Every path the audit found (issue 29): the loader's warnings and the preparation's notes on the
# Data page, the identifier's name on Subtypes, the Sequences page's notes and charts, and the
# names and levels Plotly would render as HTML (axis titles, subplot titles, legend entries and
# titles, tick labels, hover text), on the upload's own run as well as on every page after it.

BOLD = "<b>bold</b>"
ANCHOR = '<a href="https://evil.example">x</a>'
#: what must never reach a markdown element unescaped: a link (escape_markdown writes "\]\(https:⁠//")
#: or a tag whose "<" has no backslash before it (escape_markdown writes "\<b\>")
RAW_MARKDOWN = re.compile(r"\]\(https://|(?<!\\)<(?:b>|a\s)")
#: what must never reach a Plotly string unescaped (Plotly reads <b> and <a href>, not markdown)
RAW_PLOTLY = ("<b>bold", "<a ")
ID_NAME, TIME_NAME = f"{ANCHOR} id", f"visit {BOLD}"
ALL_PAGES = PAGES + ("sequences",)


def _rich_csv() -> bytes:
    """30 subjects seen 3 times: an identifier that repeats (a preparation note quoting its name), a
    visit column (the time), a real column with gaps and a cell that is not a number (a loader
    warning quoting the column and the cell), a category column and a label whose levels are the
    payloads; every column name carries one."""
    import pandas as pd
    rng = np.random.default_rng(0)
    S, V = 30, 3
    n = S * V
    group = np.repeat(np.arange(S) % 3, V)
    visit = np.tile(np.arange(1, V + 1), S)
    a = [f"{v:.3f}" for v in rng.normal(0, 1, n) + 4 * group + 0.5 * visit]
    a[5] = a[17] = ""  # gaps
    a[40] = BOLD  # not a number: the loader leaves it out, and says so quoting it
    levels = np.array([LINK, BOLD, ANCHOR])[group]
    table = pd.DataFrame({ID_NAME: np.repeat(np.arange(1, S + 1), V), TIME_NAME: visit, f"x {LINK}": a,
                          f"y {BOLD}": [f"{v:.3f}" for v in rng.normal(0, 1, n) - 3 * group],
                          f"ward {ANCHOR}": levels, f"{LINK} class": levels})
    return table.to_csv(index=False).encode()


def _unescaped_markdown(at) -> list[str]:
    return [t for t in _shown_text(at) if RAW_MARKDOWN.search(t)]


def _strings(node, path=""):
    """Every string in a Plotly figure's JSON, with where it is (data, layout and frames alike)."""
    if isinstance(node, str):
        yield path, node
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _strings(v, f"{path}[{i}]")


def _unescaped_plotly(at) -> list[str]:
    """Titles, axis titles, legend titles, trace names, annotations, tick labels and hover text:
    any string of any chart that still carries a payload's tag."""
    bad = []
    for chart in at.get("plotly_chart"):
        for where, text in _strings(json.loads(chart.proto.spec)):
            if any(raw in text for raw in RAW_PLOTLY):
                bad.append(f"{chart.proto.id}{where}: {text}")
    return bad


def _chart_names(at) -> set:
    """Where each payload-carrying name must show up in some chart (so that the checks above see them)."""
    return {where.rsplit(".", 1)[-1] for chart in at.get("plotly_chart")
            for where, text in _strings(json.loads(chart.proto.spec)) if "&lt;b&gt;bold" in text or "&lt;a " in text}


def _upload_rich(at):
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Upload a table").run()
    at.file_uploader(key="w_upload").upload(f"{LINK}.csv", _rich_csv(), "text/csv").run()
    ok(at)
    # the upload's own run: the loader's warning quotes the column's name and the cell
    assert any("not numbers" in w.value for w in at.warning), [w.value for w in at.warning]
    assert not _unescaped_markdown(at), _unescaped_markdown(at)
    at.button(key="use_upload").click().run()
    ok(at)
    # the preparation's note quotes the identifier's name
    assert any("repeats some values" in w.value for w in at.warning), [w.value for w in at.warning]
    assert not _unescaped_markdown(at), _unescaped_markdown(at)
    assert not _unescaped_plotly(at), _unescaped_plotly(at)
    assert {"name", "text"} & _chart_names(at)  # the legend (label levels) and axis titles were checked
    at.selectbox(key="w_seq_time").set_value(TIME_NAME).run()
    at.selectbox(key="w_seq_subject").set_value(ID_NAME).run()
    ok(at)
    assert not _unescaped_markdown(at), _unescaped_markdown(at)


def _chart_text(at, key: str) -> str:
    """Every string of the chart whose key contains ``key``, in one."""
    return " ".join(text for text in (t for _, t in _strings(chart(at, key))))


ESCAPED = ("&lt;b&gt;bold&lt;/b&gt;", "&lt;a href=")  # how the payloads look once escaped for Plotly

#: per page, the charts that must carry a payload (escaped), so that the checks above do look at them
PAYLOAD_CHARTS = {"data": ("data_preview_plot",), "subtypes": ("sub_heatmap",), "explore": ("animation",),
                  "sequences": ("sequence_plot", "trajectory_plot")}


@pytest.mark.parametrize("page", ALL_PAGES)
def test_loader_warnings_notes_and_chart_text_are_escaped_on_every_page(page):
    at = start(300)
    _upload_rich(at)
    at.switch_page(f"pages/{page}.py").run()
    ok(at)
    if page == "explore":  # two of the uploaded columns as the axes, and the true groups' panel
        at.radio(key="w_view").set_value("two features").run()
        at.selectbox(key="w_view_y").set_value(f"y {BOLD}").run()
        at.checkbox(key="w_truth").check().run()
        ok(at)
    if page == "sequences":  # a series and a response whose names carry a tag (titles, trace name, y axis)
        at.selectbox(key="w_seq_series_data").set_value(f"y {BOLD}").run()
        at.selectbox(key="w_seq_resp_data").set_value(f"y {BOLD}").run()
        ok(at)
    assert not _unescaped_markdown(at), _unescaped_markdown(at)
    assert not _unescaped_plotly(at), _unescaped_plotly(at)
    for key in PAYLOAD_CHARTS.get(page, ()):
        assert any(e in _chart_text(at, key) for e in ESCAPED), key
    if page == "subtypes":  # the identifier's name, in the imputed rows' caption
        assert any("Rows are named by" in c.value and "evil" in c.value for c in at.caption)
    if page == "sequences":  # the other grouped view: clusters shared across groups
        at.radio(key="w_grp_view").set_value("Clusters shared across groups (hard HDP)").run()
        ok(at)
        assert not _unescaped_markdown(at), _unescaped_markdown(at)
        assert not _unescaped_plotly(at), _unescaped_plotly(at)


def test_the_sequences_pages_notes_and_failures_are_shown_escaped(monkeypatch):
    """The notes under the sequence and the groups, and an algorithm's failure, may quote a column
    or a value of the uploaded table: shown as plain text. (Their texts are forced here, so that the
    page's escaping is what is tested, whatever the library says today.)"""
    import dataclasses

    from explorer import sequences

    said = f"column '{LINK}' {BOLD} {ANCHOR}"
    prepare, runs, groups = sequences.prepare_sequence, sequences.sequence_runs, sequences.group_fit

    def failing_last(*args, **kwargs):
        out = runs(*args, **kwargs)
        return out[:-1] + [dataclasses.replace(out[-1], error=said)]

    monkeypatch.setattr(sequences, "prepare_sequence", lambda *a, **k: dataclasses.replace(prepare(*a, **k), note=said))
    monkeypatch.setattr(sequences, "sequence_runs", failing_last)
    monkeypatch.setattr(sequences, "group_fit", lambda *a, **k: dataclasses.replace(groups(*a, **k), note=said))
    at = start(300)
    _upload_rich(at)
    at.switch_page("pages/sequences.py").run()
    ok(at)
    assert any("could not run" in w.value for w in at.warning), [w.value for w in at.warning]
    assert sum("evil" in c.value for c in at.caption) >= 1
    assert not _unescaped_markdown(at), _unescaped_markdown(at)
    at.radio(key="w_grp_view").set_value("Clusters shared across groups (hard HDP)").run()
    ok(at)
    assert sum("evil" in c.value for c in at.caption) >= 2  # the sequence's note and the groups'
    assert not _unescaped_markdown(at), _unescaped_markdown(at)


def test_a_settings_file_that_fails_in_any_way_gets_a_plain_sentence(monkeypatch):
    """A settings file whose parsing fails with something other than ValueError: the same plain
    sentence (escaped), never a traceback."""
    from explorer import sharing

    def broken(*_, **__):
        raise KeyError(f"{LINK} {BOLD}")

    monkeypatch.setattr(sharing, "settings_from_json", broken)
    at = start(300)
    at.switch_page("pages/explore.py").run()
    ok(at)
    at.file_uploader(key="w_settings_file").upload(f"{LINK}.json", b"{}", "application/json").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.error and "was not loaded" in at.error[0].value
    assert not _unescaped_markdown(at), _unescaped_markdown(at)
