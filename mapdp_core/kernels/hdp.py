"""The numba kernels of the hard HDP and hard HDP-HMM assignment sweeps (:mod:`mapdp_core.models.hard_common`,
:mod:`mapdp_core.models.hdp_hmm`).

No validation here. Each kernel is the per-row loop of one former Python routine of the models
moved as it was (``tests/models/test_hdp.py`` keeps the Python routines as reference twins and
checks that the labels agree exactly and the objectives to 1e-12):

* :func:`hdp_sweep`: the assignment sweep of the hard HDP (OTHER-SYSTEMS 3.2(a) step 2), also
  DP-means (one group, ``lambda_local = 0``), the default start of both hard HDP-HMMs;
* :func:`hmm_sweep`: the time-step sweep of the combinatorial hard HDP-HMM (3.2(b));
* :func:`hdp_local_moves`: Kulis & Jordan's local-cluster moves (3.2(a) step 3).

Arithmetic is kept as NumPy and scipy do it, so that the costs, hence the ties and the labels,
are the same to the bit (checked in the tests): a row's divergence from each centre
(:func:`divergences`) is summed over the columns in turn below 8 columns and by NumPy's
pairwise summation from 8 on (:func:`pairwise_sum`, as ``ndarray.sum`` over a contiguous last
axis); a sum over the rows of a block runs row by row (as ``sum(axis=0)`` over a C-contiguous
2-D array) except over a single column, where NumPy sums pairwise; the Bregman terms use
scipy's ``rel_entr`` written out as scipy computes it since gh-20816 (2024: ``log1p`` near
x = y, ``log x - log y`` when x/y under- or overflows; older scipy rounds some terms
differently in the last bit), with ``0·log 0 = 0``, ``x·log(x/0) = inf`` and ``inf`` for a
negative argument, and a NaN Bregman sum becomes ``inf`` as in ``hard_common.divergence``. Ties
go as in the Python code (:func:`_choose`, shared by the three kernels): the lowest index among
the cheapest clusters, the current cluster when it is as cheap, and "new" only when it is
strictly cheaper. The ridge term ``λ3·||μ||²`` of a
local move's new cluster is ``np.dot`` inside numba (BLAS), as ``mu @ mu`` is in NumPy; the
two agreed to the bit here (D up to 100), but two BLAS builds could differ in the last bit
(only with ``lambda_mean > 0``).

The cluster arrays grow inside the kernels (capacity doubled with zero rows, as
``hard_common._Clusters.grow``), so the kernels return the arrays they end with.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

SQUARED_EUCLIDEAN, POISSON, BERNOULLI, MULTINOMIAL = 0, 1, 2, 3
KIND_CODES = {"squared_euclidean": SQUARED_EUCLIDEAN, "poisson": POISSON, "bernoulli": BERNOULLI,
              "multinomial": MULTINOMIAL}


# ------------------------------------------------------------------ arithmetic as NumPy/scipy
TINY = float(np.finfo(np.float64).tiny)


@njit(cache=True)
def rel_entr(x, y):
    """scipy.special.rel_entr as scipy >= 1.15 (xsf) computes it: ``x log(x/y)`` for x, y > 0
    (through ``log1p((x - y)/y)`` when x/y lies in (1/2, 2), through ``log x - log y`` when
    x/y under- or overflows), 0 for x = 0 <= y, inf otherwise, NaN for a NaN argument."""
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if x > 0.0 and y > 0.0:
        ratio = x / y
        if 0.5 < ratio < 2.0:
            return x * math.log1p((x - y) / y)
        if TINY < ratio < math.inf:
            return x * math.log(ratio)
        return x * (math.log(x) - math.log(y))
    if x == 0.0 and y >= 0.0:
        return 0.0
    return math.inf


@njit(cache=True)
def _pairwise_block(a, lo, n, stride):
    """NumPy's ``pairwise_sum`` of at most 128 terms: sequential below 8 terms, else 8
    accumulators combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the rest in turn."""
    if n < 8:
        res = -0.0
        for i in range(n):
            res += a[lo + i * stride]
        return res
    r0 = a[lo]
    r1 = a[lo + stride]
    r2 = a[lo + 2 * stride]
    r3 = a[lo + 3 * stride]
    r4 = a[lo + 4 * stride]
    r5 = a[lo + 5 * stride]
    r6 = a[lo + 6 * stride]
    r7 = a[lo + 7 * stride]
    i = 8
    stop = n - n % 8
    while i < stop:
        p = lo + i * stride
        r0 += a[p]
        r1 += a[p + stride]
        r2 += a[p + 2 * stride]
        r3 += a[p + 3 * stride]
        r4 += a[p + 4 * stride]
        r5 += a[p + 5 * stride]
        r6 += a[p + 6 * stride]
        r7 += a[p + 7 * stride]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i * stride]
        i += 1
    return res


@njit(cache=True)
def pairwise_sum(a, lo, n, stride):
    """``a[lo], a[lo + stride], ...`` (n terms) summed as NumPy's ``pairwise_sum``
    (numpy/_core/src/umath/loops_utils.h.src), the sum of ``ndarray.sum`` over a contiguous
    axis: blocks of at most 128 terms (:func:`_pairwise_block`), a longer run split in two
    halves (the first a multiple of 8 long) summed recursively. The recursion is run on an
    explicit stack: numba's disk cache does not reload recursive functions safely."""
    if n <= 128:
        return _pairwise_block(a, lo, n, stride)
    # frames: (first index, length, stage: 0 = left half next, 1 = right half next, 2 = done)
    f_lo = np.empty(64, dtype=np.int64)
    f_n = np.empty(64, dtype=np.int64)
    f_stage = np.empty(64, dtype=np.int64)
    f_left = np.empty(64)
    top = 0
    f_lo[0], f_n[0], f_stage[0] = lo, n, 0
    ret = 0.0
    while top >= 0:
        m = f_n[top]
        if m <= 128:
            ret = _pairwise_block(a, f_lo[top], m, stride)
            top -= 1
            continue
        half = m // 2
        half -= half % 8
        if f_stage[top] == 0:
            f_stage[top] = 1
            top += 1
            f_lo[top], f_n[top], f_stage[top] = f_lo[top - 1], half, 0
        elif f_stage[top] == 1:
            f_left[top] = ret
            f_stage[top] = 2
            top += 1
            f_lo[top], f_n[top], f_stage[top] = f_lo[top - 1] + half * stride, m - half, 0
        else:
            ret = f_left[top] + ret
            top -= 1
    return ret


@njit(cache=True)
def _unit_term(y, m, kind):
    """One column's term of the divergence, as ``hard_common.divergence`` forms it before the sum."""
    if kind == SQUARED_EUCLIDEAN:
        e = y - m
        return e * e
    if kind == POISSON:
        return rel_entr(y, m) - y + m
    if kind == BERNOULLI:
        return rel_entr(y, m) + rel_entr(1.0 - y, 1.0 - m)
    return rel_entr(y, m)


@njit(cache=True)
def divergences(Y, n, M, K, kind, buf, out):
    """``out[k] = hard_common.divergence(Y[n], M[k], kind)`` for k < K: the unit divergence of row n
    from each centre, summed over the columns as NumPy sums them (in turn below 8 columns,
    else pairwise through ``buf``, scratch of at least D entries); for a Bregman
    divergence NaN becomes inf (as there).

    One call per row, so that the branches on D and on the divergence stay outside the loop
    over the centres (with them inside, the loop ran ten times slower)."""
    D = Y.shape[1]
    if D < 8 and kind == SQUARED_EUCLIDEAN:
        for k in range(K):
            acc = -0.0
            for d in range(D):
                e = Y[n, d] - M[k, d]
                acc += e * e
            out[k] = 0.0 + acc
    elif D < 8:
        for k in range(K):
            acc = -0.0
            for d in range(D):
                acc += _unit_term(Y[n, d], M[k, d], kind)
            acc = 0.0 + acc
            out[k] = math.inf if math.isnan(acc) else acc
    else:
        for k in range(K):
            for d in range(D):
                buf[d] = _unit_term(Y[n, d], M[k, d], kind)
            acc = 0.0 + pairwise_sum(buf, 0, D, 1)
            out[k] = math.inf if (math.isnan(acc) and kind != SQUARED_EUCLIDEAN) else acc


@njit(cache=True)
def _grow_rows(A):
    """``A`` with as many zero rows appended (``_Clusters.grow``)."""
    out = np.zeros((2 * A.shape[0], A.shape[1]), dtype=A.dtype)
    out[:A.shape[0]] = A
    return out


@njit(cache=True)
def _grow_vector(a):
    out = np.zeros(2 * a.shape[0], dtype=a.dtype)
    out[:a.shape[0]] = a
    return out


@njit(cache=True)
def _grow_columns(A):
    out = np.zeros((A.shape[0], 2 * A.shape[1]), dtype=A.dtype)
    out[:, :A.shape[1]] = A
    return out


# ------------------------------------------------------------------ the choice all three kernels make
@njit(cache=True)
def _choose(cost, best, K, c, new, count):
    """Where a row (or a block of rows) goes, as the Python code picks it: ``best``, the
    cheapest of the K priced clusters ``cost[:K]`` (the lowest index among ties, found by the
    kernel as it prices them), the current cluster ``c`` when it is as cheap, and "new" (price
    ``new``) only when it is strictly cheaper; a new cluster is the one the removal emptied
    (``c``, when ``count[c] == 0``: it comes back recentred) or else slot ``K``. Returns
    (cluster, whether it is new)."""
    if cost[c] <= cost[best]:
        best = c
    if new < cost[best]:
        return (c if count[c] == 0 else K), True
    return best, False


@njit(cache=True)
def _pricing_scratch(cap, D):
    """Scratch of the pricing loops: per-cluster costs and divergences (``cap`` slots, grown
    with the centres by :func:`_open`) and one row's per-column terms (``D``)."""
    return np.empty(cap), np.empty(cap), np.empty(D)


@njit(cache=True)
def _open(best, K, M, count, cost, div):
    """Room for the new cluster ``best`` (from :func:`_choose`): when it is slot K, K grows by
    one, the per-cluster arrays doubling first if they are full (a kernel grows its own other
    arrays when ``M`` comes back longer, and centres the cluster). Returns (K, M, count, cost, div)."""
    if best == K:
        if K == M.shape[0]:
            M, count, cost, div = _grow_rows(M), _grow_vector(count), _grow_vector(cost), _grow_vector(div)
        K += 1
    return K, M, count, cost, div


# ------------------------------------------------------------------ hard HDP
@njit(cache=True, nogil=True)
def hdp_sweep(Y, w, z, M, count, K, gidx, G, order, lam1, lam2, lam3, kind, newcost):
    """``hard_common._hdp_sweep``: one assignment sweep over the rows of ``order``, ``z`` in place.
    ``M`` (capacity, D) and ``count`` (capacity,) hold the K clusters. Returns
    ``(rows changed, K, M, count)`` (new arrays when the capacity grew)."""
    N, D = Y.shape
    cap = M.shape[0]
    usage = np.zeros((G, cap), dtype=np.int64)
    gsize = np.zeros(G, dtype=np.int64)
    for n in range(N):
        usage[gidx[n], z[n]] += 1
        gsize[gidx[n]] += 1
    cost, div, buf = _pricing_scratch(cap, D)
    changed = 0
    for j in range(order.shape[0]):
        n = order[j]
        i = gidx[n]
        c = z[n]
        count[c] -= 1
        usage[i, c] -= 1
        others = gsize[i] - 1  # rows left in the group: a one-row group never pays lambda_local
        divergences(Y, n, M, K, kind, buf, div)
        best = 0
        for k in range(K):
            if count[k] == 0:
                v = math.inf
            else:
                v = w[n] * div[k]
                if others > 0:
                    v = v + lam2 * (1.0 if usage[i, k] == 0 else 0.0)
            cost[k] = v
            if v < cost[best]:
                best = k
        best, fresh = _choose(cost, best, K, c, lam1 + (lam2 if others > 0 else 0.0) + newcost[n], count)
        if fresh:
            K, M, count, cost, div = _open(best, K, M, count, cost, div)
            if M.shape[0] > usage.shape[1]:
                usage = _grow_columns(usage)
            for d in range(D):
                M[best, d] = w[n] * Y[n, d] / (w[n] + lam3)
        z[n] = best
        count[best] += 1
        usage[i, best] += 1
        if best != c:
            changed += 1
    return changed, K, M, count


@njit(cache=True, nogil=True)
def hdp_local_moves(Y, w, z, M, count, K, gidx, G, lam1, lam2, lam3, kind):
    """``hard_common._hdp_local_moves``: every (group, cluster) block, groups in order and the clusters
    of a group in increasing label order (as at the group's start), moves as a whole to the
    cheapest cluster or a new one; ``z`` in place. Returns ``(rows changed, K, M, count)``."""
    N, D = Y.shape
    # the rows of every group, in index order (a stable counting sort)
    start = np.zeros(G + 1, dtype=np.int64)
    for n in range(N):
        start[gidx[n] + 1] += 1
    for i in range(G):
        start[i + 1] += start[i]
    rows = np.empty(N, dtype=np.int64)
    fill = start[:G].copy()
    for n in range(N):
        rows[fill[gidx[n]]] = n
        fill[gidx[n]] += 1
    cap = M.shape[0]
    cost, div, buf = _pricing_scratch(cap, D)
    used = np.zeros(cap, dtype=np.bool_)
    present = np.zeros(cap, dtype=np.bool_)
    vals = np.empty(N)  # the block's per-row terms of one cluster (for the pairwise sums)
    centre = np.empty((1, D))  # the block's own centre, as a one-row "M"
    mu = centre[0]
    L = np.empty(N, dtype=np.int64)
    changed = 0
    for i in range(G):
        lo, hi = start[i], start[i + 1]
        # the clusters of the group at its start, in increasing order (np.unique)
        for k in range(present.shape[0]):
            present[k] = False
        for r in range(lo, hi):
            present[z[rows[r]]] = True
        labels = np.flatnonzero(present[:K])
        for c in labels:
            nL = 0
            for r in range(lo, hi):
                if z[rows[r]] == c:
                    L[nL] = rows[r]
                    nL += 1
            if nL == 0:
                continue
            count[c] -= nL
            n_rest = (hi - lo) - nL
            for k in range(K):
                used[k] = False
            for r in range(lo, hi):
                if z[rows[r]] != c:
                    used[z[rows[r]]] = True
            # cost(k) = sum over the block of w D(y, mu_k): row by row for K >= 2, pairwise for K = 1
            if K == 1:
                for l in range(nL):
                    divergences(Y, L[l], M, 1, kind, buf, div)
                    vals[l] = w[L[l]] * div[0]
                cost[0] = 0.0 + pairwise_sum(vals, 0, nL, 1)
            else:
                for k in range(K):
                    cost[k] = 0.0
                for l in range(nL):
                    divergences(Y, L[l], M, K, kind, buf, div)
                    for k in range(K):
                        cost[k] += w[L[l]] * div[k]
            best = 0
            for k in range(K):
                v = cost[k]
                if n_rest > 0:
                    v = v + lam2 * (0.0 if used[k] else 1.0)
                if count[k] == 0:
                    v = math.inf
                cost[k] = v
                if v < cost[best]:
                    best = k
            # the block's own optimal centre: sum(w y, axis=0)/(sum w + lam3)
            for l in range(nL):
                vals[l] = w[L[l]]
            wsum = 0.0 + pairwise_sum(vals, 0, nL, 1)
            if D == 1:
                for l in range(nL):
                    vals[l] = w[L[l]] * Y[L[l], 0]
                mu[0] = (0.0 + pairwise_sum(vals, 0, nL, 1)) / (wsum + lam3)
            else:
                for d in range(D):
                    s = 0.0
                    for l in range(nL):
                        s += w[L[l]] * Y[L[l], d]
                    mu[d] = s / (wsum + lam3)
            for l in range(nL):
                divergences(Y, L[l], centre, 1, kind, buf, div)
                vals[l] = w[L[l]] * div[0]
            fit = 0.0 + pairwise_sum(vals, 0, nL, 1)
            ridge = lam3 * np.dot(mu, mu) if lam3 != 0.0 else 0.0
            best, fresh = _choose(cost, best, K, c, lam1 + (lam2 if n_rest > 0 else 0.0) + fit + ridge, count)
            if fresh:
                K, M, count, cost, div = _open(best, K, M, count, cost, div)
                if M.shape[0] > used.shape[0]:
                    used = _grow_vector(used)
                    present = _grow_vector(present)
                for d in range(D):
                    M[best, d] = mu[d]
            for l in range(nL):
                z[L[l]] = best
            count[best] += nL
            if best != c:
                changed += nL
    return changed, K, M, count


# ------------------------------------------------------------------ hard HDP-HMM (combinatorial)
@njit(cache=True, nogil=True)
def hmm_sweep(Y, w, z, M, count, K, prv, nxt, order, lam1, lam2, lam3, kind, newcost):
    """``hdp_hmm._hmm_sweep``: one time-step sweep (remove the step and its two transitions, price
    every state with its successor-penalty change, or a new state), ``z`` in place. Returns
    ``(time steps changed, K, M, count)``."""
    T, D = Y.shape
    cap = M.shape[0]
    tr = np.zeros((cap, cap), dtype=np.int64)
    for t in range(T):
        if nxt[t] >= 0:
            tr[z[t], z[nxt[t]]] += 1
    s = np.zeros(cap, dtype=np.int64)
    for a in range(cap):
        for b in range(cap):
            if tr[a, b] > 0:
                s[a] += 1
    cost, div, buf = _pricing_scratch(cap, D)
    changed = 0
    for j in range(order.shape[0]):
        t = order[j]
        c = z[t]
        p = prv[t]
        q = nxt[t]
        a = z[p] if p >= 0 else -1
        b = z[q] if q >= 0 else -1
        count[c] -= 1
        if a >= 0:
            tr[a, c] -= 1
            if tr[a, c] == 0:
                s[a] -= 1
        if b >= 0:
            tr[c, b] -= 1
            if tr[c, b] == 0:
                s[c] -= 1
        divergences(Y, t, M, K, kind, buf, div)
        best = 0
        for k in range(K):
            delta = 0.0
            add1 = False  # the edge a -> k is new
            if a >= 0:
                add1 = tr[a, k] == 0
                if add1 and s[a] >= 1:
                    delta += 1.0
            if b >= 0:
                s_after = s[k] + (1 if (add1 and k == a) else 0)
                same = k == a and k == b  # a -> k and k -> b are the one self-edge
                if tr[k, b] == 0 and s_after >= 1 and not same:
                    delta += 1.0
            if count[k] == 0:
                v = math.inf
            else:
                v = w[t] * div[k] + lam2 * delta
            cost[k] = v
            if v < cost[best]:
                best = k
        best, fresh = _choose(cost, best, K, c, lam1 + newcost[t] + (lam2 if a >= 0 and s[a] >= 1 else 0.0), count)
        if fresh:
            K, M, count, cost, div = _open(best, K, M, count, cost, div)
            if M.shape[0] > s.shape[0]:
                s = _grow_vector(s)
                tr = _grow_columns(_grow_rows(tr))
            for d in range(D):
                M[best, d] = w[t] * Y[t, d] / (w[t] + lam3)
        z[t] = best
        count[best] += 1
        if a >= 0:
            if tr[a, best] == 0:
                s[a] += 1
            tr[a, best] += 1
        if b >= 0:
            if tr[best, b] == 0:
                s[best] += 1
            tr[best, b] += 1
        if best != c:
            changed += 1
    return changed, K, M, count


# ------------------------------------------------------------------ warm-up
def warm_up() -> None:
    """Compile (or load from numba's disk cache) the three kernels on a tiny problem, with the
    argument types the models pass (C-contiguous float64 and int64 arrays, Python ints and
    floats): about 11 s to compile on 2 cores, 0.4 s to load."""
    N, cap = 12, 16
    Y = np.random.default_rng(0).normal(size=(N, 2))
    w, newcost, order = np.ones(N), np.zeros(N), np.arange(N, dtype=np.int64)
    gidx = order % 3
    prv, nxt = order - 1, order + 1
    nxt[-1] = -1

    def start():  # one cluster at the grand mean
        M, count = np.zeros((cap, 2)), np.zeros(cap, dtype=np.int64)
        M[0], count[0] = Y.mean(axis=0), N
        return np.zeros(N, dtype=np.int64), M, count

    z, M, count = start()
    hdp_sweep(Y, w, z, M, count, 1, gidx, 3, order, 1.0, 0.5, 0.0, SQUARED_EUCLIDEAN, newcost)
    z, M, count = start()
    hdp_local_moves(Y, w, z, M, count, 1, gidx, 3, 1.0, 0.5, 0.0, SQUARED_EUCLIDEAN)
    z, M, count = start()
    hmm_sweep(Y, w, z, M, count, 1, prv, nxt, order, 1.0, 1.0, 0.0, SQUARED_EUCLIDEAN, newcost)
