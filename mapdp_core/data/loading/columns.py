"""One column of text cells to a typed column: numbers (int64 or float64, by pandas' C parser
or :func:`cells.parse_numbers`), dates (datetime64) or text (pandas' string dtype), with the
notes and warnings a user should see."""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from .cells import has_both_decimal_marks, looks_like_number, parse_dates, parse_numbers, units_of
from .dialect import _INF, _NA
from .errors import _warn
from .report import LoadReport


def _note(report: LoadReport, name: str, note: str) -> None:
    if note:
        report.column_notes[name] = f"{report.column_notes[name]}; {note}" if name in report.column_notes else note


def _numeric_series(out: np.ndarray, name: str, report: LoadReport, written_whole: bool = False) -> pd.Series:
    """Numbers as int64 when the file wrote them all as whole numbers ("3", not "3.0") and none
    is missing, else float64 (a value's unit can make it whole: 1.5 kg written as 1500.0 g is a
    measurement, which the family rules must not take for a count); infinities said."""
    n_inf = int(np.isinf(out).sum())
    if n_inf:
        _warn(f"column '{name}' has {n_inf} infinite value(s); they are treated as missing when the features "
              "are prepared. Check how they arose (a division by zero?) and fix them in the file.", report.warnings)
    finite = np.isfinite(out)
    if written_whole and finite.all() and np.all(out == np.round(out)) and np.all(np.abs(out) < 2 ** 53):
        return pd.Series(out.astype(np.int64), name=name)
    return pd.Series(out, name=name)


_SAMPLE_CELLS = 1000


def _plain_numbers(cells: pd.Series, decimal: str) -> np.ndarray | None:
    """Cells that are all plain numbers (the file's decimal mark, no separators or units) as
    floats, by pandas' C parser; None if any cell is something else."""
    if decimal == ",":
        cells = cells.str.replace(",", ".", regex=False).where(~cells.str.contains(".", regex=False), "x")
    try:
        return pd.to_numeric(cells, errors="raise").to_numpy(dtype=float)
    except (ValueError, TypeError):
        return None


def _as_numbers(present: pd.Series, name: str, decimal: str, report: LoadReport) -> np.ndarray | None:
    """The present (stripped, non-missing) cells of a column as floats, or None if it is not numbers.
    Plain numbers go through pandas' C parser; the rest by :func:`cells.parse_numbers`. A large
    column is tried on a sample first, so that a text column is not parsed cell by cell."""
    if len(present) > 2 * _SAMPLE_CELLS:
        head = present.iloc[:_SAMPLE_CELLS]
        if _plain_numbers(head, decimal) is None and parse_numbers(head.tolist(), decimal) is None:
            _why_not_numbers(head.tolist(), name, report)
            return None
    plain = _plain_numbers(present, decimal)
    if plain is not None:
        return plain
    values = present.tolist()
    inf = np.array([bool(_INF.fullmatch(v)) for v in values])
    finite_cells = [v for v, i in zip(values, inf) if not i]
    parsed = parse_numbers(finite_cells, decimal) if finite_cells else None
    if parsed is None:
        if finite_cells:
            _why_not_numbers(finite_cells, name, report)
            return None
    out = np.empty(len(values))
    out[inf] = [-math.inf if v.startswith("-") else math.inf for v, i in zip(values, inf) if i]
    bad = []
    if parsed is not None:
        out[~inf] = parsed.values
        bad = parsed.bad
    n_present = len(values)
    if bad and not (len(bad) <= 0.1 * n_present and len(set(bad)) <= 5 and len(bad) < n_present):
        return None
    if bad:
        _warn(f"column '{name}': {len(bad)} cell(s) that are not numbers ({', '.join(repr(b) for b in sorted(set(bad)))}) "
              "are treated as missing; if they carry information (e.g. '<5'), replace them by numbers in the file.",
              report.warnings)
    if parsed is not None:
        _note(report, name, parsed.note)
    return out


def _why_not_numbers(cells: list[str], name: str, report: LoadReport) -> None:
    """Warn when a column is numbers that could not be read as one: mixed decimal marks or units."""
    number_like = [c for c in cells if looks_like_number(c)]
    if len(number_like) < 0.9 * len(cells):
        return
    if has_both_decimal_marks(number_like):
        _warn(f"column '{name}' writes numbers with both decimal marks ('1.5' and '1,5'), so it is kept as text; "
              "write all its numbers one way in the file and upload it again.", report.warnings)
        return
    units = units_of(number_like)
    if len(units) > 1:
        _warn(f"column '{name}' has numbers in different units ({', '.join(units[:5])}), so it is kept as text; "
              "convert them to one unit in the file (or into separate columns) and upload it again.",
              report.warnings)


def _column(values, name: str, decimal: str, report: LoadReport) -> pd.Series:
    """One column of text cells as numbers (int64/float64), dates (datetime64) or text (pandas'
    string dtype, NaN = missing), by the rules of :mod:`mapdp_core.data.loading`. Text stays in
    pandas' string arrays throughout: a column of Python string objects takes several times
    the memory (measured on the large-file benchmark: 634 MB against 497 MB peak)."""
    if not isinstance(values, pd.Series):  # the careful path's cells: all strings
        s = pd.Series(values, dtype="str")
    else:
        s = values.reset_index(drop=True)
        if not isinstance(s.dtype, pd.StringDtype):  # mixed values from pandas' chunks
            s = s.map(lambda v: v if isinstance(v, str) or v is None or v != v else str(v)).astype("str")
    s = s.str.strip()  # pandas' string arrays: compact, and vectorised string methods
    missing = (s.isna() | s.str.lower().isin(_NA)).to_numpy()
    if missing.all():
        return pd.Series(np.full(len(s), np.nan), name=name)
    present = s[~missing]
    numbers = _as_numbers(present, name, decimal, report)
    if numbers is not None:
        out = np.full(len(s), np.nan)
        out[~missing] = numbers
        # no decimal mark and no exponent in any cell ("1,234" with a decimal point is whole)
        written_whole = not present.str.contains(f"[{re.escape(decimal)}eE]", regex=True).any()
        return _numeric_series(out, name, report, written_whole)
    if len(present) <= 2 * _SAMPLE_CELLS or parse_dates(present.iloc[:_SAMPLE_CELLS].tolist(), decimal) is not None:
        dates = parse_dates(present.tolist(), decimal)
        if dates is not None:
            out = pd.Series(pd.NaT, index=range(len(s)), dtype="datetime64[ns]", name=name)
            out[~missing] = dates.values.to_numpy()
            _note(report, name, dates.note)
            return out
    return pd.Series(s.where(~missing), name=name)
