"""SUGS (mapdp_core.models.sugs) against the slow reference written from the maths (tests/naive.py):
identical labels for a fixed visiting order, the exact joint, the concentration grid's
posterior, the in-sample LPML, restarts and parameter checks (OTHER-SYSTEMS 1.2 and 1.6)."""
import math

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_t

from mapdp_core import default_prior
from mapdp_core.models.sugs import SUGS
from naive import _row_neg_log_predictive, naive_neg_log_joint, naive_sugs


# --------------------------------------------------------------------------- data
def blobs(seed, n=90):
    """Three 2-D Gaussian groups of unequal size and spread."""
    rng = np.random.default_rng(seed)
    sizes = [n // 2, n // 3, n - n // 2 - n // 3]
    means = [[0.0, 0.0], [5.0, 4.0], [-4.0, 5.0]]
    scales = [1.0, 0.8, 0.5]
    return np.vstack([rng.normal(m, s, (k, 2)) for m, s, k in zip(means, scales, sizes)])


def nw_spec(X):
    """The Normal-Wishart prior passed explicitly (so no automatic search runs) and its block."""
    p = default_prior("normal_wishart", X)
    prior = {"m0": p["m0"], "c0": p["c0"], "a0": p["a0"], "B0": p["B0"]}
    return prior, [("normal_wishart", [0, 1], prior)]


def mixed_table(seed, n=80, missing=0.1):
    """A Normal-Wishart block (columns 0-1, no gaps), then normal_gamma, categorical(3) and
    poisson columns with gaps (NaN)."""
    rng = np.random.default_rng(seed)
    z = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    mu = np.array([[0.0, 0.0], [4.0, 1.0], [-2.0, 5.0]])
    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]])
    X = np.column_stack([
        mu[z, 0] + rng.normal(size=n), mu[z, 1] + rng.normal(size=n),
        rng.normal(size=n) + 3.0 * z,
        [float(rng.choice(3, p=probs[k])) for k in z],
        rng.poisson(np.array([1.0, 5.0, 10.0])[z]).astype(float),
    ])
    for j in (2, 3, 4):
        X[rng.random(n) < missing, j] = np.nan
    assert np.isnan(X[:, 2:]).any(axis=0).all()  # every non-block column has a gap
    return X


MIXED_BLOCKS = [
    ("normal_wishart", [0, 1], {"m0": np.array([0.5, 1.5]), "c0": 0.1, "a0": 4.0, "B0": np.eye(2) * 0.5}),
    ("normal_gamma", [2], {"m0": 3.0, "c0": 0.1, "a0": 2.0, "b0": 1.0}),
    ("categorical", [3], {"alpha0": np.array([1.0, 1.0, 1.0])}),
    ("poisson", [4], {"alpha0": 3.0, "beta0": 0.5}),
]
MIXED_LIKELIHOOD = {tuple(c) if len(c) > 1 else c[0]: fam for fam, c, _ in MIXED_BLOCKS}
MIXED_PRIOR = {tuple(c) if len(c) > 1 else c[0]: p for _, c, p in MIXED_BLOCKS}


def case(name, seed):
    """(X, likelihood, prior, blocks) of one test case."""
    if name == "nw":
        X = blobs(seed)
        prior, blocks = nw_spec(X)
        return X, "normal_wishart", prior, blocks
    return mixed_table(seed), MIXED_LIKELIHOOD, MIXED_PRIOR, MIXED_BLOCKS


def log_eppf(sizes, alpha):
    """ln of the CRP probability of a labelled partition with cluster sizes ``sizes``, by hand:
    alpha^K prod_h (n_h - 1)! / (alpha (alpha + 1) ... (alpha + N - 1))."""
    N = int(sum(sizes))
    out = len(sizes) * math.log(alpha) + sum(math.log(math.factorial(int(n) - 1)) for n in sizes)
    return out - sum(math.log(alpha + i) for i in range(N))


def sizes_of(labels):
    return np.bincount(np.asarray(labels))


# --------------------------------------------------------------------------- one pass, fixed order
@pytest.mark.parametrize("name,seed,N0", [("nw", 0, 1.0), ("nw", 1, 5.0), ("mixed", 2, 1.5), ("mixed", 3, 0.5)])
def test_labels_and_joint_match_the_reference_for_a_fixed_order(name, seed, N0):
    X, likelihood, prior, blocks = case(name, seed)
    order = np.random.default_rng(100 + seed).permutation(len(X))
    states = list(SUGS(N0=N0, likelihood=likelihood, prior=prior, n_init=1, shuffle=False)
                  .iter_sweeps(X, order=order))
    ref = naive_sugs(X, N0, blocks, order)
    last = states[-1]
    np.testing.assert_array_equal(last.labels, ref)
    assert last.n_clusters == ref.max() + 1 >= 2
    np.testing.assert_array_equal(last.cluster_sizes, sizes_of(ref))
    joint = naive_neg_log_joint(X, ref, N0, blocks)
    assert last.objective == pytest.approx(joint, rel=1e-9)
    assert last.neg_log_joint == pytest.approx(joint, rel=1e-9)
    assert last.converged and not any(s.converged for s in states[:-1])


def test_the_visiting_order_matters_and_is_followed():
    """Two orders give two different partitions, each the reference's for its order (so the
    order argument is honoured, not replaced by input order)."""
    X, likelihood, prior, blocks = case("mixed", 4)
    orders = [np.arange(len(X)), np.random.default_rng(5).permutation(len(X))]
    refs = [naive_sugs(X, 1.0, blocks, o) for o in orders]
    assert not np.array_equal(refs[0], refs[1])
    for order, ref in zip(orders, refs):
        last = list(SUGS(N0=1.0, likelihood=likelihood, prior=prior, n_init=1).iter_sweeps(X, order=order))[-1]
        np.testing.assert_array_equal(last.labels, ref)


@pytest.mark.parametrize("block_size", [1, 7])
def test_intermediate_states_label_only_the_visited_rows(block_size):
    """Each state: the rows visited so far carry their final label (no revision), the others
    -1; its joint is the exact joint of the visited rows alone."""
    X, likelihood, prior, blocks = case("mixed", 6)
    X = X[:40]
    N0 = 2.0
    order = np.random.default_rng(7).permutation(len(X))
    ref = naive_sugs(X, N0, blocks, order)
    states = list(SUGS(N0=N0, likelihood=likelihood, prior=prior, n_init=1, block_size=block_size)
                  .iter_sweeps(X, order=order))
    assert len(states) == math.ceil(len(X) / block_size)
    done = 0
    for s in states:
        assert s.n_changed == min(block_size, len(X) - done)
        done += s.n_changed
        seen, unseen = order[:done], order[done:]
        np.testing.assert_array_equal(s.labels[seen], ref[seen])
        assert (s.labels[unseen] == -1).all()
        assert s.n_clusters == ref[seen].max() + 1
        joint = naive_neg_log_joint(X[seen], ref[seen], N0, blocks)
        assert s.neg_log_joint == pytest.approx(joint, rel=1e-9)
        assert s.objective == pytest.approx(joint, rel=1e-9)
    assert done == len(X)


def test_default_frames_cut_the_pass_into_about_twenty_states():
    X, likelihood, prior, blocks = case("nw", 8)
    states = list(SUGS(N0=1.0, likelihood=likelihood, prior=prior).iter_sweeps(X, order=np.arange(len(X))))
    assert len(states) == math.ceil(len(X) / math.ceil(len(X) / 20))
    assert sum(s.n_changed for s in states) == len(X)


# --------------------------------------------------------------------------- fit
@pytest.mark.parametrize("name", ["nw", "mixed"])
def test_fit_without_shuffle_visits_the_rows_in_input_order(name):
    X, likelihood, prior, blocks = case(name, 9)
    N0 = 1.0
    m = SUGS(N0=N0, likelihood=likelihood, prior=prior, n_init=1, shuffle=False).fit(X)
    ref = naive_sugs(X, N0, blocks, np.arange(len(X)))
    assert not np.array_equal(ref, naive_sugs(X, N0, blocks, np.arange(len(X))[::-1]))  # order matters here
    assert m.labels_.shape == (len(X),)
    np.testing.assert_array_equal(m.labels_, ref)
    assert m.n_clusters_ == ref.max() + 1
    np.testing.assert_array_equal(m.cluster_sizes_, sizes_of(ref))
    assert m.neg_log_joint_ == pytest.approx(naive_neg_log_joint(X, ref, N0, blocks), rel=1e-9)
    assert m.N0_ == N0 and m.N0_posterior_ is None
    assert m.restart_values_.shape == (1,)
    assert m.restart_values_[0] == pytest.approx(m.neg_log_joint_, rel=1e-12)


def test_restarts_keep_the_order_with_the_lowest_joint():
    X, likelihood, prior, blocks = case("mixed", 10)
    N0 = 1.0
    est = SUGS(N0=N0, likelihood=likelihood, prior=prior, n_init=5, random_state=3)
    m = est.fit(X)
    values = m.restart_values_
    assert values.shape == (5,)
    assert len(np.unique(np.round(values, 9))) > 1  # the orders differ, so the choice is real
    # every restart's value is the exact joint of that restart's partition
    for r in range(5):
        last = list(est.iter_sweeps(X, restart=r))[-1]
        assert values[r] == pytest.approx(naive_neg_log_joint(X, last.labels, N0, blocks), rel=1e-9)
    best = int(np.argmin(values))
    kept = list(est.iter_sweeps(X, restart=best))[-1]
    np.testing.assert_array_equal(m.labels_, kept.labels)
    assert m.neg_log_joint_ == pytest.approx(values.min(), rel=1e-12)
    assert naive_neg_log_joint(X, m.labels_, N0, blocks) == pytest.approx(values.min(), rel=1e-9)


def test_without_shuffle_only_the_first_restart_is_in_input_order():
    X, likelihood, prior, blocks = case("mixed", 25)
    est = SUGS(N0=1.0, likelihood=likelihood, prior=prior, n_init=3, shuffle=False, random_state=2)
    first = list(est.iter_sweeps(X, restart=0))[-1]
    np.testing.assert_array_equal(first.labels, naive_sugs(X, 1.0, blocks, np.arange(len(X))))
    others = [list(est.iter_sweeps(X, restart=r))[-1].labels for r in (1, 2)]
    assert not np.array_equal(others[0], others[1])  # the later ones are shuffled
    m = est.fit(X)
    assert m.neg_log_joint_ == pytest.approx(m.restart_values_.min(), rel=1e-12)


# --------------------------------------------------------------------------- concentration grid
@pytest.mark.parametrize("name,seed", [("nw", 11), ("mixed", 12)])
def test_grid_labels_and_posterior_match_the_reference(name, seed):
    X, likelihood, prior, blocks = case(name, seed)
    grid, weights = [0.3, 1.0, 3.0, 10.0], [1.0, 2.0, 3.0, 4.0]
    m = SUGS(likelihood=likelihood, prior=prior, n_init=1, shuffle=False, N0_grid=grid,
             N0_grid_weights=weights).fit(X)
    ref = naive_sugs(X, grid, blocks, np.arange(len(X)), weights=weights)
    np.testing.assert_array_equal(m.labels_, ref)
    # posterior: prior weight x EPPF(z | alpha_l), normalised
    log_post = np.log(weights) + np.array([log_eppf(sizes_of(ref), a) for a in grid])
    post = np.exp(log_post - logsumexp(log_post))
    np.testing.assert_allclose(m.N0_posterior_, post, rtol=1e-9, atol=1e-15)
    assert m.N0_ == grid[int(np.argmax(post))]
    assert m.neg_log_joint_ == pytest.approx(naive_neg_log_joint(X, ref, m.N0_, blocks), rel=1e-9)


def test_grid_allocation_differs_from_a_fixed_concentration():
    """The grid averages the allocation weights over the running posterior: on this data the
    partition differs from a pass at any single grid value, and the module follows the grid
    reference, not a fixed-N0 one."""
    X, likelihood, prior, blocks = case("mixed", 13)
    grid, weights = [0.01, 10.0], [0.5, 0.5]
    order = np.arange(len(X))
    ref = naive_sugs(X, grid, blocks, order, weights=weights)
    assert all(not np.array_equal(ref, naive_sugs(X, a, blocks, order)) for a in grid)
    m = SUGS(likelihood=likelihood, prior=prior, n_init=1, shuffle=False, N0_grid=grid,
             N0_grid_weights=weights).fit(X)
    np.testing.assert_array_equal(m.labels_, ref)


def test_one_value_grid_is_plain_N0():
    X, likelihood, prior, blocks = case("mixed", 14)
    plain = SUGS(N0=2.5, likelihood=likelihood, prior=prior, n_init=1, shuffle=False).fit(X)
    grid = SUGS(likelihood=likelihood, prior=prior, n_init=1, shuffle=False, N0_grid=[2.5]).fit(X)
    np.testing.assert_array_equal(grid.labels_, plain.labels_)
    np.testing.assert_array_equal(grid.labels_, naive_sugs(X, 2.5, blocks, np.arange(len(X))))
    assert grid.N0_ == 2.5
    np.testing.assert_allclose(grid.N0_posterior_, [1.0])
    assert grid.neg_log_joint_ == pytest.approx(plain.neg_log_joint_, rel=1e-12)
    assert grid.lpml_ == pytest.approx(plain.lpml_, rel=1e-12)


# --------------------------------------------------------------------------- LPML
def nw_log_predictive_scipy(x, data, prior):
    """ln f(x | data) for the Normal-Wishart prior, from the posterior and scipy's multivariate t
    (E[Lambda] = a B; predictive precision c nu / (c + 1) B, nu = a - D + 1)."""
    m0, c0, a0, B0 = (np.asarray(prior[k], dtype=float) for k in ("m0", "c0", "a0", "B0"))
    n, D = data.shape
    xbar = data.mean(axis=0) if n else np.zeros(D)
    S = (data - xbar).T @ (data - xbar)
    c, a = c0 + n, a0 + n
    m = (c0 * m0 + n * xbar) / c
    B = np.linalg.inv(np.linalg.inv(B0) + S + (c0 * n / c) * np.outer(xbar - m0, xbar - m0))
    nu = a - D + 1
    return multivariate_t(loc=m, shape=np.linalg.inv(c * nu / (c + 1) * B), df=nu).logpdf(x)


def test_lpml_one_concentration_normal_wishart_by_scipy():
    X, likelihood, prior, blocks = case("nw", 15)
    N0, N = 2.0, len(X)
    m = SUGS(N0=N0, likelihood=likelihood, prior=prior, n_init=1, shuffle=False).fit(X)
    z = m.labels_
    K = z.max() + 1
    assert K >= 2
    n = sizes_of(z)
    total = 0.0
    for i in range(N):
        dens = sum(n[h] / (N0 + N) * math.exp(nw_log_predictive_scipy(X[i], X[z == h], prior)) for h in range(K))
        dens += N0 / (N0 + N) * math.exp(nw_log_predictive_scipy(X[i], X[:0], prior))
        total += math.log(dens)
    assert m.lpml_ == pytest.approx(total, rel=1e-9)


def naive_lpml(X, z, grid, weights, blocks):
    """sum_i ln[sum_h pi_h f(x_i | all rows of cluster h) + pi_new f(x_i | prior)] with
    pi_h = sum_l phi_l n_h / (a_l + N), pi_new = sum_l phi_l a_l / (a_l + N) and phi the grid's
    posterior computed by hand (prior weight x EPPF), with the naive predictives."""
    grid, weights = np.asarray(grid, dtype=float), np.asarray(weights, dtype=float)
    N, K = len(X), z.max() + 1
    n = sizes_of(z)
    phi = weights * np.exp([log_eppf(n, a) for a in grid])
    phi /= phi.sum()
    pi = [float(np.sum(phi * n[h] / (grid + N))) for h in range(K)]
    pi_new = float(np.sum(phi * grid / (grid + N)))
    assert sum(pi) + pi_new == pytest.approx(1.0)
    members = [np.flatnonzero(z == h) for h in range(K)]
    total = 0.0
    for i in range(N):
        dens = sum(pi[h] * math.exp(-_row_neg_log_predictive(X, i, members[h], blocks)) for h in range(K))
        dens += pi_new * math.exp(-_row_neg_log_predictive(X, i, [], blocks))
        total += math.log(dens)
    return total


def test_lpml_with_a_grid_on_the_mixed_table_by_the_naive_predictive():
    X, likelihood, prior, blocks = case("mixed", 16)
    grid, weights = [0.5, 2.0, 8.0], [0.2, 0.5, 0.3]
    m = SUGS(likelihood=likelihood, prior=prior, n_init=1, shuffle=False, N0_grid=grid,
             N0_grid_weights=weights).fit(X)
    assert m.n_clusters_ >= 2
    assert m.lpml_ == pytest.approx(naive_lpml(X, m.labels_, grid, weights, blocks), rel=1e-9)


def test_select_lpml_keeps_the_order_with_the_highest_lpml():
    X, likelihood, prior, blocks = case("mixed", 17)
    est = SUGS(N0=1.0, likelihood=likelihood, prior=prior, n_init=4, random_state=1, select="lpml")
    m = est.fit(X)
    assert m.restart_values_.shape == (4,)
    # each restart's value is minus the LPML of that restart's partition
    lpmls = [naive_lpml(X, np.asarray(list(est.iter_sweeps(X, restart=r))[-1].labels), [1.0], [1.0], blocks)
             for r in range(4)]
    assert len(np.unique(np.round(lpmls, 9))) > 1  # the orders differ, so the choice is real
    np.testing.assert_allclose(-m.restart_values_, lpmls, rtol=1e-9)
    assert m.lpml_ == pytest.approx(max(lpmls), rel=1e-9)
    assert naive_lpml(X, m.labels_, [1.0], [1.0], blocks) == pytest.approx(max(lpmls), rel=1e-9)
    # the joint is still reported, for the kept partition
    assert m.neg_log_joint_ == pytest.approx(naive_neg_log_joint(X, m.labels_, 1.0, blocks), rel=1e-9)


# --------------------------------------------------------------------------- parameters
@pytest.mark.parametrize("params,name", [
    ({"select": "x"}, "select"),
    ({"N0_grid": [-1.0]}, "N0_grid"),
    ({"N0_grid": []}, "N0_grid"),
    ({"N0_grid": [1.0, 2.0], "N0_grid_weights": [1.0]}, "N0_grid_weights"),
    ({"block_size": 0}, "block_size"),
])
def test_bad_parameters_name_themselves(params, name):
    X, likelihood, prior, _ = case("nw", 18)
    est = SUGS(likelihood=likelihood, prior=prior, **params)
    with pytest.raises(ValueError, match=name):
        est.fit(X)
    with pytest.raises(ValueError, match=name):
        est.iter_sweeps(X)  # validated before the generator is returned


def test_predict_gives_one_label_per_row():
    X, likelihood, prior, _ = case("nw", 19)
    m = SUGS(N0=1.0, likelihood=likelihood, prior=prior, n_init=1, shuffle=False).fit(X)
    new = X[:7] + 0.01
    pred = m.predict(new)
    assert pred.shape == (7,)
    assert set(pred.tolist()) <= set(range(-1, m.n_clusters_))


def test_ties_go_to_the_lowest_cluster_index():
    """Row 2 matches each of the two clusters in one column of two: an exact tie, which goes
    to cluster 0 (as in the reference); a new cluster would cost more at N0 = 1."""
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    prior = {"alpha0": np.ones(3)}
    blocks = [("categorical", [0, 1], prior)]
    ref = naive_sugs(X, 1.0, blocks, np.arange(4))
    np.testing.assert_array_equal(ref, [0, 1, 0, 0])
    m = SUGS(N0=1.0, likelihood="categorical", prior=prior, n_init=1, shuffle=False).fit(X)
    np.testing.assert_array_equal(m.labels_, ref)
