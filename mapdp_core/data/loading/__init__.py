"""Loading clinical tables (CSV, TSV, Excel) and suggesting a likelihood per column.

Three steps, each usable from a notebook and from the app (one module each: ``read``,
``suggest``, ``prepare``; ``read`` is the entry point of the reading modules listed in its
docstring; the encoding rules are in :mod:`mapdp_core.core.encoding`, the cell rules in
:mod:`mapdp_core.data.loading.cells`), and one way out (``export``):

1. :func:`read_table` turns a path, bytes or a file-like object into a DataFrame and a
   :class:`LoadReport` (delimiter, decimal mark, encoding, header, shape, warnings,
   notes per column). Everything happens in memory: nothing is written to disk and
   nothing is logged.
2. :func:`suggest_roles_and_families` proposes, per column, a role (feature, label,
   identifier, ignored) and a likelihood family, with the reason, as a tidy table that
   a user can inspect and override.
3. :func:`prepare` applies the (possibly overridden) choices: it encodes each feature
   column for its family, standardises the Gaussian columns if asked, treats the zeros
   of the columns named in ``zeros_as_missing`` as missing, and returns what
   ``MAPDP(likelihood=...)`` needs. :func:`missing_summary` tells where values are missing.
4. :func:`csv_bytes` writes a table for download with every text cell that a spreadsheet
   would run as a formula neutralised (a leading single quote, as OWASP recommends).

Every problem with the input raises a :class:`DataLoadError` (a ``ValueError``) whose
message says what is wrong and what to do; problems that do not stop the work are
reported as :class:`DataLoadWarning` and collected in ``LoadReport.warnings`` or
``Prepared.notes``.

Detection rules (the reasons are repeated in the suggestion table):

* Encoding: a byte-order mark wins (UTF-32 is checked before UTF-16, whose mark begins
  the same way; UTF-8, UTF-16). Text with NUL bytes is UTF-32 or UTF-16 (LE or BE) by
  where the zeros fall, or else refused. Then strict UTF-8. Then, for other bytes, the
  fallbacks in this order, each only when the bytes make it plausible: Windows-1252
  (which reads every Latin-1 text too) when the high bytes stand alone between ASCII
  characters, as accented letters do; GB18030 (a superset of GBK and GB2312, Chinese)
  when they come in pairs that nearly all (>= 90 %) fall in the GB2312 block of common
  characters. Anything else (Shift-JIS, Big5, a mixture) is refused with advice to
  re-save as "CSV UTF-8". EUC-KR cannot be told from GB2312 by its bytes and reads as
  GB18030. The whole file must decode, without NUL characters.
* Binary content (control bytes, or the signature of a PNG, JPEG, GIF, PDF, ZIP, ...)
  is "not a table"; an HTML page is recognised too.
* Delimiter: a first line ``sep=X`` (written by Excel) is obeyed; otherwise each of
  ``, ; TAB |`` splits the first 200 lines (quotes respected) and the winner is the
  one giving the most lines with the same number (>= 2) of fields, then the most
  cells that read as numbers, then the most fields. No winner means one column.
* Decimal comma (the file's convention): only when the delimiter is not a comma, and
  cells that prove a decimal comma (``1,5``, ``1.234,5``) outnumber those that prove a
  point; with no proof either way, cells like ``1,5`` against cells like ``1.5``.
* Lines end at LF, CR LF and CR only, as CSV defines them (both readers): a form
  feed, vertical tab, U+0085, U+2028 or U+2029 stays inside its cell's text.
* Numbers, per column (rules in :mod:`mapdp_core.data.loading.cells`): thousands separators
  (``1,234``, ``1.234,5``, ``1 234``, ``1'234``), one unit or currency for the column
  (``5.2 mg``, ``120 mmHg``, ``12%``, ``1.200 \u20ac``, ``$1,200.50``, read as 5.2, 120, 12,
  1200, 1200.5), accounting negatives (``(1,234.50)`` reads -1234.5), and each column's own
  decimal mark chosen from all its cells (the mark more cells prove when they disagree); a
  column whose cells prove nothing (``1.234`` alone is ambiguous) follows the file's decimal
  mark (an amount of money excepted: ``\u20ac1.200`` is 1200). Percentages keep their scale
  (``79%`` reads 79); plain fractions among them are put on that scale (``0.12`` reads 12),
  and other plain numbers are flagged. What was done is noted per column
  (``LoadReport.column_notes``, ``df.attrs["column_notes"]``), with the count of ambiguous or
  contradictory cells and the reading chosen, and repeated in the suggestion's reason; cells
  a user should check (both decimal marks, percentages mixed with plain numbers) are also
  warned about. Two units in one column leave it text, with a warning.
* Dates (ISO, ``2021/03/04``, day-month-year or month-day-year with a four-digit year)
  become ``datetime64`` columns; the suggestion leaves them out with the note "a date
  (use it as a number of days if you want it)": making one a feature with a real family
  makes :func:`prepare` use days since 1970-01-01. Dates are kept as dates rather than
  turned into days on reading, so that the table a user sees is the table in the file.
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
* A row read from several lines (a quoted cell with a line break) is reported with its
  line numbers: if the table has no multi-line text, a quote is unbalanced and lines
  were merged. A quote never closed (the rest of the file in one cell) is refused.
* Excel: formula cells saved without their computed value (workbooks written by a
  script) read as missing; the report says how many and in which columns.
* Files above :data:`FAST_PATH_BYTES` are parsed by pandas' C reader, column by column,
  after the same detection on a sample (a file with irregular rows falls back to the
  careful path, which names the offending rows). Text columns stay in pandas' string
  arrays. Measured on a synthetic 63 MB CSV (650 000 rows: 12 numeric and 3 text columns),
  three runs each: peak memory of the process 1 341 MB before, 497 MB after (318 MB of
  it the library's imports and the file's bytes), and 12.8-13.6 s before, 0.58-0.64 s after.
* Wide tables: columns of up to 2 000 rows are typed in batches (the rules above applied
  once to many columns' cells, each column then finished alone when it needs more than
  plain numbers), with the same results as one column at a time; the time grows with the
  cells, not with their square (``benchmarks/wide_read.py``: a 200 x 20 000 CSV of numbers
  in about 4 s on 2 cores, where it ran past minutes).
"""
from __future__ import annotations

from mapdp_core.families import GAUSSIAN_FAMILIES  # the families' own list, kept here for old imports
from .errors import (DataLoadError, DataLoadWarning, DuplicateColumnsError, EmptyFileError, EncodingError,
                     LabelError, NotATableError, TooFewRowsError)
from .export import csv_bytes
from .prepare import Prepared, missing_summary, prepare
from .read import FAST_PATH_BYTES, MIN_ROWS, LoadReport, read_table
from .suggest import (MAX_BINOMIAL_N, MAX_CATEGORIES, MAX_POISSON_DISPERSION, ROLES, suggest_roles_and_families,
                      suspicious_zeros)

__all__ = [
    "FAST_PATH_BYTES",
    "GAUSSIAN_FAMILIES",
    "MAX_BINOMIAL_N",
    "MAX_CATEGORIES",
    "MAX_POISSON_DISPERSION",
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
    "csv_bytes",
    "missing_summary",
    "prepare",
    "read_table",
    "suggest_roles_and_families",
    "suspicious_zeros",
]
