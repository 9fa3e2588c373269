"""MAP-DP's sweeps over a table held in parts, each where it lives (a Dask worker), with the
serial result.

The contract (``benchmarks/DISTRIBUTED.md``): the labels are those of the serial sweep
(:func:`mapdp_core.engine.sweeps.run_sweeps`, PLOS Algorithm 3 with Gauss-Seidel updates) over
the rows in one global visiting order, part by part and each part's rows in its own seeded
order, from the same starting partition. Only cluster statistics ((K + 1) x a few floats per
family: counts, sums, Cholesky factors), masks of K bytes and per-part totals travel; rows and
labels stay in their parts.

How, in three steps, each tested against the serial sweep bit for bit (labels and statistics;
E and the joint to rounding, since per-part sums are added in another order):

1. **Start** (:func:`load_part`): the statistics of the starting partition are accumulated
   part after part, in the global visiting order, exactly as the serial run's ``start`` adds
   row after row (a chain rather than a tree of merged moments: a tree would give the same
   statistics only up to rounding, and the Normal-Wishart block's completions of gappy rows
   depend on the rows before them).
2. **Sweep, in rounds.** At a sweep's start every part scores its rows against the statistics
   (:func:`prescore_part`, in parallel: the costly part, O(N K) family scores). Then, in each
   round, the next parts not yet committed, as many as the cluster runs tasks at once, visit
   their rows in order from the statistics the committed parts left (:func:`pass_part`, in
   parallel; more would only queue behind them, and every visit after the round's first mover
   is repeated, so a wider round costs more where rows move and saves only round trips where
   none do): a cluster whose statistics have not
   changed since the part's prescoring is read from its scores, the others are scored afresh,
   so the visit is exact (the kernel's ``dirty`` mask, as in the threaded sweep). A part before
   the first part that moved a row saw exactly the statistics the serial sweep would show it;
   so did that first mover: the round commits them all, and the parts after it visit again in
   the next round, with the clusters the mover touched marked. A sweep takes at least
   parts / width rounds and at most one more per part that moves a row.
3. **Between sweeps**: empty clusters are dropped as the serial run drops them
   (:func:`relabel_part`), and E and the exact joint are formed from the statistics and the
   per-part totals (a Normal-Wishart block with gaps chains its observed-entry terms part after
   part, :func:`nw_terms_part`).

An executor runs the steps: :class:`LocalParts` in this process (the reference, and tests),
:class:`DaskParts` on a ``dask.distributed`` client, whose futures keep each part on its worker.
"""
from __future__ import annotations

import copy
import dataclasses
import math
import operator
import time
from typing import Iterator

import numpy as np
from scipy.special import gammaln

from mapdp_core.core.spec import ParsedData
from mapdp_core.families import KERNEL_SLOTS, normal_wishart
from mapdp_core.kernels import dp_mixture

from .model_data import ModelData
from .partition_prior import DirichletProcess, as_partition_prior

_NW = KERNEL_SLOTS.index(normal_wishart)
_FILL = normal_wishart.LAYOUT.index("fill")
_NO_SAMPLING = np.zeros(0)


@dataclasses.dataclass(frozen=True)
class Layout:
    """A parsed table's columns without its rows: what a part needs to build its arrays."""
    names: list
    blocks: list
    categories: dict

    @classmethod
    def of(cls, parsed: ParsedData) -> "Layout":
        return cls(parsed.names, parsed.blocks, parsed.categories)


@dataclasses.dataclass
class Stats:
    """The cluster statistics a sweep reads and writes: K, the counts and, per kernel slot, the
    family's per-cluster arrays (``fam[N_FIXED:]``), at some capacity > K."""
    K: int
    cnt: np.ndarray
    logcnt: np.ndarray
    arrays: tuple


def stats_of(model: ModelData, K: int) -> Stats:
    """A copy of ``model``'s cluster statistics."""
    return Stats(K, model.cnt.copy(), model.logcnt.copy(),
                 tuple(tuple(a.copy() for a in fam[nf:]) for fam, nf in zip(model.fams, model.n_fixed)))


def install(model: ModelData, stats: Stats) -> None:
    """``model`` (its own copy, see :func:`_own`) takes copies of ``stats``."""
    model.fams = tuple(fam[:nf] + tuple(a.copy() for a in arrays)
                       for fam, nf, arrays in zip(model.fams, model.n_fixed, stats.arrays))
    model.cnt, model.logcnt = stats.cnt.copy(), stats.logcnt.copy()


def _own(model: ModelData) -> ModelData:
    """A shallow copy of ``model`` with scratch arrays of its own and, for a Normal-Wishart block
    with gaps, its own completed values (``fill``: row state that moves rewrite), so that a
    step never changes the part it was given (a task may run twice, or be discarded)."""
    own = copy.copy(model)
    fams = list(model.private_fams())
    if model.nw_gaps:
        nw = list(fams[_NW])
        nw[_FILL] = nw[_FILL].copy()
        fams[_NW] = tuple(nw)
    own.fams = tuple(fams)
    return own


def capacity_for(K: int, cap: int = 8) -> int:
    """The capacity ``ModelData.start`` gives a partition of K clusters (doubling from ``cap``)."""
    while cap <= K:
        cap *= 2
    return cap


@dataclasses.dataclass
class Part:
    """One part's rows, stored in its visiting order, and their labels.

    ``inverse[j]`` is the stored position of the part's j-th row (its order in the table);
    ``pre`` holds the scores of the current sweep's prescoring (rows x ``pre_k``)."""
    model: ModelData
    labels: np.ndarray
    inverse: np.ndarray
    pre: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0)))
    pre_k: int = 0


def make_part(M: np.ndarray, order: np.ndarray, labels: np.ndarray, layout: Layout) -> Part:
    """A part from its encoded rows ``M`` (the table's row order), its visiting ``order`` and
    its rows' starting labels (table order)."""
    n = len(M)
    model = ModelData(ParsedData(np.ascontiguousarray(M[order]), layout.names, layout.blocks, layout.categories))
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.arange(n, dtype=np.int64)
    model.pconst_total = float(model.pconst[inverse].sum())  # in the table's row order, as run_sweeps sums it
    model.input_rows = inverse
    return Part(model, np.ascontiguousarray(np.asarray(labels, dtype=np.int64)[order]), inverse)


def part_rows(part: Part) -> int:
    return part.model.N


def part_pconst(part: Part) -> float:
    return part.model.pconst_total


def part_has_nw_gaps(part: Part) -> bool:
    return part.model.nw_gaps


def load_part(part: Part, stats: Stats | None, capacity: int) -> tuple[Part, Stats]:
    """Step 1: the part's rows added, in its visiting order, to the statistics the parts before
    it left (None: empty statistics of ``capacity`` slots)."""
    model = _own(part.model)
    if stats is None:
        model._rebuild(np.arange(0), capacity)
    else:
        install(model, stats)
    dp_mixture.move_rows(np.arange(model.N, dtype=np.int64), part.labels, 1, model.cnt, model.logcnt, model.fams)
    K = max(int(part.labels.max()) + 1 if len(part.labels) else 0, 0 if stats is None else stats.K)
    return dataclasses.replace(part, model=model), stats_of(model, K)


def prescore_part(part: Part, stats: Stats, log_n0: float) -> Part:
    """Step 2a: every row's score against every cluster of ``stats`` (the kernel's prescoring)."""
    model = _own(part.model)
    install(model, stats)
    n, K = model.N, stats.K
    pre = np.empty((n, max(K, 1)))
    dp_mixture.sweep(np.arange(n, dtype=np.int64), 0, n, part.labels, K, False, np.array([log_n0]), 0.0, model.d_new,
                     model.pconst, model.cnt, model.logcnt, model.fams, _NO_SAMPLING, _NO_SAMPLING, pre, 0, 0,
                     np.zeros(model.capacity, dtype=np.uint8), 0.0, True)
    return dataclasses.replace(part, pre=pre, pre_k=K)


@dataclasses.dataclass
class PassResult:
    """What a part's visit sends back: the statistics it leaves, the clusters changed since its
    prescoring (its moves included), the rows it moved and the sum of its chosen scores."""
    stats: Stats
    dirty: np.ndarray
    changed: int
    score: float


def pass_part(part: Part, stats: Stats, dirty: np.ndarray, log_n0: float) -> tuple[Part, PassResult]:
    """Step 2b: the part's rows visited in order (Gauss-Seidel) from ``stats``, reading the
    prescored clusters that ``dirty`` (1: changed since the prescoring) leaves clean."""
    model = _own(part.model)
    install(model, stats)
    labels = part.labels.copy()
    mask = np.zeros(model.capacity, dtype=np.uint8)
    mask[:min(len(dirty), len(mask))] = dirty[:len(mask)]
    n, K = model.N, stats.K
    order = np.arange(n, dtype=np.int64)
    t, score, changed = 0, 0.0, 0
    while t < n:
        stop, K, score, moved = dp_mixture.sweep(order, t, n, labels, K, False, np.array([log_n0]), 0.0, model.d_new,
                                                 model.pconst, model.cnt, model.logcnt, model.fams, _NO_SAMPLING,
                                                 _NO_SAMPLING,
                                                 part.pre, 0, part.pre_k, mask, score, False)
        changed += moved
        if stop < n:  # the cluster arrays are full: grow them (the statistics are copied as they are)
            model.grow(K)
            mask = np.concatenate([mask, np.zeros(model.capacity - len(mask), dtype=np.uint8)])
        t = stop
    return (dataclasses.replace(part, model=model, labels=labels),
            PassResult(stats_of(model, K), mask, changed, score))


def relabel_part(part: Part, remap: np.ndarray) -> Part:
    """Step 3: the part's labels after empty clusters were dropped (old -> new numbers)."""
    return dataclasses.replace(part, labels=remap[part.labels], pre=np.zeros((0, 0)), pre_k=0)


def nw_terms_part(part: Part, K: int, carry):
    """Step 3 for a Normal-Wishart block with gaps: its observed-entry terms of the joint, the
    chain rule continued over this part's rows in the table's order."""
    return normal_wishart.chain_log_marginals(part.model.fams[_NW], part.labels, K, part.inverse, carry)


def table_labels(part: Part) -> np.ndarray:
    """The part's labels in the table's row order."""
    return part.labels[part.inverse]


def item_of(value, i):
    return value[i]


class LocalParts:
    """Runs every step at once in this process (parts are plain objects)."""

    def width(self) -> int:
        return 1

    def submit(self, fn, *args):
        return fn(*args)

    def pick(self, handle, i):
        return handle[i]

    def gather(self, handles):
        return list(handles)

    def share(self, value):
        return value


class DaskParts:
    """Runs every step as a task on a ``dask.distributed`` client: a part stays on the worker
    whose future holds it, and only what :func:`gather` asks for comes to this process."""

    def __init__(self, client):
        self.client = client

    def width(self) -> int:
        """The tasks the cluster runs at once (its workers' threads)."""
        return max(1, sum(w.get("nthreads", 1) for w in self.client.scheduler_info()["workers"].values()))

    def submit(self, fn, *args):
        return self.client.submit(fn, *args, pure=False)

    def pick(self, handle, i):
        return self.client.submit(item_of, handle, i, pure=False)

    def gather(self, handles):
        return self.client.gather(list(handles))

    def share(self, value):
        return self.client.scatter(value, broadcast=True, hash=False)


@dataclasses.dataclass(frozen=True)
class PartitionedState:
    """A sweep over the parts: as :class:`~mapdp_core.core.state.SweepState`, but the labels
    stay in the parts (``parts``, the executor's handles, in table order); ``rounds`` is the
    number of rounds the sweep took and ``stats`` the statistics it left."""
    iteration: int
    n_clusters: int
    objective: float
    neg_log_joint: float
    n_changed: int
    cluster_sizes: np.ndarray
    summaries: dict
    elapsed: float
    converged: bool
    rounds: int
    parts: list
    stats: Stats


def partitioned_sweeps(ex, parts: list, K: int, layout_model: ModelData, N0: float, tol: float,
                       max_iter: int, on_round=None, stop=None) -> Iterator[PartitionedState]:
    """The sweeps of ``run_sweeps(all rows, N0, global order, tol, max_iter, init=labels)`` over
    ``parts`` (handles of :class:`Part`, in the global order, holding the starting labels
    0..K-1), one state per sweep. ``layout_model``: a ModelData of the same columns and prior
    (any rows: only its cluster arrays are used, to form the joint and the summaries).

    ``on_round(sweep, round, committed, parts, moved)``, if given, is called after every round
    (``committed`` of ``parts`` parts done in this sweep, ``moved`` rows so far); ``stop``
    (anything with ``is_set()``), if set, ends the sweeps between two rounds: the states
    yielded before stand, the sweep under way is dropped."""
    t0 = time.perf_counter()
    if not isinstance(as_partition_prior(N0), DirichletProcess):
        raise ValueError("A table held in parts is clustered under the Dirichlet process only: the mixture of "
                         "finite mixtures' weights depend on the whole table's rows at once. Pass a number as N0, "
                         "or fit the rows in memory.")
    N0 = as_partition_prior(N0).N0
    log_n0 = math.log(N0)
    parts = list(parts)
    P = len(parts)
    stats, capacity = None, capacity_for(K)
    for w in range(P):  # step 1: a chain, in the global order
        out = ex.submit(load_part, parts[w], stats, capacity)
        parts[w], stats = ex.pick(out, 0), ex.pick(out, 1)
    stats = ex.gather([stats])[0]
    N = sum(ex.gather([ex.submit(part_rows, p) for p in parts]))
    pconst_total = sum(ex.gather([ex.submit(part_pconst, p) for p in parts]))
    nw_gaps = any(ex.gather([ex.submit(part_has_nw_gaps, p) for p in parts]))
    model = copy.copy(layout_model)
    width = ex.width()
    E_old, changed, state = math.inf, 0, None
    for iteration in range(1, max_iter + 1):
        if tol > 0 and iteration > 1 and changed == 0:  # as run_sweeps: nothing moved, so nothing would
            yield dataclasses.replace(state, iteration=iteration, elapsed=time.perf_counter() - t0, converged=True,
                                      rounds=0)
            return
        if stop is not None and stop.is_set():
            return
        shared = ex.share(stats)
        parts = [ex.submit(prescore_part, p, shared, log_n0) for p in parts]
        masks = [np.zeros(stats.cnt.shape[0], dtype=np.uint8) for _ in range(P)]
        committed, score, changed, rounds = 0, 0.0, 0, 0
        while committed < P:
            if stop is not None and stop.is_set():
                return
            rounds += 1
            window = range(committed, min(P, committed + width))
            outs = [ex.submit(pass_part, parts[w], shared, masks[w], log_n0) for w in window]
            results = ex.gather([ex.pick(o, 1) for o in outs])
            for out, result in zip(outs, results):
                w = committed
                committed += 1
                score += result.score
                if result.changed == 0:
                    continue  # its rows stay; the part (and its prescoring) is as it was
                parts[w], stats = ex.pick(out, 0), result.stats
                changed += result.changed
                for v in range(committed, P):  # their prescoring is stale where this part moved rows
                    masks[v] = _union(masks[v], result.dirty)
                shared = ex.share(stats)
                break
            if on_round is not None:
                on_round(iteration, rounds, committed, P, changed)
        K = stats.K
        keep = np.flatnonzero(stats.cnt[:K] > 0)
        install(model, stats)
        if len(keep) < K:  # as ModelData.compact
            remap = np.full(K, -1, dtype=np.int64)
            remap[keep] = np.arange(len(keep))
            parts = [ex.submit(relabel_part, p, remap) for p in parts]
            model._rebuild(keep, model.capacity)
            K = len(keep)
            stats = stats_of(model, K)
        sizes = model.cnt[:K]
        E = score - K * log_n0 - float(gammaln(sizes).sum())
        nw_observed = None
        if nw_gaps:
            carry = None
            for p in parts:
                carry = ex.submit(nw_terms_part, p, K, carry)
            nw_observed = ex.gather([carry])[0][3]
        model.labels = None
        joint = model.neg_log_joint(K, N0, n_rows=N, pconst=pconst_total, nw_observed=nw_observed)
        converged = abs(E_old - E) < tol
        state = PartitionedState(iteration, K, E, joint, changed, sizes.astype(np.int64), model.summaries(K),
                                 time.perf_counter() - t0, converged, rounds, parts, stats)
        yield state
        if converged:
            return
        E_old = E


def _union(mask: np.ndarray, more: np.ndarray) -> np.ndarray:
    out = np.zeros(max(len(mask), len(more)), dtype=np.uint8)
    out[:len(mask)] = mask
    out[:len(more)] |= more
    return out
