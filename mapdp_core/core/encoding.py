"""How table columns become numbers, in one place: for fitting and for new rows.

The rules, used by :func:`mapdp_core.data.loading.prepare` (user tables), :func:`mapdp_core.core.spec.to_matrix`
and :func:`mapdp_core.core.spec.parse_rows` (DataFrames given to the estimators), the Predict page
(:func:`encode_new_rows`) and :mod:`mapdp_core.evaluation.profiles` (which level a proportion is about):

* Categories get codes 0..L-1 in sorted label order (:func:`category_codes`).
* A two-valued bernoulli column codes its "yes"-like value (:data:`YES_TOKENS`) as 1; if
  neither or both values are yes-like, the second in sorted order is 1.
* New rows are encoded with the fitted encoding: known categories only, the same shift and
  standardisation (:func:`encode_new_column`). A category never seen in fitting either raises
  ValueError or, when the caller passes an ``unseen`` list, becomes a missing cell (the model
  then scores the row without it, exactly as any gap) and is recorded in that list
  (:func:`unseen_notes` words it per row).

This module needs numpy and pandas only, so the engine (``spec``) can use it.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

__all__ = ["EXACT_DIGITS", "MAX_SCALE_LEVELS", "YES_TOKENS", "as_numeric", "code_reason", "lattice", "stored_whole",
           "category_codes", "codes_of", "encode_column", "encode_new_column",
           "encode_new_rows", "examples", "is_yes", "sorted_categories", "unseen_notes"]

#: Cell values (compared stripped and lower-cased) that mean "yes / present" in clinical
#: sheets, in English, German, French, Spanish and Italian.
YES_TOKENS = frozenset({"1", "1.0", "yes", "y", "true", "t", "positive", "pos", "present", "+", "ja", "oui", "si",
                        "abnormal"})


def is_yes(value) -> bool:
    """Whether ``value`` reads as "yes" (see :data:`YES_TOKENS`)."""
    return str(value).strip().lower() in YES_TOKENS


#: Significant digits a double keeps exactly (2**53 ~ 9.0e15): a whole number written with more is
#: an identifier (a record or card number), which as a float would lose its last digits.
EXACT_DIGITS = 15


def code_reason(cells: pd.Series) -> str:
    """Why text cells of whole numbers are codes to keep as text, or "" when they are numbers:
    more than :data:`EXACT_DIGITS` significant digits (as floats, 18-digit record numbers all
    became one value) or a leading zero ("02134": a postal code, whose zero a number drops).
    Cells with a decimal mark or an exponent are numbers."""
    cells = cells.astype(str).str.strip()
    if cells.str.contains(r"[.,eE]", regex=True).any():
        return ""
    digits = cells.str.replace(r"[^0-9]", "", regex=True).str.lstrip("0").str.len()
    if (digits > EXACT_DIGITS).any():
        example = cells[digits > EXACT_DIGITS].iloc[0]
        return (f"whole numbers of more than {EXACT_DIGITS} digits (e.g. {example}) kept as text: as numbers their "
                "last digits would be lost; they identify rows or code something")
    lead = cells.str.match(r"[+-]?0[0-9]")
    if lead.any():
        return (f"numbers written with a leading zero (e.g. {cells[lead].iloc[0]}) kept as text: a code, whose zero "
                "a number drops")
    return ""


def as_numeric(s: pd.Series) -> pd.Series | None:
    """The column as float (NaN missing) if it is numeric or all its values are numbers, else
    None; text that writes codes (:func:`code_reason`) is not read as numbers."""
    if pd.api.types.is_bool_dtype(s):
        return s.astype(float)
    if pd.api.types.is_numeric_dtype(s):
        return pd.to_numeric(s, errors="coerce").astype(float)
    present = s.dropna()
    if present.empty:
        return pd.Series(np.nan, index=s.index, dtype=float)
    if pd.api.types.infer_dtype(present, skipna=True) in ("string", "mixed") and code_reason(present):
        return None
    conv = pd.to_numeric(present.astype(str).str.strip(), errors="coerce")
    if conv.notna().all():
        out = pd.Series(np.nan, index=s.index, dtype=float)
        out[present.index] = conv.astype(float)
        return out
    return None


#: The most levels a column stored as floats may have to be read as an ordinal scale (binomial
#: over its levels, :func:`lattice`): n = 10 trials, as for whole numbers 0..10.
MAX_SCALE_LEVELS = 11


def stored_whole(s: pd.Series) -> bool:
    """Whether the column is stored as whole numbers: an integer or boolean dtype (numpy's or
    pandas' nullable ones), Python ints, or text cells written without a decimal part ("3",
    not "3.0"). A float column is not, even when its values happen to be whole: a unit can make
    them so (1.234 kg is 1234 g), so whole values alone are no evidence of counting."""
    if pd.api.types.is_bool_dtype(s.dtype) or pd.api.types.is_integer_dtype(s.dtype):
        return True
    if pd.api.types.is_float_dtype(s.dtype):
        return False
    present = s.dropna()
    if present.empty:
        return False
    kind = pd.api.types.infer_dtype(present, skipna=True)
    if kind in ("integer", "boolean"):
        return True
    if kind in ("string", "mixed"):
        return bool(present.astype(str).str.strip().str.fullmatch(r"[+-]?\d+").all())
    return False


def lattice(values: np.ndarray, max_levels: int | None = None) -> tuple[float, float] | None:
    """The evenly spaced levels the finite ``values`` sit on, as ``(step, origin)``: every value
    is origin + step * j for a whole j >= 0, with origin 0 when the levels, continued down, reach
    0 (values 2, 4, 6 in steps of 2), else the smallest value. None when the values are not on
    such levels (or need more than ``max_levels`` of them from origin to the largest value).

    Scale-free: ``lattice(c * values)`` is ``(c * step, c * origin)`` for any c > 0, so a rule
    built on it does not depend on a column's unit."""
    v = np.unique(np.asarray(values, dtype=float))
    v = v[np.isfinite(v)]
    if v.size < 2:
        return None
    gaps = np.diff(v)
    for k in range(1, 11):  # the step may divide the smallest gap: levels 0, 0.4, 1.0 are 0.2 apart
        step = float(gaps.min()) / k
        j = (v - v[0]) / step
        if np.all(np.abs(j - np.round(j)) <= 1e-6):  # rounding error of decimals, not a coincidence
            break
    else:
        return None
    first = v[0] / step
    origin = 0.0 if (abs(first - round(first)) <= 1e-6 and round(first) >= 0) else float(v[0])
    if max_levels is not None and round((v[-1] - origin) / step) + 1 > max_levels:
        return None
    return step, origin


def examples(values, k: int = 4) -> str:
    """Up to ``k`` distinct values for a message ("a, b, c, d, ..."); whole floats as ints."""
    out = []
    values = np.asarray(values)
    n = 64
    while True:  # the distinct values of a growing head: a long column need not be scanned whole
        distinct = pd.unique(np.asarray(values[:n], dtype=object))
        if len(distinct) > k or n >= len(values):
            break
        n *= 16
    for v in distinct:
        if len(out) == k:
            out.append("...")
            break
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            v = int(v)
        out.append(str(v))
    return ", ".join(out)


def sorted_categories(values) -> list:
    """The distinct non-missing values in code order (sorted labels)."""
    return list(pd.Categorical(values).categories)


def category_codes(values) -> tuple[np.ndarray, list]:
    """``(codes, labels)``: float codes 0..L-1 (NaN where missing) in sorted label order."""
    cat = pd.Categorical(values)
    codes = cat.codes.astype(float)
    codes[codes < 0] = np.nan
    return codes, list(cat.categories)


def _bernoulli_order(cats: list, numeric: bool) -> list:
    """The two values of a bernoulli column as [value coded 0, value coded 1]."""
    if numeric and set(cats) <= {0.0, 1.0}:
        return [0.0, 1.0]
    if len(cats) == 2 and is_yes(cats[0]) and not is_yes(cats[1]):
        return [cats[1], cats[0]]
    return cats


def encode_column(s: pd.Series, family: str, name, *, max_categories: int,
                  warn: Callable[[str], None]) -> tuple[np.ndarray, dict]:
    """One feature column of a user table as ``(float array, encoding)`` for ``family``.

    The encoding is ``{"codes": labels}`` for bernoulli and categorical columns (label of
    code 0, 1, ...); for a binomial column ``{"shift": m}`` when m was subtracted (a scale
    with negative values, or levels that do not reach 0) and ``{"step": h}`` when the result
    was divided by h (numbers stored as floats, on evenly spaced levels h apart:
    :func:`lattice`, so that 1 000 g and 1 kg give the same trials); else ``{}``. Infinite
    values become missing. Raises ValueError when the column does not fit the family; calls
    ``warn`` for what is kept with a caveat.
    """
    num = as_numeric(s)
    if family in ("bernoulli", "categorical"):
        mask = s.notna() & ~(np.isinf(num) if num is not None else False)
        keys = (num if num is not None else s.astype(str).str.strip())[mask]
        cats = sorted_categories(keys)
        if family == "bernoulli":
            if len(cats) > 2:
                raise ValueError(
                    f"column '{name}' has {len(cats)} different values ({examples(keys)}) but bernoulli needs two; "
                    "choose categorical (or binomial for an ordinal scale)."
                )
            cats = _bernoulli_order(cats, num is not None)
        elif len(cats) > max_categories:
            warn(f"column '{name}' has {len(cats)} categories; with so many, each is seen in few rows and the "
                 "column mostly adds noise. Consider setting its role to 'ignored' or grouping the categories.")
        out = np.full(len(s), np.nan)
        out[mask.to_numpy()] = codes_of(keys, cats, name)
        labels = [int(c) if isinstance(c, float) and c.is_integer() else c for c in cats]
        return out, {"codes": labels}
    if num is None:
        present = s.dropna().astype(str)
        bad = [v for v in pd.unique(present) if pd.isna(pd.to_numeric(v, errors="coerce"))][:3]
        raise ValueError(
            f"column '{name}' holds text (e.g. {', '.join(repr(b) for b in bad)}) but the {family} likelihood needs "
            "numbers; choose categorical (or bernoulli for two values), or set the column's role to 'ignored'."
        )
    x = num.to_numpy(dtype=float).copy()
    n_inf = int(np.isinf(x).sum())
    if n_inf:
        x[np.isinf(x)] = np.nan
        warn(f"column '{name}': {n_inf} infinite value(s) are treated as missing.")
    enc = {}
    if family == "binomial":
        lo = np.nanmin(x) if np.isfinite(x).any() else 0.0
        if stored_whole(s):  # counts of 0..n, or a scale shifted to start at 0
            if lo < 0:
                x = x - lo
                enc["shift"] = float(lo)
            return x, enc
        # numbers stored as floats: the levels of an ordinal scale, whatever the unit (the
        # Data page suggests binomial for such a column; other floats must be whole already)
        grid = lattice(x, MAX_SCALE_LEVELS)
        if grid is None:
            grid = lattice(x)
            if grid is not None and round((np.nanmax(x) - lo) / grid[0]) + 1 <= MAX_SCALE_LEVELS:
                grid = (grid[0], float(lo))
            else:
                grid = None
        if grid is not None and grid != (1.0, 0.0):
            step, origin = grid
            if step != 1.0:
                warn(f"column '{name}': binomial counts its levels {examples(np.unique(x[np.isfinite(x)]))} as "
                     f"0, 1, 2, ... (steps of {step:g}" + (f" from {origin:g}" if origin else "") + ").")
            if origin != 0.0:
                x = x - origin
                enc["shift"] = origin
            if step != 1.0:
                x = np.round(x / step)  # exactly whole: the level's number
                enc["step"] = step
    return x, enc


def _text_keys(v) -> list[str]:
    """How a typed-in value may name a label: as stripped text, then as a number ("2" -> "2.0")."""
    key = str(v).strip()
    try:
        return [key, str(float(key))]
    except ValueError:
        return [key]


def codes_of(values, labels: list, name, *, match_text: bool = False, unseen: list | None = None) -> np.ndarray:
    """Codes of ``values`` under known category ``labels`` (code = position); NaN/None stay missing.

    ``match_text=True`` also matches values typed as text ("2" or " 2.0" for the label 2,
    " yes" for "yes"), as on a form; otherwise a value must equal a label. A value that
    matches no label raises ValueError listing the known ones, unless ``unseen`` is a list:
    then it is coded missing and ``{"row": position, "column": name, "value": value}`` is
    appended to ``unseen``.
    """
    exact = {label: float(code) for code, label in enumerate(labels)}
    text = {}
    if match_text:
        for code, label in enumerate(labels):
            text.setdefault(str(label).strip(), float(code))
            if isinstance(label, (int, float, np.number)) and not isinstance(label, bool):
                text.setdefault(str(float(label)), float(code))
    out, unknown = [], []
    for position, v in enumerate(values):
        if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, (float, np.floating)) and np.isnan(v)):
            out.append(np.nan)  # pd.NA: a gap in a column of pandas' string or nullable dtypes
            continue
        try:
            code = exact.get(v)
        except TypeError:  # unhashable: cannot be a label
            code = None
        if code is None and match_text:
            code = next((text[k] for k in _text_keys(v) if k in text), None)
        if code is None:
            unknown.append(str(v))
            if unseen is not None:
                unseen.append({"row": position, "column": name, "value": v})
            code = np.nan
        out.append(code)
    if unknown and unseen is None:
        raise ValueError(f"column '{name}' has categories {sorted(set(unknown))[:5]} not seen when fitting "
                         f"(known: {list(labels)[:10]}); leave them empty (missing) instead.")
    return np.asarray(out, dtype=float)


def encode_new_column(s: pd.Series, encoding: dict, name, *, unseen: list | None = None) -> np.ndarray:
    """New values of one column, as typed in the original table, encoded with the column's
    fitted ``encoding`` (from :func:`encode_column`, plus any standardisation). ``unseen``:
    see :func:`codes_of`."""
    s = s.reset_index(drop=True)
    if not pd.api.types.is_numeric_dtype(s):  # numbers have no empty form cells, and the check costs 1 s a million
        s = s.where(~s.astype(str).str.strip().isin(["", "nan", "None", "NaN"]), None)  # empty form cells
    if "codes" in encoding:
        return codes_of(s, encoding["codes"], name, match_text=True, unseen=unseen)
    x = pd.to_numeric(s, errors="coerce")
    bad = s.notna() & x.isna()
    if bad.any():
        raise ValueError(f"column '{name}' needs numbers; got {s[bad].iloc[0]!r}.")
    x = x.to_numpy(dtype=float)
    if "shift" in encoding:
        x = x - encoding["shift"]
    if "step" in encoding:
        x = x / encoding["step"]
        # a level's number, as fitting rounds it (a step like 0.1 is not exact in binary: 0.5/0.1
        # is 5.000000000000002); a value off the levels stays as it is, for the family to refuse
        level = np.round(x)
        x = np.where(np.abs(x - level) <= 1e-6, level, x)
    if "center" in encoding:
        x = (x - encoding["center"]) / encoding["scale"]
    return x


def encode_new_rows(rows: pd.DataFrame, features: list, encodings: dict, *,
                    unseen: list | None = None) -> pd.DataFrame:
    """New rows, given as in the original table, encoded as the fitted features were.

    With an ``unseen`` list, a category never seen in fitting becomes a missing cell and is
    recorded there (row position, column, value) instead of raising; see :func:`unseen_notes`."""
    missing = [c for c in features if c not in rows.columns]
    if missing:
        raise ValueError(f"the new rows lack the column(s) {missing}; give every feature (empty = missing).")
    # one frame from all columns at once: inserting thousands one by one fragments it (wide tables)
    return pd.DataFrame({c: encode_new_column(rows[c], encodings.get(c, {}), c, unseen=unseen) for c in features},
                        index=range(len(rows)), columns=features)


def unseen_notes(unseen: list, n_rows: int) -> list[str]:
    """One note per row ("" where there is nothing to say) for the cells of ``unseen`` (as
    filled by :func:`codes_of`): "'sex' = 'X' never seen in training; scored without it"."""
    by_row: dict[int, list[str]] = {}
    for cell in unseen:
        value = cell["value"]
        shown = f"'{value}'" if isinstance(value, str) else str(value)  # np.str_ is a str: no repr noise
        by_row.setdefault(int(cell["row"]), []).append(f"'{cell['column']}' = {shown}")
    notes = [""] * n_rows
    for row, cells in by_row.items():
        notes[row] = "; ".join(cells) + " never seen in training; scored without " + (
            "it" if len(cells) == 1 else "them")
    return notes
