"""Components grouped by the coarsened posterior (engine/coarsening.py): every family's marginal
from additive statistics against the kernels' closed forms (zeta = 1), against the kernels on
every row repeated (zeta = 2: a power likelihood with a whole power is the data counted twice),
and against numerical integration at a fractional power; the greedy merges against joints
recomputed from scratch, and their independence of a column's unit."""
import math

import numpy as np
import pytest
from scipy import integrate, stats

from mapdp_core.core.spec import ParsedData, parse
from mapdp_core.engine.coarsening import (coarsened_log_marginals, coarsened_merge, coarsening_power,
                                          component_statistics)
from mapdp_core.engine.model_data import ModelData
from mapdp_core.kernels import dp_mixture

#: one column (two for the block families) of every family
LIKELIHOOD = {(0, 1): "normal_wishart", 2: "normal_gamma", 3: "spherical_gaussian", 4: "bernoulli",
              5: "categorical", 6: "poisson", 7: "exponential", 8: "geometric", (9, 10): "gaussian_known_cov",
              11: "binomial"}


def _every_family(seed=0, n=150, gaps_in_blocks=True):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 3, n)
    X = np.column_stack([rng.normal(3.0 * z, 1.0), rng.normal(-2.0 * z, 1.0) * 3 + 5, rng.normal(z, 1.0),
                         rng.normal(z, 0.5), rng.random(n) < 0.2 + 0.3 * z, rng.integers(0, 4, n),
                         rng.poisson(1.0 + 2.0 * z), rng.exponential(1.0 + z), rng.geometric(0.6 - 0.15 * z) - 1,
                         rng.normal(z, 1.0), rng.normal(-z, 1.0), rng.binomial(4, 0.2 + 0.3 * z)]).astype(float)
    gaps = rng.random(X.shape) < 0.1
    if not gaps_in_blocks:
        gaps[:, [0, 1, 9, 10]] = False
    X[gaps] = np.nan
    return parse(X, LIKELIHOOD), z.astype(np.int64)


def _kernel_log_marginals(parsed, labels):
    model = ModelData(parsed)
    K = model.start(labels)
    out = np.empty(K)
    dp_mixture.log_marginals(K, model.fams, out)
    return model, K, out


def test_marginals_from_additive_statistics_are_the_kernels_closed_forms():
    parsed, labels = _every_family()
    model, K, kernel = _kernel_log_marginals(parsed, labels)
    ours = coarsened_log_marginals(component_statistics(model, labels, K), 1.0)
    np.testing.assert_allclose(ours, kernel, rtol=1e-12, atol=1e-9)


def test_a_whole_power_is_every_row_counted_that_many_times():
    """p(x | theta)^2 = p(x | theta) p(x | theta): the coarsened marginal at zeta = 2 is the
    kernels' marginal of the table with every row twice (blocks without gaps, whose completed
    rows would otherwise depend on the first copy)."""
    parsed, labels = _every_family(seed=1, gaps_in_blocks=False)
    model, K, _ = _kernel_log_marginals(parsed, labels)
    twice = ParsedData(X=np.repeat(parsed.X, 2, axis=0), names=parsed.names, blocks=parsed.blocks,
                       categories=parsed.categories)
    _, _, kernel = _kernel_log_marginals(twice, np.repeat(labels, 2))
    ours = coarsened_log_marginals(component_statistics(model, labels, K), 2.0)
    np.testing.assert_allclose(ours, kernel, rtol=1e-12, atol=1e-9)


def _one_cluster(X, likelihood):
    parsed = parse(X, likelihood)
    labels = np.zeros(len(X), dtype=np.int64)
    model = ModelData(parsed)
    model.start(labels)
    return parsed, component_statistics(model, labels, 1)


def test_fractional_power_poisson_against_numerical_integration():
    x = np.array([0.0, 3.0, 1.0, 4.0, 2.0, 7.0])
    parsed, st = _one_cluster(x[:, None], "poisson")
    a0, b0 = parsed.blocks[0].prior["alpha0"][0], parsed.blocks[0].prior["beta0"][0]
    zeta = 0.3

    def integrand(lam):
        return np.exp(zeta * stats.poisson.logpmf(x, lam).sum() + zeta * sum(math.lgamma(v + 1) for v in x)
                      + stats.gamma.logpdf(lam, a0, scale=1.0 / b0))

    value, _ = integrate.quad(integrand, 0, np.inf, limit=200)
    # the marginal leaves out the data-only constant -sum ln x!, as the kernels do
    assert coarsened_log_marginals(st, zeta)[0] == pytest.approx(math.log(value), rel=1e-7)


def test_fractional_power_normal_gamma_against_numerical_integration():
    x = np.array([1.2, -0.4, 2.5, 0.3, 1.9])
    parsed, st = _one_cluster(x[:, None], "normal_gamma")
    p = {k: float(v[0]) for k, v in parsed.blocks[0].prior.items()}
    zeta = 0.4

    def integrand(mu, tau):
        loglik = zeta * stats.norm.logpdf(x, mu, 1.0 / math.sqrt(tau)).sum()
        return math.exp(loglik + stats.gamma.logpdf(tau, p["a0"], scale=1.0 / p["b0"])
                        + stats.norm.logpdf(mu, p["m0"], 1.0 / math.sqrt(p["c0"] * tau)))

    value, _ = integrate.dblquad(integrand, 1e-9, 60.0, -15.0, 15.0, epsabs=1e-14, epsrel=1e-9)
    assert coarsened_log_marginals(st, zeta)[0] == pytest.approx(math.log(value), rel=1e-6)


def _coarsened_joint(parsed, labels, n0, zeta):
    """-ln p_zeta(X, z) of a partition, from statistics loaded afresh (module docstring)."""
    model = ModelData(parsed)
    K = model.start(labels)
    sizes = np.bincount(labels).astype(float)
    log_crp = (K * math.log(n0) + sum(math.lgamma(zeta * s) for s in sizes) + math.lgamma(n0)
               - math.lgamma(n0 + zeta * len(labels)))
    return -log_crp - float(coarsened_log_marginals(component_statistics(model, labels, K), zeta).sum())


def _tiles(seed=0, n=600):
    """One elongated Gaussian cut into four tiles along its long axis, and a second group far away."""
    rng = np.random.default_rng(seed)
    one = rng.multivariate_normal([0, 0], [[9.0, 0.0], [0.0, 0.3]], n)
    two = rng.multivariate_normal([0, 12], [[1.0, 0.0], [0.0, 1.0]], n // 3)
    X = np.vstack([one, two])
    tiles = np.digitize(one[:, 0], [-2.0, 0.0, 2.0])
    return X, np.concatenate([tiles, np.full(len(two), 4)]).astype(np.int64)


def test_merges_lower_the_coarsened_joint_by_the_nats_they_report():
    X, labels = _tiles()
    parsed = parse(X, "normal_gamma")
    zeta = coarsening_power(len(X), 100.0)
    cluster_of, merges = coarsened_merge(parsed, labels, 1.0, zeta)
    assert len(merges) >= 1
    before = _coarsened_joint(parsed, labels, 1.0, zeta)
    after = _coarsened_joint(parsed, cluster_of[labels], 1.0, zeta)
    assert before - after == pytest.approx(merges["nats"].sum(), rel=1e-9)
    assert (merges["nats"] > 0).all()
    # the tiles of the long group are one cluster again, the far group another
    assert len(set(cluster_of[:4])) == 1 and cluster_of[4] != cluster_of[0]


def test_the_greedy_choice_is_the_best_pair_and_it_stops_at_a_local_optimum():
    X, labels = _tiles(seed=2)
    parsed = parse(X, "normal_gamma")
    zeta = coarsening_power(len(X), 300.0)
    cluster_of, merges = coarsened_merge(parsed, labels, 1.0, zeta, min_clusters=1)
    first = merges.iloc[0]
    best = None
    for a in range(5):
        for b in range(a + 1, 5):
            merged = np.where(labels == b, a, labels)
            merged = np.unique(merged, return_inverse=True)[1]
            value = _coarsened_joint(parsed, merged, 1.0, zeta)
            best = value if best is None else min(best, value)
    assert _coarsened_joint(parsed, labels, 1.0, zeta) - best == pytest.approx(first["nats"], rel=1e-9)
    final = cluster_of[labels]
    K = final.max() + 1
    for a in range(K):
        for b in range(a + 1, K):
            merged = np.unique(np.where(final == b, a, final), return_inverse=True)[1]
            assert _coarsened_joint(parsed, merged, 1.0, zeta) >= _coarsened_joint(parsed, final, 1.0, zeta) - 1e-9


def test_without_coarsening_a_clear_partition_is_kept():
    X, labels = _tiles(seed=3)
    parsed = parse(X, "normal_gamma")
    group = (labels == 4).astype(np.int64)
    cluster_of, merges = coarsened_merge(parsed, group, 1.0, 1.0)
    assert len(merges) == 0 and list(cluster_of) == [0, 1]


@pytest.mark.parametrize("family", ["normal_gamma", "normal_wishart"])
def test_a_columns_unit_does_not_change_the_grouping(family):
    X, labels = _tiles(seed=4)
    X[np.random.default_rng(0).random(X.shape) < 0.08] = np.nan
    zeta = coarsening_power(len(X), 100.0)
    scaled = X * np.array([1000.37, 0.0037])
    a, merges_a = coarsened_merge(parse(X, family), labels, 1.0, zeta)
    b, merges_b = coarsened_merge(parse(scaled, family), labels, 1.0, zeta)
    assert list(a) == list(b)
    assert list(merges_a["merged"]) == list(merges_b["merged"])
    np.testing.assert_allclose(merges_a["nats"], merges_b["nats"], rtol=1e-7)
