"""One column of text cells to a typed column: numbers (int64 or float64, by pandas' C parser
or :func:`cells.parse_numbers`), dates (datetime64) or text (pandas' string dtype), with the
notes and warnings a user should see; :func:`_typed_columns` types many short columns at once,
with the same results, in time linear in the cells of a wide table."""
from __future__ import annotations

import math
import re
from collections.abc import Iterator
from itertools import chain

import numpy as np
import pandas as pd

from mapdp_core.core.encoding import code_reason

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


def _plain_text(cells: pd.Series, decimal: str) -> pd.Series:
    """Cells as pandas' C parser must see them to read plain numbers with the file's decimal
    mark: with a decimal comma, "1,5" becomes "1.5" and a cell with a point cannot be a number."""
    if decimal == ",":
        cells = cells.str.replace(",", ".", regex=False).where(~cells.str.contains(".", regex=False), "x")
    return cells


def _plain_numbers(cells: pd.Series, decimal: str) -> np.ndarray | None:
    """Cells that are all plain numbers (the file's decimal mark, no separators or units) as
    floats, by pandas' C parser; None if any cell is something else."""
    try:
        return pd.to_numeric(_plain_text(cells, decimal), errors="raise").to_numpy(dtype=float)
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
        for doubt in parsed.doubts:  # cells read one way that a user should check
            _warn(f"column '{name}' {doubt}", report.warnings)
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
    s = _stripped(values)
    return _typed(s, _missing(s), name, decimal, report)


def _stripped(values) -> pd.Series:
    """Cells (a list of strings, or a Series from pandas' reader) as stripped text in pandas'
    string dtype (compact, with vectorised string methods), indexed from 0; NaN = missing."""
    if not isinstance(values, pd.Series):  # the careful path's cells: all strings
        s = pd.Series(values, dtype="str")
    else:
        s = values.reset_index(drop=True)
        if not isinstance(s.dtype, pd.StringDtype):  # mixed values from pandas' chunks
            s = s.map(lambda v: v if isinstance(v, str) or v is None or v != v else str(v)).astype("str")
    return s.str.strip()


def _missing(s: pd.Series) -> np.ndarray:
    """Which stripped cells are missing: NaN, empty, or a missing-value token (any case)."""
    return (s.isna() | s.str.lower().isin(_NA)).to_numpy()


_LEADING_ZERO = r"[+-]?0[0-9]"


def _written_as_code(present: pd.Series) -> str:
    """Why whole numbers written this way are codes to keep as text, or "" (see
    :func:`mapdp_core.core.encoding.code_reason`)."""
    return code_reason(present)


def _typed(s: pd.Series, missing: np.ndarray, name: str, decimal: str, report: LoadReport) -> pd.Series:
    """The rules of :func:`_column`, given the column's stripped cells ``s`` (indexed from 0)
    and its ``missing`` mask."""
    if missing.all():
        return pd.Series(np.full(len(s), np.nan), name=name)
    present = s[~missing]
    numbers = _as_numbers(present, name, decimal, report)
    if numbers is not None:
        # no decimal mark and no exponent in any cell ("1,234" with a decimal point is whole)
        written_whole = not present.str.contains(f"[{re.escape(decimal)}eE]", regex=True).any()
        code = _written_as_code(present) if written_whole else ""
        if code:  # a record number or a code, not a quantity: its exact text is kept
            _note(report, name, code)
            return pd.Series(s.where(~missing), name=name)
        out = np.full(len(s), np.nan)
        out[~missing] = numbers
        return _numeric_series(out, name, report, written_whole)
    if len(present) <= 2 * _SAMPLE_CELLS or parse_dates(present.iloc[:_SAMPLE_CELLS].tolist(), decimal) is not None:
        dates = parse_dates(present.tolist(), decimal)
        if dates is not None:
            out = pd.Series(pd.NaT, index=range(len(s)), dtype="datetime64[ns]", name=name)
            out[~missing] = dates.values.to_numpy()
            _note(report, name, dates.note)
            return out
    return pd.Series(s.where(~missing), name=name)


#: Columns of at most this many cells are typed in batches by :func:`_typed_columns`; taller ones
#: one by one (:func:`_column`), where pandas' fixed cost per call is small beside the cells' own
#: (and where ``_column`` tries a text column's first cells before parsing all of them).
_BATCH_ROWS = 2 * _SAMPLE_CELLS
#: Cells per batch: bounds the memory of a batch's flattened cells.
_BATCH_CELLS = 1 << 20
#: pandas reads a column of whole numbers as integers (then made floats) and a column with decimals
#: by its float parser; a batch is one parse of many columns, so a whole number may be read either
#: way. Both are exact below 2**53 (taken with a margin); a column with a number this large is typed
#: alone, as ``_column`` would (the two agreed on every larger number tried, but that is not promised).
_EXACT_WHOLE = 1e15
#: a cell that may hold a number or a date: an ASCII digit, a character beyond ASCII (Python's
#: ``\d`` and ``float`` take other scripts' digits), or "inf" (infinity, which has no digit)
_MAY_BE_NUMBER = r"[0-9]|[^\x00-\x7f]|[iI][nN][fF]"


def _typed_columns(columns: list, names: list[str], decimal: str, report: LoadReport) -> Iterator[pd.Series]:
    """Columns of cells (each what :func:`_column` takes, all of one length), each typed as
    :func:`_column` types it, yielded in order: notes and warnings come in the column order, as
    they do column by column. The list is emptied as the columns are typed, so that a tall text
    column is freed once typed.

    Why batches: a call into pandas costs tens of microseconds whatever the length of the
    column, and ``_column`` makes dozens of them (about 1.5 ms a column here), so a 50-row table
    of 5 000 columns spent nearly all its 4 s in fixed costs. Short columns are therefore taken
    together: the steps every column needs (strip, missing tokens, plain numbers by pandas' C
    parser, whether a cell writes a decimal mark or an exponent) run once on the batch's cells,
    and a column whose present cells are all plain numbers (the usual wide table: measurements)
    is finished from them, and so is a column of text without a digit (categories, answers).
    Every other column (dates, units, thousands separators, a few text tokens, text with digits)
    goes through :func:`_typed`, the same per-column rules as ``_column``, with its stripped
    cells and missing mask taken from the batch. ``tests/data/test_wide_read.py`` checks that
    the two ways agree."""
    n = len(columns[0]) if columns else 0
    if n > _BATCH_ROWS:
        for i, name in enumerate(names):
            values, columns[i] = columns[i], None
            yield _column(values, name, decimal, report)
        return
    per_batch = max(1, _BATCH_CELLS // max(n, 1))
    for start in range(0, len(names), per_batch):
        batch = _Batch(columns[start:start + per_batch], decimal)
        columns[start:start + per_batch] = [None] * len(batch.plain)
        for i, name in enumerate(names[start:start + per_batch]):
            yield batch.column(i, name, report)


class _Batch:
    """Short columns of equal length (``n`` cells each) read together, column after column in
    one flat array of cells; :meth:`column` finishes one of them."""

    def __init__(self, columns: list, decimal: str):
        self.decimal = decimal
        self.n = n = len(columns[0])
        if all(isinstance(c, pd.Series) for c in columns):
            flat = pd.concat(columns, ignore_index=True) if len(columns) > 1 else columns[0]
        else:
            flat = list(chain.from_iterable(columns))
        # each cell is stripped and judged missing as _column does it (element by element, so the
        # same on the flat array as on one column)
        self.s = s = _stripped(flat)
        self.missing = missing = _missing(s)
        present = ~missing
        cells = s[present]
        # plain numbers, as _plain_numbers reads them, but without raising: a cell that is not a
        # plain number is NaN and sends its column to the per-column rules
        values = np.full(len(s), np.nan)
        parsed = pd.to_numeric(_plain_text(cells, decimal), errors="coerce")
        if parsed.dtype.kind in "iuf":  # else whole numbers beyond int64 that pandas left as objects: no shortcut
            values[present] = parsed.to_numpy(dtype=float)
        marked = np.zeros(len(s), dtype=bool)  # a decimal mark or an exponent written (_typed's test for int64)
        marked[present] = cells.str.contains(f"[{re.escape(decimal)}eE]", regex=True).to_numpy(dtype=bool)
        shape = (len(columns), n)
        finite = np.abs(values) < _EXACT_WHOLE
        lead = np.zeros(len(s), dtype=bool)  # "02134": perhaps a code, which _typed keeps as text
        lead[present] = cells.str.match(_LEADING_ZERO).to_numpy(dtype=bool)
        self.plain = ((missing | finite | np.isinf(values)) & ~lead).reshape(shape).all(axis=1)
        # A column none of whose cells holds a digit (ASCII text; a non-ASCII character may be one)
        # or "inf" is text to _typed: no number rule and no date rule can match it, and nothing is
        # said about it. Such a column (categories, answers) skips those rules' fixed costs.
        digits = np.zeros(len(s), dtype=bool)
        digits[present] = cells.str.contains(_MAY_BE_NUMBER, regex=True).to_numpy(dtype=bool)
        self.text = ~self.plain & ~digits.reshape(shape).any(axis=1)
        self.whole = ~marked.reshape(shape).any(axis=1)
        # A column of whole numbers, none infinite, is int64 to pandas' C parser, so "-0" reads as 0;
        # read among decimals (the batch) it reads as -0.0. Adding 0.0 turns -0.0 into 0.0 and
        # changes nothing else.
        ints = self.whole & ~np.isinf(values).reshape(shape).any(axis=1)
        values = values.reshape(shape)
        values[ints] += 0.0
        self.values = values

    def column(self, i: int, name: str, report: LoadReport) -> pd.Series:
        """The ``i``-th column of the batch, typed as :func:`_column` types it."""
        if self.plain[i]:
            # every present cell a plain number: what _typed does with _plain_numbers' result (a
            # column of missing cells only ends the same: a float64 column of NaN, without a word)
            return _numeric_series(self.values[i], name, report, bool(self.whole[i]))
        a, b = i * self.n, (i + 1) * self.n
        s, missing = self.s.iloc[a:b].reset_index(drop=True), self.missing[a:b]
        if self.text[i]:
            return pd.Series(s.where(~missing), name=name)  # what _typed ends with for text
        return _typed(s, missing, name, self.decimal, report)
