"""The tied Normal-Wishart (one covariance shared by all clusters, mclust's EEE) against slow
references: its collapsed marginal against the closed form written plainly and, in one
dimension, against numerical integration over the shared precision; its row predictive against
scipy's multivariate t; its MAP-DP sweeps against a sweep that scores every candidate by
recomputing the whole partition's marginal; gaps by their observed entries."""
import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import gammaln, multigammaln

from mapdp_core import MAPDP
from mapdp_core.core.labels import relabel_by_first_appearance
from mapdp_core.core.spec import parse
from mapdp_core.engine.model_data import ModelData
from mapdp_core.families import KERNEL_SLOTS, normal_wishart_tied
from mapdp_core.kernels import dp_mixture

TIED = KERNEL_SLOTS.index(normal_wishart_tied)


def tied_data(seed, n=(60, 40, 30), D=2):
    """Groups of one shared, correlated shape with different centres."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(D, D))
    cov = A @ A.T + 0.3 * np.eye(D)
    centres = rng.normal(0, 3.0, size=(len(n), D))
    return np.vstack([rng.multivariate_normal(c, cov, m) for c, m in zip(centres, n)])


def prior_for(X, c0=0.3, a0=None):
    D = X.shape[1]
    return {"m0": X.mean(axis=0) + 0.1, "c0": c0, "a0": float(D + 3 if a0 is None else a0),
            "B0": np.linalg.inv(np.diag(X.var(axis=0)) * 0.5 + 0.05 * np.ones((D, D)))}


def slow_log_marginal(X, labels, prior):
    """ln p(X | z), the closed form of the module docstring written plainly (numpy's slogdet)."""
    N, D = X.shape
    m0, c0, a0 = prior["m0"], prior["c0"], prior["a0"]
    T0 = np.linalg.inv(prior["B0"])
    T = T0.copy()
    out = -0.5 * N * D * math.log(math.pi)
    for k in np.unique(labels):
        Xk = X[labels == k]
        n = len(Xk)
        xbar = Xk.mean(axis=0)
        T += (Xk - xbar).T @ (Xk - xbar) + c0 * n / (c0 + n) * np.outer(xbar - m0, xbar - m0)
        out += 0.5 * D * math.log(c0 / (c0 + n))
    return (out + multigammaln(0.5 * (a0 + N), D) - multigammaln(0.5 * a0, D)
            + 0.5 * a0 * np.linalg.slogdet(T0)[1] - 0.5 * (a0 + N) * np.linalg.slogdet(T)[1])


def predictive_t(Xo, lo, k, prior, observed=None):
    """The module docstring's multivariate t of a row joining cluster k of the other rows ``Xo``
    (labels ``lo``): nu = a0 + N - D, location m_k, shape A/(c/(c+1) nu), on the ``observed`` entries."""
    D = Xo.shape[1]
    observed = np.ones(D, dtype=bool) if observed is None else observed
    T = np.linalg.inv(prior["B0"])
    for j in np.unique(lo):
        Xk = Xo[lo == j]
        xbar = Xk.mean(axis=0)
        T = T + (Xk - xbar).T @ (Xk - xbar) + prior["c0"] * len(Xk) / (prior["c0"] + len(Xk)) * np.outer(
            xbar - prior["m0"], xbar - prior["m0"])
    c = prior["c0"] + np.sum(lo == k)
    m = (prior["c0"] * prior["m0"] + Xo[lo == k].sum(axis=0)) / c
    nu = prior["a0"] + len(Xo) + 1 - D
    return stats.multivariate_t(loc=m[observed], shape=T[np.ix_(observed, observed)] / (c / (c + 1) * nu), df=nu)


def model_of(X, prior, labels):
    parsed = parse(X, {tuple(range(X.shape[1])): "normal_wishart_tied"}, {tuple(range(X.shape[1])): prior})
    model = ModelData(parsed)
    K = model.start(np.asarray(labels, dtype=np.int64))
    return model, K


def crp(labels, N0):
    sizes = np.bincount(labels)
    sizes = sizes[sizes > 0]
    return len(sizes) * math.log(N0) + gammaln(sizes).sum() + gammaln(N0) - gammaln(N0 + len(labels))


@pytest.mark.parametrize("D,seed", [(1, 0), (2, 1), (3, 2), (5, 3)])
def test_joint_is_the_closed_form(D, seed):
    X = tied_data(seed, D=D)
    prior = prior_for(X)
    rng = np.random.default_rng(seed)
    for labels in (np.zeros(len(X), dtype=np.int64), rng.integers(0, 4, len(X)), np.repeat([0, 1, 2], [60, 40, 30])):
        labels = np.unique(labels, return_inverse=True)[1]
        model, K = model_of(X, prior, labels)
        expected = -slow_log_marginal(X, labels, prior) - crp(labels, 2.0)
        assert model.neg_log_joint(K, 2.0) == pytest.approx(expected, rel=1e-10)


def test_one_dimension_by_quadrature():
    """An independent check of the closed form: D = 1, the cluster means integrated exactly (a
    Gaussian vector per cluster) and the shared precision lambda ~ Gamma(a0/2, scale 2 B0) by
    quadrature."""
    rng = np.random.default_rng(4)
    X = np.concatenate([rng.normal(0, 1, 7), rng.normal(3, 1, 5)])[:, None]
    labels = np.repeat([0, 1], [7, 5])
    prior = {"m0": np.array([1.0]), "c0": 0.5, "a0": 3.0, "B0": np.array([[0.8]])}

    def integrand(lam):
        out = stats.gamma.logpdf(lam, 0.5 * prior["a0"], scale=2.0 * prior["B0"][0, 0])
        for k in (0, 1):
            x = X[labels == k, 0]
            cov = (np.eye(len(x)) + np.ones((len(x), len(x))) / prior["c0"]) / lam
            out += stats.multivariate_normal.logpdf(x, np.full(len(x), prior["m0"][0]), cov)
        return math.exp(out)

    value, _ = integrate.quad(integrand, 0, np.inf, limit=200, epsabs=0, epsrel=1e-11)
    model, K = model_of(X, prior, labels)
    assert model.log_marginals(K).sum() == pytest.approx(math.log(value), rel=1e-8)
    assert slow_log_marginal(X, labels, prior) == pytest.approx(math.log(value), rel=1e-8)


def test_row_predictive_is_the_multivariate_t():
    """nlp, nlp_loo and the new cluster's score: the ratio of the closed form with the row in
    and out, and scipy's multivariate t of the module docstring."""
    X = tied_data(5, D=3)
    prior = prior_for(X)
    labels = np.repeat([0, 1, 2], [60, 40, 30])
    model, K = model_of(X, prior, labels)
    fam = model.fams[TIED]
    i = 17  # a row of cluster 0
    out = np.empty(K)
    dp_mixture.cluster_nlp(i, K, model.fams, out)
    rest = np.delete(np.arange(len(X)), i)
    base = slow_log_marginal(X[rest], labels[rest], prior)
    for k in range(K):
        moved = labels.copy()
        moved[i] = k
        expected = base - slow_log_marginal(X, moved, prior)
        got = normal_wishart_tied.nlp_loo(i, k, fam) if k == labels[i] else out[k]
        assert got == pytest.approx(expected, rel=1e-9)
    new = labels.copy()
    new[i] = K
    assert normal_wishart_tied.nlp_new(i, fam) == pytest.approx(base - slow_log_marginal(X, new, prior), rel=1e-9)
    # the same as a multivariate t: nu = a0 + N - D, location m_k, shape A/(c/(c+1) nu)
    k = 1
    t = predictive_t(X[rest], labels[rest], k, prior)
    assert out[k] == pytest.approx(-t.logpdf(X[i]), rel=1e-9)


def naive_tied_mapdp(X, N0, prior, order, init=None, max_iter=50, tol=1e-6):
    """MAP-DP's sweep (ALGORITHMS.md's semantics, as tests/naive.naive_mapdp) where a row's cost
    for cluster k is ln p(X without the row) - ln p(X with the row in k), both whole partitions
    by :func:`slow_log_marginal`."""
    N = len(X)
    labels = np.zeros(N, dtype=int) if init is None else np.asarray(init).copy()
    history = []
    E_old = np.inf
    for sweep in range(max_iter):
        slots = labels.max() + 1
        winners = []
        for i in order:
            labels[i] = -1
            rest = labels >= 0
            base = slow_log_marginal(X[rest], labels[rest], prior) if rest.any() else 0.0
            scores = []
            for k in range(slots + 1):
                n_k = np.sum(labels == k)
                if k < slots and n_k == 0:
                    scores.append(np.inf)
                    continue
                labels[i] = k
                d = base - slow_log_marginal(X, labels, prior)
                labels[i] = -1
                if k == slots:
                    scores.append(d - math.log(N0))
                else:
                    count = 1 if (init is None and sweep == 0 and k == 0) else n_k
                    scores.append(d - math.log(count))
            best = int(np.argmin(scores))
            labels[i] = best
            winners.append(scores[best])
            if best == slots:
                slots += 1
        labels = np.unique(labels, return_inverse=True)[1]
        counts = np.bincount(labels)
        E = sum(winners) - len(counts) * math.log(N0) - gammaln(counts).sum()
        history.append(E)
        if abs(E_old - E) < tol:
            break
        E_old = E
    return labels, history


@pytest.mark.parametrize("D,N0,seed,from_kmeans", [(2, 1.0, 6, False), (2, 3.0, 7, True), (3, 0.5, 8, True),
                                                    (1, 2.0, 9, True)])
def test_sweeps_match_the_whole_partition_reference(D, N0, seed, from_kmeans):
    X = tied_data(seed, n=(25, 18, 12), D=D)
    prior = prior_for(X)
    rng = np.random.default_rng(seed)
    init = None
    if from_kmeans:  # an over-segmented start, as the automatic search gives
        init = np.unique(rng.integers(0, 6, len(X)), return_inverse=True)[1]
    order = rng.permutation(len(X))
    key = tuple(range(D))
    m = MAPDP(N0=N0, likelihood={key: "normal_wishart_tied"}, prior={key: prior}, n_init=1, shuffle=False,
              init=None if init is None else init[order], tol=1e-6, max_iter=50).fit(X[order])
    ref_init = None if init is None else init[order]
    labels, history = naive_tied_mapdp(X[order], N0, prior, np.arange(len(X)), ref_init)
    np.testing.assert_array_equal(relabel_by_first_appearance(m.labels_), relabel_by_first_appearance(labels))
    np.testing.assert_allclose(m.objective_history_, history, rtol=1e-9, atol=1e-8)
    assert m.neg_log_joint_ == pytest.approx(-slow_log_marginal(X[order], labels, prior) - crp(labels, N0), rel=1e-10)


def test_shared_shape_prefers_parallel_groups_by_a_lower_joint():
    """Three long, thin, parallel groups side by side: under one shared covariance their partition
    is a fixed point of MAP-DP and has a lower joint than the per-cluster shapes reach from it or
    from one cluster (both are -ln p(X, z), so the structures compare by evidence); the
    automatic search finds it from its own starts (tests/selection)."""
    rng = np.random.default_rng(10)
    cov = np.array([[4.0, 0.0], [0.0, 0.05]])
    X = np.vstack([rng.multivariate_normal([0.0, y], cov, 60) for y in (0.0, 1.2, 2.4)])
    truth = np.repeat([0, 1, 2], 60)
    tied = MAPDP(N0=1.0, likelihood="normal_wishart_tied", prior=None, n_init=1, shuffle=False, init=truth).fit(X)
    np.testing.assert_array_equal(tied.labels_, truth)
    per_cluster = min((MAPDP(N0=1.0, likelihood="normal_wishart", prior=None, n_init=1, shuffle=False, init=init).fit(X)
                       for init in (None, truth)), key=lambda m: m.neg_log_joint_)
    assert tied.neg_log_joint_ < per_cluster.neg_log_joint_ - 5.0


def test_gaps_score_the_observed_entries():
    """A row with a gap is scored by the t of its observed entries (sub-vector of the location,
    sub-matrix of the shape), against the completed rows in the statistics."""
    X = tied_data(11, D=3)
    X[5, 1] = np.nan
    X[70, [0, 2]] = np.nan
    prior = prior_for(np.nan_to_num(X))
    labels = np.repeat([0, 1, 2], [60, 40, 30])
    model, K = model_of(X, prior, labels)
    fam = model.fams[TIED]
    fill = fam[normal_wishart_tied.LAYOUT.index("fill")]
    assert np.all(np.isfinite(fill)) and np.array_equal(fill[~np.isnan(X)], X[~np.isnan(X)])
    for i, k in ((5, 1), (70, 2), (70, 0)):
        rest = np.delete(np.arange(len(X)), i)
        obs = ~np.isnan(X[i])
        t = predictive_t(fill[rest], labels[rest], k, prior, obs)
        got = normal_wishart_tied.nlp_loo(i, k, fam) if k == labels[i] else normal_wishart_tied.nlp(i, k, fam)
        assert got == pytest.approx(-t.logpdf(X[i, obs]), rel=1e-9)


def test_chain_rule_without_gaps_is_the_closed_form():
    X = tied_data(12, D=2)
    prior = prior_for(X)
    labels = np.random.default_rng(0).integers(0, 3, len(X))
    model, K = model_of(X, prior, labels)
    chained = normal_wishart_tied.observed_log_marginals(model.fams[TIED], labels, K)
    assert chained.sum() == pytest.approx(slow_log_marginal(X, labels, prior), rel=1e-10)


def test_units_do_not_change_the_partition_with_gaps():
    """A column in other units (times 1000) with gaps: the same partition, and the joint moves by
    (observed cells of that column) x ln 1000, the Jacobian of the observed cells only."""
    X = tied_data(13, n=(50, 40, 30), D=3)
    rng = np.random.default_rng(1)
    X[rng.choice(len(X), 15, replace=False), rng.integers(0, 3, 15)] = np.nan
    Y = X.copy()
    Y[:, 1] *= 1000.0
    start = np.unique(rng.integers(0, 5, len(X)), return_inverse=True)[1]
    a = MAPDP(N0=1.0, likelihood="normal_wishart_tied", prior=None, n_init=1, init=start, shuffle=False).fit(X)
    b = MAPDP(N0=1.0, likelihood="normal_wishart_tied", prior=None, n_init=1, init=start, shuffle=False).fit(Y)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    observed = np.sum(~np.isnan(X[:, 1]))
    assert b.neg_log_joint_ - a.neg_log_joint_ == pytest.approx(observed * math.log(1000.0), rel=1e-7)


def test_prediction_scores_new_rows_against_every_fitted_row():
    X = tied_data(14, D=2)
    m = MAPDP(N0=1.0, likelihood="normal_wishart_tied", prior=None, n_init=1,
              init=np.repeat([0, 1, 2], [60, 40, 30]), shuffle=False).fit(X)
    new = np.array([[0.0, 0.0], [5.0, -2.0], [np.nan, 1.0]])
    proba = m.predict_proba(new)
    assert proba.shape[0] == 3 and np.allclose(proba.sum(axis=1), 1.0)
    # a row of the training table predicts into its own cluster
    assert np.array_equal(m.predict(X[:10]), m.labels_[:10])


def test_summary_has_one_covariance_for_every_cluster():
    X = tied_data(15, D=2)
    m = MAPDP(N0=1.0, likelihood="normal_wishart_tied", prior=None, n_init=1,
              init=np.repeat([0, 1, 2], [60, 40, 30]), shuffle=False).fit(X)
    covs = m.covariances_ if hasattr(m, "covariances_") else None
    model = m._fitted_model()
    summ = model.summaries(m.n_clusters_)
    (c,) = summ["covariance"].values()
    assert c.shape == (m.n_clusters_, 2, 2) and np.allclose(c[0], c[-1])
    assert covs is None or len(covs) > 0
