"""Step 1: bytes (a path, an upload, text) to a DataFrame and a :class:`LoadReport`.

Everything happens in memory: nothing is written to disk and nothing is logged. The
detection rules (encoding, binary content, delimiter, decimal comma, missing tokens,
header, numbers with a few text tokens) are listed in :mod:`mapdp_core.loading`.
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

from .errors import DataLoadError, EmptyFileError, EncodingError, NotATableError, TooFewRowsError, _warn

__all__ = ["MIN_ROWS", "LoadReport", "read_table"]

#: Clustering needs at least this many data rows (one row = one patient or sample).
MIN_ROWS = 2


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


def _excel_frame(data: bytes, kind: str, sheet, header, min_rows: int):
    """An .xlsx (``kind="xlsx"``) or .xls (``"xls"``) workbook's sheet as (DataFrame, report)."""
    report = LoadReport(format="excel")
    rows = _excel_rows(data, sheet, report, kind)
    if not rows:
        raise EmptyFileError("the workbook has no cells with data; choose the sheet or file that holds the table.")
    return _frame(rows, header, ".", report, min_rows), report


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
                return _excel_frame(data, "xlsx", sheet, header, min_rows)
            if any(m.startswith("word/") for m in members):
                kind = "a Word document"
            elif any(m.startswith("ppt/") for m in members):
                kind = "a PowerPoint presentation"
            else:
                kind = "a ZIP archive"
        if data.startswith(_OLE2):
            return _excel_frame(data, "xls", sheet, header, min_rows)
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
