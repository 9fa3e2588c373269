#!/usr/bin/env python
"""Build the documentation site (``make docs``): MkDocs, with mkdocstrings for the API reference and
mkdocs-jupyter for the gallery of notebooks.

The hand-written pages are in ``docs/``; this script stages them with the pages it generates
(never committed, so they cannot drift from what they describe) and runs ``mkdocs build --strict``:

* ``reference.md``: one entry per public name of ``mapdp_core`` (``mapdp_core.__all__``) and of
  ``explorer.notebook``, rendered from the docstrings by mkdocstrings (read statically by griffe:
  nothing is imported, no kernel is compiled);
* ``user-guide.md``: the app's pages, its ``## The app`` and ``## Hosting a class`` sections taken
  from README.md as they stand;
* ``gallery/``: the notebooks of ``notebooks/``, executed first with ``--execute`` (as ``make docs``
  does, so the gallery shows their outputs, the inline animation included), else shown as code;
* ``benchmarks.md``: ``benchmarks/README.md`` as it stands;
* ``results/``: the papers' tables as this repository reproduced them, from the newest result files
  of ``benchmarks/reproduce_tables.py`` (PLOS Table 1, EJS Table 2) and ``benchmarks/ihmm_table4.py``
  (EJS Table 4), with the published values they print beside them.

Run: ``python scripts/build_docs.py [--execute] [--site DIR]`` (default ``build/docs-site``; the
staged sources go to ``build/docs-src``). Any warning from MkDocs or a plugin fails the build.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOTEBOOKS = ROOT / "notebooks"
RESULTS = ROOT / "benchmarks" / "results"


def public_names() -> list[str]:
    """``mapdp_core.__all__``, read from the source (no import: the docs build compiles nothing)."""
    tree = ast.parse((ROOT / "mapdp_core" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return [ast.literal_eval(e) for e in node.value.elts]
    raise RuntimeError("mapdp_core/__init__.py defines no __all__")


#: The reference's sections: a heading and the public names under it, in reading order; a name
#: of ``mapdp_core.__all__`` missing from every section goes under "Other names" (never dropped).
SECTIONS = [
    ("MAP-DP", ["MAPDP", "map_dp", "default_prior", "UnseenCategoryWarning", "SweepState", "warm_up",
                "DirichletProcess", "MixtureOfFiniteMixtures", "FAMILIES"]),
    ("Choosing N0 and the prior", ["auto_likelihood", "choose_hyperparameters", "expected_clusters",
                                   "n0_for_expected_clusters", "map_n0", "MapN0", "n0_grid", "N0Grid",
                                   "cross_validate", "CrossValidation", "scaled_prior"]),
    ("Reading a fit", ["cluster_profiles", "feature_tests", "bh_adjust", "Profiles", "cluster_stability",
                       "stability_summary", "k_sentence", "outlier_sentence", "grouping_sentence",
                       "clustering_scores", "match_labels", "match_label_sequence"]),
    ("Other algorithms on the same interface", ["KMeans", "KMeansBIC", "kmeans", "kmeans_bic", "kmeans_plusplus",
                                                "DPMeans", "LambdaSearch", "dp_means", "dpmeans_lambda_for_k",
                                                "CollapsedGibbs", "collapsed_gibbs", "EMGaussianMixture",
                                                "em_gaussian_mixture", "VariationalDP", "variational_dp",
                                                "SUGS", "VSUGS", "DPSearch"]),
    ("Sequences, groups and subjects", ["MAPIHMM", "HardHDPHMM", "HardHDPHMMDirect", "HardHDP",
                                        "MixedEffectsMAPDP"]),
    ("The algorithm contract and the registry", ["SweepEstimator", "Control", "ALGORITHMS", "algorithm", "register"]),
]


def reference_page() -> str:
    names = public_names()
    placed = {n for _, group in SECTIONS for n in group}
    sections = [(title, [n for n in group if n in names]) for title, group in SECTIONS]
    rest = [n for n in names if n not in placed]
    if rest:
        sections.append(("Other names", rest))
    out = ["# API reference", "",
           "Every public name of `mapdp_core` (`mapdp_core.__all__`), from its docstring; then the app's",
           "notebook service, `explorer.notebook`. The modules named in the README (`mapdp_core.datasets`,",
           "`.loading`, `.synthetic`, `.explain`) are the library's own modules under those names.", ""]
    options = "    options:\n      heading_level: 3\n      show_root_full_path: false"
    for title, group in sections:
        if not group:
            continue
        out += [f"## {title}", ""]
        for name in group:
            out += [f"::: mapdp_core.{name}", options, ""]
    out += ["## In a notebook: the animation", "",
            "`explorer` is the app's service layer (no Streamlit); `make lab` and the notebooks' kernel put it",
            "on the path.", ""]
    for name in ("animate", "Animation"):
        out += [f"::: explorer.notebook.{name}", options, ""]
    return "\n".join(out)


def readme_section(title: str) -> str:
    """README.md's ``## title`` section (to its next ``## ``), its heading one level down."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    if not match:
        raise RuntimeError(f"README.md has no '## {title}' section")
    return f"## {title}\n{match.group(1)}"


def user_guide_page() -> str:
    intro = (DOCS / "user-guide.md").read_text(encoding="utf-8")
    return intro.rstrip() + "\n\n" + readme_section("The app") + "\n" + readme_section("Hosting a class")


def newest(pattern: str) -> Path:
    found = sorted(RESULTS.glob(pattern))
    if not found:
        raise RuntimeError(f"no benchmarks/results/{pattern}: run the benchmark that writes it first")
    return found[-1]


def _block(text: str, start: str) -> str:
    """The lines of ``text`` from the line starting with ``start`` to the next blank line."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(start):
            block = []
            for more in lines[i:]:
                if not more.strip() or more.startswith("exit "):  # the benchmark's exit status ends it too
                    break
                block.append(more)
            return "\n".join(block)
    raise RuntimeError(f"no block starting {start!r}")


_CELL = re.compile(r"\{[^}]*\}|\S+ \([^)]*\)|\d+ x \d+|\S+")


def markdown_table(block: str) -> str:
    """A right-aligned text table (pandas' ``to_string``, as the benchmark prints it: a title line,
    a header line, rows) as a Markdown table; the text itself in a code block when a row does not
    split into as many cells as the header has columns."""
    title, header, *rows = block.splitlines()
    cells = [[(m.group(0), m.end()) for m in _CELL.finditer(row)] for row in rows]
    ends = [end for _, end in cells[0]] if cells else []
    if not ends or any([end for _, end in row] != ends for row in cells):
        return f"{title}\n\n```text\n" + "\n".join([header, *rows]) + "\n```"
    names = [header[start:end].strip() for start, end in zip([0] + ends[:-1], ends)]
    lines = [title, "", "| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    lines += ["| " + " | ".join(text.replace("|", "\\|") for text, _ in row) + " |" for row in cells]
    return "\n".join(lines)


def result_pages() -> dict[str, str]:
    tables = newest("reproduce-tables-*.txt")
    ihmm = newest("ihmm-table4-*.txt")
    text = tables.read_text(encoding="utf-8")
    head = ("Generated from `benchmarks/results/{file}`, the newest result file of `{command}` "
            "(regenerate the file by running the command; this page follows it at the next `make docs`).\n")
    plos = ["# PLOS ONE Table 1: six scenarios where K-means fails", "",
            head.format(file=tables.name, command="python benchmarks/reproduce_tables.py"),
            "Raykov et al. (2016), Section 5: N = 4 000 rows of each scenario (our re-creation, "
            "`mapdp_core.synthetic.plos_scenario`); NMI of K-means (k-means++, best of 10), MAP-DP "
            "(Normal-Wishart, N0 = 3, empirical-Bayes prior, best of 10 visiting orders), E-M started at "
            "the true means and collapsed Gibbs (600 sweeps), with iterations (Table 2) and the K that "
            "K-means with BIC chooses. Ours first, the published figure in brackets.", "",
            markdown_table(_block(text, "PLOS Tables")), ""]
    ejs = ["# EJS Table 2: six UCI data sets", "",
           head.format(file=tables.name, command="python benchmarks/reproduce_tables.py"),
           "Raykov, Boukouvalas & Little (2016), Table 2 (NMI) and Table 3 (iterations): DP-means with the λ "
           "that gives the true K, collapsed Gibbs, and MAP-DP with the families the loader suggests and the "
           "default empirical-Bayes priors, never tuned on the labels. Ours first, the published figure in "
           "brackets. Where MAP-DP's NMI is well below the published one (wine, breast), MAP-DP at these plain "
           "defaults finds many more clusters than the true K (the column `MAP-DP K`); the one-call `MAPDP()` defaults are measured "
           "on these and other tables by `benchmarks/defaults.py`.", "",
           markdown_table(_block(text, "EJS Tables")), ""]
    ihmm_text = ihmm.read_text(encoding="utf-8")
    lines = ihmm_text.splitlines()
    table4 = ["# EJS Table 4: the infinite HMM", "",
              head.format(file=ihmm.name, command="python benchmarks/ihmm_table4.py"),
              "The 5-state sequence recipe of EJS Section 6 under its two readings of the noise (variance "
              "0.9, or standard deviation 0.9), 5 sequences each: NMI of MAP-iHMM and its variants, "
              "time-blind MAP-DP, the hard HDP-HMMs and Viterbi with the true parameters. The published "
              "figures are on the last line.", "", "```text", "\n".join(lines), "```", ""]
    return {"plos-table-1.md": "\n".join(plos), "ejs-table-2.md": "\n".join(ejs),
            "ejs-table-4.md": "\n".join(table4)}


def _title_of(notebook: Path) -> str:
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            first = "".join(cell["source"]).strip().splitlines()[0]
            return first.lstrip("# ").strip()
    return notebook.stem


def stage_gallery(target: Path, execute: bool) -> list[tuple[str, str]]:
    """The notebooks copied (executed, with ``execute``) into ``target``; (title, file) per notebook."""
    target.mkdir(parents=True, exist_ok=True)
    entries = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        out = target / path.name
        if execute:
            import nbclient
            import nbformat

            book = nbformat.read(path, as_version=4)
            env = dict(os.environ)
            os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
            # a kernel of this very interpreter, first on JUPYTER_PATH (never a user's other "python3")
            spec = target.parent.parent / "jupyter" / "kernels" / "mapdp-docs"
            spec.mkdir(parents=True, exist_ok=True)
            (spec / "kernel.json").write_text(json.dumps({
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "MAP-DP docs", "language": "python"}), encoding="utf-8")
            os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(spec.parent.parent),
                                                                        env.get("JUPYTER_PATH")]))
            try:
                started = time.perf_counter()
                # the kernel's own console (ipykernel's notes on its transport) is not the build's:
                # a cell's error still stops the build, from the kernel's messages
                nbclient.NotebookClient(book, timeout=600, kernel_name="mapdp-docs",
                                        resources={"metadata": {"path": str(target)}}).execute(
                    stderr=subprocess.DEVNULL)
                print(f"  executed {path.name} in {time.perf_counter() - started:.0f} s")
            finally:
                os.environ.clear()
                os.environ.update(env)
            nbformat.write(book, out)
        else:
            shutil.copy2(path, out)
        entries.append((_title_of(path), path.name))
    for stray in target.glob("*.html"):  # what the notebooks wrote (the subtype report): not a page
        stray.unlink()
    return entries


def gallery_index(entries, executed: bool) -> str:
    lines = ["# Gallery", "",
             "Short notebooks, each for one reader's question. They are in `notebooks/` (stored without",
             "outputs), run from top to bottom by every `make test`, and open with `make lab`.",
             "" if executed else "\nThis build shows them as code: `make docs` runs them and shows their outputs.", ""]
    for title, name in entries:
        lines.append(f"- [{title}]({name})")
    return "\n".join(lines) + "\n"


def stage(src: Path, execute: bool) -> Path:
    """Every page of the site in ``src`` and the MkDocs configuration beside it; returns the configuration."""
    if src.exists():
        shutil.rmtree(src)
    pages = src / "pages"
    shutil.copytree(DOCS, pages, ignore=shutil.ignore_patterns("user-guide.md"))
    (pages / "user-guide.md").write_text(user_guide_page(), encoding="utf-8")
    (pages / "reference.md").write_text(reference_page(), encoding="utf-8")
    results = pages / "results"
    results.mkdir()
    for name, text in result_pages().items():
        (results / name).write_text(text, encoding="utf-8")
    (pages / "benchmarks.md").write_text((ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8"),
                                         encoding="utf-8")
    entries = stage_gallery(pages / "gallery", execute)
    (pages / "gallery" / "index.md").write_text(gallery_index(entries, execute), encoding="utf-8")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config["docs_dir"] = str(pages)
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            plugin["mkdocstrings"]["handlers"]["python"]["paths"] = [str(ROOT)]
    nav = config["nav"]
    for item in nav:
        if isinstance(item, dict) and "Gallery" in item:
            item["Gallery"] = ["gallery/index.md"] + [f"gallery/{name}" for _, name in entries]
    target = src / "mkdocs.yml"
    target.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return target


def build(site: Path, src: Path | None = None, execute: bool = False) -> str:
    """Stage and build the site into ``site``; returns MkDocs' log. Raises RuntimeError on a warning."""
    src = ROOT / "build" / "docs-src" if src is None else src
    config = stage(src, execute)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--clean", "-f", str(config),
                           "-d", str(site)], cwd=src, env=env, capture_output=True, text=True)
    log = done.stdout + done.stderr
    warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    if done.returncode != 0 or warnings:
        raise RuntimeError("the docs build warned or failed:\n" + "\n".join(warnings or log.splitlines()[-30:]))
    return log


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--execute", action="store_true", help="run the notebooks and show their outputs")
    parser.add_argument("--site", type=Path, default=ROOT / "build" / "docs-site")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        build(args.site.resolve(), execute=args.execute)
    except RuntimeError as problem:
        print(problem, file=sys.stderr)
        return 1
    print(f"docs built into {args.site} in {time.perf_counter() - started:.0f} s, no warnings "
          f"(open {args.site / 'index.html'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
