r"""MAP-iHMM: MAP inference in the HDP-HMM (infinite HMM) by the MAP-DP recipe (EJS §6.2).

Raykov, Boukouvalas & Little (2016), Electronic Journal of Statistics, §6.2, eqs 6.2 and
6.4-6.7, with the corrections of ``shared/OTHER-SYSTEMS.md`` §4.1-4.2 (errata I1-I9).

Model: top-level DP(M0, H), rows DP(N0, G0), direct-assignment representation with global
weights kappa_1..kappa_K and the unrepresented mass kappa_{K+1}. The emissions are any
likelihood (and mixed table) MAP-DP supports: the per-state statistics, the predictive
-ln f(x_t | stats_k^{-t}) (eq 6.4) and -ln f(x_t | theta0) come from MAP-DP's own engine
(:class:`~mapdp_core._model.ModelData`, ``_kernels.cluster_nlp`` / ``move_rows``).

One iteration (OTHER-SYSTEMS §4.1):

1. **table counts** m_pk for every N_pk > 0, with a = N0 kappa_k (``table_counts``):
   ``"greedy"`` the argmax of every Polya step, m = min(N_pk, floor(a) + 1) (derived, not in
   EJS); ``"map"`` the mode of Antoniak's distribution, argmax_m log|s(N_pk, m)| + m log a
   (computed as the mode of the equivalent Poisson-binomial, the normalised Stirling row,
   by the recurrence |s(j+1, m)| = j |s(j, m)| + |s(j, m-1)|; O(N_pk^2)); ``"sample"`` eq 6.2
   with erratum I7 (customer l opens a table with probability a/(a + l - 1)), seeded by
   ``random_state`` (I9).
2. **kappa** (eq 6.6, ``kappa``): ``"mode"`` as printed, the mode of
   Dirichlet(M_1..M_K, M0), kappa_k = (M_k - 1)/(M. - K - 1); erratum I2: a state whose dish
   sits at one table gets kappa_k = 0 and can then only be reached along transitions it
   already has, and the NLL below is +inf as soon as such a state is entered from a state that
   never entered it before; ``"mean"`` the posterior mean M_k/M., M0/M.; ``"floor"`` the mode
   with every excess (M_k - 1, M0 - 1) floored at :data:`KAPPA_FLOOR` = 1/2 (a one-table state
   counts half a table, so kappa_k > 0 always).
   Before the first iteration kappa is the prior mean of Dirichlet(1, ..., 1, M0).
3. **assignment sweep** in time order (eq 6.5 with I1 fixed, eq 6.7): remove x_t and its two
   transitions; for every state slot k < K (a slot emptied during the sweep stays a
   candidate, scored with the prior predictive, until the clean-up)

   q_tk = -ln f(x_t | stats_k^{-t}) - ln A_k,
   A_k = (N_{p k} + N0 kappa_k) (N_{k n} + N0 kappa_n + [p = k = n]) / (N_{k.} + N0 + [p = k]),

   with p = z_{t-1}, n = z_{t+1}; a new state scores -ln f(x_t | theta0) - ln(N0 kappa_{K+1}
   kappa_n) (EJS as printed; ``new_state="exact"`` uses the split weight b kappa_{K+1}
   instead, which makes the score the exact conditional, so that a sweep never increases the
   NLL even when it opens states). At the last step of a sequence every factor involving
   z_{t+1} is dropped (A_k = N_{p k} + N0 kappa_k; new: N0 kappa_{K+1}). Boundary (I4, Van
   Gael): the first step of every sequence has the virtual predecessor state 0 (the state
   currently at index 0): the transition 0 -> z_first is counted in N like any other.
   A new state takes kappa_new = b kappa_{K+1}, kappa_{K+1} <- (1 - b) kappa_{K+1} with
   b = 1/(1 + M0), the mean of the Beta(1, M0) stick (I3; its mode, 0, is degenerate).
   Ties go to the lowest index.
4. **clean-up**: empty states are dropped (the others keep their order) and their kappa
   mass moves to kappa_{K+1} (Van Gael).
5. **objective** (I6, OTHER-SYSTEMS §4.1 step 5):
   NLL = -sum_k ln p(X_k | theta0) - sum_p [ln G(N0) - ln G(N0 + N_p.)
         + sum_k (ln G(N0 kappa_k + N_pk) - ln G(N0 kappa_k))],
   with MAP-DP's data-only constants included in the first term (so it compares with
   ``MAPDP.neg_log_joint_`` up to the partition prior). The transition counts include the
   virtual ones. With kappa fixed, step 3 never increases it (``new_state="exact"``; also
   with ``"ejs"`` in a sweep that opens no state); steps 1-2 can (EJS L428), so the estimator is
   not monotone. Stop when |dNLL| < tol, or no label changed, or after ``max_iter``.

Initialisation (I5, ``init``): ``"mapdp"`` (default) the MAP-DP mixture labels, ignoring
time (MAP-DP with the same N0, likelihood and prior, rows in time order, one run);
``"one"`` every step in one state (EJS Algorithm 1) -- N_11 = T - 1 dominates every other
option (PLOS Appendix B's "dominating reinforcement"), so no state ever opens: measured on
the Table 4 data (``benchmarks/ihmm_table4.py``, 10 sequences), K = 1 and no label changes in
the first sweep, NMI 0; ``"random"`` ``min(10, T)`` states drawn uniformly (seeded) -- a poor
start: deterministic alternations between two states are local optima of the sweep (changing
one label breaks two transitions); measured NMI 0.01-0.13 on 3 Table 4 sequences. The MAP-DP
start reached NMI 0.59 there (the time-blind MAP-DP itself 0.52), hence the default.

Defaults, chosen by measurement on the Table 4 recipe (5 seeds x 2 readings of sigma, see
``benchmarks/results/ihmm-table4-2026-11-24.txt``): ``kappa="mean"`` -- the same labels as
``"mode"`` on every sequence, but ``"mode"`` left an infinite NLL (I2) on some of them, which
makes the stopping rule and the restart comparison meaningless; ``table_counts="greedy"`` --
the same labels as ``"map"`` at lower cost, and deterministic unlike ``"sample"``;
``init="mapdp"`` as above; ``new_state="ejs"`` (as printed; ``"exact"`` gave the same labels).

Boundary quirk of the Van Gael convention: the virtual predecessor is whatever state sits at
index 0, so when the clean-up drops state 0 the virtual transitions move to the new state 0
and the NLL changes (slightly) without any label changing.

Cost: O(T K C_f) per sweep with a Python loop over time steps calling the numba kernels
(about 30-60 us a step: T = 4000, 3-5 iterations took 0.5-1 s on 2 cores), plus
O(sum N_pk^2) for ``"map"`` table counts.
"""
from __future__ import annotations

import math
import time
from typing import Iterator

import numpy as np
from scipy.special import gammaln

from . import _kernels
from ._model import ModelData
from ._validation import check_choice, check_int, check_nonneg, check_real
from .estimator import Problem, SweepEstimator
from .hdp import _ExtraArgMixin, _neighbours
from .mapdp import MAPDP, _run
from .state import SweepState

#: the floor of every Dirichlet excess (M_k - 1, M0 - 1) under ``kappa="floor"``
KAPPA_FLOOR = 0.5

TABLE_COUNTS = ("greedy", "map", "sample")
KAPPAS = ("mode", "mean", "floor")
INITS = ("mapdp", "one", "random")
NEW_STATES = ("ejs", "exact")


# ----------------------------------------------------------------------------- table counts
def map_table_count(n: int, a: float) -> int:
    """argmax over 1 <= m <= n of log|s(n, m)| + m log a (Antoniak's distribution of the number
    of tables of n customers with concentration a). Computed on the normalised row
    |s(n, m)| a^m / (a)_n, a probability vector built by the Stirling recurrence
    |s(j+1, m)| = j |s(j, m)| + |s(j, m-1)| (no overflow; entries far in the tails underflow to
    0, which cannot change the argmax). ``a = 0`` gives 1."""
    n = int(n)
    if n <= 1 or a <= 0.0:
        return max(min(n, 1), 0) if n >= 1 else 0
    p = np.zeros(n + 1)
    p[1] = 1.0  # one customer, one table
    for j in range(1, n):
        w_old, w_new = j / (a + j), a / (a + j)
        p[1:j + 2] = p[1:j + 2] * w_old + p[0:j + 1] * w_new
    return int(np.argmax(p[1:])) + 1


def table_counts(N: np.ndarray, kappa: np.ndarray, N0: float, mode: str, rng=None) -> np.ndarray:
    """m_pk for a (P, K) matrix of transition counts and the K weights ``kappa`` (a = N0 kappa_k)."""
    m = np.zeros(N.shape, dtype=np.int64)
    a_all = N0 * np.asarray(kappa, dtype=float)
    for p, k in zip(*np.nonzero(N)):
        n, a = int(N[p, k]), float(a_all[k])
        if mode == "greedy":
            m[p, k] = min(n, math.floor(a) + 1)
        elif mode == "map":
            m[p, k] = map_table_count(n, a)
        else:  # sample: customer l (1-based) opens a table with probability a / (a + l - 1)
            if a <= 0.0:
                m[p, k] = 1
            else:
                m[p, k] = int((rng.random(n) < a / (a + np.arange(n))).sum())
    return m


def update_kappa(M: np.ndarray, M0: float, mode: str) -> tuple[np.ndarray, float]:
    """(kappa_1..kappa_K, kappa_{K+1}) from the table counts per state ``M`` (eq 6.6 and I2)."""
    M = np.asarray(M, dtype=float)
    if mode == "mean":
        total = M0 + M.sum()
        return M / total, M0 / total
    lo = KAPPA_FLOOR if mode == "floor" else 0.0
    ex = np.maximum(M - 1.0, lo)
    ex0 = max(M0 - 1.0, lo)
    total = ex.sum() + ex0
    return ex / total, ex0 / total


# ----------------------------------------------------------------------------- transitions
def log_transition_terms(N, rowsum, kappa, kappa_new, N0, p, n, K):
    """ln A_k for k < K and the new-state term, eq 6.5 with I1 fixed (counts without t).

    ``p``: the predecessor's state (the virtual state 0 at a sequence start); ``n``: the
    successor's state, or -1 at the last step of a sequence (every factor with z_{t+1}
    dropped). ``kappa_new``: the weight the new state is scored with."""
    k = np.arange(K)
    with np.errstate(divide="ignore"):
        first = N[p, :K] + N0 * kappa[:K]
        if n < 0:
            return np.log(first), math.log(N0 * kappa_new) if kappa_new > 0 else -math.inf
        same = k == p
        second = N[:K, n] + N0 * kappa[n] + (same & (p == n))
        third = rowsum[:K] + N0 + same
        log_new = math.log(N0 * kappa_new * kappa[n]) if kappa_new * kappa[n] > 0 else -math.inf
        return np.log(first) + np.log(second) - np.log(third), log_new


def transition_nll(N, kappa, N0) -> float:
    """-sum_p [ln G(N0) - ln G(N0 + N_p.) + sum_k (ln G(N0 kappa_k + N_pk) - ln G(N0 kappa_k))]."""
    K = len(kappa)
    N = np.asarray(N, dtype=float)[:K, :K]
    used = N > 0
    if np.any(used & (np.asarray(kappa)[None, :] <= 0)):
        return math.inf  # I2: Gamma(N_pk)/Gamma(0) = 0
    a = np.broadcast_to(N0 * np.asarray(kappa, dtype=float)[None, :], N.shape)
    rows = N.sum(axis=1)
    live = rows > 0
    total = float(np.sum(gammaln(a[used] + N[used]) - gammaln(a[used])))
    total += float(np.sum(math.lgamma(N0) - gammaln(N0 + rows[live])))
    return -total


class _Chain:
    """The mutable state of one run: emission statistics, labels, transition counts, kappa."""

    def __init__(self, parsed, labels, prv, nxt, N0, M0, new_state="ejs"):
        self.model = ModelData(parsed)
        self.labels = np.array(labels, dtype=np.int64)
        self.T = len(self.labels)
        self.prv, self.nxt = prv, nxt
        self.N0, self.M0 = float(N0), float(M0)
        self.b = 1.0 / (1.0 + self.M0)
        self.new_state = new_state
        self.K = self.model.start(self.labels)
        self.kappa = np.full(self.K, 1.0 / (self.K + self.M0))  # prior mean of Dirichlet(1..1, M0)
        self.kappa_rest = self.M0 / (self.K + self.M0)
        self.m = np.zeros((self.K, self.K), dtype=np.int64)
        self.recount()

    # the transition counts, with the virtual transition 0 -> z_first of every sequence (I4)
    def recount(self):
        cap = max(self.model.capacity, self.K + 2)
        self.N = np.zeros((cap, cap))
        self._pad_kappa(cap)
        z = self.labels
        src = np.where(self.prv >= 0, z[np.maximum(self.prv, 0)], 0)
        np.add.at(self.N, (src, z), 1.0)
        self.rowsum = self.N.sum(axis=1)

    def _pad_kappa(self, cap):
        kappa = np.zeros(cap)
        n = min(cap, len(self.kappa), self.K)
        kappa[:n] = self.kappa[:n]
        self.kappa = kappa

    def _ensure(self, K):
        """Room for K states and one more slot (the kernels' slots, the counts, kappa)."""
        while self.model.capacity <= K + 1:
            self.model.grow(min(K, self.model.capacity))
        cap = self.N.shape[0]
        if cap <= K + 1:
            new = np.zeros((2 * cap, 2 * cap))
            new[:cap, :cap] = self.N
            self.N = new
            self.rowsum = np.concatenate([self.rowsum, np.zeros(cap)])
            self._pad_kappa(2 * cap)

    def kappa_step(self, mode_counts, mode_kappa, rng):
        K = self.K
        m = table_counts(self.N[:K, :K], self.kappa[:K], self.N0, mode_counts, rng)
        self.m = m
        kappa, self.kappa_rest = update_kappa(m.sum(axis=0), self.M0, mode_kappa)
        self.kappa = np.zeros(self.N.shape[0])
        self.kappa[:K] = kappa

    def scores(self, t, out_nlp):
        """q_t (length K+1) for time step t, already removed from the statistics and counts."""
        z = self.labels
        K = self.K
        p = z[self.prv[t]] if self.prv[t] >= 0 else 0
        n = z[self.nxt[t]] if self.nxt[t] >= 0 else -1
        kappa_new = self.kappa_rest * (self.b if self.new_state == "exact" else 1.0)
        logA, log_new = log_transition_terms(self.N, self.rowsum, self.kappa, kappa_new, self.N0, p, n, K)
        _kernels.cluster_nlp(t, K, self.model.fams, out_nlp)
        q = np.empty(K + 1)
        q[:K] = out_nlp[:K] - logA
        q[K] = self.model.d_new[t] - log_new
        return q, p, n

    def _move(self, t, p, n, k, sign):
        self.N[p, k] += sign
        self.rowsum[p] += sign
        if n >= 0:
            self.N[k, n] += sign
            self.rowsum[k] += sign

    def sweep(self) -> int:
        """One assignment sweep in time order (eqs 6.5, 6.7); returns the changed labels."""
        z = self.labels
        rows = np.empty(1, dtype=np.int64)
        changed = 0
        for t in range(self.T):
            rows[0] = t
            old = z[t]
            p = z[self.prv[t]] if self.prv[t] >= 0 else 0
            n = z[self.nxt[t]] if self.nxt[t] >= 0 else -1
            # a self-transition t-1 -> t -> t+1 in one state: both transitions leave with t
            self._move(t, p, n, old, -1.0)
            _kernels.move_rows(rows, z, -1, self.model.cnt, self.model.logcnt, self.model.fams)
            nlp = np.empty(self.K)
            q, p, n = self.scores(t, nlp)
            k = int(np.argmin(q))
            if k == self.K:  # a new state: split kappa_{K+1} (I3)
                self._ensure(self.K + 1)
                self.kappa[self.K] = self.b * self.kappa_rest
                self.kappa_rest *= 1.0 - self.b
                self.K += 1
            z[t] = k
            self._move(t, p, n, k, 1.0)
            _kernels.move_rows(rows, z, 1, self.model.cnt, self.model.logcnt, self.model.fams)
            changed += k != old
        return changed

    def cleanup(self):
        keep = np.flatnonzero(self.model.cnt[:self.K] > 0)
        if len(keep) < self.K:
            self.kappa_rest += float(self.kappa[:self.K].sum() - self.kappa[keep].sum())
            kappa = self.kappa[keep].copy()
            self.K = self.model.compact(self.labels, self.K)
            self.kappa = kappa
            self.recount()
        elif self.N.shape[0] < self.model.capacity:
            self.recount()

    def nll(self) -> float:
        K = self.K
        lm = np.empty(K)
        _kernels.log_marginals(K, self.model.fams, lm)
        data = -float(lm.sum()) + self.model.pconst_total
        return data + transition_nll(self.N, self.kappa[:K], self.N0)

    def real_transitions(self) -> np.ndarray:
        K = self.K
        out = np.zeros((K, K), dtype=np.int64)
        ok = self.nxt >= 0
        np.add.at(out, (self.labels[ok], self.labels[self.nxt[ok]]), 1)
        return out


class MAPIHMM(_ExtraArgMixin, SweepEstimator):
    """MAP inference in the HDP-HMM (infinite HMM), EJS §6.2 (see the module docstring).

    Parameters
    ----------
    N0 : float > 0, default=1.0
        Concentration of every row's DP(N0, G0) (local).
    M0 : float > 1, default=2.0
        Concentration of the top-level DP(M0, H); must exceed 1 (I2) for ``kappa="mode"``.
    likelihood, prior : as :class:`~mapdp_core.MAPDP` (any family or mixed table); ``prior=None``
        the empirical-Bayes defaults.
    table_counts : "greedy", "map" or "sample", default="greedy"
    kappa : "mode", "mean" or "floor", default="mean"
    init : "mapdp", "one" or "random", default="mapdp"
    new_state : "ejs" or "exact", default="ejs"
        The weight of a new state in the sweep: kappa_{K+1} as printed, or the split b kappa_{K+1}.
    max_iter : int, default=100
    tol : float, default=1e-6
    random_state : int, Generator or None
        Seeds ``table_counts="sample"`` and ``init="random"``.

    Attributes
    ----------
    labels_ : ndarray (T,), one state per time step in input order
    n_clusters_ : int
    transitions_ : ndarray (K, K), the real transition counts (without the virtual ones)
    kappa_ : ndarray (K + 1,), the global weights, the last the unrepresented mass
    table_counts_ : ndarray (K, K), m_pk of the last iteration (virtual transitions included)
    neg_log_joint_ : float, the iHMM NLL of the last state
    neg_log_joint_history_, objective_history_ : per iteration (the same numbers)
    n_iter_ : int
    lengths_ : list of the sequence lengths
    cluster_summaries_ : dict, per-state predictive summaries (as MAP-DP's)
    """

    name = "MAP-iHMM"
    input = "mixed"
    restart_key = "neg_log_joint"
    keep = "last"
    step = "sweep"
    monotone = None  # the kappa steps can raise the NLL (EJS L428)
    ui: dict = {}
    precompile = False

    def __init__(self, N0=1.0, M0=2.0, likelihood="auto", prior=None, table_counts="greedy", kappa="mean",
                 init="mapdp", new_state="ejs", max_iter=100, tol=1e-6, random_state=None):
        self.N0 = N0
        self.M0 = M0
        self.likelihood = likelihood
        self.prior = prior
        self.table_counts = table_counts
        self.kappa = kappa
        self.init = init
        self.new_state = new_state
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def fit(self, X, lengths=None):
        """Fit on X (T, D), one row per time step; ``lengths`` splits X into sequences."""
        return self._with_extra(lengths, lambda: SweepEstimator.fit(self, X))

    def fit_predict(self, X, lengths=None):
        return self.fit(X, lengths).labels_

    def iter_sweeps(self, X, lengths=None, **kw):
        """The generator of one run's states, one per iteration (validated now)."""
        return self._with_extra(lengths, lambda: SweepEstimator.iter_sweeps(self, X, **kw))

    def from_states(self, X, states, restart_values=None, lengths=None):
        return self._with_extra(lengths, lambda: SweepEstimator.from_states(self, X, states, restart_values))

    def _validate(self, X) -> Problem:
        N0 = check_real(self.N0, "N0", positive=True)
        kappa = check_choice(self.kappa, "kappa", KAPPAS)
        M0 = check_real(self.M0, "M0", positive=True)
        if kappa == "mode" and M0 <= 1.0:
            raise ValueError(f"M0 must be > 1 with kappa='mode' (else kappa_(K+1) = 0 and no state can open, "
                             f"erratum I2), got {self.M0!r}.")
        settings = {
            "N0": N0, "M0": M0, "kappa": kappa,
            "table_counts": check_choice(self.table_counts, "table_counts", TABLE_COUNTS),
            "init": check_choice(self.init, "init", INITS),
            "new_state": check_choice(self.new_state, "new_state", NEW_STATES),
            "max_iter": check_int(self.max_iter, "max_iter", 1),
            "tol": check_nonneg(self.tol, "tol"),
        }
        problem = MAPDP(N0=N0, likelihood=self.likelihood, prior=self.prior, max_iter=1)._validate(X)
        T = problem.n_rows
        prv, nxt = _neighbours(self._extra(), T)
        settings.update(prv=prv, nxt=nxt, lengths=np.diff(np.append(np.flatnonzero(prv < 0), T)).tolist(),
                        input=X)
        return Problem(problem.data, T, settings)

    def _initial_labels(self, problem, rng) -> np.ndarray:
        s, T = problem.settings, problem.n_rows
        if s["init"] == "one":
            return np.zeros(T, dtype=np.int64)
        if s["init"] == "random":
            from .metrics import relabel_by_first_appearance

            return relabel_by_first_appearance(rng.integers(0, min(10, T), T)).astype(np.int64)
        for state in _run(problem.data, s["N0"], np.arange(T, dtype=np.int64), 1e-6, 100):
            pass
        return np.array(state.labels, dtype=np.int64)

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        s = problem.settings
        t0 = time.perf_counter()
        chain = _Chain(problem.data, self._initial_labels(problem, rng), s["prv"], s["nxt"], s["N0"], s["M0"],
                       s["new_state"])
        old = math.inf
        for iteration in range(1, s["max_iter"] + 1):
            chain.kappa_step(s["table_counts"], s["kappa"], rng)
            changed = chain.sweep()
            chain.cleanup()
            nll = chain.nll()
            stop = changed == 0 or abs(nll - old) < s["tol"]
            K = chain.K
            summaries = chain.model.summaries(K)
            summaries.update(transitions=chain.real_transitions(), kappa=np.append(chain.kappa[:K], chain.kappa_rest),
                             table_counts=chain.m.copy() if chain.m.shape[0] == K else None)
            yield SweepState(
                iteration=iteration, labels=chain.labels, n_clusters=K, objective=nll, neg_log_joint=nll,
                n_changed=int(changed), cluster_sizes=chain.model.cnt[:K].astype(np.int64), summaries=summaries,
                elapsed=time.perf_counter() - t0, converged=bool(stop), algorithm=self.name)
            if stop:
                return
            old = nll

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        s = problem.settings
        self.transitions_ = np.array(state.summaries["transitions"])
        self.kappa_ = np.array(state.summaries["kappa"])
        self.table_counts_ = state.summaries["table_counts"]
        self.neg_log_joint_ = state.neg_log_joint
        self.neg_log_joint_history_ = history.neg_log_joints
        self.n_clusters_history_ = history.n_clusters
        self.cluster_summaries_ = {k: v for k, v in state.summaries.items()
                                   if k not in ("transitions", "kappa", "table_counts")}
        self.lengths_ = list(s["lengths"])
        self.N0_, self.M0_ = s["N0"], s["M0"]
        self.n_features_in_ = problem.data.X.shape[1]
