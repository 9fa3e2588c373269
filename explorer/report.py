"""The tables the pages show, in the terms a reader uses: rows with their clusters, the
clusters' feature heatmap, p-values and feature tests as text, decoded features, row ids, the
imputed rows, the CRP prior's expected number of clusters, and K-means on the PLOS scenarios.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from mapdp_core.core.validation import check_int

from explorer.sources import AppData

__all__ = ["assignments", "cluster_heatmap", "profile_inputs", "top_features", "P_FLOOR", "format_p", "tests_for_display", "decoded_features", "row_ids",
           "imputed_rows", "expected_clusters_curve", "PLOS_KMEANS_NMI", "scenarios_by_kmeans"]


def assignments(data: AppData, labels, column: str = "cluster") -> pd.DataFrame:
    """The table as loaded, every row in input order and every missing value kept, with the
    cluster of each row added as ``column`` (renamed with a suffix if the table has one)."""
    labels = np.asarray(labels)
    if labels.shape != (len(data.table),):
        raise ValueError(f"{labels.size} labels for {len(data.table)} rows; pass one label per row.")
    out = data.table.copy()
    name = column
    while name in out.columns:
        name += "_"
    out[name] = labels
    return out


def cluster_heatmap(data: AppData, labels) -> pd.DataFrame:
    """Features x clusters: how far each cluster's mean lies from the overall mean, in overall
    standard deviations (observed values only). Categorical columns with more than two levels
    have no meaningful mean and are left out."""
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
    return pd.DataFrame.from_dict(rows, orient="index", columns=[int(k) for k in ids])


def profile_inputs(data: AppData) -> tuple[pd.DataFrame, dict]:
    """The cells the profiles and tests describe, one column per clustered feature, and their
    likelihood: the table's own cells; for a wide table (``data.wide``) the columns kept as they
    are beside the principal components' scores that stand for the rest (:func:`top_features`
    ranks those columns themselves)."""
    if data.wide is None:
        return data.table[data.features], data.likelihood
    others = [c for c in data.features if c not in data.wide.names]
    return pd.concat([data.table[others], data.X[data.wide.names]], axis=1), data.likelihood


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
    sd = np.sqrt(np.nansum((V - mean) ** 2, axis=0) / np.maximum(count, 1))
    total = np.nansum((V - mean) ** 2, axis=0)
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
    table = pd.concat([table, values[rows].reset_index(drop=True)], axis=1)
    mask = pd.DataFrame(False, index=table.index, columns=table.columns)
    mask.loc[:, list(filled.columns)] = missing[rows]
    return table, mask


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
