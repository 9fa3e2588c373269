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

from .columns import _column, _numeric_series
from .dialect import _NA, _detect_decimal, _detect_delimiter
from .errors import _warn
from .grid import _check_rows, _header_choice, _unique_names
from .report import LoadReport
from .text_encoding import _SAMPLE_BYTES

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
    lines = head.splitlines()[:-1]  # the last line of the sample may be cut
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
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = pd.read_csv(io.BytesIO(data), sep=sep, header=None, skiprows=skip + first + int(has_header),
                                decimal=decimal, encoding=pandas_encoding, keep_default_na=False,
                                na_values=_PANDAS_NA, skipinitialspace=True, skip_blank_lines=True, engine="c",
                                index_col=False, quotechar='"', doublequote=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, UnicodeError):
        return None
    if table.shape[1] != width:
        return None
    report.header = has_header
    raw = rows[0] if has_header else [""] * width
    keep = [j for j in range(width) if raw[j] or table.iloc[:, j].notna().any()]
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
    cols, spans = [], []
    for k, name in enumerate(names):
        s = table.pop(k)
        if pd.api.types.is_bool_dtype(s):
            s = s.map({True: "TRUE", False: "FALSE"})
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            if pd.api.types.is_integer_dtype(s) and s.dtype.kind == "i":
                cols.append(pd.Series(s.to_numpy(dtype=np.int64), name=name))
            else:
                cols.append(_numeric_series(s.to_numpy(dtype=float), name, report))
            continue
        if not isinstance(s.dtype, pd.StringDtype):  # chunks read as numbers mixed with chunks of text
            s = s.map(lambda v: _cell_text(v, decimal)).astype("str")
        spans.extend(np.flatnonzero(s.str.contains("\n", regex=False).fillna(False).to_numpy()).tolist())
        cols.append(_column(s, name, decimal, report))
        del s
    if spans:
        rows_hit = sorted(set(spans))
        _warn(f"{len(rows_hit)} row(s) (data row {', '.join(str(i + 1) for i in rows_hit[:4])}"
              f"{', ...' if len(rows_hit) > 4 else ''}) hold a cell with a line break inside quotes. If the table "
              "has no text with line breaks, a double quote (\") is not closed where it should be and lines were "
              "merged: fix the quotes and upload the file again.", report.warnings)
    df = pd.concat(cols, axis=1)
    df.columns = names
    report.n_rows, report.n_cols = df.shape
    return df
