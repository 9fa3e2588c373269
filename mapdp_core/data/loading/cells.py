"""How a column of text cells becomes numbers or dates: thousands separators, a decimal
comma, units, percentages and dates, decided once per column.

The rules (also listed in :mod:`mapdp_core.data.loading`):

* A number cell is an optional currency sign ($ EUR GBP YEN), a sign, digits, an optional
  exponent and an optional unit or currency sign after it (``%``, ``mg``, ``mmHg``, ``mg/dL``,
  ``kg/m2``, a degree sign, ``1.200 \u20ac`` ...). Spaces, no-break spaces and apostrophes
  between digits group thousands (``1 234``, ``1'234``); ``.`` and ``,`` group thousands or
  mark decimals. A number in parentheses is an accounting negative (``(12)``, ``(1,234.50)``,
  ``$(12)``, ``(1.234,50 \u20ac)`` read -12, -1234.5 ...), said in the note with their count.
* Decimal mark, per column, from all its cells: a cell with both marks proves it (the last
  one is the decimal mark: ``1.234,5`` -> comma); so does a mark that cannot group thousands
  (``1,5``, ``0.25``, a mark followed by other than three digits) or one that appears twice
  (``1,234,567``). A cell with one mark before exactly three digits (``1.234``, ``12,500``)
  reads either way. The column takes the mark its cells prove; when they prove both, the mark
  more cells prove (the file's on a tie), and each cell proving the other is read with the
  mark it proves (its only reading), said in the note and in a warning. A column with no
  deciding cell follows the file's decimal mark, except an amount of money whose ambiguous
  cells all use the file's decimal mark: ``\u20ac1.200`` is 1200 (money is written with 0 or 2
  decimals). An ambiguous cell read as a decimal against the file's mark (``12,000`` reads 12
  next to ``1,5`` in a file with a decimal point), in a column whose cells disagree, or in an amount
  of money, is said in the note, with the count and the other reading; so is the reading
  chosen when no cell decides and separators were removed. Read with the file's own mark,
  an ambiguous cell is ordinary (``1.234`` in a file with a decimal point, ``12,000``
  in one with a decimal comma).
* Thousands groups must be well formed (1-3 digits, then groups of exactly 3); ``1,23,4``
  is not a number.
* Units: one unit (``%`` included) for the whole column, where some cells may have none
  (``0``); two different units (``mg`` and ``g``) are not converted, since the numbers are
  on different scales. Percentages keep their scale (``12%`` reads 12). A column mixing
  percentages and plain numbers (zeros aside): plain numbers that are clearly fractions (all
  in (0, 1], some below 1, while a percentage exceeds 1) are put on the scale of the majority
  (``0.12`` reads 12 among mostly ``12%`` cells; ``12%`` reads 0.12 among mostly fractions),
  with a note; otherwise they are read as written, with a note and a warning giving their count.
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
from dataclasses import dataclass, field
from decimal import Decimal

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
    rf"(?:(?P<unit>{_UNIT})|(?P<cur3>[{_CURRENCY}]))?"
)
#: an accounting negative: a number in parentheses, with a currency sign or a unit inside or
#: outside them (``(12)``, ``(1,234.50)``, ``$(1,234.50)``, ``(1.234,50) \u20ac``)
_PAREN = re.compile(rf"(?P<pre>[{_CURRENCY}]?)\s*\(\s*(?P<inner>[^()]+?)\s*\)"
                    rf"(?P<post>\s*(?:{_UNIT}|[{_CURRENCY}]))?")
#: single letters are too often codes ("2A", "3B") to be read as units; these are units
_ONE_LETTER_UNITS = set("gmlLsh\u00b0KVWJN")


@dataclass
class NumberColumn:
    """A text column read as numbers: ``values`` (float, NaN where missing or not a number),
    ``bad`` (the cells that are not numbers, as written), ``unit`` (None, or the one unit of
    the column, ``%`` for percentages), ``decimal`` (the decimal mark used), ``grouped``
    (some cell had thousands separators), ``note`` (what a user should know, "" if nothing)
    and ``doubts`` (what a user should check: the caller makes each a warning naming the
    column)."""

    values: np.ndarray
    bad: list
    unit: str | None
    decimal: str
    grouped: bool
    note: str
    doubts: list = field(default_factory=list)


@dataclass
class DateColumn:
    """A text column read as dates: ``values`` (datetime64, NaT where missing) and ``note``."""

    values: pd.Series
    note: str


_MARK = {".": "point", ",": "comma"}


def _other(mark: str) -> str:
    return "," if mark == "." else "."


def _match(cell: str) -> tuple[re.Match | None, bool]:
    """The number pattern matched by one stripped cell, and whether the cell is an accounting
    negative (the number in parentheses, without a sign of its own); (None, False) if the cell
    is not a number."""
    m = _CELL.fullmatch(cell)
    if m is not None or "(" not in cell:
        return m, False
    p = _PAREN.fullmatch(cell)
    if p is None:
        return None, False
    m = _CELL.fullmatch(p["pre"] + p["inner"] + (p["post"] or ""))
    if m is None or m["sign"]:
        return None, False
    return m, True


def _decimal_evidence(body: str) -> str | None:
    """The decimal mark a number body proves ("." or ","), or None when it could be either."""
    dots, commas = body.count("."), body.count(",")
    if dots and commas:
        return "." if body.rfind(".") > body.rfind(",") else ","
    if not dots and not commas:
        return None
    mark, count = (".", dots) if dots else (",", commas)
    other = _other(mark)
    if count > 1:  # only a group mark repeats
        return other
    if any(c in body for c in _ALWAYS_GROUP):
        return mark  # spaces or apostrophes group the thousands ("1 234,5"): the mark is decimal
    head, tail = body.split(mark)
    if len(tail) != 3 or head in ("", "0") or len(head) > 3:
        return mark  # cannot be a thousands group: "1,5", "0.123", ".5", "1234,567"
    return None


def _number_text(body: str, exp: str | None, decimal: str) -> str | None:
    """The number a body spells with ``decimal`` as its decimal mark, written plainly
    (``1.234,5`` -> ``1234.5``), or None when the body is not a number that way."""
    group = _other(decimal)
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
    return (head or "0") + ("." + tail if tail else "") + (exp or "")


def _value(body: str, exp: str | None, decimal: str) -> float | None:
    text = _number_text(body, exp, decimal)
    try:
        return None if text is None else float(text)
    except ValueError:
        return None


def _shown(x: float) -> str:
    """A value as a note shows it (``1200``, ``1234.5``, ``0.12``)."""
    return f"{x:.15g}"


def _group_name(body: str, decimal: str) -> str:
    """How the first thousands separator of a body is called in a note."""
    ch = next(c for c in body if c in _ALWAYS_GROUP + _other(decimal))
    return {" ": "a space", "\u00a0": "a no-break space", "\u202f": "a narrow space", "'": "an apostrophe",
            "\u2019": "an apostrophe"}.get(ch, f"'{ch}'")


def _column_decimal(proofs: list, ambiguous: list, money: bool, file_decimal: str) -> tuple[str, str]:
    """The decimal mark of a column, and why: "column" (its cells prove it), "most" (its cells
    prove both marks; the one more cells prove, the file's on a tie), "money" (no proof, but a
    currency column whose ambiguous cells all use the file's decimal mark: ``1.200`` of money is
    a thousands group, money being written with 0 or 2 decimals) or "file" (no proof)."""
    n_point, n_comma = proofs.count("."), proofs.count(",")
    if n_point and n_comma:
        return ("." if n_point > n_comma else "," if n_comma > n_point else file_decimal), "most"
    if n_point or n_comma:
        return ("." if n_point else ","), "column"
    if money and {a for a in ambiguous if a} == {file_decimal}:
        return _other(file_decimal), "money"
    return file_decimal, "file"


def parse_numbers(cells, file_decimal: str = ".") -> NumberColumn | None:
    """Read stripped, non-missing text ``cells`` as numbers by the module's rules.

    Returns None when fewer than half of the cells read as numbers, or when they carry two
    different units. Otherwise the column's decimal mark is chosen from all its cells
    (:func:`_column_decimal`); a cell that proves the other mark (``1,5`` among ``2.5``) is read
    with the mark it proves, the only reading it has, and said in ``note`` and ``doubts``; a
    cell that reads either way (``12,000``) is read with the column's mark, and said when that
    makes it a decimal against the file's mark (``12,000`` reads 12 next to ``1,5`` in a file
    with a decimal point), in a column whose cells disagree, or in an amount of money. Cells that do
    not read are in ``bad`` (the caller decides whether a few such tokens, such as ``<5``, may
    become missing values).
    """
    cells = list(cells)
    if not cells:
        return None
    n = len(cells)
    matches, in_parens = (list(t) for t in zip(*map(_match, cells)))
    if n - matches.count(None) < 0.5 * n:
        return None
    bodies = [None if m is None else m["body"] for m in matches]
    proofs = [None if b is None else _decimal_evidence(b) for b in bodies]
    # the one mark of a body that proves nothing ("1.234", "12,500"): a decimal mark before three
    # decimals, or a thousands group
    ambiguous = [None if p or b is None else "." if "." in b else "," if "," in b else None
                 for b, p in zip(bodies, proofs)]
    money = any(m is not None and (m["cur"] or m["cur2"] or m["cur3"]) for m in matches)
    decimal, source = _column_decimal(proofs, ambiguous, money, file_decimal)
    units, values, bad = set(), np.full(n, np.nan), []
    texts, cell_units = [None] * n, [None] * n
    parens, minority, as_decimal, as_group, example = [], [], [], [], None
    groups = {".": _ALWAYS_GROUP + ",", ",": _ALWAYS_GROUP + "."}
    for i, (cell, m, paren, body) in enumerate(zip(cells, matches, in_parens, bodies)):
        if m is None:
            bad.append(cell)
            continue
        cur, cur2, cur3, unit = m.group("cur", "cur2", "cur3", "unit")
        if cur or cur2 or cur3:
            if unit or (bool(cur) + bool(cur2) + bool(cur3)) > 1:  # "$5 kg", "$5 $": two units in one cell
                bad.append(cell)
                continue
            unit = cur or cur2 or cur3
        elif unit and len(unit) == 1 and unit.isalpha() and unit not in _ONE_LETTER_UNITS:
            bad.append(cell)
            continue
        mark = proofs[i] or decimal
        text = _number_text(body, m["exp"], mark)
        if text is None:
            bad.append(cell)
            continue
        negative = paren or m["sign"] in ("-", "\u2212")
        if negative:
            text = "-" + text
        try:
            values[i] = float(text)
        except ValueError:
            bad.append(cell)
            continue
        if unit:
            units.add(unit)
        cell_units[i] = unit
        # the first cell with thousands separators read with the column's mark is the note's example
        # (the test stops once one is found: it costs as much as the rest of the loop)
        if (example is None or (proofs[example] or decimal) != decimal) and any(ch in body for ch in groups[mark]):
            example = i
        if proofs[i] and proofs[i] != decimal:
            minority.append(i)
        elif ambiguous[i] == decimal:
            as_decimal.append(i)
        elif ambiguous[i]:
            as_group.append(i)
        if paren:
            parens.append(i)
        texts[i] = text
    grouped = example is not None
    if len(units) > 1 or len(bad) > 0.5 * n:
        return None
    unit = units.pop() if units else None
    notes, doubts = [], []
    if unit == "%":
        _percent_scale(cells, values, texts, cell_units, notes, doubts)
    elif unit == "\u2030":
        notes.append("read as numbers: per mille ('12\u2030' reads 12)")
    elif unit:
        notes.append(f"read as numbers in {unit} (the unit is left out)")
    if parens:
        i = parens[0]
        notes.append(f"{len(parens)} cell(s) in parentheses read as negative numbers (accounting style: "
                     f"'{cells[i]}' reads {_shown(values[i])})")
    name = _MARK[decimal]
    if grouped:
        i = example
        notes.append(f"thousands separators removed (decimal {_MARK[proofs[i] or decimal]}, "
                     f"{_group_name(bodies[i], proofs[i] or decimal)} groups thousands: "
                     f"'{cells[i]}' reads {_shown(values[i])})")
    elif decimal == "," and any("," in c for c in cells):
        notes.append("decimal comma ('1,5' reads 1.5)")
    if as_group and source in ("file", "money"):
        i = as_group[0]
        why = ("because an amount of money is rarely written with three decimals" if source == "money" else
               f"by the file's decimal {name}")
        notes.append(f"no cell shows which mark is the decimal one, so {len(as_group)} cell(s) such as '{cells[i]}' "
                     f"(which could be {_shown(_value(bodies[i], None, ambiguous[i]))}) were read with "
                     f"'{ambiguous[i]}' grouping thousands, {why}")
    # an ambiguous cell read as a decimal is the ordinary reading when the column follows the
    # file's mark ("1.234" with a decimal point, "12,000" with a decimal comma); said when the column's
    # own cells overrode the file's mark, disagree, or are money
    if as_decimal and (decimal != file_decimal or source == "most" or money):
        i = as_decimal[0]
        alt = _value(bodies[i], matches[i]["exp"], _other(decimal))
        why = {"column": "the decimal {} that the column's other cells prove",
               "most": "the decimal {} that most of the column's cells prove",
               "file": "the file's decimal {}", "money": "the decimal {}"}[source].format(name)
        notes.append(f"{len(as_decimal)} cell(s) such as '{cells[i]}' could also mean "
                     f"{_shown(alt) if alt is not None else 'a thousands group'} (with '{ambiguous[i]}' grouping "
                     f"thousands); read as {_shown(abs(values[i]))} with {why}")
    if minority:
        i = minority[0]
        majority = sum(1 for p in proofs if p == decimal)
        notes.append(f"numbers written with both decimal marks: {majority} cell(s) prove a decimal {name} and "
                     f"{len(minority)} a decimal {_MARK[_other(decimal)]} (such as '{cells[i]}'); the column's "
                     f"convention is the decimal {name}, and each of those {len(minority)} cell(s) was read with "
                     f"the mark it proves ('{cells[i]}' reads {_shown(values[i])})")
        doubts.append(f"writes numbers with both decimal marks: {len(minority)} cell(s) such as '{cells[i]}' prove a "
                      f"decimal {_MARK[_other(decimal)]}, {majority} a decimal {name}; each cell was read with the "
                      f"mark it proves ('{cells[i]}' reads {_shown(values[i])}) and the others with the decimal "
                      f"{name}. Check these cells, and write all numbers one way in the file.")
    return NumberColumn(values, bad, unit, decimal, grouped, "; ".join(notes), doubts)


def _percent_scale(cells, values, texts, cell_units, notes, doubts) -> None:
    """Percentages keep their scale (``12%`` reads 12). In a column that also has plain
    numbers (zeros aside, the same on both scales): when the plain cells are clearly fractions
    (all in (0, 1], some below 1) and some percentage exceeds 1, the minority is put on the
    majority's scale (``0.12`` reads 12 in a column mostly of percentages; ``12%`` reads 0.12
    in one mostly of fractions); otherwise the plain cells are read as written and flagged.
    ``values`` is changed in place; the notes and doubts say what was done."""
    pct = [i for i, u in enumerate(cell_units) if u == "%"]
    plain = [i for i, (u, t) in enumerate(zip(cell_units, texts)) if u is None and t is not None and values[i] != 0]
    if not plain:
        notes.append("read as numbers: percentages ('12%' reads 12)")
        return
    p, q = pct[0], plain[0]
    fractions = (all(0 < values[i] <= 1 for i in plain) and any(values[i] < 1 for i in plain)
                 and any(values[i] > 1 for i in pct))
    if fractions and len(pct) >= len(plain):
        for i in plain:
            values[i] = float(Decimal(texts[i]).scaleb(2))
        notes.append(f"read as numbers: percentages ('12%' reads 12); {len(plain)} cell(s) written as fractions "
                     f"without '%' were put on the same scale ('{cells[q]}' reads {_shown(values[q])})")
    elif fractions:
        for i in pct:
            values[i] = float(Decimal(texts[i]).scaleb(-2))
        notes.append(f"read as numbers: fractions, as most cells are written; {len(pct)} cell(s) written with '%' "
                     f"were put on the same scale ('{cells[p]}' reads {_shown(values[p])})")
    else:
        notes.append(f"read as numbers: percentages ('12%' reads 12); {len(plain)} cell(s) written without '%' "
                     f"(such as '{cells[q]}') were read as written: check that they are on the same scale")
        doubts.append(f"mixes {len(pct)} cell(s) written with '%' and {len(plain)} without (such as '{cells[q]}', "
                      f"read as {_shown(values[q])}); check that they are on the same scale, and write them one way "
                      "in the file.")


def has_both_decimal_marks(cells) -> bool:
    """Whether number-like ``cells`` prove both decimal marks (``1.5`` and ``2,5`` in one column)."""
    evidence = {e for c in cells for m, _ in [_match(c)] if m is not None
                for e in [_decimal_evidence(m["body"])] if e}
    return len(evidence) > 1


def units_of(cells) -> list[str]:
    """The different units written after numbers in ``cells`` (for a note when there are several)."""
    out = []
    for c in cells:
        m, _ = _match(c)
        unit = None if m is None else m["unit"] or m["cur"] or m["cur2"] or m["cur3"]
        if unit and unit not in out:
            out.append(unit)
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
    return _match(cell)[0] is not None


def decimal_evidence(cell: str) -> str | None:
    """The decimal mark one number cell proves ("." or ","), or None (not a number, or either)."""
    m, _ = _match(cell)
    return None if m is None else _decimal_evidence(m["body"])
