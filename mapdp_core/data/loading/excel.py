"""Excel workbooks (.xlsx by openpyxl, .xls by xlrd): a sheet's cells as text rows, formula
cells saved without a result reported, and the sheet as a DataFrame."""
from __future__ import annotations

import io
import math
import re
import warnings
import zipfile

import numpy as np
import pandas as pd

from .errors import DataLoadError, EmptyFileError, NotATableError, _warn
from .grid import _frame
from .report import LoadReport
from .text_rows import _without_empty_rows


def _excel_frame(data: bytes, kind: str, sheet, header, min_rows: int):
    """An .xlsx (``kind="xlsx"``) or .xls (``"xls"``) workbook's sheet as (DataFrame, report)."""
    report = LoadReport(format="excel")
    rows = _excel_rows(data, sheet, report, kind)
    if not rows:
        raise EmptyFileError("the workbook has no cells with data; choose the sheet or file that holds the table.")
    return _frame(rows, header, ".", report, min_rows), report


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
