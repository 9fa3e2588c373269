"""No user-supplied text reaches a page unescaped (issue 29): a table whose file name, column
names and category levels carry markdown links and HTML goes through every page, and no
markdown element (text, captions, warnings, errors, infos, successes) shows the raw payload,
and no Plotly title carries its tags."""
import json

import numpy as np
import pytest

from apptools import ok, start

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
