"""Step 3: encode the feature columns for their families (rules in :mod:`mapdp_core.core.encoding`),
standardise the Gaussian ones on request, and split off labels and identifiers."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from mapdp_core.core.encoding import as_numeric as _as_numeric
from mapdp_core.core.encoding import encode_column
from mapdp_core.core.encoding import examples as _examples
from mapdp_core.families import FAMILIES, GAUSSIAN_FAMILIES
from mapdp_core.core.spec import parse
from .cells import parse_dates, parse_numbers
from .errors import DataLoadError, LabelError, TooFewRowsError, _warn
from .grid import MIN_ROWS
from .suggest import MAX_CATEGORIES, ROLES, _check_frame, _object_kind, suggest_roles_and_families

__all__ = ["Prepared", "missing_summary", "prepare"]


class Prepared(tuple):
    """``(X, likelihood, labels, ids)`` returned by :func:`prepare`; unpacks as a 4-tuple.

    Attributes
    ----------
    X : DataFrame
        Feature columns only, encoded (float64, NaN = missing), all rows in order.
    likelihood : dict
        ``{column: family}`` for ``MAPDP(likelihood=...)``.
    labels : Series or None
        Ground-truth labels as in the file.
    ids : Series or None
        Row identifiers as in the file.
    encodings : dict
        Per feature column, what was done: ``{"codes": [...]}`` (value of each code
        0, 1, ...), ``{"shift": m}`` (m was subtracted), ``{"step": h}`` (a scale stored as
        floats, divided by its step h), ``{"center": c, "scale": s}`` (standardised: x = (raw - c) / s).
    notes : list of str
        Warnings raised while preparing.
    """

    def __new__(cls, X, likelihood, labels, ids, encodings=None, notes=None):
        self = super().__new__(cls, (X, likelihood, labels, ids))
        self.encodings = encodings or {}
        self.notes = notes or []
        return self

    X = property(lambda self: self[0])
    likelihood = property(lambda self: self[1])
    labels = property(lambda self: self[2])
    ids = property(lambda self: self[3])


def _resolve(choices, suggestion: pd.DataFrame, key: str, df: pd.DataFrame) -> dict:
    base = dict(zip(suggestion["column"], suggestion[key]))
    if choices is None:
        return base
    if isinstance(choices, pd.DataFrame):
        if "column" not in choices or key not in choices:
            raise DataLoadError(f"the {key} table needs the columns 'column' and '{key}' (as from "
                                "suggest_roles_and_families).")
        choices = dict(zip(choices["column"], choices[key]))
    elif isinstance(choices, pd.Series):
        choices = choices.to_dict()
    elif not isinstance(choices, dict):
        raise DataLoadError(f"{key}s must be a dict {{column: {key}}} or the table from suggest_roles_and_families.")
    unknown = [c for c in choices if c not in base]
    if unknown:
        raise DataLoadError(f"{key}s name column(s) {unknown} that are not in the data (columns: {list(df.columns)}).")
    base.update(choices)
    return base


def _standardize(x: np.ndarray, how: str) -> tuple[np.ndarray, dict]:
    obs = x[~np.isnan(x)]
    if obs.size == 0:
        return x, {}
    if how == "zscore":
        center, scale = float(obs.mean()), float(obs.std())
    else:
        center = float(np.median(obs))
        q75, q25 = np.percentile(obs, [75, 25])
        scale = float(q75 - q25) / 1.349
        if scale <= 0:
            scale = 1.4826 * float(np.median(np.abs(obs - center)))
        if scale <= 0:
            scale = float(obs.std())
    if not scale > 0:
        scale = 1.0
    return (x - center) / scale, {"center": center, "scale": scale}


_EPOCH = pd.Timestamp("1970-01-01")
_NUMERIC_FAMILIES = frozenset(FAMILIES) - {"bernoulli", "categorical"}


def _zero_columns(zeros_as_missing, suggestion: pd.DataFrame, df: pd.DataFrame) -> list:
    if zeros_as_missing is None or zeros_as_missing is False:
        return []
    if isinstance(zeros_as_missing, str):
        if zeros_as_missing != "suggested":
            zeros_as_missing = [zeros_as_missing]
        else:
            return [c for c, n in zip(suggestion["column"], suggestion["suspect_zeros"]) if n]
    try:
        cols = list(zeros_as_missing)
    except TypeError:
        raise DataLoadError("zeros_as_missing must be a list of column names, 'suggested' (the columns whose zeros "
                            f"look like 'not measured'), or None; got {zeros_as_missing!r}.") from None
    unknown = [c for c in cols if c not in df.columns]
    if unknown:
        raise DataLoadError(f"zeros_as_missing names column(s) {unknown} that are not in the data "
                            f"(columns: {list(df.columns)}).")
    return cols


def _as_days(s: pd.Series, name, family: str, notes: list) -> pd.Series:
    """Dates as days since 1970-01-01 and durations as days, for a numeric family; numbers written
    with units, percentages or thousands separators as numbers. Other columns are returned as they are."""
    kind = _object_kind(s)
    if kind is not None and family in _NUMERIC_FAMILIES:
        if kind == "date":
            days = (pd.to_datetime(s) - _EPOCH) / pd.Timedelta(days=1)
            what = "days since 1970-01-01"
        else:
            days = pd.to_timedelta(s) / pd.Timedelta(days=1)
            what = "its length in days"
        _warn(f"column '{name}' holds {'dates' if kind == 'date' else 'durations'}; it is used as {what}.", notes)
        return days.astype(float)
    if family in _NUMERIC_FAMILIES and _as_numeric(s) is None and s.notna().any():
        cells = s.dropna().astype(str).str.strip()
        parsed = parse_numbers(cells.tolist())
        if parsed is not None and not parsed.bad:
            _warn(f"column '{name}' holds numbers written as text; {parsed.note or 'read as numbers'}.", notes)
            out = pd.Series(np.nan, index=s.index, dtype=float)
            out[cells.index] = parsed.values
            return out
        dates = parse_dates(cells.tolist())
        if dates is not None:
            _warn(f"column '{name}' holds dates written as text ({dates.note}); it is used as days since "
                  "1970-01-01.", notes)
            out = pd.Series(np.nan, index=s.index, dtype=float)
            out[cells.index] = ((dates.values - _EPOCH) / pd.Timedelta(days=1)).to_numpy(dtype=float)
            return out
    return s


def _plain_numbers(df: pd.DataFrame, feats: list, family: dict, zero_cols: set) -> dict:
    """The feature columns that :func:`encode_column` would return as they are (numpy numbers
    under a family that takes numbers as given: not bernoulli, categorical or binomial, whose
    values are recoded; not a column whose zeros become gaps), as float arrays with infinite
    values as NaN, taken from the table in one conversion: a wide table's 20 000 columns would
    otherwise cost a few pandas calls each. An infinite value is left to the careful path,
    which says so in a note."""
    recoded = {"bernoulli", "categorical", "binomial"}
    wanted = set(feats)
    cols = [c for c, t in zip(df.columns, df.dtypes)
            if c in wanted and family.get(c) in FAMILIES and family[c] not in recoded and c not in zero_cols
            and isinstance(t, np.dtype) and t.kind in "fiu"]
    if not cols:
        return {}
    M = df[cols].to_numpy(dtype=float)
    ok = ~np.isinf(M).any(axis=0)
    return {c: M[:, k].copy() for k, c in enumerate(cols) if ok[k]}


def prepare(df: pd.DataFrame, roles=None, families=None, standardize: str = "none", *,
            max_categories: int = MAX_CATEGORIES, zeros_as_missing=None) -> Prepared:
    """Encode the feature columns for MAP-DP and split off labels and identifiers.

    Parameters
    ----------
    df : DataFrame
        The table (from :func:`read_table`).
    roles : dict, Series or DataFrame, optional
        ``{column: role}`` with roles from :data:`ROLES`, or the (edited) table of
        :func:`suggest_roles_and_families`. Columns not named keep the suggested role.
    families : dict, Series or DataFrame, optional
        ``{column: family}`` for the features (any name of ``mapdp_core.FAMILIES``), or
        the (edited) suggestion table. Columns not named keep the suggested family.
    standardize : {"none", "zscore", "robust"}
        Applied to the Gaussian-family columns only: ``zscore`` subtracts the mean and
        divides by the standard deviation; ``robust`` subtracts the median and divides
        by IQR / 1.349 (the standard deviation for Gaussian data; MAD or sd if IQR is 0).
        Missing values are ignored in the statistics and stay missing.
    max_categories : int
        A categorical column with more categories than this is kept, with a warning.
    zeros_as_missing : list of column names, "suggested" or None
        Columns in which a value of exactly 0 means "not measured" (pima's glucose, blood
        pressure, BMI): those zeros become missing values (MAP-DP leaves them out of the row's
        likelihood), and a note says how many. ``"suggested"`` takes the columns whose zeros
        :func:`suggest_roles_and_families` flags (``suspect_zeros``). Nothing is changed
        unless asked: a zero can be a real value.

    Returns
    -------
    Prepared
        Unpacks as ``X, likelihood, labels, ids``: ``MAPDP(likelihood=likelihood).fit(X)``
        runs as is. Every row is kept, in order (missing values stay NaN; MAP-DP
        marginalises them). Bernoulli columns are 0/1 (a "yes"-like value, or else the
        second in sorted order, is 1), categorical columns are codes 0..L-1 in sorted
        order, binomial columns with negative values are shifted to start at 0, and
        infinite values become missing. A date column given a numeric family is used as
        days since 1970-01-01, a duration as days. ``.encodings`` records each mapping.

    Raises
    ------
    DataLoadError
        Fewer than :data:`MIN_ROWS` rows, no feature column, an unknown role or family, text in a
        numeric family, two label or identifier columns, a label with one value
        (:class:`LabelError`), or data the chosen family refuses (the engine's message).
    """
    _check_frame(df)
    if len(df) < MIN_ROWS:
        raise TooFewRowsError(f"the table has {len(df)} row(s); clustering needs at least {MIN_ROWS} rows, one per "
                              "patient or sample.")
    if standardize not in ("none", "zscore", "robust", None):
        raise DataLoadError(f"standardize must be 'none', 'zscore' or 'robust', got {standardize!r}.")
    suggestion = suggest_roles_and_families(df, max_categories=max_categories)
    role = _resolve(roles, suggestion, "role", df)
    family = _resolve(families, suggestion, "family", df)
    bad = {c: r for c, r in role.items() if r not in ROLES}
    if bad:
        raise DataLoadError(f"unknown role(s) {bad}; each role must be one of {list(ROLES)}.")
    notes: list[str] = []
    labels = ids = None
    for r in ("label", "identifier"):
        cols = [c for c in df.columns if role[c] == r]
        if len(cols) > 1:
            raise DataLoadError(f"{len(cols)} columns {cols} have the role '{r}'; choose one and set the others to "
                                "'ignored' or 'feature'.")
        if cols:
            s = df[cols[0]].copy()
            if r == "label":
                nd = s.dropna().nunique()
                if nd < 2:
                    raise LabelError(
                        f"the label column '{cols[0]}' has {'only one value (' + _examples(s.dropna()) + ')' if nd else 'no values'}; "
                        "ground truth needs at least two classes to compare the clusters with. Set its role to "
                        "'ignored' or choose another label column."
                    )
                if s.isna().any():
                    _warn(f"the label column '{cols[0]}' is missing in {int(s.isna().sum())} row(s); those rows are "
                          "clustered but left out of any comparison with the labels.", notes)
                labels = s
            else:
                if s.duplicated(keep=False).any() and s.notna().all():
                    _warn(f"the identifier column '{cols[0]}' repeats some values; rows are still kept apart.", notes)
                ids = s
    zero_cols = set(_zero_columns(zeros_as_missing, suggestion, df))
    feats = [c for c in df.columns if role[c] == "feature"]
    if not feats:
        raise DataLoadError("no column has the role 'feature'; choose at least one column to cluster on.")
    X, likelihood, encodings = {}, {}, {}
    plain = _plain_numbers(df, feats, family, zero_cols)
    for c in feats:
        fam = family.get(c)
        if fam is None or (isinstance(fam, float) and math.isnan(fam)):
            raise DataLoadError(f"column '{c}' is a feature but has no likelihood family; choose one of "
                                f"{sorted(FAMILIES)}, or set its role to 'ignored'.")
        if fam not in FAMILIES:
            raise DataLoadError(f"unknown family {fam!r} for column '{c}'; choose one of {sorted(FAMILIES)}.")
        if c in plain:
            x = plain[c]
            if np.isnan(x).all():
                raise DataLoadError(f"column '{c}' has no values (an empty column: all missing); set its role to "
                                    "'ignored'.")
            if fam in GAUSSIAN_FAMILIES and standardize in ("zscore", "robust"):
                x, st = _standardize(x, standardize)
                encodings[c] = st
            X[c] = x
            likelihood[c] = fam
            continue
        if df[c].isna().all():
            raise DataLoadError(f"column '{c}' has no values (an empty column: all missing); set its role to "
                                "'ignored'.")
        column = _as_days(df[c], c, fam, notes)
        if c in zero_cols:
            numeric = _as_numeric(column)
            zero = (numeric == 0).to_numpy() if numeric is not None else np.zeros(len(column), dtype=bool)
            if zero.any():
                column = column.where(~zero, np.nan) if numeric is None else numeric.where(~zero, np.nan)
                _warn(f"column '{c}': {int(zero.sum())} zero(s) treated as missing (0 marked as 'not measured').", notes)
        try:
            x, enc = encode_column(column, fam, c, max_categories=max_categories, warn=lambda m: _warn(m, notes))
        except ValueError as exc:
            raise DataLoadError(str(exc)) from None
        if fam in GAUSSIAN_FAMILIES and standardize in ("zscore", "robust"):
            x, st = _standardize(x, standardize)
            enc.update(st)
        X[c] = x
        likelihood[c] = fam
        if enc:
            encodings[c] = enc
    features = pd.DataFrame(np.column_stack([X[c] for c in feats]) if feats else None, index=df.index,
                            columns=feats)
    try:
        parse(features, likelihood)
    except (ValueError, TypeError) as exc:
        raise DataLoadError(f"{exc} (You can change the column's family or set its role to 'ignored'.)") from None
    return Prepared(features, likelihood, labels, ids, encodings, notes)


def missing_summary(df: pd.DataFrame):
    """Where values are missing.

    Parameters
    ----------
    df : DataFrame

    Returns
    -------
    summary : DataFrame
        One row per column, in order: ``column``, ``n_missing``, ``fraction``
        (infinite values are counted as missing, as :func:`prepare` treats them).
    rows : DataFrame
        The rows of ``df`` with at least one missing value (original index kept).
    """
    if not isinstance(df, pd.DataFrame):
        raise DataLoadError(f"expected a DataFrame, got {type(df).__name__}.")
    miss = df.isna().to_numpy()
    floats = [j for j, t in enumerate(df.dtypes) if isinstance(t, np.dtype) and t.kind == "f"]
    if floats:  # one pass over all float columns: a wide table has tens of thousands
        miss[:, floats] |= np.isinf(df.iloc[:, floats].to_numpy(dtype=float))
    for j, t in enumerate(df.dtypes):  # pandas' nullable floats (Float64) hold infinities too
        if not isinstance(t, np.dtype) and pd.api.types.is_float_dtype(t):
            miss[:, j] |= np.isinf(df.iloc[:, j].to_numpy(dtype=float, na_value=np.nan))
    n = miss.sum(axis=0).astype(int)
    summary = pd.DataFrame({"column": list(df.columns), "n_missing": n,
                            "fraction": n / len(df) if len(df) else np.zeros(len(n))})
    return summary, df[miss.any(axis=1)]
