"""The numba sweep of MAP-DP (PLOS Algorithm 3 with the semantics of ALGORITHMS.md).

One kernel with a fixed signature takes every family's arrays as a tuple of tuples
(``fams``, ordered as ``families.KERNEL_SLOTS``; an unused family has zero columns) and
calls each family's functions directly. That keeps numba's disk cache (no functions
passed as arguments, no closures) and avoids branching on a family code in the inner
loop (DESIGN.md, convention 4). No validation happens here.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .families import beta_binomial as _bb
from .families import categorical as _ca
from .families import exponential as _ex
from .families import gaussian_known as _ga
from .families import geometric as _ge
from .families import normal_gamma as _ng
from .families import normal_wishart as _nw
from .families import poisson as _po


@njit(cache=True)
def _move(i, k, sign, fams):
    _ga.move(i, k, sign, fams[0])
    _ng.move(i, k, sign, fams[1])
    _nw.move(i, k, sign, fams[2])
    _bb.move(i, k, sign, fams[3])
    _ca.move(i, k, sign, fams[4])
    _po.move(i, k, sign, fams[5])
    _ex.move(i, k, sign, fams[6])
    _ge.move(i, k, sign, fams[7])


@njit(cache=True)
def _nlp(i, k, fams):
    return (_ga.nlp(i, k, fams[0]) + _ng.nlp(i, k, fams[1]) + _nw.nlp(i, k, fams[2])
            + _bb.nlp(i, k, fams[3]) + _ca.nlp(i, k, fams[4]) + _po.nlp(i, k, fams[5])
            + _ex.nlp(i, k, fams[6]) + _ge.nlp(i, k, fams[7]))


@njit(cache=True)
def reset_slots(lo, hi, cnt, logcnt, fams):
    """Put cluster slots lo..hi-1 in the prior state (no points)."""
    for k in range(lo, hi):
        cnt[k] = 0.0
        logcnt[k] = -np.inf
        _ga.reset(k, fams[0])
        _ng.reset(k, fams[1])
        _nw.reset(k, fams[2])
        _bb.reset(k, fams[3])
        _ca.reset(k, fams[4])
        _po.reset(k, fams[5])
        _ex.reset(k, fams[6])
        _ge.reset(k, fams[7])


@njit(cache=True)
def add_all(order, labels, cnt, logcnt, fams):
    """Put every row into the statistics of its cluster (from an all-empty state), in the
    visiting order, so that a run depends only on the sequence of rows it visits."""
    for t in range(order.shape[0]):
        i = order[t]
        k = labels[i]
        _move(i, k, 1, fams)
        cnt[k] += 1.0
    for k in range(cnt.shape[0]):
        logcnt[k] = math.log(cnt[k]) if cnt[k] > 0.0 else -np.inf


@njit(cache=True)
def point_terms(empty_slot, d_new, pconst, fams):
    """Per row: -ln f(x_i | theta0) (the new-cluster term, fixed for the whole run) and the
    data-only constants that every cluster's -ln f shares (ln x!, binomial coefficients)."""
    for i in range(d_new.shape[0]):
        d_new[i] = _nlp(i, empty_slot, fams)
        pconst[i] = _bb.pconst(i, fams[3]) + _po.pconst(i, fams[5])


@njit(cache=True, nogil=True)
def sweep(order, start, labels, K, first_sweep, log_n0, d_new, pconst, cnt, logcnt, fams):
    """One Gauss-Seidel sweep over ``order[start:]``; mutates labels and statistics.

    Returns ``(stop, K, score_sum, n_changed)``. ``stop < len(order)`` means the cluster
    arrays are full: grow them and call again from ``stop``. ``score_sum`` adds up the
    winning score d_ik - ln N_k^{-i} (plus data-only constants) of each visited row.
    """
    cap = cnt.shape[0]
    score_sum = 0.0
    n_changed = 0
    for t in range(start, order.shape[0]):
        if K >= cap:
            return t, K, score_sum, n_changed
        i = order[t]
        k_old = labels[i]
        _move(i, k_old, -1, fams)
        cnt[k_old] -= 1.0
        logcnt[k_old] = math.log(cnt[k_old]) if cnt[k_old] > 0.0 else -np.inf
        best = np.inf
        best_k = K
        for k in range(K):
            if cnt[k] <= 0.0:  # emptied during this sweep: N_k^{-i} = 0, score +inf
                continue
            # Appendix B: on the first sweep the initial cluster counts as 1, or its
            # reinforcement would stop any new cluster from opening.
            log_nk = 0.0 if (first_sweep and k == 0) else logcnt[k]
            s = _nlp(i, k, fams) - log_nk
            if s < best:  # strict: ties go to the lowest index
                best = s
                best_k = k
        s_new = d_new[i] - log_n0
        if s_new < best:
            best = s_new
            best_k = K
        if best_k == K:
            K += 1
        labels[i] = best_k
        _move(i, best_k, 1, fams)
        cnt[best_k] += 1.0
        logcnt[best_k] = math.log(cnt[best_k])
        score_sum += best + pconst[i]
        if best_k != k_old:
            n_changed += 1
    return order.shape[0], K, score_sum, n_changed


@njit(cache=True)
def log_marginals(K, fams, out):
    """ln p(X_k | theta0) for k < K, without the data-only constants."""
    for k in range(K):
        out[k] = (_ga.logml(k, fams[0]) + _ng.logml(k, fams[1]) + _nw.logml(k, fams[2])
                  + _bb.logml(k, fams[3]) + _ca.logml(k, fams[4]) + _po.logml(k, fams[5])
                  + _ex.logml(k, fams[6]) + _ge.logml(k, fams[7]))


@njit(cache=True)
def cluster_nlp(i, K, fams, out):
    """-ln f(x_i | theta_k) for k < K with the current statistics (no removal)."""
    for k in range(K):
        out[k] = _nlp(i, k, fams)
