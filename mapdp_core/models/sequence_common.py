"""What ``fit`` takes beside X in the structured models, and the state-path tools of the hard HDP-HMMs.

* :class:`_ExtraArgMixin` carries the extra argument of ``fit`` (the ``groups`` of
  :class:`~mapdp_core.models.hdp.HardHDP`, the ``lengths`` of the sequence models) to
  ``_validate``; :class:`_LengthsMixin` gives the sequence models (both hard HDP-HMMs and
  :class:`~mapdp_core.models.ihmm.MAPIHMM`) ``fit``, ``fit_predict``, ``iter_sweeps`` and
  ``from_states`` with ``lengths``;
* :func:`_neighbours` checks ``lengths`` (the sizes of consecutive sequences in X) and gives
  every time step its neighbours within its sequence; transitions never cross a sequence's bounds;
* :func:`_transition_counts`, :func:`_viterbi` (the exact minimum-cost path, Viterbi's dynamic
  programming) and :func:`_path_cost`, for the hard HDP-HMMs (:mod:`.hdp_hmm`, :mod:`.hdp_hmm_direct`).
"""
from __future__ import annotations

import numbers

import numpy as np

from mapdp_core.core.estimator import SweepEstimator


class _ExtraArgMixin:
    """Carries the extra ``fit`` argument (groups, lengths) to ``_validate`` (called by the base
    class with X only) without keeping it on the estimator afterwards."""

    _extra_name = ""

    def _with_extra(self, value, call):
        self._extra_arg = value
        try:
            return call()
        finally:
            del self._extra_arg

    def _extra(self):
        return getattr(self, "_extra_arg", None)


class _LengthsMixin(_ExtraArgMixin):
    """``fit``, ``fit_predict``, ``from_states`` and ``iter_sweeps`` of the sequence models,
    which take ``lengths`` (the sizes of consecutive sequences in X; None: one sequence)."""

    def fit(self, X, lengths=None):
        """Fit on X (T, D), one row per time step; ``lengths`` splits X into sequences."""
        return self._with_extra(lengths, lambda: SweepEstimator.fit(self, X))

    def fit_predict(self, X, lengths=None):
        return self.fit(X, lengths).labels_

    def from_states(self, X, states, restart_values=None, lengths=None):
        return self._with_extra(lengths, lambda: SweepEstimator.from_states(self, X, states, restart_values))

    def iter_sweeps(self, X, lengths=None, *, restart: int = 0, order=None):
        """The generator of the states of one run (validated now), ``lengths`` as in ``fit``.
        ``order``: the visiting order of the time steps where a model visits them one at a time
        (:class:`~mapdp_core.HardHDPHMM`; transitions always follow time); the others label all
        time steps at once or in time order, and ignore it."""
        return self._with_extra(lengths, lambda: SweepEstimator.iter_sweeps(self, X, restart=restart, order=order))


def _neighbours(lengths, T: int) -> tuple[np.ndarray, np.ndarray]:
    """(previous, next) time step of every row within its sequence, -1 at the ends."""
    if lengths is None:
        lens = [T]
    else:
        if isinstance(lengths, (str, bytes)) or not hasattr(lengths, "__len__"):
            raise ValueError(f"lengths must be a sequence of positive whole numbers summing to {T}, got {lengths!r}.")
        lens = []
        for v in lengths:
            if isinstance(v, np.generic):
                v = v.item()
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                hint = ""
                if isinstance(v, float) and v.is_integer() and v >= 1:
                    hint = " (a float: give the lengths as integers, e.g. np.asarray(lengths).astype(int))"
                raise ValueError(f"lengths must hold positive whole numbers (one per sequence), got {v!r}{hint}.")
            lens.append(int(v))
        if sum(lens) != T:
            raise ValueError(f"lengths sum to {sum(lens)} but X has {T} rows; the sequences must cover X exactly.")
    prv = np.arange(T, dtype=np.int64) - 1
    nxt = np.arange(T, dtype=np.int64) + 1
    start = 0
    for n in lens:
        prv[start] = -1
        nxt[start + n - 1] = -1
        start += n
    return prv, nxt


def _lengths_of(prv) -> list:
    """The sequence lengths, from the ``prv`` of :func:`_neighbours`."""
    return np.diff(np.append(np.flatnonzero(prv < 0), len(prv))).tolist()


def _sequence_lengths(lengths, T: int) -> list:
    """The validated sequence lengths (None: one sequence of T steps)."""
    return _lengths_of(_neighbours(lengths, T)[0])


def _transition_counts(z, nxt, K) -> np.ndarray:
    """N (K, K): N[i, j] = number of steps t -> t+1 inside a sequence with z_t = i, z_{t+1} = j."""
    t = np.flatnonzero(nxt >= 0)
    N = np.zeros((K, K), dtype=np.int64)
    np.add.at(N, (z[t], z[nxt[t]]), 1)
    return N


def _viterbi(E, A, lengths) -> tuple[np.ndarray, float]:
    """Exact minimum of ``Σ_t E[t, z_t] + Σ_{t≥2} A[z_{t-1}, z_t]`` over all label paths
    (transitions only inside each sequence of ``lengths``; the first step of a sequence costs
    only its emission), by dynamic programming in O(T·K²). Ties go to the lowest index (in
    the last state and in every back-pointer). Returns (labels, minimum)."""
    E = np.asarray(E, dtype=float)
    A = np.asarray(A, dtype=float)
    T, K = E.shape
    z = np.empty(T, dtype=np.int64)
    cols = np.arange(K)
    total = 0.0
    start = 0
    for n in lengths:
        back = np.empty((n, K), dtype=np.int64)
        cost = E[start].copy()
        for t in range(1, n):
            cand = cost[:, None] + A  # (previous, next)
            back[t] = np.argmin(cand, axis=0)
            cost = cand[back[t], cols] + E[start + t]
        k = int(np.argmin(cost))
        total += float(cost[k])
        z[start + n - 1] = k
        for t in range(n - 1, 0, -1):
            k = int(back[t, k])
            z[start + t - 1] = k
        start += n
    return z, total


def _path_cost(E, A, z, nxt) -> float:
    t = np.flatnonzero(nxt >= 0)
    return float(E[np.arange(len(z)), z].sum() + A[z[t], z[nxt[t]]].sum())

