"""Missing values in the Gaussian blocks (Normal-Wishart, known covariance, spherical): the observed entries' marginal (exact,
against scipy), the completed-row statistics (add/remove exact inverses), and the clustering
of a well-separated mixture with 20 % of its entries removed."""
import numpy as np
import pytest
from scipy import stats

import mapdp_core as m
from engine_probe import engine_neg_log_predictive
from test_predictives import nw_posterior
from mapdp_core.engine.model_data import ModelData
from mapdp_core.families import normal_wishart as nw
from mapdp_core.core.spec import parse


def marginal_t(x, m, c, a, B):
    """-ln of the eq 20 Student-t's marginal on the observed entries of x (scipy)."""
    D = len(m)
    nu = a - D + 1
    shape = np.linalg.inv(c * nu / (c + 1) * B)
    o = ~np.isnan(x)
    if not o.any():
        return 0.0
    return -stats.multivariate_t(loc=m[o], shape=shape[np.ix_(o, o)], df=nu).logpdf(x[o])


@pytest.mark.parametrize("n", [0, 1, 5, 40])
@pytest.mark.parametrize("D", [2, 4])
def test_partial_row_scores_the_observed_marginal(rng, n, D):
    A = rng.normal(size=(D, D))
    prior = {"m0": rng.normal(size=D), "c0": 0.7, "a0": D + 1.5, "B0": np.linalg.inv(A @ A.T + D * np.eye(D))}
    data = rng.normal(size=(n, D)) * 2 + 1
    for trial in range(4):
        x = rng.normal(size=D) * 3
        x[rng.permutation(D)[: 1 + trial % (D - 1)]] = np.nan  # 1..D-1 entries missing
        expected = marginal_t(x, *nw_posterior(data, **prior))
        got = engine_neg_log_predictive("normal_wishart", x, data, prior)
        assert got == pytest.approx(expected, rel=1e-10, abs=1e-10)
    assert engine_neg_log_predictive("normal_wishart", np.full(D, np.nan), data, prior) == 0.0


def _model(X, labels, prior, likelihood="normal_wishart"):
    model = ModelData(parse(X, likelihood, prior))
    model.start(np.asarray(labels, dtype=np.int64))
    return model, model.fams[0 if likelihood == "gaussian_known_cov" else 2]


def assert_move_round_trips(module, fam, rows):
    """Removing a row subtracts exactly the values it was added with; re-adding it imputes
    them again under the same statistics, so the same statistics come back."""
    stats = slice(module.N_FIXED, None)
    for i in rows:
        module.move(i, 0, -1, fam)
        without = [a.copy() for a in fam[stats]]
        module.move(i, 0, 1, fam)
        with_row = [a.copy() for a in fam[stats]]
        module.move(i, 0, -1, fam)
        for a, b in zip(fam[stats], without):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        module.move(i, 0, 1, fam)
        for a, b in zip(fam[stats], with_row):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_a_gappy_row_enters_with_its_conditional_mean_and_leaves_exactly(rng):
    D = 3
    prior = {"m0": np.zeros(D), "c0": 0.5, "a0": 6.0, "B0": np.eye(D) * 0.5}
    X = rng.normal(size=(30, D))
    X[7, 1] = np.nan
    X[11, [0, 2]] = np.nan
    labels = np.zeros(30, dtype=np.int64)
    model, fam = _model(X, labels, prior)
    fill = fam[6]
    assert np.array_equal(fill[~np.isnan(X)], X[~np.isnan(X)])
    assert np.isfinite(fill).all()
    assert_move_round_trips(nw, fam, (7, 11, 3))
    # row 7 was filled with the conditional mean under the cluster without it
    nw.move(7, 0, -1, fam)
    k_mean, chol, cnt = fam[8][0].copy(), fam[9][0].copy(), fam[7][0]
    T = chol @ chol.T
    o, mis = [0, 2], [1]
    expected = k_mean[mis] + T[np.ix_(mis, o)] @ np.linalg.solve(T[np.ix_(o, o)], X[7, o] - k_mean[o])
    nw.move(7, 0, 1, fam)
    np.testing.assert_allclose(fill[7, mis], expected, rtol=1e-10)
    assert cnt == 29.0


def test_leave_one_out_of_a_gappy_row_is_the_others_marginal(rng):
    D = 3
    prior = {"m0": np.zeros(D), "c0": 0.5, "a0": 6.0, "B0": np.eye(D) * 0.5}
    X = rng.normal(size=(12, D))
    X[4, 2] = np.nan
    model, fam = _model(X, np.zeros(12, dtype=np.int64), prior)
    others = np.delete(X, 4, axis=0)
    expected = marginal_t(X[4], *nw_posterior(others, **prior))
    assert nw.nlp_loo(4, 0, fam) == pytest.approx(expected, rel=1e-10)
    # a complete row's leave-one-out: the others' statistics include row 4's filled values
    completed = fam[6]
    expected = -stats.multivariate_t(*(lambda m_, c, a, B: (m_, np.linalg.inv(c * (a - D + 1) / (c + 1) * B),
                                                             a - D + 1))(*nw_posterior(np.delete(completed, 0, axis=0), **prior))
                                     ).logpdf(X[0])
    assert nw.nlp_loo(0, 0, fam) == pytest.approx(expected, rel=1e-9)


@pytest.fixture(scope="module")
def separated():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0, 0.0], [4.0, 4.0, 4.0], [-4.0, 4.0, -4.0]])
    X = np.vstack([rng.normal(c, 0.7, (200, 3)) for c in centres])
    gappy = X.copy()
    gappy[rng.random(X.shape) < 0.2] = np.nan
    return X, gappy


def test_twenty_percent_missing_keeps_the_clustering(separated):
    X, gappy = separated
    full = m.MAPDP(N0=3.0, likelihood="normal_wishart", prior=None, n_init=3, random_state=0).fit(X)
    gap = m.MAPDP(N0=3.0, likelihood="normal_wishart", prior=None, n_init=3, random_state=0).fit(gappy)
    nmi = m.clustering_scores(full.labels_, gap.labels_)["nmi"]
    print(f"\nNormal-Wishart block, 600 rows, 20 % of entries missing: K {full.n_clusters_} -> {gap.n_clusters_}, "
          f"NMI(complete, gappy) = {nmi:.3f}")
    assert full.n_clusters_ == gap.n_clusters_ == 3 and nmi >= 0.9
    assert len(gap.labels_) == len(gappy)


def test_prediction_of_gappy_rows_is_the_mixture_of_marginals(separated):
    _, gappy = separated
    model = m.MAPDP(N0=3.0, likelihood="normal_wishart", prior=None, n_init=2, random_state=1).fit(gappy)
    fam = model._fitted_model().fams[2]
    prior = model.prior_[0]
    K, N = model.n_clusters_, len(gappy)
    rows = np.array([[0.1, np.nan, -0.2], [np.nan, np.nan, 4.0], [np.nan, np.nan, np.nan], [4.0, 4.1, 3.9]])
    logw = []
    for k in range(K):
        n = fam[7][k]
        T = fam[9][k] @ fam[9][k].T
        c, a = prior["c0"] + n, prior["a0"] + n
        logw.append([np.log(n) - marginal_t(r, fam[8][k], c, a, np.linalg.inv(T)) for r in rows])
    B0 = prior["B0"]
    logw.append([np.log(model.N0) - marginal_t(r, prior["m0"], prior["c0"], prior["a0"], B0) for r in rows])
    logw = np.array(logw).T
    expected = np.logaddexp.reduce(logw, axis=1) - np.log(model.N0 + N)
    np.testing.assert_allclose(model.score_samples(rows), expected, rtol=1e-9)
    proba = model.predict_proba(rows)
    np.testing.assert_allclose(proba, np.exp(logw - np.logaddexp.reduce(logw, axis=1)[:, None]), rtol=1e-9)
    # a row with nothing observed is placed by the cluster sizes (and N0) alone
    sizes = np.append(model.cluster_sizes_, model.N0)
    np.testing.assert_allclose(proba[2], sizes / sizes.sum(), rtol=1e-9)


def test_infinite_values_are_refused_with_a_message():
    X = np.random.default_rng(0).normal(size=(10, 2))
    X[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        m.MAPDP(N0=3.0, likelihood="normal_wishart", prior=None, n_init=1).fit(X)


def test_gibbs_and_imputation_run_on_gappy_blocks(separated):
    _, gappy = separated
    g = m.CollapsedGibbs(n_sweeps=20, random_state=0).fit(gappy[:150])
    assert len(g.labels_) == 150
    model = m.MAPDP(N0=3.0, likelihood="normal_wishart", prior=None, n_init=2, random_state=0).fit(gappy)
    filled, was_missing = model.impute()
    assert np.isfinite(filled.to_numpy()).all() and was_missing.to_numpy().sum() == np.isnan(gappy).sum()


# --- Gaussian with a known covariance (eqs 16-17) ---------------------------------------

def known_cov_predictive(data, mu0, Sigma0, Sigma):
    """Mean and covariance of eq 17's predictive after the complete rows ``data``."""
    n = len(data)
    P0, P = np.linalg.inv(Sigma0), np.linalg.inv(Sigma)
    Sk = np.linalg.inv(P0 + n * P)
    mk = Sk @ (P0 @ mu0 + P @ data.sum(0)) if n else mu0
    return mk, Sk + Sigma


def marginal_normal(x, mean, cov):
    o = ~np.isnan(x)
    if not o.any():
        return 0.0
    return -stats.multivariate_normal(mean[o], cov[np.ix_(o, o)]).logpdf(x[o])


def known_cov_prior(rng, D):
    A, B = rng.normal(size=(D, D)), rng.normal(size=(D, D))
    return {"mu0": rng.normal(size=D), "Sigma0": A @ A.T + D * np.eye(D), "Sigma": 0.3 * (B @ B.T) + 0.5 * np.eye(D)}


@pytest.mark.parametrize("n", [0, 1, 5, 40])
@pytest.mark.parametrize("D", [2, 4])
def test_known_cov_partial_row_scores_the_observed_marginal(rng, n, D):
    prior = known_cov_prior(rng, D)
    data = rng.normal(size=(n, D)) * 2 + 1
    for trial in range(4):
        x = rng.normal(size=D) * 3
        x[rng.permutation(D)[: 1 + trial % (D - 1)]] = np.nan
        expected = marginal_normal(x, *known_cov_predictive(data, **prior))
        got = engine_neg_log_predictive("gaussian_known_cov", x, data, prior)
        assert got == pytest.approx(expected, rel=1e-10, abs=1e-10)
    assert engine_neg_log_predictive("gaussian_known_cov", np.full(D, np.nan), data, prior) == 0.0


def test_spherical_partial_row_keeps_its_observed_coordinates(rng):
    prior = {"mu0": np.array([0.5, -1.0, 2.0]), "sigma0_2": 3.0, "sigma2": 0.7}
    data = rng.normal(size=(6, 3))
    x = np.array([0.3, np.nan, 1.5])
    mean, cov = known_cov_predictive(data, prior["mu0"], prior["sigma0_2"] * np.eye(3), prior["sigma2"] * np.eye(3))
    got = engine_neg_log_predictive("spherical_gaussian", x, data, prior)
    assert got == pytest.approx(marginal_normal(x, mean, cov), rel=1e-12)


def test_known_cov_gappy_row_enters_with_its_conditional_mean_and_leaves_exactly(rng):
    from mapdp_core.families import gaussian_known as ga

    D = 3
    prior = known_cov_prior(rng, D)
    X = rng.normal(size=(30, D))
    X[7, 1] = np.nan
    X[11, [0, 2]] = np.nan
    model, fam = _model(X, np.zeros(30, dtype=np.int64), prior, "gaussian_known_cov")
    assert_move_round_trips(ga, fam, (7, 11, 3))
    # the statistics are those of the completed rows; a gappy row that (re-)joins is
    # completed with E[x_mis | x_o] under the predictive of the others
    ga.move(7, 0, -1, fam)
    ga.move(7, 0, 1, fam)
    t = model.transforms[0]
    completed = fam[0] @ t.to_x.T
    observed = ~np.isnan(X)
    np.testing.assert_allclose(completed[observed], X[observed], rtol=1e-9, atol=1e-9)
    mean, cov = known_cov_predictive(np.delete(completed, 7, axis=0), **prior)
    o, mis = [0, 2], [1]
    expected = mean[mis] + cov[np.ix_(mis, o)] @ np.linalg.solve(cov[np.ix_(o, o)], X[7, o] - mean[o])
    np.testing.assert_allclose(completed[7, mis], expected, rtol=1e-9)
    # leave-one-out of a gappy row: the marginal under the others
    assert ga.nlp_loo(7, 0, fam) + model.pconst[7] == pytest.approx(marginal_normal(X[7], mean, cov), rel=1e-10)
    # a complete row's leave-one-out and score are unchanged by the gaps elsewhere
    mean, cov = known_cov_predictive(np.delete(completed, 3, axis=0), **prior)
    assert ga.nlp_loo(3, 0, fam) + model.pconst[3] == pytest.approx(marginal_normal(X[3], mean, cov), rel=1e-10)


@pytest.fixture(scope="module")
def separated_known(separated):
    X, gappy = separated
    cov = np.cov(X, rowvar=False)
    spec = {"likelihood": "gaussian_known_cov",
            "prior": {"mu0": X.mean(0), "Sigma": 0.5 * np.eye(3) + 0.1, "Sigma0": cov}}
    return X, gappy, spec


def test_known_cov_twenty_percent_missing_keeps_the_clustering(separated_known):
    X, gappy, spec = separated_known
    full = m.MAPDP(N0=3.0, n_init=3, random_state=0, **spec).fit(X)
    gap = m.MAPDP(N0=3.0, n_init=3, random_state=0, **spec).fit(gappy)
    nmi = m.clustering_scores(full.labels_, gap.labels_)["nmi"]
    print(f"\nKnown-covariance block, 600 rows, 20 % of entries missing: K {full.n_clusters_} -> "
          f"{gap.n_clusters_}, NMI(complete, gappy) = {nmi:.3f}")
    assert full.n_clusters_ == gap.n_clusters_ == 3 and nmi >= 0.9
    filled, was_missing = gap.impute()
    assert np.isfinite(filled.to_numpy()).all() and was_missing.to_numpy().sum() == np.isnan(gappy).sum()


@pytest.mark.parametrize("fitted_on", ["complete", "gappy"])
def test_known_cov_prediction_of_gappy_rows_is_the_mixture_of_marginals(separated_known, fitted_on):
    X, gappy, spec = separated_known
    model = m.MAPDP(N0=3.0, n_init=2, random_state=1, **spec).fit(X if fitted_on == "complete" else gappy)
    fam = model._fitted_model().fams[0]
    t = model._fitted_model().transforms[0]
    Y = fam[0]
    prior = spec["prior"]
    rows = np.array([[0.1, np.nan, -0.2], [np.nan, np.nan, 4.0], [np.nan, np.nan, np.nan], [4.0, 4.1, 3.9]])
    K, N = model.n_clusters_, len(X)
    logw = []
    for k in range(K):
        members = (Y[model.labels_ == k]) @ t.to_x.T  # the (completed) rows of cluster k
        mean, cov = known_cov_predictive(members, **prior)
        logw.append([np.log(model.cluster_sizes_[k]) - marginal_normal(r, mean, cov) for r in rows])
    mean, cov = known_cov_predictive(np.zeros((0, 3)), **prior)
    logw.append([np.log(model.N0) - marginal_normal(r, mean, cov) for r in rows])
    logw = np.array(logw).T
    np.testing.assert_allclose(model.score_samples(rows), np.logaddexp.reduce(logw, axis=1) - np.log(model.N0 + N),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.predict_proba(rows), np.exp(logw - np.logaddexp.reduce(logw, axis=1)[:, None]),
                               rtol=1e-9)


def test_gaps_in_a_spherical_block_stay_exact_beside_a_gappy_known_cov_block(rng):
    from mapdp_core.families import gaussian_known as ga

    X = rng.normal(size=(40, 4)) + np.array([0.0, 1.0, 2.0, 3.0])
    X[5, 0] = np.nan
    X[6, 3] = np.nan
    X[7, [1, 2]] = np.nan
    kc = known_cov_prior(rng, 2)
    sph = {"mu0": np.array([0.2, 0.8]), "sigma0_2": 2.0, "sigma2": 0.6}
    parsed = parse(X, {(0, 1): "spherical_gaussian", (2, 3): "gaussian_known_cov"}, {(0, 1): sph, (2, 3): kc})
    model = ModelData(parsed)
    model.start(np.zeros(40, dtype=np.int64))
    fam = model.fams[0]
    nf = ga.N_FIXED
    cnt, mean = fam[nf][0], fam[nf + 1][0]
    # the spherical coordinates hold the observed values only; the known-covariance ones all rows
    assert cnt.tolist() == [39.0, 39.0, 40.0, 40.0]
    np.testing.assert_allclose(mean[:2], np.nanmean(X[:, :2], axis=0), rtol=1e-12)
    # leave-one-out of row 5 (a spherical gap): the spherical coordinate it has, from the
    # others' observed values, plus the known-covariance marginal of the others' completed rows
    others = np.delete(np.arange(40), 5)
    col1 = X[others, 1]
    col1 = col1[~np.isnan(col1)]
    m1, v1 = known_cov_predictive(col1[:, None], sph["mu0"][1:], sph["sigma0_2"] * np.eye(1), sph["sigma2"] * np.eye(1))
    t = model.transforms[1]
    completed = fam[0][others][:, 2:] @ t.to_x.T
    m2, v2 = known_cov_predictive(completed, **kc)
    expected = marginal_normal(X[5, 1:2], m1, v1) + marginal_normal(X[5, 2:], m2, v2)
    assert ga.nlp_loo(5, 0, fam) + model.pconst[5] == pytest.approx(expected, rel=1e-10)
