"""The tables the pages show, in the terms a reader uses: rows with their clusters (the
uploaded cells as they were written, :func:`keep_uploaded_cells`), the
clusters' feature heatmap, p-values and feature tests as text, decoded features, row ids, the
imputed rows, the CRP prior's expected number of clusters, and K-means on the PLOS scenarios.
"""
from __future__ import annotations

import csv
import io
import re
import weakref

import numpy as np
import pandas as pd

from mapdp_core.core.validation import check_int
from mapdp_core.engine.k_evidence import k_sentence

from explorer.sources import AppData, analysed_table, zero_cells

__all__ = ["HEATMAP_FEATURES", "cell_text", "IMPUTED_WORDS", "zero_counts", "k_words", "cv_edge_words", "search_scale_words", "matching_columns", "keep_uploaded_cells", "uploaded_cells", "assignments", "search_facts", "grid_versus_search",
           "spread_of_default", "cv_in_chosen_spread", "cluster_heatmap", "profile_inputs", "top_features", "P_FLOOR", "format_p", "tests_for_display", "decoded_features", "row_ids",
           "imputed_rows", "expected_clusters_curve", "PLOS_KMEANS_NMI", "scenarios_by_kmeans"]


#: The uploaded text of the typed columns of each uploaded table, as long as that table lives
#: (keyed by the table object's id; dropped with it): memory only, never written anywhere.
_UPLOADED: dict = {}
#: Above this many cells the text is not kept (a wide table's cells, as Python strings, would
#: take gigabytes); the downloads then write the values as read.
MAX_KEPT_CELLS = 5_000_000
_SEP_LINE = re.compile(r"\s*sep=(.)\s*", flags=re.IGNORECASE)


def matching_columns(spec: pd.DataFrame, contains: str = "", **equal) -> pd.Series:
    """Which rows of a column table (``spec``: one row per column, its name in "column") a bulk
    edit reaches: names that contain ``contains`` (case-insensitive, as typed, no pattern
    syntax; blank: every name) and whose other fields equal ``equal`` (e.g. ``family="poisson"``;
    a value of None or "any" does not filter). A boolean mask aligned with ``spec``: with 20 000
    columns (issue 28) a person picks columns by what they have in common, not one by one."""
    mask = pd.Series(True, index=spec.index)
    text = str(contains or "").strip().casefold()
    if text:
        mask &= spec["column"].astype(str).str.casefold().str.contains(text, regex=False)
    for field, value in equal.items():
        if value is not None and value != "any":
            mask &= spec[field].astype(str) == str(value)
    return mask


def _text_rows(raw: bytes, how) -> list[list[str]] | None:
    """The file's rows of stripped cells, as the reader split them (``how``: its LoadReport):
    the ``sep=`` line obeyed, empty rows left out, rows padded to the common width and columns
    empty everywhere dropped. None where the file is not delimited text."""
    if getattr(how, "format", None) != "csv" or not isinstance(raw, (bytes, bytearray)):
        return None
    try:
        text = bytes(raw).decode(how.encoding or "utf-8").removeprefix("\ufeff")
    except (LookupError, UnicodeDecodeError):
        return None
    lines = re.split(r"\r\n|\r|\n", text)
    if lines and lines[-1] == "":
        lines.pop()
    if lines and _SEP_LINE.fullmatch(lines[0]):
        lines = lines[1:]
    try:
        rows = [[c.strip() for c in r] for r in csv.reader(io.StringIO("\n".join(lines)),
                                                           delimiter=how.delimiter or "\x1f")]
    except csv.Error:
        return None
    rows = [r for r in rows if any(r)]
    if len(rows) < 2:
        return None
    widths = [len(r) for r in rows]
    width = max(set(widths[1:]), key=widths[1:].count)
    if len(rows[0]) == width - 1:  # R's write.csv: no name for the row-name column
        rows[0] = [""] + rows[0]
    rows = [(r + [""] * (width - len(r)))[:width] for r in rows]
    keep = [j for j in range(width) if any(r[j] for r in rows)]
    return [[r[j] for j in keep] for r in rows]


def keep_uploaded_cells(table: pd.DataFrame, raw: bytes, how) -> bool:
    """Remember the cells of ``table``'s typed columns (numbers, dates) as the file ``raw`` wrote
    them ("1,452", "79%", "60", "2020-01-03"), so that :func:`assignments` gives the rows back as
    uploaded rather than as read (1452.0, 79, 60.0). ``how`` is :func:`read_table`'s report.

    Kept only where the file's rows line up with the table's one for one (same rows, same
    columns, same names); True when kept. Text columns are the table's own cells already."""
    typed = [j for j, t in enumerate(table.dtypes) if pd.api.types.is_numeric_dtype(t)
             or pd.api.types.is_datetime64_any_dtype(t) or pd.api.types.is_timedelta64_dtype(t)]
    if not typed or table.size > MAX_KEPT_CELLS:
        return False
    rows = _text_rows(raw, how)
    if rows is None or len(rows[0]) != table.shape[1]:
        return False
    body = rows[1:] if how.header else rows
    if len(body) != len(table):
        return False
    if how.header:
        names = [c if c else f"col_{j + 1}" for j, c in enumerate(rows[0])]
        if names != [str(c) for c in table.columns]:
            return False
    cells = {}
    for j in typed:
        column = np.array([r[j] if r[j] else None for r in body], dtype=object)
        # a cell read as missing must be blank, or a missing-value word, never a number
        if np.any((column == None) & table.iloc[:, j].notna().to_numpy()):  # noqa: E711
            return False
        cells[table.columns[j]] = column
    key = id(table)
    _UPLOADED[key] = cells
    weakref.finalize(table, _UPLOADED.pop, key, None)
    return True


def uploaded_cells(table: pd.DataFrame) -> dict:
    """``{column: the cells as uploaded}`` kept by :func:`keep_uploaded_cells` for ``table``
    (empty when none were kept: a built-in or simulated table, an Excel file)."""
    return _UPLOADED.get(id(table), {})


def zero_counts(table: pd.DataFrame) -> dict:
    """``{column: how many cells are exactly 0}`` for every number column (not yes/no) with a zero,
    in the table's order: the columns whose zeros a user may mark "not measured"."""
    numeric = [c for c in table.columns if pd.api.types.is_numeric_dtype(table[c])
               and not pd.api.types.is_bool_dtype(table[c])]
    if not numeric:
        return {}
    counts = (table[numeric] == 0).sum(axis=0)
    return {c: int(n) for c, n in counts.items() if n > 0}


def k_words(model, table: pd.DataFrame, head: bool = True) -> str:
    """"How sure is K?" in words, about the clusters shown (``table``:
    ``model.k_evidence(of="clusters")``): K counted in clusters, with MAP-DP's components named
    once as what they are; the best partitions with one cluster fewer and one more, in nats and
    odds. Where the fitted model grouped overlapping components (Hennig 2010), a split of a
    cluster can fit the exact joint better: that is said as what it is (the cluster is one
    subtype with inner structure that the model cannot tell apart), not as a failed fit."""
    K, C = int(model.n_clusters_), int(getattr(model, "n_components_", model.n_clusters_))
    first = f"K = {K} cluster{'s' if K != 1 else ''}" + (f" (grouped from MAP-DP's {C} components)" if C != K else "")
    grouped = C != K
    known = table.loc[table["fitted"] | (table["delta"] >= 0)] if grouped else table
    said = k_sentence(known)
    said = said[said.index(".") + 1:].strip() if said.startswith("K = ") else said
    text = (first + "." + (f" {said}" if said else "")) if head else said
    better = table.loc[table["delta"] < 0] if grouped else table.iloc[:0]
    if len(better):
        r = better.sort_values("delta").iloc[0]
        nats = -float(r["delta"])
        text += (f" With K = {int(r['K'])} ({r['how']}) the exact joint is higher by {nats:,.3g} nats: the clusters "
                 "group MAP-DP's components (overlapping ones, and small groups folded into a large cluster), which "
                 "the joint alone would keep apart; read that cluster as one subtype with inner structure rather "
                 "than two.")
    return text


def _free_name(name: str, taken) -> str:
    while name in taken:
        name += "_"
    return name


def assignments(data: AppData, labels, column: str = "cluster") -> pd.DataFrame:
    """The table as uploaded, every row in input order and every missing value kept, with the
    cluster of each row added as ``column`` (renamed with a suffix if the table has one).

    Cells of an uploaded file keep the text they had ("1,452", "79%", "60": see
    :func:`keep_uploaded_cells`); a column that the reader converted by a rule (thousands
    separators, percentages, units, dates: ``table.attrs["column_notes"]``) is followed by
    ``"<column> (as read)"``, the values that were clustered. A zero the user marked "not
    measured" (``data.zeros_missing``) is a blank cell, as it was to MAP-DP and the profiles."""
    labels = np.asarray(labels)
    if labels.shape != (len(data.table),):
        raise ValueError(f"{labels.size} labels for {len(data.table)} rows; pass one label per row.")
    cells = uploaded_cells(data.table)
    if not cells:  # built-in, simulated or Excel data: the values are the cells
        out = analysed_table(data).copy()
        out.attrs = {}
        out[_free_name(column, set(out.columns))] = labels
        return out
    zeros = zero_cells(data)
    notes = data.table.attrs.get("column_notes", {})
    parts = {}
    for c in data.table.columns:
        if c not in cells:
            parts[c] = data.table[c].mask(zeros[c]) if zeros[c].any() else data.table[c]
            continue
        parts[c] = pd.Series(cells[c], index=data.table.index, dtype=object).mask(zeros[c])
        if c in notes:
            parts[_free_name(f"{c} (as read)", set(data.table.columns) | set(parts))] = data.table[c].mask(zeros[c])
    out = pd.DataFrame(parts, index=data.table.index)
    out[_free_name(column, set(out.columns))] = labels
    return out


#: The most features the cluster heat map shows (issue 28: hundreds of rows cannot be read).
HEATMAP_FEATURES = 40


def cluster_heatmap(data: AppData, labels, most: int | None = HEATMAP_FEATURES) -> pd.DataFrame:
    """Features x clusters: how far each cluster's mean lies from the overall mean, in overall
    standard deviations (observed values only). Categorical columns with more than two levels
    have no meaningful mean and are left out. With more than ``most`` features, the ``most``
    whose cluster means lie farthest from the overall mean (largest absolute shift in any
    cluster) are kept, farthest first; otherwise every feature, in the table's order."""
    labels = np.asarray(labels)
    ids = np.unique(labels[labels >= 0])  # -1: a row not assigned to a cluster
    rows = {}
    for c in data.features:
        x = data.X[c].to_numpy(dtype=float)
        if data.family_of(c) == "categorical" and np.unique(x[~np.isnan(x)]).size > 2:
            continue
        mu, sd = np.nanmean(x), np.nanstd(x)
        sd = sd if sd > 0 else 1.0
        vals = []
        for k in ids:
            xk = x[labels == k]
            xk = xk[~np.isnan(xk)]
            vals.append((xk.mean() - mu) / sd if xk.size else np.nan)
        rows[c] = vals
    heat = pd.DataFrame.from_dict(rows, orient="index", columns=[int(k) for k in ids])
    if most is not None and len(heat) > check_int(most, "most", 1):
        farthest = heat.abs().max(axis=1).fillna(0.0).sort_values(ascending=False, kind="stable")
        heat = heat.loc[farthest.index[:most]]
    return heat


def profile_inputs(data: AppData) -> tuple[pd.DataFrame, dict]:
    """The cells the profiles and tests describe, one column per clustered feature, and their
    likelihood: the table's own cells; for a wide table (``data.wide``) the columns kept as they
    are beside the principal components' scores that stand for the rest (:func:`top_features`
    ranks those columns themselves). A zero the user marked "not measured" is a missing cell
    here, as it was to MAP-DP (:func:`explorer.sources.analysed_table`)."""
    table = analysed_table(data)
    if data.wide is None:
        return table[data.features], data.likelihood
    others = [c for c in data.features if c not in data.wide.names]
    return pd.concat([table[others], data.X[data.wide.names]], axis=1), data.likelihood


def top_features(data: AppData, labels, n: int = 25) -> pd.DataFrame:
    """The ``n`` columns a wide table's principal components summarise (``data.summarised``)
    whose values differ most between the clusters: the share of each column's variance that lies
    between the clusters (eta squared, the one-way ANOVA effect size; gaps left out), highest
    first, with each cluster's mean in the column's standard deviations from its overall mean.
    Empty when the table is not wide. Computed for every column at once (20 000 columns: a
    fraction of a second)."""
    n = check_int(n, "n", 1)
    if data.summarised is None:
        return pd.DataFrame(columns=["column", "eta squared"])
    labels = np.asarray(labels)
    ids = np.unique(labels[labels >= 0])
    V = data.summarised.to_numpy(dtype=float)
    seen = ~np.isnan(V)
    count = seen.sum(axis=0)
    mean = np.where(count > 0, np.nansum(V, axis=0) / np.maximum(count, 1), np.nan)
    total = np.nansum((V - mean) ** 2, axis=0)
    sd = np.sqrt(total / np.maximum(count, 1))
    between = np.zeros(V.shape[1])
    shifts = []
    for k in ids:
        rows = labels == k
        n_k = seen[rows].sum(axis=0)
        m_k = np.where(n_k > 0, np.nansum(V[rows], axis=0) / np.maximum(n_k, 1), np.nan)
        between += n_k * np.nan_to_num(m_k - mean) ** 2
        shifts.append((m_k - mean) / np.where(sd > 0, sd, 1.0))
    eta = np.divide(between, total, out=np.zeros_like(between), where=total > 0)
    order = np.argsort(-eta, kind="stable")[:n]
    out = pd.DataFrame({"column": [data.summarised.columns[j] for j in order], "eta squared": eta[order]})
    for k, shift in zip(ids, shifts):
        out[f"cluster {int(k)} (sd from mean)"] = shift[order]
    return out


#: The smallest p-value shown as a number; below it the test is past double precision (scipy returns 0).
P_FLOOR = 1e-300


def format_p(p) -> str:
    """A p- or q-value as a person reads it: 2 significant figures, scientific below 1e-3
    ("3.2e-05"), "< 1e-300" at the floor of double precision, "" when missing."""
    if p is None or not np.isfinite(p):
        return ""
    p = float(p)
    if p < P_FLOOR:
        return "< 1e-300"
    if p < 1e-3:
        return f"{p:.1e}"
    return f"{p:.2g}"


def _format_number(x) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{float(x):.3g}"


def tests_for_display(tests: pd.DataFrame) -> pd.DataFrame:
    """:func:`mapdp_core.evaluation.profiles.feature_tests` for reading: p and q formatted by :func:`format_p`,
    the statistic and effect size to 3 significant figures ("–" where a test has none, as Fisher's),
    and, where a feature could not be tested, its reason in place of a blank p-value."""
    out = tests.copy()
    untested = out["p_value"].isna()
    reason = out["note"].where(out["note"].astype(bool), "not tested")
    out["p_value"] = [f"not testable: {r}" if miss else format_p(p)
                      for p, miss, r in zip(tests["p_value"], untested, reason)]
    out["q_value"] = ["–" if miss else format_p(q) for q, miss in zip(tests["q_value"], untested)]
    out["significant"] = ["–" if miss else ("yes" if sig else "no") for sig, miss in zip(tests["significant"], untested)]
    for col in ("statistic", "effect_size"):
        out[col] = [_format_number(x) for x in tests[col]]
    out["test"] = out["test"].fillna("–")
    out["effect"] = out["effect"].fillna("–")
    out["note"] = out["note"].where(~untested, "")  # said once, in the p-value column
    return out


def decoded_features(data: AppData, X: pd.DataFrame) -> pd.DataFrame:
    """Feature values in the table's own terms: category codes back to their names, shifted
    scores and standardised measurements back to their original units (see
    :func:`mapdp_core.data.loading.prepare`); columns already holding names are left alone."""
    out = X.copy()
    for c in out.columns:
        enc = data.encodings.get(c, {})
        col = out[c]
        if not pd.api.types.is_numeric_dtype(col):
            continue
        if "codes" in enc:
            names = list(enc["codes"])
            out[c] = [None if not np.isfinite(v) else names[int(round(v))] if 0 <= round(v) < len(names) else v
                      for v in col.to_numpy(dtype=float)]
            continue
        x = col.to_numpy(dtype=float)
        if "center" in enc:
            x = x * enc["scale"] + enc["center"]
        if "step" in enc:  # a binomial scale stored as floats: level numbers back to values
            x = x * enc["step"]
        if "shift" in enc:
            x = x + enc["shift"]
        out[c] = x
    return out


def row_ids(data: AppData) -> tuple[str, pd.Series]:
    """How to name each row on screen: the identifier column if the data have one, else the
    1-based row number. Returns the column's name and the values, one per row in order."""
    if data.id_column is not None and data.id_column in data.table.columns:
        return str(data.id_column), data.table[data.id_column].reset_index(drop=True)
    return "row", pd.Series(np.arange(1, data.n_rows + 1))


#: How the imputed values are made, in words the Subtypes page and the report share (issue 42: the
#: text said "filled from the row's cluster" while values differed inside a cluster).
IMPUTED_WORDS = ("For display only (the clustering itself leaves gaps out). Each missing entry is filled from the "
                 "row's component of MAP-DP (a cluster may group several components): the component's predictive "
                 "mean for measurements and its most probable value otherwise (PLOS Appendix F). The predictive mean "
                 "draws a component with few observed values towards the whole table's mean (the prior), so rows of "
                 "one cluster can get different values, and a value can lie outside those observed in its cluster. "
                 "Filled values are rounded to one decimal more than the column's own values (at least three "
                 "significant digits).")


def imputed_rows(data: AppData, labels, filled: pd.DataFrame, was_missing: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows that had gaps, with the gaps filled (from :meth:`mapdp_core.MAPDP.impute`), for display.

    Returns
    -------
    table : DataFrame
        The row's id (see :func:`row_ids`), its cluster, ``filled`` (the names of the features
        filled in that row) and the features in the table's own terms (:func:`decoded_features`).
    mask : DataFrame of bool, same shape as ``table``
        True where a cell was filled.
    """
    labels = np.asarray(labels)
    missing = was_missing.to_numpy(dtype=bool)
    if labels.shape != (data.n_rows,) or missing.shape != (data.n_rows, len(filled.columns)):
        raise ValueError(f"need one label and one row of gaps per row of '{data.name}' ({data.n_rows} rows).")
    rows = missing.any(axis=1)
    id_name, ids = row_ids(data)
    values = decoded_features(data, filled.reset_index(drop=True))
    names = np.asarray(filled.columns, dtype=object)
    table = pd.DataFrame({id_name: ids.to_numpy()[rows], "cluster": labels[rows],
                          "filled": [", ".join(map(str, names[m])) for m in missing[rows]]})
    shown = values[rows].reset_index(drop=True)
    for j, c in enumerate(shown.columns):  # filled values to a sensible precision (issue 27: six decimals)
        if pd.api.types.is_numeric_dtype(shown[c]):
            observed = values[c].to_numpy(dtype=float)[~missing[:, j]]
            shown[c] = _rounded_for_display(shown[c].to_numpy(dtype=float), observed)
    table = pd.concat([table, shown], axis=1)
    mask = pd.DataFrame(False, index=table.index, columns=table.columns)
    mask.loc[:, list(filled.columns)] = missing[rows]
    return table, mask


def cell_text(v) -> str:
    """A rounded number as a table shows it, without the trailing zeros a display adds (pandas'
    Styler wrote every float with six decimals: "5.130000"); "" for a missing value."""
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return ""
    if isinstance(v, (int, np.integer)) or not isinstance(v, (float, np.floating)):
        return str(v)
    return f"{float(v):.6f}".rstrip("0").rstrip(".") if v == v else ""


def _decimals(x: np.ndarray, most: int = 6) -> int:
    """The fewest decimals (up to ``most``) that write every finite value of ``x`` as it is."""
    x = x[np.isfinite(x)]
    for d in range(most + 1):
        if np.allclose(np.round(x, d), x, rtol=1e-9, atol=1e-12):
            return d
    return most


def _rounded_for_display(x: np.ndarray, observed: np.ndarray, digits: int = 3) -> np.ndarray:
    """A column's values for display: to one decimal more than its observed values need (a filled
    mean of whole numbers reads 47.3), and at least ``digits`` significant digits, at most 6 decimals."""
    base = _decimals(observed) if np.isfinite(observed).any() else 0
    typical = np.nanmedian(np.abs(x[np.isfinite(x) & (x != 0)])) if np.any(np.isfinite(x) & (x != 0)) else 1.0
    sig = max(digits - 1 - int(np.floor(np.log10(typical))), 0)
    return np.round(x, min(max(base + 1, sig), 6))


def expected_clusters_curve(n0_values, n_max: int, points: int = 60) -> pd.DataFrame:
    """The CRP prior's expected number of clusters against the number of rows, for each N0:
    E[K | N] = sum_{i=1..N} N0 / (N0 + i - 1) (PLOS Appendix G), at about ``points`` values
    of N from 1 to ``n_max`` spaced on a log scale.

    Returns
    -------
    DataFrame
        ``N0``, ``N``, ``expected_K``.
    """
    n_max = check_int(n_max, "n_max", 1)
    n0_values = [float(v) for v in n0_values]
    if not n0_values or any(not np.isfinite(v) or v <= 0 for v in n0_values):
        raise ValueError(f"N0 values must be positive numbers, got {n0_values}.")
    grid = np.unique(np.round(np.logspace(0, np.log10(n_max), points)).astype(np.int64))
    i = np.arange(1, n_max + 1, dtype=float)
    frames = []
    for n0 in n0_values:
        cumulative = np.cumsum(n0 / (n0 + i - 1.0))
        frames.append(pd.DataFrame({"N0": n0, "N": grid, "expected_K": cumulative[grid - 1]}))
    return pd.concat(frames, ignore_index=True)


#: K-means' NMI on the six PLOS Section 5 scenarios as published (PLOS Table 1; given the true K,
#: best of restarts). benchmarks/reproduce_tables.py measures them again beside these values.
PLOS_KMEANS_NMI = {"5.1": 0.57, "5.2": 0.48, "5.3": 0.67, "5.4": 0.56, "5.5": 1.00, "5.6": 0.56}


def scenarios_by_kmeans(threshold: float = 0.9) -> dict:
    """The PLOS scenarios split by how K-means does on them (:data:`PLOS_KMEANS_NMI`):
    ``{"fails": [...], "succeeds": [...]}``, failing below NMI ``threshold``."""
    return {"fails": [s for s, v in PLOS_KMEANS_NMI.items() if v < threshold],
            "succeeds": [s for s, v in PLOS_KMEANS_NMI.items() if v >= threshold]}


# ----------------------------------------------------------------------------- Tune's sections side by side

def search_facts(choice, n_rows: int) -> dict:
    """What the automatic choice (:func:`explorer.runner.auto_settings`) searched, for the page:
    ``n0`` (the N0 values it tried, sorted), ``n0_text`` ("0.1, 0.3, 1 and 3"), ``n0_max``,
    ``rows`` and ``rows_text`` ("500 of the 4,000 rows" or "every row (300)")."""
    tried = sorted({float(v) for v in choice.table["N0"]}) if "N0" in choice.table else [float(choice.N0)]
    shown = [f"{v:g}" for v in tried]
    text = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    rows = int(choice.rows_searched) if choice.rows_searched else int(n_rows)
    rows_text = (f"a random {rows:,} of the {n_rows:,} rows" if rows < n_rows else f"every row ({n_rows:,})")
    return {"n0": tried, "n0_text": text, "n0_max": max(tried), "n0_min": min(tried), "rows": rows,
            "rows_text": rows_text}


def grid_versus_search(best_N0: float, best_K: int, choice, facts: dict) -> str:
    """Why Tune's N0 grid (section 1) and the automatic choice can disagree, in a sentence (empty
    when they agree): the grid may reach beyond the search's N0 values, fits every row from one
    cluster with random restarts, while the search fits a subsample from two starts."""
    if abs(float(best_N0) - float(choice.N0)) <= 1e-9 * max(1.0, abs(float(choice.N0))):
        return ""
    if best_N0 > facts["n0_max"] * (1 + 1e-9):
        where = (f"N0 = {best_N0:g} lies above the largest N0 the automatic choice tries ({facts['n0_max']:g}): "
                 "the joint often keeps falling as N0 grows, towards more and smaller clusters "
                 f"(K = {best_K} here), so the search stays in the papers' range and chose N0 = {choice.N0:g}.")
    elif best_N0 < facts["n0_min"] * (1 - 1e-9):
        where = (f"N0 = {best_N0:g} lies below the smallest N0 the automatic choice tries ({facts['n0_min']:g}), "
                 f"which chose N0 = {choice.N0:g}.")
    else:
        where = (f"The automatic choice picked N0 = {choice.N0:g} within the same range: it judged each N0 on "
                 f"{facts['rows_text']}, from other starts (one cluster and an over-segmented K-means start) and "
                 "by the best partition any candidate found, so its curve and this one can rank N0 differently.")
    return where + " Apply either value below or on Explore; the K evidence above says how sure K is."


def search_scale_words(choice) -> str:
    """Why the search's charts leave out its stage-4 check (a sentence; "" when there was none):
    stage 4 compares the best structures again on more rows, a joint on another scale."""
    t = choice.table
    if "stage" not in t or not (t["stage"] == 4).any():
        return ""
    checked = int(getattr(choice, "rows_checked", 0) or 0)
    rows = f"{checked:,} rows" if checked else "more rows"
    return (f"The best structures were then compared again on {rows} (stage 4, in the table of every candidate): "
            "their −ln p(X, z) sums over those rows, so it is on another scale and is not drawn beside the "
            "candidates; the chosen setting is ringed where the search judged it among them.")


def spread_of_default(knobs, choice) -> list:
    """Prior spreads given × the automatic choice (the app's one scale) as multiples of the
    empirical-Bayes default, what :func:`mapdp_core.cross_validate` and ``scaled_prior`` take."""
    return [float(f"{float(k) * float(choice.spread):.6g}") for k in knobs]


def cv_in_chosen_spread(cv, choice):
    """:func:`mapdp_core.cross_validate`'s result run on :func:`spread_of_default` values, with its
    ``scale`` column and ``best_scale`` back in the app's scale (× chosen)."""
    chosen = float(choice.spread)

    def back(v):
        return float(f"{float(v) / chosen:.6g}")

    summary = cv.summary.assign(scale=[back(v) for v in cv.summary["scale"]])
    folds = cv.folds.assign(scale=[back(v) for v in cv.folds["scale"]])
    return cv._replace(summary=summary, folds=folds, best_scale=back(cv.best_scale))


def cv_edge_words(cv) -> str:
    """What cross-validation's best setting (:func:`mapdp_core.cross_validate`, as shown) means when
    it lies at the edge of the values tried, in words ("" otherwise): the held-out likelihood may
    keep improving beyond it, and the settings within one standard error of the best are named
    (issue 42: N0 = 30 chosen, the largest tried, with 4.48 within one standard error, unsaid)."""
    s = cv.summary
    if not len(s) or "mean_heldout_loglik" not in s:
        return ""
    said = []
    for column, value, name in (("N0", cv.best_N0, "N0"), ("scale", cv.best_scale, "prior spread ×")):
        tried = sorted({float(v) for v in s[column]})
        if len(tried) < 2:
            continue
        if float(value) >= tried[-1] * (1 - 1e-9):
            said.append(f"{name} {float(value):g} is the largest value tried: the held-out likelihood may keep rising "
                        "beyond it, so try larger values before reading it as the best")
        elif float(value) <= tried[0] * (1 + 1e-9):
            said.append(f"{name} {float(value):g} is the smallest value tried: the held-out likelihood may keep rising "
                        "below it, so try smaller values before reading it as the best")
    if not said:
        return ""
    best = s.loc[s["mean_heldout_loglik"].idxmax()]
    text = "Cross-validation picked the edge of the grid: " + "; ".join(said) + "."
    if "se" in s and np.isfinite(float(best["se"])):
        close = s[(s["mean_heldout_loglik"] >= float(best["mean_heldout_loglik"]) - float(best["se"]))
                  & ~((s["N0"] == best["N0"]) & (s["scale"] == best["scale"]))]
        if len(close):
            close = close.sort_values("N0")
            text += (" Within one standard error of the best (the usual one-standard-error rule would take the "
                     "simplest of these): " + ", ".join(f"N0 = {float(r.N0):g} with spread × {float(r.scale):g}"
                                                       for r in close.itertuples()) + ".")
    return text
