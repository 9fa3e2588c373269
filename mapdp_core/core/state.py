"""SweepState: an immutable snapshot of a clustering after one sweep."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class SweepState:
    """The clustering after one sweep (or iteration) of an algorithm.

    Attributes
    ----------
    iteration : int
        1 for the first sweep.
    labels : ndarray of int, shape (N,)
        Cluster of every input row, in input order, numbered 0..K-1 (read-only copy).
    n_clusters : int
    objective : float
        E of the reference program (PLOS eq 12 as computed by its Algorithm 3: the sum of
        each point's winning score d_ik - ln N_k^{-i}, minus K ln N0 and sum_k ln Gamma(N_k)).
        It depends on the visiting order; use ``neg_log_joint`` to compare runs.
    neg_log_joint : float
        The exact collapsed -ln p(X, z | N0, theta0), order-free.
    n_changed : int
        Rows whose cluster changed during the sweep.
    cluster_sizes : ndarray of int, shape (K,)
    summaries : dict
        ``mean`` (K, D) per-column predictive means (NaN for categorical columns),
        ``covariance`` {block column names: (K, d, d)} for Gaussian blocks,
        ``proportions`` {categorical column: (K, L)}.
    elapsed : float
        Seconds since the run started.
    converged : bool
        True on the last state when |Delta E| < tol stopped the run, or when a MAP-DP run came
        back to a partition it had reached and ended at the best of that cycle
        (:class:`~mapdp_core.engine.sweeps.CycleWatch`).
    algorithm : str
    """

    iteration: int
    labels: np.ndarray
    n_clusters: int
    objective: float
    neg_log_joint: float
    n_changed: int
    cluster_sizes: np.ndarray
    summaries: dict = field(repr=False)
    elapsed: float
    converged: bool = False
    algorithm: str = "MAP-DP"

    def __post_init__(self):
        for name in ("labels", "cluster_sizes"):
            arr = np.array(getattr(self, name), copy=True)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
