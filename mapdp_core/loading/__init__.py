"""Loading clinical tables (CSV, TSV, Excel) and suggesting a likelihood per column.

Three steps, each usable from a notebook and from the app (one module each: ``read``,
``suggest``, ``prepare``; the encoding rules are in :mod:`mapdp_core.encoding`):

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

from ..families import GAUSSIAN_FAMILIES  # the families' own list, kept here for old imports
from .errors import (DataLoadError, DataLoadWarning, DuplicateColumnsError, EmptyFileError, EncodingError,
                     LabelError, NotATableError, TooFewRowsError)
from .prepare import Prepared, missing_summary, prepare
from .read import MIN_ROWS, LoadReport, read_table
from .suggest import MAX_BINOMIAL_N, MAX_CATEGORIES, MAX_POISSON_DISPERSION, ROLES, suggest_roles_and_families

__all__ = [
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
    "missing_summary",
    "prepare",
    "read_table",
    "suggest_roles_and_families",
]
