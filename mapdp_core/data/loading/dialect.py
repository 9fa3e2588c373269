"""How a text file writes its cells: the missing-value tokens, a plain number, the delimiter
and the decimal mark (the rules are listed in :mod:`mapdp_core.data.loading`)."""
from __future__ import annotations

import csv
import math
import re
from collections import Counter

from .cells import decimal_evidence


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
    # number-like cells: ending in a digit, a percent sign, a currency sign or a parenthesis ("(1.234,50)")
    cells = [c for r in rows for c in r if c and (c[-1].isdigit() or c[-1] in "%)$\u20ac\u00a3\u00a5")]
    proof = Counter(e for c in cells for e in [decimal_evidence(c)] if e)
    if proof:
        return "," if proof[","] > proof["."] else "."
    commas = sum(1 for c in cells if _COMMA_DEC.fullmatch(c))
    dots = sum(1 for c in cells if _DOT_DEC.fullmatch(c))
    return "," if commas > dots else "."
