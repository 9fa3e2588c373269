"""Every family's posterior and prior predictive, read from the kernel, against scipy.stats,
and every closed-form marginal likelihood against the chain rule of the slow reference."""
import numpy as np
import pytest
from scipy import stats

from engine_probe import engine_neg_log_joint, engine_neg_log_predictive
from naive import naive_neg_log_joint


def nw_posterior(data, m0, c0, a0, B0):
    n = len(data)
    if n == 0:
        return m0, c0, a0, B0
    xbar = data.mean(0)
    S = (data - xbar).T @ (data - xbar)
    c = c0 + n
    m = (c0 * m0 + n * xbar) / c
    B = np.linalg.inv(np.linalg.inv(B0) + S + c0 * n / c * np.outer(xbar - m0, xbar - m0))
    return m, c, a0 + n, B


@pytest.mark.parametrize("n", [0, 1, 5, 40])
@pytest.mark.parametrize("D", [1, 2, 4])
def test_normal_wishart_is_multivariate_t(rng, n, D):
    A = rng.normal(size=(D, D))
    prior = {"m0": rng.normal(size=D), "c0": 0.7, "a0": D + 1.5, "B0": np.linalg.inv(A @ A.T + D * np.eye(D))}
    data = rng.normal(size=(n, D)) * 2 + 1
    x = rng.normal(size=D) * 3
    m, c, a, B = nw_posterior(data, **prior)
    nu = a - D + 1
    Lam = c * nu / (c + 1) * B
    expected = -stats.multivariate_t(loc=m, shape=np.linalg.inv(Lam), df=nu).logpdf(x)
    got = engine_neg_log_predictive("normal_wishart", x, data, prior)
    assert got == pytest.approx(expected, rel=1e-10, abs=1e-10)


@pytest.mark.parametrize("n", [0, 3, 30])
def test_spherical_gaussian_is_normal(rng, n):
    D = 3
    prior = {"mu0": rng.normal(size=D), "sigma0_2": 2.5, "sigma2": 0.4}
    data = rng.normal(size=(n, D))
    x = rng.normal(size=D)
    prec = 1 / prior["sigma0_2"] + n / prior["sigma2"]
    mu = (prior["mu0"] / prior["sigma0_2"] + data.sum(0) / prior["sigma2"]) / prec
    expected = -stats.multivariate_normal(mu, (1 / prec + prior["sigma2"]) * np.eye(D)).logpdf(x)
    assert engine_neg_log_predictive("spherical_gaussian", x, data, prior) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("n", [0, 2, 25])
def test_known_covariance_gaussian_is_normal(rng, n):
    D = 3
    A, C = rng.normal(size=(D, D)), rng.normal(size=(D, D))
    prior = {"mu0": rng.normal(size=D), "Sigma0": A @ A.T + np.eye(D), "Sigma": 0.3 * (C @ C.T) + 0.2 * np.eye(D)}
    data = rng.normal(size=(n, D))
    x = rng.normal(size=D)
    P0, P = np.linalg.inv(prior["Sigma0"]), np.linalg.inv(prior["Sigma"])
    Sn = np.linalg.inv(P0 + n * P)  # eq 16
    mun = Sn @ (P0 @ prior["mu0"] + P @ data.sum(0))
    expected = -stats.multivariate_normal(mun, Sn + prior["Sigma"]).logpdf(x)
    assert engine_neg_log_predictive("gaussian_known_cov", x, data, prior) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("n", [0, 1, 12])
def test_normal_gamma_is_student_t(rng, n):
    prior = {"m0": 0.5, "c0": 0.3, "a0": 2.0, "b0": 1.5}
    data = rng.normal(3, 2, size=n)
    x = 1.7
    c, a = prior["c0"] + n, prior["a0"] + n / 2
    xbar = data.mean() if n else 0.0
    m = (prior["c0"] * prior["m0"] + data.sum()) / c
    b = prior["b0"] + 0.5 * ((data - xbar) ** 2).sum() + prior["c0"] * n * (xbar - prior["m0"]) ** 2 / (2 * c)
    expected = -stats.t(df=2 * a, loc=m, scale=np.sqrt(b * (c + 1) / (a * c))).logpdf(x)
    assert engine_neg_log_predictive("normal_gamma", x, data, prior) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("family,ntr", [("bernoulli", 1), ("binomial", 6)])
@pytest.mark.parametrize("n", [0, 4, 50])
def test_beta_binomial(rng, family, ntr, n):
    prior = {"alpha0": 1.3, "beta0": 0.6} | ({"n": ntr} if family == "binomial" else {})
    data = rng.binomial(ntr, 0.3, size=n).astype(float)
    a, b = prior["alpha0"] + data.sum(), prior["beta0"] + ntr * n - data.sum()
    for x in range(ntr + 1):
        expected = -stats.betabinom(ntr, a, b).logpmf(x)
        assert engine_neg_log_predictive(family, x, data, prior) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("n", [0, 7])
def test_categorical_is_dirichlet_multinomial(rng, n):
    alpha0 = np.array([0.5, 1.0, 2.0, 0.25])
    data = rng.integers(0, 4, size=n).astype(float)
    alpha = alpha0 + np.bincount(data.astype(int), minlength=4)
    for x in range(4):
        expected = -stats.dirichlet_multinomial(alpha, 1).logpmf(np.eye(4)[x])
        got = engine_neg_log_predictive("categorical", x, data, {"alpha0": alpha0})
        assert got == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("n", [0, 9])
def test_poisson_is_negative_binomial(rng, n):
    prior = {"alpha0": 2.5, "beta0": 0.8}
    data = rng.poisson(3.0, size=n).astype(float)
    a, b = prior["alpha0"] + data.sum(), prior["beta0"] + n
    for x in [0, 1, 4, 17]:
        expected = -stats.nbinom(a, b / (b + 1)).logpmf(x)
        assert engine_neg_log_predictive("poisson", x, data, prior) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("n", [0, 6])
def test_exponential_is_lomax(rng, n):
    prior = {"alpha0": 1.7, "beta0": 2.2}
    data = rng.exponential(1.5, size=n)
    a, b = prior["alpha0"] + n, prior["beta0"] + data.sum()   # ALGORITHMS.md (eq 21 swapped)
    for x in [0.0, 0.3, 4.0]:
        expected = -stats.lomax(c=a, scale=b).logpdf(x)
        assert engine_neg_log_predictive("exponential", x, data, prior) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("n", [0, 8])
def test_geometric_is_beta_geometric(rng, n):
    prior = {"alpha0": 1.4, "beta0": 0.9}
    data = (rng.geometric(0.4, size=n) - 1).astype(float)
    a, b = prior["alpha0"] + n, prior["beta0"] + data.sum()
    for x in [0, 1, 5]:
        expected = -stats.betanbinom(1, a, b).logpmf(x)  # failures before one success, p ~ Beta(a, b)
        assert engine_neg_log_predictive("geometric", x, data, prior) == pytest.approx(expected, rel=1e-10)


def test_one_column_normal_wishart_equals_normal_gamma(rng):
    """NW on one column and Normal-Gamma are the same model: a = a0/2, b = 1/(2 B0)."""
    data = rng.normal(size=(20, 1))
    nw = {"m0": [0.2], "c0": 0.5, "a0": 3.0, "B0": [[0.8]]}
    ng = {"m0": 0.2, "c0": 0.5, "a0": 1.5, "b0": 1 / (2 * 0.8)}
    for x in [-1.0, 0.3, 2.0]:
        assert engine_neg_log_predictive("normal_wishart", [x], data, nw) == pytest.approx(
            engine_neg_log_predictive("normal_gamma", x, data[:, 0], ng), rel=1e-10)


MIXED_PRIORS = [
    ("normal_wishart", {"m0": np.zeros(2), "c0": 0.5, "a0": 4.0, "B0": np.eye(2) * 0.7}, 2),
    ("spherical_gaussian", {"mu0": np.zeros(2), "sigma0_2": 3.0, "sigma2": 0.5}, 2),
    ("gaussian_known_cov", {"mu0": np.zeros(2), "Sigma0": np.array([[2, 0.3], [0.3, 1]]),
                            "Sigma": np.array([[0.5, 0.1], [0.1, 0.4]])}, 2),
    ("normal_gamma", {"m0": 0.0, "c0": 0.4, "a0": 2.0, "b0": 1.0}, 1),
    ("bernoulli", {"alpha0": 0.7, "beta0": 1.2}, 1),
    ("binomial", {"alpha0": 0.7, "beta0": 1.2, "n": 5}, 1),
    ("categorical", {"alpha0": np.array([0.4, 1.0, 2.0])}, 1),
    ("poisson", {"alpha0": 1.5, "beta0": 0.5}, 1),
    ("exponential", {"alpha0": 2.0, "beta0": 1.0}, 1),
    ("geometric", {"alpha0": 1.5, "beta0": 2.0}, 1),
]


def _sample(family, n, rng):
    draw = {
        "bernoulli": lambda: rng.integers(0, 2, n), "binomial": lambda: rng.integers(0, 6, n),
        "categorical": lambda: rng.integers(0, 3, n), "poisson": lambda: rng.poisson(2.0, n),
        "exponential": lambda: rng.exponential(1.0, n), "geometric": lambda: rng.geometric(0.4, n) - 1,
    }
    return draw[family]().astype(float)[:, None] if family in draw else rng.normal(size=(n, 1))


@pytest.mark.parametrize("family,prior,D", MIXED_PRIORS, ids=[m[0] for m in MIXED_PRIORS])
def test_closed_form_marginal_equals_chain_rule(rng, family, prior, D):
    """The exact joint -ln p(X, z) from closed-form marginals equals the product of
    sequential predictives (the reference's chain rule) for every family."""
    n = 30
    X = np.hstack([_sample(family, n, rng) for _ in range(D)]) if D == 1 else rng.normal(size=(n, D)) * 1.5
    labels = rng.integers(0, 3, n)
    labels = np.unique(labels, return_inverse=True)[1]
    blocks = [(family, list(range(D)), prior)]
    expected = naive_neg_log_joint(X, labels, 2.0, blocks)
    assert engine_neg_log_joint(X, labels, 2.0, family, prior) == pytest.approx(expected, rel=1e-10)
