"""Validation helpers shared by the public functions (MAP-DP, Gibbs, K-means, DP-means). Errors name the fix."""
from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.utils import check_array


def as_data(X, algorithm: str) -> np.ndarray:
    """``X`` as a C-contiguous float64 (N, D) array with finite values and N >= 1."""
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


def check_int(value, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be a whole number >= {low}, got {value!r}.")
    return int(value)


def check_nonneg(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}.")
    return float(value)


def check_order(order, N: int) -> np.ndarray:
    if order is None:
        return np.arange(N, dtype=np.int64)
    o = np.asarray(order)
    if o.shape != (N,) or not np.issubdtype(o.dtype, np.integer) or not np.array_equal(np.sort(o), np.arange(N)):
        raise ValueError(f"order must be a permutation of 0..{N - 1} (one visit per row).")
    return np.ascontiguousarray(o, dtype=np.int64)


def make_rng(random_state) -> np.random.Generator:
    """A numpy Generator from None, an int, a Generator or a legacy RandomState."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, bool):
        raise TypeError(f"random_state must be None, an int or a numpy Generator, got {random_state!r}.")
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"random_state must be None, an int >= 0 or a numpy Generator, got {random_state!r}.") from exc
