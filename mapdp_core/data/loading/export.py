"""Tables out: CSV downloads that a spreadsheet program opens without running anything.

A cell such as ``=cmd|' /C calc'!A0`` or ``=HYPERLINK(...)`` written to a CSV becomes a
formula when the file is opened in Excel or LibreOffice (CSV or formula injection; OWASP,
"CSV Injection"). Uploaded tables and their labels go back to users in the assignments,
predictions and comparison downloads, so every text cell that a spreadsheet would read
as a formula is neutralised the way OWASP recommends: a single quote is put in front, so
the program shows the text as it was typed (the quote is visible in a plain text editor,
and tells the reader why). Real numbers are written as numbers: only strings are changed,
and a text cell that is only a number as a table writes it ("-5", "-1,452.5", "+12%", "-3e-4")
is left alone: a spreadsheet reads it as that number, never as a formula, and the uploaded
cells go back as they were.
"""
from __future__ import annotations

import re

import pandas as pd

__all__ = ["FORMULA_TRIGGERS", "csv_bytes", "neutralise_cell"]

#: Leading characters that make a spreadsheet read a cell as a formula (OWASP's list).
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
#: A signed number and nothing else (digits with "," "." or space grouping, an exponent, a
#: trailing percent sign): no function, reference or operator a formula needs.
_PLAIN_NUMBER = re.compile(r"[+-] ?(?:\d[\d,. ]*)?\.?\d(?:[eE][+-]?\d+)? ?%?")


def neutralise_cell(value):
    """``value`` with a single quote in front when it is text starting with one of
    :data:`FORMULA_TRIGGERS`, unless it is a plain signed number ("-5", "-1,452"); anything
    else (numbers, missing values, other text) unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_TRIGGERS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def _is_text_column(s: pd.Series) -> bool:
    return (s.dtype == object or isinstance(s.dtype, (pd.StringDtype, pd.CategoricalDtype))
            or pd.api.types.is_string_dtype(s.dtype))


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The table as UTF-8 CSV bytes (no index), safe to open in a spreadsheet program.

    Every text cell and column name that begins with ``=``, ``+``, ``-``, ``@``, a tab or a
    carriage return gets a leading single quote (``=1+2`` is written ``'=1+2``), so that a
    spreadsheet shows it as text instead of evaluating it. Numbers stored as numbers
    (``-1.5`` as a float) are written unchanged, as are missing values (empty cells).

    Parameters
    ----------
    frame : DataFrame

    Returns
    -------
    bytes
        UTF-8 text without a byte-order mark, CRLF line ends, one line per row after the
        header line (a cell holding a line break is quoted).

    Raises
    ------
    TypeError
        When ``frame`` is not a DataFrame.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"csv_bytes needs a pandas DataFrame, got {type(frame).__name__}; build one with "
                        "pandas.DataFrame(...) first.")
    names = [neutralise_cell(c) for c in frame.columns]
    if frame.shape[1] == 0:
        return pd.DataFrame(index=frame.index).to_csv(index=False, lineterminator="\r\n").encode("utf-8")
    columns = []
    for j in range(frame.shape[1]):
        s = frame.iloc[:, j]
        if _is_text_column(s):
            s = s.astype(object).map(neutralise_cell)
        columns.append(s)
    out = pd.concat(columns, axis=1, ignore_index=True)
    out.columns = names
    # CRLF line ends (RFC 4180) also make the writer quote any cell holding a lone CR or LF, so a
    # line break inside a cell can never start a new, unescaped line
    return out.to_csv(index=False, lineterminator="\r\n").encode("utf-8")
