"""How a column of text cells becomes numbers or dates: thousands separators, a decimal
comma, units, percentages and dates, decided once per column.

The rules (also listed in :mod:`mapdp_core.data.loading`):

* A number cell is an optional currency sign ($ EUR GBP YEN), a sign, digits, an optional
  exponent and an optional unit after it (``%``, ``mg``, ``mmHg``, ``mg/dL``, ``kg/m2``,
  a degree sign ...). Spaces, no-break spaces and apostrophes between digits group
  thousands (``1 234``, ``1'234``); ``.`` and ``,`` group thousands or mark decimals.
* Decimal mark, per column: a cell with both marks decides it (the last one is the
  decimal mark: ``1.234,5`` -> comma); so does a mark that cannot group thousands (``1,5``,
  ``0.25``, a mark followed by other than three digits) or one that appears twice
  (``1,234,567``). A column with no deciding cell (``1.234``, ``12,500``, whole numbers)
  follows the file's decimal mark. A column with deciding cells for both marks is not read
  as numbers (it is left as text, with a note).
* Thousands groups must be well formed (1-3 digits, then groups of exactly 3); ``1,23,4``
  is not a number.
* Units: one unit (``%`` included) for the whole column, where some cells may have none
  (``0``); two different units (``mg`` and ``g``) are not converted, since the numbers are
  on different scales. Percentages keep their scale (``12%`` reads 12).
* Dates: ISO (``2021-03-04``, with an optional time), ``2021/03/04`` and day-month-year
  or month-day-year with ``/``, ``.`` or ``-`` and a four-digit year. The order of day
  and month is taken from a cell that decides it (a value above 12); ``.`` means day
  first (the German and Nordic style); a column where no cell decides follows the file's
  decimal mark (comma: day first, point: month first), and the note says so.

The functions take stripped text cells with missing values already removed and never
raise on bad cells: they answer None when the column is not numbers or dates.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["DateColumn", "NumberColumn", "decimal_evidence", "has_both_decimal_marks", "looks_like_number",
           "parse_dates", "parse_numbers", "units_of"]

#: characters that group thousands and can never be a decimal mark
_ALWAYS_GROUP = " \u00a0\u202f'\u2019"
_CURRENCY = "$\u20ac\u00a3\u00a5"
_UNIT_TAIL = r"[\w/\u00b0\u00b5\u00b2\u00b3\u00b7.^\-]*"  # letters, digits, / degree micro squared cubed . ^ -
_UNIT = rf"(?:%|\u2030|[^\W\d_]{_UNIT_TAIL}|[\u00b0\u00b5]{_UNIT_TAIL})"  # percent, per mille, a letter, degree or micro
_CELL = re.compile(
    rf"(?P<cur>[{_CURRENCY}])?\s*(?P<sign>[+\-\u2212])?\s*(?P<cur2>[{_CURRENCY}])?"
    r"(?P<body>\d(?:[\d.,'\u2019\u00a0\u202f ]*\d)?\.?|\d*[.,]\d+)"
    r"(?P<exp>[eE][+-]?\d+)?\s*"
    rf"(?P<unit>{_UNIT})?"
)
#: single letters are too often codes ("2A", "3B") to be read as units; these are units
_ONE_LETTER_UNITS = set("gmlLsh\u00b0KVWJN")


@dataclass
class NumberColumn:
    """A text column read as numbers: ``values`` (float, NaN where missing or not a number),
    ``bad`` (the cells that are not numbers, as written), ``unit`` (None, or the one unit of
    the column, ``%`` for percentages), ``decimal`` (the decimal mark used), ``grouped``
    (some cell had thousands separators) and ``note`` (what a user should know, "" if nothing)."""

    values: np.ndarray
    bad: list
    unit: str | None
    decimal: str
    grouped: bool
    note: str


@dataclass
class DateColumn:
    """A text column read as dates: ``values`` (datetime64, NaT where missing) and ``note``."""

    values: pd.Series
    note: str


def _decimal_evidence(body: str) -> str | None:
    """The decimal mark a number body proves ("." or ","), or None when it could be either."""
    dots, commas = body.count("."), body.count(",")
    if dots and commas:
        return "." if body.rfind(".") > body.rfind(",") else ","
    if not dots and not commas:
        return None
    mark, count = (".", dots) if dots else (",", commas)
    other = "," if mark == "." else "."
    if count > 1:  # only a group mark repeats
        return other
    if any(c in body for c in _ALWAYS_GROUP):
        return mark  # spaces or apostrophes group the thousands ("1 234,5"): the mark is decimal
    head, tail = body.split(mark)
    if len(tail) != 3 or head in ("", "0") or len(head) > 3:
        return mark  # cannot be a thousands group: "1,5", "0.123", ".5", "1234,567"
    return None


def _value(body: str, exp: str | None, decimal: str) -> float | None:
    group = "," if decimal == "." else "."
    b = body
    for ch in _ALWAYS_GROUP + group:
        b = b.replace(ch, "_")
    if b.count(decimal) > 1:
        return None
    head, _, tail = b.partition(decimal)
    if "_" in tail:
        return None
    if "_" in head:
        groups = head.split("_")
        if not (1 <= len(groups[0]) <= 3) or any(len(g) != 3 for g in groups[1:]):
            return None
        head = "".join(groups)
    text = (head or "0") + ("." + tail if tail else "") + (exp or "")
    try:
        return float(text)
    except ValueError:
        return None


def parse_numbers(cells, file_decimal: str = ".") -> NumberColumn | None:
    """Read stripped, non-missing text ``cells`` as numbers by the module's rules.

    Returns None when fewer than half of the cells read as numbers, when the cells prove
    both decimal marks, or when they carry two different units. Otherwise every cell is
    read with one decimal mark; cells that do not read are in ``bad`` (the caller decides
    whether a few such tokens, such as ``<5``, may become missing values).
    """
    cells = list(cells)
    if not cells:
        return None
    matches = [_CELL.fullmatch(c) for c in cells]
    n_match = sum(m is not None for m in matches)
    if n_match < 0.5 * len(cells):
        return None
    evidence = {e for m in matches if m is not None for e in [_decimal_evidence(m["body"])] if e}
    if len(evidence) > 1:
        return None
    decimal = evidence.pop() if evidence else file_decimal
    units, values, bad, grouped = set(), np.full(len(cells), np.nan), [], False
    for i, (cell, m) in enumerate(zip(cells, matches)):
        if m is None:
            bad.append(cell)
            continue
        currency = m["cur"] or m["cur2"]
        if currency and m["unit"]:  # "$5 kg": two units in one cell
            bad.append(cell)
            continue
        unit = m["unit"] or currency
        if unit and len(unit) == 1 and unit.isalpha() and unit not in _ONE_LETTER_UNITS:
            bad.append(cell)
            continue
        x = _value(m["body"], m["exp"], decimal)
        if x is None:
            bad.append(cell)
            continue
        if m["sign"] in ("-", "\u2212"):
            x = -x
        if unit:
            units.add(unit)
        grouped = grouped or any(ch in m["body"] for ch in _ALWAYS_GROUP + ("," if decimal == "." else "."))
        values[i] = x
    if len(units) > 1 or len(bad) > 0.5 * len(cells):
        return None
    unit = units.pop() if units else None
    notes = []
    if unit == "%":
        notes.append("read as numbers: percentages ('12%' reads 12)")
    elif unit == "\u2030":
        notes.append("read as numbers: per mille ('12\u2030' reads 12)")
    elif unit:
        notes.append(f"read as numbers in {unit} (the unit is left out)")
    if grouped:
        example = "'1.234,5' reads 1234.5" if decimal == "," else "'1,234.5' reads 1234.5"
        notes.append(f"thousands separators removed ({example})")
    elif decimal == "," and any("," in c for c in cells):
        notes.append("decimal comma ('1,5' reads 1.5)")
    return NumberColumn(values, bad, unit, decimal, grouped, "; ".join(notes))


def has_both_decimal_marks(cells) -> bool:
    """Whether number-like ``cells`` prove both decimal marks (``1.5`` and ``2,5`` in one column)."""
    evidence = {e for c in cells for m in [_CELL.fullmatch(c)] if m is not None
                for e in [_decimal_evidence(m["body"])] if e}
    return len(evidence) > 1


def units_of(cells) -> list[str]:
    """The different units written after numbers in ``cells`` (for a note when there are several)."""
    out = []
    for c in cells:
        m = _CELL.fullmatch(c)
        if m is not None and m["unit"] and m["unit"] not in out:
            out.append(m["unit"])
    return out


_TIME = r"(?:[T ](?P<time>\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?"
_ISO = re.compile(r"\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_YMD = re.compile(r"(?P<y>\d{4})/(?P<m>\d{1,2})/(?P<d>\d{1,2})" + _TIME)
_XYY = re.compile(r"(?P<a>\d{1,2})(?P<sep>[./-])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4})" + _TIME)


def _assemble(year, month, day, times) -> pd.Series | None:
    frame = pd.DataFrame({"year": year, "month": month, "day": day})
    dates = pd.to_datetime(frame, errors="coerce")
    if dates.isna().any():
        return None
    if any(t for t in times):
        extra = pd.to_timedelta([(t if t.count(":") == 2 else t + ":00") if t else "0:00:00" for t in times],
                                errors="coerce")
        if extra.isna().any():
            return None
        dates = dates + extra
    return dates


def parse_dates(cells, file_decimal: str = ".") -> DateColumn | None:
    """Read stripped, non-missing text ``cells`` as dates by the module's rules (every cell
    must be a valid date in one style), or None."""
    cells = list(cells)
    if not cells or not all(any(ch.isdigit() for ch in c[:2]) for c in cells[:50]):
        return None
    if all(_ISO.fullmatch(c) for c in cells):
        try:
            values = pd.to_datetime(pd.Series(cells), format="ISO8601")
        except (ValueError, TypeError):
            try:  # different UTC offsets in one column: compare them in UTC
                values = pd.to_datetime(pd.Series(cells), format="ISO8601", utc=True).dt.tz_convert(None)
            except (ValueError, TypeError):
                return None
        if getattr(values.dt, "tz", None) is not None:
            values = values.dt.tz_convert(None)
        return DateColumn(values.astype("datetime64[ns]"), "a date (year-month-day)")
    ymd = [_YMD.fullmatch(c) for c in cells]
    if all(ymd):
        values = _assemble([int(m["y"]) for m in ymd], [int(m["m"]) for m in ymd], [int(m["d"]) for m in ymd],
                           [m["time"] for m in ymd])
        return None if values is None else DateColumn(values, "a date (year/month/day)")
    xyy = [_XYY.fullmatch(c) for c in cells]
    if not all(xyy):
        return None
    a = np.array([int(m["a"]) for m in xyy])
    b = np.array([int(m["b"]) for m in xyy])
    seps = {m["sep"] for m in xyy}
    ambiguous = ""
    if (a > 12).any() and (b > 12).any():
        return None
    if (a > 12).any() or seps == {"."}:
        day_first = True
    elif (b > 12).any():
        day_first = False
    else:
        day_first = file_decimal == ","
        ambiguous = (" - no cell shows whether day or month comes first; read as "
                     + ("day/month/year because the file writes decimals with a comma" if day_first else
                        "month/day/year because the file writes decimals with a point")
                     + ": check a few dates")
    day, month = (a, b) if day_first else (b, a)
    values = _assemble([int(m["y"]) for m in xyy], month, day, [m["time"] for m in xyy])
    if values is None:
        return None
    return DateColumn(values, ("a date (day/month/year)" if day_first else "a date (month/day/year)") + ambiguous)


def looks_like_number(cell: str) -> bool:
    """Whether one stripped cell reads as a number by these rules (with any decimal mark or unit)."""
    return _CELL.fullmatch(cell) is not None


def decimal_evidence(cell: str) -> str | None:
    """The decimal mark one number cell proves ("." or ","), or None (not a number, or either)."""
    m = _CELL.fullmatch(cell)
    return None if m is None else _decimal_evidence(m["body"])
