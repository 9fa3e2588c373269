"""The MAP-DP sweep loop over the compiled kernels (PLOS Algorithm 3, Appendices A-C).

What every caller of the MAP-DP engine shares: the estimator (:class:`~mapdp_core.MAPDP`)
and the models built on its sweeps (collapsed Gibbs, MAP-iHMM), and the automatic search
(:mod:`mapdp_core.selection.auto`), which runs many small fits here without the estimator's
checks. Input is a validated :class:`~mapdp_core.core.spec.ParsedData`; output is one
immutable :class:`~mapdp_core.core.state.SweepState` per sweep.
"""
from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator

import numpy as np

from mapdp_core.core.labels import relabel_by_first_appearance
from mapdp_core.core.spec import ParsedData
from mapdp_core.core.state import SweepState
from mapdp_core.core.validation import restart_plan
from mapdp_core.kernels import dp_mixture

from .model_data import ModelData
from .partition_prior import PartitionPrior, as_partition_prior

NO_SAMPLING = np.zeros(0)  # empty uniforms: the sweep takes the argmin (MAP-DP)

#: rows of one block of a sweep shared by threads: each block's scores are computed in
#: parallel against the statistics at its start, then its rows are visited in order
#: (``dp_mixture.sweep``'s ``pre``); smaller blocks see fewer moves between their start and a
#: row, larger ones start the threads fewer times
SWEEP_BLOCK = 8192

#: fewer rows than this sweep on one thread (starting threads per block costs more there)
PARALLEL_SWEEP_ROWS = 20_000

#: clusters (plus the new one) times columns below which a row's scores cost too little for
#: the parallel scoring and the serial pass over its results to beat one plain pass (2-D PLOS
#: data with K = 2: 44 ms shared by 2 threads against 33 ms on one; 10-D: 78 against 103 ms)
PARALLEL_SWEEP_WORK = 16

_NO_PRE = np.zeros((0, 0))


def _worth_sharing(changed: int, N: int, K: int, D: int) -> bool:
    """Whether to share a sweep among threads, as measured on 2 cores: only for rows whose
    scoring is heavy (the clusters times the columns) after a sweep that moved so few rows
    that most blocks will see no move (a move makes the rest of its block re-score the two
    clusters it touched, on one thread)."""
    return 4 * changed * SWEEP_BLOCK <= N and (K + 1) * D >= PARALLEL_SWEEP_WORK


def new_cluster_weights(prior: PartitionPrior, model: ModelData) -> np.ndarray:
    """The kernel's ``log_new`` for the rows ``model`` holds: a new cluster's ln weight for every
    number of other clusters its arrays can hold (the kernel stops to grow them before more)."""
    return prior.new_cluster_log_weights(model.N, model.capacity + 1)


def _sweep_rows(model: ModelData, order, labels, K: int, first_sweep: bool, prior: PartitionPrior, uniforms,
                sampling: bool, pool, threads: int, block: int):
    """One sweep over ``order`` (Gauss-Seidel, the reference's semantics); with a thread
    ``pool``, block by block: the block's scores in ``threads`` threads, then the visits in
    order, re-scoring only the clusters a move of the block has touched. Returns
    (K, sum of the chosen scores, rows moved)."""
    N = len(order)
    score, changed, t = 0.0, 0, 0
    log_new, gamma = new_cluster_weights(prior, model), float(prior.gamma)
    while t < N:
        t1 = min(t + block, N) if pool is not None else N
        pre, pre_k = _NO_PRE, 0
        if pool is not None:
            if K >= model.capacity:  # the scoring calls would stop at once, as a full sweep does
                model.grow(K)
                log_new = new_cluster_weights(prior, model)
            pre = np.empty((t1 - t, model.capacity))
            cuts = np.linspace(t, t1, threads + 1).astype(np.int64)

            def prescore(j, fams):
                return dp_mixture.sweep(order, cuts[j], cuts[j + 1], labels, K, first_sweep, log_new, gamma, model.d_new,
                                      model.pconst, model.cnt, model.logcnt, fams, uniforms, NO_SAMPLING, pre, t,
                                      0, np.zeros(model.capacity, dtype=np.uint8), 0.0, True)

            jobs = [pool.submit(prescore, j, model.private_fams()) for j in range(1, threads)]
            prescore(0, model.fams)
            for job in jobs:
                job.result()
            pre_k = K
        scores = np.empty(model.capacity + 1) if sampling else NO_SAMPLING
        stop, K, score, c = dp_mixture.sweep(order, t, t1, labels, K, first_sweep, log_new, gamma, model.d_new, model.pconst,
                                           model.cnt, model.logcnt, model.fams, uniforms, scores, pre, t, pre_k,
                                           np.zeros(model.capacity, dtype=np.uint8), score, False)
        changed += c
        if stop < t1:
            model.grow(K)  # the block's remaining rows are scored again, against the grown arrays
            log_new = new_cluster_weights(prior, model)
        t = stop
    return K, score, changed


def _load_in_visiting_order(parsed: ParsedData, order: np.ndarray, init: np.ndarray | None):
    """(model, labels, K, inverse): the rows stored in visiting ``order`` and loaded with the
    partition ``init`` (input order; None: one cluster); ``inverse`` maps an input row to its
    stored position (None when ``order`` is the identity and nothing was copied)."""
    N = parsed.X.shape[0]
    identity = np.arange(N, dtype=np.int64)
    inverse = None
    if not np.array_equal(order, identity):
        # The rows are stored in visiting order, so that a sweep reads memory in sequence
        # (1.3-1.8x faster at 400 000 rows than a random order): the same rows are visited and
        # moved in the same sequence, so every number is the same.
        # (np.take: the same copy as X[order], several times faster for whole rows)
        parsed = ParsedData(np.ascontiguousarray(np.take(parsed.X, order, axis=0)), parsed.names, parsed.blocks,
                            parsed.categories)
        inverse = np.empty(N, dtype=np.int64)
        inverse[order] = identity  # the permutation's inverse, in O(N)
    model = ModelData(parsed)
    if inverse is not None:  # the data-only constants summed in the rows' own order, as without the copy
        model.pconst_total = float(np.take(model.pconst, inverse).sum())
        model.input_rows = inverse  # and a gappy Normal-Wishart block's chain rule in that order too
    labels = np.zeros(N, dtype=np.int64) if init is None else np.take(np.asarray(init, dtype=np.int64), order)
    K = model.start(labels, identity)
    return model, labels, K, inverse


class CycleWatch:
    """The partitions a MAP-DP run has reached, to end a run caught in a cycle.

    Each move of a sweep lowers the collapsed objective when a row's score is its exact
    predictive; a Normal-Wishart block with gaps scores a row with the cluster's gaps filled
    by conditional means (PLOS Appendix F), so E need not fall at every sweep, and a run can
    alternate between a few partitions until ``max_iter`` (PBC's table, the per-cluster block
    with its ordinal scales categorical, from one cluster: partitions 13 and 14 repeated every
    second sweep up to sweep 100, -ln p(X, z) 16 690.72 and 16 692.41). Such a run can never
    meet the ``tol`` rule; it is ended at the member of the cycle with the lowest exact joint
    (the MAP rule among the partitions it keeps visiting), found by one more tour of the
    cycle: at most twice its period of sweeps after the repeat, where it ran to ``max_iter``.
    A partition is known by a digest of its labels as the sweep numbers them (a cycle whose
    partitions come back under other numbers is caught one period later). The state it ends
    at says ``converged``: the run ended by its own rule, not at ``max_iter``."""

    def __init__(self):
        self._seen: dict[bytes, int] = {}  # digest -> the sweep that reached it first
        self._tour: dict[bytes, float] | None = None  # the cycle's members -> their joints
        self._period = 0
        self._target: bytes | None = None
        self._deadline = 0

    def ends_at(self, iteration: int, labels: np.ndarray, joint) -> bool:
        """Whether the run ends with the partition ``labels`` reached by sweep ``iteration``
        (``joint()``: its exact -ln p(X, z), asked only while the cycle is toured)."""
        key = hashlib.blake2b(np.ascontiguousarray(labels).view(np.uint8), digest_size=16).digest()
        if self._target is not None:  # on the way to the cycle's best member
            return key == self._target or iteration >= self._deadline
        if self._tour is not None:
            if key in self._tour or len(self._tour) >= self._period:  # the tour is complete
                self._target = min(self._tour, key=self._tour.get)
                self._deadline = iteration + 2 * self._period  # a cycle that is not exact ends anyway
                return key == self._target
            self._tour[key] = joint()
            return False
        if key in self._seen:  # the run has come back to a partition: a cycle
            # (period 1: a singleton row re-opening its own cluster counts as a move; the tour ends
            # it a sweep later, where the tol rule ends it too when E repeats, the same sweep as before)
            self._period = iteration - self._seen[key]
            self._tour = {key: joint()}
            return False
        self._seen[key] = iteration
        return False


def run_sweeps(parsed: ParsedData, N0, order: np.ndarray, tol: float, max_iter: int,
         rng: np.random.Generator | None = None, init: np.ndarray | None = None,
         threads: int = 1, final_only: bool = False) -> Iterator[SweepState]:
    """The sweep loop shared by MAP-DP and, when ``rng`` is given, collapsed Gibbs sampling
    (which runs all ``max_iter`` sweeps: a sampler does not converge to a point).

    ``init`` (labels 0..K-1 without an empty cluster) replaces the start with every row in one
    cluster; the first-sweep count of Appendix B then does not apply (it exists only so that
    a new cluster can open away from the all-in-one start). ``threads`` > 1 shares each
    MAP-DP sweep of :data:`PARALLEL_SWEEP_ROWS` rows or more among that many threads, with the
    same labels and E bit for bit (:func:`_sweep_rows`). ``final_only``: only the states that can be
    the run's last (converged, at ``max_iter``, or one that the next sweep would repeat) are
    given, for a caller that keeps only the last state (:func:`last_state`); the others are
    never built (no labels, joint or summaries computed for them). ``N0``: the Dirichlet
    process's concentration, or any :class:`~mapdp_core.engine.partition_prior.PartitionPrior`."""
    t0 = time.perf_counter()
    model, labels, K, inverse = _load_in_visiting_order(parsed, order, init)
    identity = np.arange(model.N, dtype=np.int64)
    prior = as_partition_prior(N0)
    # a family whose clusters share statistics changes every score with each move: nothing to prescore
    parallel = rng is None and threads > 1 and model.N >= PARALLEL_SWEEP_ROWS and not model.shared_statistics
    pool = ThreadPoolExecutor(threads - 1) if parallel else None
    try:
        yield from _sweeps_of(model, labels, K, identity, None if inverse is None else order, inverse, prior,
                              tol, max_iter, rng, init, pool, threads, t0, final_only)
    finally:
        if pool is not None:
            pool.shutdown()


def last_state(parsed: ParsedData, N0, random_state, init: np.ndarray | None = None, *,
               shuffle: bool = True, max_iter: int = 100, tol: float = 1e-6) -> SweepState:
    """The final state of ``MAPDP(N0=N0, n_init=1, random_state=random_state, init=init,
    shuffle=shuffle, max_iter=max_iter, tol=tol)`` fitted on the rows ``parsed`` holds
    (likelihood and prior already resolved), without the estimator's checks: for callers that
    run many small fits on rows they have checked and parsed once (the hyperparameter search).
    The same plan and sweeps as ``fit``, so the same labels and joint (tested)."""
    N = parsed.X.shape[0]
    order = restart_plan(random_state, 1, N, shuffle=shuffle)[0][0]
    order = np.arange(N, dtype=np.int64) if order is None else order
    start = None if init is None else check_init(init, N)
    state = None
    for state in run_sweeps(parsed, N0, order, tol, max_iter, init=start, final_only=True):
        pass
    return state


def _sweeps_of(model, labels, K, order, visit, inverse, prior, tol, max_iter, rng, init, pool, threads, t0,
               final_only=False):
    """``_run``'s sweeps over rows stored in visiting order (``order`` the identity; ``visit``
    the input rows in that order, None when it is theirs); states give the labels in the
    input's row order (``inverse``: input row -> stored position)."""
    N = model.N
    E_old = math.inf
    watch = CycleWatch() if rng is None and tol > 0 else None  # MAP-DP only: a sampler wanders by design
    for iteration in range(1, max_iter + 1):
        if rng is None and tol > 0 and iteration > 1 and changed == 0 and not (iteration == 2 and init is None):
            # The last sweep moved no row and did not use the first-sweep count (Appendix B):
            # labels, statistics and visiting order are those it started from, so this sweep
            # would compute the same scores and E bit for bit. Its state is given without
            # recomputing it, and E_new = E_old ends the run exactly as the sweep would have.
            yield dataclasses.replace(state, iteration=iteration, elapsed=time.perf_counter() - t0, converged=True)
            return
        uniforms = NO_SAMPLING
        if rng is not None:  # one draw per input row, as without the copy
            uniforms = rng.random(N) if visit is None else rng.random(N)[visit]
        shared = pool is not None and iteration > 1 and _worth_sharing(changed, N, K, model.parsed.X.shape[1])
        K, score, changed = _sweep_rows(model, order, labels, K, iteration == 1 and init is None, prior, uniforms,
                                        rng is not None, pool if shared else None, threads, SWEEP_BLOCK)
        K = model.compact(labels, K)
        sizes = model.cnt[:K]
        E = score - prior.sweep_log_prior(sizes)
        converged = rng is None and abs(E_old - E) < tol
        cycled = (watch is not None and not converged and changed > 0
                  and watch.ends_at(iteration, labels, lambda: model.neg_log_joint(K, prior, labels=labels)))
        if final_only and not (converged or cycled or iteration == max_iter or (
                rng is None and tol > 0 and changed == 0 and not (iteration == 1 and init is None))):
            # not the last state (the next sweep runs: the test at the loop's top fails), and the
            # caller keeps only the last: nothing is given, no labels, joint or summaries computed
            E_old = E
            continue
        state = SweepState(
            iteration=iteration, labels=labels if inverse is None else np.take(labels, inverse), n_clusters=K,
            objective=E,
            neg_log_joint=model.neg_log_joint(K, prior, labels=labels), n_changed=changed,
            cluster_sizes=sizes.astype(np.int64), summaries=model.summaries(K),
            elapsed=time.perf_counter() - t0, converged=converged or cycled,
            algorithm="MAP-DP" if rng is None else "Gibbs",
        )
        yield state
        if converged or cycled:
            return
        E_old = E


def check_init(init, N: int) -> np.ndarray:
    """A starting partition as labels 0..K-1 in order of first appearance."""
    labels = np.asarray(init)
    if labels.shape != (N,) or not (np.issubdtype(labels.dtype, np.integer) or
                                    (np.issubdtype(labels.dtype, np.floating) and np.all(labels == np.round(labels)))):
        raise ValueError(f"init must be {N} whole-number labels, one per row, got an array of shape {labels.shape} "
                         f"and dtype {labels.dtype}.")
    return relabel_by_first_appearance(labels)


@dataclasses.dataclass(frozen=True)
class RowStep:
    """The partition part-way through one MAP-DP sweep (:func:`sweep_in_steps`).

    ``visited``: rows visited so far in this sweep (the first ``visited`` of the visiting order);
    ``rows``: the input rows visited in this step, in visiting order; ``labels``: every row's
    cluster now (input order; cluster numbers are the sweep's slots, so a number may be unused
    while a cluster stands empty); ``n_clusters``: the non-empty clusters; ``moved``: rows of this
    step that changed cluster; ``opened``: clusters this step opened."""

    visited: int
    rows: np.ndarray
    labels: np.ndarray
    n_clusters: int
    moved: int
    opened: int


def sweep_in_steps(parsed: ParsedData, N0, order: np.ndarray, start: np.ndarray | None = None,
                   steps: int = 40) -> Iterator[RowStep]:
    """One MAP-DP sweep (PLOS Algorithm 3) watched part-way: from the partition ``start`` (labels
    0..K-1 in input order; None: every row in one cluster, with the first-sweep count of Appendix
    B, as a fit's first sweep), visiting the rows in ``order`` and stopping after every
    ceil(N / ``steps``) rows to give the partition then. The kernel's own sweep run over the
    visiting order in consecutive pieces, so the last step's partition is the partition of
    :func:`run_sweeps`'s sweep from the same start and order (tested): the teaching view of the
    row-by-row decisions (:mod:`mapdp_core.engine.decisions` explains one of them)."""
    N = parsed.X.shape[0]
    order = np.asarray(order, dtype=np.int64)
    model, labels, K, inverse = _load_in_visiting_order(parsed, order, start)
    if inverse is None:
        inverse = order  # the identity
    identity = np.arange(N, dtype=np.int64)
    prior = as_partition_prior(N0)
    log_new, gamma = new_cluster_weights(prior, model), float(prior.gamma)
    every = max(1, math.ceil(N / max(int(steps), 1)))
    score, t = 0.0, 0
    while t < N:
        t1 = min(t + every, N)
        before = labels[t:t1].copy()
        opened_before = K
        u = t
        while u < t1:
            stop, K, score, _ = dp_mixture.sweep(identity, u, t1, labels, K, start is None, log_new, gamma, model.d_new,
                                                 model.pconst, model.cnt, model.logcnt, model.fams, NO_SAMPLING,
                                                 NO_SAMPLING, _NO_PRE, u, 0, np.zeros(model.capacity, dtype=np.uint8),
                                                 score, False)
            if stop < t1:
                model.grow(K)
                log_new = new_cluster_weights(prior, model)
            u = stop
        yield RowStep(visited=t1, rows=order[t:t1].copy(), labels=np.take(labels, inverse),
                      n_clusters=int(np.count_nonzero(model.cnt[:K] > 0)),
                      moved=int(np.count_nonzero(labels[t:t1] != before)), opened=K - opened_before)
        t = t1
