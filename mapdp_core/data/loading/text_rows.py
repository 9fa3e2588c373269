"""The careful path for text: the whole text split into rows of stripped cells by the csv
module, with the ``sep=`` line obeyed, rows run over several lines reported, an unclosed
quote refused and empty rows left out.

Lines end only at LF, CR LF and CR, as CSV (RFC 4180) and pandas' reader define
them: :meth:`str.splitlines` also breaks at form feed, vertical tab, U+001C-U+001E, U+0085,
U+2028 and U+2029, which a cell may hold (text pasted from a word processor), and a row cut
there shifted its values into the wrong columns. :func:`_lines` is used by both readers."""
from __future__ import annotations

import csv
import io
import re

from .dialect import _detect_delimiter
from .errors import DataLoadError, _warn
from .report import LoadReport


#: the line breaks of a CSV file; no other character ends a row
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _lines(text: str) -> list[str]:
    """``text`` cut at LF, CR LF and CR only (what :meth:`str.splitlines` gives for a
    file with no other line separator): U+2028, U+0085, a form feed ... stay in their cell."""
    lines = _LINE_BREAK.split(text)
    if lines[-1] == "":  # the file's last line break ends a line, it does not start one
        lines.pop()
    return lines


def _parse_text(text: str, report: LoadReport) -> list[list[str]]:
    text = text.removeprefix("\ufeff")
    lines = _lines(text)
    delim, offset = None, 0
    if lines and re.fullmatch(r"\s*sep=(.)\s*", lines[0], flags=re.IGNORECASE):
        delim = re.fullmatch(r"\s*sep=(.)\s*", lines[0], flags=re.IGNORECASE).group(1)
        lines, offset = lines[1:], 1
    sample = [ln for ln in lines[:400] if ln.strip()][:200]
    if delim is None:
        delim = _detect_delimiter(sample)
    report.delimiter = delim
    rows, spans, previous = [], [], 0
    try:
        reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=delim or "\x1f")
        for r in reader:
            if reader.line_num - previous > 1:  # one row read from several lines: a cell with a line break
                spans.append((previous + 1 + offset, reader.line_num + offset))
            previous = reader.line_num
            rows.append([c.strip() for c in r])
    except csv.Error as exc:
        raise DataLoadError(
            f"the text could not be split into cells ({exc}); check for an unclosed quote (\") in the file."
        ) from None
    if text.count('"') % 2 == 1 and any("\n" in c for r in rows[-3:] for c in r):
        start = next(i for i, ln in enumerate(lines) if ln.count('"') % 2 == 1) + 1 + offset
        raise DataLoadError(
            f"a double quote (\") opened on line {start} is never closed, so the rest of the file reads as one cell; "
            "remove the stray quote or close it, then upload the file again."
        )
    if spans:
        _warn_line_breaks(spans, sum(1 for ln in lines if ln.strip()), sum(1 for r in rows if any(r)), report)
    return _without_empty_rows(rows, report)


def _warn_line_breaks(spans, n_lines: int | None, n_rows: int | None, report: LoadReport) -> None:
    where = ", ".join(f"{a}-{b}" for a, b in spans[:4]) + (", ..." if len(spans) > 4 else "")
    counted = f"; {n_lines} non-blank lines gave {n_rows} rows" if n_lines is not None else ""
    _warn(f"{len(spans)} row(s) run over several lines of the file (lines {where}) because a quoted cell holds a "
          f"line break{counted}. If the table has no text with line breaks, a double quote (\") is not closed "
          "where it should be and lines were merged: fix the quotes and upload the file again.", report.warnings)


def _without_empty_rows(rows: list[list[str]], report: LoadReport) -> list[list[str]]:
    """Rows with at least one non-empty cell. Rows of empty cells (",,," lines, blank
    spreadsheet rows) hold nothing to cluster; leaving them out is said in the report, so
    that a row count that differs from the file's is explained. Blank lines are not rows."""
    empty = [i for i, r in enumerate(rows) if not any(c for c in r)]
    if not empty:
        return rows
    cells = [i for i in empty if len(rows[i]) > 1]
    if cells:
        where = ", ".join(str(i + 1) for i in cells[:5]) + (", ..." if len(cells) > 5 else "")
        _warn(f"{len(cells)} row(s) with no value in any cell (row {where} of the file) were left out: they hold "
              "no data. Give such a row at least an identifier if it stands for a record.", report.warnings)
    return [r for r in rows if any(c for c in r)]
