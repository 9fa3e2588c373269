"""MAP-iHMM (EJS §6.2, OTHER-SYSTEMS §4.1-4.2): eq 6.5 with I1 fixed, the NLL, table counts,
the assignment sweep as coordinate descent, recovery, row order and ``lengths`` checks."""
from __future__ import annotations

import math

import numpy as np
import pytest

from mapdp_core.kernels import dp_mixture as _kernels
from mapdp_core.models.ihmm import (MAPIHMM, _Chain, log_transition_terms, map_table_count, table_counts,
                             transition_nll, update_kappa)
from mapdp_core.evaluation.metrics import clustering_scores


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
    kept = int(np.argmin(m.restart_values_))  # init="best": one restart per start, the lower NLL kept
    states = list(MAPIHMM(likelihood="normal_gamma").iter_sweeps(X, lengths=[120, 80], restart=kept))
    assert states[-1].algorithm == "MAP-iHMM" and np.array_equal(states[-1].labels, m.labels_)


def test_parameters_are_checked():
    X = np.zeros((10, 1)) + np.arange(10)[:, None]
    with pytest.raises(ValueError, match="M0"):
        MAPIHMM(M0=1.0, kappa="mode", likelihood="normal_gamma").fit(X)
    for bad in ({"table_counts": "x"}, {"kappa": "x"}, {"init": "x"}, {"N0": 0}):
        with pytest.raises(ValueError):
            MAPIHMM(likelihood="normal_gamma", **bad).fit(X)


# ----------------------------------------------------------------------------- Van Gael's conditional
def van_gael_conditional(z, lengths, t, kappa, N0):
    """Van Gael's direct-assignment collapsed Gibbs conditional p(s_t = k | s_-t, beta) for
    k = 0..K-1 and a new state (last), normalised; beta = ``kappa`` (K + 1,), alpha0 = N0.

    Counts from the labels of every other step, with Van Gael's virtual transition from the
    first state into the first step of each sequence (our I4, state 0); cases as in his
    ``iHmmNormalSampleGibbs.m`` (the t = 1 cases are those of the virtual predecessor)."""
    K = len(kappa) - 1
    starts = set(np.cumsum([0] + list(lengths[:-1])).tolist())
    T = len(z)

    def pred(u):
        return 0 if u in starts else z[u - 1]

    nxt = t + 1 if t + 1 < T and t + 1 not in starts else None
    N = np.zeros((K, K))
    for u in range(T):
        if u == t or u == nxt:
            continue
        N[pred(u), z[u]] += 1
    p = pred(t)
    n = None if nxt is None else z[nxt]
    r = np.empty(K + 1)
    for k in range(K):
        r[k] = N[p, k] + N0 * kappa[k]
        if n is None:
            continue
        if k != p:
            r[k] *= (N[k, n] + N0 * kappa[n]) / (N[k].sum() + N0)
        elif k != n:
            r[k] *= (N[k, n] + N0 * kappa[n]) / (N[k].sum() + 1 + N0)
        else:
            r[k] *= (N[k, n] + 1 + N0 * kappa[n]) / (N[k].sum() + 1 + N0)
    r[K] = N0 * kappa[K] * (kappa[n] if n is not None else 1.0)
    return r / r.sum()


def dirichlet_multinomial_conditional(z, lengths, t, kappa, N0):
    """The same conditional from first principles: p(z | kappa) = prod_p Gamma(N0)/Gamma(N0 + N_p.)
    prod_k Gamma(N0 kappa_k + N_pk)/Gamma(N0 kappa_k) with z_t set to each k, the new state a
    (K+1)-th column of weight kappa_{K+1} (its row empty but for t's own transition)."""
    from scipy.special import gammaln

    K = len(kappa) - 1
    starts = set(np.cumsum([0] + list(lengths[:-1])).tolist())
    a = N0 * np.asarray(kappa)
    logp = np.empty(K + 1)
    for k in range(K + 1):
        lab = np.array(z)
        lab[t] = k
        N = np.zeros((K + 1, K + 1))
        for u in range(len(lab)):
            N[0 if u in starts else lab[u - 1], lab[u]] += 1
        logp[k] = sum(math.lgamma(N0) - math.lgamma(N0 + N[q].sum()) + np.sum(gammaln(a + N[q]) - gammaln(a))
                      for q in range(K + 1) if N[q].sum() > 0)
    w = np.exp(logp - logp.max())
    return w / w.sum()


@pytest.mark.parametrize("seed", range(3))
def test_transition_cost_is_van_gael_collapsed_conditional(seed):
    """OTHER-SYSTEMS §4.7: exp(-(MAP-iHMM's transition cost of k)), normalised over k = 1..K+1,
    equals Van Gael's direct-assignment collapsed conditional, at sequence starts and ends, a
    length-1 sequence, self-transitions (p = k = n) and inside; both equal the exact
    Dirichlet-multinomial conditional."""
    rng = np.random.default_rng(seed)
    K, lengths = 4, [1, 12, 7, 20]
    T = sum(lengths)
    z = np.empty(T, dtype=np.int64)
    z[0] = 0
    for t in range(1, T):  # sticky, so that p = k = n occurs
        z[t] = z[t - 1] if rng.random() < 0.6 else rng.integers(K)
    z[:K] = np.arange(K)  # every state used
    kappa = rng.dirichlet(np.ones(K + 1))
    N0 = [0.7, 2.3, 5.0][seed]
    X = rng.normal(size=(T, 1))
    est = MAPIHMM(likelihood="normal_gamma")
    est._extra_arg = lengths
    problem = est._validate(X)
    del est._extra_arg
    s = problem.settings
    for new_state in ("ejs", "exact"):
        chain = _Chain(problem.data, z, s["prv"], s["nxt"], N0, 2.0, new_state)
        chain.kappa[:K] = kappa[:K]
        chain.kappa_rest = kappa[K]
        kinds = set()
        for t in range(T):
            p = z[s["prv"][t]] if s["prv"][t] >= 0 else 0
            n = z[s["nxt"][t]] if s["nxt"][t] >= 0 else -1
            kinds.add("self" if p == z[t] == n else "end" if n < 0 else "start" if s["prv"][t] < 0 else "inside")
            rows = np.array([t])
            chain._move(t, p, n, z[t], -1.0)
            _kernels.move_rows(rows, chain.labels, -1, chain.model.cnt, chain.model.logcnt, chain.model.fams)
            nlp = np.empty(K)
            q, _, _ = chain.scores(t, nlp)
            emission = np.append(nlp, chain.model.d_new[t])
            chain._move(t, p, n, z[t], 1.0)
            _kernels.move_rows(rows, chain.labels, 1, chain.model.cnt, chain.model.logcnt, chain.model.fams)
            cost = q - emission  # -ln A_k and -ln(N0 kappa kappa_n): the transition cost of each k
            want = van_gael_conditional(z, lengths, t, kappa, N0)
            if t % 5 == 0:  # the reference itself against the first-principles ratio
                np.testing.assert_allclose(dirichlet_multinomial_conditional(z, lengths, t, kappa, N0), want,
                                           rtol=1e-10)
            if new_state == "exact":  # the new state is scored b = 1/(1 + M0) times lower, nothing else
                cost[K] += math.log(chain.b)
            w = np.exp(-(cost - cost.min()))
            np.testing.assert_allclose(w / w.sum(), want, rtol=1e-12, atol=1e-15)
        assert kinds == {"self", "end", "start", "inside"}


# ----------------------------------------------------------------------------- prediction
NG_PRIOR = {"m0": 0.0, "c0": 0.05, "a0": 2.0, "b0": 2.0}


def fitted_three_state(T=300, seed=1, **kw):
    X, z = sticky_hmm(T, [-6.0, 0.0, 6.0], 0.9, 1.0, seed)
    m = MAPIHMM(likelihood="normal_gamma", prior=NG_PRIOR, **kw).fit(X)
    assert m.n_clusters_ == 3
    return X, m


def naive_log_emissions(m, Xtrain, Xnew):
    """ln f(x | X_k) of each state from its fitted rows, by tests/naive.py (normal_gamma per column)."""
    from naive import naive_neg_log_predictive

    E = np.zeros((len(Xnew), m.n_clusters_))
    for k in range(m.n_clusters_):
        rows = Xtrain[m.labels_ == k]
        for t, x in enumerate(Xnew):
            E[t, k] = -sum(naive_neg_log_predictive("normal_gamma", x[j], rows[:, j], NG_PRIOR)
                           for j in range(Xnew.shape[1]))
    return E


def brute_force(m, E):
    """ln p(path, x) of every one of the K^T paths of one sequence."""
    import itertools

    K, T = E.shape[1], E.shape[0]
    logA, logs = np.log(m.transmat_), np.log(m.startprob_)
    paths = np.array(list(itertools.product(range(K), repeat=T)))
    lp = logs[paths[:, 0]] + E[0, paths[:, 0]]
    for t in range(1, T):
        lp = lp + logA[paths[:, t - 1], paths[:, t]] + E[t, paths[:, t]]
    return paths, lp


def test_transmat_startprob_are_the_documented_plug_in():
    X, m = fitted_three_state()
    K, z, N0, kappa = m.n_clusters_, m.labels_, m.N0_, m.kappa_
    N = np.zeros((K, K))
    N[0, z[0]] += 1  # the virtual transition into the first step (I4)
    for t in range(1, len(z)):
        N[z[t - 1], z[t]] += 1
    post_mean = (N + N0 * kappa[None, :K]) / (N.sum(axis=1) + N0)[:, None]
    np.testing.assert_allclose(m.new_state_mass_, N0 * kappa[K] / (N.sum(axis=1) + N0), rtol=1e-14)
    np.testing.assert_allclose(post_mean.sum(axis=1) + m.new_state_mass_, 1.0, rtol=1e-14)
    np.testing.assert_allclose(m.transmat_, post_mean / post_mean.sum(axis=1, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(m.startprob_, m.transmat_[0], rtol=0)


@pytest.mark.parametrize("T,seed", [(1, 0), (2, 1), (4, 2), (6, 3), (6, 4)])
def test_viterbi_forward_backward_equal_brute_force(T, seed):
    """Against all K^T paths (K = 3): the Viterbi path, the forward log-likelihood, the
    forward-backward marginals and ln p(x_t | x_<t) (from brute-force prefix likelihoods);
    emissions from tests/naive.py; a NaN gap at step 2 of the longer sequences."""
    from scipy.special import logsumexp

    Xtrain, m = fitted_three_state()
    rng = np.random.default_rng(seed)
    Xnew = rng.choice([-6.0, 0.0, 6.0], T)[:, None] + rng.normal(scale=2.0, size=(T, 1))
    Xnew[min(T - 1, 4), 0] = 3.1  # between two states: a non-trivial posterior
    if T >= 4:
        Xnew[2, 0] = np.nan
    E = naive_log_emissions(m, Xtrain, Xnew)
    np.testing.assert_allclose(m._log_emissions(Xnew), E, rtol=1e-10, atol=1e-10)
    paths, lp = brute_force(m, E)
    assert np.array_equal(m.predict(Xnew), paths[np.argmax(lp)])
    assert m.score(Xnew) == pytest.approx(logsumexp(lp), rel=1e-12, abs=1e-12)
    post = np.exp(lp - logsumexp(lp))
    marg = np.array([[post[paths[:, t] == k].sum() for k in range(3)] for t in range(T)])
    proba = m.predict_proba(Xnew)
    np.testing.assert_allclose(proba, marg, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-14)
    prefix = [logsumexp(brute_force(m, E[:t + 1])[1]) for t in range(T)]
    np.testing.assert_allclose(m.score_samples(Xnew), np.diff(np.append(0.0, prefix)), rtol=1e-10, atol=1e-10)
    if T >= 4:
        assert m.score_samples(Xnew)[2] == pytest.approx(0.0, abs=1e-12)  # a gap: p(x_t | x_<t) = 1


def test_two_dimensional_partial_gaps_equal_brute_force():
    """Two normal_gamma columns, some cells missing: the gap drops only its own column."""
    from scipy.special import logsumexp

    rng = np.random.default_rng(7)
    z = np.repeat([0, 1, 2, 1], 60)
    Xtrain = np.array([[-5.0, 5.0], [0.0, 0.0], [5.0, -5.0]])[z] + rng.normal(size=(240, 2))
    Xtrain[rng.random((240, 2)) < 0.1] = np.nan
    m = MAPIHMM(likelihood="normal_gamma", prior=NG_PRIOR).fit(Xtrain)
    assert m.n_clusters_ == 3
    Xnew = np.array([[-5.2, np.nan], [np.nan, np.nan], [0.3, 0.4], [np.nan, -4.0], [4.0, -6.0]])
    E = naive_log_emissions(m, Xtrain, Xnew)
    np.testing.assert_allclose(m._log_emissions(Xnew), E, rtol=1e-10, atol=1e-10)
    paths, lp = brute_force(m, E)
    assert np.array_equal(m.predict(Xnew), paths[np.argmax(lp)])
    assert m.score(Xnew) == pytest.approx(logsumexp(lp), rel=1e-12)
    post = np.exp(lp - logsumexp(lp))
    marg = np.array([[post[paths[:, t] == k].sum() for k in range(3)] for t in range(5)])
    np.testing.assert_allclose(m.predict_proba(Xnew), marg, rtol=1e-10, atol=1e-13)


def log_space_reference(log_start, logA, E):
    """Forward (normalised), backward and Viterbi term by term in log space (scipy's logsumexp)."""
    from scipy.special import logsumexp

    T, K = E.shape
    alpha, norm = np.empty((T, K)), np.empty(T)
    prev = None
    for t in range(T):
        a = (log_start if t == 0 else logsumexp(prev[:, None] + logA, axis=0)) + E[t]
        norm[t] = logsumexp(a)
        alpha[t] = prev = a - norm[t]
    beta = np.zeros((T, K))
    for t in range(T - 2, -1, -1):
        beta[t] = logsumexp(logA + (E[t + 1] + beta[t + 1])[None, :], axis=1) - norm[t + 1]
    return alpha, norm, beta


def test_kernels_equal_log_space_reference_with_zero_transitions_and_extreme_emissions():
    """The K-exponentials-per-step sums against term-by-term log-sum-exp where some transition
    probabilities are 0 (kappa="mode") and emissions differ by thousands of nats, so that
    exp(alpha - max) underflows and the exact fallback is taken."""
    from mapdp_core.models import ihmm

    rng = np.random.default_rng(3)
    K, T = 5, 400
    A = rng.dirichlet(np.ones(K), size=K)
    A[rng.random((K, K)) < 0.3] = 0.0
    A[np.arange(K), np.arange(K)] += 0.1  # every row keeps some mass
    A /= A.sum(axis=1, keepdims=True)
    E = rng.normal(scale=800.0, size=(T, K))
    E -= E.max(axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        logA = np.log(A)
    log_start = logA[0].copy()
    starts, ends = np.array([0]), np.array([T])
    alpha, norm, beta = np.empty((T, K)), np.empty(T), np.empty((T, K))
    ihmm._forward(log_start, logA, A, E, starts, ends, alpha, norm)
    ihmm._backward(logA, A, E, starts, ends, norm, beta)
    ra, rn, rb = log_space_reference(log_start, logA, E)
    assert np.isfinite(norm).all()
    np.testing.assert_allclose(norm, rn, rtol=1e-12, atol=1e-9)
    fin = np.isfinite(ra)
    assert np.array_equal(fin, np.isfinite(alpha)) and (~fin).any() and (ra[fin] < -745).any()
    np.testing.assert_allclose(alpha[fin], ra[fin], rtol=1e-12, atol=1e-9)
    fin = np.isfinite(rb)
    assert np.array_equal(fin, np.isfinite(beta))
    np.testing.assert_allclose(beta[fin], rb[fin], rtol=1e-12, atol=1e-9)


def test_predict_recovers_fresh_sequence_from_same_generator():
    X, z = sticky_hmm(400, [-6.0, 0.0, 6.0], 0.95, 1.0, 0)
    m = MAPIHMM(likelihood="normal_gamma", random_state=0).fit(X)
    X2, z2 = sticky_hmm(500, [-6.0, 0.0, 6.0], 0.95, 1.0, 9)
    path = m.predict(X2)
    assert path.shape == (500,) and path.dtype.kind == "i" and path.max() < m.n_clusters_
    assert clustering_scores(z2, path)["nmi"] > 0.9
    proba = m.predict_proba(X2)
    assert proba.shape == (500, m.n_clusters_)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert np.mean(proba.argmax(axis=1) == path) > 0.95
    assert m.score(X2) == pytest.approx(m.score_samples(X2).sum(), rel=1e-12)
    assert np.array_equal(m.predict(X), m.predict(X))  # deterministic


def test_lengths_split_new_sequences():
    """No transition crosses a boundary: each method equals separate calls, concatenated."""
    Xtrain, m = fitted_three_state()
    X2, _ = sticky_hmm(90, [-6.0, 0.0, 6.0], 0.7, 1.5, 11)
    lengths = [30, 1, 44, 15]
    parts = np.split(X2, np.cumsum(lengths)[:-1])
    for method in ("predict", "predict_proba", "score_samples"):
        joined = getattr(m, method)(X2, lengths=lengths)
        separate = np.concatenate([getattr(m, method)(p) for p in parts])
        np.testing.assert_array_equal(joined, separate)
    assert m.score(X2, lengths) == pytest.approx(sum(m.score(p) for p in parts), rel=1e-12)
    # the first step of a sequence is scored from startprob_, not from the step before it
    whole = m.score_samples(X2)
    assert not np.isclose(whole[30], m.score_samples(X2, lengths)[30])
    np.testing.assert_array_equal(whole[:30], m.score_samples(X2, lengths)[:30])
    with pytest.raises(ValueError, match="lengths"):
        m.predict(X2, lengths=[30, 30])
    with pytest.raises(ValueError, match="lengths"):
        m.predict_proba(X2, lengths=[90, 0])


def test_prediction_checks_new_rows():
    from sklearn.exceptions import NotFittedError

    Xtrain, m = fitted_three_state()
    with pytest.raises(NotFittedError):
        MAPIHMM().predict(Xtrain)
    with pytest.raises(ValueError, match="features"):
        m.predict(np.zeros((5, 2)))
    with pytest.raises(ValueError, match="infinite"):
        m.score_samples(np.array([[0.0], [np.inf]]))
    with pytest.raises(ValueError, match="Reshape|1-D|2-D"):
        m.predict(np.zeros(5))


def test_mixed_table_with_gaps_and_unseen_category():
    """A DataFrame with a real column and a text category (likelihood="auto"): prediction encodes
    new rows as the fit did; a gap or a never-seen category is scored as missing."""
    import pandas as pd
    from mapdp_core import UnseenCategoryWarning

    rng = np.random.default_rng(2)
    z = np.repeat([0, 1, 2, 0, 2, 1], 50)
    names = np.array(["low", "mid", "high"])
    df = pd.DataFrame({"x": np.array([-6.0, 0.0, 6.0])[z] + rng.normal(size=300),
                       "c": np.where(rng.random(300) < 0.9, names[z], names[(z + 1) % 3])})
    m = MAPIHMM(random_state=0).fit(df)
    assert m.n_features_in_ == 2 and list(m.feature_names_in_) == ["x", "c"]
    new = df.iloc[:100].copy()
    assert clustering_scores(z[:100], m.predict(new))["nmi"] > 0.9
    gap = new.copy()
    gap.loc[10, "c"] = None
    gap.loc[20, "x"] = np.nan
    odd = new.copy()
    odd.loc[10, "c"] = "never-seen"
    with pytest.warns(UnseenCategoryWarning):
        odd_scores = m.score_samples(odd)
    np.testing.assert_allclose(odd_scores[:20], m.score_samples(gap)[:20], rtol=1e-12)
    np.testing.assert_allclose(m.predict_proba(gap).sum(axis=1), 1.0, rtol=1e-12)


def test_prediction_survives_pickling_and_from_states():
    import pickle

    X, m = fitted_three_state()
    X2, _ = sticky_hmm(120, [-6.0, 0.0, 6.0], 0.9, 1.0, 12)
    again = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(again.predict_proba(X2), m.predict_proba(X2))
    est = MAPIHMM(likelihood="normal_gamma", prior=NG_PRIOR)
    recorded = est.from_states(X, list(est.iter_sweeps(X)))
    np.testing.assert_array_equal(recorded.transmat_, m.transmat_)
    np.testing.assert_array_equal(recorded.predict(X2), m.predict(X2))



def test_init_best_keeps_the_start_with_the_lower_ihmm_nll():
    X, z = sticky_hmm(400, [-3.0, 0.0, 3.0, 6.0], 0.95, 1.0, 7)
    best = MAPIHMM(likelihood="normal_gamma").fit(X)
    alone = {start: MAPIHMM(likelihood="normal_gamma", init=start).fit(X) for start in ("mapdp", "hard")}
    assert len(best.restart_values_) == 2
    assert np.allclose(best.restart_values_, [alone["mapdp"].neg_log_joint_, alone["hard"].neg_log_joint_])
    winner = min(alone.values(), key=lambda m: m.neg_log_joint_)
    assert best.neg_log_joint_ == winner.neg_log_joint_ and np.array_equal(best.labels_, winner.labels_)
    # a table with a text column has no hard start: "best" is the MAP-DP start alone, "hard" is refused
    import pandas as pd

    df = pd.DataFrame({"x": X[:, 0], "kind": np.where(X[:, 0] > 0, "a", "b")})
    assert len(MAPIHMM(likelihood={"x": "normal_gamma", "kind": "categorical"}).fit(df).restart_values_) == 1
    with pytest.raises(ValueError, match="numeric columns only"):
        MAPIHMM(likelihood={"x": "normal_gamma", "kind": "categorical"}, init="hard").fit(df)
