"""Choosing N0 and the prior scale (PLOS Appendix G): E[K] under the CRP and its inverse,
the MAP N0 under a Gamma prior, the grid by the exact joint, scaled priors and
cross-validated held-out likelihood."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import gammaln

from mapdp_core import MAPDP
from mapdp_core.evaluation.model_selection import cross_validate, n0_grid
from mapdp_core.selection.priors import expected_clusters, map_n0, n0_for_expected_clusters, scaled_prior


def blobs(seed=0, n=40, spread=0.5):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    X = np.vstack([rng.normal(c, spread, (n, 2)) for c in centres])
    return X, np.repeat(np.arange(3), n)


def mixed_frame(seed=0, n=60):
    """Every family, a text column and a rare category (code 3 appears once)."""
    rng = np.random.default_rng(seed)
    cat = rng.integers(0, 3, n)
    cat[0] = 3
    return pd.DataFrame({
        "x": rng.normal(size=n), "y": rng.normal(size=n), "g": rng.normal(size=n),
        "s1": rng.normal(size=n), "s2": rng.normal(size=n), "k": rng.normal(size=n),
        "b": rng.integers(0, 2, n), "bin": rng.integers(0, 4, n), "cat": cat,
        "txt": rng.choice(["red", "green", "blue"], n), "p": rng.poisson(2.0, n),
        "e": rng.exponential(1.0, n), "geo": rng.geometric(0.5, n) - 1,
    })


MIXED_LIK = {("x", "y"): "normal_wishart", "g": "normal_gamma", "s1": "spherical_gaussian",
             "s2": "spherical_gaussian", "k": "gaussian_known_cov", "b": "bernoulli", "bin": "binomial",
             "cat": "categorical", "txt": "categorical", "p": "poisson", "e": "exponential", "geo": "geometric"}


# ----------------------------------------------------------------------------- E[K]

@pytest.mark.parametrize("N", [0, 1, 2, 17, 500])
def test_expected_clusters_is_the_crp_sum(N):
    n0s = np.array([1e-3, 0.1, 1.0, 3.0, 47.5, 1e4])
    got = expected_clusters(n0s, N)
    want = [math.fsum(a / (a + i) for i in range(N)) for a in n0s]
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    assert isinstance(expected_clusters(2.0, N), float)
    assert expected_clusters(n0s.reshape(2, 3), N).shape == (2, 3)


def test_expected_clusters_large_n_uses_digamma_exactly():
    N = 1_500_000
    want = math.fsum(2.5 / (2.5 + i) for i in range(N))
    assert expected_clusters(2.5, N) == pytest.approx(want, rel=1e-12)


def test_expected_clusters_matches_simulated_crp():
    rng = np.random.default_rng(7)
    N, N0, reps = 40, 2.0, 3000
    K = np.empty(reps)
    for r in range(reps):  # seat the customers one at a time
        tables = []
        for i in range(N):
            u = rng.random() * (N0 + i)
            if u < N0:
                tables.append(1)
            else:
                j = int(np.searchsorted(np.cumsum(tables), u - N0, side="right"))
                tables[j] += 1
        K[r] = len(tables)
    se = K.std(ddof=1) / math.sqrt(reps)
    assert abs(K.mean() - expected_clusters(N0, N)) < 4 * se


def test_expected_clusters_rejects_bad_input():
    with pytest.raises(ValueError, match="N0"):
        expected_clusters([1.0, 0.0], 10)
    with pytest.raises(ValueError, match="N"):
        expected_clusters(1.0, -3)


@pytest.mark.parametrize("N", [2, 10, 155, 10_000])
def test_inversion_round_trip(N):
    Ks = np.unique(np.clip([1.0001, 1.5, 2, 3, 7.3, N / 2, N - 1, N - 0.01], 1.0001, N - 0.001))
    Ks = Ks[(Ks > 1) & (Ks < N)]
    n0 = n0_for_expected_clusters(Ks, N)
    assert np.all(n0 > 0) and np.all(np.diff(n0) > 0)
    np.testing.assert_allclose(expected_clusters(n0, N), Ks, rtol=1e-10)
    assert n0_for_expected_clusters(float(Ks[0]), N) == pytest.approx(n0[0], rel=1e-12)


def test_inversion_errors_are_clear():
    with pytest.raises(ValueError, match="between 1 and N"):
        n0_for_expected_clusters(0.5, 10)
    with pytest.raises(ValueError, match="between 1 and N"):
        n0_for_expected_clusters(11, 10)
    with pytest.raises(ValueError, match="N0 -> 0"):
        n0_for_expected_clusters(1, 10)
    with pytest.raises(ValueError, match="infinity"):
        n0_for_expected_clusters(10, 10)


# ----------------------------------------------------------------------------- MAP N0

def _scipy_mode(N, K, a, b):
    def neg(u):
        n0 = math.exp(u)
        return -(gammaln(n0) - gammaln(n0 + N) + (K + a - 1) * math.log(n0) - b * n0)
    res = minimize_scalar(neg, bounds=(-25.0, 25.0), method="bounded", options={"xatol": 1e-11})
    return math.exp(res.x), -res.fun


def test_map_n0_matches_scipy_on_a_grid():
    checked = 0
    for N in (5, 50, 155, 2000):
        for K in (1, 2, 5, 20):
            if K > N:
                continue
            for a in (0.5, 1.0, 3.0):
                for b in (0.0, 0.1, 1.0, 5.0):
                    if K + a <= 2 or (b == 0 and K + a - 1 >= N):
                        with pytest.raises(ValueError, match="no mode"):
                            map_n0(N, K, a, b)
                        continue
                    n0, it = map_n0(N, K, a, b)
                    ref, ref_val = _scipy_mode(N, K, a, b)
                    assert n0 == pytest.approx(ref, rel=1e-5), (N, K, a, b)
                    val = gammaln(n0) - gammaln(n0 + N) + (K + a - 1) * math.log(n0) - b * n0
                    assert val >= ref_val - 1e-10
                    assert 1 <= it <= 10
                    checked += 1
    assert checked > 80


def test_map_n0_with_flat_prior_is_the_moment_match():
    # with a = 1, b = 0 the mode solves E[K](N0) = K
    for N, K in ((100, 5), (155, 21), (30, 2.5)):
        n0, _ = map_n0(N, K, a=1.0, b=0.0)
        assert n0 == pytest.approx(n0_for_expected_clusters(K, N), rel=1e-10)


def test_map_n0_rejects_bad_input():
    for args in ((10, 0, 1, 1), (10, 11, 1, 1), (10, 3, 0, 1), (10, 3, 1, -1), (0, 1, 1, 1)):
        with pytest.raises(ValueError):
            map_n0(*args)


# ----------------------------------------------------------------------------- grid by the joint

def test_n0_grid_recovers_k_on_separated_blobs():
    X, _ = blobs()
    steps = []
    grid = n0_grid(X, [0.01, 0.1, 1.0, 3.0, 30.0], n_init=2, on_step=lambda d, t: steps.append((d, t)))
    assert list(grid.table.columns) == ["N0", "K", "neg_log_joint", "E", "n_iter"]
    assert len(grid.table) == 5 and steps[-1] == (5, 5)
    assert np.all(np.isfinite(grid.table["neg_log_joint"]))
    best = grid.table.loc[grid.table["N0"] == grid.best_N0].iloc[0]
    assert best["neg_log_joint"] == grid.table["neg_log_joint"].min()
    assert best["K"] == 3
    # the grid's value is the fitted model's exact joint
    m = MAPDP(likelihood="normal_wishart", prior=None, N0=grid.best_N0, n_init=2, random_state=0).fit(X)
    assert m.neg_log_joint_ == pytest.approx(best["neg_log_joint"], rel=1e-12)


# ----------------------------------------------------------------------------- scaled prior

def _assert_priors_equal(p, q):
    assert len(p) == len(q)
    for a, b in zip(p, q):
        assert a.keys() == b.keys()
        for key in a:
            if isinstance(a[key], list) and key != "columns":
                for u, v in zip(a[key], b[key]):
                    np.testing.assert_allclose(u, v, rtol=1e-14)
            elif key in ("family", "columns"):
                assert a[key] == b[key]
            else:
                np.testing.assert_allclose(a[key], b[key], rtol=1e-14)


@pytest.mark.parametrize("likelihood", ["normal_wishart", "normal_gamma", "spherical_gaussian",
                                        "gaussian_known_cov"])
def test_scaled_prior_one_is_the_default_single_family(likelihood):
    X, _ = blobs(n=15)
    ref = MAPDP(N0=3.0, prior=None, n_init=1, likelihood=likelihood, random_state=0).fit(X)
    got = MAPDP(N0=3.0, n_init=1, likelihood=likelihood, prior=scaled_prior(X, likelihood, 1.0), random_state=0).fit(X)
    _assert_priors_equal(got.prior_, ref.prior_)
    assert got.neg_log_joint_ == ref.neg_log_joint_


def test_scaled_prior_mixed_mapping_and_list():
    df = mixed_frame()
    ref = MAPDP(N0=3.0, prior=None, n_init=1, likelihood=MIXED_LIK, random_state=0).fit(df)
    got = MAPDP(N0=3.0, n_init=1, likelihood=MIXED_LIK, prior=scaled_prior(df, MIXED_LIK, 1.0), random_state=0).fit(df)
    _assert_priors_equal(got.prior_, ref.prior_)
    assert got.neg_log_joint_ == ref.neg_log_joint_
    # s = 2: the Gaussian within-cluster spreads double, nothing else moves
    two = MAPDP(N0=3.0, n_init=1, likelihood=MIXED_LIK, prior=scaled_prior(df, MIXED_LIK, 2.0), random_state=0).fit(df)
    for p, q in zip(two.prior_, ref.prior_):
        changed = {"normal_wishart": "B0", "normal_gamma": "b0", "spherical_gaussian": "sigma2",
                   "gaussian_known_cov": "Sigma"}.get(p["family"])
        for key in p:
            if key == changed:
                factor = 0.5 if key == "B0" else 2.0
                np.testing.assert_allclose(p[key], factor * np.asarray(q[key]), rtol=1e-14)
            elif key not in ("family", "columns") and not isinstance(p[key], list):
                np.testing.assert_allclose(p[key], q[key], rtol=1e-14)
    # one family per column, as a list
    X = np.column_stack([df["g"], df["s1"], df["b"], df["p"]])
    lik = ["normal_gamma", "spherical_gaussian", "bernoulli", "poisson"]
    ref = MAPDP(N0=3.0, prior=None, n_init=1, likelihood=lik, random_state=0).fit(X)
    got = MAPDP(N0=3.0, n_init=1, likelihood=lik, prior=scaled_prior(X, lik, 1.0), random_state=0).fit(X)
    _assert_priors_equal(got.prior_, ref.prior_)
    with pytest.raises(ValueError, match="scale"):
        scaled_prior(X, lik, 0.0)


# ----------------------------------------------------------------------------- cross-validation

def test_cross_validate_shapes_and_progress():
    df = mixed_frame(n=50)
    steps = []
    cv = cross_validate(df, [0.5, 2.0], [0.5, 1.0, 2.0], likelihood=MIXED_LIK, n_folds=3,
                        on_step=lambda d, t: steps.append((d, t)))
    assert list(cv.folds.columns) == ["N0", "scale", "fold", "heldout_loglik", "K", "n_test"]
    assert len(cv.folds) == 3 * 2 * 3 and steps == [(i, 18) for i in range(1, 19)]
    assert np.all(np.isfinite(cv.folds["heldout_loglik"])) and cv.folds["K"].min() >= 1
    assert cv.folds.groupby(["N0", "scale"])["n_test"].sum().eq(50).all()
    assert list(cv.summary.columns) == ["N0", "scale", "mean_heldout_loglik", "se", "mean_K", "best"]
    assert len(cv.summary) == 6 and cv.summary["best"].sum() == 1
    assert np.all(np.isfinite(cv.summary[["mean_heldout_loglik", "se"]].to_numpy()))
    top = cv.summary.loc[cv.summary["best"]].iloc[0]
    assert (top["N0"], top["scale"]) == (cv.best_N0, cv.best_scale)
    assert top["mean_heldout_loglik"] == cv.summary["mean_heldout_loglik"].max()
    again = cross_validate(df, [0.5, 2.0], [0.5, 1.0, 2.0], likelihood=MIXED_LIK, n_folds=3)
    pd.testing.assert_frame_equal(cv.folds, again.folds)
    with pytest.raises(ValueError, match="n_folds"):
        cross_validate(df, [1.0], [1.0], likelihood=MIXED_LIK, n_folds=1)


def test_cross_validate_holds_the_discrete_prior_weight():
    rng = np.random.default_rng(3)
    z = np.repeat([0, 1], 20)
    df = pd.DataFrame({"x": rng.normal(3 * z, 1.0), "flag": (rng.random(40) < np.where(z, 0.8, 0.2)).astype(float),
                       "count": rng.poisson(np.where(z, 6, 1)).astype(float)})
    lik = {"x": "normal_gamma", "flag": "bernoulli", "count": "poisson"}
    light = cross_validate(df, [1.0], [1.0], likelihood=lik, n_folds=2)
    heavy = cross_validate(df, [1.0], [1.0], likelihood=lik, n_folds=2, weight=20.0)
    # the same folds and seeds, scored with each fold's training prior scaled by the weight
    rng = np.random.default_rng(0)
    folds = np.array_split(rng.permutation(len(df)), 2)
    seed = int(rng.integers(0, 2**31 - 1, size=2)[0])
    train = df.drop(index=folds[0]).reset_index(drop=True)
    test = df.iloc[np.sort(folds[0])].reset_index(drop=True)
    for cv, w in ((light, 1.0), (heavy, 20.0)):
        prior = scaled_prior(train, lik, 1.0, weight=w)
        m = MAPDP(n_init=1, N0=1.0, likelihood=lik, prior=prior, random_state=seed).fit(train)
        assert cv.folds["heldout_loglik"].iloc[0] == pytest.approx(np.mean(m.score_samples(test)), rel=1e-12)
    assert heavy.folds["heldout_loglik"].iloc[0] != light.folds["heldout_loglik"].iloc[0]
    with pytest.raises(ValueError):
        cross_validate(df, [1.0], [1.0], likelihood=lik, n_folds=2, weight=0.0)


def test_cross_validate_prefers_a_scale_with_the_right_k():
    # spherical Gaussian (known variance sigma2, PLOS Algorithm 2): sigma2 -> s sigma2
    X, _ = blobs(n=30)
    lik = "spherical_gaussian"
    cv = cross_validate(X, [1.0], [0.01, 1.0, 30.0], likelihood=lik, n_folds=4)
    by_scale = cv.summary.set_index("scale")["mean_K"]
    assert by_scale[0.01] > 3 and by_scale[30.0] < 3  # the extremes get K wrong
    assert cv.best_scale == 1.0 and by_scale[cv.best_scale] == 3
    m = MAPDP(n_init=1, N0=cv.best_N0, likelihood=lik, prior=scaled_prior(X, lik, cv.best_scale), random_state=0).fit(X)
    assert m.n_clusters_ == 3


def test_scaled_prior_weight_scales_beta_gamma_dirichlet_priors_only():
    from mapdp_core.core.spec import parse
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=60), rng.integers(0, 2, 60), rng.integers(0, 3, 60), rng.poisson(3, 60)])
    lik = ["normal_gamma", "bernoulli", "categorical", "poisson"]
    base = {b.family: b.prior for b in parse(X, lik).blocks}
    out = scaled_prior(X, lik, 2.0, weight=3.0)
    out = {lik[k] if isinstance(k, int) else k: v for k, v in out.items()}
    assert np.allclose(out["normal_gamma"]["b0"], 2.0 * base["normal_gamma"]["b0"])
    for fam in ("bernoulli", "poisson"):
        assert np.allclose(out[fam]["alpha0"], 3.0 * base[fam]["alpha0"])
        assert np.allclose(out[fam]["beta0"], 3.0 * base[fam]["beta0"])
    assert np.allclose(out["categorical"]["alpha0"][0], 3.0 * base["categorical"]["alpha0"][0])
    with pytest.raises(ValueError, match="> 0"):
        scaled_prior(X, lik, 1.0, weight=0.0)
