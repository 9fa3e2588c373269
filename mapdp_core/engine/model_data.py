"""ModelData: the contiguous arrays the kernel works on, built from validated blocks.

Blocks of the same kernel family are concatenated column-wise (their priors are
per-column vectors), so the kernel sees at most one array per family. The cluster
axis of every per-cluster array has a capacity that grows by doubling when a sweep
opens more clusters than fit.
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from mapdp_core.kernels import dp_mixture
from mapdp_core.families import (FAMILIES, KERNEL_SLOTS, SLOT_OF, categorical, gaussian_known, normal_wishart,
                                 normal_wishart_tied)
from mapdp_core.core.spec import ParsedData

from .partition_prior import DirichletProcess, as_partition_prior

_GA, _NW, _NWT, _CA = (KERNEL_SLOTS.index(m) for m in (gaussian_known, normal_wishart, normal_wishart_tied, categorical))
#: the blocks of one family each whose chain rule over observed entries is their term of the joint
#: when they have gaps (``observed_log_marginals``), slot -> module
_CHAINED = {_NW: normal_wishart, _NWT: normal_wishart_tied}

#: the most memory the per-cluster statistics of one ModelData may take (bytes). Growth beyond
#: it stops with a clear message instead of exhausting the machine: e.g. a categorical column of
#: 10 000 categories keeps 160 kB per cluster, and a large N0 can open a cluster per row
#: (20 000 rows took 16.8 GB at peak before this bound).
MAX_CLUSTER_MEMORY = 2 ** 30


#: new rows scored per thread at least: fewer are scored on the calling thread alone
SCORE_THREAD_ROWS = 8192


def _concat_vectors(priors, key):
    return np.concatenate([np.asarray(p[key], dtype=float) for p in priors]) if priors else np.zeros(0)


class ModelData:
    """Kernel arrays for one data set and one set of hyperparameters."""

    def __init__(self, parsed: ParsedData, cap: int = 8, *, arrays_only: bool = False):
        """``arrays_only``: build the arrays but run no kernel on them (their values are then
        meaningless); only their types are used, to compile a kernel ahead (``_precompile``)."""
        self.parsed = parsed
        X = parsed.X
        N = X.shape[0]
        self.N = N
        cap = max(int(cap), 2)
        by_slot = {s: [] for s in range(len(KERNEL_SLOTS))}
        for block in parsed.blocks:
            by_slot[SLOT_OF[block.family]].append(block)
        self.by_slot = by_slot

        def cols(slot):
            c = [j for b in by_slot[slot] for j in b.columns]
            return np.ascontiguousarray(np.take(X, c, axis=1)) if c else np.zeros((N, 0))  # a copy, as X[:, c]

        # Gaussian, known (co)variance: per block, to independent coordinates.
        self.transforms = [gaussian_known.Transform(b.prior, b.family) for b in by_slot[_GA]]
        ga, jacobian = self._gaussian_known_rows(X)
        mu0, tau2, s2 = (np.concatenate([getattr(t, a) for t in self.transforms]) if self.transforms
                         else np.zeros(0) for a in ("mu0", "tau2", "s2"))
        Dg = ga[0].shape[1]
        ga = (ga[0], mu0, tau2, s2) + ga[1:] + tuple(np.zeros((cap, Dg)) for _ in range(6))

        def build(slot, module):
            if slot == _GA:
                return ga
            if slot in _CHAINED:  # one block at most: its prior as it is
                return module.build(cols(slot), by_slot[slot][0].prior, cap) if by_slot[slot] else module.empty(N, cap)
            if slot == _CA:  # one alpha0 vector per column
                return module.build(cols(slot), {"alpha0": [a for b in by_slot[slot] for a in b.prior["alpha0"]]}, cap)
            prior = {k: _concat_vectors([b.prior for b in by_slot[slot]], k) for k in module.PRIOR_KEYS}
            return module.build(cols(slot), prior, cap)

        self.fams = tuple(build(slot, module) for slot, module in enumerate(KERNEL_SLOTS))
        self.n_fixed = tuple(m.N_FIXED for m in KERNEL_SLOTS)
        # A Normal-Wishart block with gaps enters the joint by the chain rule over its observed
        # entries (normal_wishart.observed_log_marginals), which needs the labelling: the one
        # ``start`` loaded (the sweeps update that array in place) unless one is passed, and
        # the stored rows in the input's order (``input_rows``; None: stored in input order).
        self.nw_gaps = bool(by_slot[_NW]) and normal_wishart.has_gaps(self.fams[_NW])
        self.tied_gaps = bool(by_slot[_NWT]) and normal_wishart_tied.has_gaps(self.fams[_NWT])
        # a family whose clusters share statistics (the tied covariance): every move changes every
        # cluster's score, so no score may be kept across moves (no threaded prescoring)
        self.shared_statistics = any(FAMILIES[b.family].shared_statistics for b in parsed.blocks)
        self.labels = None
        self.input_rows = None
        self.cnt = np.zeros(cap)
        self.logcnt = np.zeros(cap)
        # Per-row terms that never change: the prior predictive (new-cluster) score and
        # the data-only constants (plus the Jacobian of the known-covariance transform).
        self.d_new = np.empty(N)
        self.pconst = np.empty(N)
        if arrays_only:
            return
        dp_mixture.reset_slots(0, cap, self.cnt, self.logcnt, self.fams)
        dp_mixture.point_terms(1, self.d_new, self.pconst, self.fams)
        self.pconst += jacobian
        self.pconst_total = float(self.pconst.sum())

    def _gaussian_known_rows(self, X):
        """(Y, raw, tox, toy, work) of the known-(co)variance slot for rows X, and per row
        the Jacobian ln|det V| (its data-only constant) for rows scored in whitened
        coordinates; a row scored in data units has it inside its density already."""
        parts = [(X[:, b.columns], t, b.family) for b, t in zip(self.by_slot[_GA], self.transforms)]
        arrays, in_data_units = gaussian_known.kernel_rows(parts, X.shape[0])
        log_jac = sum(t.log_jacobian for t in self.transforms)
        return arrays, np.where(in_data_units, 0.0, log_jac)

    @property
    def capacity(self) -> int:
        return self.cnt.shape[0]

    def _per_cluster_arrays(self):
        for fam, nf in zip(self.fams, self.n_fixed):
            yield from fam[nf:]

    def _check_memory(self, new_cap: int) -> None:
        """Refuse a capacity whose per-cluster arrays would exceed MAX_CLUSTER_MEMORY, saying
        what takes the room and what to change."""
        per_slot = {slot: sum(int(np.prod(a.shape[1:], dtype=np.int64)) * a.itemsize for a in fam[nf:])
                    for slot, (fam, nf) in enumerate(zip(self.fams, self.n_fixed))}
        need = new_cap * (sum(per_slot.values()) + 2 * self.cnt.itemsize)
        if need <= MAX_CLUSTER_MEMORY:
            return
        biggest = max(per_slot, key=per_slot.get)
        names = [n for b in self.by_slot[biggest] for n in b.names]
        what = (f"the categorical column(s) {names} with {self.fams[_CA][1].size} categories in all"
                if biggest == _CA else f"the {self.by_slot[biggest][0].family} column(s) {names}")
        raise ValueError(
            f"the fit has opened more than {new_cap // 2} clusters, and room for {new_cap} would need "
            f"{need / 2 ** 30:.1f} GB ({per_slot[biggest] / 1024:.0f} kB per cluster for {what}); so many clusters "
            "usually mean N0 is far too large or a column is nearly unique per row: lower N0, or leave such a "
            "column out (or group its rare categories).")

    def _rebuild(self, take, new_cap):
        """Reorder/resize every per-cluster array: row j of the result is old row take[j]."""
        if new_cap > self.capacity:
            self._check_memory(new_cap)
        def remap(a):
            out = np.zeros((new_cap,) + a.shape[1:])
            out[: len(take)] = a[take]
            return out
        self.fams = tuple(fam[:nf] + tuple(remap(a) for a in fam[nf:]) for fam, nf in zip(self.fams, self.n_fixed))
        new_number = np.full(self.capacity, -1, dtype=np.int64)
        new_number[np.asarray(take, dtype=np.int64)] = np.arange(len(take))
        for module, fam in zip(KERNEL_SLOTS, self.fams):  # statistics that name a row's cluster
            if hasattr(module, "renumber"):
                module.renumber(fam, new_number)
        self.cnt, self.logcnt = remap(self.cnt), remap(self.logcnt)
        dp_mixture.reset_slots(len(take), new_cap, self.cnt, self.logcnt, self.fams)

    def grow(self, K: int) -> None:
        self._rebuild(np.arange(K), 2 * self.capacity)

    def start(self, labels: np.ndarray, order: np.ndarray | None = None) -> int:
        """Load a labelling (0..K-1, no empty cluster) into the statistics; returns K."""
        if order is None:
            order = np.arange(len(labels), dtype=np.int64)
        K = int(labels.max()) + 1
        while self.capacity <= K:
            self._rebuild(np.arange(0), 2 * self.capacity)
        dp_mixture.reset_slots(0, self.capacity, self.cnt, self.logcnt, self.fams)
        dp_mixture.move_rows(order, labels, 1, self.cnt, self.logcnt, self.fams)
        self.labels = labels
        return K

    def compact(self, labels: np.ndarray, K: int) -> int:
        """Drop empty clusters, keep the others' order, renumber labels 0..K'-1 in place."""
        keep = np.flatnonzero(self.cnt[:K] > 0)
        if len(keep) < K:
            remap = np.full(K, -1, dtype=np.int64)
            remap[keep] = np.arange(len(keep))
            labels[:] = remap[labels]
            self._rebuild(keep, self.capacity)
        return len(keep)

    def score_rows(self, M: np.ndarray, K: int):
        """For new rows M (same columns as the training data): -ln f(x | theta_k) for the K
        fitted clusters (rows x K) and the prior predictive -ln f(x | theta0), each with the
        data-only constants, from the fitted statistics (PLOS Appendix E)."""
        if self.capacity <= K:  # a slot in the prior state scores the "new cluster" option
            self.grow(K)
        new_x = []
        for slot, blocks in self.by_slot.items():
            parts = [M[:, b.columns] for b in blocks]
            width = self.fams[slot][0].shape[1]
            new_x.append(np.ascontiguousarray(np.hstack(parts)) if parts else np.zeros((len(M), width)))
        fams = self.private_fams(tuple(module.for_rows(fam, x) if hasattr(module, "for_rows") else (x,) + fam[1:]
                                       for module, x, fam in zip(KERNEL_SLOTS, new_x, self.fams)))
        (Y, *rest), jacobian = self._gaussian_known_rows(M)
        ga = self.fams[_GA]
        ga = (Y,) + ga[1:4] + tuple(rest) + ga[gaussian_known.N_FIXED:]
        fams = fams[:_GA] + (ga,) + fams[_GA + 1:]
        n = len(M)
        nlp = np.empty((n, K))
        d_prior, pconst = np.empty(n), np.empty(n)
        threads = max(1, min(os.cpu_count() or 1, 8, n // SCORE_THREAD_ROWS))
        if threads == 1:
            dp_mixture.score_rows(0, n, K, K, fams, nlp, d_prior, pconst)
        else:  # parts of the rows on threads, each with scratch arrays of its own
            cuts = np.linspace(0, n, threads + 1).astype(np.int64)
            with ThreadPoolExecutor(threads - 1) as pool:
                jobs = [pool.submit(dp_mixture.score_rows, cuts[j], cuts[j + 1], K, K, self.private_fams(fams), nlp,
                                    d_prior, pconst) for j in range(1, threads)]
                dp_mixture.score_rows(cuts[0], cuts[1], K, K, fams, nlp, d_prior, pconst)
                for job in jobs:
                    job.result()
        pconst += jacobian
        return nlp + pconst[:, None], d_prior + pconst

    def private_fams(self, fams=None):
        """``fams`` (default the model's) with scratch space of its own (the families' arrays named
        "work..."), the rest shared: for a kernel that only reads the statistics in another
        thread at the same time as others (the sweep's prescoring, ``score_rows``)."""
        fams = self.fams if fams is None else fams
        return tuple(tuple(a.copy() if name.startswith("work") and j < module.N_FIXED else a
                           for j, (name, a) in enumerate(zip(module.LAYOUT, fam)))
                     for module, fam in zip(KERNEL_SLOTS, fams))

    def neg_log_joint(self, K: int, n0, n_rows: int | None = None, pconst: float | None = None,
                      labels: np.ndarray | None = None, nw_observed: np.ndarray | None = None) -> float:
        """Exact -ln p(X, z | N0, theta0) = -ln CRP(z; N0) - sum_k ln p(X_k | theta0).

        ``n0``: the Dirichlet process's concentration N0, or any prior on partitions
        (:class:`~mapdp_core.engine.partition_prior.PartitionPrior`), whose ln p(z) replaces the CRP's.

        By default over every row; a one-pass method whose statistics hold only the ``n_rows``
        rows seen so far passes their number and the sum of their data-only constants (and its
        ``labels``, -1 for rows not seen). For a Normal-Wishart block with gaps, ln p(X_k) is
        that of its observed entries (:meth:`log_marginals`, which says what ``nw_observed`` is)."""
        n_rows = self.N if n_rows is None else n_rows
        if n_rows == 0:
            return 0.0
        log_crp = as_partition_prior(n0).log_prob(self.cnt[:K], n_rows)
        lm = self.log_marginals(K, labels, nw_observed)
        return -log_crp - float(lm.sum()) + (self.pconst_total if pconst is None else pconst)

    def log_marginals(self, K: int, labels: np.ndarray | None = None,
                      nw_observed: np.ndarray | None = None) -> np.ndarray:
        """ln p(X_k | theta0) for k < K, without the data-only constants: every family's closed
        form, except a Normal-Wishart block with gaps, whose term counts its observed cells only
        (``normal_wishart.observed_log_marginals``: the chain rule over each cluster's rows in
        the input's order, which needs ``labels``, by default the array ``start`` loaded). Without
        such labels (a caller that never called ``start`` nor passed them), that block's closed
        form of the completed rows. ``nw_observed``: that block's terms computed elsewhere
        (a table held in parts chains them part by part, :mod:`mapdp_core.engine.partitioned`),
        added to the other families' closed forms."""
        lm = np.empty(K)
        labels = self.labels if labels is None else labels
        chained = {}  # slot -> its observed-entries terms, for the gappy blocks of _CHAINED
        if nw_observed is not None:
            chained[_NW] = nw_observed
        elif self.nw_gaps and labels is not None:
            chained[_NW] = normal_wishart.observed_log_marginals(self.fams[_NW], labels, K, self.input_rows)
        if self.tied_gaps and labels is not None:
            chained[_NWT] = normal_wishart_tied.observed_log_marginals(self.fams[_NWT], labels, K, self.input_rows)
        if not chained:
            dp_mixture.log_marginals(K, self.fams, lm)
            return lm
        cap = self.capacity
        others = tuple(_CHAINED[slot].empty(self.N, cap) if slot in chained else fam for slot, fam in enumerate(self.fams))
        dp_mixture.log_marginals(K, others, lm)
        return lm + sum(chained.values())

    def imputation_values(self, K: int) -> np.ndarray:
        """(K, D) value per cluster and column with which a missing entry is filled for display
        (PLOS Appendix F): the predictive mean for real-valued families (the mode too, for the
        Gaussian and Student-t ones; the exponential's Lomax mode, 0, says nothing), and the
        predictive mode for discrete ones: Bernoulli and binomial (beta-binomial), categorical
        (category code), Poisson (negative binomial: floor((alpha - 1)/beta), or 0) and
        geometric (beta-geometric: always 0)."""
        values = self.summaries(K)["mean"].copy()
        for slot, module in enumerate(KERNEL_SLOTS):
            cols = [j for b in self.by_slot[slot] for j in b.columns]
            fill = module.impute(self.fams[slot], K) if cols else None
            if fill is not None:
                values[:, cols] = fill
        return values

    def summaries(self, K: int) -> dict:
        """Per-cluster display summaries: a mean per column (NaN for categorical columns,
        whose predictive probabilities are given instead) and covariances of Gaussian blocks."""
        names = self.parsed.names
        mean = np.full((K, len(names)), np.nan)
        covariances, proportions = {}, {}
        off = 0
        ga = self.fams[_GA]
        for b, t in zip(self.by_slot[_GA], self.transforms):
            d = len(b.columns)
            nf = gaussian_known.N_FIXED
            sub = ga[:nf] + tuple(a[:, off:off + d] for a in ga[nf:])
            m, c = gaussian_known.summary(sub, K, t)
            mean[:, b.columns] = m
            covariances[tuple(b.names)] = c
            off += d
        for slot, module in _CHAINED.items():
            if self.by_slot[slot]:
                b = self.by_slot[slot][0]
                m, c = module.summary(self.fams[slot], K)
                mean[:, b.columns] = m
                covariances[tuple(b.names)] = c
        cat_cols = [(j, n) for b in self.by_slot[_CA] for j, n in zip(b.columns, b.names)]
        for (j, name), probs in zip(cat_cols, categorical.summary(self.fams[_CA], K) if cat_cols else []):
            proportions[name] = probs
        for slot, module in enumerate(KERNEL_SLOTS):  # the column families: a mean per column
            cols = [j for b in self.by_slot[slot] for j in b.columns]
            if cols and slot not in (_GA, _CA, *_CHAINED):
                mean[:, cols] = module.summary(self.fams[slot], K)
        return {"mean": mean, "covariance": covariances, "proportions": proportions}


def extend_partition(parsed_rows: ParsedData, labels: np.ndarray, M: np.ndarray, n0: float,
                     keep: tuple[np.ndarray, np.ndarray] | None = None, chunk: int = 65536) -> np.ndarray:
    """Labels for the rows of ``M`` from a partition ``labels`` (0..K-1) of the rows
    ``parsed_rows`` holds: each row joins its most probable cluster given that partition's
    statistics, ln N_k - (-ln f(x | theta_k)), or one new cluster when ln N0 - (-ln f(x | theta0))
    is larger (PLOS Appendix E: the MAP-DP rule without moving the clusters). ``keep`` =
    ``(positions, their_labels)`` fixes the labels of rows of ``M`` that are rows of the
    partition. Numbered by first appearance; scored ``chunk`` rows at a time, so memory
    stays O(chunk x K)."""
    from mapdp_core.core.labels import relabel_by_first_appearance

    return relabel_by_first_appearance(extension_labels(parsed_rows, labels, M, n0, keep, chunk))


def extension_labels(parsed_rows: ParsedData, labels: np.ndarray, M: np.ndarray, n0: float,
                     keep: tuple[np.ndarray, np.ndarray] | None = None, chunk: int = 65536) -> np.ndarray:
    """:func:`extend_partition` before numbering by first appearance: the partition's own
    cluster numbers, K for the new cluster. Each row's label depends on that row alone, so a
    table's parts can be extended apart (the partitioned fit) and numbered together."""
    model = ModelData(parsed_rows)
    K = model.start(labels)
    prior = as_partition_prior(n0)
    if isinstance(prior, DirichletProcess):
        log_counts, log_new = np.log(model.cnt[:K]), math.log(prior.N0)
    else:  # the prior's weights of one more row (they differ from the counts by more than a constant)
        log_counts, log_new = prior.predictive_log_weights(model.cnt[:K])
    out = np.empty(len(M), dtype=np.int64)
    for lo in range(0, len(M), chunk):
        nlp, nlp_prior = model.score_rows(M[lo:lo + chunk], K)
        logw = log_counts[None, :] - nlp
        best = np.argmax(logw, axis=1)
        # each row's largest value, read at its argmax: the same number as logw.max(axis=1),
        # a NaN included (argmax gives a row's first NaN, max a NaN), at a fraction of the cost
        top = np.take_along_axis(logw, best[:, None], axis=1)[:, 0]
        best[log_new - nlp_prior > top] = K
        out[lo:lo + chunk] = best
    if keep is not None:
        out[keep[0]] = keep[1]
    return out
