"""A subtype analysis as one self-contained HTML file a clinician can file (issue 27).

:func:`subtype_report_html` takes what the Subtypes page already has (the data, the fitted
MAP-DP, its settings and the tables computed from it) and writes one HTML document with no
external resource: inline CSS, charts as inline SVG (:mod:`explorer.report_figures`), no script but the settings
JSON in a ``<script type="application/json">`` block (data, not code). It says

* the data: rows, columns, what was done to each column and why (role, likelihood, the
  reader's notes such as thousands separators, percentages or zeros read as missing), gaps;
* the settings and how they were chosen (automatically by the exact joint evidence, or by the user);
* K, counted in clusters, and how sure it is (:meth:`mapdp_core.MAPDP.k_evidence` of the
  clusters shown, its bars on a scale where the neighbouring K can be compared);
* cluster sizes with their stability (a bar chart coloured by verdict) (the headline counts the fragile clusters and, when most
  are, names the partition the data support stably: :func:`~mapdp_core.evaluation.stability.stability_summary`),
  the profiles, the tests between clusters with the
  caveat that they test clusters found in the same data, the imputed cells marked;
* a methods paragraph with citations and the package versions;
* the settings as JSON (:func:`explorer.sharing.settings_to_json`), shown and embedded, so the
  analysis can be run again on the same table.

Every user-supplied string (column names, category levels, identifiers, the file's name,
notes quoting cells) is HTML-escaped. The function writes nothing to disk: it returns text.
A notebook can call it as the page does::

    html = subtype_report_html(data, model, params)  # profiles, tests and K's evidence computed here
"""
from __future__ import annotations

import datetime as _dt
import html
import importlib.metadata
import math
import platform

import numpy as np
import pandas as pd

from mapdp_core.data.loading import suggest_roles_and_families
from mapdp_core.engine.k_evidence import odds_words
from mapdp_core.engine.merging import grouping_sentence
from mapdp_core.evaluation.explain import describe_priors
from mapdp_core.evaluation.profiles import cluster_profiles, feature_tests
from mapdp_core.evaluation.stability import RULE, StabilitySummary, stability_headline
from mapdp_core.families import FAMILIES
from mapdp_core.selection.auto import CATEGORICAL_SCALES, is_block, shape_words

from explorer import report, report_figures, sharing
from explorer.outcomes import OUTCOME_WHY, outcome_comparison, outcome_table
from explorer.sources import AppData, analysed_table

__all__ = ["subtype_report_html", "failed_report_html", "report_settings", "stability_words", "REPORT_FILE_NAME",
           "PACKAGES", "CITATIONS", "SELECTION_CAVEAT"]

#: The name the Subtypes page gives the downloaded file.
REPORT_FILE_NAME = "mapdp_subtype_report.html"

#: The packages whose versions the methods give.
PACKAGES = ("mapdp_core", "numpy", "scipy", "pandas", "numba", "plotly", "streamlit")

#: The references, as plain text (no link: the file loads nothing and points nowhere).
CITATIONS = {
    "raykov2016plos": "Raykov YP, Boukouvalas A, Baig F, Little MA (2016). What to do when K-means clustering fails: "
                      "a simple yet principled alternative algorithm. PLOS ONE 11(9): e0162259. "
                      "doi:10.1371/journal.pone.0162259",
    "raykov2016ejs": "Raykov YP, Boukouvalas A, Little MA (2016). Simple approximate MAP inference for Dirichlet "
                     "processes mixtures. Electronic Journal of Statistics 10(2): 3548-3578. doi:10.1214/16-EJS1196",
    "hennig2010": "Hennig C (2010). Methods for merging Gaussian mixture components. Advances in Data Analysis and "
                  "Classification 4: 3-34. doi:10.1007/s11634-010-0058-3",
    "guha2021": "Guha A, Ho N, Nguyen XL (2021). On posterior contraction of parameters and interpretability in "
                "Bayesian mixture modeling. Bernoulli 27(4).",
    "hennig2007": "Hennig C (2007). Cluster-wise assessment of cluster stability. Computational Statistics & Data "
                  "Analysis 52(1): 258-271. doi:10.1016/j.csda.2006.11.025",
    "kass1995": "Kass RE, Raftery AE (1995). Bayes factors. Journal of the American Statistical Association 90(430): "
                "773-795. doi:10.1080/01621459.1995.10476572",
    "bh1995": "Benjamini Y, Hochberg Y (1995). Controlling the false discovery rate: a practical and powerful approach "
              "to multiple testing. Journal of the Royal Statistical Society B 57(1): 289-300.",
    "gao2022": "Gao LL, Bien J, Witten D (2022). Selective inference for hierarchical clustering. Journal of the "
               "American Statistical Association, online 2022; 119(545): 332-342 (2024). "
               "doi:10.1080/01621459.2022.2116331",
}

#: Said beside every test between clusters: they were found in the same data.
SELECTION_CAVEAT = (
    "These tests compare clusters that were found in the same data they test. The clustering draws its boundaries "
    "where the features differ, so the tests find differences by construction: their p-values are far too small "
    "(\u201cdouble dipping\u201d), and even data with no subtypes at all give \u201csignificant\u201d differences "
    "between the clusters found. Read the ranking as a description of which features separate these clusters, "
    "not as evidence that the subtypes exist or as a confirmatory test. A valid test needs new data or a "
    "selective-inference test (Gao, Bien & Witten 2022); splitting the rows is not enough, since the tested half "
    "is still assigned to clusters by its own features (it only makes the p-values less extreme).")

_ROLE_WORDS = {"feature": "clustered", "identifier": "identifier (names the rows; not clustered)",
               "label": "label (known classes; compared with the clusters, not clustered)",
               "ignored": "not used"}

_CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1d2330;max-width:1100px;
margin:0 auto;padding:24px 28px 60px;line-height:1.45;font-size:15px;-webkit-print-color-adjust:exact;
print-color-adjust:exact}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:34px 0 8px;border-bottom:2px solid #d9dde6;
padding-bottom:4px}h3{font-size:16px;margin:20px 0 6px}
p.meta{color:#555;margin:0 0 16px}.summary{background:#f3f6fb;border:1px solid #d4dcec;border-radius:6px;
padding:12px 16px}.caveat{background:#fff4e0;border:1px solid #f0c36d;border-left:6px solid #e39b12;
border-radius:6px;padding:10px 14px;margin:10px 0}.warn{background:#fdecec;border:1px solid #eba3a3;
border-radius:6px;padding:10px 14px;margin:10px 0}
table{border-collapse:collapse;margin:8px 0 14px;font-size:13px;max-width:100%}
th,td{border:1px solid #d4d8e0;padding:4px 7px;text-align:left;vertical-align:top}
th{background:#eef1f6;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto}td.imp{background:#fde9a9;font-style:italic}
.bar{display:inline-block;height:10px;background:#4c78a8;vertical-align:middle;margin-right:6px}
pre{background:#f6f7f9;border:1px solid #dde1e8;border-radius:6px;padding:10px;overflow-x:auto;font-size:12px}
.small{font-size:13px;color:#444}ol.refs li{margin-bottom:4px}svg text{font-family:inherit}
@media print{body{max-width:none;padding:0;font-size:11pt}h2{page-break-after:avoid}table{page-break-inside:auto}
tr{page-break-inside:avoid}.scroll{overflow:visible}}
"""


# ----------------------------------------------------------------------------- small helpers

def _e(text) -> str:
    """User-supplied (or any) text as HTML text: ``& < > " '`` escaped; control characters
    other than tab and newline become spaces."""
    text = "".join(c if c in "\t\n" or c.isprintable() or c == " " else " " for c in str(text))
    return html.escape(text, quote=True)


def _number(x, digits: int = 3) -> str:
    if x is None:
        return "–"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if not math.isfinite(v):
        return "–"
    if v == round(v) and abs(v) < 1e15:
        return f"{int(round(v)):,}"
    if abs(v) >= 10 ** digits:
        return f"{v:,.0f}"
    if abs(v) < 1e-3:
        return f"{v:.{digits - 1}e}"
    return f"{v:.{digits}g}"


def _cell(x) -> tuple[str, bool]:
    """(text, whether numeric) for a table cell."""
    if x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NA or x is pd.NaT:
        return "–", False
    if isinstance(x, (bool, np.bool_)):
        return ("yes" if x else "no"), False
    if isinstance(x, (int, float, np.integer, np.floating)):
        return _number(x), True
    if isinstance(x, pd.Timestamp):  # a date without its 00:00:00
        return (x.date().isoformat() if x == x.normalize() else str(x)), False
    return str(x), False


def _table(df: pd.DataFrame, *, index: bool = False, marks: pd.DataFrame | None = None, mark_text: str = "",
           headers: dict | None = None) -> str:
    """An HTML table of ``df``, every header and cell escaped; ``marks`` (same shape, bool) gives
    the cells drawn as imputed (shaded, italic, followed by ``mark_text``)."""
    headers = headers or {}
    cols = list(df.columns)
    head = "".join(f"<th>{_e(headers.get(c, c))}</th>" for c in ([df.index.name or ""] if index else []) + cols)
    rows = []
    values = df.to_numpy(dtype=object)
    mask = None if marks is None else marks.to_numpy(dtype=bool)
    for i in range(len(df)):
        cells = []
        if index:
            cells.append(f"<th>{_e(df.index[i])}</th>")
        for j in range(len(cols)):
            text, numeric = _cell(values[i, j])
            imputed = mask is not None and mask[i, j]
            names = " ".join(n for n, on in (("num", numeric), ("imp", imputed)) if on)
            cls = f' class="{names}"' if names else ""
            cells.append(f"<td{cls}>{_e(text)}{_e(mark_text) if imputed else ''}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def _versions() -> dict:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    out["python"] = platform.python_version()
    return out


def _family_of(likelihood: dict, column):
    """(family, the other columns of its joint block) of ``column`` under ``likelihood``."""
    for key, fam in likelihood.items():
        if key == column:
            return fam, ()
        if isinstance(key, tuple) and column in key:
            return fam, tuple(c for c in key if c != column)
    return None, ()


def _encoding_words(enc: dict) -> str:
    words = []
    if "codes" in enc and [str(v) for v in enc["codes"]] != [str(i) for i in range(len(enc["codes"]))]:
        levels = list(enc["codes"])
        if len(levels) == 2:
            words.append(f"{levels[0]} = 0, {levels[1]} = 1")
        else:
            shown = ", ".join(map(str, levels[:12])) + (f", … ({len(levels)} levels)" if len(levels) > 12 else "")
            words.append(f"levels coded 0..{len(levels) - 1}: {shown}")
    if "shift" in enc:
        words.append(f"shifted by {_number(-float(enc['shift']))} to start at 0")
    if "step" in enc:
        words.append(f"read in steps of {_number(enc['step'])}")
    if "center" in enc and "scale" in enc:
        words.append(f"standardised (centre {_number(enc['center'])}, scale {_number(enc['scale'])})")
    for key, value in enc.items():
        if key not in ("codes", "shift", "step", "center", "scale") and isinstance(value, (str, int, float)):
            words.append(f"{key}: {value}")
    return "; ".join(words)


def _label_column(data: AppData, column) -> bool:
    """Whether ``column`` of the table holds the data's known classes (``data.truth``)."""
    if data.truth is None or column in data.features:
        return False
    s = data.table[column].reset_index(drop=True)
    known = s.notna().to_numpy()
    if not np.array_equal(known, data.truth >= 0):
        return False
    names = list(data.truth_names)
    try:
        return all(s.iloc[i] == names[data.truth[i]] for i in np.flatnonzero(known)[:2000])
    except (IndexError, TypeError, ValueError):
        return False


def _columns_table(data: AppData, likelihood: dict) -> pd.DataFrame:
    """One row per column of the table as loaded: its role, likelihood, what was done to it and
    why, and its gaps (in the file, and as clustered: zeros read as missing count there)."""
    try:
        suggested = suggest_roles_and_families(data.table).set_index("column")
    except Exception:  # the reasons are a courtesy: a table the suggester cannot read still gets its report
        suggested = None
    notes = data.table.attrs.get("column_notes", {}) if isinstance(data.table.attrs.get("column_notes"), dict) else {}
    rows = []
    for column in data.table.columns:
        hint = suggested.loc[column] if suggested is not None and column in suggested.index else None
        if isinstance(hint, pd.DataFrame):  # repeated column names: the first
            hint = hint.iloc[0]
        missing_file = int(data.table[column].isna().sum())
        if column in data.features:
            role = "feature"
            family, block = _family_of(likelihood, column)
            fam_words = f"{family}: {FAMILIES[family].help}" if family in FAMILIES else str(family)
            if block:
                fam_words += f" (one joint block with {', '.join(map(str, block))})"
            missing_used = int(data.X[column].isna().sum())
            done = _encoding_words(data.encodings.get(column, {}))
            if missing_used > missing_file:
                done = "; ".join(filter(None, [done, f"{missing_used - missing_file:,} zero(s) read as missing "
                                                     "(\u201cnot measured\u201d)"]))
        else:
            role = "identifier" if column == data.id_column else "label" if _label_column(data, column) else "ignored"
            fam_words, missing_used, done = "–", None, ""
        why = ""
        note = str(notes.get(column, "") or "")  # the reader's: thousands separators, percentages, date style
        if hint is not None:
            reason = str(hint.get("reason", "") or "")
            if note:  # said under "what was done", not twice
                reason = reason.replace(f"; {note}", "").replace(note, "").strip()
            agrees = hint.get("role") == role and (role != "feature" or hint.get("family") == family)
            if agrees:
                why = f"suggested: {reason}" if reason else "suggested"
            else:
                sugg = f"{hint.get('role')}" + (f", {hint.get('family')}" if hint.get("family") else "")
                why = (f"set when the data were loaded (the suggestion was {sugg}" + (f": {reason}" if reason else "")
                       + ")")
        if note:
            done = "; ".join(filter(None, [note, done]))
        rows.append({"column": column, "role": _ROLE_WORDS.get(role, role), "likelihood": fam_words,
                     "what was done": done or "–", "why": why or "–", "missing in the file": missing_file,
                     "missing as clustered": missing_used})
    return pd.DataFrame(rows)


# the SVG figures and the heat map's colours: explorer/report_figures.py

# ----------------------------------------------------------------------------- the sections

def report_settings(params: dict, settings: dict | None = None) -> dict:
    """The settings that reproduce the fit, as :func:`explorer.sharing.settings_to_json` writes
    them: the session's ``settings`` (the prior's knobs as the app keeps them, other algorithms'
    settings) with MAP-DP's N0, restarts, seed, time budget, start and grouping made explicit
    from ``params`` (:func:`ui.common.mapdp_params`'s dict)."""
    out = dict(settings or {})
    if "N0" in params:
        out["N0"] = float(params["N0"])
    if params.get("partition_prior", "dp") != "dp":
        out["partition"] = params["partition_prior"]
    for key in ("restarts", "seed", "time_budget", "start"):
        if key in params:
            out[key] = params[key]
    if "merge" in params:
        out["merge"] = params["merge"] is not None and params["merge"] is not False
    return out


def _how_chosen(value, chosen, what: str) -> str:
    if chosen is None:
        return "given"
    if math.isclose(float(value), float(chosen), rel_tol=1e-9, abs_tol=0.0):
        return f"automatic: {what}"
    return f"set by the user (the automatic choice was {_number(chosen)})"


def _settings_rows(data: AppData, model, params: dict, choice, run) -> pd.DataFrame:
    search = ("chosen from the data by the exact joint evidence p(X, z) of each candidate"
              + (f" ({len(choice.table)} candidates on {choice.rows_searched:,} rows)"
                 if choice is not None and getattr(choice, "table", None) is not None else ""))
    if params.get("partition_prior", "dp") == "dp":
        rows = [{"setting": "N0 (concentration: how readily a new cluster opens)", "value": _number(params.get("N0")),
                 "how chosen": _how_chosen(params.get("N0"), None if choice is None else choice.N0, search)}]
    else:
        rows = [{"setting": "prior on partitions", "value": model.partition_prior_.describe(),
                 "how chosen": "set by the user"}]
    if "spread" in params:
        rows.append({"setting": "prior spread of the real-valued features (× the empirical-Bayes default)",
                     "value": _number(params["spread"]),
                     "how chosen": _how_chosen(params["spread"], None if choice is None else choice.spread, search)})
    if "weight" in params:
        rows.append({"setting": "prior weight of the other features (× the default)",
                     "value": _number(params["weight"]),
                     "how chosen": _how_chosen(params["weight"], None if choice is None else choice.weight, search)})
    if params.get("structure") is not None:
        structure = params["structure"]
        rows.append({"setting": "structure of the real-valued features (the clusters' shape)",
                     "value": (("the real-valued features as one correlated (Normal-Wishart) block: " if is_block(structure)
                                else "each real-valued feature on its own: ") + shape_words(structure))
                     + ("; ordinal scales as categories (each level its own probability)"
                        if structure.endswith(CATEGORICAL_SCALES) else ""),
                     "how chosen": ("automatic: " + search if choice is not None
                                    and params["structure"] == choice.structure else "given")})
    rows.append({"setting": "likelihood per feature", "value": "see the data section",
                 "how chosen": "suggested from each column's values, or set by the user on the Data page"})
    if "start" in params:
        rows.append({"setting": "where each restart begins",
                     "value": ("the automatic search's best partition" if params["start"] == "search"
                               else "one cluster (PLOS Appendix B)"), "how chosen": "app setting"})
    restarts = params.get("restarts")
    if restarts is not None:
        rows.append({"setting": "restarts (random row orders; the lowest −ln p(X, z) is kept)",
                     "value": _number(restarts), "how chosen": "app setting"})
    if "seed" in params:
        rows.append({"setting": "random seed", "value": _number(params["seed"]), "how chosen": "app setting"})
    merge = params.get("merge")
    if "merge" in params:
        rows.append({"setting": "overlapping components grouped into clusters (Hennig 2010)",
                     "value": f"yes, at {_number(100 * float(merge))} % misclassification" if merge else "no",
                     "how chosen": "app setting"})
    if run is not None and getattr(run, "restarts", None) is not None and len(run.restarts):
        r = run.restarts
        same = int((r["K"] == (model.n_clusters_ if "components" in r else model.n_components_)).sum()) if "K" in r else 0
        rows.append({"setting": "restarts run", "value": f"{len(r)} ("
                     + ("clusters" if "components" in r else "K") + " per restart: "
                     + ", ".join(str(int(k)) for k in r["K"]) + ")",
                     "how chosen": f"{same} of {len(r)} restarts reached the kept K"})
    return pd.DataFrame(rows)


def _k_section(model, k_table) -> str:
    merged = bool(len(getattr(model, "merges_", ())))
    parts = ["<h2>How many subtypes, and how sure</h2>"]
    K = int(model.n_clusters_)
    parts.append(f"<p><b>K = {K}</b> cluster{'s' if K != 1 else ''}"
                 + (f" (from {int(model.n_components_)} components of MAP-DP, grouped)" if merged else "") + ".</p>")
    if merged:
        parts.append("<p>" + _e(grouping_sentence(model.cluster_of_component_, model.merges_, model.merge_cutoff_,
                                                  getattr(model, "min_cluster_size_", None))) + "</p>")
    if k_table is None or not len(k_table):
        parts.append("<p>The evidence for K at neighbouring values could not be computed.</p>")
        return "".join(parts)
    parts.append("<p>" + _e(report.k_words(model, k_table, head=False)) + "</p>")
    parts.append('<p class="small">For each K, the best partition found (fewer clusters: the fitted ones merged two at '
                 "a time, the pair that loses least; more: the split that loses least) scored by the exact joint "
                 "−ln p(X, z). Its distance above the fit in nats gives the posterior odds exp(−nats) of that "
                 "partition against the fit: above 3 nats (1 : 20) much less probable, above 5 (1 : 150) far less "
                 "(Kass &amp; Raftery 1995). These are odds between partitions, not a probability of each K.</p>")
    parts.append('<p class="small">The bars stand on a logarithmic axis (gridlines at 3, 10, 100, ... nats), so that '
                 "a K thousands of nats away does not flatten the near ones; each is labelled with its value.</p>")
    parts.append(report_figures.evidence_svg(k_table))
    shown = pd.DataFrame({"clusters": k_table["K"].astype(int), "−ln p(X, z)": k_table["neg_log_joint"].astype(float),
                          "nats above the fit": k_table["delta"].astype(float),
                          "in words": ["the fit" if f else (odds_words(d) if d >= 0 else "more probable than the fit")
                                       for d, f in zip(k_table["delta"], k_table["fitted"])],
                          "partition": k_table["how"].astype(str)})
    parts.append(_table(shown))
    return "".join(parts)


def stability_words(stability) -> tuple[str, str]:
    """The headline's clusters counted with their stability ("5 clusters, 4 of them fragile (stability
    below 0.6 under subsampling)") and, when most are fragile, the sentence naming the partition the
    data support stably or saying there is none ("" otherwise), from a
    :class:`~mapdp_core.evaluation.stability.StabilitySummary` or a stability table (which says no
    alternative: it was not looked for). ("", "") when there is no stability."""
    if isinstance(stability, StabilitySummary):
        return stability.headline, stability.sentence
    if stability is None or not len(stability):
        return "", ""
    return stability_headline(stability), ""


def _sizes_section(profiles, stability, summary: StabilitySummary | None = None) -> str:
    parts = ["<h2>Cluster sizes, and how sure each one is</h2>"]
    sizes = profiles.sizes.copy()
    if stability is not None and len(stability):
        keep = [c for c in ("cluster", "stability", "lowest", "dissolved", "verdict") if c in stability.columns]
        sizes = sizes.merge(stability[keep], on="cluster", how="left")
        parts.append(f"<p><b>{_e(stability_headline(stability))}</b>.</p>")
        parts.append('<p class="small">Stability: MAP-DP refitted with the same settings on random subsamples of the '
                     "rows; for each cluster the Jaccard overlap with its closest refitted cluster, averaged (Hennig "
                     "2007). From 0.75 a cluster is stable, below 0.6 fragile (it splits, merges or dissolves when a "
                     "few rows change); <i>dissolved</i> is the share of refits with an overlap of 0.5 or less.</p>")
    else:
        parts.append('<p class="small">Stability under subsampling was not computed for this report.</p>')
    body = []
    head = "".join(f"<th>{_e(c)}</th>" for c in sizes.columns)
    for _, row in sizes.iterrows():
        cells = []
        for c in sizes.columns:
            text, numeric = _cell(row[c])
            if c == "fraction":
                frac = float(row[c])
                text = f"{100 * frac:.1f} %"
                cells.append(f'<td class="num"><span class="bar" style="width:{max(1, round(120 * frac))}px"></span>'
                             f"{_e(text)}</td>")
            else:
                cls = ' class="num"' if numeric else ""
                cells.append(f"<td{cls}>{_e(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    parts.append(f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
                 "</table></div>")
    parts.append(report_figures.sizes_svg(sizes))
    if summary is not None and summary.most_fragile:
        parts.append("<h3>The partition the data support stably</h3>")
        parts.append(f'<div class="caveat">{_e(summary.sentence)}</div>')
        alt = summary.alternative
        if alt is not None:
            shown = alt.stability.rename(columns={"made_of": "the fitted clusters it unites"})
            parts.append(_table(shown[[c for c in ("cluster", "n", "the fitted clusters it unites", "stability",
                                                   "lowest", "dissolved", "verdict") if c in shown.columns]]))
        if len(summary.tried):
            tried = pd.DataFrame({"K": summary.tried["K"].astype(int),
                                  "lowest stability of its clusters": summary.tried["lowest"].astype(float),
                                  "all clusters stable": ["yes" if v else "no" for v in summary.tried["all_stable"]]})
            parts.append('<p class="small">The coarser partitions tried, from the most clusters down, each scored '
                         "against the same refits merged down the same way; the first whose clusters are all stable "
                         "is the one named.</p>")
            parts.append(_table(tried))
    return "".join(parts)


def _tests_section(tests, K: int, tests_problem: str | None) -> str:
    parts = ["<h2>Which features separate the clusters</h2>"]
    if K < 2:
        parts.append("<p>MAP-DP found one cluster at these settings, so there is nothing to test between clusters.</p>")
        return "".join(parts)
    if tests is None:
        why = f": {_e(tests_problem)}" if tests_problem else ""
        parts.append(f"<p>The tests between clusters could not be computed{why}.</p>")
        return "".join(parts)
    parts.append(f'<div class="caveat"><b>Caveat: circular tests.</b> {_e(SELECTION_CAVEAT)}</div>')
    parts.append('<p class="small">One test per feature across clusters (Welch t / Welch ANOVA for measurements, '
                 "Mann-Whitney / Kruskal-Wallis for scores and counts, chi-square or Fisher for categories); q = "
                 "Benjamini-Hochberg adjusted p; rank 1 separates best. Every p and q below carries the caveat "
                 "above (†).</p>")
    shown = report.tests_for_display(tests)
    keep = [c for c in ("rank", "feature", "kind", "test", "statistic", "p_value", "q_value", "significant",
                        "effect_size", "effect", "n_used", "note") if c in shown.columns]
    shown = shown[keep].copy()
    shown["caveat"] = "† clusters from these data"
    parts.append(_table(shown, headers={"p_value": "p †", "q_value": "q †", "significant": "q < 0.05 †",
                                        "effect_size": "effect size", "n_used": "rows used"}))
    return "".join(parts)


def _imputed_section(data: AppData, labels, imputed, max_rows: int) -> str:
    if not data.has_gaps:
        return ""
    parts = ["<h2>Imputed values</h2>"]
    if imputed is None:
        parts.append("<p>The imputed values were not computed for this report.</p>")
        return "".join(parts)
    filled, was_missing = imputed
    shown, marks = report.imputed_rows(data, labels, filled, was_missing)
    n = len(shown)
    parts.append('<p class="small">' + _e(report.IMPUTED_WORDS) + " Gaps are marginalised in the clustering, not "
                 "filled. <b>Filled cells are shaded, in italics and marked [imputed]</b>; they were not observed."
                 + (f" The first {max_rows:,} of {n:,} rows with gaps are listed." if n > max_rows else
                    f" {n:,} row{'s' if n != 1 else ''} had gaps.") + "</p>")
    parts.append(_table(shown.head(max_rows), marks=marks.head(max_rows), mark_text=" [imputed]"))
    return "".join(parts)


def _methods_section(data: AppData, model, params: dict, choice, stability, merged: bool, tests_done: bool,
                     versions: dict) -> str:
    used: list = []

    def cite(*keys) -> str:
        for key in keys:
            if key not in used:
                used.append(key)
        return "[" + ", ".join(str(used.index(k) + 1) for k in keys) + "]"

    likelihood = model.likelihood if isinstance(model.likelihood, dict) else {"all": model.likelihood}
    families = sorted(set(likelihood.values()))
    fam_words = "; ".join(f"{f}, {FAMILIES[f].help}" if f in FAMILIES else str(f) for f in families)
    auto = (choice is not None and isinstance(choice.N0, (int, float))
            and math.isclose(float(params.get("N0", math.nan)), float(choice.N0), rel_tol=1e-9))
    text = [
        f"The {data.n_rows:,} rows were clustered with MAP-DP, maximum a-posteriori inference in a Dirichlet process "
        f"mixture, which infers the number of clusters from the data instead of fixing it in advance "
        f"{cite('raykov2016plos', 'raykov2016ejs')}. Each feature was modelled by a likelihood suited to its type "
        f"({fam_words}), each with its conjugate prior set from the data (empirical Bayes; the prior in words is "
        "below). ",
        (f"The concentration parameter N0 = {_number(params.get('N0'))} was "
         + ("chosen automatically, with the prior's spread, by the exact joint evidence p(X, z) of each candidate "
            "setting. " if auto else "set by the user. ")
         if params.get("partition_prior", "dp") == "dp" else
         f"In place of the Dirichlet process, the prior on partitions was a {model.partition_prior_.describe()} "
         "(Miller & Harrison, JASA 2018), whose posterior number of clusters does not keep growing with the number "
         "of rows. "),
        "Missing values were left out of each row's likelihood (marginalised) rather than filled in; the imputed "
        f"values shown are for display only {cite('raykov2016plos')}. ",
        f"MAP-DP ran from {_number(params.get('restarts', 1))} restart(s) in random row orders (seed "
        f"{_number(params.get('seed', 0))}), keeping the partition with the lowest −ln p(X, z). ",
    ]
    rules = set(model.merges_["rule"]) if merged else set()
    if "overlap" in rules:
        text.append("Overlapping components were grouped into clusters by their directly estimated misclassification "
                    f"probabilities (DEMP) {cite('hennig2010')}. ")
    if "small cluster" in rules:
        text.append(f"Groups of fewer than {_number(model.min_cluster_size_)} rows were read as part of the large "
                    "cluster whose union with them had the best exact joint, unless their rows were far outliers "
                    f"(a truncation of small mixture components {cite('guha2021')}). ")
    text.append("How sure K is was read from the exact joint of the best partitions found with fewer and more "
                f"clusters, on the scale of Kass and Raftery {cite('kass1995')}. ")
    if stability is not None:
        text.append("Each cluster's stability is its mean Jaccard overlap with the closest cluster of refits on "
                    f"random subsamples of the rows {cite('hennig2007')}. ")
        if isinstance(stability, StabilitySummary) and stability.most_fragile and len(stability.tried):
            text.append("As most clusters were fragile, a coarser partition was looked for. " + RULE + " ")
    if tests_done:
        text.append("Features were compared between clusters with Welch's t or ANOVA, Mann-Whitney or Kruskal-Wallis "
                    f"and chi-square or Fisher tests, with Benjamini-Hochberg adjustment {cite('bh1995')}; because the "
                    "clusters were found in the same data, these p-values overstate significance and are descriptive "
                    f"only {cite('gao2022')}. ")
    text.append(f"Software: mapdp_core {versions.get('mapdp_core')} (MAP-DP Explorer), numpy {versions.get('numpy')}, "
                f"scipy {versions.get('scipy')}, pandas {versions.get('pandas')}, numba {versions.get('numba')}, "
                f"plotly {versions.get('plotly')}, streamlit {versions.get('streamlit')}, Python "
                f"{versions.get('python')}.")
    parts = ["<h2>Methods</h2>", f"<p>{_e(''.join(text))}</p>", "<h3>References</h3>",
             '<ol class="refs">' + "".join(f"<li>{_e(CITATIONS[k])}</li>" for k in used) + "</ol>",
             "<h3>Package versions</h3>",
             _table(pd.DataFrame({"package": list(versions), "version": list(versions.values())}))]
    try:
        priors = describe_priors(data.X, model.likelihood, getattr(model, "prior", None))
        parts += ["<h3>The prior in words</h3>", _table(priors)]
    except Exception:  # a description is a courtesy; the fit's own prior is what ran
        pass
    return "".join(parts)


# ----------------------------------------------------------------------------- the report

def _outcome_section(data: AppData, labels, comparison) -> str:
    """The outcome left out of the clustering, across the clusters: the one comparison here that
    is not circular (figure, table, test); "" when the data have no outcome."""
    if comparison is None and data.outcome is None:
        return ""
    if comparison is None:
        try:
            comparison = outcome_comparison(analysed_table(data), labels, data.outcome)
        except ValueError as exc:
            return f'<h2>The outcome across the clusters</h2><div class="warn">{_e(exc)}</div>'
    return "".join([f"<h2>The outcome across the clusters: {_e(comparison.name)}</h2>",
                    f"<p>{_e(OUTCOME_WHY)}</p>", f"<p>{_e(comparison.sentence(why=False))}</p>",
                    report_figures.outcome_svg(comparison), _table(outcome_table(comparison))])


def subtype_report_html(data: AppData, model, params: dict, *, choice=None, settings: dict | None = None, run=None,
                        profiles=None, tests=None, stability: pd.DataFrame | None = None, k_evidence=None,
                        imputed=None, outcome=None, title: str | None = None, created: _dt.datetime | None = None,
                        max_imputed_rows: int = 500) -> str:
    """The subtype analysis of ``data`` by the fitted MAP-DP ``model`` as one self-contained HTML document.

    Parameters
    ----------
    data : AppData
        The data as the app holds them (the table as loaded, the encoded features, notes).
    model : fitted :class:`mapdp_core.MAPDP`
    params : dict
        MAP-DP's app settings (:func:`ui.common.mapdp_params`, :func:`explorer.runner.mapdp_settings`):
        ``N0``, ``spread``, ``weight``, ``structure``, ``start``, ``merge``, ``restarts``, ``seed``.
    choice : AutoChoice, optional
        The automatic choice (:func:`explorer.runner.auto_settings`): says which settings are
        automatic and which the user's.
    settings : dict, optional
        The session's settings (as Explore saves them); embedded with ``params`` made explicit
        (:func:`report_settings`).
    run : explorer.runner.Run, optional
        The recorded run: the restarts' K and whether the time limit cut it short.
    profiles, tests, k_evidence, imputed
        What the page computed (:func:`~mapdp_core.evaluation.profiles.cluster_profiles`,
        :func:`~mapdp_core.evaluation.profiles.feature_tests`, ``model.k_evidence()``,
        ``model.impute()``); None computes them here (the tests only for two clusters or more).
    stability : StabilitySummary or DataFrame, optional
        :func:`~mapdp_core.evaluation.stability.stability_summary` (the headline counts the fragile
        clusters and, when most are, the report names the partition the data support stably) or
        :func:`~mapdp_core.evaluation.stability.cluster_stability`'s table (the count only); None:
        the report says it was not computed.
    outcome : OutcomeComparison, optional
        The outcome left out of the clustering, compared across the clusters
        (:func:`explorer.outcomes.outcome_comparison`); None computes it from ``data.outcome`` when
        the data have one.
    title, created
        The document's title (default from the data's name) and time (default now, UTC).
    max_imputed_rows : int
        The most rows with gaps listed with their imputed cells.

    Returns
    -------
    str
        The HTML document: no external resource, no executable script.
    """
    labels = np.asarray(model.labels_)
    if labels.shape != (data.n_rows,):
        raise ValueError(f"the model was fitted to {labels.size} rows, the data have {data.n_rows}; pass the model "
                         "fitted to these data.")
    K = int(model.n_clusters_)
    raw, _ = report.profile_inputs(data)  # a wide table: its principal components stand for its columns
    if profiles is None:
        profiles = cluster_profiles(raw, labels, data.likelihood)
    tests_problem = None
    if tests is None and K >= 2:
        try:
            tests = feature_tests(raw, labels, data.likelihood)
        except ValueError as exc:
            tests_problem = str(exc)
    if k_evidence is None:
        try:
            k_evidence = model.k_evidence(of="clusters")
        except (ValueError, AttributeError):
            k_evidence = None
    if imputed is None and data.has_gaps and hasattr(model, "impute"):
        try:
            imputed = model.impute()
        except ValueError:
            imputed = None
    merged = bool(len(getattr(model, "merges_", ())))
    summary_of_stability = stability if isinstance(stability, StabilitySummary) else None
    headline, stable_sentence = stability_words(stability)
    table_of_stability = stability.table if summary_of_stability is not None else stability
    created = created or _dt.datetime.now(_dt.timezone.utc)
    versions = _versions()
    likelihood = model.likelihood if isinstance(getattr(model, "likelihood", None), dict) else data.likelihood
    title = title or f"Subtype report: {data.name}"

    # 1. the data
    columns = _columns_table(data, likelihood)
    gaps = int(data.X.isna().to_numpy().sum())
    cells = data.X.size
    rows_with_gaps = int(data.X.isna().any(axis=1).sum())
    data_html = [
        "<h2>The data</h2>",
        f"<p><b>{_e(data.name)}</b>: {data.n_rows:,} rows, {data.table.shape[1]} columns, of which "
        f"{len(data.features)} were clustered. Every row is kept, in the file's order. Gaps: {gaps:,} of "
        f"{cells:,} feature cells ({100 * gaps / max(cells, 1):.1f} %) are missing, in {rows_with_gaps:,} rows.</p>",
    ]
    if data.description and not data.description.startswith(data.name):
        data_html.append(f'<p class="small">{_e(data.description)}</p>')
    data_html.append('<p class="small">Each column: what it was used for, its likelihood, what was done to it while '
                     "reading and preparing it, why (the app's suggestion and its reason, or the user's choice), and "
                     "how many cells are missing in the file and as clustered (zeros read as \u201cnot measured\u201d "
                     "count there).</p>")
    data_html.append(_table(columns))
    if data.notes:
        data_html.append("<h3>Notes from reading and preparing the table</h3><ul>"
                         + "".join(f"<li>{_e(n)}</li>" for n in data.notes) + "</ul>")

    # 2. the settings
    settings_html = ["<h2>The settings, and how they were chosen</h2>",
                     _table(_settings_rows(data, model, params, choice, run))]
    if run is not None and getattr(run, "stopped", False):
        settings_html.append('<div class="warn">The run was cut short (time limit or Stop): the partition reported is '
                             "the best reached, not a converged fit.</div>")

    # 5. profiles
    prof_html = ["<h2>Profile of each cluster</h2>",
                 '<p class="small">Per feature, the summary that suits its type: proportion for yes/no, mean score and '
                 "distribution for ordinal scores, category shares, mean ± sd for measurements, rate for counts "
                 "(as PLOS Tables 3-4). Observed values only; missing cells are counted in brackets.</p>",
                 _table(profiles.table, index=True)]
    try:
        heat = report.cluster_heatmap(data, labels)
    except (ValueError, KeyError):
        heat = pd.DataFrame()
    if len(heat) and heat.shape[1]:
        prof_html += ["<h3>How far each cluster lies from the overall mean</h3>",
                      '<p class="small">In overall standard deviations (observed values only; red above, blue below '
                      "the mean). Categorical columns with more than two levels are left out.</p>",
                      report_figures.heatmap_table(heat, _number)]

    # 9. reproduce
    reproduce = report_settings(params, settings)
    settings_json = sharing.settings_to_json(reproduce)
    embedded = settings_json.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    repro_html = ["<h2>To run it again</h2>",
                  '<p class="small">The settings of this analysis (settings only, never data). Saved as a .json file '
                  "and loaded on the Explore page (\u201cSave, load or share these settings\u201d) with the same table "
                  "and the same column roles and likelihoods"
                  + (", and the zeros of " + _e(", ".join(map(str, data.zeros_missing))) + " marked \u201cnot measured\u201d "
                     "on the Data page" if data.zeros_missing else "")
                  + ", they give the same clusters. They are also embedded in "
                  'this file as <code>&lt;script type="application/json" id="mapdp-settings"&gt;</code>.</p>',
                  f"<pre>{_e(settings_json)}</pre>",
                  f'<script type="application/json" id="mapdp-settings">{embedded}</script>']

    found = _e(headline) if headline else f"{K} cluster{'s' if K != 1 else ''}"
    summary = (f"MAP-DP found <b>{found}</b> among {data.n_rows:,} rows "
               f"({len(data.features)} features) with N0 = {_e(_number(params.get('N0')))}.")
    if stable_sentence:
        summary += f" {_e(stable_sentence)}"
    if k_evidence is not None and len(k_evidence):
        summary += " " + _e(report.k_words(model, k_evidence))
    if K < 2:
        summary += " With one cluster there are no subtypes to compare: the data and settings are reported below."
    body = [
        f"<h1>{_e(title)}</h1>",
        f'<p class="meta">Made {_e(created.strftime("%Y-%m-%d %H:%M %Z").strip())} by MAP-DP Explorer '
        f"(mapdp_core {_e(versions.get('mapdp_core'))}). The table stays on the computer that made this file: the app "
        "stores no data.</p>",
        f'<div class="summary">{summary}</div>',
        *data_html, *settings_html, _k_section(model, k_evidence),
        _sizes_section(profiles, table_of_stability, summary_of_stability), _outcome_section(data, labels, outcome),
        *prof_html,
        _tests_section(tests, K, tests_problem), _imputed_section(data, labels, imputed, max_imputed_rows),
        _methods_section(data, model, params, choice, stability, merged, tests is not None and K >= 2, versions),
        *repro_html,
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta name=\"generator\" content=\"MAP-DP Explorer\">"
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def failed_report_html(exc: Exception) -> str:
    """A short HTML page saying, escaped, why the report could not be made (what a download gives
    instead of an empty file)."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Subtype report not made</title>"
            f"<style>{_CSS}</style></head><body><h1>The subtype report could not be made</h1>"
            f'<div class="warn">{_e(type(exc).__name__)}: {_e(exc)}</div><p>The analysis on the Subtypes page is '
            "unaffected; please report this message.</p></body></html>\n")
