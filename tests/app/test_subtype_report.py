"""The subtype report (issue 27): one self-contained HTML file of a subtype analysis that a
clinician can file, from :func:`explorer.subtype_report.subtype_report_html` and from the
Subtypes page's download button."""
import html
import json
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from explorer import runner, sharing, sources
from explorer.subtype_report import (CITATIONS, PACKAGES, REPORT_FILE_NAME, SELECTION_CAVEAT, failed_report_html,
                                     report_settings, subtype_report_html)
from mapdp_core.data.loading import read_table
from mapdp_core.evaluation.stability import cluster_stability

SCRIPT = "<script>alert(1)</script>"
LINK = "[x](http://evil)"
VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr", "area", "base", "source", "track", "embed",
        "param"}


class _Reader(HTMLParser):
    """The document as html.parser reads it: its tags and attributes, text, tables (rows of
    cell texts), script blocks, and whether every element closes in order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.tables, self.scripts, self.imputed = [], [], [], [], 0
        self.stack, self.unbalanced = [], []
        self._cell = None
        self._in_script = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
            if "imp" in (dict(attrs).get("class") or "").split():
                self.imputed += 1
        elif tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append([dict(attrs), ""])

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.unbalanced.append(tag)
        else:
            self.stack.pop()
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1]:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "script":
            self._in_script = None

    def handle_data(self, data):
        if self._in_script is not None:
            self.scripts[-1][1] += data
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def table_with(self, first_headers: list) -> list:
        for t in self.tables:
            if t and t[0][:len(first_headers)] == first_headers:
                return t
        raise AssertionError(f"no table with headers {first_headers}")


def _read(document: str) -> _Reader:
    reader = _Reader()
    reader.feed(document)
    reader.close()
    return reader


def _messy_table(n: int = 60) -> pd.DataFrame:
    """A small mixed table as a clinic's export: an ID, ages with blanks, sex M/F, "1,452"-style
    lab values, "79%" adherence, a ward with HTML-like levels, and two columns named to attack
    the page (HTML and a markdown link), one of them with gaps."""
    rng = np.random.default_rng(3)
    g = np.arange(n) % 2
    lines = [f'id,age,sex,alt,adherence,"{SCRIPT}","{LINK}",ward']
    for i in range(n):
        age = "" if i % 9 == 0 else f"{40 + 25 * g[i] + rng.normal() * 3:.0f}"
        alt = f'"{int(1000 + 600 * g[i] + rng.normal() * 50):,}"'
        adherence = f"{int(60 + 30 * g[i] + rng.normal() * 3)}%"
        evil = "" if i % 7 == 0 else f"{g[i] * 5 + rng.normal():.2f}"
        lines.append(f"<P{i:03d}>,{age},{'MF'[g[i]]},{alt},{adherence},{evil},{rng.normal():.2f},"
                     f"{['<b>A</b>', 'B&C'][i % 2]}")
    table, _ = read_table("\n".join(lines).encode(), name="<i>clinic</i>.csv")
    return table


def _fit(data, restarts: int = 2):
    choice = runner.auto_settings(data)
    params = {**runner.mapdp_settings(choice), "restarts": restarts, "seed": 0, "time_budget": 60.0}
    run = runner.run(data, "MAP-DP", {k: v for k, v in params.items() if k not in ("restarts", "seed", "time_budget")},
                     restarts=restarts)
    return choice, params, run, runner.fitted_model(data, run)


@pytest.fixture(scope="module")
def messy():
    data = sources.table_data(_messy_table(), name="<i>clinic</i>.csv")
    choice, params, run, model = _fit(data)
    stability = cluster_stability(model, n_resamples=4, random_state=0)
    settings = {"spread": 1.0, "algorithms": ["MAP-DP", "K-means"]}
    document = subtype_report_html(data, model, params, choice=choice, settings=settings, run=run,
                                   stability=stability)
    return {"data": data, "model": model, "params": params, "settings": settings, "html": document,
            "read": _read(document)}


def test_the_report_parses_and_says_k_and_the_sizes(messy):
    read, model = messy["read"], messy["model"]
    assert not read.unbalanced and not read.stack  # every element closed, in order
    assert read.tags[0][0] == "html" and messy["html"].startswith("<!DOCTYPE html>")
    text = " ".join(read.text)
    K = model.n_clusters_
    assert K >= 2 and f"K = {K}" in text and f"{K} clusters" in text
    sizes = read.table_with(["cluster", "n", "fraction"])
    shown = {int(r[0]): int(r[1]) for r in sizes[1:]}
    assert shown == {k: int((model.labels_ == k).sum()) for k in range(K)}
    assert "stability" in sizes[0] and "verdict" in sizes[0]
    evidence = read.table_with(["clusters", "−ln p(X, z)", "nats above the fit"])  # K counted in clusters
    assert [r[3] for r in evidence[1:] if int(r[0]) == K] == ["the fit"]
    assert any(tag == "svg" for tag, _ in read.tags)  # K's evidence drawn inline


def test_every_column_is_named_and_said_what_was_done(messy):
    read, data = messy["read"], messy["data"]
    columns = read.table_with(["column", "role", "likelihood", "what was done", "why"])
    rows = {r[0]: r for r in columns[1:]}
    assert list(rows) == list(map(str, data.table.columns))
    assert SCRIPT in rows and LINK in rows
    assert "identifier" in rows["id"][1] and "thousands separators" in rows["alt"][3]
    assert "percentages" in rows["adherence"][3]
    assert rows["age"][5] == str(int(data.table["age"].isna().sum())) != "0"  # gaps per column
    profile = read.table_with(["feature", "kind"])
    assert {r[0] for r in profile[1:]} == set(data.features)


def test_user_strings_are_escaped_and_nothing_is_loaded_from_outside(messy):
    document, read = messy["html"], messy["read"]
    assert SCRIPT not in document and html.escape(SCRIPT) in document
    assert "<i>clinic" not in document and "<b>A</b>" not in document and "<P001>" not in document
    assert LINK in " ".join(read.text)  # shown as the text it is
    scripts = [attrs for tag, attrs in read.tags if tag == "script"]
    assert scripts == [{"type": "application/json", "id": "mapdp-settings"}]  # data only, no code
    for tag, attrs in read.tags:
        assert not {"src", "href", "xlink:href", "action", "srcset", "poster"} & set(attrs), (tag, attrs)
        assert not any(a.startswith("on") for a in attrs), (tag, attrs)
        assert "url(" not in (attrs.get("style") or "")
    assert "@import" not in document and "url(" not in document
    assert "<link" not in document and "<iframe" not in document and "<img" not in document


def test_the_embedded_settings_round_trip(messy):
    read, params = messy["read"], messy["params"]
    embedded = read.scripts[0][1]
    settings, ignored = sharing.settings_from_json(embedded)
    assert not ignored
    assert settings["N0"] == params["N0"] and settings["restarts"] == params["restarts"]
    assert settings["seed"] == params["seed"] and settings["start"] == params["start"]
    assert settings["merge"] is (params["merge"] is not None)
    assert settings["algorithms"] == ["MAP-DP", "K-means"] and settings["spread"] == 1.0
    assert settings == sharing.check_settings(report_settings(params, messy["settings"]))[0]
    shown = re.search(r"<pre>(.*?)</pre>", messy["html"], re.S).group(1)  # the same JSON, shown for reading
    assert json.loads(html.unescape(shown)) == json.loads(embedded)


def test_methods_cite_the_papers_and_give_versions(messy):
    text = " ".join(messy["read"].text)
    assert "What to do when K-means clustering fails: a simple yet principled alternative algorithm" in text
    assert "PLOS ONE" in text and "Raykov YP, Boukouvalas A, Baig F, Little MA (2016)" in text
    assert "Simple approximate MAP inference for Dirichlet processes mixtures" in text
    assert "Electronic Journal of Statistics" in text
    rules = set(messy["model"].merges_["rule"]) if len(messy["model"].merges_) else set()
    assert (CITATIONS["hennig2010"] in text) == ("overlap" in rules)  # cited when components merged
    assert (CITATIONS["guha2021"] in text) == ("small cluster" in rules)  # and when small ones were folded
    versions = messy["read"].table_with(["package", "version"])
    assert {r[0] for r in versions[1:]} >= set(PACKAGES)
    assert all(r[1] and r[1] != "not installed" for r in versions[1:])


def test_the_tests_carry_their_caveat_and_imputed_cells_are_marked(messy):
    read, data, model = messy["read"], messy["data"], messy["model"]
    text = " ".join(read.text)
    assert SELECTION_CAVEAT in text
    tests = read.table_with(["rank", "feature"])
    assert all(r[-1].startswith("†") for r in tests[1:]) and len(tests) == len(data.features) + 1
    _, was_missing = model.impute()
    assert read.imputed == int(was_missing.to_numpy().sum()) > 0
    assert text.count("[imputed]") >= read.imputed


def test_one_cluster_still_reports_the_data_and_settings():
    """Issue 27: with K = 1 the report says so and keeps the data and settings."""
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"a": rng.normal(size=120), "b": rng.normal(size=120)})
    table.loc[3, "a"] = np.nan
    data = sources.table_data(table, name="one blob")
    choice, params, run, model = _fit(data, restarts=1)
    assert model.n_clusters_ == 1
    document = subtype_report_html(data, model, params, choice=choice, run=run)
    read = _read(document)
    text = " ".join(read.text)
    assert not read.unbalanced and "K = 1" in text and "1 cluster" in text
    assert "nothing to test between clusters" in text and SELECTION_CAVEAT not in text
    assert read.table_with(["column", "role"]) and read.table_with(["setting", "value", "how chosen"])
    assert read.table_with(["cluster", "n", "fraction"])[1][:2] == ["0", "120"]
    assert sharing.settings_from_json(read.scripts[0][1])[0]["N0"] == params["N0"]


def test_a_failed_report_says_why_escaped():
    document = failed_report_html(ValueError(SCRIPT))
    assert SCRIPT not in document and html.escape(SCRIPT) in document and not _read(document).unbalanced


def test_the_subtypes_page_offers_the_report_as_an_html_file(monkeypatch):
    """After a fit, Subtypes has one button that downloads the report (.html), built on the click."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    from apptools import ok, start

    deferred = {}  # AppTest's runtime lives only while a script runs: keep what the buttons register
    register = MediaFileManager.add_deferred

    def recording(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        file_id = register(self, data_callable, mimetype, coordinates, file_name=file_name, **kwargs)
        deferred[file_id] = {"callable": data_callable, "mimetype": mimetype, "filename": file_name}
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", recording)
    at = start(240)
    at.session_state["data"] = sources.table_data(_messy_table(), name="<i>clinic</i>.csv")
    at.switch_page("pages/subtypes.py").run()
    ok(at)
    button = next(b for b in at.get("download_button") if b.proto.id and "download_report" in b.proto.id)
    assert button.proto.label.startswith("Subtype report")
    entry = deferred[button.proto.deferred_file_id]
    assert entry["filename"] == REPORT_FILE_NAME and entry["filename"].endswith(".html")
    assert entry["mimetype"] == "text/html"
    document = entry["callable"]().decode()  # what a click downloads
    read = _read(document)
    assert not read.unbalanced and "The subtype report could not be made" not in document
    assert html.escape(SCRIPT) in document and SCRIPT not in document
    K = at.session_state["runs"][next(k for k in at.session_state["runs"] if k[1] == "model")].n_clusters_
    assert f"K = {K}" in " ".join(read.text)


def test_a_report_under_the_mfm_says_its_prior_on_partitions(messy):
    data = messy["data"]
    choice = runner.auto_settings(data, partition="mfm")
    params = {**runner.mapdp_settings(choice, partition="mfm"), "restarts": 1, "seed": 0, "time_budget": 60.0}
    run = runner.run(data, "MAP-DP", {k: v for k, v in params.items() if k not in ("restarts", "seed", "time_budget")})
    model = runner.fitted_model(data, run)
    read = _read(subtype_report_html(data, model, params, choice=choice, settings={}, run=run))
    text = " ".join(read.text)
    said = model.partition_prior_.describe()
    assert said.startswith("mixture of finite mixtures, geometric prior on K with mean 10")
    assert f"the prior on partitions was a {said}" in text
    assert ["prior on partitions", said] == read.table_with(["setting", "value"])[1][:2]
    assert "The concentration parameter N0" not in text
