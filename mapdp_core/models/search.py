"""Best-first (beam / A*) search for the MAP partition of a Dirichlet process mixture.

Daumé III (2007), "Fast search for Dirichlet process mixture models", AISTATS, Figure 1, as
specified in OTHER-SYSTEMS.md section 2 with its errata D1-D6 fixed.

The rows are visited in a fixed order (by default increasing marginal likelihood ln H(x_n),
D07 §3.4). A search state is a clustering of the first n rows in canonical labels (a new
cluster takes the next label, so every prefix is unique and the search space is a tree).
States wait in a priority queue on f = g + h:

* g = -ln p(x_{1:n} | c) - ln P(c): the exact collapsed likelihood of the prefix (the
  engine's family predictives, chained) and the best prior any completion of the prefix can
  reach (D07 §3.1);
* h estimates the cost of the rows still to place: 0 ("trivial", eq 7), the sum of their
  prior predictive costs -ln H(x_n) ("inadmissible", eq 12), or, for a spherical Gaussian,
  a bound that never overestimates ("admissible", OTHER-SYSTEMS 2.2).

The search pops the best state, returns it if every row is placed, otherwise pushes its
K + 1 children (each existing cluster, then a new one) and keeps only the ``beam_size``
best states (a true top-b, D5; ``beam_size=None`` keeps all: A*). With an admissible h and
no beam the first complete state popped is the exact MAP partition.

The prior (D1). D07 writes p(c) but uses Ewens's probability of the *count vector* m
(Antoniak's Prop. 3), which differs from the probability of a labelled partition by the
number of partitions with counts m. ``prior_kind="eppf"`` (default) uses the CRP probability
of the partition, the prior MAP-DP's joint uses,
``ln p(c) = K ln a + sum_k ln Gamma(n_k) + ln Gamma(a) - ln Gamma(a + n)``, whose best
completion over the remaining R rows has a closed form: send every row to the largest
cluster (size L) or open R singletons, ``max(R ln a, ln Gamma(L + R) - ln Gamma(L))``
(the completion is convex in the number of new clusters; OTHER-SYSTEMS 2.2, checked by
brute force in the tests). ``prior_kind="ewens"`` reproduces the paper: ln P(m) with D07's
greedy completion of the count vector (§3.1, eqs 2 and 6, D3's off-by-one resolved as R =
N - n steps), without the reference code's 97-slot cache (D6).

Cost, bounded before starting. A popped state's statistics are its parent's (kept while a child
of it is queued) plus its one new row (:class:`_Statistics`), so a pop costs O(K) at any depth.
Before a search starts, :func:`check_search_cost` estimates its pops, seconds and memory from N,
the beam, the heuristic and the prior (:func:`search_cost`, constants measured as their comments
say): it refuses a search that cannot finish within ``max_expansions`` pops (A* with the trivial
or admissible heuristic pops about e^(c N) states), one estimated to take more than
MAX_ESTIMATED_SECONDS, or an admissible bound needing more than MAX_HEURISTIC_BYTES, and warns
beyond WARN_ESTIMATED_SECONDS; each message says what to change. While A* runs, its queue is
bounded by MAX_QUEUE_BYTES.

Departures, documented: the root is the empty clustering (the reference code starts with x_1
in cluster 1; equivalent); ties in f go to the state pushed first, so children of one state
rank existing clusters by index and the new cluster last, as MAP-DP breaks ties.
"""
from __future__ import annotations

import heapq
import math
import time
import warnings
from typing import Iterator

import numpy as np
from scipy.special import digamma

from mapdp_core.core.spec import refuse_shared_statistics
from mapdp_core.kernels import dp_mixture
from mapdp_core.engine.model_data import ModelData
from mapdp_core.core.validation import check_bool, check_choice, check_int
from mapdp_core.core.estimator import Control, Problem, SweepEstimator, warm_up_hook
from mapdp_core.families import warm_up_example
from .mapdp import MAPDP
from .predicts_as_mapdp import PredictsAsMAPDP
from mapdp_core.core.state import SweepState

__all__ = ["DPSearch", "eppf_completion", "ewens_log_prob", "ewens_completion", "search_cost"]

HEURISTICS = ("trivial", "inadmissible", "admissible")
PRIOR_KINDS = ("eppf", "ewens")
DATA_ORDERS = ("marginal", "input", "reversed", "random")

#: pops after which an unfinished search stops with a message (A* can be exponential)
DEFAULT_MAX_EXPANSIONS = 1_000_000
#: bytes the statistics kept for queued states' parents may take (see _Statistics); a beam keeps
#: at most beam_size of them, so only A* reaches it
MAX_SNAPSHOT_BYTES = 256 * 2 ** 20
#: bytes one queue entry takes: a 7-tuple of Python numbers and its list slot (272 + 8 bytes,
#: measured with tracemalloc over 100 000 entries)
QUEUE_ENTRY_BYTES = 280
#: bytes the queue may take before the search stops with a message (only A* grows it)
MAX_QUEUE_BYTES = 2 ** 30

# --- The cost estimate made before a search starts (search_cost; DPSearch._validate) ---------
# Measured on the development machine (Python 3.11, numba 0.68, two cores shared with other
# work) by timing fits of DPSearch; the measurements are quoted with each constant.
#: A* (beam_size=None) pops grow about e^(rate N) with the trivial or admissible heuristic.
#: Rates ln(pops) / N measured at the largest N that finished within 100 000 pops (N = 12..24) on
#: a 1-D normal, a 2-D three-group, a 2-D spherical (fixed and empirical prior) and a
#: four-column discrete table: 0.44 to 0.76 per row (admissible: 0.47, 0.52); D07's Gaussian
#: tables (benchmarks/results/other-systems-2026-11-24.txt, Table 3): 0.42 at N = 20, 0.34 at
#: N = 25 (its one finished set). The least is the "at least" estimate that refusals use; the
#: typical one is used for time.
A_STAR_LEAST_GROWTH = 0.34
A_STAR_TYPICAL_GROWTH = 0.5
#: seconds per pushed state (the child's f, the prior bound, the heap): 11 to 57 us, median
#: about 20 us, over beams 1, 10 and 100 on four tables of 300 and 3 000 rows; A* about 40 us
SECONDS_PER_PUSH = 30e-6
#: seconds per element of one cluster's R x R x D admissible bound (R rows left, D columns):
#: 22 ns measured on 200 rows, D = 2, beam 10 (2 059 pops, 14.3 s)
ADMISSIBLE_SECONDS_PER_ELEMENT = 25e-9
#: bytes of working memory per element of the R x R admissible bound (two R x R x D arrays and
#: three R x R ones of float64 at the peak, per column D: 8 (2 D + 3))
ADMISSIBLE_BYTES = 8
#: seconds per step of the greedy Ewens completion (prior_kind="ewens", one step per row left):
#: 0.7 to 1.0 us measured over 20 000 steps
EWENS_SECONDS_PER_STEP = 1e-6
#: a search estimated to take longer than this (its least estimate) is refused before it starts
MAX_ESTIMATED_SECONDS = 3600.0
#: a search whose typical estimate is longer than this warns before it starts
WARN_ESTIMATED_SECONDS = 60.0
#: working memory the admissible heuristic may take for one bound (bytes)
MAX_HEURISTIC_BYTES = 2 ** 30


def expected_clusters(N: int, alpha: float) -> float:
    """E[K] of N rows under the CRP(alpha) prior: alpha (psi(alpha + N) - psi(alpha))."""
    return float(min(N, alpha * (digamma(alpha + N) - digamma(alpha)))) if N else 0.0


def search_cost(N: int, D: int, alpha: float, beam_size, heuristic: str, prior_kind: str = "eppf",
                bound_prior: bool = True) -> dict:
    """A rough estimate of a search's pops, seconds and working memory, before it starts.

    Pops: a beam of b pops between N + 1 (straight to the goal, D07 L195) and about b N (0.5 b N
    to 0.8 b N measured at b = 100), typically (1 + b/2) N (1 to 8.4 N measured at b = 10); A*
    pops at least e^(A_STAR_LEAST_GROWTH N) with the trivial or admissible heuristic
    (exponential in N), at least N + 1 with the inadmissible one. Each
    pop pushes K + 1 children: K = 1 for the least estimate, the CRP's E[K] for the largest.
    Per pushed child: SECONDS_PER_PUSH, plus, for the admissible heuristic, its share of the
    2K + 2 cluster bounds of R^2 D elements (R the rows left, R^2 about N^2 / 3 on average),
    plus, for prior_kind="ewens" with the bound, R steps of the greedy completion.
    Returns a dict: pops_least, pops_typical, pops_most, seconds_least, seconds_typical,
    seconds_most and heuristic_bytes (the admissible bound's peak working memory; 0 for the
    others)."""
    N, D = int(N), max(int(D), 1)
    K_most = max(1.0, expected_clusters(N, alpha))
    if beam_size is None:
        if heuristic == "inadmissible":
            least = typical = most = float(N + 1)
        else:
            least = math.exp(min(A_STAR_LEAST_GROWTH * N, 700.0))
            typical = most = math.exp(min(A_STAR_TYPICAL_GROWTH * N, 700.0))
            least, typical, most = max(least, N + 1.0), max(typical, N + 1.0), max(most, N + 1.0)
    else:
        b = int(beam_size)
        least, typical, most = float(N + 1), float(N + 1) * min(b, 1 + b / 2), float(N + 1) * b

    def per_pop(K: float) -> float:
        s = (K + 1) * SECONDS_PER_PUSH
        if heuristic == "admissible":
            s += (2 * K + 2) * ADMISSIBLE_SECONDS_PER_ELEMENT * (N * N / 3.0) * D
        if prior_kind == "ewens" and bound_prior:
            s += (K + 1) * EWENS_SECONDS_PER_STEP * N / 2.0
        return s

    K_least = 1.0
    return {"pops_least": least, "pops_typical": typical, "pops_most": most,
            "seconds_least": least * per_pop(K_least), "seconds_typical": typical * per_pop(K_most),
            "seconds_most": most * per_pop(K_most),
            "heuristic_bytes": ADMISSIBLE_BYTES * N * N * (2 * D + 3) if heuristic == "admissible" else 0}


def _duration(seconds: float) -> str:
    if seconds < 1:
        return "under a second"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} minutes"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} hours"
    if seconds < 1e3 * 365 * 86400:
        return f"{seconds / 86400:,.0f} days"
    return "longer than a thousand years"


def check_search_cost(N: int, D: int, alpha: float, beam_size, heuristic: str, prior_kind: str, bound_prior: bool,
                      max_expansions: int, stacklevel: int = 2) -> dict:
    """Refuse (ValueError) a search that cannot finish within ``max_expansions`` pops, that is
    estimated to take longer than MAX_ESTIMATED_SECONDS or whose admissible heuristic needs more
    than MAX_HEURISTIC_BYTES; warn (UserWarning) when it may take longer than
    WARN_ESTIMATED_SECONDS (its typical estimate). Each message says what to change. Returns
    :func:`search_cost`."""
    cost = search_cost(N, D, alpha, beam_size, heuristic, prior_kind, bound_prior)
    ewens = prior_kind == "ewens" and bound_prior
    what = (f"A* (beam_size=None) with the {heuristic} heuristic" if beam_size is None
            else f"a beam of {beam_size} with the {heuristic} heuristic") + (
        " and prior_kind='ewens'" if ewens else "") + f" on {N:,} rows"
    changes = ["set a beam_size (e.g. 10)" if beam_size is None else "use a smaller beam_size"]
    if heuristic != "inadmissible":
        changes.append("use heuristic='inadmissible'")
    if ewens:
        changes.append("use prior_kind='eppf'")
    changes.append("use fewer rows")
    faster = ", ".join(changes[:-1]) + " or " + changes[-1]
    if cost["pops_least"] > max_expansions:
        pops = f"{cost['pops_least']:,.0f}" if cost["pops_least"] < 1e9 else f"{cost['pops_least']:.1e}"
        raise ValueError(
            f"{what} would pop at least about {pops} states, more than max_expansions={max_expansions:,}: it would "
            f"stop without a result. {faster[0].upper() + faster[1:]}, or raise max_expansions.")
    if cost["heuristic_bytes"] > MAX_HEURISTIC_BYTES:
        rows = int(math.sqrt(MAX_HEURISTIC_BYTES / (ADMISSIBLE_BYTES * (2 * max(D, 1) + 3))))
        raise ValueError(
            f"the admissible heuristic on {N:,} rows needs about {cost['heuristic_bytes'] / 2 ** 30:.1f} GB of working "
            f"memory at each step (it bounds every remaining row against every other); use heuristic='inadmissible', "
            f"or at most about {rows:,} rows.")
    if cost["seconds_least"] > MAX_ESTIMATED_SECONDS:
        raise ValueError(
            f"{what} is estimated to take at least {_duration(cost['seconds_least'])}, more than the "
            f"{_duration(MAX_ESTIMATED_SECONDS)} a search may take (MAX_ESTIMATED_SECONDS); {faster}.")
    if cost["seconds_typical"] > WARN_ESTIMATED_SECONDS:
        stop = (f" and may stop without a result at max_expansions={max_expansions:,}"
                if cost["pops_most"] > max_expansions else "")
        warnings.warn(
            f"{what} is estimated to take about {_duration(cost['seconds_typical'])} (from "
            f"{_duration(cost['seconds_least'])} to {_duration(cost['seconds_most'])}){stop}; to make it faster, "
            f"{faster}.",
            UserWarning, stacklevel=stacklevel)
    return cost


def eppf_completion(R: int, L: int, log_alpha: float) -> float:
    """max over completions of the remaining R rows of the change in ln p(c) beyond the
    prefix's K ln a + sum ln Gamma(n_k) (largest cluster L): every row to the largest
    cluster, or R new clusters, whichever is larger (OTHER-SYSTEMS 2.2). L = 0 (empty
    prefix): the first row must open a cluster, then the same with L = 1."""
    if R <= 0:
        return 0.0
    if L == 0:
        return log_alpha + eppf_completion(R - 1, 1, log_alpha)
    return max(R * log_alpha, math.lgamma(L + R) - math.lgamma(L))


def ewens_log_prob(m: dict, alpha: float) -> float:
    """ln P(m) of the count vector m (size -> number of clusters of that size), Ewens's
    formula (Antoniak's Prop. 3; D07 eq 2):
    ln N! - ln a^(N) + sum_i [m_i ln a - m_i ln i - ln m_i!], a^(N) the rising factorial."""
    N = sum(i * c for i, c in m.items())
    out = math.lgamma(N + 1) - (math.lgamma(alpha + N) - math.lgamma(alpha))
    for i, c in m.items():
        if c:
            out += c * math.log(alpha) - c * math.log(i) - math.lgamma(c + 1)
    return out


def ewens_completion(m: dict, R: int, alpha: float) -> dict:
    """D07 §3.1's greedy completion of a count vector by R more rows: each step takes the
    action with the largest ratio, a new singleton (a / (m_1 + 1)) or growing a cluster of
    size l ((l / (l + 1)) m_l / (m_{l+1} + 1)); ties to the new singleton, then smaller l."""
    m = {i: c for i, c in m.items() if c}
    for _ in range(R):
        best, action = alpha / (m.get(1, 0) + 1), 0
        for size in sorted(m):
            r = (size / (size + 1)) * m[size] / (m.get(size + 1, 0) + 1)
            if r > best:
                best, action = r, size
        if action == 0:
            m[1] = m.get(1, 0) + 1
        else:
            m[action] -= 1
            if m[action] == 0:
                del m[action]
            m[action + 1] = m.get(action + 1, 0) + 1
    return m


class _Statistics:
    """The per-cluster statistics of the search states, each exactly the prior plus the state's
    rows added in visiting order (so they never depend on the order states are popped in).

    A popped state's statistics are its parent's (kept when the parent was expanded) plus one
    row: one copy of the per-cluster arrays and one row moved, O(K) whatever the depth. The
    parent's copy is dropped once none of its children is left in the queue (a beam keeps at
    most ``beam_size`` of them); when A* keeps more than ``max_bytes`` of them, the oldest are
    dropped and a state whose parent's copy is gone is rebuilt from the prior, O(depth).

    This replaces one shared prefix rolled back to the common ancestor of the last loaded state
    and the next (the cause of the 24 000-row cliff: a beam holding two lineages that part early
    and take turns pays O(depth) per pop, O(N^2) in all, in a Python loop)."""

    def __init__(self, parsed, order: np.ndarray, max_bytes: int | None = None):
        self.model = m = ModelData(parsed)
        self.order = order
        self.row_labels = np.full(m.N, -1, dtype=np.int64)  # only the rows being moved are read
        self.root = self._current()
        self.saved: dict = {}  # popped state id -> (its statistics, their bytes), oldest first
        self.children: dict = {}  # popped state id -> its children still in the queue
        self.max_bytes, self.nbytes = int(MAX_SNAPSHOT_BYTES if max_bytes is None else max_bytes), 0
        self.rebuilds = 0
        # the families whose per-cluster arrays hold anything (the others are shared, never written)
        self.copied = [(slot, nf) for slot, (fam, nf) in enumerate(zip(m.fams, m.n_fixed))
                       if any(a.size for a in fam[nf:])]
        self.slot_bytes = 16 + sum(a.nbytes // a.shape[0] for fam, nf in zip(m.fams, m.n_fixed) for a in fam[nf:])

    def _current(self):
        m = self.model
        return m.cnt, m.logcnt, m.fams

    def _use_copy_of(self, snap) -> None:
        """Point the model at a private copy of ``snap``."""
        cnt, logcnt, fams = snap
        m = self.model
        m.cnt, m.logcnt = cnt.copy(), logcnt.copy()
        fams = list(fams)
        for slot, nf in self.copied:
            fam = fams[slot]
            fams[slot] = fam[:nf] + tuple(a.copy() for a in fam[nf:])
        m.fams = tuple(fams)

    def load(self, parent: int, k: int, K_parent: int, n_parent: int, labels_of) -> None:
        """The statistics of the child of ``parent`` (a popped state with ``K_parent`` clusters
        over the first ``n_parent`` rows) whose next row joins cluster ``k`` (``K_parent``: a
        new one). ``labels_of(parent)`` gives the parent's labels in visiting order."""
        m = self.model
        kept = self.saved.get(parent)
        if kept is not None and parent and self.children[parent] == 1:  # the last child takes them (not the root's)
            self.nbytes -= self.saved.pop(parent)[1]
            m.cnt, m.logcnt, m.fams = kept[0]
        elif kept is not None:
            self._use_copy_of(kept[0])
        else:  # dropped (A* beyond max_bytes): from the prior, in visiting order
            self.rebuilds += 1
            self._use_copy_of(self.root)
            while m.capacity <= K_parent + 1:
                m.grow(0)
            rows = self.order[:n_parent]
            self.row_labels[rows] = labels_of(parent)
            dp_mixture.move_rows(rows, self.row_labels, 1, m.cnt, m.logcnt, m.fams)
        K = K_parent + (k == K_parent)
        while m.capacity <= K + 1:  # room for the child's clusters and a new one
            m.grow(K_parent)
        row = self.order[n_parent:n_parent + 1]
        self.row_labels[row] = k
        dp_mixture.move_rows(row, self.row_labels, 1, m.cnt, m.logcnt, m.fams)

    def keep(self, sid: int, n_children: int) -> None:
        """Keep the loaded statistics as those of ``sid``, whose ``n_children`` children are queued."""
        snap = self._current()
        size = self.model.capacity * self.slot_bytes
        self.saved[sid] = (snap, size)
        self.children[sid] = n_children
        self.nbytes += size
        while self.nbytes > self.max_bytes and len(self.saved) > 1:
            oldest = next(iter(self.saved))
            self.nbytes -= self.saved.pop(oldest)[1]

    def release(self, parent: int) -> None:
        """One child of ``parent`` left the queue (popped or cut by the beam)."""
        left = self.children.get(parent)
        if left is None:
            return
        if left > 1:
            self.children[parent] = left - 1
            return
        del self.children[parent]
        kept = self.saved.pop(parent, None)
        if kept is not None:
            self.nbytes -= kept[1]


def _cluster_bound(Y: np.ndarray, M: float, mu0: np.ndarray, tau2: float, s2: float, n_k: float, S_k: np.ndarray):
    """Per remaining row y (rows of ``Y``): max over j = 0..R-1 other remaining rows joining
    first of the bound on ln H(y) in a cluster of n_k rows with sum S_k (see _admissible_bound)."""
    R, D = Y.shape
    j = np.arange(R)
    v = 1.0 / (1.0 / tau2 + (n_k + j) / s2)  # (R,)
    centre = v[:, None] * (mu0[None, :] / tau2 + S_k[None, :] / s2)  # (R values of j, D)
    rho = v * j * M / s2
    dist = np.sqrt(((Y[:, None, :] - centre[None, :, :]) ** 2).sum(axis=2))  # (R rows, R values of j)
    d = np.maximum(0.0, dist - rho[None, :])
    var = v + s2
    u = -0.5 * D * np.log(2 * np.pi * var)[None, :] - d ** 2 / (2 * var[None, :])
    return u.max(axis=1)


def _admissible_bound(X: np.ndarray, mu0: np.ndarray, tau2: float, s2: float, counts, sums, rest: np.ndarray):
    """Per remaining row x_n (rows ``rest``): max over the K clusters and a new one of an
    upper bound U_k(x_n) on ln H(x_n | the rows its cluster will hold before it)
    (OTHER-SYSTEMS 2.2). Up to r = R - 1 other remaining rows may join cluster k first; with
    j of them (sum A, |A| <= j M) the posterior variance is v_j = 1/(1/tau2 + (n_k + j)/s2)
    and the mean lies within rho_j = v_j j M / s2 of c_j = v_j (mu0/tau2 + S_k/s2), so
    ln N(x; mean, (v_j + s2) I) <= -(D/2) ln 2 pi (v_j + s2) - d_j^2 / (2 (v_j + s2)),
    d_j = max(0, |x - c_j| - rho_j)."""
    Y = X[rest]  # (R, D)
    R, D = Y.shape
    M = float(np.sqrt((Y ** 2).sum(axis=1)).max()) if R else 0.0
    n = np.concatenate([np.asarray(counts, dtype=float), [0.0]])  # clusters and a new one
    S = np.vstack([np.asarray(sums, dtype=float).reshape(-1, D), np.zeros((1, D))])
    best = np.full(R, -np.inf)
    for k in range(len(n)):
        best = np.maximum(best, _cluster_bound(Y, M, mu0, tau2, s2, n[k], S[k]))
    return best


def _admissible_children(X: np.ndarray, spherical, sizes, sums: np.ndarray, row: int, rest: np.ndarray) -> list:
    """h of each child of a state (its row ``row`` joining cluster k = 0..K-1, then a new one):
    minus the sum of :func:`_admissible_bound` over the rows ``rest`` after it. The children
    share every cluster but the one the row joins, so each cluster's bound is computed once
    (2K + 2 cluster bounds instead of (K + 1)(K + 2)); the values are the same."""
    mu0, tau2, s2 = spherical
    Y = X[rest]
    R, D = Y.shape
    M = float(np.sqrt((Y ** 2).sum(axis=1)).max())
    x = X[row]
    K = len(sizes)

    def bound(n_k, S_k):
        return _cluster_bound(Y, M, mu0, tau2, s2, float(n_k), S_k)

    base = [bound(sizes[k], sums[k]) for k in range(K)]
    empty = bound(0, np.zeros(D))
    out = []
    for k in range(K + 1):
        if k < K:
            parts = base[:k] + base[k + 1:] + [bound(sizes[k] + 1, sums[k] + x), empty]
        else:
            parts = base + [bound(1, np.zeros(D) + x), empty]
        out.append(float(-np.maximum.reduce(parts).sum()))
    return out


class DPSearch(PredictsAsMAPDP, SweepEstimator):
    """Daumé's best-first search for the MAP partition (beam search, or A* without a beam).

    Parameters
    ----------
    N0 : float > 0 or "auto", default=1.0
        The concentration alpha. "auto": MAP-DP's evidence search, as in :class:`~mapdp_core.MAPDP`.
    likelihood, prior : as :class:`~mapdp_core.MAPDP` (``prior=None``: the empirical-Bayes defaults).
    beam_size : int or None, default=10
        States kept in the queue; None keeps every state (A*). D07 used 10 in its Fig 2 and 100
        on MNIST. 10 is the default because a wider beam was not reliably better and cost far
        more: in ``benchmarks/bench_other_systems.py`` (12 tables) beam 100 reached a lower joint
        than beam 10 on 5, a higher one on 4 and the same on 3, and took 1.5 to 64 times as long.
    heuristic : {"trivial", "inadmissible", "admissible"}, default="inadmissible"
        The estimate h of the rows still to place (module docstring). "admissible" needs one
        spherical_gaussian block without gaps; elsewhere the inadmissible score is used, with
        a warning. "trivial" never overestimates when every predictive density is at most 1
        (discrete families; a spherical Gaussian with 2 pi sigma2 >= 1 per coordinate).
    prior_kind : {"eppf", "ewens"}, default="eppf"
        The partition's CRP probability (the objective MAP-DP minimises), or D07's count-vector
        prior, to reproduce the paper.
    bound_prior : bool, default=True
        Add the best completion of the prior to g (D07 §3.1). With False, ``beam_size=1`` and
        the trivial heuristic the search is SUGS in the same order.
    data_order : {"marginal", "input", "reversed", "random"}, default="marginal"
        Rows by increasing marginal likelihood ln H(x) (D07 §3.4), as given, reversed, or
        random (``n_init`` random orders, the best kept).
    %(n_init)s
        Random orders tried when ``data_order="random"``.
    max_expansions : int, default=1_000_000
        States popped before an unfinished search stops with a message. A search estimated to
        need more is refused before it starts (module docstring, "Cost").
    block_size : int, optional
        Pops per yielded state (for an animation); default about N / 20.
    %(random_state)s

    Attributes
    ----------
    labels_, n_clusters_, cluster_sizes_ : the partition found.
    neg_log_joint_ : float
        -ln p(X, z | N0, theta0) with the partition's CRP probability, whatever ``prior_kind``.
    search_objective_ : float
        The searched objective at the goal: -ln p(X | z) - ln P(z) (P the chosen prior).
    n_enqueued_, n_dequeued_ : int
        States pushed onto and popped from the queue (D07 Fig 2).
    heuristic_ : str
        The heuristic used.
    order_ : ndarray
        The rows in the order they were placed.
    """

    #: scores clusters from statistics of their own: refuses a covariance shared by all clusters
    #: (``core.spec.refuse_shared_statistics``; the app gives it a covariance per cluster instead)
    shared_statistics = False

    name = "DP search"
    restart_key = "neg_log_joint"
    step = "block of expansions"
    ui = {
        "beam_size": Control("Beam size (states kept)", "int", 10, 1, 1000, log=True, short="beam",
                             help="Daumé (2007): the best-first queue keeps this many partial clusterings."),
        "heuristic": Control("Heuristic", "choice", "inadmissible", options=HEURISTICS, short="h",
                             help="Estimate of the cost of the rows not yet placed (admissible: spherical "
                                  "Gaussian only)."),
    }

    def __init__(self, N0=1.0, likelihood="auto", prior=None, beam_size=10, heuristic="inadmissible",
                 prior_kind="eppf", bound_prior=True, data_order="marginal", n_init=1,
                 max_expansions=DEFAULT_MAX_EXPANSIONS, block_size=None, random_state=None):
        self._init_params(locals())

    def _n_restarts(self) -> int:
        n = check_int(self.n_init, "n_init", 1)
        return n if self.data_order == "random" else 1

    def _shuffles(self) -> bool:
        return self.data_order == "random"

    # (the tied covariance left out: the search refuses it)
    warm_up = warm_up_hook({"N0": 1.0, "beam_size": 2}, data=lambda: warm_up_example(shared=False))

    def _validate(self, X) -> Problem:
        if self.beam_size is not None:
            check_int(self.beam_size, "beam_size", 1)
        check_choice(self.heuristic, "heuristic", HEURISTICS)
        check_choice(self.prior_kind, "prior_kind", PRIOR_KINDS)
        check_choice(self.data_order, "data_order", DATA_ORDERS)
        check_bool(self.bound_prior, "bound_prior")
        check_int(self.max_expansions, "max_expansions", 1)
        if self.block_size is not None:
            check_int(self.block_size, "block_size", 1)
        problem = MAPDP(N0=self.N0, likelihood=self.likelihood, prior=self.prior, max_iter=1,
                        random_state=self.random_state)._validate(X)
        parsed = problem.data
        refuse_shared_statistics(parsed, "The DP search", "scores each cluster from its own statistics and a fixed "
                                 "new-cluster cost per row")
        heuristic = self.heuristic
        spherical = None
        if heuristic == "admissible":
            blocks = parsed.blocks
            if (len(blocks) == 1 and blocks[0].family == "spherical_gaussian"
                    and not np.isnan(parsed.X[:, blocks[0].columns]).any()):
                p = blocks[0].prior
                spherical = (np.asarray(p["mu0"], dtype=float).reshape(-1) * np.ones(len(blocks[0].columns)),
                             float(p["sigma0_2"]), float(p["sigma2"]))
            else:
                warnings.warn("the admissible heuristic is defined for one spherical_gaussian block without missing "
                              "values (OTHER-SYSTEMS 2.2); using the inadmissible one instead.", UserWarning,
                              stacklevel=3)
                heuristic = "inadmissible"
        D = len(parsed.blocks[0].columns) if spherical is not None else parsed.X.shape[1]
        check_search_cost(problem.n_rows, D, float(problem.settings["N0"]), self.beam_size, heuristic,
                          self.prior_kind, bool(self.bound_prior), int(self.max_expansions), stacklevel=4)
        return Problem(parsed, problem.n_rows, {**problem.settings, "heuristic": heuristic, "spherical": spherical})

    def _data_order(self, model: ModelData) -> np.ndarray:
        N = model.N
        if self.data_order == "marginal":  # increasing ln H(x) = decreasing -ln H(x), ties by row
            return np.lexsort((np.arange(N), -(model.d_new + model.pconst))).astype(np.int64)
        if self.data_order == "reversed":
            return np.arange(N - 1, -1, -1, dtype=np.int64)
        return np.arange(N, dtype=np.int64)

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        return self._search(problem, order)

    def _search(self, problem: Problem, order) -> Iterator[SweepState]:
        t0 = time.perf_counter()
        s = problem.settings
        parsed, N, alpha = problem.data, problem.n_rows, float(s["N0"])
        log_alpha = math.log(alpha)
        stats = _Statistics(parsed, np.zeros(0, dtype=np.int64))
        model = stats.model
        order = self._data_order(model) if order is None else np.asarray(order, dtype=np.int64)
        stats.order = order
        cost_new = (model.d_new + model.pconst)[order]  # -ln H(x_n), in search order
        suffix = np.concatenate([np.cumsum(cost_new[::-1])[::-1], [0.0]])  # sum over positions >= n
        heuristic, ewens = s["heuristic"], self.prior_kind == "ewens"
        beam = None if self.beam_size is None else int(self.beam_size)
        bound = bool(self.bound_prior)
        max_pops = int(self.max_expansions)
        max_queue = max(1, MAX_QUEUE_BYTES // QUEUE_ENTRY_BYTES)
        block = int(self.block_size) if self.block_size is not None else max(1, math.ceil(N / 20))
        spherical = s["spherical"]
        Xs = parsed.X[:, parsed.blocks[0].columns] if spherical is not None else None
        # Records of the popped states only (a queued state is its queue entry): parent, label of
        # its last row, depth, K, -ln p(x | c) of the prefix, K ln a + sum ln Gamma(n_k) (eppf).
        parent, label, depth, k_of, nll_of, log_prior_of = [], [], [], [], [], []

        def labels_of(sid):
            out = []
            while sid > 0:
                out.append(label[sid])
                sid = parent[sid]
            return np.array(out[::-1], dtype=np.int64)

        def prior_term(log_prior, largest, m, n):
            """-ln P-hat of a prefix of n rows: the best prior of a completion (or its own).
            ``m``: the prefix's count vector (size -> clusters; only read for prior_kind="ewens")."""
            R = N - n
            if ewens:
                if bound:
                    m = ewens_completion(m, R, alpha)
                return -ewens_log_prob(m, alpha)
            lp = log_prior + math.lgamma(alpha)
            if bound:
                lp += eppf_completion(R, largest, log_alpha) - math.lgamma(alpha + N)
            else:
                lp -= math.lgamma(alpha + n)
            return -lp

        # queue entries: (f, push number, parent id, label of the new row, nll, log prior, largest cluster)
        queue = [(0.0, 0, -1, -1, 0.0, 0.0, 0)]
        pushed, popped, frame = 1, 0, 0
        out = np.empty(8)
        while True:
            if not queue:
                raise RuntimeError("internal: the search queue emptied before a complete state was found.")
            f, _, p, k_new, nll, log_prior, largest = heapq.heappop(queue)
            popped += 1
            sid = len(parent)
            if p < 0:  # the root
                n, K = 0, 0
            else:
                n, K_p = depth[p] + 1, k_of[p]
                K = K_p + (k_new == K_p)
                stats.load(p, k_new, K_p, n - 1, labels_of)
                stats.release(p)
            parent.append(p)
            label.append(k_new)
            depth.append(n)
            k_of.append(K)
            nll_of.append(nll)
            log_prior_of.append(log_prior)
            done = n == N
            if done or popped % block == 0:
                frame += 1
                yield self._state(frame, model, order, labels_of(sid), n, K, nll, log_prior, alpha, f, popped,
                                  pushed, done, t0)
            if done:
                return
            if popped >= max_pops:
                raise ValueError(
                    f"the search popped {popped:,} states without placing all {N} rows (A* can take exponential "
                    "time); set a beam_size (e.g. 100), use heuristic='inadmissible', or raise max_expansions.")
            if len(queue) > max_queue:
                raise ValueError(
                    f"the search queue holds {len(queue):,} states (about {len(queue) * QUEUE_ENTRY_BYTES / 2**30:.1f} "
                    f"GB) without placing all {N} rows (A* can take exponential memory); set a beam_size "
                    "(e.g. 100), use heuristic='inadmissible', or use fewer rows.")
            row = order[n]
            if out.shape[0] < K:
                out = np.empty(2 * K)
            dp_mixture.cluster_nlp(row, K, model.fams, out)
            costs = out[:K] + model.pconst[row]
            sizes = [int(c) for c in model.cnt[:K]]
            stats.keep(sid, K + 1)
            m = {}
            if ewens:
                for c in sizes:
                    m[c] = m.get(c, 0) + 1
            if heuristic == "admissible" and n + 1 < N:
                sums = np.zeros((K, Xs.shape[1]))
                np.add.at(sums, labels_of(sid), Xs[order[:n]])
                h_children = _admissible_children(Xs, spherical, sizes, sums, row, order[n + 1:])
            for k in range(K + 1):
                if k < K:
                    c = sizes[k]
                    child_lp, child_L, child_nll = log_prior + math.log(c), max(largest, c + 1), nll + float(costs[k])
                else:
                    c = 0
                    child_lp, child_L, child_nll = log_prior + log_alpha, max(largest, 1), nll + float(cost_new[n])
                if ewens:
                    child_m = dict(m)
                    if c:
                        child_m[c] -= 1
                        if not child_m[c]:
                            del child_m[c]
                    child_m[c + 1] = child_m.get(c + 1, 0) + 1
                else:
                    child_m = m
                g = child_nll + prior_term(child_lp, child_L, child_m, n + 1)
                if heuristic == "trivial" or n + 1 == N:
                    h = 0.0
                elif heuristic == "inadmissible":
                    h = float(suffix[n + 1])
                else:
                    h = h_children[k]
                heapq.heappush(queue, (g + h, pushed, sid, k, child_nll, child_lp, child_L))
                pushed += 1
            if beam is not None and len(queue) > beam:
                queue.sort()  # a sorted list is a heap; push numbers are unique, so ties never reach the ids
                for entry in queue[beam:]:
                    stats.release(entry[2])
                del queue[beam:]
        # not reached

    def _state(self, frame, model, order, prefix_labels, n, K, nll, log_prior, alpha, f, popped, pushed, done,
               t0) -> SweepState:
        log_crp = log_prior + math.lgamma(alpha) - math.lgamma(alpha + n) if n else 0.0
        labels = np.full(model.N, -1, dtype=np.int64)
        labels[order[:n]] = prefix_labels
        summaries = model.summaries(K)
        summaries["search"] = {"enqueued": pushed, "dequeued": popped, "order": order}
        return SweepState(
            iteration=frame, labels=labels, n_clusters=K, objective=float(f), neg_log_joint=float(nll - log_crp),
            n_changed=n, cluster_sizes=model.cnt[:K].astype(np.int64),
            summaries=summaries, elapsed=time.perf_counter() - t0, converged=done,
            algorithm=self.name,
        )

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        self.neg_log_joint_ = state.neg_log_joint
        self.search_objective_ = state.objective
        self.cluster_summaries_ = state.summaries
        self.heuristic_ = problem.settings["heuristic"]
        self.N0_ = float(problem.settings["N0"])
        search = state.summaries["search"]
        self.n_enqueued_, self.n_dequeued_ = int(search["enqueued"]), int(search["dequeued"])
        self.order_ = np.array(search["order"])
        self._hold_as_mapdp(problem, history, self.N0_)  # prediction, priors, the choices record
