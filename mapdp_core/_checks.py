"""Old home of the shared checks; they live in :mod:`mapdp_core._validation` now."""
from ._validation import as_data, check_int, check_nonneg, check_order, make_rng  # noqa: F401
