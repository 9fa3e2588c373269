"""Step 1: bytes (a path, an upload, text) to a DataFrame and a :class:`LoadReport`.

Everything happens in memory: nothing is written to disk and nothing is logged. The
detection rules (encoding, binary content, delimiter, decimal comma, missing tokens,
header, numbers with a few text tokens) are listed in :mod:`mapdp_core.loading`.
"""
from __future__ import annotations

import codecs
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

from .cells import (decimal_evidence, has_both_decimal_marks, looks_like_number, parse_dates, parse_numbers,
                    units_of)
from .errors import DataLoadError, EmptyFileError, EncodingError, NotATableError, TooFewRowsError, _warn

__all__ = ["FAST_PATH_BYTES", "MIN_ROWS", "LoadReport", "read_table"]

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
        in numeric columns, infinite values, formula cells without a saved result,
        cells with line breaks, ...).
    column_notes : dict
        ``{column: note}`` for columns read by a rule a user should know about: numbers
        with a unit, percentages, thousands separators, a decimal comma, dates.
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
    column_notes: dict = field(default_factory=dict)

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


# ----------------------------------------------------------------------------- encoding

_BOMS = [  # UTF-32 before UTF-16: the UTF-32-LE mark begins with the UTF-16-LE one
    (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"),
]
_TEXT_CONTROLS = set(b"\t\n\r\x0b\x0c\x1a")
#: Windows-1252 bytes 0x80-0x9F that Western text does use (euro sign, typographic quotes,
#: dashes, ellipsis, bullet, trade mark); the others there are rare in text and common as
#: lead bytes of Shift-JIS and GBK characters
_CP1252_PUNCTUATION = set(b"\x80\x82\x84\x85\x91\x92\x93\x94\x95\x96\x97\x99")
#: one GB18030 character (4 bytes, 2 bytes) or a stray high byte, scanned left to right
_GB_TOKEN = re.compile(rb"[\x81-\xfe][\x30-\x39][\x81-\xfe][\x30-\x39]|[\x81-\xfe][\x40-\x7e\x80-\xfe]|[\x80-\xff]")
_SAMPLE_BYTES = 1 << 20


def _zero_pattern(head: bytes, period: int) -> list[float]:
    """Share of zero bytes at each offset modulo ``period`` (UTF-16/32 text of ASCII characters
    has zeros at fixed offsets)."""
    n = len(head) - len(head) % period
    return [head[k:n:period].count(0) / max(n // period, 1) for k in range(period)]


def _wide_encoding(data: bytes) -> str | None:
    """UTF-32 or UTF-16 (LE/BE) without a byte-order mark, recognised by where the zeros are."""
    head = data[:4096]
    if len(head) < 8:
        return None
    z4 = _zero_pattern(head, 4)
    if z4[0] < 0.05 and min(z4[1:]) > 0.9:
        return "utf-32-le"
    if z4[3] < 0.05 and min(z4[:3]) > 0.9:
        return "utf-32-be"
    z2 = _zero_pattern(head, 2)
    if z2[1] > 0.4 and z2[0] < 0.05:
        return "utf-16-le"
    if z2[0] > 0.4 and z2[1] < 0.05:
        return "utf-16-be"
    return None


def _legacy_encoding(data: bytes) -> str | None:
    """Windows-1252 or GB18030 for text that is not UTF-8, when the bytes make it plausible.

    Western text has isolated accented letters (``Jos\\xe9``): a high byte with ASCII on both
    sides, mostly in 0xA0-0xFF. Chinese text in GBK/GB18030 has high bytes in pairs, nearly
    all within the GB2312 block of common characters (both bytes 0xA1-0xFE). Japanese
    Shift-JIS and Big5 have many pairs outside that block and are refused (EUC-KR cannot be
    told from GB2312 by its bytes: it is read as GB18030)."""
    sample = data[:_SAMPLE_BYTES]
    high = np.flatnonzero(np.frombuffer(sample, dtype=np.uint8) >= 0x80).tolist()
    if not high:
        return None
    at = set(high)
    isolated = sum(1 for i in high if i - 1 not in at and i + 1 not in at)
    c1 = [sample[i] for i in high if sample[i] < 0xA0]
    latin = (isolated >= 0.7 * len(high)
             and (len(c1) <= 0.5 * len(high) or all(b in _CP1252_PUNCTUATION for b in c1)))
    if latin:
        return "cp1252"
    tokens = _GB_TOKEN.findall(sample)
    common = sum(1 for t in tokens if len(t) == 2 and 0xA1 <= t[0] <= 0xF7 and 0xA1 <= t[1] <= 0xFE)
    if tokens and common >= 0.9 * len(tokens):
        return "gb18030"
    return None


_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def _mostly_utf8(data: bytes) -> bool:
    """Whether at least half of the high bytes of the sample form valid UTF-8 sequences."""
    sample = data[:_SAMPLE_BYTES]
    n_high = int(np.count_nonzero(np.frombuffer(sample, dtype=np.uint8) >= 0x80))
    in_sequences = sum(len(m) for m in _UTF8_SEQUENCE.findall(sample))
    return n_high > 0 and in_sequences >= 0.5 * n_high


def _check_decodes(data: bytes, encoding: str) -> None:
    """Raise EncodingError unless all of ``data`` decodes as ``encoding`` into text without NULs
    (checked in slices, so a large file is never held twice)."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    step = 1 << 20
    for start in range(0, len(data), step):
        try:
            chunk = decoder.decode(data[start:start + step], final=start + step >= len(data))
        except UnicodeDecodeError as exc:
            where = start + exc.start
            raise EncodingError(
                f"the file is not valid {encoding.upper()} text (byte 0x{data[where]:02x} at position {where} "
                "does not fit); it may mix encodings. Open it in a spreadsheet program, save it as 'CSV UTF-8' "
                "and upload it again."
            ) from None
        if "\x00" in chunk:
            raise EncodingError(
                f"the file read as {encoding.upper()} contains NUL characters, so its encoding was not recognised; "
                "open it in a spreadsheet program, save it as 'CSV UTF-8' and upload it again."
            )


def _detect_encoding(data: bytes) -> str:
    """The text encoding of ``data`` (checked to decode in full), or a DataLoadError saying why
    the bytes are not text. Rules: in :mod:`mapdp_core.loading`."""
    for mark, enc in _BOMS:
        if data.startswith(mark):
            _check_decodes(data, enc)
            return enc
    if b"\x00" in data[:65536]:
        enc = _wide_encoding(data)
        if enc:
            _check_decodes(data, enc)
            return enc
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
        _check_decodes(data, "utf-8")
        return "utf-8"
    except EncodingError as exc:
        utf8_error = exc
    if _mostly_utf8(data):  # a UTF-8 file with a few stray bytes: no fallback reads it right
        raise utf8_error from None
    enc = _legacy_encoding(data)
    if enc:
        try:
            _check_decodes(data, enc)
            return enc
        except EncodingError:
            pass
    raise EncodingError(
        "the text encoding could not be recognised: it is not UTF-8, and neither Windows-1252/Latin-1 "
        "(Western European) nor GBK/GB18030 (Chinese) reads it plausibly; it may be Shift-JIS, Big5, EUC-KR or "
        "a mixture of encodings. Open the file in a spreadsheet program and save it as 'CSV UTF-8', then "
        "upload it again."
    )


def _decode(data: bytes) -> tuple[str, str]:
    """(text, encoding) or a DataLoadError saying why the bytes are not text."""
    enc = _detect_encoding(data)
    return data.decode(enc), enc


# ----------------------------------------------------------------------------- cells

_NA = {"", "?", "na", "n/a", "nan", "-nan", "null", "#n/a", "#na", ".", "missing"}
_NUM = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_INF = re.compile(r"[+-]?(?:inf|infinity|\u221e)", re.IGNORECASE)
_COMMA_DEC = re.compile(r"[+-]?\d*,\d+")
_DOT_DEC = re.compile(r"[+-]?\d*\.\d+(?:[eE][+-]?\d+)?")


def _is_missing(cell: str) -> bool:
    return cell.lower() in _NA


def _number(cell: str, decimal: str) -> float | None:
    """The float a plain number cell spells (no separators or units), or None."""
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
        # a delimiter that splits the first line (the header) like the rest beats one that splits
        # decimal commas ('70,12' into '70' and '12') but not the header
        key = (round(freq / len(counts), 1), counts[0] == mode, round(numeric / max(len(cells), 1), 2), mode,
               order[delim])
        if best_key is None or key > best_key:
            best, best_key = delim, key
    return best


def _detect_decimal(rows: list[list[str]], delimiter: str | None) -> str:
    """The file's decimal mark: a comma only when the delimiter is not one, and cells that prove
    a decimal comma (``1,5``, ``1.234,5``) outnumber those that prove a point; with no proof
    either way, plain ``1,5``-like cells against ``1.5``-like ones."""
    if delimiter in (",", None):
        return "."
    cells = [c for r in rows for c in r if c and c[-1:].isdigit() or c.endswith("%")]
    proof = Counter(e for c in cells for e in [decimal_evidence(c)] if e)
    if proof:
        return "," if proof[","] > proof["."] else "."
    commas = sum(1 for c in cells if _COMMA_DEC.fullmatch(c))
    dots = sum(1 for c in cells if _DOT_DEC.fullmatch(c))
    return "," if commas > dots else "."


# ----------------------------------------------------------------------------- text -> rows (careful path)

def _parse_text(text: str, report: LoadReport) -> list[list[str]]:
    text = text.removeprefix("\ufeff")
    lines = text.splitlines()
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


# ----------------------------------------------------------------------------- Excel

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
            if kind == "xlsx":
                _report_uncached_formulas(data, name, report)
            return rows
    report.sheet = candidates[0] if candidates else None
    return []


def _report_uncached_formulas(data: bytes, sheet: str, report: LoadReport) -> None:
    """Say which formula cells have no saved result. A workbook written by a program that does
    not calculate (a script, some exporters) stores formulas without their values; they read
    as empty cells, which would otherwise pass as missing data without a word."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            if not any(m.startswith("xl/worksheets/") and re.search(rb"<f[ >/]", archive.read(m))
                       for m in archive.namelist()):
                return
        import openpyxl

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            formulas = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=False)[sheet]
            values = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)[sheet]
            by_column: dict[int, list[str]] = {}
            header: dict[int, str] = {}
            rows_f = formulas.iter_rows(min_row=1, min_col=1, values_only=True)
            rows_v = values.iter_rows(min_row=1, min_col=1, values_only=True)
            for r, (row_f, row_v) in enumerate(zip(rows_f, rows_v), start=1):
                for c, (f, v) in enumerate(zip(row_f, row_v), start=1):
                    if r == 1 and isinstance(v, str):
                        header[c] = v.strip()
                    formula = (isinstance(f, str) and f.startswith("=")) or type(f).__name__ in (
                        "ArrayFormula", "DataTableFormula")
                    if formula and v is None:
                        by_column.setdefault(c, []).append(f"{_column_letter(c)}{r}")
    except Exception:  # noqa: BLE001  the check is a courtesy; a workbook that pandas read is not refused for it
        return
    if not by_column:
        return
    n = sum(len(v) for v in by_column.values())
    parts = []
    for c, refs in sorted(by_column.items()):
        name = f" ('{header[c]}')" if c in header else ""
        cells = ", ".join(refs[:3]) + (", ..." if len(refs) > 3 else "")
        parts.append(f"column {_column_letter(c)}{name}: {len(refs)} ({cells})")
    _warn(f"{n} formula cell(s) in sheet '{sheet}' have no saved result and are read as missing: "
          + "; ".join(parts) + ". The workbook was saved without calculating them; open it in Excel or "
          "LibreOffice, let it recalculate, save it and upload it again.", report.warnings)


def _column_letter(index: int) -> str:
    """Excel's column name for a 1-based column number (1 -> A, 28 -> AB)."""
    letters = ""
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


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


def _note(report: LoadReport, name: str, note: str) -> None:
    if note:
        report.column_notes[name] = f"{report.column_notes[name]}; {note}" if name in report.column_notes else note


def _numeric_series(out: np.ndarray, name: str, report: LoadReport) -> pd.Series:
    """Numbers as int64 when all are whole (and none missing), else float64; infinities said."""
    n_inf = int(np.isinf(out).sum())
    if n_inf:
        _warn(f"column '{name}' has {n_inf} infinite value(s); they are treated as missing when the features "
              "are prepared. Check how they arose (a division by zero?) and fix them in the file.", report.warnings)
    finite = np.isfinite(out)
    if finite.all() and np.all(out == np.round(out)) and np.all(np.abs(out) < 2 ** 53):
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
    string dtype, NaN = missing), by the rules of :mod:`mapdp_core.loading`. Text stays in
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
        return _numeric_series(out, name, report)
    if len(present) <= 2 * _SAMPLE_CELLS or parse_dates(present.iloc[:_SAMPLE_CELLS].tolist(), decimal) is not None:
        dates = parse_dates(present.tolist(), decimal)
        if dates is not None:
            out = pd.Series(pd.NaT, index=range(len(s)), dtype="datetime64[ns]", name=name)
            out[~missing] = dates.values.to_numpy()
            _note(report, name, dates.note)
            return out
    return pd.Series(s.where(~missing), name=name)


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
    cols = [_column([r[j] for r in body], names[j], decimal, report) for j in range(len(names))]
    df = pd.concat(cols, axis=1) if cols else pd.DataFrame(index=range(len(body)))
    df.columns = names
    report.n_rows, report.n_cols = df.shape
    return df


# ----------------------------------------------------------------------------- large text files (fast path)

#: Text files larger than this are parsed by pandas' C reader (column by column, numbers
#: converted while reading) instead of row lists of Python strings, which took a 63 MB CSV to
#: 1.3 GB of peak memory (0.5 GB this way; figures in :mod:`mapdp_core.loading`). Detection
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


# ----------------------------------------------------------------------------- entry point

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
        numbers, none missing) or ``float64`` (NaN = missing); date columns are
        ``datetime64`` (NaT = missing); other columns hold text (pandas' string dtype,
        ``str``, NaN = missing). Entirely empty rows and columns are left out (the report's warnings say
        which rows). ``df.attrs["column_notes"]`` holds the notes per column (units,
        percentages, thousands separators, dates) that
        :func:`suggest_roles_and_families` repeats in its reasons.
    report : LoadReport
        Delimiter, decimal mark, encoding, header, shape, warnings and column notes.

    Raises
    ------
    DataLoadError
        Or one of its subclasses, with a message saying what to do.
    """
    df, report = _read_table(source, sheet=sheet, header=header, name=name, min_rows=min_rows)
    report.name = _source_name(source, name)
    df.attrs["column_notes"] = dict(report.column_notes)
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


def _not_a_table(start: str) -> None:
    low = start.lstrip()[:200].lower()
    if low.startswith(("<!doctype html", "<html", "<?xml", "{", "[")) and not re.match(r"\[?\s*[\d.\-+]+\s*,", low):
        what = "a web page (HTML)" if "html" in low else ("XML" if low.startswith("<?xml") else "JSON")
        raise NotATableError(
            f"the file holds {what}, not a table; if it came from a 'download as Excel' link, open it in a "
            "spreadsheet program and save it as .xlsx or 'CSV UTF-8'."
        )


def _read_table(source, *, sheet, header, name, min_rows, fast_path_bytes=None):
    """Body of :func:`read_table` (``fast_path_bytes`` overrides :data:`FAST_PATH_BYTES`, for tests)."""
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
        encoding = _detect_encoding(data)
        start = data[:4096].decode(encoding, errors="ignore").removeprefix("\ufeff")
        if not start.strip() and len(data) <= 4096:
            raise EmptyFileError("the file is empty (only blank lines); choose the file that holds the table.")
        _not_a_table(start)
        limit = FAST_PATH_BYTES if fast_path_bytes is None else fast_path_bytes
        if len(data) > limit:
            report = LoadReport(format="csv", encoding=encoding)
            df = _fast_frame(data, encoding, header, report, min_rows)
            if df is not None:
                return df, report
        text = data.decode(encoding)
        del data
    else:
        text, encoding = data, "text (already decoded)"
    if not text.strip():
        raise EmptyFileError("the file is empty (only blank lines); choose the file that holds the table.")
    _not_a_table(text[:4096])
    report = LoadReport(format="csv", encoding=encoding)
    rows = _parse_text(text, report)
    del text
    decimal = _detect_decimal(rows, report.delimiter)
    report.decimal = decimal
    return _frame(rows, header, decimal, report, min_rows), report
