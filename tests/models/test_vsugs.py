"""V-SUGS: each term against quadrature, Monte Carlo or scipy; a plain-Python pass; the
reduction to SUGS; additivity of weighted updates (OTHER-SYSTEMS 1.3 and 1.6)."""
import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import digamma, gammaln, logsumexp

from mapdp_core.kernels import vsugs as vk
from mapdp_core.models.sugs import SUGS
from mapdp_core.models.vsugs import VSUGS


def ng_logpdf(mu, tau, m, c, a, b):
    """ln NG(mu, tau | m, c, a, b): tau ~ Gamma(a, rate b), mu | tau ~ N(m, 1/(c tau))."""
    return stats.gamma.logpdf(tau, a, scale=1 / b) + stats.norm.logpdf(mu, m, 1 / math.sqrt(c * tau))


NG1 = (0.3, 2.0, 3.0, 1.5)
NG0 = (-0.2, 0.7, 2.0, 2.5)


def _ng_integral(f, params):
    m, c, a, b = params
    lo_t, hi_t = stats.gamma.ppf([1e-10, 1 - 1e-10], a, scale=1 / b)

    def inner(mu, tau):
        return math.exp(ng_logpdf(mu, tau, *params)) * f(mu, tau)

    val, _ = integrate.dblquad(inner, lo_t, hi_t, lambda t: m - 12 / math.sqrt(c * t),
                               lambda t: m + 12 / math.sqrt(c * t), epsabs=1e-9, epsrel=1e-8)
    return val


def test_normal_gamma_predictive_is_the_integral_of_the_likelihood():
    y = 1.1
    quad = _ng_integral(lambda mu, tau: stats.norm.pdf(y, mu, 1 / math.sqrt(tau)), NG1)
    assert math.log(quad) == pytest.approx(vk.ng_log_predictive(y, *NG1), rel=1e-7)
    m, c, a, b = NG1
    assert vk.ng_log_predictive(y, *NG1) == pytest.approx(
        stats.t.logpdf(y, 2 * a, loc=m, scale=math.sqrt(b * (c + 1) / (a * c))), rel=1e-12)


def test_normal_gamma_expected_log_likelihood_matches_quadrature():
    y = -0.4
    quad = _ng_integral(lambda mu, tau: stats.norm.logpdf(y, mu, 1 / math.sqrt(tau)), NG1)
    assert vk.ng_expected_loglik(y, *NG1) == pytest.approx(quad, rel=1e-6)


def test_normal_gamma_kl_matches_quadrature():
    quad = _ng_integral(lambda mu, tau: ng_logpdf(mu, tau, *NG1) - ng_logpdf(mu, tau, *NG0), NG1)
    assert vk.ng_kl(*NG1, *NG0) == pytest.approx(quad, rel=1e-6)
    assert vk.ng_kl(*NG1, *NG1) == pytest.approx(0.0, abs=1e-12)


def test_digamma_matches_scipy():
    for x in (1e-3, 0.3, 1.0, 2.5, 6.0, 40.0, 1e5):
        assert vk.digamma(x) == pytest.approx(float(digamma(x)), rel=1e-10, abs=1e-12)


def test_normal_gamma_update_with_weight_one_is_the_conjugate_posterior():
    m, c, a, b = NG0
    y = 1.7
    cn = c + 1
    expected = ((c * m + y) / cn, cn, a + 0.5, b + c * (y - m) ** 2 / (2 * cn))
    assert np.allclose(vk.ng_update(m, c, a, b, y, 1.0), expected, rtol=1e-14)


@pytest.mark.parametrize("w1,w2", [(0.3, 0.5), (1.0, 2.0), (1e-6, 0.9)])
def test_weighted_updates_are_additive(w1, w2):
    y = 0.8
    once = vk.ng_update(*NG0, y, w1 + w2)
    twice = vk.ng_update(*vk.ng_update(*NG0, y, w1), y, w2)
    assert np.allclose(once, twice, rtol=1e-13)
    D = 3
    rng = np.random.default_rng(1)
    A = rng.normal(size=(D, D))
    B = np.linalg.inv(A @ A.T + D * np.eye(D))
    m, yv = rng.normal(size=D), rng.normal(size=D)
    ld = np.linalg.slogdet(B)[1]
    m1, B1, m2, B2, m3, B3 = (np.empty(D), np.empty((D, D)), np.empty(D), np.empty((D, D)), np.empty(D),
                              np.empty((D, D)))
    c_once, ld_once, a_once, _ = vk.nw_update(m, 2.0, B, ld, 7.0, yv, w1 + w2, m1, B1)
    c_a, ld_a, a_a, _ = vk.nw_update(m, 2.0, B, ld, 7.0, yv, w1, m2, B2)
    c_b, ld_b, a_b, _ = vk.nw_update(m2, c_a, B2, ld_a, a_a, yv, w2, m3, B3)
    assert np.allclose([c_once, ld_once, a_once], [c_b, ld_b, a_b], rtol=1e-12)
    assert np.allclose(m1, m3, rtol=1e-12) and np.allclose(B1, B3, rtol=1e-10)


def test_normal_wishart_update_matches_the_direct_inverse():
    D = 3
    rng = np.random.default_rng(2)
    A = rng.normal(size=(D, D))
    B = np.linalg.inv(A @ A.T + np.eye(D))
    m, y, c, w = rng.normal(size=D), rng.normal(size=D), 1.5, 0.7
    m_out, B_out = np.empty(D), np.empty((D, D))
    c1, ld1, a1, tr = vk.nw_update(m, c, B, np.linalg.slogdet(B)[1], 6.0, y, w, m_out, B_out)
    direct = np.linalg.inv(np.linalg.inv(B) + c * w / (c + w) * np.outer(y - m, y - m))
    assert np.allclose(B_out, direct, rtol=1e-10)
    assert ld1 == pytest.approx(np.linalg.slogdet(direct)[1], rel=1e-12)
    assert tr == pytest.approx(np.trace(np.linalg.inv(B) @ direct), rel=1e-12)
    assert np.allclose(m_out, (c * m + w * y) / (c + w)) and c1 == c + w and a1 == 6.0 + w


def _nw(D, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(D, D))
    B = np.linalg.inv(A @ A.T + D * np.eye(D))
    return rng.normal(size=D), 1.3, B, np.linalg.slogdet(B)[1], D + 4.5


def test_normal_wishart_predictive_is_scipys_multivariate_t():
    m, c, B, ld, a = _nw(3, 3)
    y = np.array([0.4, -1.0, 2.0])
    nu = a - 3 + 1
    shape = (c + 1) / (c * nu) * np.linalg.inv(B)
    assert vk.nw_log_predictive(y, m, c, B, ld, a) == pytest.approx(
        stats.multivariate_t.logpdf(y, loc=m, shape=shape, df=nu), rel=1e-12)


def test_one_column_normal_wishart_is_the_normal_gamma():
    """Wishart(B, a) on a scalar is Gamma(a/2, rate 1/(2B)): every V-SUGS term must agree."""
    m, c, a, b = NG1
    m0, c0, a0, b0 = NG0
    W = (np.array([m]), c, np.array([[1 / (2 * b)]]), math.log(1 / (2 * b)), 2 * a)
    W0 = (np.array([m0]), c0, np.array([[1 / (2 * b0)]]), math.log(1 / (2 * b0)), 2 * a0)
    y = 0.9
    assert vk.nw_log_predictive(np.array([y]), *W) == pytest.approx(vk.ng_log_predictive(y, *NG1), rel=1e-12)
    assert vk.nw_expected_loglik(np.array([y]), *W) == pytest.approx(vk.ng_expected_loglik(y, *NG1), rel=1e-12)
    B0inv = np.linalg.inv(W0[2])
    assert vk.nw_kl(W[0], W[1], W[2], W[3], W[4], W0[0], W0[1], B0inv, W0[3], W0[4]) == pytest.approx(
        vk.ng_kl(*NG1, *NG0), rel=1e-12)


def _nw_samples(params, n, seed):
    m, c, B, _, a = params
    rng = np.random.default_rng(seed)
    Lam = stats.wishart(df=a, scale=B).rvs(size=n, random_state=rng)
    mus = np.array([rng.multivariate_normal(m, np.linalg.inv(c * L)) for L in Lam])
    return mus, Lam


def _nw_logpdf(mus, Lam, params):
    m, c, B, _, a = params
    out = stats.wishart(df=a, scale=B).logpdf(np.moveaxis(Lam, 0, -1))
    for j, (mu, L) in enumerate(zip(mus, Lam)):
        out[j] += stats.multivariate_normal.logpdf(mu, m, np.linalg.inv(c * L))
    return out


def test_normal_wishart_expectation_and_kl_match_monte_carlo():
    p1, p0 = _nw(2, 4), _nw(2, 5)
    mus, Lam = _nw_samples(p1, 20000, 6)
    y = np.array([0.3, -0.5])
    ll = np.array([stats.multivariate_normal.logpdf(y, mu, np.linalg.inv(L)) for mu, L in zip(mus, Lam)])
    se = ll.std() / math.sqrt(len(ll))
    assert abs(vk.nw_expected_loglik(y, *p1) - ll.mean()) < 5 * se
    diff = _nw_logpdf(mus, Lam, p1) - _nw_logpdf(mus, Lam, p0)
    se = diff.std() / math.sqrt(len(diff))
    kl = vk.nw_kl(p1[0], p1[1], p1[2], p1[3], p1[4], p0[0], p0[1], np.linalg.inv(p0[2]), p0[3], p0[4])
    assert abs(kl - diff.mean()) < 5 * se


@pytest.mark.parametrize("T", [1, 3, 10, 50])
def test_prior_weights_sum_to_one(T):
    s = np.zeros(T)
    logq = np.empty(T)
    alpha = 1.7
    rng = np.random.default_rng(0)
    for t in range(40):
        n = vk._prior_weights(t, T, alpha, s, logq)
        assert n == min(t + 1, T)
        assert math.exp(logsumexp(logq[:n])) == pytest.approx(1.0, rel=1e-12)
        r = rng.dirichlet(np.ones(n))
        s[:n] += r  # soft counts add up to the rows seen, as in a pass


def naive_vsugs_normal_gamma(X, alpha, T, prior):
    """GT Algorithm 2 for a Normal-Gamma per column, written plainly with scipy."""
    N, D = X.shape
    m0, c0, a0, b0 = (np.asarray(prior[k], dtype=float) for k in ("m0", "c0", "a0", "b0"))
    comps = []  # per active component: [m, c, a, b] arrays over the columns
    s = []
    labels, elbo = [], 0.0
    for i, y in enumerate(X):
        A = min(i, T)
        q = [(s[l] + alpha / T) / (alpha + i) for l in range(A)]
        options = [list(cmp) for cmp in comps[:A]]
        if A < T:
            q.append(alpha * (1 - A / T) / (alpha + i))
            options.append([m0.copy(), c0.copy(), a0.copy(), b0.copy()])
        logw = []
        for ql, (m, c, a, b) in zip(q, options):
            scale = np.sqrt(b * (c + 1) / (a * c))
            logw.append(math.log(ql) + stats.t.logpdf(y, 2 * a, loc=m, scale=scale).sum())
        logw = np.array(logw)
        r = np.exp(logw - logsumexp(logw))
        labels.append(int(np.argmax(r)))
        if A < T:
            comps.append(options[-1])
            s.append(0.0)
        for l, w in enumerate(r):
            if w <= 0:
                continue
            m, c, a, b = comps[l]
            c1 = c + w
            m1 = (c * m + w * y) / c1
            a1 = a + w / 2
            b1 = b + 0.5 * (w * y ** 2 + c * m ** 2 - c1 * m1 ** 2)
            kl = ((a1 - a) * digamma(a1) - gammaln(a1) + gammaln(a) + a * (np.log(b1) - np.log(b))
                  + a1 * (b - b1) / b1 + (m1 - m) ** 2 * c * a1 / (2 * b1) + 0.5 * (c / c1 - 1 - np.log(c / c1)))
            E = 0.5 * (digamma(a1) - np.log(b1) - np.log(2 * np.pi) - 1 / c1 - (y - m1) ** 2 * a1 / b1)
            elbo += -kl.sum() + w * E.sum() - w * math.log(w) + w * math.log(q[l])
            comps[l] = [m1, c1, a1, b1]
            s[l] += w
    return np.array(labels), elbo, np.array(s)


def test_vsugs_pass_equals_the_plain_python_pass():
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal(0, 1, (15, 2)), rng.normal(5, 0.5, (10, 2)), rng.normal((0, 8), 1, (12, 2))])
    from mapdp_core import default_prior

    prior = default_prior("normal_gamma", X)
    for T in (3, 8):
        v = VSUGS(N0=1.3, T=T, likelihood="normal_gamma", n_init=1, shuffle=False).fit(X)
        labels, elbo, s = naive_vsugs_normal_gamma(X, 1.3, T, prior)
        assert v.elbo_ == pytest.approx(elbo, rel=1e-9)
        assert np.allclose(v.soft_counts_, s, rtol=1e-9, atol=1e-12)
        # hard labels: the visit-time argmax components, renumbered in activation order
        used = np.unique(labels)
        assert np.array_equal(v.labels_, np.searchsorted(used, labels))
        assert v.objective_history_[-1] == pytest.approx(-elbo, rel=1e-9)


@pytest.mark.parametrize("likelihood", ["normal_gamma", "normal_wishart"])
def test_hard_vsugs_with_huge_truncation_is_sugs(likelihood):
    rng = np.random.default_rng(11)
    X = np.vstack([rng.normal(0, 1, (20, 3)), rng.normal(4, 1, (20, 3)), rng.normal(-4, 0.5, (10, 3))])
    order = rng.permutation(len(X))
    hard = VSUGS(N0=0.8, T=10 ** 9, likelihood=likelihood, n_init=1, shuffle=False, assignment="hard")
    s = SUGS(N0=0.8, likelihood=likelihood, prior=None, n_init=1, shuffle=False)
    for st_v in hard.iter_sweeps(X, order=order):
        pass
    for st_s in s.iter_sweeps(X, order=order):
        pass
    assert st_v.n_clusters == st_s.n_clusters >= 2
    assert np.array_equal(st_v.labels, st_s.labels)
    assert st_v.neg_log_joint == pytest.approx(st_s.neg_log_joint, rel=1e-10)


def test_fit_keeps_the_largest_elbo_and_every_row():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(0, 1, (30, 2)), rng.normal(6, 1, (30, 2))])
    v = VSUGS(T=10, n_init=4, random_state=0).fit(X)
    assert len(v.labels_) == len(X) and v.labels_.min() == 0
    assert -v.elbo_ == pytest.approx(v.restart_values_.min())
    assert v.n_clusters_ == len(np.unique(v.labels_)) == len(v.cluster_sizes_)
    assert v.soft_counts_.sum() == pytest.approx(len(X))
    assert np.isfinite(v.neg_log_joint_)
    assert set(np.unique(v.predict(X))) <= set(range(v.n_clusters_)) | {-1}
    assert (v.predict(X) == v.labels_).mean() > 0.9


def test_intermediate_states_mark_unvisited_rows():
    X = np.random.default_rng(0).normal(size=(40, 2))
    states = list(VSUGS(T=5, n_init=1, shuffle=False, block_size=10).iter_sweeps(X))
    assert [st.n_changed for st in states] == [10, 10, 10, 10]
    assert np.all(states[0].labels[10:] == -1) and np.all(states[0].labels[:10] >= 0)
    assert states[-1].converged and np.all(states[-1].labels >= 0)


@pytest.mark.parametrize("params,word", [({"T": 0}, "T"), ({"N0": -1.0}, "N0"), ({"likelihood": "poisson"}, "likelihood"),
                                         ({"assignment": "x"}, "assignment")])
def test_bad_parameters_are_named(params, word):
    with pytest.raises(ValueError, match=word):
        VSUGS(**params).fit(np.random.default_rng(0).normal(size=(10, 2)))


def test_missing_values_are_refused_with_advice():
    X = np.random.default_rng(0).normal(size=(10, 2))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="MAP-DP"):
        VSUGS().fit(X)
