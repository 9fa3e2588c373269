"""Step 1: bytes (a path, an upload, text) to a DataFrame and a :class:`LoadReport`.

Everything happens in memory: nothing is written to disk and nothing is logged. The
detection rules (encoding, binary content, delimiter, decimal comma, missing tokens,
header, numbers with a few text tokens) are listed in :mod:`mapdp_core.data.loading`.
This module is the entry point; each step is a module of its own:

* :mod:`.sniff`: where the bytes come from, and files that are not tables;
* :mod:`.text_encoding`: the text encoding;
* :mod:`.dialect`: missing tokens, plain numbers, the delimiter and the decimal mark;
* :mod:`.text_rows`: text to rows of cells (the careful path);
* :mod:`.excel`: Excel workbooks;
* :mod:`.grid`: rows of cells to a DataFrame (header, names, width and row checks);
* :mod:`.columns`: one column of cells to numbers, dates or text;
* :mod:`.fast`: large text files through pandas' C reader;
* :mod:`.report`: the :class:`LoadReport`.
"""
from __future__ import annotations

import io
import zipfile

from .dialect import _detect_decimal
from .errors import EmptyFileError, NotATableError
from .excel import _excel_frame
from .fast import FAST_PATH_BYTES, _cell_text, _fast_frame  # noqa: F401  (_cell_text: tests import it here)
from .grid import MIN_ROWS, _frame
from .report import LoadReport
from .sniff import _OLE2, _ZIP, _binary_kind, _not_a_table, _source_bytes, _source_name
from .text_encoding import _detect_encoding
from .text_rows import _parse_text

__all__ = ["FAST_PATH_BYTES", "MIN_ROWS", "LoadReport", "read_table"]


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
