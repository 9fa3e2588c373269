"""The documentation site (issue 44): `make docs` = scripts/build_docs.py. Every public name of
mapdp_core is in the API reference; the site builds with no warning (the fast build: notebooks
shown as code, not run; `make docs` runs them, and tests/test_notebooks.py runs them on every
`make test`); the papers' tables are pages generated from the benchmark result files.
"""
import importlib.util
import re
from pathlib import Path

import pytest

import mapdp_core

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings")
pytest.importorskip("mkdocs_jupyter")
_spec = importlib.util.spec_from_file_location("build_docs", ROOT / "scripts" / "build_docs.py")
build_docs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_docs)


def test_the_static_reading_of_the_public_names_is_the_package_s_own():
    assert build_docs.public_names() == list(mapdp_core.__all__)


def test_every_public_name_has_an_entry_in_the_reference():
    page = build_docs.reference_page()
    entries = re.findall(r"^::: mapdp_core\.(\w+)$", page, re.M)
    assert sorted(entries) == sorted(mapdp_core.__all__)
    assert len(entries) == len(set(entries))  # each once
    assert "::: explorer.notebook.animate" in page


def test_the_papers_tables_are_generated_from_the_result_files():
    pages = build_docs.result_pages()
    assert set(pages) == {"plos-table-1.md", "ejs-table-2.md", "ejs-table-4.md"}
    plos_rows = [line for line in pages["plos-table-1.md"].splitlines() if re.match(r"\| 5\.[1-6] \|", line)]
    assert len(plos_rows) == 6
    ejs_rows = [line for line in pages["ejs-table-2.md"].splitlines()
                if re.match(r"\| (wine|iris|breast|soybean|pima|vehicle) \|", line)]
    assert len(ejs_rows) == 6
    assert "EJS Table 4 (published)" in pages["ejs-table-4.md"]
    newest = sorted((ROOT / "benchmarks" / "results").glob("reproduce-tables-*.txt"))[-1]
    assert newest.name in pages["plos-table-1.md"]


def test_a_text_table_that_does_not_split_stays_text():
    block = "title\n a  b\n 1  2\n 3 4 5"
    assert "```text" in build_docs.markdown_table(block)


def test_the_user_guide_carries_the_readme_s_app_section():
    page = build_docs.user_guide_page()
    assert "## The app" in page and "| Explore |" in page


@pytest.mark.slow
def test_the_site_builds_with_no_warning_and_lists_every_name(tmp_path):
    site = tmp_path / "site"
    build_docs.build(site, src=tmp_path / "src", execute=False)  # raises on any warning
    html = (site / "reference" / "index.html").read_text(encoding="utf-8")
    anchors = set(re.findall(r'id="mapdp_core\.(\w+)"', html))
    assert set(mapdp_core.__all__) <= anchors
    for page in ("getting-started", "user-guide", "concepts", "library", "benchmarks", "gallery",
                 "results/plos-table-1", "results/ejs-table-2", "results/ejs-table-4"):
        assert (site / page / "index.html").is_file(), page
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert all((site / "gallery" / name / "index.html").is_file() for name in notebooks)
