"""The text encoding of a file's bytes (the rules are listed in :mod:`mapdp_core.data.loading`):
a byte-order mark, UTF-32/UTF-16 by where the zeros fall, strict UTF-8, then the
Windows-1252 and GB18030 fallbacks when the bytes make them plausible."""
from __future__ import annotations

import codecs
import re

import numpy as np

from .errors import EncodingError, NotATableError


_BOMS = [  # UTF-32 before UTF-16: the UTF-32-LE mark begins with the UTF-16-LE one
    (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"),
]
_TEXT_CONTROLS = set(b"\t\n\r\x0b\x0c\x1a")
#: Windows-1252 bytes 0x80-0x9F that Western text does use (euro sign, typographic quotes,
#: dashes, ellipsis, bullet, trade mark); the others there are rare in text and common as
#: lead bytes of Shift-JIS and GBK characters
_CP1252_PUNCTUATION = set(b"\x80\x82\x84\x85\x91\x92\x93\x94\x95\x96\x97\x99")
#: one GB18030 character (4 bytes, 2 bytes) or a stray high byte, scanned left to right
_GB_TOKEN = re.compile(rb"[\x81-\xfe][\x30-\x39][\x81-\xfe][\x30-\x39]|[\x81-\xfe][\x40-\x7e\x80-\xfe]|[\x80-\xff]")
_SAMPLE_BYTES = 1 << 20


def _zero_pattern(head: bytes, period: int) -> list[float]:
    """Share of zero bytes at each offset modulo ``period`` (UTF-16/32 text of ASCII characters
    has zeros at fixed offsets)."""
    n = len(head) - len(head) % period
    return [head[k:n:period].count(0) / max(n // period, 1) for k in range(period)]


def _wide_encoding(data: bytes) -> str | None:
    """UTF-32 or UTF-16 (LE/BE) without a byte-order mark, recognised by where the zeros are."""
    head = data[:4096]
    if len(head) < 8:
        return None
    z4 = _zero_pattern(head, 4)
    if z4[0] < 0.05 and min(z4[1:]) > 0.9:
        return "utf-32-le"
    if z4[3] < 0.05 and min(z4[:3]) > 0.9:
        return "utf-32-be"
    z2 = _zero_pattern(head, 2)
    if z2[1] > 0.4 and z2[0] < 0.05:
        return "utf-16-le"
    if z2[0] > 0.4 and z2[1] < 0.05:
        return "utf-16-be"
    return None


def _legacy_encoding(data: bytes) -> str | None:
    """Windows-1252 or GB18030 for text that is not UTF-8, when the bytes make it plausible.

    Western text has isolated accented letters (``Jos\\xe9``): a high byte with ASCII on both
    sides, mostly in 0xA0-0xFF. Chinese text in GBK/GB18030 has high bytes in pairs, nearly
    all within the GB2312 block of common characters (both bytes 0xA1-0xFE). Japanese
    Shift-JIS and Big5 have many pairs outside that block and are refused (EUC-KR cannot be
    told from GB2312 by its bytes: it is read as GB18030)."""
    sample = data[:_SAMPLE_BYTES]
    high = np.flatnonzero(np.frombuffer(sample, dtype=np.uint8) >= 0x80).tolist()
    if not high:
        return None
    at = set(high)
    isolated = sum(1 for i in high if i - 1 not in at and i + 1 not in at)
    c1 = [sample[i] for i in high if sample[i] < 0xA0]
    latin = (isolated >= 0.7 * len(high)
             and (len(c1) <= 0.5 * len(high) or all(b in _CP1252_PUNCTUATION for b in c1)))
    if latin:
        return "cp1252"
    tokens = _GB_TOKEN.findall(sample)
    common = sum(1 for t in tokens if len(t) == 2 and 0xA1 <= t[0] <= 0xF7 and 0xA1 <= t[1] <= 0xFE)
    if tokens and common >= 0.9 * len(tokens):
        return "gb18030"
    return None


_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def _mostly_utf8(data: bytes) -> bool:
    """Whether at least half of the high bytes of the sample form valid UTF-8 sequences."""
    sample = data[:_SAMPLE_BYTES]
    n_high = int(np.count_nonzero(np.frombuffer(sample, dtype=np.uint8) >= 0x80))
    in_sequences = sum(len(m) for m in _UTF8_SEQUENCE.findall(sample))
    return n_high > 0 and in_sequences >= 0.5 * n_high


def _check_decodes(data: bytes, encoding: str) -> None:
    """Raise EncodingError unless all of ``data`` decodes as ``encoding`` into text without NULs
    (checked in slices, so a large file is never held twice)."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    step = 1 << 20
    for start in range(0, len(data), step):
        try:
            chunk = decoder.decode(data[start:start + step], final=start + step >= len(data))
        except UnicodeDecodeError as exc:
            where = start + exc.start
            raise EncodingError(
                f"the file is not valid {encoding.upper()} text (byte 0x{data[where]:02x} at position {where} "
                "does not fit); it may mix encodings. Open it in a spreadsheet program, save it as 'CSV UTF-8' "
                "and upload it again."
            ) from None
        if "\x00" in chunk:
            raise EncodingError(
                f"the file read as {encoding.upper()} contains NUL characters, so its encoding was not recognised; "
                "open it in a spreadsheet program, save it as 'CSV UTF-8' and upload it again."
            )


def _detect_encoding(data: bytes) -> str:
    """The text encoding of ``data`` (checked to decode in full), or a DataLoadError saying why
    the bytes are not text. Rules: in :mod:`mapdp_core.data.loading`."""
    for mark, enc in _BOMS:
        if data.startswith(mark):
            _check_decodes(data, enc)
            return enc
    if b"\x00" in data[:65536]:
        enc = _wide_encoding(data)
        if enc:
            _check_decodes(data, enc)
            return enc
        head = data[:4096]
        if sum(1 for b in head if b == 0 or 32 <= b < 127 or b in _TEXT_CONTROLS) >= 0.95 * len(head):
            raise EncodingError(
                "the file looks like text in a wide encoding (UTF-32 or UTF-16 without a byte-order mark) "
                "that could not be recognised; open it in a spreadsheet program and save it as 'CSV UTF-8'."
            )
        raise NotATableError(
            "the file contains binary data, not a text table; upload a CSV/TSV text file or an Excel "
            "workbook (.xlsx)."
        )
    head = data[:65536]
    controls = sum(1 for b in head if b < 32 and b not in _TEXT_CONTROLS)
    if controls > max(2, 0.01 * len(head)):
        raise NotATableError(
            "the file contains binary data, not a text table; upload a CSV/TSV text file or an Excel "
            "workbook (.xlsx)."
        )
    try:
        _check_decodes(data, "utf-8")
        return "utf-8"
    except EncodingError as exc:
        utf8_error = exc
    if _mostly_utf8(data):  # a UTF-8 file with a few stray bytes: no fallback reads it right
        raise utf8_error from None
    enc = _legacy_encoding(data)
    if enc:
        try:
            _check_decodes(data, enc)
            return enc
        except EncodingError:
            pass
    raise EncodingError(
        "the text encoding could not be recognised: it is not UTF-8, and neither Windows-1252/Latin-1 "
        "(Western European) nor GBK/GB18030 (Chinese) reads it plausibly; it may be Shift-JIS, Big5, EUC-KR or "
        "a mixture of encodings. Open the file in a spreadsheet program and save it as 'CSV UTF-8', then "
        "upload it again."
    )
