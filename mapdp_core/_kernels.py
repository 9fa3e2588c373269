"""The numba kernels of MAP-DP (PLOS Algorithm 3 with the semantics of ALGORITHMS.md).

Every kernel takes all families' arrays as one tuple of tuples (``fams``, ordered as
``families.KERNEL_SLOTS``; an unused family has zero columns), unpacks it ONCE, and calls
each family's functions directly with explicit arrays. That keeps numba's disk cache (no
functions passed as arguments, no closures), avoids branching on a family code in the
inner loop (DESIGN.md, convention 4), and avoids the cost we measured of handing tuples of
arrays to a function in the inner loop: numba increfs and decrefs every array of the
tuple at each call, which made an evaluation 7x slower (147 ns against 20 ns). The family
functions are ``inline="always"`` for the same reason, and the kernels are compiled
without reference counting (numba's ``_nrt=False``), which they can be because they
allocate nothing: with it, three families' moves went from 581 ns to 66 ns per row
(numba's refcount pruning does not remove the increfs of the inlined family arguments).
No validation happens here.

The argument lists below are long but mechanical: the family's tuple layout, prefixed.
"""
from __future__ import annotations

import hashlib
import math
from pathlib import Path

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


@njit(cache=True, _nrt=False)
def reset_slots(lo, hi, cnt, logcnt, fams):
    """Put cluster slots lo..hi-1 in the prior state (no points)."""
    g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc = fams[0]
    n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const = fams[1]
    w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1 = fams[2]
    b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0 = fams[3]
    c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA = fams[4]
    p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1 = fams[5]
    e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc = fams[6]
    q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb = fams[7]
    for k in range(lo, hi):
        cnt[k] = 0.0
        logcnt[k] = -np.inf
        _ga.reset(k, g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc)
        _ng.reset(k, n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const)
        _nw.reset(k, w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1)
        _bb.reset(k, b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0)
        _ca.reset(k, c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA)
        _po.reset(k, p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1)
        _ex.reset(k, e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc)
        _ge.reset(k, q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb)


@njit(cache=True, _nrt=False)
def add_all(order, labels, cnt, logcnt, fams):
    """Put every row into the statistics of its cluster (from an all-empty state), in the
    visiting order, so that a run depends only on the sequence of rows it visits."""
    g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc = fams[0]
    n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const = fams[1]
    w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1 = fams[2]
    b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0 = fams[3]
    c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA = fams[4]
    p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1 = fams[5]
    e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc = fams[6]
    q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb = fams[7]
    for t in range(order.shape[0]):
        i = order[t]
        k = labels[i]
        sign = 1
        _ga.move(i, k, sign, g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc)
        _ng.move(i, k, sign, n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const)
        _nw.move(i, k, sign, w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1)
        _bb.move(i, k, sign, b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0)
        _ca.move(i, k, sign, c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA)
        _po.move(i, k, sign, p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1)
        _ex.move(i, k, sign, e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc)
        _ge.move(i, k, sign, q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb)
        cnt[k] += 1.0
    for k in range(cnt.shape[0]):
        logcnt[k] = math.log(cnt[k]) if cnt[k] > 0.0 else -np.inf


@njit(cache=True, _nrt=False)
def point_terms(empty_slot, d_new, pconst, fams):
    """Per row: -ln f(x_i | theta0) (the new-cluster term, fixed for the whole run) and the
    data-only constants that every cluster's -ln f shares (ln x!, binomial coefficients)."""
    g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc = fams[0]
    n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const = fams[1]
    w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1 = fams[2]
    b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0 = fams[3]
    c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA = fams[4]
    p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1 = fams[5]
    e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc = fams[6]
    q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb = fams[7]
    k = empty_slot
    for i in range(d_new.shape[0]):
        d_new[i] = (_ga.nlp(i, k, g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc)
                     + _ng.nlp(i, k, n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const)
                     + _nw.nlp(i, k, w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1)
                     + _bb.nlp(i, k, b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0)
                     + _ca.nlp(i, k, c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA)
                     + _po.nlp(i, k, p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1)
                     + _ex.nlp(i, k, e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc)
                     + _ge.nlp(i, k, q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb))
        pconst[i] = (_bb.pconst(i, b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0)
                      + _po.pconst(i, p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1))


@njit(cache=True, nogil=True, _nrt=False)
def sweep(order, start, labels, K, first_sweep, log_n0, d_new, pconst, cnt, logcnt, fams,
          uniforms, scores):
    """One Gauss-Seidel sweep over ``order[start:]``; mutates labels and statistics.

    MAP-DP takes the argmin of the scores d_ik - ln N_k^{-i}. With ``uniforms`` of length
    N (one U(0, 1) draw per row), the sweep is instead a collapsed Gibbs sweep (Neal 2000,
    Algorithm 3): z_i is drawn with probability proportional to exp(-score), using
    ``scores`` (length >= capacity + 1) as scratch space.

    Returns ``(stop, K, score_sum, n_changed)``. ``stop < len(order)`` means the cluster
    arrays are full: grow them and call again from ``stop``. ``score_sum`` adds up the
    chosen score (plus data-only constants) of each visited row.
    """
    g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc = fams[0]
    n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const = fams[1]
    w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1 = fams[2]
    b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0 = fams[3]
    c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA = fams[4]
    p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1 = fams[5]
    e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc = fams[6]
    q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb = fams[7]
    cap = cnt.shape[0]
    score_sum = 0.0
    n_changed = 0
    sample = uniforms.shape[0] > 0
    nw_only = (not sample and w_X.shape[1] > 0 and g_X.shape[1] + n_X.shape[1] + b_X.shape[1] + c_X.shape[1]
               + p_X.shape[1] + e_X.shape[1] + q_X.shape[1] == 0)
    for t in range(start, order.shape[0]):
        if K >= cap:
            return t, K, score_sum, n_changed
        i = order[t]
        k_old = labels[i]
        # the bound below holds for the full Student-t only, not for a row with gaps
        prune = nw_only
        if nw_only:
            for a in range(w_X.shape[1]):
                if w_X[i, a] != w_X[i, a]:
                    prune = False
        n_without = cnt[k_old] - 1.0
        best = np.inf
        best_k = K
        # Appendix B: on the first sweep the initial cluster counts as 1, or its
        # reinforcement would stop any new cluster from opening.
        if n_without > 0.0:  # otherwise N_k^{-i} = 0 and the score is +inf
            # the point's own cluster, scored without the point in scratch space, so that
            # statistics change only when the point moves; scored first, so that clusters
            # which cannot beat it can be skipped
            log_nk = 0.0 if (first_sweep and k_old == 0) else math.log(n_without)
            best = (_ga.nlp_loo(i, k_old, g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc)
                 + _ng.nlp_loo(i, k_old, n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const)
                 + _nw.nlp_loo(i, k_old, w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1)
                 + _bb.nlp_loo(i, k_old, b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0)
                 + _ca.nlp_loo(i, k_old, c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA)
                 + _po.nlp_loo(i, k_old, p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1)
                 + _ex.nlp_loo(i, k_old, e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc)
                 + _ge.nlp_loo(i, k_old, q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb)) - log_nk
            best_k = k_old
        if sample:
            for k in range(K + 1):
                scores[k] = np.inf
            scores[k_old] = best
        for k in range(K):
            if k == k_old or cnt[k] <= 0.0:  # cnt 0: emptied during this sweep, score +inf
                continue
            log_nk = 0.0 if (first_sweep and k == 0) else logcnt[k]
            if prune and w_const[k] - log_nk > best:
                continue  # the Student-t's value at its mode already loses (log1p(.) >= 0)
            s = (_ga.nlp(i, k, g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc)
                 + _ng.nlp(i, k, n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const)
                 + _nw.nlp(i, k, w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1)
                 + _bb.nlp(i, k, b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0)
                 + _ca.nlp(i, k, c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA)
                 + _po.nlp(i, k, p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1)
                 + _ex.nlp(i, k, e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc)
                 + _ge.nlp(i, k, q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb)) - log_nk
            if sample:
                scores[k] = s
            if s < best or (s == best and k < best_k):  # ties go to the lowest index
                best = s
                best_k = k
        s_new = d_new[i] - log_n0
        if s_new < best:
            best = s_new
            best_k = K
        if sample:
            scores[K] = s_new
            # p_k proportional to exp(-(score_k - best)); inverse CDF with this row's draw
            total = 0.0
            for k in range(K + 1):
                total += math.exp(best - scores[k])
            target = uniforms[i] * total
            acc = 0.0
            for k in range(K + 1):
                acc += math.exp(best - scores[k])
                if acc >= target and scores[k] < np.inf:
                    best_k = k
                    break
            best = scores[best_k]
        score_sum += best + pconst[i]
        if best_k == k_old:
            continue
        n_changed += 1
        k = k_old
        sign = -1
        _ga.move(i, k, sign, g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc)
        _ng.move(i, k, sign, n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const)
        _nw.move(i, k, sign, w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1)
        _bb.move(i, k, sign, b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0)
        _ca.move(i, k, sign, c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA)
        _po.move(i, k, sign, p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1)
        _ex.move(i, k, sign, e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc)
        _ge.move(i, k, sign, q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb)
        cnt[k] -= 1.0
        logcnt[k] = math.log(cnt[k]) if cnt[k] > 0.0 else -np.inf
        if best_k == K:
            K += 1
        labels[i] = best_k
        k = best_k
        sign = 1
        _ga.move(i, k, sign, g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc)
        _ng.move(i, k, sign, n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const)
        _nw.move(i, k, sign, w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1)
        _bb.move(i, k, sign, b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0)
        _ca.move(i, k, sign, c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA)
        _po.move(i, k, sign, p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1)
        _ex.move(i, k, sign, e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc)
        _ge.move(i, k, sign, q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb)
        cnt[k] += 1.0
        logcnt[k] = math.log(cnt[k])
    return order.shape[0], K, score_sum, n_changed


@njit(cache=True, _nrt=False)
def log_marginals(K, fams, out):
    """ln p(X_k | theta0) for k < K, without the data-only constants."""
    g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc = fams[0]
    n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const = fams[1]
    w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1 = fams[2]
    b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0 = fams[3]
    c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA = fams[4]
    p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1 = fams[5]
    e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc = fams[6]
    q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb = fams[7]
    for k in range(K):
        out[k] = (_ga.logml(k, g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc)
                  + _ng.logml(k, n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const)
                  + _nw.logml(k, w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1)
                  + _bb.logml(k, b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0)
                  + _ca.logml(k, c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA)
                  + _po.logml(k, p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1)
                  + _ex.logml(k, e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc)
                  + _ge.logml(k, q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb))


@njit(cache=True, _nrt=False)
def cluster_nlp(i, K, fams, out):
    """-ln f(x_i | theta_k) for k < K with the current statistics (no removal)."""
    g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc = fams[0]
    n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const = fams[1]
    w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1 = fams[2]
    b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0 = fams[3]
    c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA = fams[4]
    p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1 = fams[5]
    e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc = fams[6]
    q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb = fams[7]
    for k in range(K):
        out[k] = (_ga.nlp(i, k, g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc)
                     + _ng.nlp(i, k, n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const)
                     + _nw.nlp(i, k, w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1)
                     + _bb.nlp(i, k, b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0)
                     + _ca.nlp(i, k, c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA)
                     + _po.nlp(i, k, p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1)
                     + _ex.nlp(i, k, e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc)
                     + _ge.nlp(i, k, q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb))


@njit(cache=True, _nrt=False)
def score_rows(K, empty_slot, fams, nlp_out, d_new, pconst):
    """For every row of the data in ``fams`` (new rows, fitted statistics): -ln f(x | theta_k)
    for k < K into ``nlp_out`` (rows x K), the prior predictive into ``d_new`` and the
    data-only constants into ``pconst``. ``empty_slot`` must be a slot in the prior state."""
    g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc = fams[0]
    n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const = fams[1]
    w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1 = fams[2]
    b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0 = fams[3]
    c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA = fams[4]
    p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1 = fams[5]
    e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc = fams[6]
    q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb = fams[7]
    for i in range(d_new.shape[0]):
        for k in range(K):
            nlp_out[i, k] = (_ga.nlp(i, k, g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc)
                              + _ng.nlp(i, k, n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const)
                              + _nw.nlp(i, k, w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1)
                              + _bb.nlp(i, k, b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0)
                              + _ca.nlp(i, k, c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA)
                              + _po.nlp(i, k, p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1)
                              + _ex.nlp(i, k, e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc)
                              + _ge.nlp(i, k, q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb))
        k = empty_slot
        d_new[i] = (_ga.nlp(i, k, g_X, g_mu0, g_tau2, g_s2, g_raw, g_tox, g_toy, g_work, g_cnt, g_mean, g_m2, g_pm, g_pv, g_pc)
                    + _ng.nlp(i, k, n_X, n_m0, n_c0, n_a0, n_b0, n_cnt, n_mean, n_m2, n_loc, n_ivs, n_hexp, n_const)
                    + _nw.nlp(i, k, w_X, w_m0, w_c0, w_a0, w_L0, w_work, w_fill, w_cnt, w_mean, w_chol, w_hexp, w_coef, w_const, w_const1)
                    + _bb.nlp(i, k, b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0)
                    + _ca.nlp(i, k, c_X, c_alpha0, c_off, c_A0, c_cnt, c_counts, c_la, c_lA)
                    + _po.nlp(i, k, p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1)
                    + _ex.nlp(i, k, e_X, e_a0, e_b0, e_cnt, e_total, e_alpha, e_beta, e_lc)
                    + _ge.nlp(i, k, q_X, q_a0, q_b0, q_cnt, q_total, q_lc, q_beta, q_apb))
        pconst[i] = (_bb.pconst(i, b_X, b_a0, b_b0, b_ntr, b_cnt, b_total, b_alpha, b_beta, b_lnB, b_nl1, b_nl0)
                      + _po.pconst(i, p_X, p_a0, p_b0, p_cnt, p_total, p_alpha, p_lga, p_alp, p_lb1))


# numba's disk cache recompiles a cached function when the file that defines it changes
# (numba >= 0.68 compares a hash of that file), but these kernels inline the families'
# functions from other files: after a change to a family module alone (an edit, or an
# upgrade that leaves this file as it was) the cached kernels would silently run the old
# family code. So the kernels' cache files are dropped whenever the family sources differ
# from those they were compiled with (a hash kept beside them).
def families_digest(folder: Path = Path(__file__).parent / "families") -> str:
    """SHA-256 of the family modules' sources, in name order."""
    h = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def drop_stale_cache(cache_folder: Path, digest: str) -> bool:
    """Delete this module's cached kernels in ``cache_folder`` unless they were compiled
    with family sources of hash ``digest``; returns whether anything was dropped."""
    stamp = cache_folder / "_kernels.families.sha256"
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    dropped = False
    try:
        for path in cache_folder.glob("_kernels.*.nb[ic]"):
            path.unlink(missing_ok=True)
            dropped = True
        cache_folder.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)
    except OSError:  # an unwritable cache: numba cannot have written stale files there either
        pass
    return dropped


try:
    drop_stale_cache(Path(sweep._cache._cache_path), families_digest())
except AttributeError:  # numba's cache internals moved: fall back to numba's own check
    pass
