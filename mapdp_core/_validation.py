"""Argument checks shared by every public function and estimator.

One wording style: ``"<name> must be <rule>, got <value>."`` plus, where it is not obvious, what
to pass instead. Each check returns the value converted to the plain Python/numpy type the
caller needs, so a caller writes ``n = check_int(n, "n", 1)`` and never re-converts.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np

__all__ = ["as_data", "check_choice", "check_int", "check_nonneg", "check_order", "check_positive_values",
           "check_real", "check_seed", "make_rng", "restart_plan"]


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


def as_data(X, algorithm: str) -> np.ndarray:
    """``X`` as a C-contiguous float64 (N, D) array with finite values and N >= 1, for the
    algorithms that need complete numeric data."""
    from sklearn.utils import check_array  # sklearn is slow to import; only array checks need it

    try:
        arr = check_array(X, dtype=np.float64, order="C", ensure_min_samples=1, ensure_min_features=1)
    except ValueError as exc:
        msg = str(exc)
        if "NaN" in msg or "infinity" in msg:
            msg += (f" {algorithm} needs complete numeric data: drop or impute the missing rows, or use"
                    " MAP-DP, which marginalises missing values.")
        elif "could not convert" in msg or "dtype" in msg:
            msg += f" {algorithm} needs numeric columns: encode or drop text columns."
        elif "2D array" in msg:
            msg += " Pass a table of shape (n_samples, n_features)."
        raise ValueError(msg) from exc
    except TypeError as exc:
        raise TypeError(f"{exc} {algorithm} needs numeric columns: encode or drop text columns.") from exc
    return arr


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
