"""Daumé's best-first search (mapdp_core.models.search) against slow references written from the maths:
SUGS as the beam-1 trivial search, the exact MAP partition by exhaustive enumeration for A*,
the EPPF completion by brute force, Ewens's formula by summing the EPPF (OTHER-SYSTEMS 2.2-2.5)."""
import math
import time
import warnings
from collections import Counter

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from mapdp_core import default_prior
from mapdp_core.models.search import (DPSearch, _admissible_bound, eppf_completion, ewens_completion, ewens_log_prob,
                                      search_cost)
from mapdp_core.models.sugs import SUGS
from naive import (_row_neg_log_predictive, naive_map_partition, naive_neg_log_joint, naive_neg_log_predictive,
                   naive_partitions, naive_sugs)
from test_sugs import MIXED_LIKELIHOOD, MIXED_PRIOR, MIXED_BLOCKS, blobs, mixed_table, nw_spec


# --------------------------------------------------------------------------- data
def discrete_table(seed, n=8):
    """Two bernoulli columns, a categorical(3) and a poisson column from two latent groups."""
    rng = np.random.default_rng(seed)
    z = rng.choice(2, size=n)
    return np.column_stack([
        (rng.random(n) < np.array([0.2, 0.8])[z]).astype(float),
        (rng.random(n) < np.array([0.7, 0.3])[z]).astype(float),
        [float(rng.choice(3, p=q)) for q in np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]])[z]],
        rng.poisson(np.array([1.0, 6.0])[z]).astype(float),
    ])


DISCRETE_BLOCKS = [("bernoulli", [0, 1], {"alpha0": 0.5, "beta0": 0.5}),
                   ("categorical", [2], {"alpha0": np.ones(3)}),
                   ("poisson", [3], {"alpha0": 2.0, "beta0": 0.5})]
DISCRETE_LIKELIHOOD = {0: "bernoulli", 1: "bernoulli", 2: "categorical", 3: "poisson"}
DISCRETE_PRIOR = {0: DISCRETE_BLOCKS[0][2], 1: DISCRETE_BLOCKS[0][2], 2: DISCRETE_BLOCKS[1][2],
                  3: DISCRETE_BLOCKS[2][2]}


def spherical_table(seed, n=8):
    """Three overlapping 2-D groups (so that greedy and search disagree now and then)."""
    rng = np.random.default_rng(seed)
    means = np.array([[0.0, 0.0], [2.5, 0.5], [0.5, 3.0]])
    return means[rng.choice(3, size=n)] + rng.normal(0.0, 0.7, (n, 2))


# sigma2 with 2 pi sigma2 >= 1: every predictive density is at most 1, so "trivial" is admissible too
SPHERICAL_PRIOR = {"mu0": np.array([0.5, 1.0]), "sigma0_2": 4.0, "sigma2": 0.5}
SPHERICAL_BLOCKS = [("spherical_gaussian", [0, 1], SPHERICAL_PRIOR)]


def test_spherical_prior_keys_are_the_engines():
    assert set(default_prior("spherical_gaussian", spherical_table(0))) == set(SPHERICAL_PRIOR)
    assert 2 * math.pi * SPHERICAL_PRIOR["sigma2"] >= 1


def neg_log_lik(X, z, N0, blocks):
    """-ln p(X | z) = the joint minus -ln CRP(z; N0)."""
    sizes = np.bincount(z)
    log_crp = (len(sizes) * math.log(N0) + sum(math.lgamma(n) for n in sizes)
               + math.lgamma(N0) - math.lgamma(N0 + len(z)))
    return naive_neg_log_joint(X, z, N0, blocks) + log_crp


# --------------------------------------------------------------------------- beam 1 = SUGS
@pytest.mark.parametrize("name,N0", [("nw", 1.0), ("nw", 4.0), ("mixed", 1.5)])
def test_beam_one_trivial_search_without_prior_bound_is_sugs(name, N0):
    if name == "nw":
        X = blobs(20, n=60)
        prior, blocks = nw_spec(X)
        likelihood = "normal_wishart"
    else:
        X, likelihood, prior, blocks = mixed_table(21, n=60), MIXED_LIKELIHOOD, MIXED_PRIOR, MIXED_BLOCKS
    s = SUGS(N0=N0, likelihood=likelihood, prior=prior, n_init=1, shuffle=False).fit(X)
    d = DPSearch(N0=N0, likelihood=likelihood, prior=prior, beam_size=1, heuristic="trivial", bound_prior=False,
                 data_order="input").fit(X)
    np.testing.assert_array_equal(d.labels_, s.labels_)
    np.testing.assert_array_equal(d.labels_, naive_sugs(X, N0, blocks, np.arange(len(X))))
    assert d.n_clusters_ >= 2
    assert d.neg_log_joint_ == pytest.approx(s.neg_log_joint_, rel=1e-9)
    assert d.neg_log_joint_ == pytest.approx(naive_neg_log_joint(X, d.labels_, N0, blocks), rel=1e-9)
    np.testing.assert_array_equal(d.order_, np.arange(len(X)))
    # one pop per row plus the root; each pop pushes K + 1 children
    assert d.n_dequeued_ == len(X) + 1
    assert d.n_enqueued_ > 2 * len(X)


def naive_admissible_h(X, placed, z, rest, prior):
    """OTHER-SYSTEMS 2.2's h_adm in plain loops: minus the sum over the remaining rows of
    max over the prefix's clusters and a new one, and over j = 0..R-1 other remaining rows
    joining first, of -(D/2) ln 2 pi (v_j + s2) - d_j^2 / (2 (v_j + s2))."""
    mu0, s0, s2 = np.asarray(prior["mu0"], dtype=float), float(prior["sigma0_2"]), float(prior["sigma2"])
    D, R = X.shape[1], len(rest)
    M = max(float(np.linalg.norm(X[i])) for i in rest)
    clusters = [(0, np.zeros(D))]  # a new cluster
    for k in range(max(z) + 1 if len(z) else 0):
        rows = [placed[p] for p in range(len(placed)) if z[p] == k]
        clusters.append((len(rows), X[rows].sum(axis=0)))
    total = 0.0
    for i in rest:
        best = -np.inf
        for n_k, S_k in clusters:
            for j in range(R):
                v = 1.0 / (1.0 / s0 + (n_k + j) / s2)
                centre = v * (mu0 / s0 + S_k / s2)
                d = max(0.0, float(np.linalg.norm(X[i] - centre)) - v * j * M / s2)
                best = max(best, -0.5 * D * math.log(2 * math.pi * (v + s2)) - d * d / (2 * (v + s2)))
        total -= best
    return total


def naive_best_first(X, N0, blocks, order, beam, heuristic, bound_prior=True):
    """D07 Figure 1 written plainly: a list of (f, push number, prefix labels in search order),
    the minimum (ties: first pushed) popped, its children (each existing cluster, then a new
    one) pushed, and only the ``beam`` best (f, push number) kept. g = -ln p(x_prefix | c) by the
    naive predictives - ln P-hat (the EPPF's best completion, OTHER-SYSTEMS 2.2, or the
    prefix's own CRP without the bound); h = 0, the remaining rows' -ln H(x), or
    naive_admissible_h (a spherical_gaussian block). Returns (labels by row, pops, pushes)."""
    N, la = len(X), math.log(N0)
    cost_new = [_row_neg_log_predictive(X, i, [], blocks) for i in order]

    def f_of(z, nll):
        n, sizes = len(z), np.bincount(z) if len(z) else np.zeros(0, dtype=int)
        lp = len(sizes) * la + sum(math.lgamma(c) for c in sizes) + math.lgamma(N0)
        if bound_prior:
            R, L = N - n, (max(sizes) if len(sizes) else 0)
            if L == 0 and R > 0:
                lp += la
                R, L = R - 1, 1
            lp += max(R * la, math.lgamma(L + R) - math.lgamma(L)) if R else 0.0
            lp -= math.lgamma(N0 + N)
        else:
            lp -= math.lgamma(N0 + n)
        if n == N or heuristic == "trivial":
            h = 0.0
        elif heuristic == "inadmissible":
            h = sum(cost_new[n:])
        else:
            h = naive_admissible_h(X, [order[p] for p in range(n)], z, list(order[n:]), blocks[0][2])
        return nll - lp + h

    queue, pushes, pops = [(0.0, 0, [], 0.0)], 1, 0
    while True:
        queue.sort(key=lambda e: (e[0], e[1]))
        f, _, z, nll = queue.pop(0)
        pops += 1
        if len(z) == N:
            labels = np.empty(N, dtype=int)
            labels[np.asarray(order)] = z
            return labels, pops, pushes
        row, K = order[len(z)], (max(z) + 1 if z else 0)
        for k in range(K + 1):
            members = [order[p] for p, c in enumerate(z) if c == k]
            child = z + [k]
            child_nll = nll + _row_neg_log_predictive(X, row, members, blocks)
            queue.append((f_of(child, child_nll), pushes, child, child_nll))
            pushes += 1
        if beam is not None:
            queue.sort(key=lambda e: (e[0], e[1]))
            del queue[beam:]


@pytest.mark.parametrize("n,beam,heuristic,bound_prior,N0", [
    (14, 3, "trivial", True, 1.0), (14, 2, "inadmissible", True, 0.5), (14, 4, "trivial", False, 2.0),
    (14, 6, "inadmissible", False, 1.0), (14, 3, "admissible", True, 1.0),
    (9, None, "admissible", True, 1.0), (9, None, "admissible", False, 0.5), (8, None, "trivial", True, 2.0),
])
def test_search_follows_the_plain_reference(n, beam, heuristic, bound_prior, N0):
    """The same partition and the same numbers of pops and pushes as a plain list-based search,
    so f is computed as specified (g, the prior bound and each heuristic), the queue keeps the
    true best ``beam`` states (D5) and children are ranked as specified."""
    X = spherical_table(30, n=n)
    order = np.random.default_rng(31).permutation(len(X))
    ref_labels, pops, pushes = naive_best_first(X, N0, SPHERICAL_BLOCKS, order, beam, heuristic, bound_prior)
    assert pops > len(X) + 1  # the search backtracks: the beam matters
    est = DPSearch(N0=N0, likelihood="spherical_gaussian", prior=SPHERICAL_PRIOR, beam_size=beam,
                   heuristic=heuristic, bound_prior=bound_prior)
    last = list(est.iter_sweeps(X, order=order))[-1]
    np.testing.assert_array_equal(last.labels, ref_labels)
    assert last.summaries["search"]["dequeued"] == pops
    assert last.summaries["search"]["enqueued"] == pushes


def test_beam_one_reversed_order_is_sugs_in_reverse():
    X, likelihood, prior, blocks = mixed_table(22, n=50), MIXED_LIKELIHOOD, MIXED_PRIOR, MIXED_BLOCKS
    order = np.arange(len(X))[::-1]
    ref = naive_sugs(X, 1.0, blocks, order)
    assert not np.array_equal(ref, naive_sugs(X, 1.0, blocks, np.arange(len(X))))  # the order matters here
    d = DPSearch(N0=1.0, likelihood=likelihood, prior=prior, beam_size=1, heuristic="trivial", bound_prior=False,
                 data_order="reversed").fit(X)
    np.testing.assert_array_equal(d.order_, order)
    np.testing.assert_array_equal(d.labels_, ref)


def test_beam_one_ties_go_to_the_lowest_cluster_index():
    """The exact tie of test_sugs (row 2 matches each cluster in one column): the child pushed
    first, cluster 0, wins, as in SUGS."""
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    prior = {"alpha0": np.ones(3)}
    d = DPSearch(N0=1.0, likelihood="categorical", prior=prior, beam_size=1, heuristic="trivial", bound_prior=False,
                 data_order="input").fit(X)
    np.testing.assert_array_equal(d.labels_, naive_sugs(X, 1.0, [("categorical", [0, 1], prior)], range(4)))
    np.testing.assert_array_equal(d.labels_, [0, 1, 0, 0])


def test_marginal_order_is_increasing_prior_predictive():
    """D07 §3.4: rows by increasing ln H(x) (the prior predictive), i.e. decreasing -ln H."""
    X, likelihood, prior, blocks = mixed_table(23, n=40), MIXED_LIKELIHOOD, MIXED_PRIOR, MIXED_BLOCKS
    d = DPSearch(N0=1.0, likelihood=likelihood, prior=prior, beam_size=5).fit(X)
    cost = np.array([_row_neg_log_predictive(X, i, [], blocks) for i in range(len(X))])
    assert not np.all(np.diff(cost) <= 0)  # the input order is not already sorted
    np.testing.assert_array_equal(d.order_, np.argsort(-cost, kind="stable"))


# --------------------------------------------------------------------------- A* = exhaustive MAP
@pytest.mark.parametrize("seed,N0,data_order", [(2, 0.5, "marginal"), (5, 2.0, "input"), (3, 0.5, "reversed")])
def test_a_star_trivial_on_discrete_data_reaches_the_exhaustive_map(seed, N0, data_order):
    X = discrete_table(seed)
    ref_labels, ref = naive_map_partition(X, N0, DISCRETE_BLOCKS)
    greedy = naive_sugs(X, N0, DISCRETE_BLOCKS, np.arange(len(X)))
    assert naive_neg_log_joint(X, greedy, N0, DISCRETE_BLOCKS) > ref + 0.1  # greedy misses it: a real search
    d = DPSearch(N0=N0, likelihood=DISCRETE_LIKELIHOOD, prior=DISCRETE_PRIOR, beam_size=None, heuristic="trivial",
                 data_order=data_order).fit(X)
    assert d.neg_log_joint_ == pytest.approx(ref, rel=1e-9, abs=1e-9)
    assert naive_neg_log_joint(X, d.labels_, N0, DISCRETE_BLOCKS) == pytest.approx(ref, rel=1e-9, abs=1e-9)
    assert d.search_objective_ == pytest.approx(d.neg_log_joint_, rel=1e-12)  # EPPF prior: the same objective
    assert d.labels_.shape == (len(X),)


@pytest.mark.parametrize("seed,N0", [(2, 1.0), (1, 0.3), (4, 3.0)])
def test_a_star_on_spherical_data_reaches_the_exhaustive_map(seed, N0):
    X = spherical_table(seed)
    ref_labels, ref = naive_map_partition(X, N0, SPHERICAL_BLOCKS)
    pops = {}
    for heuristic in ("admissible", "trivial"):
        d = DPSearch(N0=N0, likelihood="spherical_gaussian", prior=SPHERICAL_PRIOR, beam_size=None,
                     heuristic=heuristic).fit(X)
        assert d.heuristic_ == heuristic
        assert d.neg_log_joint_ == pytest.approx(ref, rel=1e-9, abs=1e-9)
        assert naive_neg_log_joint(X, d.labels_, N0, SPHERICAL_BLOCKS) == pytest.approx(ref, rel=1e-9, abs=1e-9)
        pops[heuristic] = d.n_dequeued_
    assert pops["admissible"] <= pops["trivial"]  # the tighter bound never expands more here


# the prior sure that a cluster holds one code: the likelihood is ~0 for a row joining its own
# code's cluster, ln 3 for a new cluster and ~18 for mixing, so the slack of the bound is small
CODES = np.array([[0.0], [0.0], [0.0], [1.0], [0.0], [2.0], [0.0]])
CODES_BLOCKS = [("categorical", [0], {"alpha0": np.full(3, 1e-8)})]


def all_joints(X, N0, blocks):
    """Every set partition of the rows (one per line) and its exact joint."""
    P = np.array(list(naive_partitions(len(X))))
    return P, np.array([naive_neg_log_joint(X, z, N0, blocks) for z in P])


def completions_of(P, labels):
    """Which partitions in P complete the partial labelling ``labels`` (-1: row not placed):
    two placed rows share a cluster in the partition exactly when they share one in ``labels``."""
    rows = np.flatnonzero(labels >= 0)
    mask = np.ones(len(P), dtype=bool)
    for a_pos, a in enumerate(rows):
        for b in rows[a_pos + 1:]:
            mask &= (P[:, a] == P[:, b]) == (labels[a] == labels[b])
    return mask


@pytest.mark.parametrize("kind,heuristic,bound_prior,N0", [
    ("discrete", "trivial", True, 0.5), ("discrete", "trivial", False, 2.0),
    ("spherical", "admissible", True, 0.4), ("spherical", "admissible", False, 1.0),
    ("spherical", "trivial", True, 2.0),
    ("codes", "trivial", True, 0.05), ("codes", "trivial", True, 3.0),
])
def test_every_popped_state_of_a_star_is_a_lower_bound(kind, heuristic, bound_prior, N0):
    """Admissibility, state by state: the f of every state A* pops is at most the exact joint of
    the best completion of its prefix (found by enumeration), and the goal's f is the MAP."""
    if kind == "discrete":
        X, blocks = discrete_table(8, n=7), DISCRETE_BLOCKS
        params = dict(likelihood=DISCRETE_LIKELIHOOD, prior=DISCRETE_PRIOR)
    elif kind == "codes":  # a nearly noiseless code: clusters never mix codes, joining is free
        X, blocks = CODES, CODES_BLOCKS
        params = dict(likelihood="categorical", prior=CODES_BLOCKS[0][2], data_order="input")
    else:
        X, blocks = spherical_table(8, n=7), SPHERICAL_BLOCKS
        params = dict(likelihood="spherical_gaussian", prior=SPHERICAL_PRIOR)
    P, J = all_joints(X, N0, blocks)
    states = list(DPSearch(N0=N0, beam_size=None, heuristic=heuristic, bound_prior=bound_prior, block_size=1,
                           **params).iter_sweeps(X))
    assert len(states) > len(X) + 5  # a real search, not a straight line
    for st in states:
        best = J[completions_of(P, st.labels)].min()
        assert st.objective <= best + 1e-9 * (1 + abs(best)), (st.iteration, st.objective, best)
    assert states[-1].converged and states[-1].objective == pytest.approx(J.min(), rel=1e-9)
    assert states[-1].neg_log_joint == pytest.approx(J.min(), rel=1e-9)


@pytest.mark.parametrize("N0", [0.3, 1.0, 4.0])
def test_prior_bound_is_the_best_completion_when_the_data_say_nothing(N0):
    """Rows that every cluster predicts with probability ~1 (a bernoulli column of ones under a
    prior sure of ones): the joint is -ln CRP(z) alone, so the g of every popped state must be
    exactly the best completion's joint (OTHER-SYSTEMS 2.2's closed form, used in the search)."""
    X = np.ones((7, 1))
    blocks = [("bernoulli", [0], {"alpha0": 1e8, "beta0": 1e-8})]
    P, J = all_joints(X, N0, blocks)
    states = list(DPSearch(N0=N0, likelihood="bernoulli", prior=blocks[0][2], beam_size=None, heuristic="trivial",
                           block_size=1).iter_sweeps(X))
    assert len(states) == len(X) + 1  # a tight bound: straight to the goal
    for st in states[1:]:  # the root (nothing placed) is yielded with f = 0
        best = J[completions_of(P, st.labels)].min()
        assert st.objective == pytest.approx(best, abs=1e-7), (st.iteration, st.labels)


def test_admissible_bound_never_underestimates_a_remaining_predictive():
    """OTHER-SYSTEMS 2.2: for every completion of a prefix, each remaining row's
    ln H(x | earlier rows of its cluster) is at most the bound's value for that row."""
    X = spherical_table(7, n=8)
    mu0, s0, s2 = SPHERICAL_PRIOR["mu0"], SPHERICAL_PRIOR["sigma0_2"], SPHERICAL_PRIOR["sigma2"]
    prefix_labels = np.array([0, 1, 0])  # rows 0..2 placed; rows 3..7 remain, in this order
    rest = np.arange(3, 8)
    sizes = np.bincount(prefix_labels)
    sums = np.array([X[:3][prefix_labels == k].sum(axis=0) for k in range(len(sizes))])
    bound = _admissible_bound(X, mu0, s0, s2, sizes, sums, rest)
    worst_gap = np.inf

    def completions(labels, K, pos):
        if pos == len(rest):
            yield list(labels)
            return
        for k in range(K + 1):
            yield from completions(labels + [k], max(K, k + 1), pos + 1)

    # every completion: each remaining row joins a prefix cluster, an earlier new one, or a new one
    for tail in completions([], len(sizes), 0):
        full = list(prefix_labels) + tail
        for p, row in enumerate(rest):
            before = [r for r in range(row) if full[r] == full[row]]
            log_h = -naive_neg_log_predictive("spherical_gaussian", X[row], X[before], SPHERICAL_PRIOR)
            assert log_h <= bound[p] + 1e-12
            worst_gap = min(worst_gap, bound[p] - log_h)
    assert worst_gap < 1.0  # and it is not vacuous


# --------------------------------------------------------------------------- the prior's best completion
def brute_completion(sizes, R, log_alpha):
    """max over every way of placing R more rows (an existing cluster or a new one) of the
    change in K ln a + sum_k ln Gamma(n_k)."""
    if R == 0:
        return 0.0
    best = log_alpha + brute_completion(tuple(sizes) + (1,), R - 1, log_alpha)
    for k, n in enumerate(sizes):
        grown = tuple(sizes[:k]) + (n + 1,) + tuple(sizes[k + 1:])
        best = max(best, math.log(n) + brute_completion(grown, R - 1, log_alpha))
    return best


@pytest.mark.parametrize("sizes", [(), (1,), (2, 1), (1, 1, 1), (3, 1, 1), (4, 2)])
@pytest.mark.parametrize("alpha", [0.1, 1.0, 2.5, 7.0])
def test_eppf_completion_is_the_brute_force_maximum(sizes, alpha):
    for R in range(0, 6):
        expected = brute_completion(sizes, R, math.log(alpha))
        got = eppf_completion(R, max(sizes) if sizes else 0, math.log(alpha))
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-12), (sizes, R, alpha)


def test_eppf_completion_uses_both_branches():
    """Large alpha: R singletons win; small alpha: everything to the largest cluster."""
    assert eppf_completion(4, 2, math.log(10.0)) == pytest.approx(4 * math.log(10.0))
    assert eppf_completion(4, 2, math.log(0.1)) == pytest.approx(math.lgamma(6) - math.lgamma(2))


# --------------------------------------------------------------------------- Ewens's count-vector prior (D1)
def test_ewens_d1_example():
    assert math.exp(ewens_log_prob({2: 1, 1: 1}, 1.0)) == pytest.approx(1 / 2, rel=1e-12)
    assert math.exp(ewens_log_prob({3: 1}, 1.0)) == pytest.approx(1 / 3, rel=1e-12)
    assert math.exp(ewens_log_prob({1: 3}, 1.0)) == pytest.approx(1 / 6, rel=1e-12)


def integer_partitions(n, largest=None):
    largest = n if largest is None else largest
    if n == 0:
        yield []
        return
    for k in range(min(n, largest), 0, -1):
        for rest in integer_partitions(n - k, k):
            yield [k] + rest


@pytest.mark.parametrize("alpha", [0.3, 1.0, 4.0])
def test_ewens_sums_to_one_and_is_the_eppf_summed_over_partitions(alpha):
    N = 5
    total = sum(math.exp(ewens_log_prob(dict(Counter(p)), alpha)) for p in integer_partitions(N))
    assert total == pytest.approx(1.0, rel=1e-12)
    assert len(list(integer_partitions(N))) == 7
    # P(m) = sum of the CRP probabilities of the labelled partitions with counts m
    by_counts = Counter()
    for z in naive_partitions(N):
        sizes = np.bincount(z)
        log_p = (len(sizes) * math.log(alpha) + sum(math.lgamma(n) for n in sizes)
                 + math.lgamma(alpha) - math.lgamma(alpha + N))
        by_counts[tuple(sorted(Counter(sizes.tolist()).items()))] += math.exp(log_p)
    for key, p in by_counts.items():
        assert math.exp(ewens_log_prob(dict(key), alpha)) == pytest.approx(p, rel=1e-12)


def test_ewens_completion_places_every_row():
    m = ewens_completion({2: 1, 1: 1}, 4, 1.0)
    assert sum(i * c for i, c in m.items()) == 3 + 4
    assert ewens_completion({2: 1}, 0, 1.0) == {2: 1}


def test_ewens_search_objective_is_the_count_vector_prior():
    X = spherical_table(3, n=30)
    N0 = 1.0
    d = DPSearch(N0=N0, likelihood="spherical_gaussian", prior=SPHERICAL_PRIOR, beam_size=10,
                 prior_kind="ewens").fit(X)
    m = dict(Counter(np.bincount(d.labels_).tolist()))
    nll = neg_log_lik(X, d.labels_, N0, SPHERICAL_BLOCKS)
    assert d.search_objective_ == pytest.approx(nll - ewens_log_prob(m, N0), rel=1e-9)
    assert d.neg_log_joint_ == pytest.approx(naive_neg_log_joint(X, d.labels_, N0, SPHERICAL_BLOCKS), rel=1e-9)
    assert d.search_objective_ != pytest.approx(d.neg_log_joint_, rel=1e-6)  # the two priors differ


# --------------------------------------------------------------------------- behaviour
def three_separated_blobs(seed, per=10):
    rng = np.random.default_rng(seed)
    means = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    z = np.repeat(np.arange(3), per)
    return means[z] + rng.normal(0.0, 1.0, (3 * per, 2)), z


@pytest.mark.parametrize("likelihood", ["spherical_gaussian", "normal_wishart"])
def test_inadmissible_beam_pops_about_n_states_and_finds_the_groups(likelihood):
    X, z = three_separated_blobs(0)
    prior = default_prior(likelihood, X)
    d = DPSearch(N0=1.0, likelihood=likelihood, prior=prior, beam_size=10, heuristic="inadmissible").fit(X)
    assert len(X) + 1 <= d.n_dequeued_ <= len(X) + 10  # D07 L195: N to N + 5 (here N + 1, the root counted)
    assert d.n_clusters_ == 3
    assert adjusted_rand_score(z, d.labels_) == 1.0
    np.testing.assert_array_equal(d.predict(X), d.labels_)


def test_random_orders_keep_the_lowest_joint():
    X = spherical_table(5, n=20)
    est = DPSearch(N0=1.0, likelihood="spherical_gaussian", prior=SPHERICAL_PRIOR, beam_size=5, data_order="random",
                   n_init=3, random_state=0)
    d = est.fit(X)
    assert d.restart_values_.shape == (3,)
    for r in range(3):
        last = list(est.iter_sweeps(X, restart=r))[-1]
        assert d.restart_values_[r] == pytest.approx(
            naive_neg_log_joint(X, last.labels, 1.0, SPHERICAL_BLOCKS), rel=1e-9)
        assert sorted(last.summaries["search"]["order"].tolist()) == list(range(len(X)))
    assert d.neg_log_joint_ == pytest.approx(d.restart_values_.min(), rel=1e-12)
    assert naive_neg_log_joint(X, d.labels_, 1.0, SPHERICAL_BLOCKS) == pytest.approx(d.restart_values_.min(), rel=1e-9)


def test_admissible_heuristic_elsewhere_warns_and_falls_back():
    X = blobs(24, n=30)
    prior, _ = nw_spec(X)
    with pytest.warns(UserWarning, match="admissible"):
        d = DPSearch(N0=1.0, likelihood="normal_wishart", prior=prior, beam_size=10, heuristic="admissible").fit(X)
    assert d.heuristic_ == "inadmissible"
    ref = DPSearch(N0=1.0, likelihood="normal_wishart", prior=prior, beam_size=10, heuristic="inadmissible").fit(X)
    np.testing.assert_array_equal(d.labels_, ref.labels_)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no warning where it applies
        ok = DPSearch(N0=1.0, likelihood="spherical_gaussian", prior=SPHERICAL_PRIOR, beam_size=10,
                      heuristic="admissible").fit(spherical_table(0, n=20))
    assert ok.heuristic_ == "admissible"


def test_admissible_heuristic_with_gaps_falls_back():
    X = spherical_table(1, n=12)
    X[3, 1] = np.nan
    with pytest.warns(UserWarning, match="admissible"):
        d = DPSearch(N0=1.0, likelihood="spherical_gaussian", prior=SPHERICAL_PRIOR, beam_size=5,
                     heuristic="admissible").fit(X)
    assert d.heuristic_ == "inadmissible"


def test_a_star_out_of_expansions_says_to_set_a_beam():
    X = discrete_table(2)
    d = DPSearch(N0=1.0, likelihood=DISCRETE_LIKELIHOOD, prior=DISCRETE_PRIOR, beam_size=None, heuristic="trivial",
                 max_expansions=5)
    with pytest.raises(ValueError, match="beam_size"):
        d.fit(X)


def test_predict_gives_one_label_per_row():
    X, _ = three_separated_blobs(1)
    d = DPSearch(N0=1.0, likelihood="spherical_gaussian", prior=default_prior("spherical_gaussian", X),
                 beam_size=10).fit(X)
    new = np.array([[0.2, -0.1], [9.8, 0.3], [0.1, 10.2], [50.0, 50.0], [10.0, 0.0]])
    pred = d.predict(new)
    assert pred.shape == (5,)
    assert pred[3] == -1  # far from every cluster: a new one is more probable
    assert pred[0] == d.labels_[0] and pred[1] == d.labels_[10] and pred[2] == d.labels_[20]


@pytest.mark.parametrize("params,name", [
    ({"beam_size": 0}, "beam_size"),
    ({"heuristic": "x"}, "heuristic"),
    ({"prior_kind": "x"}, "prior_kind"),
    ({"data_order": "x"}, "data_order"),
    ({"max_expansions": 0}, "max_expansions"),
    ({"block_size": 0}, "block_size"),
])
def test_bad_parameters_name_themselves(params, name):
    with pytest.raises(ValueError, match=name):
        DPSearch(likelihood="spherical_gaussian", prior=SPHERICAL_PRIOR, **params).fit(spherical_table(0))


# --------------------------------------------------------------------------- cost: bounded before starting, no cliff
def test_a_star_with_the_trivial_heuristic_on_60_rows_is_refused_before_it_starts():
    """Issue 29: it used to stop with its message after 184 s and 2.5 GB."""
    X = np.random.default_rng(0).normal(size=(60, 1))
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="would pop at least") as info:
        DPSearch(beam_size=None, heuristic="trivial").fit(X)
    assert time.perf_counter() - t0 < 2.0
    for advice in ("beam_size", "heuristic='inadmissible'", "fewer rows", "max_expansions"):
        assert advice in str(info.value)


def test_the_admissible_heuristic_on_many_rows_is_refused_for_its_memory():
    X = np.random.default_rng(1).normal(size=(24_000, 2))
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="working memory") as info:
        DPSearch(likelihood="spherical_gaussian", heuristic="admissible").iter_sweeps(X)
    assert time.perf_counter() - t0 < 2.0
    assert "heuristic='inadmissible'" in str(info.value) and "rows" in str(info.value)


def test_a_slow_search_warns_before_it_starts():
    """The admissible heuristic on 1 000 rows (over 2 minutes before issue 29): a warning
    with the estimate and what to change, before any state is computed (iter_sweeps only
    validates)."""
    X = spherical_table(3, n=1000)
    t0 = time.perf_counter()
    with pytest.warns(UserWarning, match="estimated to take about") as record:
        DPSearch(likelihood="spherical_gaussian", prior=SPHERICAL_PRIOR, heuristic="admissible").iter_sweeps(X)
    assert time.perf_counter() - t0 < 2.0
    message = str(record[0].message)
    assert "smaller beam_size" in message and "heuristic='inadmissible'" in message and "fewer rows" in message


@pytest.mark.parametrize("settings", [{}, {"beam_size": 1}, {"heuristic": "trivial"}])
def test_the_default_search_on_24000_rows_neither_warns_nor_refuses(settings):
    X = np.random.default_rng(2).normal(size=(24_000, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPSearch(**settings).iter_sweeps(X)


def test_the_estimate_grows_with_rows_beam_and_a_star():
    cost = lambda N, beam, h="inadmissible": search_cost(N, 2, 1.0, beam, h)  # noqa: E731
    assert cost(1000, 10)["seconds_typical"] < cost(4000, 10)["seconds_typical"] < cost(4000, 100)["seconds_typical"]
    assert cost(200, 10, "admissible")["seconds_typical"] > 10 * cost(200, 10)["seconds_typical"]
    assert cost(30, None, "trivial")["pops_least"] > 1e4 > cost(30, None, "inadmissible")["pops_least"]
    for N, beam, h in [(50, 10, "trivial"), (1000, None, "inadmissible"), (10, None, "admissible")]:
        c = cost(N, beam, h)
        assert N + 1 <= c["pops_least"] <= c["pops_typical"] <= c["pops_most"]
        assert 0 < c["seconds_least"] <= c["seconds_typical"] <= c["seconds_most"]


def test_each_pop_adds_one_row_to_its_parents_statistics(monkeypatch):
    """The cause of the 24 000-row cliff: one shared prefix was rolled back to the common
    ancestor of consecutive pops, O(depth) per pop when the beam holds lineages that part early
    and take turns (here about 8 pops per row), O(N^2) in all. Now each popped state is its
    parent's kept statistics plus one row."""
    from mapdp_core.kernels import dp_mixture
    moved = []
    real = dp_mixture.move_rows

    def counting(rows, *args):
        moved.append(len(rows))
        return real(rows, *args)

    monkeypatch.setattr(dp_mixture, "move_rows", counting)
    X = np.random.default_rng(0).normal(size=(2000, 1))
    d = DPSearch(beam_size=10).fit(X)
    assert d.n_dequeued_ > 5 * len(X)  # lineages take turns
    assert set(moved) == {1} and len(moved) == d.n_dequeued_ - 1  # every pop but the root's: one row


def test_24000_rows_complete_in_seconds():
    """Issue 29: 16 000 rows took 3 s, 24 000 gave no result in 150 s."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24_000, 1)) + 5.0 * rng.choice(3, size=24_000)[:, None]
    DPSearch(beam_size=2).fit(X[:50])  # compiled already
    t0 = time.perf_counter()
    d = DPSearch().fit(X)
    assert time.perf_counter() - t0 < 40.0  # about 5 s on a shared two-core machine
    assert d.labels_.shape == (24_000,) and d.labels_.min() >= 0


def test_statistics_rebuilt_from_the_prior_give_the_same_search(monkeypatch):
    """A* keeps its parents' statistics within MAX_SNAPSHOT_BYTES and rebuilds the others from
    the prior in visiting order: the same numbers, bit for bit, so the same search."""
    from mapdp_core.kernels import dp_mixture
    from mapdp_core.models import search
    X = spherical_table(11, n=9)
    params = dict(N0=1.0, likelihood="spherical_gaussian", prior=SPHERICAL_PRIOR, beam_size=None, heuristic="trivial")
    kept = list(DPSearch(**params, block_size=1).iter_sweeps(X))
    moved = []
    real = dp_mixture.move_rows
    monkeypatch.setattr(dp_mixture, "move_rows", lambda rows, *a: (moved.append(len(rows)), real(rows, *a))[1])
    monkeypatch.setattr(search, "MAX_SNAPSHOT_BYTES", 0)
    rebuilt = list(DPSearch(**params, block_size=1).iter_sweeps(X))
    assert max(moved) > 1  # rebuilds happened
    assert len(kept) == len(rebuilt) > 20
    for a, b in zip(kept, rebuilt):
        np.testing.assert_array_equal(a.labels, b.labels)
        assert a.objective == b.objective and a.neg_log_joint == b.neg_log_joint


def test_a_star_stops_when_its_queue_outgrows_the_memory_bound(monkeypatch):
    from mapdp_core.models import search
    monkeypatch.setattr(search, "MAX_QUEUE_BYTES", 50 * search.QUEUE_ENTRY_BYTES)
    with pytest.raises(ValueError, match="queue holds"):
        DPSearch(N0=1.0, likelihood=DISCRETE_LIKELIHOOD, prior=DISCRETE_PRIOR, beam_size=None,
                 heuristic="trivial").fit(discrete_table(2, n=12))
