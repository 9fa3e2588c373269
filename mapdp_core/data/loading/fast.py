"""Large text files (fast path): pandas' C reader, column by column, after the same detection
(delimiter, decimal mark, header) on a sample of the first megabyte; None sends a file with
irregular rows to the careful path."""
from __future__ import annotations

import csv
import io
import re
import warnings
from collections import Counter

import numpy as np
import pandas as pd

from .columns import _BATCH_CELLS, _numeric_series, _typed_columns
from .dialect import _NA, _detect_decimal, _detect_delimiter
from .errors import _warn
from .grid import _assemble, _check_rows, _header_choice, _unique_names
from .report import LoadReport
from .text_encoding import _SAMPLE_BYTES
from .text_rows import _lines

__all__ = ['FAST_PATH_BYTES']


#: Text files larger than this are parsed by pandas' C reader (column by column, numbers
#: converted while reading) instead of row lists of Python strings, which took a 63 MB CSV to
#: 1.3 GB of peak memory (0.5 GB this way; figures in :mod:`mapdp_core.data.loading`). Detection
#: (delimiter, decimal mark, header) still runs on a sample of the first megabyte.
FAST_PATH_BYTES = 2 << 20
_PANDAS_NA = sorted({v for t in _NA for v in (t, t.upper(), t.capitalize(), t.title())})


def _cell_text(value, decimal: str):
    """A value pandas already converted, written back as the file would (its decimal mark)."""
    if value is None or isinstance(value, str) or value != value:
        return value
    if isinstance(value, (bool, np.bool_)):
        return "TRUE" if value else "FALSE"
    text = repr(float(value)) if isinstance(value, (float, np.floating)) else str(value)
    return text.replace(".", ",") if decimal == "," else text


def _fast_frame(data: bytes, encoding: str, header, report: LoadReport, min_rows: int) -> pd.DataFrame | None:
    """A large text file read by pandas' C parser, or None when the file needs the careful path
    (a row wider than the first, a header shorter than the rows, quotes in the header line...)."""
    head = data[:_SAMPLE_BYTES].decode(encoding, errors="ignore").removeprefix("\ufeff")
    lines = _lines(head)[:-1]  # the last line of the sample may be cut
    delim, skip = None, 0
    if lines and re.fullmatch(r"\s*sep=(.)\s*", lines[0], flags=re.IGNORECASE):
        delim = re.fullmatch(r"\s*sep=(.)\s*", lines[0], flags=re.IGNORECASE).group(1)
        lines, skip = lines[1:], 1
    first = next((i for i, ln in enumerate(lines[:1000]) if ln.strip()), None)
    if first is None or lines[first].count('"') % 2:  # a header cell running over several lines
        return None
    sample = [ln for ln in lines[first:first + 400] if ln.strip()][:200]
    if delim is None:
        delim = _detect_delimiter(sample)
    sep = delim or "\x1f"
    try:
        rows = [[c.strip() for c in r] for r in csv.reader(lines[first:first + 1001], delimiter=sep)]
    except csv.Error:
        return None
    rows = [r for r in rows if any(r)]
    if len(rows) < 2 or not any(rows[0]):
        return None
    width = Counter(len(r) for r in rows[1:]).most_common(1)[0][0]
    if len(rows[0]) != width or any(len(r) > width for r in rows):
        return None
    report.delimiter = delim
    decimal = _detect_decimal(rows, delim)
    report.decimal = decimal
    has_header = _header_choice(header, rows, decimal)
    pandas_encoding = {"utf-8": "utf-8", "utf-8-sig": "utf-8-sig"}.get(encoding, encoding)

    def read(**extra) -> pd.DataFrame:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pd.read_csv(io.BytesIO(data), sep=sep, header=None, skiprows=skip + first + int(has_header),
                               decimal=decimal, encoding=pandas_encoding, keep_default_na=False,
                               na_values=_PANDAS_NA, skipinitialspace=True, skip_blank_lines=True, engine="c",
                               index_col=False, quotechar='"', doublequote=True, **extra)

    try:
        table = read()
        if table.shape[1] != width:
            return None
        exact = _exact_text(table, data, sep, encoding, read)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, UnicodeError):
        return None
    report.header = has_header
    raw = rows[0] if has_header else [""] * width
    filled = table.notna().any(axis=0).to_numpy()  # one call for all columns, not one per column
    keep = [j for j in range(width) if raw[j] or filled[j]]
    table = table.iloc[:, keep]
    table.columns = range(len(keep))
    empty = table.isna().all(axis=1).to_numpy()
    if empty.any():
        where = np.flatnonzero(empty)
        listed = ", ".join(str(i + 1) for i in where[:5]) + (", ..." if len(where) > 5 else "")
        _warn(f"{len(where)} row(s) with no value in any cell (data row {listed}) were left out: they hold no data. "
              "Give such a row at least an identifier if it stands for a record.", report.warnings)
        table = table[~empty].reset_index(drop=True)
    if has_header:
        names = [raw[j] if raw[j] else f"col_{k + 1}" for k, j in enumerate(keep)]
    else:
        names = [f"col_{k + 1}" for k in range(len(keep))]
    names = _unique_names(names, report.warnings)
    _check_rows(len(table), names, min_rows)
    # The columns are taken out once, as views, and typed in file order. Taking them out one by
    # one with DataFrame.pop deleted each from the frame's 2-D block of numbers, which copies the
    # rest of the block: time in rows x columns squared (a 200 x 5 000 file ran for minutes).
    n_rows = len(table)
    columns = [s for _, s in table.items()]
    del table
    for k, j in enumerate(keep):  # codes and long numbers: their cells' text, as the file writes them
        if j in exact:
            s = exact.pop(j)
            columns[k] = s[~empty].reset_index(drop=True) if empty.any() else s
    text = [k for k, s in enumerate(columns) if _is_text(s)]
    for k in text:
        columns[k] = _as_text(columns[k], decimal)
    spans = _rows_with_line_breaks([columns[k] for k in text])
    typed = _typed_columns([columns[k] for k in text], [names[k] for k in text], decimal, report)
    is_text = np.zeros(len(names), dtype=bool)
    is_text[text] = True
    cols = []
    for k, name in enumerate(names):
        s, columns[k] = columns[k], None
        if is_text[k]:
            cols.append(next(typed))
        elif pd.api.types.is_integer_dtype(s) and s.dtype.kind == "i":
            cols.append(pd.Series(s.to_numpy(dtype=np.int64), name=name))
        else:
            cols.append(_numeric_series(s.to_numpy(dtype=float), name, report))
        del s
    if spans:
        _warn(f"{len(spans)} row(s) (data row {', '.join(str(i + 1) for i in spans[:4])}"
              f"{', ...' if len(spans) > 4 else ''}) hold a cell with a line break inside quotes. If the table "
              "has no text with line breaks, a double quote (\") is not closed where it should be and lines were "
              "merged: fix the quotes and upload the file again.", report.warnings)
    df = _assemble(cols, names, n_rows)
    report.n_rows, report.n_cols = df.shape
    return df


#: whole numbers from this size on have 16 digits or more: a float loses the last ones (2**53 is about 9e15),
#: and the cell rules keep those of more than 15 significant digits as text (``code_reason``)
_LONG_NUMBER = 1e15
#: a cell starting with a zero and another digit ("02134", "-07", '"0044"'): after a delimiter or a line
#: break, spaces, a quote or a sign may come before the zero
_LEADING_ZERO_CELL = rb'[ \t"+-]*0[0-9]'
_PREFIX = np.zeros(256, dtype=bool)
_PREFIX[list(b' \t"+-')] = True
#: cells that start with a zero and a digit are attributed to their columns up to this many; more
#: (a column of dates such as 05/03/2020 in a tall file) and every column of whole numbers is read again
_MAX_HITS = 4000
_SCAN_BYTES = 1 << 22


def _exact_text(table: pd.DataFrame, data: bytes, sep: str, encoding: str, read) -> dict:
    """Columns of ``table`` (pandas' numbers) that must be read again as the cells' text, so that
    the cell rules see what the file writes, as the careful path does: ``{position: column}``.

    pandas reads "02134" as 2134 (a code loses its zero, which the rules keep as text) and a
    whole number of 16 or more digits as an int64 or a float64 whose last digits are gone. Those
    columns are found without a look at each cell in Python: a column with a number of 16 or
    more digits (or numbers beyond int64, which pandas leaves as uint64) by its values; a column
    of whole numbers that may have been written with a leading zero by a scan of the file's
    bytes for cells that start with a zero and a digit (:func:`_leading_zero_columns`), then
    kept as text only when one of its own cells does. A column pandas read partly as numbers,
    partly as text (chunks of a large file) is read again as text too, rather than rebuilt from
    the numbers. The second read (``read``: pandas' reader with the same settings) takes only
    those columns, and is skipped when there are none (the usual file)."""
    numeric, long_, mixed = [], set(), []
    for j, dt in table.dtypes.items():
        if isinstance(dt, pd.StringDtype) or pd.api.types.is_bool_dtype(dt):
            continue
        if not pd.api.types.is_numeric_dtype(dt):
            mixed.append(j)
        elif dt.kind in "if":
            numeric.append(j)
        else:  # uint64: beyond int64
            long_.add(j)
    whole = []
    per_block = max(1, _BATCH_CELLS // max(len(table), 1))
    for start in range(0, len(numeric), per_block):
        cols = numeric[start:start + per_block]
        block = table[cols].to_numpy(dtype=float)
        values = np.where(np.isfinite(block), block, 0.0)
        del block
        is_long = (np.abs(values) >= _LONG_NUMBER).any(axis=0)
        is_whole = (values == np.round(values)).all(axis=0)
        long_.update(j for j, hit in zip(cols, is_long) if hit)
        whole.extend(j for j, hit, w in zip(cols, is_long, is_whole) if w and not hit)
    if whole:
        found = _leading_zero_columns(data, sep, encoding)
        if found is not None:
            whole = [j for j in whole if j in found]
    wanted = sorted(long_.union(whole, mixed))
    if not wanted:
        return {}
    again = read(usecols=wanted, dtype=str)
    if len(again) != len(table) or list(again.columns) != wanted:
        raise ValueError("the second read does not match the first")
    exact = {j: again[j] for j in wanted if j in long_ or j in mixed}
    whole = [j for j in wanted if j not in exact]
    if whole:  # whether a cell of the column starts with a zero and a digit, many columns per call
        n = len(again)
        per_batch = max(1, _BATCH_CELLS // max(n, 1))
        for start in range(0, len(whole), per_batch):
            part = whole[start:start + per_batch]
            flat = pd.concat([again[j] for j in part], ignore_index=True) if len(part) > 1 else again[part[0]]
            lead = flat.str.strip().str.match(r"[+-]?0[0-9]").fillna(False).to_numpy(dtype=bool)
            exact.update((j, again[j]) for j, hit in zip(part, lead.reshape(len(part), n).any(axis=1)) if hit)
    return exact


def _leading_zero_columns(data: bytes, sep: str, encoding: str) -> set | None:
    """The positions of the columns where a cell may start with a zero and another digit
    ("02134"), by a scan of the file's bytes (numpy, a few megabytes at a time); None when any
    column may (too many such cells to place, a delimiter or an encoding that does not write ASCII
    as single bytes, quotes on a line before such a cell). A cell is placed by the delimiters
    before it on its line; a header cell, or a cell in quotes after a line break, may be taken for
    one: that only costs a second read of that column."""
    if not encoding.lower().replace("_", "-").startswith(("utf-8", "cp125", "latin", "iso-8859", "ascii")):
        return None  # UTF-16 and UTF-32; in GB18030 a second byte may be a delimiter
    try:
        mark = sep.encode("utf-8" if encoding.lower().startswith("utf") else encoding)  # "utf-8-sig": no BOM
    except UnicodeError:
        return None
    if len(mark) != 1:
        return None if re.search(rb"(?:[\r\n]|" + re.escape(mark) + rb")" + _LEADING_ZERO_CELL, data) else set()
    start = np.zeros(256, dtype=bool)
    start[[10, 13, mark[0]]] = True
    prefix = _PREFIX & ~start  # a tab is a space before a cell, unless it is the delimiter
    raw = np.frombuffer(data, dtype=np.uint8)
    hits: list[int] = []
    if re.match(_LEADING_ZERO_CELL, data[:64].removeprefix(b"\xef\xbb\xbf")):
        hits.append(0)
    for begin in range(0, len(raw), _SCAN_BYTES):
        lo = max(0, begin - 64)
        a = raw[lo:begin + _SCAN_BYTES + 1]
        zero = np.flatnonzero((a[1:-1] == 48) & (a[2:] - 48 < 10)) + 1  # a zero followed by a digit
        zero = zero[zero + lo >= begin]  # each zero once, whichever chunk it falls in
        if not len(zero):
            continue
        before = zero - 1
        for _ in range(16):  # back over the spaces, quotes and signs before the zero
            more = prefix[a[before]] & (before > 0)
            if not more.any():
                break
            before = np.where(more, before - 1, before)
        else:
            return None
        cells = before[start[a[before]]] + 1 + lo  # where each such cell starts in the file
        hits.extend(cells.tolist()[:_MAX_HITS + 1])
        if len(hits) > _MAX_HITS:
            return None
    columns = set()
    for p in hits:
        line = max(data.rfind(b"\n", 0, p), data.rfind(b"\r", 0, p)) + 1
        if b'"' in data[line:p]:  # a delimiter in quotes may come before it
            return None
        columns.add(data.count(mark, line, p))
    return columns


def _is_text(s: pd.Series) -> bool:
    """Whether a column from pandas' reader is typed by the cell rules (text, booleans, or chunks
    read as numbers mixed with chunks of text) rather than kept as pandas' numbers."""
    return pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s)


def _as_text(s: pd.Series, decimal: str) -> pd.Series:
    """A column that :func:`_is_text` picks, as text cells written as in the file."""
    if pd.api.types.is_bool_dtype(s):
        s = s.map({True: "TRUE", False: "FALSE"})
    if not isinstance(s.dtype, pd.StringDtype):  # chunks read as numbers mixed with chunks of text
        s = s.map(lambda v: _cell_text(v, decimal)).astype("str")
    return s


def _rows_with_line_breaks(columns: list[pd.Series]) -> list[int]:
    """The rows (from 0, in order) where a text cell holds a line break (a quoted cell read over
    several lines). Short columns are searched together, as many cells at a time as a batch of
    :func:`_typed_columns`, rather than by one call per column."""
    if not columns:
        return []
    n = len(columns[0])
    hit = np.zeros(n, dtype=bool)
    per_batch = max(1, _BATCH_CELLS // max(n, 1))
    for start in range(0, len(columns), per_batch):
        part = columns[start:start + per_batch]
        flat = pd.concat(part, ignore_index=True) if len(part) > 1 else part[0]
        found = flat.str.contains("\n", regex=False).fillna(False).to_numpy(dtype=bool)
        hit |= found.reshape(len(part), n).any(axis=0)
    return np.flatnonzero(hit).tolist()
