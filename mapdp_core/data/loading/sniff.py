"""Where the bytes come from and what they are: a path, bytes, text or a file object to
bytes; the signatures of files that are not tables (images, archives, PDF, HTML, JSON);
the file name shown in the report."""
from __future__ import annotations

import os
import re

from .errors import DataLoadError, NotATableError


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


def _not_a_table(start: str) -> None:
    low = start.lstrip()[:200].lower()
    if low.startswith(("<!doctype html", "<html", "<?xml", "{", "[")) and not re.match(r"\[?\s*[\d.\-+]+\s*,", low):
        what = "a web page (HTML)" if "html" in low else ("XML" if low.startswith("<?xml") else "JSON")
        raise NotATableError(
            f"the file holds {what}, not a table; if it came from a 'download as Excel' link, open it in a "
            "spreadsheet program and save it as .xlsx or 'CSV UTF-8'."
        )


def _source_name(source, name):
    if name is not None:
        return str(name)
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source and "\r" not in source):
        return os.path.basename(os.fspath(source))
    hint = getattr(source, "name", None)
    return os.path.basename(hint) if isinstance(hint, str) else None
