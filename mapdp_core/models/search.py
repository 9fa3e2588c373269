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

from mapdp_core.kernels import dp_mixture
from mapdp_core.engine.model_data import ModelData
from mapdp_core.core.validation import check_bool, check_choice, check_int
from mapdp_core.core.estimator import Control, Problem, SweepEstimator, warm_up_hook
from mapdp_core.families import warm_up_example
from .mapdp import MAPDP, PredictsAsMAPDP
from mapdp_core.core.state import SweepState

__all__ = ["DPSearch", "eppf_completion", "ewens_log_prob", "ewens_completion"]

HEURISTICS = ("trivial", "inadmissible", "admissible")
PRIOR_KINDS = ("eppf", "ewens")
DATA_ORDERS = ("marginal", "input", "reversed", "random")

#: pops after which an unfinished search stops with a message (A* can be exponential)
DEFAULT_MAX_EXPANSIONS = 1_000_000


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


class _Prefix:
    """The statistics of one prefix clustering (the state last loaded), in a ModelData.

    Loading another state rolls the statistics back to the deepest ancestor it shares with
    the loaded one (removing the rows placed below it) and adds the new state's rows from
    there, or rebuilds from nothing when that is cheaper; slots left empty are reset to the
    prior exactly. A best-first search mostly pops a child of the state it popped last, which
    then costs one row."""

    def __init__(self, parsed, order, parent: list, label: list, n_clusters: list):
        self.model = ModelData(parsed)
        self.order = order
        self.labels = np.full(self.model.N, -1, dtype=np.int64)
        self.parent, self.label, self.n_clusters = parent, label, n_clusters
        self.chain = [0]  # ids of the loaded state and its ancestors, by depth (the root at 0)

    def load(self, state_id: int, depth: int) -> None:
        m = self.model
        K = self.n_clusters[state_id]
        loaded = len(self.chain) - 1
        path, sid, d = [], state_id, depth  # the new rows' states, deepest first
        while d > 0 and not (d <= loaded and self.chain[d] == sid):
            path.append(sid)
            sid, d = self.parent[sid], d - 1
        if (loaded - d) + len(path) > depth:  # a rebuild moves fewer rows
            d = 0
            path, sid = [], state_id
            while sid > 0:
                path.append(sid)
                sid = self.parent[sid]
        if d == 0 and loaded > 0:  # from nothing
            self.labels[self.order[:loaded]] = -1
            dp_mixture.reset_slots(0, m.capacity, m.cnt, m.logcnt, m.fams)
            del self.chain[1:]
        elif d < loaded:  # back to the common ancestor at depth d
            rows = self.order[d:loaded][::-1].copy()
            dp_mixture.move_rows(rows, self.labels, -1, m.cnt, m.logcnt, m.fams)
            self.labels[rows] = -1
            K_anc = self.n_clusters[self.chain[d]]
            dp_mixture.reset_slots(K_anc, m.capacity, m.cnt, m.logcnt, m.fams)  # emptied: exactly the prior
            del self.chain[d + 1:]
        while m.capacity <= K + 1:
            m.grow(self.n_clusters[self.chain[-1]])
        rows = self.order[d:depth]
        for sid in reversed(path):
            self.labels[self.order[len(self.chain) - 1]] = self.label[sid]
            self.chain.append(sid)
        dp_mixture.move_rows(rows, self.labels, 1, m.cnt, m.logcnt, m.fams)


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
    j = np.arange(R)  # 0..R-1 other rows
    n = np.concatenate([np.asarray(counts, dtype=float), [0.0]])  # clusters and a new one
    S = np.vstack([np.asarray(sums, dtype=float).reshape(-1, D), np.zeros((1, D))])
    v = 1.0 / (1.0 / tau2 + (n[:, None] + j[None, :]) / s2)  # (K+1, R)
    centre = v[:, :, None] * (mu0[None, None, :] / tau2 + S[:, None, :] / s2)  # (K+1, R, D)
    rho = v * j[None, :] * M / s2
    best = np.full(R, -np.inf)
    for k in range(len(n)):
        dist = np.sqrt(((Y[:, None, :] - centre[k][None, :, :]) ** 2).sum(axis=2))  # (R rows, R values of j)
        d = np.maximum(0.0, dist - rho[k][None, :])
        var = v[k] + s2
        u = -0.5 * D * np.log(2 * np.pi * var)[None, :] - d ** 2 / (2 * var[None, :])
        best = np.maximum(best, u.max(axis=1))
    return best


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
        States popped before an unfinished search stops with a message.
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

    warm_up = warm_up_hook({"N0": 1.0, "beam_size": 2}, data=warm_up_example)

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
        # per state: parent, label of its last row, depth, K, sizes, accumulated -ln p(x | c)
        parent, label, depth, sizes_of, nll_of, k_of = [0], [-1], [0], [()], [0.0], [0]
        log_prior_of = [0.0]  # K ln a + sum ln Gamma(n_k) of the prefix (eppf)
        ctx = _Prefix(parsed, np.zeros(0, dtype=np.int64), parent, label, k_of)
        model = ctx.model
        order = self._data_order(model) if order is None else np.asarray(order, dtype=np.int64)
        ctx.order = order
        cost_new = (model.d_new + model.pconst)[order]  # -ln H(x_n), in search order
        suffix = np.concatenate([np.cumsum(cost_new[::-1])[::-1], [0.0]])  # sum over positions >= n
        heuristic, ewens = s["heuristic"], self.prior_kind == "ewens"
        beam = None if self.beam_size is None else int(self.beam_size)
        bound = bool(self.bound_prior)
        max_pops = int(self.max_expansions)
        block = int(self.block_size) if self.block_size is not None else max(1, math.ceil(N / 20))
        spherical = s["spherical"]
        Xs = parsed.X[:, parsed.blocks[0].columns] if spherical is not None else None

        def chain(sid):
            out = []
            while sid > 0:
                out.append(label[sid])
                sid = parent[sid]
            return np.array(out[::-1], dtype=np.int64)

        def prior_term(sid, n):
            """-ln P-hat of the prefix: the best prior of a completion (or the prefix's own)."""
            sizes = sizes_of[sid]
            R = N - n
            if ewens:
                m: dict = {}
                for c in sizes:
                    m[c] = m.get(c, 0) + 1
                if bound:
                    m = ewens_completion(m, R, alpha)
                return -ewens_log_prob(m, alpha)
            lp = log_prior_of[sid] + math.lgamma(alpha)
            if bound:
                lp += eppf_completion(R, max(sizes) if sizes else 0, log_alpha) - math.lgamma(alpha + N)
            else:
                lp -= math.lgamma(alpha + n)
            return -lp

        def h_of(sid, n):
            if heuristic == "trivial" or n == N:
                return 0.0
            if heuristic == "inadmissible":
                return float(suffix[n])
            # admissible: needs the prefix's per-cluster counts and sums
            labels = chain(sid)
            K = len(sizes_of[sid])
            rows = order[:n]
            sums = np.zeros((K, Xs.shape[1]))
            np.add.at(sums, labels, Xs[rows])
            u = _admissible_bound(Xs, spherical[0], spherical[1], spherical[2], sizes_of[sid], sums, order[n:])
            return float(-u.sum())

        queue = [(0.0, 0, 0)]  # (f, push number, state id)
        pushed, popped, frame = 1, 0, 0
        out = np.empty(8)
        while True:
            if not queue:
                raise RuntimeError("internal: the search queue emptied before a complete state was found.")
            f, _, sid = heapq.heappop(queue)
            popped += 1
            n, K = depth[sid], len(sizes_of[sid])
            ctx.load(sid, n)
            done = n == N
            if done or popped % block == 0:
                frame += 1
                yield self._state(frame, ctx, sid, n, K, sizes_of[sid], nll_of[sid], log_prior_of[sid], alpha, f, popped,
                                  pushed, done, t0)
            if done:
                return
            if popped >= max_pops:
                raise ValueError(
                    f"the search popped {popped:,} states without placing all {N} rows (A* can take exponential "
                    "time); set a beam_size (e.g. 100), use heuristic='inadmissible', or raise max_expansions.")
            row = order[n]
            if out.shape[0] < K:
                out = np.empty(2 * K)
            dp_mixture.cluster_nlp(row, K, model.fams, out)
            costs = list(out[:K] + model.pconst[row]) + [cost_new[n]]
            sizes = sizes_of[sid]
            for k in range(K + 1):
                child = len(parent)
                parent.append(sid)
                label.append(k)
                depth.append(n + 1)
                if k < K:
                    new_sizes = sizes[:k] + (sizes[k] + 1,) + sizes[k + 1:]
                    log_prior_of.append(log_prior_of[sid] + math.log(sizes[k]))
                else:
                    new_sizes = sizes + (1,)
                    log_prior_of.append(log_prior_of[sid] + log_alpha)
                sizes_of.append(new_sizes)
                k_of.append(len(new_sizes))
                nll_of.append(nll_of[sid] + float(costs[k]))
                g = nll_of[child] + prior_term(child, n + 1)
                heapq.heappush(queue, (g + h_of(child, n + 1), pushed, child))
                pushed += 1
            if beam is not None and len(queue) > beam:
                queue = heapq.nsmallest(beam, queue)  # a sorted list is a heap
        # not reached

    def _state(self, frame, ctx, sid, n, K, sizes, nll, log_prior, alpha, f, popped, pushed, done, t0) -> SweepState:
        log_crp = log_prior + math.lgamma(alpha) - math.lgamma(alpha + n) if n else 0.0
        model = ctx.model
        labels = np.full(model.N, -1, dtype=np.int64)
        if n:
            labels[ctx.order[:n]] = ctx.labels[ctx.order[:n]]
        summaries = model.summaries(K)
        summaries["search"] = {"enqueued": pushed, "dequeued": popped, "order": ctx.order}
        return SweepState(
            iteration=frame, labels=labels, n_clusters=K, objective=float(f), neg_log_joint=float(nll - log_crp),
            n_changed=n, cluster_sizes=np.array(sizes, dtype=np.int64),
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
