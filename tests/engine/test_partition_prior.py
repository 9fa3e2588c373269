"""The mixture of finite mixtures (Miller & Harrison, JASA 2018) as MAP-DP's prior on partitions,
checked against slow, obvious references written here from the paper's partition distribution: V_n(t) summed
term by term in plain floats, ln p(z) of a whole partition, and a sweep that gives each row to the
option of the largest ln p(X, z) computed from that whole-partition prior."""
import math

import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP, default_prior
from mapdp_core.engine.partition_prior import (DirichletProcess, MixtureOfFiniteMixtures, as_partition_prior,
                                               mfm_log_v)
from naive import (_row_neg_log_predictive, naive_cluster_neg_log_marginal, naive_mapdp, naive_neg_log_joint,
                   naive_partitions)
from test_exactness import MIXED_SPEC, mixed_data, three_shapes

PRIORS = [MixtureOfFiniteMixtures(), MixtureOfFiniteMixtures(0.5, "poisson", 3.0),
          MixtureOfFiniteMixtures(2.0, "geometric", 1.5), MixtureOfFiniteMixtures(1.0, "poisson", 1.0)]


def slow_log_p_k(prior, k: int) -> float:
    if prior.k_prior == "geometric":
        p = 1.0 / prior.k_mean
        return math.log(p) + (k - 1) * math.log(1.0 - p)
    lam = prior.k_mean - 1.0
    if lam == 0.0:
        return 0.0 if k == 1 else -math.inf
    return (k - 1) * math.log(lam) - lam - math.lgamma(k)


def slow_log_v(prior, n: int, t: int, k_max: int = 3000) -> float:
    """ln sum_k k_(t) / (gamma k)^(n) p_K(k), term by term, k up to ``k_max``."""
    g = prior.gamma
    terms = []
    for k in range(max(t, 1), k_max):
        falling = math.lgamma(k + 1) - math.lgamma(k - t + 1)
        rising = math.lgamma(g * k + n) - math.lgamma(g * k)
        terms.append(falling - rising + slow_log_p_k(prior, k))
    top = max(terms)
    if top == -math.inf:
        return -math.inf
    return top + math.log(sum(math.exp(x - top) for x in terms))


def slow_log_prob(prior, sizes) -> float:
    n, t = int(sum(sizes)), len(sizes)
    return slow_log_v(prior, n, t) + sum(math.lgamma(s + prior.gamma) - math.lgamma(prior.gamma) for s in sizes)


@pytest.mark.parametrize("prior", PRIORS)
@pytest.mark.parametrize("n", [1, 2, 7, 40, 300])
def test_log_v_equals_the_term_by_term_sum(prior, n):
    ours = mfm_log_v(n, min(n, 12) + 1, prior.gamma, prior.k_prior, prior.k_mean)
    for t in range(0, min(n, 12) + 2):
        want = slow_log_v(prior, n, t) if t <= n else -math.inf
        if want == -math.inf:
            assert ours[t] == -math.inf
        else:
            assert ours[t] == pytest.approx(want, rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("prior", PRIORS + [DirichletProcess(0.7), DirichletProcess(5.0)])
def test_the_partition_probabilities_sum_to_one(prior):
    for n in (1, 3, 6):
        total = sum(math.exp(prior.log_prob(np.bincount(z))) for z in naive_partitions(n))
        assert total == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("prior", PRIORS[:3] + [DirichletProcess(2.5)])
def test_the_restaurant_weights_are_ratios_of_whole_partition_probabilities(prior):
    sizes = np.array([4.0, 1.0, 7.0])
    n = int(sizes.sum())
    # the sweep's weights: a row of a partition of n rows, the others in `sizes` less one row of cluster 0
    others = sizes.copy()
    others[0] -= 1
    base = slow_log_prob(prior, others.tolist() + [1]) if isinstance(prior, MixtureOfFiniteMixtures) else None
    weights = prior.new_cluster_log_weights(n, 5)
    new_w = weights[min(3, len(weights) - 1)]  # three other clusters (the kernel reads the last entry beyond)
    for k in range(3):
        join = others.copy()
        join[k] += 1
        if isinstance(prior, MixtureOfFiniteMixtures):
            ratio = slow_log_prob(prior, join.tolist()) - base
            assert math.log(others[k] + prior.gamma) - new_w == pytest.approx(ratio, abs=1e-9)
        else:
            ratio = prior.log_prob(join) - prior.log_prob(others.tolist() + [1])
            assert math.log(others[k]) - new_w == pytest.approx(ratio, abs=1e-9)
    # prediction: one more row's weights sum to one and are ratios of probabilities of n + 1 rows
    existing, new = prior.predictive_log_weights(sizes)
    assert np.exp(existing).sum() + math.exp(new) == pytest.approx(1.0, abs=1e-12)
    for k in range(3):
        more = sizes.copy()
        more[k] += 1
        assert existing[k] == pytest.approx(prior.log_prob(more) - prior.log_prob(sizes), abs=1e-9)
    assert new == pytest.approx(prior.log_prob(sizes.tolist() + [1]) - prior.log_prob(sizes), abs=1e-9)


def test_a_prior_of_one_component_never_opens_a_second_cluster():
    prior = MixtureOfFiniteMixtures(k_prior="poisson", k_mean=1.0)  # K - 1 ~ Poisson(0): K = 1
    weights = prior.new_cluster_log_weights(50, 6)
    assert np.isfinite(weights[0]) and np.all(weights[1:] == -np.inf)
    X = three_shapes(2, n=60)
    m = MAPDP(likelihood="normal_wishart", prior=None, partition_prior=prior, n_init=1, random_state=0).fit(X)
    assert m.n_components_ == 1 and np.isfinite(m.neg_log_joint_)


def test_the_dirichlet_process_is_the_crp_of_the_papers():
    sizes = np.array([3.0, 5.0, 1.0])
    N0 = 1.7
    want = 3 * math.log(N0) + sum(math.lgamma(s) for s in sizes) + math.lgamma(N0) - math.lgamma(N0 + 9)
    assert as_partition_prior(N0).log_prob(sizes) == pytest.approx(want, rel=1e-14)
    assert as_partition_prior(N0) == DirichletProcess(1.7)


def slow_mfm_sweeps(X, blocks, prior, labels, order, max_sweeps=50):
    """Sweeps that give each row, in ``order``, to the option (a cluster of the other rows, or a
    new one) of the largest ln p(X, z): the data's part by the row's predictive given the
    cluster (the chain rule), the prior's by ln p(z) of the whole partition (:func:`slow_log_prob`).
    Until a sweep moves no row."""
    labels = np.asarray(labels).copy()
    N = len(labels)
    for _ in range(max_sweeps):
        moved = 0
        for i in order:
            others = [j for j in range(N) if j != i]
            options = sorted(set(labels[others].tolist()))
            best, best_k = math.inf, None
            for k in options + [max(options) + 1]:
                members = [j for j in others if labels[j] == k]
                trial = labels.copy()
                trial[i] = k
                sizes = np.bincount(trial)
                sizes = sizes[sizes > 0]
                cost = _row_neg_log_predictive(X, i, members, blocks) - slow_log_prob(prior, sizes.tolist())
                if cost < best:
                    best, best_k = cost, k
            alone = labels[i] not in options
            if best_k != labels[i] and not (alone and best_k not in options):  # a row alone stays alone
                moved += 1
                labels[i] = best_k
            _, labels = np.unique(labels, return_inverse=True)
        if moved == 0 or max_sweeps == 1:
            return labels
    raise AssertionError("the slow sweeps did not converge")


def canonical(labels):
    _, first = np.unique(labels, return_index=True)
    order = np.argsort(first)
    out = np.empty(len(labels), dtype=int)
    for new, old in enumerate(np.unique(labels)[order]):
        out[labels == old] = new
    return out


def slow_neg_log_joint(X, labels, blocks, prior):
    sizes = [int(np.sum(labels == k)) for k in np.unique(labels)]
    data = sum(naive_cluster_neg_log_marginal(X, np.flatnonzero(labels == k), blocks) for k in np.unique(labels))
    return data - slow_log_prob(prior, sizes)


@pytest.mark.parametrize("prior", [MixtureOfFiniteMixtures(), MixtureOfFiniteMixtures(0.5, "poisson", 3.0)])
def test_the_sweep_is_the_slow_sweep_on_a_normal_wishart_block(prior):
    X = three_shapes(5, n=60)
    p = default_prior("normal_wishart", X)
    start = np.random.default_rng(3).integers(0, 4, len(X))
    blocks = [("normal_wishart", [0, 1], p)]
    # shuffle=False: the estimator visits the rows in input order, as the reference does here
    want = slow_mfm_sweeps(X, blocks, prior, start, np.arange(len(X)))
    m = MAPDP(likelihood="normal_wishart", prior={k: p[k] for k in ("m0", "c0", "a0", "B0")}, partition_prior=prior,
              n_init=1, shuffle=False, init=start, tol=0.0, max_iter=50).fit(X)
    np.testing.assert_array_equal(canonical(m.labels_), canonical(want))
    assert m.neg_log_joint_ == pytest.approx(slow_neg_log_joint(X, want, blocks, prior), rel=1e-9)
    assert m.partition_prior_ == prior and math.isnan(m.N0_)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("prior", [MixtureOfFiniteMixtures(3.0, "poisson", 2.0), MixtureOfFiniteMixtures(0.3)])
def test_one_sweep_from_many_small_clusters_is_the_slow_sweep(prior, seed):
    """Overlapping rows, started in eight small clusters: most rows move in the first sweep, and
    each move weighs small clusters, where N_k + gamma and the new cluster's V ratio decide."""
    rng = np.random.default_rng(seed)
    X = rng.normal(0, 1, (40, 2)) + np.repeat([[0, 0], [1.5, 0]], 20, axis=0)
    p = default_prior("normal_wishart", X)
    blocks = [("normal_wishart", [0, 1], p)]
    given = {k: p[k] for k in ("m0", "c0", "a0", "B0")}
    # eight small clusters, or every row alone (then each row is visited alone, and the new
    # cluster's weight must count the clusters of the other rows only)
    start = rng.integers(0, 8, len(X)) if seed < 2 else np.arange(len(X))
    for sweeps in (1, 50):
        want = slow_mfm_sweeps(X, blocks, prior, start, np.arange(len(X)), max_sweeps=sweeps)
        m = MAPDP(likelihood="normal_wishart", prior=given, partition_prior=prior, n_init=1, shuffle=False,
                  init=start, tol=0.0 if sweeps > 1 else 1e-6, max_iter=sweeps).fit(X)
        np.testing.assert_array_equal(canonical(m.labels_), canonical(want))
        assert m.neg_log_joint_ == pytest.approx(slow_neg_log_joint(X, want, blocks, prior), rel=1e-9)


@pytest.mark.parametrize("prior", PRIORS[:3])  # (the fourth allows one cluster: every start here has probability 0)
@pytest.mark.parametrize("n", [6, 25])
def test_rows_that_tell_nothing_follow_the_prior_alone(prior, n):
    """One category in every row: every predictive is 1, so the sweeps are the prior's own MAP
    moves, from every row alone (each row is then visited alone, and the new cluster's weight
    must count the other rows' clusters only) and from one cluster."""
    X = np.zeros((n, 1))
    blocks = [("categorical", [0], {"alpha0": np.array([1.0])})]
    for start in (np.arange(n), np.zeros(n, dtype=int), np.arange(n) % 3):
        for sweeps in (1, 50):
            want = slow_mfm_sweeps(X, blocks, prior, start, np.arange(n), max_sweeps=sweeps)
            m = MAPDP(likelihood="categorical", prior={"alpha0": np.array([1.0])}, partition_prior=prior, n_init=1,
                      shuffle=False, init=start, tol=0.0 if sweeps > 1 else 1e-6, max_iter=sweeps).fit(X)
            np.testing.assert_array_equal(canonical(m.labels_), canonical(want))


def test_the_sweep_is_the_slow_sweep_on_mixed_columns_with_gaps():
    prior = MixtureOfFiniteMixtures(gamma=0.8, k_prior="geometric", k_mean=4.0)
    X = mixed_data(23, n=50)
    spec = [b for b in MIXED_SPEC if b[0] not in ("spherical_gaussian", "gaussian_known_cov")]
    likelihood = {tuple(cols) if len(cols) > 1 else cols[0]: fam for fam, cols, _ in spec}
    given = {tuple(cols) if len(cols) > 1 else cols[0]: p for _, cols, p in spec}
    keep = sorted(c for _, cols, _ in spec for c in cols)
    X = X[:, keep]
    remap = {c: j for j, c in enumerate(keep)}
    blocks = [(fam, [remap[c] for c in cols], p) for fam, cols, p in spec]
    likelihood = {(tuple(remap[c] for c in k) if isinstance(k, tuple) else remap[k]): v for k, v in likelihood.items()}
    given = {(tuple(remap[c] for c in k) if isinstance(k, tuple) else remap[k]): v for k, v in given.items()}
    start = np.random.default_rng(4).integers(0, 3, len(X))
    want = slow_mfm_sweeps(X, blocks, prior, start, np.arange(len(X)))
    m = MAPDP(likelihood=likelihood, prior=given, partition_prior=prior, n_init=1, shuffle=False, init=start,
              tol=0.0, max_iter=50).fit(X)
    np.testing.assert_array_equal(canonical(m.labels_), canonical(want))
    assert m.neg_log_joint_ == pytest.approx(slow_neg_log_joint(X, want, blocks, prior), rel=1e-9)
    # a converged partition is a fixed point: every row's least cost is its own component
    for row in (0, 17, 49):
        costs = m.row_costs(row)
        assert costs.loc[costs["chosen"], "cluster"].item() == m.component_labels_[row]


def test_the_dirichlet_process_is_the_papers_map_dp():
    """partition_prior="dp" (the default) is PLOS Algorithm 3: the naive reference's labels and E
    sequence, and the naive joint with the CRP's ln p(z)."""
    X = three_shapes(6, n=120)
    p = default_prior("normal_wishart", X)
    given = {k: p[k] for k in ("m0", "c0", "a0", "B0")}
    m = MAPDP(N0=2.0, likelihood="normal_wishart", prior=given, n_init=1, shuffle=False,
              partition_prior="dp").fit(X)
    labels, E = naive_mapdp(X, 2.0, [("normal_wishart", [0, 1], p)])
    np.testing.assert_array_equal(m.labels_, labels)
    np.testing.assert_allclose(m.objective_history_, E, rtol=1e-9, atol=1e-9)
    assert m.neg_log_joint_ == pytest.approx(naive_neg_log_joint(X, labels, 2.0, [("normal_wishart", [0, 1], p)]),
                                             rel=1e-9)
    assert m.partition_prior_ == DirichletProcess(2.0) and m.N0_ == 2.0


def test_one_call_with_the_mfm_searches_the_prior_and_predicts():
    rng = np.random.default_rng(8)
    X = pd.DataFrame({"a": np.r_[rng.normal(0, 1, 80), rng.normal(6, 1, 60)],
                      "b": np.r_[rng.normal(0, 1, 80), rng.normal(3, 0.5, 60)],
                      "kind": ["x"] * 70 + ["y"] * 70})
    m = MAPDP(partition_prior="mfm", random_state=0).fit(X)
    assert m.n_clusters_ >= 2 and math.isnan(m.N0_)
    assert m.hyperparameter_search_ is not None
    assert set(m.hyperparameter_search_["N0"].map(type)) == {MixtureOfFiniteMixtures}
    proba = m.predict_proba(X.iloc[:10])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all(np.isfinite(m.score_samples(X.iloc[:10])))
    table = m.k_evidence()
    assert table.loc[table["fitted"], "delta"].item() == 0.0
    # the same clusters in other units
    Y = X.assign(a=X["a"] * 1000.37, b=X["b"] / 37.0)
    np.testing.assert_array_equal(MAPDP(partition_prior="mfm", random_state=0).fit(Y).labels_, m.labels_)


@pytest.mark.parametrize("kwargs,words", [
    ({"partition_prior": "mfm", "N0": 3.0}, "leave N0='auto'"),
    ({"partition_prior": "pitman-yor"}, "pass 'dp'"),
    ({"partition_prior": MixtureOfFiniteMixtures}, "pass 'dp'"),
])
def test_bad_partition_priors_are_refused_in_words(kwargs, words):
    with pytest.raises(ValueError, match=words):
        MAPDP(**kwargs).fit(np.random.default_rng(0).normal(size=(20, 2)))


@pytest.mark.parametrize("kwargs,words", [
    ({"gamma": 0.0}, "gamma"), ({"gamma": float("nan")}, "gamma"), ({"k_prior": "uniform"}, "k_prior"),
    ({"k_mean": 0.5}, "k_mean"), ({"k_mean": 1.0}, "k_mean > 1"),
])
def test_bad_mfm_settings_are_refused_in_words(kwargs, words):
    with pytest.raises(ValueError, match=words):
        MixtureOfFiniteMixtures(**kwargs)


@pytest.mark.parametrize("prior", [MixtureOfFiniteMixtures(), MixtureOfFiniteMixtures(0.5, "poisson", 2.0)])
def test_the_gibbs_sampler_draws_the_exact_mfm_posterior(prior):
    """Miller & Harrison's collapsed sampler through the kernel's draws: on four rows, the share of
    sweeps spent in each of the 15 partitions matches p(z | X) from the whole-partition joint."""
    from mapdp_core import CollapsedGibbs

    X = np.array([[0.0], [0.6], [2.5], [3.2]])
    p = {"m0": np.array([1.5]), "c0": 0.2, "a0": 2.0, "B0": np.array([[0.5]])}
    blocks = [("normal_wishart", [0], p)]
    partitions = [canonical(z) for z in naive_partitions(4)]
    joint = np.array([-slow_neg_log_joint(X, z, blocks, prior) for z in partitions])
    exact = np.exp(joint - joint.max())
    exact /= exact.sum()
    sweeps = 6000
    model = CollapsedGibbs(likelihood="normal_wishart", prior=p, partition_prior=prior, n_sweeps=sweeps,
                           random_state=11)
    seen = {}
    for state in model.iter_sweeps(X):
        if state.iteration > 50:  # past the start
            key = tuple(canonical(np.asarray(state.labels)))
            seen[key] = seen.get(key, 0) + 1
    share = np.array([seen.get(tuple(z), 0) for z in partitions]) / (sweeps - 50)
    assert 0.5 * np.abs(share - exact).sum() < 0.03, (share.round(3), exact.round(3))
    assert exact.max() < 0.9  # the posterior is spread, so the test can tell priors apart
