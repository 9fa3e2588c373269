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
take the family's empirical-Bayes default, computed from the data. A per-column family's
hyperparameter may list one vector per column, of different lengths: the categorical
``alpha0=[[1, 1, 1], [1, 1]]`` for columns with 3 and 2 levels. User-given covariance and
scale matrices (``Sigma``, ``Sigma0``, ``B0``) must be well conditioned in the columns'
own units (condition number at most 1e12), and Gaussian columns must have squares that
float64 can hold (|x| <= 1e150, spread >= 1e-150): otherwise a message says what to rescale.
"""
from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .validation import (check_condition, check_magnitude, column_kind, duplicate_names, object_array_as_float,
                         reject_1d)
from .encoding import category_codes, codes_of
from mapdp_core.families import FAMILIES


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
        dup = duplicate_names(names)
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
            elif pd.api.types.is_numeric_dtype(s) or (s.dtype == object and (s.isna().all() or column_kind(s) is None)):
                # numbers (also stored as Python objects), or nothing at all: an empty column is
                # then refused by its family as having no observed values
                cols.append(pd.to_numeric(s.where(s.notna(), np.nan), errors="coerce").astype(float).to_numpy())
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
    except ValueError:  # ragged lists, cells holding lists
        raise ValueError("X must be a rectangular table of numbers (every row the same length, one number per "
                         "cell); got rows of different lengths or cells holding lists. Pass an array of shape "
                         "(n_samples, n_features) or a DataFrame.") from None
    if np.iscomplexobj(M):
        raise ValueError("Complex data not supported: MAP-DP needs real numbers.")
    if M.ndim == 1:
        reject_1d(M.shape)
    if M.ndim != 2:
        raise ValueError(f"X must be 2-D (rows x features), got {M.ndim} dimensions.")
    if M.dtype == object:  # numbers held as Python objects (None: missing) are numbers
        M = object_array_as_float(M)
    elif not (np.issubdtype(M.dtype, np.number) or M.dtype == bool):
        raise TypeError(
            f"X must hold numbers, got dtype {M.dtype}; pass a DataFrame to use text columns as categories."
        )
    return np.ascontiguousarray(M, dtype=float), [str(j) for j in range(M.shape[1])], {}


def _lookup(key, names, position: dict) -> int:
    """The position of the column ``key`` names (its name, or its position when no column has
    that name); ``position`` maps each name to its position (built once: a table may have tens
    of thousands of columns)."""
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and str(key) not in position:
        if 0 <= key < len(names):
            return int(key)
    if str(key) in position:
        return position[str(key)]
    shown = names if len(names) <= 20 else names[:20] + [f"... ({len(names)} in all)"]
    raise ValueError(f"likelihood names column {key!r}, which is not in the data (columns: {shown}).")


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
    position = {n: j for j, n in enumerate(names)}
    for key, fam in items:
        if isinstance(key, tuple) and not key:
            raise ValueError("likelihood has an empty tuple () as a key; a tuple key names the columns of one joint "
                             "block, e.g. {('x', 'y'): 'normal_wishart'}: list at least one column in it.")
        cols = ([_lookup(k, names, position) for k in key] if isinstance(key, tuple)
                else [_lookup(key, names, position)])
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


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_numeric_value(value) -> bool:
    """A number, or a (nested, rectangular) sequence or array of numbers."""
    if _is_number(value):
        return True
    if isinstance(value, (list, tuple, np.ndarray)):
        try:
            arr = np.asarray(value)
        except ValueError:  # ragged
            return False
        if arr.dtype.kind in "fiu":
            return True
        return arr.dtype == object and all(_is_number(v) for v in arr.reshape(-1))
    return False


def _ragged_per_column(value, n_columns: int) -> bool:
    """Whether ``value`` lists one vector per column with vectors of different lengths (the
    categorical ``alpha0=[[1, 1, 1], [1, 1]]`` for columns with 3 and 2 levels)."""
    if not isinstance(value, (list, tuple)) or len(value) != n_columns or n_columns < 2:
        return False
    if not all(isinstance(v, (list, tuple, np.ndarray)) and np.ndim(v) == 1 for v in value):
        return False
    return len({len(v) for v in value}) > 1


def _check_prior_values(user: dict, family: str, names) -> None:
    """Every hyperparameter a number or an array of numbers, named in the message, before
    the family converts it (where a string would fail in numpy's words)."""
    for key, value in user.items():
        per_column = _ragged_per_column(value, len(names)) and FAMILIES[family].kind == "column"
        parts = value if per_column else [value]
        vectors = isinstance(value, (list, tuple)) and len(value) > 1 and all(
            isinstance(v, (list, tuple, np.ndarray)) and np.ndim(v) == 1 and _is_numeric_value(v) for v in value)
        if vectors and not per_column and len({len(v) for v in value}) > 1:
            lengths = [len(v) for v in value]
            if FAMILIES[family].kind == "column":
                advice = ("give one vector per column of this likelihood entry (key the prior by the same column or "
                          "tuple of columns as the likelihood), or one vector shared by its columns")
            else:
                advice = (f"a joint block's hyperparameter is one number, {len(names)} numbers or a "
                          f"{len(names)}x{len(names)} matrix")
            raise ValueError(
                f"prior '{key}' of the {family} likelihood gives {len(value)} vectors of lengths {lengths}, but it "
                f"applies to {len(names)} column(s) {list(names)}: {advice}.")
        if not all(_is_numeric_value(v) for v in parts):
            raise TypeError(
                f"prior '{key}' of the {family} likelihood (column(s) {list(names)}) must be a number or an array of "
                f"numbers, got {value!r:.80} of type {type(value).__name__}.")


def _check_prior_conditioning(user: dict, family: str, sub: np.ndarray, sub_names) -> None:
    """Refuse a numerically singular covariance or scale matrix the user passes (Sigma,
    Sigma0, B0): with a 1e-300 : 1 variance ratio every row opens its own cluster.

    The condition number is taken after putting the matrix in the columns' own units
    (divided by the data's standard deviations for a covariance, multiplied for the Wishart
    scale, a precision): columns measured in very different units then do not count as
    ill-conditioned, while a prior variance far out of proportion to its column does."""
    D = sub.shape[1]
    if D < 2:
        return
    record = FAMILIES[family]
    sd = None
    for key, value in user.items():
        try:
            A = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            continue
        if A.shape != (D, D):
            continue  # the family names a wrong shape
        if sd is None:  # the columns' spread, once per block (a pass over every row)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # columns with no observed value get unit scale
                sd = np.nanstd(sub, axis=0) if np.isnan(sub).any() else np.std(sub, axis=0)
            sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
        power = record.spread_power if key == record.spread_key else 1
        check_condition(A * np.outer(sd, sd) ** (-power),
                        f"prior '{key}' of the {family} likelihood (columns {list(sub_names)}), in the columns' own "
                        "units,")


def _merge_columns(resolved: list[dict]) -> dict:
    """One prior from the priors of single columns: per-column lists are joined, vectors
    concatenated, shared scalars kept."""
    out = {}
    for key in resolved[0]:
        values = [r[key] for r in resolved]
        if isinstance(values[0], list):
            out[key] = [v for part in values for v in part]
        elif np.ndim(values[0]) >= 1:
            out[key] = np.concatenate([np.asarray(v) for v in values])
        elif all(v == values[0] for v in values):
            out[key] = values[0]
        else:
            out[key] = np.array(values)
    return out


def _resolve_prior(module, user: dict, sub: np.ndarray, sub_names, family: str) -> dict:
    """The family's resolved prior; a per-column family given one vector per column with
    different lengths (ragged, which numpy cannot hold as one array) is resolved column by
    column, which is exact because such a family treats its columns independently."""
    D = sub.shape[1]
    ragged = [k for k, v in user.items() if _ragged_per_column(v, D)]
    if not ragged or FAMILIES[family].kind != "column":
        return module.resolve_prior(user, sub, sub_names, family)
    parts = []
    for j in range(D):
        one = {}
        for key, value in user.items():
            if key in ragged:
                one[key] = [value[j]]
            elif isinstance(value, (list, tuple, np.ndarray)) and np.ndim(value) >= 1 and len(value) == D:
                one[key] = [value[j]]
            else:
                one[key] = value
        parts.append(module.resolve_prior(one, sub[:, [j]], [sub_names[j]], family))
    return _merge_columns(parts)


def _describe_non_numeric(X, names) -> str:
    """What each non-numeric column holds (dates, durations, text ...) and what to do."""
    frame = X.to_frame() if isinstance(X, pd.Series) else X
    parts = []
    for name in names:
        kind = None
        if isinstance(frame, pd.DataFrame):
            col = frame.columns[[str(c) for c in frame.columns].index(name)]
            kind = column_kind(frame[col])
        kind = kind or ("text", "")
        parts.append(f"column '{name}' holds {kind[0]}" + (f": {kind[1]}" if kind[0] != "text" else ""))
    return "; ".join(parts)


def check_table(X) -> None:
    """Refuse a table with no rows or no columns, in scikit-learn's words (what
    ``check_array`` says) followed by ours, or a DataFrame with repeated column names;
    input without a 2-D shape is left to :func:`to_matrix`."""
    if isinstance(X, pd.DataFrame):
        names = [str(c) for c in X.columns]
        dup = duplicate_names(names)
        if dup:
            raise ValueError(f"duplicate column names {dup}; rename the columns so each is unique.")
    shape = getattr(X, "shape", None)
    if shape is None or len(shape) != 2:
        return
    N, D = shape
    if N == 0 or D == 0:
        what = f"0 sample(s) (shape=({N}, {D}))" if N == 0 else f"0 feature(s) (shape=({N}, {D}))"
        raise ValueError(f"Found array with {what} while a minimum of 1 is required. X is empty ({N} rows x {D} "
                         "columns); MAP-DP needs at least one row and one column.")


def parse(X, likelihood, prior=None) -> ParsedData:
    """Validate the data against each column's family and resolve every prior."""
    M, names, categories = to_matrix(X)
    check_table(M)
    groups = _groups(likelihood, names)
    if isinstance(prior, dict) and not isinstance(likelihood, str):
        known = {g[2] for g in groups} | {g[0] for g in groups} | set(names)
        stray = [k for k in prior if k not in known]
        if stray:
            raise ValueError(f"prior has key(s) {stray} that match no likelihood entry; key the prior like the "
                             f"likelihood (by column, by the same tuple of columns, or by family name).")
    blocks = []
    for family in ("normal_wishart", "normal_wishart_tied"):
        if sum(g[0] == family for g in groups) > 1:
            raise ValueError(f"only one {family} block is supported; put those columns in one block.")
    for fam, cols, key in groups:
        kind, module = FAMILIES[fam]
        sub = M[:, cols]
        sub_names = [names[c] for c in cols]
        text = [n for n in sub_names if n in categories]
        if text and fam != "categorical":
            raise TypeError(f"column(s) {text} hold text or other values that are not numbers "
                            f"({_describe_non_numeric(X, text)}); the {fam} likelihood needs numbers, and text "
                            "columns need the 'categorical' likelihood.")
        module.check_data(sub, sub_names, fam)
        if FAMILIES[fam].gaussian:
            check_magnitude(sub, sub_names, f"the {fam} likelihood")
        user = _prior_for(prior, likelihood, key, fam)
        _check_prior_values(user, fam, sub_names)
        _check_prior_conditioning(user, fam, sub, sub_names)
        resolved = _resolve_prior(module, user, sub, sub_names, fam)
        blocks.append(Block(fam, cols, sub_names, resolved, {n: categories[n] for n in text}))
    return ParsedData(M, names, blocks, categories)


def shares_statistics(parsed: ParsedData) -> bool:
    """Whether a block of ``parsed`` has clusters that share statistics (the tied covariance,
    ``Family.shared_statistics``): then p(X | z) is not a product over clusters."""
    return any(FAMILIES[b.family].shared_statistics for b in parsed.blocks)


def refuse_shared_statistics(parsed: ParsedData, algorithm: str, why: str) -> None:
    """A plain message when ``algorithm`` cannot run a family whose clusters share statistics
    (``why``: what it needs that such a family does not give)."""
    for b in parsed.blocks:
        if FAMILIES[b.family].shared_statistics:
            raise ValueError(
                f"{algorithm} {why}, but the column(s) {b.names} are modelled with '{b.family}' (one covariance "
                "shared by all clusters, whose clusters share statistics). Give them 'normal_wishart' (a covariance "
                "per cluster) or 'normal_gamma' (each column alone), or fit with MAPDP.")


def parse_rows(X, fitted: ParsedData, *, unseen: list | None = None) -> np.ndarray:
    """New rows as the numeric matrix of a fitted model: same columns, same category codes,
    each column checked against its family and fitted hyperparameters. NaN = missing.
    ``unseen``: see :func:`mapdp_core.core.encoding.codes_of` (unseen categories become missing)."""
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
                M[:, j] = codes_of(s.where(s.notna(), None), fitted.categories[name], name, unseen=unseen)
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
