"""What :func:`~mapdp_core.data.loading.read_table` says about how it read a table: the
:class:`LoadReport`."""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ['LoadReport']


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
