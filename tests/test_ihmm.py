"""MAP-iHMM (EJS §6.2, OTHER-SYSTEMS §4.1-4.2): eq 6.5 with I1 fixed, the NLL, table counts,
the assignment sweep as coordinate descent, recovery, row order and ``lengths`` checks."""
from __future__ import annotations

import math

import numpy as np
import pytest

from mapdp_core import _kernels
from mapdp_core.ihmm import (MAPIHMM, _Chain, log_transition_terms, map_table_count, table_counts,
                             transition_nll, update_kappa)
from mapdp_core.metrics import clustering_scores


def sticky_hmm(T, means, stay, sd, seed):
    rng = np.random.default_rng(seed)
    K = len(means)
    z = np.empty(T, dtype=np.int64)
    z[0] = 0
    for t in range(1, T):
        z[t] = z[t - 1] if rng.random() < stay else rng.choice([k for k in range(K) if k != z[t - 1]])
    return (np.asarray(means)[z] + rng.normal(scale=sd, size=T))[:, None], z


# ----------------------------------------------------------------------------- eq 6.5
def eq65_plain(N, kappa, kappa_rest, N0, p, k, n, K):
    """EJS eq 6.5 case by case, with I1 (kappa_{z_{t+1}}, N0 kappa_k), counts without t."""
    if k == K:
        return N0 * kappa_rest * (kappa[n] if n is not None else 1.0)
    first = N[p][k] + N0 * kappa[k]
    if n is None:
        return first
    out_k = sum(N[k])
    if p == k and n == k:
        return first * (N[k][n] + 1 + N0 * kappa[n]) / (out_k + N0 + 1)
    if p == k:
        return first * (N[k][n] + N0 * kappa[n]) / (out_k + N0 + 1)
    return first * (N[k][n] + N0 * kappa[n]) / (out_k + N0)


@pytest.mark.parametrize("p,n", [(0, 0), (1, 1), (0, 2), (2, 1), (1, None), (2, None), (0, 1)])
def test_transition_terms_equal_eq_6_5(p, n):
    N = [[5, 1, 0], [2, 7, 3], [0, 4, 6]]
    kappa = [0.3, 0.25, 0.15]
    rest, N0, K = 0.3, 1.7, 3
    Na = np.zeros((5, 5))
    Na[:3, :3] = N
    logA, log_new = log_transition_terms(Na, Na.sum(axis=1), np.array(kappa + [0, 0]), rest, N0, p,
                                         -1 if n is None else n, K)
    want = [math.log(eq65_plain(N, kappa, rest, N0, p, k, n, K)) for k in range(K + 1)]
    np.testing.assert_allclose(np.append(logA, log_new), want, rtol=1e-12)


def test_scores_equal_exact_nll_differences_at_both_boundaries():
    """q_t of the chain (emissions + eq 6.5) differs between states exactly as the NLL does,
    at a sequence start (virtual predecessor 0), a sequence end, a self-transition and inside."""
    X, z = sticky_hmm(60, [-4.0, 0.0, 4.0], 0.8, 1.0, 3)
    est = MAPIHMM(likelihood="normal_gamma", init="one")
    est._extra_arg = [25, 35]
    problem = est._validate(X)
    del est._extra_arg
    s = problem.settings
    chain = _Chain(problem.data, z, s["prv"], s["nxt"], 1.3, 2.0)
    chain.kappa[:3] = [0.3, 0.3, 0.2]
    chain.kappa_rest = 0.2
    selfs = [t for t in range(1, 59) if z[t - 1] == z[t] == z[t + 1] and t not in (24, 25)]
    for t in [0, 24, 25, 59, selfs[0], 10]:
        nll = []
        for k in range(3):
            lab = z.copy()
            lab[t] = k
            other = _Chain(problem.data, lab, s["prv"], s["nxt"], 1.3, 2.0)
            other.kappa = chain.kappa.copy()
            nll.append(other.nll())
        p = z[s["prv"][t]] if s["prv"][t] >= 0 else 0
        n = z[s["nxt"][t]] if s["nxt"][t] >= 0 else -1
        chain._move(t, p, n, z[t], -1.0)
        _kernels.move_rows(np.array([t]), chain.labels, -1, chain.model.cnt, chain.model.logcnt, chain.model.fams)
        q, _, _ = chain.scores(t, np.empty(3))
        chain._move(t, p, n, z[t], 1.0)
        _kernels.move_rows(np.array([t]), chain.labels, 1, chain.model.cnt, chain.model.logcnt, chain.model.fams)
        np.testing.assert_allclose(q[:3] - q[0], np.array(nll) - nll[0], atol=1e-9)


# ----------------------------------------------------------------------------- NLL
def test_nll_equals_plain_formula_from_labels():
    from scipy.special import gammaln

    X, z = sticky_hmm(50, [-3.0, 3.0], 0.9, 1.0, 1)
    lengths = [20, 30]
    est = MAPIHMM(likelihood="normal_gamma")
    est._extra_arg = lengths
    problem = est._validate(X)
    del est._extra_arg
    s = problem.settings
    N0 = 0.7
    chain = _Chain(problem.data, z, s["prv"], s["nxt"], N0, 2.0)
    kappa = np.array([0.45, 0.35])
    chain.kappa[:2] = kappa
    # plain transition counts: real ones, plus the virtual 0 -> first state of each sequence
    counts = {}
    starts = {0, 20}
    for t in range(50):
        p = 0 if t in starts else z[t - 1]
        counts[(p, z[t])] = counts.get((p, z[t]), 0) + 1
    trans = 0.0
    for p in (0, 1):
        row = sum(v for (a, _), v in counts.items() if a == p)
        if row == 0:
            continue
        trans += math.lgamma(N0) - math.lgamma(N0 + row)
        for k in (0, 1):
            c = counts.get((p, k), 0)
            if c:
                trans += math.lgamma(N0 * kappa[k] + c) - math.lgamma(N0 * kappa[k])
    # data term: MAP-DP's exact -ln p(X, z) minus its partition prior -ln CRP(z; N0)
    sizes = np.bincount(z)
    log_crp = 2 * math.log(N0) + gammaln(sizes).sum() + math.lgamma(N0) - math.lgamma(N0 + 50)
    data = chain.model.neg_log_joint(2, N0) + log_crp
    assert chain.nll() == pytest.approx(data - trans, rel=1e-12)
    assert transition_nll(np.array([[3.0]]), [0.0], 1.0) == math.inf  # I2: kappa_k = 0 entered


@pytest.mark.parametrize("seed", range(4))
def test_assignment_sweep_never_increases_nll_with_kappa_fixed(seed):
    X, z = sticky_hmm(120, [-2.0, 0.0, 2.5], 0.85, 1.0, seed)
    est = MAPIHMM(likelihood="normal_gamma", new_state="exact")
    problem = est._validate(X)
    s = problem.settings
    rng = np.random.default_rng(seed)
    start = rng.integers(0, 4, 120)
    start = np.unique(start, return_inverse=True)[1]
    chain = _Chain(problem.data, start, s["prv"], s["nxt"], 1.0, 2.0, "exact")
    chain.kappa_step("greedy", "mean", rng)
    for _ in range(3):
        before = chain.nll()
        chain.sweep()
        after = chain.nll()  # kappa of the old states unchanged; new states carry their split
        assert after <= before + 1e-9
        state0_kept = chain.model.cnt[0] > 0
        chain.cleanup()  # moves mass only to kappa_{K+1}, which the NLL does not read
        if state0_kept:  # else the virtual predecessor (the state at index 0) is another state now
            assert chain.nll() == pytest.approx(after, abs=1e-9)


# ----------------------------------------------------------------------------- table counts and kappa
def log_stirling_rows(n_max):
    """log|s(n, m)| by the recurrence |s(n+1, m)| = n |s(n, m)| + |s(n, m-1)| (exact integers)."""
    s = [[1]]
    for n in range(n_max):
        prev = s[-1] + [0]
        s.append([(n * prev[m] if m < len(prev) else 0) + (prev[m - 1] if m >= 1 else 0) for m in range(n + 2)])
    return s


def test_map_table_count_is_brute_force_argmax():
    s = log_stirling_rows(30)
    for n in range(1, 31):
        for a in (0.05, 0.3, 1.0, 2.7, 9.0, 40.0):
            vals = [math.log(s[n][m]) + m * math.log(a) for m in range(1, n + 1)]
            assert map_table_count(n, a) == int(np.argmax(vals)) + 1, (n, a)
    assert map_table_count(7, 0.0) == 1


def test_table_count_modes_and_sample_reproducible():
    N = np.array([[0, 3, 40], [5, 0, 1], [2, 8, 0]])
    kappa = np.array([0.2, 0.5, 0.1])
    g = table_counts(N, kappa, 3.0, "greedy")
    assert g.tolist() == [[0, 2, 1], [1, 0, 1], [1, 2, 0]]
    a = table_counts(N, kappa, 3.0, "sample", np.random.default_rng(5))
    b = table_counts(N, kappa, 3.0, "sample", np.random.default_rng(5))
    assert np.array_equal(a, b) and np.all((a >= 1) == (N >= 1)) and np.all(a <= N)
    X, _ = sticky_hmm(150, [-3.0, 0.0, 3.0], 0.9, 1.0, 2)
    fits = [MAPIHMM(likelihood="normal_gamma", table_counts="sample", random_state=11).fit(X) for _ in range(2)]
    assert np.array_equal(fits[0].labels_, fits[1].labels_)
    assert fits[0].objective_history_ == fits[1].objective_history_


def test_kappa_modes():
    M = np.array([1, 3, 6])
    kappa, rest = update_kappa(M, 2.0, "mode")
    np.testing.assert_allclose(np.append(kappa, rest), np.array([0, 2, 5, 1]) / 8)
    kappa, rest = update_kappa(M, 2.0, "mean")
    np.testing.assert_allclose(np.append(kappa, rest), np.array([1, 3, 6, 2]) / 12)
    kappa, rest = update_kappa(M, 2.0, "floor")
    assert kappa[0] > 0 and kappa.sum() + rest == pytest.approx(1.0)


# ----------------------------------------------------------------------------- estimator
def test_recovers_three_state_sticky_hmm_and_keeps_rows_in_order():
    X, z = sticky_hmm(400, [-6.0, 0.0, 6.0], 0.95, 1.0, 0)
    m = MAPIHMM(likelihood="normal_gamma", random_state=0).fit(X)
    assert clustering_scores(z, m.labels_)["nmi"] > 0.9
    assert m.labels_.shape == (400,) and m.transitions_.shape == (m.n_clusters_, m.n_clusters_)
    assert m.transitions_.sum() == 399 and len(m.kappa_) == m.n_clusters_ + 1
    assert m.kappa_.sum() == pytest.approx(1.0)
    assert m.neg_log_joint_ == m.objective_history_[-1] and m.n_iter_ == len(m.objective_history_)
    # every row in order: each row's label is the state whose mean is nearest that row's value
    means = np.array([X[m.labels_ == k, 0].mean() for k in range(m.n_clusters_)])
    assert np.mean(np.argmin(np.abs(X - means[None, :]), axis=1) == m.labels_) > 0.95
    import pandas as pd

    df = MAPIHMM(likelihood="normal_gamma", random_state=0).fit(pd.DataFrame(X, columns=["x"]))
    assert np.array_equal(df.labels_, m.labels_)


def test_lengths_split_sequences_and_are_checked():
    X, z = sticky_hmm(200, [-6.0, 0.0, 6.0], 0.95, 1.0, 4)
    m = MAPIHMM(likelihood="normal_gamma").fit(X, lengths=[120, 80])
    assert m.lengths_ == [120, 80]
    assert m.transitions_.sum() == 198  # no transition across the boundary
    with pytest.raises(ValueError, match="lengths"):
        MAPIHMM(likelihood="normal_gamma").fit(X, lengths=[100, 50])
    with pytest.raises(ValueError, match="lengths"):
        list(MAPIHMM(likelihood="normal_gamma").iter_sweeps(X, lengths=[300]))
    states = list(MAPIHMM(likelihood="normal_gamma").iter_sweeps(X, lengths=[120, 80]))
    assert states[-1].algorithm == "MAP-iHMM" and np.array_equal(states[-1].labels, m.labels_)


def test_parameters_are_checked():
    X = np.zeros((10, 1)) + np.arange(10)[:, None]
    with pytest.raises(ValueError, match="M0"):
        MAPIHMM(M0=1.0, kappa="mode", likelihood="normal_gamma").fit(X)
    for bad in ({"table_counts": "x"}, {"kappa": "x"}, {"init": "x"}, {"N0": 0}):
        with pytest.raises(ValueError):
            MAPIHMM(likelihood="normal_gamma", **bad).fit(X)
