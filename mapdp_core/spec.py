"""From user input to validated blocks: one likelihood family per column, or one
multivariate family over a group of columns (the first step of the flow in DESIGN.md).

``likelihood`` may be
* a family name: a multivariate family ("normal_wishart", "spherical_gaussian",
  "gaussian_known_cov") models all columns jointly, a per-column family models each
  column independently;
* a sequence with one family name per column;
* a mapping from a column (name for a DataFrame, index for an array) or a tuple of
  columns (one joint block) to a family name. Columns given the same multivariate
  family under separate single-column keys form one block.

``prior`` holds hyperparameters: for a single family name, one dict of that family's
keys; for a mapping, a dict keyed like ``likelihood`` (or by family name). Missing keys
take the family's empirical-Bayes default, computed from the data.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .encoding import category_codes, codes_of
from .families import FAMILIES


@dataclass
class Block:
    family: str
    columns: list          # positions in the numeric matrix
    names: list            # column names, for messages and summaries
    prior: dict            # resolved hyperparameters
    categories: dict = field(default_factory=dict)  # column name -> category labels (text columns)


@dataclass
class ParsedData:
    X: np.ndarray          # (N, D) float64, NaN = missing
    names: list
    blocks: list
    categories: dict       # column name -> labels of the codes 0..L-1


def _family_name(value, where: str) -> str:
    if not isinstance(value, str) or value not in FAMILIES:
        raise ValueError(f"unknown likelihood {value!r} for {where}; choose one of {sorted(FAMILIES)}.")
    return value


def to_matrix(X) -> tuple[np.ndarray, list, dict]:
    """Numeric (N, D) float matrix, column names, and text-category labels."""
    if isinstance(X, pd.Series):
        X = X.to_frame()
    if isinstance(X, pd.DataFrame):
        names = [str(c) for c in X.columns]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate column names {dup}; rename the columns so each is unique.")
        if X.shape[1] and all(isinstance(t, np.dtype) and t.kind in "fiu" for t in X.dtypes):
            # plain numpy numbers (the usual case, and every encoded table): one conversion
            return np.ascontiguousarray(X.to_numpy(dtype=float)), names, {}
        cols, categories = [], {}
        for name, col in zip(names, X.columns):
            s = X[col]
            if pd.api.types.is_bool_dtype(s):
                cols.append(s.astype(float).to_numpy())
            elif pd.api.types.is_numeric_dtype(s):
                cols.append(pd.to_numeric(s, errors="coerce").astype(float).to_numpy())
            else:
                codes, categories[name] = category_codes(s)
                cols.append(codes)
        M = np.column_stack(cols) if cols else np.zeros((len(X), 0))
        return np.ascontiguousarray(M, dtype=float), names, categories
    import scipy.sparse

    if scipy.sparse.issparse(X):
        raise TypeError("sparse input is not accepted; pass a dense array (X.toarray()).")
    try:
        M = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"X must be a 2-D array or a DataFrame: {exc}") from None
    if np.iscomplexobj(M):
        raise ValueError("Complex data not supported: MAP-DP needs real numbers.")
    if M.dtype == object or not (np.issubdtype(M.dtype, np.number) or M.dtype == bool):
        raise TypeError(
            f"X must hold numbers, got dtype {M.dtype}; pass a DataFrame to use text columns as categories."
        )
    if M.ndim == 1:
        M = M[:, None]
    if M.ndim != 2:
        raise ValueError(f"X must be 2-D (rows x features), got {M.ndim} dimensions.")
    return np.ascontiguousarray(M, dtype=float), [str(j) for j in range(M.shape[1])], {}


def _lookup(key, names) -> int:
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and str(key) not in names:
        if 0 <= key < len(names):
            return int(key)
    if str(key) in names:
        return names.index(str(key))
    raise ValueError(f"likelihood names column {key!r}, which is not in the data (columns: {names}).")


def _groups(likelihood, names) -> list[tuple[str, list, Any]]:
    """(family, column positions, prior key) groups; every column exactly once."""
    D = len(names)
    if isinstance(likelihood, str):
        return [(_family_name(likelihood, "the data"), list(range(D)), None)]
    if isinstance(likelihood, dict):
        items = list(likelihood.items())
    elif isinstance(likelihood, (list, tuple)):
        if len(likelihood) != D:
            raise ValueError(f"likelihood lists {len(likelihood)} families but the data has {D} columns.")
        items = list(zip(range(D), likelihood))
    else:
        raise TypeError("likelihood must be a family name, a list with one per column, or a dict.")
    groups, seen, merged = [], {}, {}
    for key, fam in items:
        cols = [_lookup(k, names) for k in key] if isinstance(key, tuple) else [_lookup(key, names)]
        where = f"column(s) {[names[c] for c in cols]}"
        fam = _family_name(fam, where)
        for c in cols:
            if c in seen:
                raise ValueError(f"column '{names[c]}' is given a likelihood twice.")
            seen[c] = fam
        if FAMILIES[fam][0] == "block" and not isinstance(key, tuple):
            if fam in merged:
                merged[fam][1].extend(cols)
                continue
            merged[fam] = (fam, cols, fam)
            groups.append(merged[fam])
        else:
            groups.append((fam, cols, key))
    missing = [names[c] for c in range(D) if c not in seen]
    if missing:
        raise ValueError(
            f"column(s) {missing} have no likelihood; give each column a family or drop it from X."
        )
    return groups


def _prior_for(prior, likelihood, key, family) -> dict:
    if prior is None:
        return {}
    if not isinstance(prior, dict):
        raise TypeError("prior must be a dict of hyperparameters (or None for the defaults).")
    if isinstance(likelihood, str):
        return dict(prior)
    for k in (key, family):
        if k is not None and k in prior:
            value = prior[k]
            if not isinstance(value, dict):
                raise TypeError(f"prior[{k!r}] must be a dict of hyperparameters.")
            return dict(value)
    return {}


def parse(X, likelihood, prior=None) -> ParsedData:
    """Validate the data against each column's family and resolve every prior."""
    M, names, categories = to_matrix(X)
    N, D = M.shape
    if N == 0 or D == 0:
        raise ValueError(f"X is empty ({N} rows x {D} columns); MAP-DP needs at least one row and one column.")
    groups = _groups(likelihood, names)
    if isinstance(prior, dict) and not isinstance(likelihood, str):
        known = {g[2] for g in groups} | {g[0] for g in groups} | set(names)
        stray = [k for k in prior if k not in known and not isinstance(k, tuple)]
        if stray:
            raise ValueError(f"prior has key(s) {stray} that match no likelihood entry.")
    blocks = []
    nw = [g for g in groups if g[0] == "normal_wishart"]
    if len(nw) > 1:
        raise ValueError("only one normal_wishart block is supported; put those columns in one block.")
    for fam, cols, key in groups:
        kind, module = FAMILIES[fam]
        sub = M[:, cols]
        sub_names = [names[c] for c in cols]
        text = [n for n in sub_names if n in categories]
        if text and fam != "categorical":
            raise TypeError(f"column(s) {text} hold text; text columns need the 'categorical' likelihood.")
        module.check_data(sub, sub_names, fam)
        resolved = module.resolve_prior(_prior_for(prior, likelihood, key, fam), sub, sub_names, fam)
        blocks.append(Block(fam, cols, sub_names, resolved, {n: categories[n] for n in text}))
    return ParsedData(M, names, blocks, categories)


def parse_rows(X, fitted: ParsedData) -> np.ndarray:
    """New rows as the numeric matrix of a fitted model: same columns, same category codes,
    each column checked against its family and fitted hyperparameters. NaN = missing."""
    names = fitted.names
    if isinstance(X, pd.Series):
        X = X.to_frame().T if X.index.astype(str).isin(names).all() else X.to_frame()
    if isinstance(X, pd.DataFrame):
        cols = [str(c) for c in X.columns]
        missing = [n for n in names if n not in cols]
        if missing:
            raise ValueError(f"new rows lack the column(s) {missing} the model was fitted on.")
        M = np.empty((len(X), len(names)))
        for j, name in enumerate(names):
            s = X[X.columns[cols.index(name)]]
            if name in fitted.categories:
                M[:, j] = codes_of(s.where(s.notna(), None), fitted.categories[name], name)
            elif pd.api.types.is_bool_dtype(s) or pd.api.types.is_numeric_dtype(s):
                M[:, j] = pd.to_numeric(s, errors="coerce").astype(float).to_numpy()
            else:
                raise TypeError(f"column '{name}' holds text but was numeric when the model was fitted.")
    else:
        M, _, _ = to_matrix(X)
        if M.shape[1] != len(names):
            raise ValueError(f"new rows have {M.shape[1]} columns; the model was fitted on {len(names)}.")
    if M.shape[0] == 0:
        raise ValueError("no rows to predict.")
    for block in fitted.blocks:
        module = FAMILIES[block.family][1]
        sub = M[:, block.columns]
        if block.family == "categorical":
            module.check_data(sub, block.names, block.family, [a.size for a in block.prior["alpha0"]])
        elif block.family == "binomial":
            module.check_data(sub, block.names, block.family, block.prior["n"])
        else:
            module.check_data(sub, block.names, block.family)
    return np.ascontiguousarray(M)
