"""A grid of text cells to a DataFrame: the header row (``header="auto"``), unique column
names, the width and row-count checks, then one typed column per column."""
from __future__ import annotations

from collections import Counter

import pandas as pd

from .cells import looks_like_number
from .columns import _typed_columns
from .dialect import _is_missing, _number
from .errors import DataLoadError, EmptyFileError, TooFewRowsError, _warn
from .report import LoadReport

__all__ = ['MIN_ROWS']


#: Clustering needs at least this many data rows (one row = one patient or sample).
MIN_ROWS = 2


def _is_header(rows: list[list[str]], decimal: str) -> bool:
    first = rows[0]
    if not any(c for c in first):
        return False
    if any(c and _number(c, decimal) is not None for c in first):
        return False
    body = rows[1:1001]
    if not body:
        return True
    width = len(first)
    for j in range(width):
        vals = [r[j] for r in body if j < len(r) and r[j] and not _is_missing(r[j])]
        if vals and sum(_number(v, decimal) is not None or looks_like_number(v) for v in vals) >= 0.5 * len(vals):
            return True
    for j, c in enumerate(first):
        if c and any(j < len(r) and r[j] == c for r in body):
            return False
    return True


def _unique_names(names: list[str], notes: list) -> list[str]:
    counts = Counter(names)
    dup = [n for n, k in counts.items() if k > 1]
    if not dup:
        return names
    seen, out, taken = Counter(), [], set(names)
    for n in names:
        seen[n] += 1
        if counts[n] > 1 and seen[n] > 1:
            k = seen[n]
            new = f"{n}_{k}"
            while new in taken:
                k += 1
                new = f"{n}_{k}"
            taken.add(new)
            out.append(new)
        else:
            out.append(n)
    _warn(f"duplicate column name(s) {dup}: the repeats were renamed ({', '.join(o for o, n in zip(out, names) if o != n)}); "
          "check that they are really different columns, and rename them in the file if you like.", notes)
    return out


def _check_rows(n_body: int, names: list[str], min_rows: int) -> None:
    if n_body == 0:
        raise TooFewRowsError(
            f"the file has a header row ({', '.join(names[:6])}{', ...' if len(names) > 6 else ''}) but no data "
            f"rows; clustering needs at least {min_rows} rows, one per patient or sample. If the first row is data, "
            "load with header=False."
        )
    if n_body < min_rows:
        raise TooFewRowsError(
            f"the table has only {n_body} data row(s); clustering needs at least {min_rows} rows, one per patient "
            "or sample. If your samples are in columns instead of rows, transpose the table first."
        )


def _header_choice(header, rows, decimal) -> bool:
    if header == "auto":
        return _is_header(rows, decimal)
    if isinstance(header, bool):
        return header
    raise DataLoadError(f"header must be 'auto', True or False, got {header!r}.")


def _frame(rows: list[list[str]], header, decimal: str, report: LoadReport, min_rows: int) -> pd.DataFrame:
    if not rows:
        raise EmptyFileError("the file is empty (no cells with data); choose the file that holds the table.")
    widths = [len(r) for r in rows]
    width = Counter(widths[1:] or widths).most_common(1)[0][0]
    # R's write.csv(row.names=TRUE): the header lacks the name of the row-name column
    if len(rows) > 1 and len(rows[0]) == width - 1 and sum(w == width for w in widths[1:]) >= 0.9 * (len(rows) - 1):
        rows[0] = [""] + rows[0]
    long = [i for i, r in enumerate(rows) if len(r) > width and any(c for c in r[width:])]
    if long:
        lines = ", ".join(str(i + 1) for i in long[:3])
        raise DataLoadError(
            f"row(s) {lines} have more cells than the others ({max(widths)} instead of {width}); a text cell "
            f"probably contains the delimiter {report.delimiter!r}. Put such cells in double quotes, or save "
            "the file from a spreadsheet program, and upload it again."
        )
    rows = [(r + [""] * (width - len(r)))[:width] for r in rows]
    # drop columns empty everywhere (trailing delimiters, blank spreadsheet columns)
    keep = [j for j in range(width) if any(r[j] for r in rows)]
    rows = [[r[j] for j in keep] for r in rows]
    has_header = _header_choice(header, rows, decimal)
    report.header = has_header
    if has_header:
        names = [c if c else f"col_{j + 1}" for j, c in enumerate(rows[0])]
        body = rows[1:]
    else:
        names = [f"col_{j + 1}" for j in range(len(rows[0]))]
        body = rows
    names = _unique_names(names, report.warnings)
    _check_rows(len(body), names, min_rows)
    # typed together rather than one _column call per column: the same columns, in time linear in
    # the cells of a wide table (see _typed_columns)
    cols = list(_typed_columns([[r[j] for r in body] for j in range(len(names))], names, decimal, report))
    df = _assemble(cols, names, len(body))
    report.n_rows, report.n_cols = df.shape
    return df


def _assemble(cols: list[pd.Series], names: list[str], n_rows: int) -> pd.DataFrame:
    """The typed columns (of ``n_rows`` each) as one DataFrame with columns ``names``, from the
    columns' arrays, neither copied nor stacked into 2-D blocks (``copy=False``: what
    ``pd.concat(cols, axis=1)`` builds, without aligning each Series' index with all the others',
    which was half the time of a 5 x 50 000 table)."""
    df = pd.DataFrame(dict(enumerate(c.array for c in cols)), index=pd.RangeIndex(n_rows), copy=False)
    df.columns = names
    return df
