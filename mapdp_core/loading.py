"""Loading clinical tables (CSV, TSV, Excel) and suggesting a likelihood per column.

Three steps, each usable from a notebook and from the app:

1. :func:`read_table` turns a path, bytes or a file-like object into a DataFrame and a
   :class:`LoadReport` (delimiter, decimal mark, encoding, header, shape, warnings).
   Everything happens in memory: nothing is written to disk and nothing is logged.
2. :func:`suggest_roles_and_families` proposes, per column, a role (feature, label,
   identifier, ignored) and a likelihood family, with the reason, as a tidy table that
   a user can inspect and override.
3. :func:`prepare` applies the (possibly overridden) choices: it encodes each feature
   column for its family, standardises the Gaussian columns if asked, and returns what
   ``MAPDP(likelihood=...)`` needs. :func:`missing_summary` tells where values are missing.

Every problem with the input raises a :class:`DataLoadError` (a ``ValueError``) whose
message says what is wrong and what to do; problems that do not stop the work are
reported as :class:`DataLoadWarning` and collected in ``LoadReport.warnings`` or
``Prepared.notes``.

Detection rules (the reasons are repeated in the suggestion table):

* Encoding: a byte-order mark (UTF-8, UTF-16) wins; then strict UTF-8; then
  Windows-1252 (which reads every Latin-1 text too: the two agree on all printable
  characters). Text with NUL bytes in the UTF-16 pattern is read as UTF-16.
  Anything else is refused with advice to re-save as "CSV UTF-8".
* Binary content (control bytes, or the signature of a PNG, JPEG, GIF, PDF, ZIP, ...)
  is "not a table"; an HTML page is recognised too.
* Delimiter: a first line ``sep=X`` (written by Excel) is obeyed; otherwise each of
  ``, ; TAB |`` splits the first 200 lines (quotes respected) and the winner is the
  one giving the most lines with the same number (>= 2) of fields, then the most
  cells that read as numbers, then the most fields. No winner means one column.
* Decimal comma: only when the delimiter is not a comma, and cells like ``1,5``
  outnumber cells like ``1.5``.
* Missing: empty cells and ``? NA N/A n/a NaN nan null NULL #N/A . missing`` (case-
  insensitive). "None" and "-" are kept as values: in clinical sheets they often mean
  "no symptoms" or "negative".
* Header (``header="auto"``): the first row is a header when none of its cells is a
  number and either some column is mostly (>= 50 %) numbers below it, or (an all-text
  table) none of its cells appears again in its own column. Otherwise the columns are
  named ``col_1, col_2, ...``. Pass ``header=True`` or ``False`` to decide yourself.
* A column that is numbers except for a few (<= 10 %, at most 5 distinct) text
  tokens such as ``<5`` or ``n.d.`` becomes numeric with those cells missing, and a
  warning names the tokens.
"""
from __future__ import annotations

import csv
import io
import math
import os
import re
import warnings
import zipfile
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .families import FAMILIES

__all__ = [
    "MAX_CATEGORIES",
    "MIN_ROWS",
    "ROLES",
    "DataLoadError",
    "DataLoadWarning",
    "DuplicateColumnsError",
    "EmptyFileError",
    "EncodingError",
    "LabelError",
    "LoadReport",
    "NotATableError",
    "Prepared",
    "TooFewRowsError",
    "missing_summary",
    "prepare",
    "read_table",
    "suggest_roles_and_families",
]

#: Clustering needs at least this many data rows (one row = one patient or sample).
MIN_ROWS = 2
#: A text column with more distinct values than this is not suggested as categorical.
MAX_CATEGORIES = 50
#: Roles a column can take.
ROLES = ("feature", "label", "identifier", "ignored")
#: Families whose columns are real-valued (standardised on request).
GAUSSIAN_FAMILIES = ("normal_gamma", "normal_wishart", "spherical_gaussian", "gaussian_known_cov")
#: Largest n (number of trials) for which a whole-number column is suggested as binomial.
MAX_BINOMIAL_N = 10
#: Variance/mean above which a count column is suggested as Gaussian instead of Poisson.
MAX_POISSON_DISPERSION = 10.0


# ----------------------------------------------------------------------------- errors

class DataLoadError(ValueError):
    """The data cannot be loaded or prepared; the message says why and what to do."""


class EmptyFileError(DataLoadError):
    """The file holds no data at all."""


class TooFewRowsError(DataLoadError):
    """Fewer data rows than clustering needs (:data:`MIN_ROWS`)."""


class NotATableError(DataLoadError):
    """The content is not a text table or a spreadsheet (an image, a PDF, random bytes ...)."""


class EncodingError(DataLoadError):
    """The text is in an encoding that could not be recognised."""


class DuplicateColumnsError(DataLoadError):
    """Two or more columns share a name."""


class LabelError(DataLoadError):
    """The ground-truth label column cannot be used."""


class DataLoadWarning(UserWarning):
    """Something was changed or set aside while loading or preparing; the work goes on."""


def _warn(message: str, notes: list) -> None:
    notes.append(message)
    warnings.warn(message, DataLoadWarning, stacklevel=3)


# ----------------------------------------------------------------------------- report

@dataclass
class LoadReport:
    """How a table was read.

    Attributes
    ----------
    format : str
        ``"csv"`` (any delimited text) or ``"excel"``.
    delimiter : str or None
        Field separator of a text file (``None`` for Excel or a one-column file).
    decimal : str
        Decimal mark, ``"."`` or ``","``.
    encoding : str or None
        Text encoding used (``None`` for Excel).
    header : bool
        Whether the first row gave the column names.
    n_rows, n_cols : int
        Shape of the returned DataFrame (data rows only).
    sheet : str or None
        Excel sheet read.
    sheets : list of str
        All sheets of an Excel workbook.
    name : str or None
        File name (from ``name=`` or the file object), for display.
    warnings : list of str
        Everything that was changed or set aside (duplicate names renamed, stray text
        in numeric columns, infinite values, ...).
    """

    format: str
    delimiter: str | None = None
    decimal: str = "."
    encoding: str | None = None
    header: bool = False
    n_rows: int = 0
    n_cols: int = 0
    sheet: str | None = None
    sheets: list = field(default_factory=list)
    name: str | None = None
    warnings: list = field(default_factory=list)

    def describe(self) -> str:
        """One line for a user, e.g. ``CSV, ';' delimiter, decimal ',', utf-8, header, 155 x 20``."""
        if self.format == "excel":
            parts = [f"Excel sheet {self.sheet!r}"]
        else:
            names = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe", None: "single column"}
            parts = [f"CSV ({names.get(self.delimiter, repr(self.delimiter))})", f"decimal '{self.decimal}'",
                     str(self.encoding)]
        parts.append("header row" if self.header else "no header (columns named col_1, col_2, ...)")
        parts.append(f"{self.n_rows} rows x {self.n_cols} columns")
        return ", ".join(parts)


# ----------------------------------------------------------------------------- bytes in

_SIGNATURES = [
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"BM", None),  # too short to trust alone; see _binary_kind
    (b"\x1f\x8b", "a gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!", "a RAR archive"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"PAR1", "a Parquet file"),
]
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ZIP = b"PK\x03\x04"


def _source_bytes(source, name):
    """(bytes or str, name hint) from a path, bytes, or a file-like object."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), name
    if isinstance(source, str) and ("\n" in source or "\r" in source):
        return source, name
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise DataLoadError(f"no file at {path!r}; check the path (or pass the file's content as bytes).")
        try:
            with open(path, "rb") as fh:
                return fh.read(), name or os.path.basename(path)
        except OSError as exc:
            raise DataLoadError(f"could not open {path!r} ({exc.strerror}); check the path and its permissions.") from None
    if hasattr(source, "read"):
        if hasattr(source, "seek"):
            try:
                source.seek(0)
            except (OSError, ValueError):
                pass
        try:
            data = source.read()
        except Exception as exc:  # noqa: BLE001  closed file and the like
            raise DataLoadError(f"could not read the uploaded file ({type(exc).__name__}); upload it again.") from None
        hint = name or getattr(source, "name", None)
        if isinstance(data, (bytes, bytearray, memoryview)):
            return bytes(data), (os.path.basename(hint) if isinstance(hint, str) else None)
        if isinstance(data, str):
            return data, (os.path.basename(hint) if isinstance(hint, str) else None)
    raise DataLoadError(
        f"cannot read a table from a {type(source).__name__}; pass a file path, the file's bytes, "
        "or an open file (for example an uploaded file)."
    )


def _binary_kind(data: bytes) -> str | None:
    for sig, kind in _SIGNATURES:
        if kind and data.startswith(sig):
            return kind
    return None


def _looks_utf16(data: bytes) -> str | None:
    head = data[:4096]
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    z_even = even.count(0) / len(even)
    z_odd = odd.count(0) / max(len(odd), 1)
    if z_odd > 0.4 and z_even < 0.05:
        return "utf-16-le"
    if z_even > 0.4 and z_odd < 0.05:
        return "utf-16-be"
    return None


_TEXT_CONTROLS = set(b"\t\n\r\x0b\x0c\x1a")


def _decode(data: bytes) -> tuple[str, str]:
    """(text, encoding) or a DataLoadError saying why the bytes are not text."""
    bom = [(b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")]
    for mark, enc in bom:
        if data.startswith(mark):
            try:
                return data.decode(enc), enc
            except UnicodeDecodeError:
                raise EncodingError(
                    f"the file starts with a {enc.upper()} byte-order mark but is not valid {enc.upper()}; "
                    "open it in a spreadsheet program and save it again as 'CSV UTF-8'."
                ) from None
    if b"\x00" in data[:65536]:
        enc = _looks_utf16(data)
        if enc:
            try:
                return data.decode(enc), enc
            except UnicodeDecodeError:
                pass
        head = data[:4096]
        if sum(1 for b in head if b == 0 or 32 <= b < 127 or b in _TEXT_CONTROLS) >= 0.95 * len(head):
            raise EncodingError(
                "the file looks like text in a wide encoding (UTF-32 or UTF-16 without a byte-order mark) "
                "that could not be recognised; open it in a spreadsheet program and save it as 'CSV UTF-8'."
            )
        raise NotATableError(
            "the file contains binary data, not a text table; upload a CSV/TSV text file or an Excel "
            "workbook (.xlsx)."
        )
    head = data[:65536]
    controls = sum(1 for b in head if b < 32 and b not in _TEXT_CONTROLS)
    if controls > max(2, 0.01 * len(head)):
        raise NotATableError(
            "the file contains binary data, not a text table; upload a CSV/TSV text file or an Excel "
            "workbook (.xlsx)."
        )
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError as exc:
        raise EncodingError(
            f"the text encoding could not be recognised: it is not UTF-8 and not Windows-1252/Latin-1 "
            f"(byte 0x{data[exc.start]:02x} at position {exc.start}); it may be UTF-16, Shift-JIS, GBK or "
            "another encoding. Open the file in a spreadsheet program and save it as 'CSV UTF-8', then "
            "upload it again."
        ) from None


# ----------------------------------------------------------------------------- cells

_NA = {"", "?", "na", "n/a", "nan", "-nan", "null", "#n/a", "#na", ".", "missing"}
_NUM = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_INF = re.compile(r"[+-]?(?:inf|infinity|\u221e)", re.IGNORECASE)
_COMMA_DEC = re.compile(r"[+-]?\d*,\d+")
_DOT_DEC = re.compile(r"[+-]?\d*\.\d+(?:[eE][+-]?\d+)?")


def _is_missing(cell: str) -> bool:
    return cell.lower() in _NA


def _number(cell: str, decimal: str) -> float | None:
    """The float a cell spells, or None."""
    if decimal == ",":
        if "." in cell:
            return None
        cell = cell.replace(",", ".")
    if _NUM.fullmatch(cell):
        return float(cell)
    if _INF.fullmatch(cell):
        return -math.inf if cell.startswith("-") else math.inf
    return None


def _detect_delimiter(lines: list[str]) -> str | None:
    best, best_key = None, None
    order = {"\t": 3, ";": 2, ",": 1, "|": 0}
    for delim in (",", ";", "\t", "|"):
        try:
            rows = list(csv.reader(lines, delimiter=delim))
        except csv.Error:
            continue
        counts = [len(r) for r in rows if r]
        if not counts:
            continue
        mode, freq = Counter(counts).most_common(1)[0]
        if mode < 2:
            continue
        decimal = "," if delim != "," else "."
        cells = [c.strip() for r in rows for c in r]
        numeric = sum(1 for c in cells if c and _number(c, ".") is not None
                      or (decimal == "," and c and _number(c, ",") is not None))
        key = (round(freq / len(counts), 1), numeric / max(len(cells), 1), mode, order[delim])
        if best_key is None or key > best_key:
            best, best_key = delim, key
    return best


def _parse_text(text: str, report: LoadReport) -> list[list[str]]:
    text = text.removeprefix("\ufeff")
    lines = text.splitlines()
    delim = None
    if lines and re.fullmatch(r"\s*sep=(.)\s*", lines[0], flags=re.IGNORECASE):
        delim = re.fullmatch(r"\s*sep=(.)\s*", lines[0], flags=re.IGNORECASE).group(1)
        lines = lines[1:]
    sample = [ln for ln in lines[:400] if ln.strip()][:200]
    if delim is None:
        delim = _detect_delimiter(sample)
    report.delimiter = delim
    try:
        rows = [[c.strip() for c in r] for r in csv.reader(io.StringIO("\n".join(lines)), delimiter=delim or "\x1f")]
    except csv.Error as exc:
        raise DataLoadError(
            f"the text could not be split into cells ({exc}); check for an unclosed quote (\") in the file."
        ) from None
    if text.count('"') % 2 == 1 and any("\n" in c for r in rows[-3:] for c in r):
        start = next(i for i, ln in enumerate(lines) if ln.count('"') % 2 == 1) + 1
        raise DataLoadError(
            f"a double quote (\") opened on line {start} is never closed, so the rest of the file reads as one cell; "
            "remove the stray quote or close it, then upload the file again."
        )
    return _without_empty_rows(rows, report)


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


def _excel_rows(data: bytes, sheet, report: LoadReport, kind: str) -> list[list[str]]:
    engine = "openpyxl" if kind == "xlsx" else "xlrd"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            book = pd.ExcelFile(io.BytesIO(data), engine=engine)
    except ImportError:
        pkg = "openpyxl" if kind == "xlsx" else "xlrd"
        what = "Excel .xlsx" if kind == "xlsx" else "old Excel .xls (97-2003)"
        raise DataLoadError(
            f"reading {what} files needs the Python package '{pkg}', which is not installed; install it, "
            "or save the sheet as .xlsx or 'CSV UTF-8' and upload that."
        ) from None
    except Exception:  # noqa: BLE001  damaged or encrypted workbooks raise many kinds
        raise NotATableError(
            "the file looks like an Excel workbook but could not be opened (damaged or password-protected?); "
            "open it in Excel and save it again as .xlsx or 'CSV UTF-8'."
        ) from None
    names = [str(s) for s in book.sheet_names]
    report.sheets = names
    if sheet is not None:
        if isinstance(sheet, int) and not isinstance(sheet, bool) and 0 <= sheet < len(names):
            sheet = names[sheet]
        if str(sheet) not in names:
            raise DataLoadError(f"the workbook has no sheet {sheet!r}; its sheets are {names}.")
        candidates = [str(sheet)]
    else:
        candidates = names
    for name in candidates:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                frame = book.parse(sheet_name=name, header=None, dtype=object)
        except Exception:  # noqa: BLE001  damaged sheets raise many kinds
            raise NotATableError(
                f"sheet {name!r} could not be read; open the workbook in Excel and save it again as .xlsx "
                "or 'CSV UTF-8'."
            ) from None
        rows = [[_excel_cell(v) for v in row] for row in frame.itertuples(index=False)]
        rows = _without_empty_rows(rows, report)
        if rows:
            report.sheet = name
            if sheet is None and len(names) > 1:
                _warn(f"the workbook has {len(names)} sheets {names}; read {name!r} (choose another with sheet=).",
                      report.warnings)
            return rows
    report.sheet = candidates[0] if candidates else None
    return []


def _excel_cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        if math.isnan(v):
            return ""
        return repr(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(float(v))
    if isinstance(v, pd.Timestamp) or hasattr(v, "isoformat"):
        try:
            if pd.isna(v):
                return ""
        except (TypeError, ValueError):
            pass
        return v.isoformat()
    return str(v).strip()


# ----------------------------------------------------------------------------- grid -> frame

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
        if vals and sum(_number(v, decimal) is not None for v in vals) >= 0.5 * len(vals):
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


def _column(values: list[str], name: str, decimal: str, notes: list) -> pd.Series:
    missing = np.array([v.lower() in _NA for v in values], dtype=bool)
    n_present = int((~missing).sum())
    if n_present == 0:
        return pd.Series([np.nan] * len(values), dtype=float, name=name)
    if decimal == ",":
        cells = [None if m else (v.replace(",", ".") if "." not in v else "x") for v, m in zip(values, missing)]
    else:
        cells = [None if m else v for v, m in zip(values, missing)]
    out, bad = None, []
    try:  # fast path: the whole column reads as numbers (pandas' C parser)
        out = pd.to_numeric(pd.Series(cells, dtype=object), errors="raise").to_numpy(dtype=float)
    except (ValueError, TypeError):
        nums = [None if c is None else _number(c, ".") for c in cells]
        bad = [v for v, c, x in zip(values, cells, nums) if c is not None and x is None]
        if len(bad) <= 0.1 * n_present and len(set(bad)) <= 5 and len(bad) < n_present:
            out = np.array([np.nan if x is None else x for x in nums], dtype=float)
    if out is not None:
        if bad:
            _warn(f"column '{name}': {len(bad)} cell(s) that are not numbers ({', '.join(repr(b) for b in sorted(set(bad)))}) "
                  "are treated as missing; if they carry information (e.g. '<5'), replace them by numbers in the file.",
                  notes)
        n_inf = int(np.isinf(out).sum())
        if n_inf:
            _warn(f"column '{name}' has {n_inf} infinite value(s); they are treated as missing when the features "
                  "are prepared. Check how they arose (a division by zero?) and fix them in the file.", notes)
        finite = out[np.isfinite(out)]
        if np.isfinite(out).all() and np.all(finite == np.round(finite)) and np.all(np.abs(finite) < 2 ** 53):
            return pd.Series(out.astype(np.int64), name=name)
        return pd.Series(out, name=name)
    return pd.Series([np.nan if _is_missing(v) else v for v in values], dtype=object, name=name)


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
    if header == "auto":
        has_header = _is_header(rows, decimal)
    elif isinstance(header, bool):
        has_header = header
    else:
        raise DataLoadError(f"header must be 'auto', True or False, got {header!r}.")
    report.header = has_header
    if has_header:
        names = [c if c else f"col_{j + 1}" for j, c in enumerate(rows[0])]
        body = rows[1:]
    else:
        names = [f"col_{j + 1}" for j in range(len(rows[0]))]
        body = rows
    names = _unique_names(names, report.warnings)
    if not body:
        raise TooFewRowsError(
            f"the file has a header row ({', '.join(names[:6])}{', ...' if len(names) > 6 else ''}) but no data "
            f"rows; clustering needs at least {min_rows} rows, one per patient or sample. If the first row is data, "
            "load with header=False."
        )
    if len(body) < min_rows:
        raise TooFewRowsError(
            f"the table has only {len(body)} data row(s); clustering needs at least {min_rows} rows, one per patient "
            "or sample. If your samples are in columns instead of rows, transpose the table first."
        )
    cols = [_column([r[j] for r in body], names[j], decimal, report.warnings) for j in range(len(names))]
    df = pd.concat(cols, axis=1) if cols else pd.DataFrame(index=range(len(body)))
    df.columns = names
    report.n_rows, report.n_cols = df.shape
    return df


def read_table(source, *, sheet=None, header="auto", name=None, min_rows: int = MIN_ROWS):
    """Read a CSV/TSV/semicolon text file or an Excel sheet into a DataFrame, in memory.

    Parameters
    ----------
    source : str, os.PathLike, bytes or file-like
        A path, the file's bytes, or an open binary or text file (an uploaded file).
        A ``str`` containing a line break is taken as the table's text itself.
    sheet : str or int, optional
        Excel sheet name or position; by default the first sheet that has data.
    header : {"auto", True, False}
        Whether the first row names the columns; ``"auto"`` decides by the rule in
        the module docstring. Without a header, columns are named ``col_1, col_2, ...``.
    name : str, optional
        File name, shown in ``LoadReport.name``; taken from ``source.name`` when there
        is one. The content, not the extension, decides the format (a CSV saved with
        an .xls name is read as CSV).
    min_rows : int, default :data:`MIN_ROWS`
        Fewer data rows than this raise :class:`TooFewRowsError` (clustering needs at
        least two rows; a header-only file has none).

    Returns
    -------
    df : DataFrame
        One row per data row, in file order. Numeric columns are ``int64`` (whole
        numbers, none missing) or ``float64`` (NaN = missing); other columns hold text
        (object dtype, NaN = missing). Entirely empty rows and columns are left out (the
        report's warnings say which rows).
    report : LoadReport
        Delimiter, decimal mark, encoding, header, shape and warnings.

    Raises
    ------
    DataLoadError
        Or one of its subclasses, with a message saying what to do.
    """
    df, report = _read_table(source, sheet=sheet, header=header, name=name, min_rows=min_rows)
    report.name = _source_name(source, name)
    return df, report


def _source_name(source, name):
    if name is not None:
        return str(name)
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source and "\r" not in source):
        return os.path.basename(os.fspath(source))
    hint = getattr(source, "name", None)
    return os.path.basename(hint) if isinstance(hint, str) else None


def _read_table(source, *, sheet, header, name, min_rows):
    """Body of :func:`read_table`."""
    data, name = _source_bytes(source, name)
    if isinstance(data, bytes):
        if not data.strip():
            raise EmptyFileError("the file is empty (0 bytes of data); choose the file that holds the table.")
        kind = _binary_kind(data)
        if data.startswith(_ZIP):
            try:
                members = zipfile.ZipFile(io.BytesIO(data)).namelist()
            except zipfile.BadZipFile:
                raise NotATableError("the file is a damaged ZIP/Excel file; save it again and upload it.") from None
            if any(m.startswith("xl/") for m in members):
                report = LoadReport(format="excel")
                rows = _excel_rows(data, sheet, report, "xlsx")
                if not rows:
                    raise EmptyFileError("the workbook has no cells with data; choose the sheet or file that holds "
                                         "the table.")
                return _frame(rows, header, ".", report, min_rows), report
            if any(m.startswith("word/") for m in members):
                kind = "a Word document"
            elif any(m.startswith("ppt/") for m in members):
                kind = "a PowerPoint presentation"
            else:
                kind = "a ZIP archive"
        if data.startswith(_OLE2):
            report = LoadReport(format="excel")
            rows = _excel_rows(data, sheet, report, "xls")
            if not rows:
                raise EmptyFileError("the workbook has no cells with data; choose the sheet or file that holds the "
                                     "table.")
            return _frame(rows, header, ".", report, min_rows), report
        if kind:
            raise NotATableError(
                f"the file is {kind}, not a table; upload a CSV/TSV text file or an Excel workbook (.xlsx)."
            )
        text, encoding = _decode(data)
    else:
        text, encoding = data, "text (already decoded)"
    if not text.strip():
        raise EmptyFileError("the file is empty (only blank lines); choose the file that holds the table.")
    low = text.lstrip()[:200].lower()
    if low.startswith(("<!doctype html", "<html", "<?xml", "{", "[")) and not re.match(r"\[?\s*[\d.\-+]+\s*,", low):
        what = "a web page (HTML)" if "html" in low else ("XML" if low.startswith("<?xml") else "JSON")
        raise NotATableError(
            f"the file holds {what}, not a table; if it came from a 'download as Excel' link, open it in a "
            "spreadsheet program and save it as .xlsx or 'CSV UTF-8'."
        )
    report = LoadReport(format="csv", encoding=encoding)
    rows = _parse_text(text, report)
    decimal = "."
    if report.delimiter not in (",", None):
        cells = [c for r in rows for c in r if c]
        commas = sum(1 for c in cells if _COMMA_DEC.fullmatch(c))
        dots = sum(1 for c in cells if _DOT_DEC.fullmatch(c))
        if commas > dots:
            decimal = ","
    report.decimal = decimal
    return _frame(rows, header, decimal, report, min_rows), report


# ----------------------------------------------------------------------------- suggestions

_LABEL_WORDS = {"label", "labels", "class", "classes", "target", "diagnosis", "outcome", "cluster", "clusters"}
_ID_WORDS = {"id", "ids", "identifier", "uuid", "guid", "mrn"}


def _tokens(name) -> set[str]:
    s = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", s)
    return {t for t in re.split(r"[^0-9a-zA-Z]+", s.lower()) if t}


def _check_frame(df) -> None:
    if not isinstance(df, pd.DataFrame):
        raise DataLoadError(f"expected a DataFrame (from read_table), got {type(df).__name__}.")
    names = [str(c) for c in df.columns]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DuplicateColumnsError(
            f"duplicate column name(s) {dup}; rename the columns so each is unique (read_table renames "
            "repeats to name_2, name_3, ... for you)."
        )
    if df.shape[1] == 0:
        raise EmptyFileError("the table has no columns; choose the file that holds the data.")


def _as_numeric(s: pd.Series) -> pd.Series | None:
    """The column as float (NaN missing) if it is numeric or all its values are numbers, else None."""
    if pd.api.types.is_bool_dtype(s):
        return s.astype(float)
    if pd.api.types.is_numeric_dtype(s):
        return pd.to_numeric(s, errors="coerce").astype(float)
    present = s.dropna()
    if present.empty:
        return pd.Series(np.nan, index=s.index, dtype=float)
    conv = pd.to_numeric(present.astype(str).str.strip(), errors="coerce")
    if conv.notna().all():
        out = pd.Series(np.nan, index=s.index, dtype=float)
        out[present.index] = conv.astype(float)
        return out
    return None


def _examples(values, k: int = 4) -> str:
    out = []
    for v in pd.unique(np.asarray(values, dtype=object)):
        if len(out) == k:
            out.append("...")
            break
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            v = int(v)
        out.append(str(v))
    return ", ".join(out)


def _suggest_one(s: pd.Series, n_rows: int, max_categories: int) -> dict:
    name = s.name
    num = _as_numeric(s)
    n_missing = int(s.isna().sum())
    words = _tokens(name)
    row = {"column": name, "role": "feature", "family": None, "kind": "", "reason": "",
           "n_missing": n_missing, "n_distinct": 0, "examples": ""}
    if num is not None:
        n_inf = int(np.isinf(num).sum())
        finite = num[np.isfinite(num)]
        values = finite.to_numpy()
        distinct = np.unique(values)
        row["n_distinct"] = int(distinct.size)
        row["examples"] = _examples(values)
        integer = bool(values.size) and bool(np.all(values == np.round(values)))
        row["kind"] = "integer" if integer else "real"
        inf_note = (f"; {n_inf} infinite value(s) will be treated as missing" if n_inf else "")
    else:
        present = s.dropna().astype(str)
        distinct = pd.unique(present)
        row["n_distinct"] = len(distinct)
        row["examples"] = _examples(present)
        row["kind"] = "text"
        inf_note = ""
        n_inf = 0
        values = present.to_numpy()
    n_obs = len(values)
    nd = row["n_distinct"]
    if n_obs == 0:
        return {**row, "role": "ignored", "kind": "empty",
                "reason": f"all {n_rows} values are missing" + (" or infinite" if n_inf else "")
                + "; there is nothing to cluster on."}
    if words & _LABEL_WORDS:
        if nd < 2:
            return {**row, "role": "ignored",
                    "reason": f"named like a ground-truth label but has a single value ({row['examples']}); a label "
                              "needs at least two classes to compare clusters with."}
        return {**row, "role": "label",
                "reason": f"named like a ground-truth label ({nd} classes); used to evaluate the clusters, not to "
                          "form them."}
    if nd == 1:
        return {**row, "role": "ignored",
                "reason": f"constant: every observed value is {row['examples']}; it cannot separate clusters."}
    if words & _ID_WORDS and (row["kind"] in ("integer", "text")):
        return {**row, "role": "identifier", "reason": "named like an identifier; kept to label rows, not clustered."}
    if row["kind"] == "text" and nd == n_obs == n_rows and nd > 2:
        return {**row, "role": "identifier",
                "reason": "text with a different value in every row; looks like an identifier (kept to label rows)."}
    if row["kind"] == "integer" and nd == n_obs == n_rows and nd > 2:
        srt = np.sort(values)
        if np.array_equal(srt, np.arange(srt[0], srt[0] + n_rows)) and srt[0] in (0, 1):
            return {**row, "role": "identifier",
                    "reason": f"the row numbers {int(srt[0])}..{int(srt[-1])}; looks like an identifier, not a "
                              "measurement."}
    if nd == 2:
        vals = sorted(str(v) for v in distinct) if row["kind"] == "text" else [_examples([v]) for v in distinct]
        is01 = row["kind"] != "text" and set(np.asarray(distinct, dtype=float)) == {0.0, 1.0}
        recode = "" if is01 else " (recoded to 0/1)"
        return {**row, "family": "bernoulli", "reason": f"two values ({', '.join(vals)}){recode}" + inf_note + "."}
    if row["kind"] == "text":
        if nd > max_categories or (nd > 10 and nd > n_obs / 2):
            return {**row, "role": "ignored",
                    "reason": f"text with {nd} different values in {n_obs} rows: too many categories to learn from "
                              f"(more than {max_categories}, or most seen only once or twice). If it identifies rows, "
                              "make it the identifier; if it is free text, group it into a few categories first."}
        return {**row, "family": "categorical", "reason": f"text with {nd} categories."}
    lo, hi = float(values.min()), float(values.max())
    if row["kind"] == "integer":
        if lo >= 0 and hi <= MAX_BINOMIAL_N:
            return {**row, "family": "binomial",
                    "reason": f"whole numbers {int(lo)}..{int(hi)}: a small ordinal scale or count, modelled as "
                              f"binomial with n = {int(hi)}" + inf_note + "."}
        if lo < 0 and hi - lo <= MAX_BINOMIAL_N:
            return {**row, "family": "binomial",
                    "reason": f"whole numbers {int(lo)}..{int(hi)}: an ordinal scale, shifted to 0..{int(hi - lo)} and "
                              f"modelled as binomial with n = {int(hi - lo)}" + inf_note + "."}
        if lo >= 0:
            mean, var = values.mean(), values.var()
            disp = var / mean if mean > 0 else 0.0
            if disp <= MAX_POISSON_DISPERSION:
                return {**row, "family": "poisson",
                        "reason": f"non-negative whole numbers {int(lo)}..{int(hi)}: counts, modelled as Poisson"
                                  + inf_note + "."}
            return {**row, "family": "normal_gamma",
                    "reason": f"whole numbers {int(lo)}..{int(hi)} but far more spread than Poisson counts "
                              f"(variance/mean = {disp:.0f} > {MAX_POISSON_DISPERSION:g}); modelled as a real "
                              "measurement (choose poisson if these are counts)" + inf_note + "."}
        return {**row, "family": "normal_gamma",
                "reason": f"whole numbers {int(lo)}..{int(hi)} including negatives; modelled as real" + inf_note + "."}
    return {**row, "family": "normal_gamma", "reason": "real numbers; modelled as Gaussian (normal_gamma)"
            + inf_note + "."}


def suggest_roles_and_families(df: pd.DataFrame, *, max_categories: int = MAX_CATEGORIES) -> pd.DataFrame:
    """Suggest a role and a likelihood family for each column, with the reason.

    Rules, in order (the first that applies wins):

    * all values missing, or one value only -> ``ignored``;
    * named like a label (a word of the name is label, class, target, diagnosis,
      outcome or cluster) -> ``label`` (only the first such column; a later one is
      ``ignored``); with a single value -> ``ignored``;
    * named like an identifier (a word id, identifier, uuid, guid, mrn) with whole
      numbers or text, text with a different value in every row, or whole numbers that
      are the row numbers 0..N-1 / 1..N -> ``identifier`` (only the first);
    * two distinct values (numbers or text) -> ``bernoulli`` (recoded to 0/1);
    * text: at most ``max_categories`` categories (and, above 10, at most one per two
      rows) -> ``categorical``; more -> ``ignored`` (too many categories);
    * whole numbers 0..n with n <= 10 -> ``binomial`` (n = the maximum; an ordinal
      scale); a range of at most 10 with negatives -> ``binomial`` after a shift to 0;
    * other non-negative whole numbers -> ``poisson``, unless the variance exceeds 10
      times the mean (a measurement such as an enzyme level, badly fitted by a
      Poisson) -> ``normal_gamma``;
    * everything else numeric -> ``normal_gamma``.

    Parameters
    ----------
    df : DataFrame
        As returned by :func:`read_table` (any DataFrame with unique column names works).
    max_categories : int, default :data:`MAX_CATEGORIES`

    Returns
    -------
    DataFrame
        One row per column of ``df``, in order, with ``column``, ``role``, ``family``
        (None for non-features), ``kind`` (integer, real, text, empty), ``reason``,
        ``n_missing``, ``n_distinct`` and ``examples``. Pass it (possibly edited) to
        :func:`prepare`.
    """
    _check_frame(df)
    rows = [_suggest_one(df[c], len(df), max_categories) for c in df.columns]
    taken = set()
    for r in rows:
        if r["role"] in ("label", "identifier"):
            if r["role"] in taken:
                r["reason"] = (f"another {r['role']} column comes first; make this one the {r['role']} instead if it "
                               f"is the right one. ({r['reason']})")
                r["role"] = "ignored"
            else:
                taken.add(r["role"])
    cols = ["column", "role", "family", "kind", "reason", "n_missing", "n_distinct", "examples"]
    out = pd.DataFrame(rows, columns=cols)
    out["family"] = pd.Series([r["family"] for r in rows], dtype=object)
    return out


# ----------------------------------------------------------------------------- prepare

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
        0, 1, ...), ``{"shift": m}`` (m was subtracted), ``{"center": c, "scale": s}``
        (standardised: x = (raw - c) / s).
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


_POSITIVE = {"1", "yes", "y", "true", "t", "positive", "pos", "present", "+", "ja", "oui", "si", "abnormal"}


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


def _encode(s: pd.Series, family: str, name, notes: list, max_categories: int):
    """(float array, encoding dict) for one feature column."""
    num = _as_numeric(s)
    if family in ("bernoulli", "categorical"):
        mask = s.notna() & ~(np.isinf(num) if num is not None else False)
        keys = (num if num is not None else s.astype(str).str.strip())[mask]
        cats = sorted(pd.unique(keys), key=lambda v: (isinstance(v, str), v))
        if family == "bernoulli":
            if len(cats) > 2:
                raise DataLoadError(
                    f"column '{name}' has {len(cats)} different values ({_examples(keys)}) but bernoulli needs two; "
                    "choose categorical (or binomial for an ordinal scale)."
                )
            if num is not None and set(cats) <= {0.0, 1.0}:
                cats = [0.0, 1.0]
            elif len(cats) == 2 and str(cats[0]).strip().lower() in _POSITIVE \
                    and str(cats[1]).strip().lower() not in _POSITIVE:
                cats = [cats[1], cats[0]]
        elif len(cats) > max_categories:
            _warn(f"column '{name}' has {len(cats)} categories; with so many, each is seen in few rows and the "
                  "column mostly adds noise. Consider setting its role to 'ignored' or grouping the categories.", notes)
        lookup = {c: float(i) for i, c in enumerate(cats)}
        out = np.full(len(s), np.nan)
        out[mask.to_numpy()] = [lookup[v] for v in keys]
        labels = [int(c) if isinstance(c, float) and c.is_integer() else c for c in cats]
        return out, {"codes": labels}
    if num is None:
        present = s.dropna().astype(str)
        bad = [v for v in pd.unique(present) if pd.isna(pd.to_numeric(v, errors="coerce"))][:3]
        raise DataLoadError(
            f"column '{name}' holds text (e.g. {', '.join(repr(b) for b in bad)}) but the {family} likelihood needs "
            "numbers; choose categorical (or bernoulli for two values), or set the column's role to 'ignored'."
        )
    x = num.to_numpy(dtype=float).copy()
    n_inf = int(np.isinf(x).sum())
    if n_inf:
        x[np.isinf(x)] = np.nan
        _warn(f"column '{name}': {n_inf} infinite value(s) are treated as missing.", notes)
    enc = {}
    if family == "binomial":
        lo = np.nanmin(x) if np.isfinite(x).any() else 0.0
        if lo < 0:
            x = x - lo
            enc["shift"] = float(lo)
    return x, enc


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


def prepare(df: pd.DataFrame, roles=None, families=None, standardize: str = "none", *,
            max_categories: int = MAX_CATEGORIES) -> Prepared:
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

    Returns
    -------
    Prepared
        Unpacks as ``X, likelihood, labels, ids``: ``MAPDP(likelihood=likelihood).fit(X)``
        runs as is. Every row is kept, in order (missing values stay NaN; MAP-DP
        marginalises them). Bernoulli columns are 0/1 (a "yes"-like value, or else the
        second in sorted order, is 1), categorical columns are codes 0..L-1 in sorted
        order, binomial columns with negative values are shifted to start at 0, and
        infinite values become missing. ``.encodings`` records each mapping.

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
    feats = [c for c in df.columns if role[c] == "feature"]
    if not feats:
        raise DataLoadError("no column has the role 'feature'; choose at least one column to cluster on.")
    X, likelihood, encodings = {}, {}, {}
    for c in feats:
        fam = family.get(c)
        if fam is None or (isinstance(fam, float) and math.isnan(fam)):
            raise DataLoadError(f"column '{c}' is a feature but has no likelihood family; choose one of "
                                f"{sorted(FAMILIES)}, or set its role to 'ignored'.")
        if fam not in FAMILIES:
            raise DataLoadError(f"unknown family {fam!r} for column '{c}'; choose one of {sorted(FAMILIES)}.")
        if df[c].isna().all():
            raise DataLoadError(f"column '{c}' has no values (all missing); set its role to 'ignored'.")
        x, enc = _encode(df[c], fam, c, notes, max_categories)
        if fam in GAUSSIAN_FAMILIES and standardize in ("zscore", "robust"):
            x, st = _standardize(x, standardize)
            enc.update(st)
        X[c] = x
        likelihood[c] = fam
        if enc:
            encodings[c] = enc
    features = pd.DataFrame(X, index=df.index, columns=feats)
    from .spec import (
        parse,  # late import: keeps read_table usable without compiling anything
    )

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
    miss = df.isna()
    for c in df.columns:
        s = df[c]
        if isinstance(s, pd.Series) and pd.api.types.is_float_dtype(s):
            miss[c] = miss[c] | np.isinf(s)
    n = miss.sum(axis=0).astype(int).to_numpy()
    summary = pd.DataFrame({"column": list(df.columns), "n_missing": n,
                            "fraction": n / len(df) if len(df) else np.zeros(len(n))})
    return summary, df[miss.any(axis=1)]
