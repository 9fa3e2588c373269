r"""MAP-iHMM: MAP inference in the HDP-HMM (infinite HMM) by the MAP-DP recipe (EJS §6.2).

Raykov, Boukouvalas & Little (2016), Electronic Journal of Statistics, §6.2, eqs 6.2 and
6.4-6.7, with the corrections of ``shared/OTHER-SYSTEMS.md`` §4.1-4.2 (errata I1-I9).

Model: top-level DP(M0, H), rows DP(N0, G0), direct-assignment representation with global
weights kappa_1..kappa_K and the unrepresented mass kappa_{K+1}. The emissions are any
likelihood (and mixed table) MAP-DP supports: the per-state statistics, the predictive
-ln f(x_t | stats_k^{-t}) (eq 6.4) and -ln f(x_t | theta0) come from MAP-DP's own engine
(:class:`~mapdp_core.engine.model_data.ModelData`, ``dp_mixture.cluster_nlp`` / ``move_rows``).

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

Initialisation (I5, ``init``): ``"mapdp"`` the MAP-DP mixture labels, ignoring time
(MAP-DP with the same N0, likelihood and prior, rows in time order, one run); ``"hard"`` the
labels of the direct hard HDP-HMM (:class:`~mapdp_core.HardHDPHMMDirect`, HSJ eq 36, its
data-driven defaults) on the numeric columns z-scored, a gap at its column's mean (numeric
input only); ``"best"`` (default) both of these as two restarts, keeping the one whose final
iHMM NLL is lower (the model's own objective: no label is read); where the input is not all
numeric, ``"best"`` is the MAP-DP start alone. ``"one"`` every step in one state (EJS
Algorithm 1) -- N_11 = T - 1 dominates every other option (PLOS Appendix B's "dominating
reinforcement"), so no state ever opens: measured on the Table 4 data
(``benchmarks/ihmm_table4.py``, 10 sequences), K = 1 and no label changes in the first sweep,
NMI 0; ``"random"`` ``min(10, T)`` states drawn uniformly (seeded) -- a poor start:
deterministic alternations between two states are local optima of the sweep (changing one
label breaks two transitions); measured NMI 0.01-0.13 on 3 Table 4 sequences.

Why "best": the MAP-DP start keeps MAP-iHMM near the K of the time-blind mixture. On the 10
Table 4 sequences the MAP-DP start ended at K = 2-3 with NMI 0.55-0.70, the hard HDP-HMM start
at K = 4-5 with NMI 0.83-0.89, and the iHMM NLL of the second was lower on all 10, by 790 to
1 340 nats (measured 2026-11-25). The direct hard model's defaults were themselves chosen on
synthetic sticky sequences that include a 5-state generator like Table 4's, so the two are not
independent there; the NLL, not the labels, picks the start on any data.

Defaults, chosen by measurement on the Table 4 recipe (5 seeds x 2 readings of sigma, see
``benchmarks/results/ihmm-table4-2026-11-24.txt``): ``kappa="mean"`` -- the same labels as
``"mode"`` on every sequence, but ``"mode"`` left an infinite NLL (I2) on some of them, which
makes the stopping rule and the restart comparison meaningless; ``table_counts="greedy"`` --
the same labels as ``"map"`` at lower cost, and deterministic unlike ``"sample"``;
``init`` as above; ``new_state="ejs"`` (as printed; ``"exact"`` gave the same labels).

Boundary quirk of the Van Gael convention: the virtual predecessor is whatever state sits at
index 0, so when the clean-up drops state 0 the virtual transitions move to the new state 0
and the NLL changes (slightly) without any label changing.

Cost: O(T K C_f) per sweep with a Python loop over time steps calling the numba kernels
(about 30-60 us a step: T = 4000, 3-5 iterations took 0.5-1 s on 2 cores), plus
O(sum N_pk^2) for ``"map"`` table counts.

Check against Van Gael's collapsed Gibbs conditional (OTHER-SYSTEMS §4.7): for fixed kappa
(Van Gael's Beta) and alpha0 = N0, the transition factor of his direct-assignment conditional
for s_t (``iHmmNormalSampleGibbs.m``, one sequence, virtual predecessor state 1) is, with the
counts of every other step,

  k <= K:  (N_{pk} + N0 kappa_k) (N_{kn} + N0 kappa_n + [p = k = n]) / (N_{k.} + N0 + [p = k]),
  new:     N0 kappa_{K+1} kappa_n,

(the last two factors of each dropped at the last step), which is exactly A_k above: the ratio
of the exact transition likelihood prod_p Gamma(N0)/Gamma(N0 + N_p.) prod_k Gamma(N0 kappa_k +
N_pk)/Gamma(N0 kappa_k) with z_t = k to the same without step t, up to the k-independent
1/(N_p. + N0) of the row of p. ``tests/models/test_ihmm.py`` checks the two agree to 1e-12 once
normalised over k = 1..K+1, on random label sequences with several sequences and
self-transitions (with ``new_state="ejs"``; ``"exact"`` scores the new state b times lower).

Prediction for new sequences (``predict``, ``predict_proba``, ``score_samples``, ``score``):
the fitted model frozen into a finite K-state HMM.

* **Transitions**: the posterior mean of each row of the transition matrix given the fitted
  counts and kappa_, pi_j | z, kappa ~ Dirichlet(N_j1 + N0 kappa_1, ..., N_jK + N0 kappa_K,
  N0 kappa_{K+1}), so pi_jk = (N_jk + N0 kappa_k)/(N_j. + N0) -- which is also the collapsed
  probability of one more transition out of j. The counts N are those the fit scored: the
  real transitions (``transitions_``) plus the virtual ones 0 -> first state of every
  training sequence (I4). The leftover mass N0 kappa_{K+1}/(N_j. + N0) of a new state
  (``new_state_mass_``) cannot be used by a path over the K represented states: each row is
  **renormalised** over them, ``transmat_[j, k] = (N_jk + N0 kappa_k)/(N_j. + N0 (1 -
  kappa_{K+1}))``, i.e. the HMM conditioned on staying in the represented states. (A row whose
  K entries are all 0, possible only with ``kappa="mode"``, becomes uniform.)
* **Initial state**: the documented virtual predecessor (I4): the first step of every new
  sequence follows a transition out of state 0, ``startprob_ = transmat_[0]``.
* **Emissions**: each state's posterior predictive density f(x | X_k) given its fitted rows,
  the same one MAP-DP's ``predict`` uses (``ModelData.score_rows``, PLOS Appendix E): every
  likelihood family and mixed table, a NaN gap contributes nothing (marginalised), a category
  never seen in fitting is scored as missing with an ``UnseenCategoryWarning``. The statistics
  are the fitted ones: the rows of the new sequence do not update them.
* **Algorithms**, in log space, per sequence of ``lengths`` (no transition crosses a sequence
  boundary): Viterbi (ties to the lowest state), forward-backward (state posteriors) and the
  forward algorithm (ln p(x_t | x_{<t}) per step, summing to the sequence log-likelihood),
  numba kernels with a log-sum-exp per (t, k) (scaled sums, exact fallback: see the kernels):
  O(T K^2). Measured (2 shared cores, compiled): T = 1e5, K = 20: the kernels 0.03-0.06 s a
  pass; ``predict`` 0.18 s, ``predict_proba`` 0.32-0.43 s, ``score_samples`` 0.22 s in all,
  most of it the emission densities.
"""
from __future__ import annotations

import math
import time
import warnings
from typing import Iterator

import numpy as np
from numba import njit
from scipy.special import gammaln

from mapdp_core.core.spec import refuse_shared_statistics
from mapdp_core.kernels import dp_mixture
from mapdp_core.engine.model_data import ModelData
from mapdp_core.core.validation import check_choice, check_int, check_nonneg, check_real, restart_plan
from mapdp_core.core.estimator import Problem, SweepEstimator
from .hdp_hmm_direct import HardHDPHMMDirect
from .sequence_common import _lengths_of, _LengthsMixin, _neighbours, _transition_counts
from mapdp_core.engine.sweeps import run_sweeps

from .mapdp import MAPDP
from mapdp_core.core.state import SweepState

#: the floor of every Dirichlet excess (M_k - 1, M0 - 1) under ``kappa="floor"``
KAPPA_FLOOR = 0.5

TABLE_COUNTS = ("greedy", "map", "sample")
KAPPAS = ("mode", "mean", "floor")
INITS = ("best", "mapdp", "hard", "one", "random")
#: The starts ``init="best"`` runs, one restart each; the lower final iHMM NLL is kept.
BEST_STARTS = ("mapdp", "hard")
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


# ----------------------------------------------------------------------------- prediction kernels
# Sequences are the row ranges [starts[s], ends[s]) of one (T, K) array of log emissions E;
# logA (K, K) holds ln transmat_ (-inf where a transition has probability 0), A = exp(logA),
# log_start (K,). A log-sum-exp over j of v_j + logA_jk is computed as top + ln sum_j
# exp(v_j - top) A_jk (K exponentials per step instead of K^2): the terms whose exp(v_j - top)
# underflows are below K e^-745 in all, so wherever that sum exceeds TINY = 1e-280 it is exact
# to rounding; below it (only possible with zero or astronomically small transition
# probabilities, i.e. kappa="mode") the exact log-sum-exp is taken term by term.
TINY = 1e-280


@njit(cache=True, nogil=True)
def _lse(v, b, K):
    """ln sum_i exp(v[i] + b[i]) over i < K, term by term (the exact log-sum-exp)."""
    top = -np.inf
    for i in range(K):
        x = v[i] + b[i]
        if x > top:
            top = x
    if top == -np.inf:
        return top
    acc = 0.0
    for i in range(K):
        acc += math.exp(v[i] + b[i] - top)
    return top + math.log(acc)


@njit(cache=True, nogil=True)
def _log_vecmat(v, M, logM, p, out):
    """out[r] = ln sum_i exp(v[i]) M[i, r] for every r, M = exp(logM) (K, K): the scaled sum
    top + ln sum_i exp(v[i] - top) M[i, r] (``p`` holds the K exponentials), term by term
    (:func:`_lse`) where that sum is at most TINY."""
    K = M.shape[0]
    top = -np.inf
    for i in range(K):
        if v[i] > top:
            top = v[i]
    for i in range(K):
        p[i] = math.exp(v[i] - top) if top > -np.inf else 0.0
    for r in range(K):
        acc = 0.0
        for i in range(K):
            acc += p[i] * M[i, r]
        out[r] = top + math.log(acc) if acc > TINY else _lse(v, logM[:, r], K)


@njit(cache=True, nogil=True)
def _forward(log_start, logA, A, E, starts, ends, alpha, norm):
    """Normalised forward pass: alpha[t] = ln p(z_t | x_{s..t}), norm[t] = ln p(x_t | x_{s..t-1})."""
    K = logA.shape[0]
    p = np.empty(K)
    no_shift = np.zeros(K)  # _lse(v, no_shift) is the log-sum-exp of v
    for s in range(starts.shape[0]):
        for t in range(starts[s], ends[s]):
            if t == starts[s]:
                for k in range(K):
                    alpha[t, k] = log_start[k] + E[t, k]
            else:
                _log_vecmat(alpha[t - 1], A, logA, p, alpha[t])  # ln p(z_t = k | x_{s..t-1})
                for k in range(K):
                    alpha[t, k] += E[t, k]
            c = _lse(alpha[t], no_shift, K)
            norm[t] = c
            if c > -np.inf:
                for k in range(K):
                    alpha[t, k] -= c


@njit(cache=True, nogil=True)
def _backward(logA, A, E, starts, ends, norm, beta):
    """Backward pass scaled by the forward's norm: exp(alpha[t] + beta[t]) = p(z_t | x_{s..e})."""
    K = logA.shape[0]
    At, logAt = A.T, logA.T  # sums over the successor k: row j of A is column j of A.T
    w = np.empty(K)
    q = np.empty(K)
    for s in range(starts.shape[0]):
        last = ends[s] - 1
        for k in range(K):
            beta[last, k] = 0.0
        for t in range(last - 1, starts[s] - 1, -1):
            for k in range(K):
                w[k] = E[t + 1, k] + beta[t + 1, k]
            _log_vecmat(w, At, logAt, q, beta[t])
            for j in range(K):
                beta[t, j] -= norm[t + 1]


@njit(cache=True, nogil=True)
def _viterbi(log_start, logA, E, starts, ends, path, back):
    """The most probable state path of every sequence (ties to the lowest state index)."""
    K = logA.shape[0]
    delta = np.empty(K)
    nxt = np.empty(K)
    for s in range(starts.shape[0]):
        a, b = starts[s], ends[s]
        for k in range(K):
            delta[k] = log_start[k] + E[a, k]
        for t in range(a + 1, b):
            for k in range(K):
                best = -np.inf
                arg = 0
                for j in range(K):
                    v = delta[j] + logA[j, k]
                    if v > best:
                        best = v
                        arg = j
                nxt[k] = best + E[t, k]
                back[t, k] = arg
            for k in range(K):
                delta[k] = nxt[k]
        k = 0
        for j in range(1, K):
            if delta[j] > delta[k]:
                k = j
        path[b - 1] = k
        for t in range(b - 1, a, -1):
            k = back[t, k]
            path[t - 1] = k


def plug_in_transitions(N, kappa, N0):
    """(transmat, new_state_mass) from transition counts ``N`` (K, K, virtual ones included) and
    ``kappa`` (K + 1,): pi_jk = (N_jk + N0 kappa_k)/(N_j. + N0), the posterior mean of row j,
    renormalised over the K represented states; new_state_mass[j] = N0 kappa_{K+1}/(N_j. + N0)
    is the mass left out. A row with no mass on the K states (only possible with kappa_k = 0
    for every k, ``kappa="mode"``) becomes uniform."""
    N = np.asarray(N, dtype=float)
    kappa = np.asarray(kappa, dtype=float)
    K = N.shape[0]
    num = N + N0 * kappa[None, :K]
    rows = N.sum(axis=1) + N0
    kept = num.sum(axis=1)
    A = np.full((K, K), 1.0 / K)
    ok = kept > 0
    A[ok] = num[ok] / kept[ok, None]
    return A, N0 * kappa[K] / rows


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
        dp_mixture.cluster_nlp(t, K, self.model.fams, out_nlp)
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
            dp_mixture.move_rows(rows, z, -1, self.model.cnt, self.model.logcnt, self.model.fams)
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
            dp_mixture.move_rows(rows, z, 1, self.model.cnt, self.model.logcnt, self.model.fams)
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
        dp_mixture.log_marginals(K, self.model.fams, lm)
        data = -float(lm.sum()) + self.model.pconst_total
        return data + transition_nll(self.N, self.kappa[:K], self.N0)

    def real_transitions(self) -> np.ndarray:
        return _transition_counts(self.labels, self.nxt, self.K)


def _numeric_view(X):
    """The input's columns z-scored as floats, a gap at its column's mean (0), for the hard
    HDP-HMM start; None when a column is not numeric."""
    try:
        A = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X, dtype=float)
    except (TypeError, ValueError):
        return None
    if A.ndim != 2 or not np.isfinite(A[~np.isnan(A)]).all():
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column
        mu, sd = np.nanmean(A, axis=0), np.nanstd(A, axis=0)
    mu = np.where(np.isfinite(mu), mu, 0.0)
    sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
    Z = (A - mu) / sd
    return np.ascontiguousarray(np.where(np.isnan(Z), 0.0, Z))


class MAPIHMM(_LengthsMixin, SweepEstimator):
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
    init : "best", "mapdp", "hard", "one" or "random", default="best"
        The start (module docstring): "best" runs the MAP-DP and the hard HDP-HMM starts and
        keeps the lower final iHMM NLL (``restart_values_`` holds both).
    new_state : "ejs" or "exact", default="ejs"
        The weight of a new state in the sweep: kappa_{K+1} as printed, or the split b kappa_{K+1}.
    %(max_iter)s
    %(tol)s
    %(random_state)s
        Here it seeds ``table_counts="sample"`` and ``init="random"``.

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
    transmat_ : ndarray (K, K), the plug-in transition probabilities of prediction: the
        posterior mean (N_jk + N0 kappa_k)/(N_j. + N0) of each row (virtual transitions
        included), renormalised over the K states
    new_state_mass_ : ndarray (K,), the mass N0 kappa_{K+1}/(N_j. + N0) of a new state that
        the renormalisation leaves out
    startprob_ : ndarray (K,), the first state's probabilities, ``transmat_[0]`` (virtual
        predecessor, I4)
    prior_, likelihood_, dropped_columns_ : as :class:`~mapdp_core.MAPDP`'s

    Prediction: ``predict(X, lengths)`` (Viterbi), ``predict_proba(X, lengths)``
    (forward-backward), ``score_samples(X, lengths)`` (ln p(x_t | x_{<t})), ``score(X, lengths)``
    (total log-likelihood) for new sequences; see the module docstring.
    """

    #: scores clusters from statistics of their own: refuses a covariance shared by all clusters
    #: (``core.spec.refuse_shared_statistics``; the app gives it a covariance per cluster instead)
    shared_statistics = False

    name = "MAP-iHMM"
    input = "mixed"
    restart_key = "neg_log_joint"
    keep = "last"
    step = "sweep"
    monotone = None  # the kappa steps can raise the NLL (EJS L428)
    ui: dict = {}
    precompile = False

    def __init__(self, N0=1.0, M0=2.0, likelihood="auto", prior=None, table_counts="greedy", kappa="mean",
                 init="best", new_state="ejs", max_iter=100, tol=1e-6, random_state=None):
        self._init_params(locals())

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
        refuse_shared_statistics(problem.data, "MAP-iHMM", "scores a new state from a fixed prior predictive per row")
        T = problem.n_rows
        prv, nxt = _neighbours(self._extra(), T)
        lengths = _lengths_of(prv)
        numeric = _numeric_view(X)
        if settings["init"] == "hard" and numeric is None:
            raise ValueError("init='hard' needs numeric columns only (the hard HDP-HMM measures squared "
                             "distances); use init='mapdp' or 'best' for a table with text or category columns.")
        starts = [settings["init"]]
        if settings["init"] == "best":
            starts = list(BEST_STARTS) if numeric is not None else ["mapdp"]
        settings.update(prv=prv, nxt=nxt, lengths=lengths, input=X, mapdp=problem.settings, numeric=numeric,
                        starts=starts)
        return Problem(problem.data, T, settings)

    def _plan_for(self, problem: Problem):
        """One restart per start (``init="best"``: the MAP-DP and the hard HDP-HMM starts), all
        in time order; the restart's seed drives ``table_counts="sample"`` and ``init="random"``."""
        starts = problem.settings["starts"]
        seeds = [seed for _, seed in restart_plan(self.random_state, len(starts), problem.n_rows, shuffle=False)]
        return [(start, seed) for start, seed in zip(starts, seeds)]

    def _initial_labels(self, problem, rng, start: str) -> np.ndarray:
        s, T = problem.settings, problem.n_rows
        if start == "one":
            return np.zeros(T, dtype=np.int64)
        if start == "hard":
            hard = HardHDPHMMDirect().fit(s["numeric"], lengths=s["lengths"] if len(s["lengths"]) > 1 else None)
            return np.asarray(hard.labels_, dtype=np.int64)
        if start == "random":
            from mapdp_core.core.labels import relabel_by_first_appearance

            return relabel_by_first_appearance(rng.integers(0, min(10, T), T)).astype(np.int64)
        for state in run_sweeps(problem.data, s["N0"], np.arange(T, dtype=np.int64), 1e-6, 100):
            pass
        return np.array(state.labels, dtype=np.int64)

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        s = problem.settings
        t0 = time.perf_counter()
        start = order if isinstance(order, str) else s["starts"][0]  # the plan's entry names the start
        chain = _Chain(problem.data, self._initial_labels(problem, rng, start), s["prv"], s["nxt"], s["N0"], s["M0"],
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
        # prediction (see the module docstring): the fitted states held as a fitted MAP-DP with the
        # same likelihood, prior and N0, whose per-cluster predictives are the emission densities
        # and whose encoding checks and encodes new rows as the fitting rows were
        mapdp = MAPDP(N0=s["N0"], likelihood=self.likelihood, prior=self.prior, n_init=1, shuffle=False)
        self._mapdp = mapdp._set_fitted(Problem(problem.data, problem.n_rows, {**s["mapdp"], "N0": s["N0"]}),
                                        history, self.restart_values_)
        # n_features_in_ (and feature_names_in_) are the input's, as MAP-DP's: with likelihood="auto"
        # a column left out still counts, and new rows are given with it
        for name in ("prior_", "likelihood_", "dropped_columns_", "n_features_in_", "feature_names_in_"):
            if hasattr(mapdp, name):
                setattr(self, name, getattr(mapdp, name))
        labels = np.asarray(state.labels, dtype=np.int64)
        K = int(state.n_clusters)
        counts = _transition_counts(labels, s["nxt"], K).astype(float)
        np.add.at(counts, (0, labels[s["prv"] < 0]), 1.0)  # the virtual transitions 0 -> first state (I4)
        self.transmat_, self.new_state_mass_ = plug_in_transitions(counts, self.kappa_, s["N0"])
        self.startprob_ = self.transmat_[0].copy()

    # ------------------------------------------------------------------ prediction
    def _log_emissions(self, X) -> np.ndarray:
        """ln f(x_t | X_k): each fitted state's posterior predictive density of each new row (T, K)."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "labels_")
        if isinstance(X, (np.ndarray, list, tuple)) and np.ndim(X) == 2 and np.shape(X)[1] != self.n_features_in_:
            raise ValueError(f"X has {np.shape(X)[1]} features, but MAPIHMM is expecting {self.n_features_in_} "
                             f"features as input (new rows have {np.shape(X)[1]} columns; the model was fitted "
                             f"on {self.n_features_in_}).")
        unseen: list = []
        M = self._mapdp._encode_new(X, unseen)
        if unseen:
            from mapdp_core.core.encoding import unseen_notes
            from .mapdp import UnseenCategoryWarning

            notes = [f"row {row}: {note}" for row, note in enumerate(unseen_notes(unseen, len(M))) if note]
            warnings.warn(UnseenCategoryWarning(
                f"{len(unseen)} cell(s) of the new rows hold categories never seen in fitting and were scored as "
                f"missing: {'; '.join(notes[:5])}{' ...' if len(notes) > 5 else ''}.", unseen), stacklevel=4)
        nlp, _ = self._mapdp._fitted_model().score_rows(M, self.n_clusters_)
        return -nlp

    def _hmm_inputs(self, X, lengths):
        """The shifted log emissions (each row's largest 0), the shifts, and the sequence bounds."""
        E = self._log_emissions(X)
        T = E.shape[0]
        prv, nxt = _neighbours(lengths, T)
        starts = np.flatnonzero(prv < 0).astype(np.int64)
        ends = (np.flatnonzero(nxt < 0) + 1).astype(np.int64)
        top = E.max(axis=1)
        finite = np.isfinite(top)
        # a row beyond every state (every density underflows, |x - mean| ~ 1e154 sd): the
        # transitions alone decide its state, and its log density is -inf
        E = np.where(finite[:, None], E - np.where(finite, top, 0.0)[:, None], 0.0)
        A = np.ascontiguousarray(self.transmat_, dtype=float)
        with np.errstate(divide="ignore"):
            logA = np.log(A)
            log_start = np.log(np.ascontiguousarray(self.startprob_, dtype=float))
        return np.ascontiguousarray(E), np.where(finite, top, -np.inf), starts, ends, logA, A, log_start

    def _forward(self, X, lengths):
        E, shift, starts, ends, logA, A, log_start = self._hmm_inputs(X, lengths)
        alpha = np.empty_like(E)
        norm = np.empty(E.shape[0])
        _forward(log_start, logA, A, E, starts, ends, alpha, norm)
        return E, norm + shift, norm, alpha, starts, ends, logA, A

    def predict(self, X, lengths=None) -> np.ndarray:
        """The most probable state path of each new sequence (Viterbi) under the fitted model:
        ``transmat_``, ``startprob_`` and each state's posterior predictive density (see the
        module docstring). ``lengths`` splits X into sequences as in ``fit``; returns (T,) states
        0..K-1."""
        E, _, starts, ends, logA, _, log_start = self._hmm_inputs(X, lengths)
        path = np.empty(E.shape[0], dtype=np.int64)
        back = np.zeros(E.shape, dtype=np.int32)  # the best predecessor of every (t, k)
        _viterbi(log_start, logA, E, starts, ends, path, back)
        return path

    def predict_proba(self, X, lengths=None) -> np.ndarray:
        """p(z_t = k | the whole sequence of t): forward-backward state posteriors (T, K), rows
        summing to 1, under the fitted model (see ``predict``)."""
        E, _, norm, alpha, starts, ends, logA, A = self._forward(X, lengths)
        beta = np.empty_like(E)
        _backward(logA, A, E, starts, ends, norm, beta)
        logp = alpha + beta
        top = logp.max(axis=1, keepdims=True)
        p = np.exp(logp - top)
        return p / p.sum(axis=1, keepdims=True)

    def score_samples(self, X, lengths=None) -> np.ndarray:
        """ln p(x_t | x_{<t}) of every step of each new sequence, by the forward algorithm (the
        past within its own sequence only), so that their sum over a sequence is its
        log-likelihood under the fitted model (see ``predict``)."""
        return self._forward(X, lengths)[1]

    def score(self, X, lengths=None) -> float:
        """The total log-likelihood of the new sequences, ln p(X) = sum over the sequences of
        ln p(sequence) under the fitted model (not a mean per row, unlike ``MAPDP.score``)."""
        return float(np.sum(self.score_samples(X, lengths)))
