"""Errors and warnings of the loading steps: each message says what is wrong and what to do."""
from __future__ import annotations

import warnings

__all__ = ["DataLoadError", "DataLoadWarning", "DuplicateColumnsError", "EmptyFileError", "EncodingError",
           "LabelError", "NotATableError", "TooFewRowsError"]


class DataLoadError(ValueError):
    """The data cannot be loaded or prepared; the message says why and what to do."""


class EmptyFileError(DataLoadError):
    """The file holds no data at all."""


class TooFewRowsError(DataLoadError):
    """Fewer data rows than clustering needs (:data:`MIN_ROWS`)."""


class NotATableError(DataLoadError):
    """The content is not a text table or a spreadsheet (an image, a PDF, random bytes ...)."""


class EncodingError(DataLoadError):
    """The text is in an encoding that could not be recognised."""


class DuplicateColumnsError(DataLoadError):
    """Two or more columns share a name."""


class LabelError(DataLoadError):
    """The ground-truth label column cannot be used."""


class DataLoadWarning(UserWarning):
    """Something was changed or set aside while loading or preparing; the work goes on."""


def _warn(message: str, notes: list) -> None:
    notes.append(message)
    warnings.warn(message, DataLoadWarning, stacklevel=3)
