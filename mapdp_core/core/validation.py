"""Argument checks shared by every public function and estimator.

One wording style: ``"<name> must be <rule>, got <value>."`` plus, where it is not obvious, what
to pass instead. Each check returns the value converted to the plain Python/numpy type the
caller needs, so a caller writes ``n = check_int(n, "n", 1)`` and never re-converts.
"""
from __future__ import annotations

import math
import numbers
from collections import Counter
from collections.abc import Iterable

import numpy as np

__all__ = ["as_data", "duplicate_names", "check_bool", "check_choice", "check_condition", "check_int", "check_magnitude", "check_n_jobs",
           "check_nonneg", "check_numeric_frame", "check_order", "check_positive_values", "check_real", "check_seed",
           "column_kind", "make_rng", "object_array_as_float", "reject_1d", "restart_plan"]


def duplicate_names(names) -> list[str]:
    """The column names that occur more than once (as text, sorted); one pass, so a table of
    tens of thousands of columns is checked in milliseconds."""
    return sorted(n for n, k in Counter(str(c) for c in names).items() if k > 1)


def _is_bool(value) -> bool:
    # bool is an Integral in Python; True as "n_init=True" is nearly always a mistake
    return isinstance(value, (bool, np.bool_))


def check_int(value, name: str, low: int, high: int | None = None, *, whole_floats: bool = False) -> int:
    """``value`` as an int in ``[low, high]`` (``high=None``: no upper bound).

    ``whole_floats=True`` also accepts floats with no fractional part (``1e6``), for counts
    that users naturally write in scientific notation.
    """
    ok = not _is_bool(value) and (
        isinstance(value, numbers.Integral)
        or (whole_floats and isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer()))
    if ok and value >= low and (high is None or value <= high):
        return int(value)
    rule = f">= {low}" if high is None else f"from {low} to {high}"
    raise ValueError(f"{name} must be a whole number {rule}, got {value!r}.")


_INCLUSIVE = {"both": (True, True), "left": (True, False), "right": (False, True), "neither": (False, False)}


def check_real(value, name: str, *, low: float | None = None, high: float | None = None,
               positive: bool = False, inclusive: str = "both") -> float:
    """``value`` as a finite float.

    ``positive=True`` requires ``> 0``. ``low``/``high`` bound it; ``inclusive`` says which
    bounds are allowed values, as in ``pandas.Series.between``: "both", "left", "right" or
    "neither".
    """
    if inclusive not in _INCLUSIVE:
        raise ValueError(f"inclusive must be one of {sorted(_INCLUSIVE)}, got {inclusive!r}.")
    low_in, high_in = _INCLUSIVE[inclusive]
    rules = []
    if positive:
        rules.append("> 0")
    if low is not None:
        rules.append(f"{'>=' if low_in else '>'} {low}")
    if high is not None:
        rules.append(f"{'<=' if high_in else '<'} {high}")
    rule = "a finite number" + (" " + " and ".join(rules) if rules else "")
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be {rule}, got {value!r} of type {type(value).__name__}.")
    v = float(value)
    bad = (not math.isfinite(v) or (positive and v <= 0)
           or (low is not None and (v < low if low_in else v <= low))
           or (high is not None and (v > high if high_in else v >= high)))
    if bad:
        raise ValueError(f"{name} must be {rule}, got {value!r}.")
    return v


def check_nonneg(value, name: str) -> float:
    """``value`` as a finite float >= 0 (tolerances, penalties)."""
    return check_real(value, name, low=0)


def check_positive_values(values, name: str) -> list[float]:
    """A non-empty list of finite floats > 0 (grids of N0 or prior scales)."""
    try:
        arr = np.asarray(values, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a list of finite numbers > 0, got {values!r}.") from exc
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least one value.")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"every value in {name} must be a finite number > 0, got {arr.tolist()}.")
    return [float(v) for v in arr]


def check_choice(value, name: str, options: Iterable):
    """``value`` if it is one of ``options``; otherwise an error listing them."""
    options = list(options)
    try:
        if value in options:
            return value
    except TypeError:  # unhashable or incomparable value: it is not an option either
        pass
    raise ValueError(f"{name} must be one of {', '.join(repr(o) for o in options)}; got {value!r}.")


def check_seed(seed, name: str = "seed") -> np.random.Generator:
    """A numpy Generator from None (fresh entropy), an int >= 0, a SeedSequence, a Generator
    (used as is) or a legacy RandomState (seeds a new Generator from it)."""
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(0, 2**31 - 1))
    if seed is None or isinstance(seed, (np.random.Generator, np.random.SeedSequence)):
        return np.random.default_rng(seed)
    if _is_bool(seed) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"{name} must be None, a whole number >= 0 or a numpy Generator, got {seed!r}.")
    return np.random.default_rng(int(seed))


def is_dask_collection(X) -> bool:
    """Whether ``X`` is a Dask collection (checked without importing Dask when it is not loaded)."""
    import sys

    if "dask" not in sys.modules:
        return False
    import dask

    return dask.is_dask_collection(X)


def make_rng(random_state) -> np.random.Generator:
    """:func:`check_seed` under the scikit-learn name ``random_state``."""
    return check_seed(random_state, "random_state")


def check_order(order, N: int) -> np.ndarray:
    """The visiting order as an int64 permutation of ``0..N-1`` (None: input order)."""
    if order is None:
        return np.arange(N, dtype=np.int64)
    o = np.asarray(order)
    if o.shape != (N,) or not np.issubdtype(o.dtype, np.integer) or not np.array_equal(np.sort(o), np.arange(N)):
        raise ValueError(f"order must be a permutation of 0..{N - 1} (each row visited once), "
                         f"got {'an array of shape ' + str(o.shape) if o.shape != (N,) else 'repeated or missing rows'}.")
    return np.ascontiguousarray(o, dtype=np.int64)


def _first_bad_cell(X, names) -> tuple[int, str, float] | None:
    """(row, column name, value) of the first NaN or infinite cell of X in reading order, or None
    when X cannot be read as numbers or holds none."""
    try:
        A = np.asarray(X.to_numpy(dtype=float, na_value=np.nan) if hasattr(X, "to_numpy") else X, dtype=float)
    except (TypeError, ValueError):
        return None
    if A.ndim == 1:
        A = A[:, None]
    if A.ndim != 2:
        return None
    bad = np.argwhere(~np.isfinite(A))
    if not len(bad):
        return None
    r, c = (int(i) for i in bad[0])
    column = repr(names[c]) if names is not None and c < len(names) else str(c)
    return r, column, float(A[r, c])


def _gap_message(X, names, algorithm: str, missing: bool) -> str:
    """A plain message for a missing (NaN) or infinite value, naming its first row and column
    and what to do, in place of scikit-learn's (which speaks of supervised estimators)."""
    cell = _first_bad_cell(X, names)
    where = ""
    if cell is not None:
        r, column, value = cell
        missing = math.isnan(value)
        where = f" at row {r}, column {column}"
    if missing:
        return (f"X has a missing value (NaN){where}; {algorithm} needs complete numeric data: fill the gaps "
                "(impute them) or drop those rows, or use MAP-DP (MAPDP), which leaves missing values out of "
                "the likelihood.")
    return (f"X holds infinity{where}; {algorithm} needs finite numbers: replace the infinite values (or "
            "impute them as missing) or drop those rows.")


def _what(X) -> str:
    """A short description of an input that is not a table (for a message)."""
    if X is None:
        return "None"
    if isinstance(X, (str, bytes)):
        return f"text ({X!r:.40})"
    if isinstance(X, dict):
        return "a dict (pass a DataFrame, e.g. pandas.DataFrame(X), for a table of named columns)"
    if np.ndim(X) == 0:
        return f"a single value ({X!r:.40})"
    return f"a {type(X).__name__}"


def _one_d_message(shape) -> str:
    """scikit-learn's message for a 1-D X, without its print-out of the data (:func:`reject_1d`)."""
    try:
        reject_1d(shape)
    except ValueError as exc:
        return str(exc)
    return ""  # pragma: no cover - reject_1d always raises


def _not_numbers_message(X, names, algorithm: str, original: str) -> str:
    """A plain message for input that is not numbers: the first cell that is not a number (row,
    column and value), or what the input is when it is not a table at all."""
    ending = f"{algorithm} needs numeric columns: encode or drop text columns."
    if hasattr(X, "tocsr") or "sparse" in original.lower():  # a sparse matrix: scikit-learn's words say so
        return f"{original} {ending}"
    if X is None or isinstance(X, (str, bytes, dict)) or np.ndim(X) == 0:
        return f"X must be a table of numbers of shape (n_samples, n_features), got {_what(X)}. {ending}"
    try:
        A = np.asarray(X, dtype=object)
    except (TypeError, ValueError):
        A = None
    if A is not None and A.ndim in (1, 2):
        for i, v in enumerate(A.reshape(-1)):
            if v is None or isinstance(v, (numbers.Real, np.bool_)):
                continue
            try:
                float(v)
                continue
            except (TypeError, ValueError):
                pass
            r, c = np.unravel_index(i, A.shape) if A.ndim == 2 else (i, 0)
            column = repr(names[c]) if names is not None and c < len(names) else str(int(c))
            return (f"X must hold numbers, but row {int(r)}, column {column} holds {v!r:.40} (of type "
                    f"{type(v).__name__}, not a number: float() argument must be a string or a real number). {ending}")
    return f"X must hold numbers only ({original.rstrip('.')}). {ending}"


def as_data(X, algorithm: str, estimator=None, *, reset: bool = True) -> np.ndarray:
    """``X`` as a C-contiguous float64 (N, D) array with finite values and N >= 1, for the
    algorithms that need complete numeric data.

    With ``estimator``, scikit-learn's ``validate_data`` also records (``reset=True``, in
    ``fit``) or checks (``reset=False``, in ``predict``) ``n_features_in_`` and
    ``feature_names_in_``. DataFrame columns of dates, durations, text or nothing are refused
    by name (:func:`check_numeric_frame`), and so are values whose squares over- or underflow
    (:func:`check_magnitude`).
    """
    from sklearn.utils import check_array  # sklearn is slow to import; only array checks need it
    from sklearn.utils.validation import validate_data

    X = check_numeric_frame(X, algorithm)
    names = [str(c) for c in X.columns] if hasattr(X, "columns") else None
    try:
        if estimator is None:
            arr = check_array(X, dtype=np.float64, order="C", ensure_min_samples=1, ensure_min_features=1)
        else:
            arr = validate_data(estimator, X, dtype=np.float64, order="C", reset=reset)
    except ValueError as exc:
        msg = str(exc)
        if "NaN" in msg or "infinity" in msg:
            msg = _gap_message(X, names, algorithm, "NaN" in msg)
        elif "sequence" in msg or "inhomogeneous" in msg:
            msg = (f"X must be a rectangular table of numbers (every row the same length, one number per cell); "
                   f"got rows of different lengths or cells holding lists. {algorithm} needs an array of shape "
                   "(n_samples, n_features).")
        elif "could not convert" in msg or "dtype" in msg:
            msg = _not_numbers_message(X, names, algorithm, msg)
        elif "Complex data" in msg:
            msg = (f"Complex data not supported: X holds complex numbers; {algorithm} needs real numbers (give the "
                   "real part, or the real and imaginary parts as two columns).")
        elif "got 1D array" in msg:
            msg = _one_d_message(np.shape(X))
        elif "2D array" in msg:  # None, a single value
            msg = (f"Expected 2D array, got {_what(X)} instead; {algorithm} needs a table of numbers of shape "
                   "(n_samples, n_features).")
        elif "0 sample(s)" in msg or "0 feature(s)" in msg:
            shape = np.shape(X)
            msg += (f" X is empty ({shape[0]} rows x {shape[1] if len(shape) > 1 else 0} columns); {algorithm} "
                    "needs at least one row and one column.")
        elif "dim" in msg and "<= 2" in msg:
            msg += f" X must be 2-D (rows x features), got {np.ndim(X)} dimensions."
        raise ValueError(msg) from None
    except TypeError as exc:
        raise TypeError(_not_numbers_message(X, names, algorithm, str(exc))) from None
    check_magnitude(arr, names if names is not None else list(range(arr.shape[1])), algorithm)
    return np.ascontiguousarray(arr)


def restart_plan(random_state, n_restarts: int, N: int, *, shuffle: bool = True,
                 first_in_input_order: bool = False) -> list[tuple[np.ndarray | None, int]]:
    """The visiting order and seed of every restart, fixed before any restart runs.

    Returns one ``(order, seed)`` per restart: ``order`` is an int64 permutation of the N rows,
    or None for input order (``shuffle=False``, or restart 0 when
    ``first_in_input_order=True``); ``seed`` is an int for anything else the restart draws
    (initial centres, Gibbs uniforms).

    Restart r takes the r-th child of ``numpy.random.SeedSequence(random_state)``. So restart r
    gets the same plan whether the restarts run one by one, in threads, in processes or on a
    Dask cluster, and whatever ``n_jobs`` is; and asking for more restarts leaves the first
    ones unchanged. ``random_state`` is None (fresh entropy), an int >= 0, or a Generator /
    RandomState, from which one 63-bit entropy value is drawn (so the plan advances it).
    """
    n_restarts = check_int(n_restarts, "n_restarts", 1)
    N = check_int(N, "N (the number of rows)", 0)
    if isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        random_state = int(make_rng(random_state).integers(0, 2**63 - 1))
    elif random_state is not None:
        make_rng(random_state)  # same error as everywhere for a bad seed
    children = np.random.SeedSequence(random_state).spawn(n_restarts)
    plan = []
    for r, child in enumerate(children):
        order_seed, seed = child.generate_state(2, dtype=np.uint64)
        order = None
        if shuffle and not (first_in_input_order and r == 0):
            order = np.random.default_rng(int(order_seed)).permutation(N).astype(np.int64)
        plan.append((order, int(seed)))
    return plan


def check_bool(value, name: str) -> bool:
    """``value`` as a bool; only True/False (and numpy's bools) are accepted, so that a
    string such as "no" is not silently read as True."""
    if not _is_bool(value):
        raise ValueError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def check_n_jobs(value) -> int | None:
    """``n_jobs`` as joblib reads it: None, or a whole number other than 0 (-1: every core)."""
    if value is None:
        return None
    if _is_bool(value) or not isinstance(value, numbers.Integral) or value == 0:
        raise ValueError(f"n_jobs must be None or a whole number other than 0 (-1 uses every core), got {value!r}.")
    return int(value)


#: Beyond this magnitude the square of a value overflows float64 (about 1.8e308), so no
#: variance or squared distance can be formed; below this spread the squares underflow.
HUGE_VALUE = 1e150
TINY_SPREAD = 1e-150


def check_magnitude(M: np.ndarray, names, algorithm: str) -> None:
    """Refuse columns whose squares over- or underflow double precision.

    Every Gaussian family and every distance-based algorithm squares the data (variances,
    squared distances); at |x| > 1e150 those squares are infinite and below a spread of
    1e-150 they are zero, so priors built from the data, and the clustering itself, would
    silently be wrong. The message names the columns and asks for a rescaling, which the
    user can undo when reading the result (the clustering of a rescaled column is the same
    question asked in other units).
    """
    with np.errstate(invalid="ignore", over="ignore"):
        # fmax/fmin skip NaN without copying the table; only a table with infinite values
        # (left out here) needs the copy
        high = np.fmax.reduce(M, axis=0) if M.size else np.zeros(M.shape[1])
        low = np.fmin.reduce(M, axis=0) if M.size else np.zeros(M.shape[1])
        if np.isinf(high).any() or np.isinf(low).any():
            finite = np.where(np.isfinite(M), M, np.nan)
            high = np.nanmax(finite, axis=0, initial=-np.inf)
            low = np.nanmin(finite, axis=0, initial=np.inf)
        biggest = np.nan_to_num(np.fmax(np.abs(high), np.abs(low)), nan=0.0, posinf=0.0)
        spread = high - low
    huge = [str(names[j]) for j in np.flatnonzero(biggest > HUGE_VALUE)]
    if huge:
        top = float(np.max(biggest))
        raise ValueError(
            f"column(s) {huge} hold values as large as {top:.3g}: the data are too large for double precision "
            f"(their squares overflow beyond about 1e308, so {algorithm} cannot compute variances or distances). "
            f"Rescale them first, e.g. divide by {10.0 ** math.floor(math.log10(top)):.0e} or change units.")
    tiny = [str(names[j]) for j in np.flatnonzero((spread > 0) & (spread < TINY_SPREAD))]
    if tiny:
        raise ValueError(
            f"column(s) {tiny} vary by less than {TINY_SPREAD:.0e}: the data are too small for double precision "
            f"(their squared differences underflow to 0, so {algorithm} cannot tell the values apart). "
            "Rescale them first, e.g. multiply by a large power of 10 or change units.")


def column_kind(series) -> tuple[str, str] | None:
    """What a pandas column holds when it is not plain numbers or booleans, and what to do:
    ``(description, advice)``, or None for a numeric, boolean or numbers-as-objects column."""
    import pandas as pd

    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
        return None
    if pd.api.types.is_datetime64_any_dtype(dtype) or isinstance(dtype, pd.PeriodDtype):
        return ("dates", "convert them to numbers first, e.g. days since the first date: "
                "(df[col] - df[col].min()).dt.days, or drop the column")
    if pd.api.types.is_timedelta64_dtype(dtype):
        return ("durations", "convert them to numbers first, e.g. df[col].dt.total_seconds(), or drop the column")
    present = series.dropna()
    if present.empty:
        return ("no values at all (every entry is missing)", "drop the column")
    kinds = present.map(type)
    if kinds.map(lambda t: issubclass(t, numbers.Real)).all():
        return None  # numbers stored as Python objects: read as numbers
    if kinds.map(lambda t: issubclass(t, str)).all():
        return ("text", "use the 'categorical' likelihood, encode it as numbers, or drop the column")
    sample = present[~kinds.map(lambda t: issubclass(t, numbers.Real))].iloc[0]
    return (f"mixed or non-numeric values (e.g. {sample!r:.40} of type {type(sample).__name__})",
            "convert the column to numbers or to text, or drop it")


def check_numeric_frame(X, algorithm: str):
    """For the algorithms that need numbers: a DataFrame is returned with numbers-as-objects
    columns converted to float, or an error naming each column that holds dates, durations,
    text or nothing, with what to do; anything else is returned unchanged."""
    import pandas as pd

    if isinstance(X, pd.Series):
        X = X.to_frame()
    if not isinstance(X, pd.DataFrame):
        return X
    duplicated = duplicate_names(X.columns)
    if duplicated:
        raise ValueError(f"duplicate column names {duplicated}; rename the columns so each is unique.")
    problems = []
    for col in X.columns:
        kind = column_kind(X[col])
        if kind is not None:
            problems.append(f"column '{col}' holds {kind[0]}: {kind[1]}")
    if problems:
        raise ValueError(f"{algorithm} needs numeric columns; " + "; ".join(problems) + ".")
    objects = [c for c in X.columns if X[c].dtype == object]
    if objects:
        X = X.copy()
        for c in objects:
            X[c] = pd.to_numeric(X[c]).astype(float)
    return X


def object_array_as_float(M: np.ndarray) -> np.ndarray:
    """A numpy object array of numbers (None: missing) as float64; anything else is a
    TypeError that names the first cell that is not a number."""
    out = np.empty(M.shape, dtype=np.float64)
    flat = out.reshape(-1)
    for i, v in enumerate(M.reshape(-1)):
        if v is None:
            flat[i] = np.nan
        elif isinstance(v, numbers.Real):
            flat[i] = float(v)
        else:
            where = np.unravel_index(i, M.shape) if M.ndim else ()
            raise TypeError(
                f"X must hold numbers, but the cell at {tuple(int(w) for w in where)} is {v!r:.40} of type "
                f"{type(v).__name__}, not a number (float() argument must be a string or a real number, and "
                "only numbers are clustered); pass a DataFrame to use text columns as categories.")
    return out


#: scikit-learn's own wording for a 1-D X (sklearn.utils.check_array), so that a user sees
#: the same advice from every estimator
def reject_1d(shape) -> None:
    """Raise scikit-learn's message for a 1-D X."""
    raise ValueError(
        f"Expected 2D array, got 1D array instead (shape {tuple(shape)}). Reshape your data either using "
        "array.reshape(-1, 1) if your data has a single feature or array.reshape(1, -1) if it contains a "
        "single sample.")


def check_condition(matrix, name: str, limit: float = 1e12) -> None:
    """Refuse a square (covariance-like) matrix that is numerically singular: beyond a
    condition number of ``limit`` its inverse and log-determinant are dominated by rounding,
    so every cluster score built on it is noise."""
    A = np.asarray(matrix, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 2 or not np.all(np.isfinite(A)):
        return  # shape, symmetry and finiteness are the family's checks
    with np.errstate(all="ignore"):
        eig = np.linalg.eigvalsh(0.5 * (A + A.T))
    top, low = float(np.max(eig)), float(np.min(eig))
    if low <= 0:
        return  # not positive definite: the family says so in its own words
    cond = top / low
    if cond > limit:
        raise ValueError(
            f"{name} is numerically singular (condition number {cond:.3g}, above {limit:.0e}: its eigenvalues range "
            f"from {low:.3g} to {top:.3g}), so the clustering would be driven by rounding errors. Pass a positive "
            "definite matrix whose variances are in proportion to the columns' own (within a factor of about 1e12), "
            "e.g. add a small multiple of the identity, or leave the key out to use the default from the data.")
