"""A bound on the memory one session's uploaded table may take on a shared server (issue 43, item 6).

A class server holds every student's upload in its own memory (nothing is written to disk), so
several large tables at once could make the kernel end the server for all of them. The server's
operator sets the bound per session in the config file (``[server] session_memory_mb``, which
``scripts/serve.py`` passes on as :data:`ENV`); without it :data:`DEFAULT_MB` holds. A table over
the bound is refused with a sentence that names its size, the bound and what to do, before the
session keeps it: the file's bytes are checked before it is read (a file larger than the bound
gives a table at least about as large, and reading it would hold both), the table's own size
(``DataFrame.memory_usage(deep=True)``, text cells included) once it is read.

No Streamlit here: the Data page calls :func:`check_file` and :func:`check_table`.
"""
from __future__ import annotations

import os

import pandas as pd

__all__ = ["ENV", "DEFAULT_MB", "TableTooLarge", "bound_bytes", "table_bytes", "check_file", "check_table"]

#: The environment variable that carries the bound, in MB (``scripts/serve.py`` sets it from the config).
ENV = "MAPDP_SESSION_MEMORY_MB"
#: The bound when the operator set none: a 200 MB CSV of numbers (the default upload limit) reads
#: into well under this; thirty sessions at the bound need 30 GB, so a smaller server sets less.
DEFAULT_MB = 1024
_MB = 1024 * 1024


class TableTooLarge(ValueError):
    """A table over the session's memory bound, said in a sentence."""


def bound_bytes() -> int:
    """The bound in bytes, read each time (the operator's value, else :data:`DEFAULT_MB`; a value that
    is not a whole number of at least 1 is ignored)."""
    try:
        mb = int(os.environ.get(ENV, "").strip() or DEFAULT_MB)
    except ValueError:
        mb = DEFAULT_MB
    return (mb if mb >= 1 else DEFAULT_MB) * _MB


def table_bytes(table: pd.DataFrame) -> int:
    """The table's size in memory, text cells and the index included."""
    return int(table.memory_usage(deep=True, index=True).sum())


def _size(n: int) -> str:
    return f"{n / _MB:,.1f} MB" if n < 100 * _MB else f"{n / _MB:,.0f} MB"


def _refusal(name: str, what: str, n: int, bound: int) -> TableTooLarge:
    return TableTooLarge(
        f"'{name}' {what} {_size(n)}, more than the {_size(bound)} each session may hold on this server (the "
        "operator's [server] session_memory_mb), so it was not read into this session. Upload fewer rows or columns "
        "(a random sample of the rows, or only the columns to cluster), or ask the server's operator to raise the "
        "bound or to put the table in a large-table folder, where it is fitted out of core.")


def check_file(n_bytes: int, name: str) -> None:
    """Refuse a file whose bytes alone exceed the bound, before it is read."""
    bound = bound_bytes()
    if int(n_bytes) > bound:
        raise _refusal(name, "is", int(n_bytes), bound)


def check_table(table: pd.DataFrame, name: str) -> None:
    """Refuse a table read from ``name`` whose size in memory exceeds the bound."""
    bound, n = bound_bytes(), table_bytes(table)
    if n > bound:
        raise _refusal(name, "takes", n, bound)
