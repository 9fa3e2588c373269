"""MixedEffectsMAPDP (EJS Section 7): closed-form steps against scipy, the NLL against a plain
formula, K = 1 against statsmodels MixedLM on lme4::sleepstudy, synthetic recovery
(OTHER-SYSTEMS.md 4.7), subject bookkeeping and input errors."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from mapdp_core.evaluation.metrics import clustering_scores
from mapdp_core.models.mixed_effects import (MixedEffectsMAPDP, beta_step, neg_log_joint, nw_joint_mode, nw_posterior,
                                      student_nll, tau_step)
from mapdp_core.core.state import SweepState

DATA = Path(__file__).parents[1] / "fixtures"

# statsmodels 0.15.0, computed once (not imported by this test):
#   MixedLM.from_formula("Reaction ~ Days", groups="Subject", re_formula="~Days",
#                        data=pd.read_csv("tests/fixtures/sleepstudy.csv")).fit(reml=True)
MIXEDLM_FE = (251.4051048484852, 10.467285959596026)          # fe_params
MIXEDLM_RE_SD = (24.74058380249056, 5.922129914823937)        # sqrt(diag(cov_re))
MIXEDLM_RESID_SD = 25.59180487930298                          # sqrt(scale)


def _sleep():
    d = pd.read_csv(DATA / "sleepstudy.csv")
    return np.c_[np.ones(len(d)), d.Days.to_numpy(float)], d.Reaction.to_numpy(), d.Subject.to_numpy()


def _synthetic(seed=0, S=300):
    """OTHER-SYSTEMS.md 4.7: n_i = 5, X_i = [1, t], t = 0..4; mu = (0,1), (3,-0.5), (-2,0);
    R^-1 = 0.1 I; tau^-1 = 0.25."""
    rng = np.random.default_rng(seed)
    mus = np.array([[0.0, 1.0], [3.0, -0.5], [-2.0, 0.0]])
    z = rng.integers(0, 3, S)
    beta = mus[z] + rng.normal(scale=math.sqrt(0.1), size=(S, 2))
    g = np.repeat(np.arange(S), 5)
    X = np.c_[np.ones(S * 5), np.tile(np.arange(5.0), S)]
    y = np.einsum("ij,ij->i", X, beta[g]) + rng.normal(scale=0.5, size=S * 5)
    return X, y, g, z


def _small_problem(seed, S=6, P=2, K=2):
    """A random point of the model (data, betas, labels, cluster parameters, tau, prior)."""
    rng = np.random.default_rng(seed)
    n = rng.integers(2, 5, S)
    codes = np.repeat(np.arange(S), n)
    X = rng.normal(size=(len(codes), P))
    beta = rng.normal(size=(S, P))
    y = np.einsum("ij,ij->i", X, beta[codes]) + rng.normal(scale=0.7, size=len(codes))
    labels = np.arange(S) % K
    mu = rng.normal(size=(K, P))
    A = rng.normal(size=(K, P, P))
    R = np.einsum("kij,klj->kil", A, A) + np.eye(P)
    W = rng.normal(size=(P, P))
    prior = {"m0": rng.normal(size=P), "c0": 0.7, "B0": W @ W.T + np.eye(P), "a0": P + 2.5}
    return dict(y=y, X=X, codes=codes, beta=beta, labels=labels, mu=mu, R=R, tau=1.3, prior=prior,
                N0=0.8, a_tau=2.0, b_tau=1.5)


def _nll(p, **change):
    q = {**p, **change}
    return neg_log_joint(q["y"], q["X"], q["codes"], q["beta"], q["labels"], q["mu"], q["R"], q["tau"], q["prior"],
                         q["N0"], q["a_tau"], q["b_tau"])


# ---------------------------------------------------------------------------- closed forms
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_beta_step_minimises_its_conditional(seed):
    p = _small_problem(seed)
    S, P = p["beta"].shape
    XtX = np.stack([p["X"][p["codes"] == i].T @ p["X"][p["codes"] == i] for i in range(S)])
    Xty = np.stack([p["X"][p["codes"] == i].T @ p["y"][p["codes"] == i] for i in range(S)])
    closed = beta_step(XtX, Xty, p["tau"], p["mu"][p["labels"]], p["R"][p["labels"]])
    for i in range(S):
        def f(b, i=i):
            beta = p["beta"].copy()
            beta[i] = b
            return _nll(p, beta=beta)
        res = optimize.minimize(f, p["beta"][i], method="BFGS", options={"gtol": 1e-9})
        np.testing.assert_allclose(closed[i], res.x, atol=1e-5)
        assert f(closed[i]) <= res.fun + 1e-9


@pytest.mark.parametrize("seed", [0, 1])
def test_tau_step_maximises_its_conditional(seed):
    p = _small_problem(seed)
    r = p["y"] - np.einsum("ij,ij->i", p["X"], p["beta"][p["codes"]])
    closed = tau_step(float(r @ r), len(p["y"]), p["a_tau"], p["b_tau"])
    res = optimize.minimize_scalar(lambda lt: _nll(p, tau=math.exp(lt)), bounds=(-10, 10), method="bounded",
                                   options={"xatol": 1e-10})
    assert closed == pytest.approx(math.exp(res.x), rel=1e-5)
    # erratum X1: the shape counts observations (sum n_i), not subjects
    assert closed == pytest.approx((p["a_tau"] + len(p["y"]) / 2 - 1) / (p["b_tau"] + float(r @ r) / 2))


@pytest.mark.parametrize("seed", [0, 3])
def test_cluster_parameters_at_the_joint_nw_mode(seed):
    p = _small_problem(seed)
    P = p["beta"].shape[1]
    k = 0
    members = p["beta"][p["labels"] == k]
    m, R = nw_joint_mode(*nw_posterior(members, **p["prior"]))
    assert np.allclose(R, R.T)
    tri = np.tril_indices(P)

    def unpack(v):
        L = np.zeros((P, P))
        L[tri] = v[P:]
        L[np.diag_indices(P)] = np.exp(L[np.diag_indices(P)])
        return v[:P], L @ L.T

    def f(v):
        mu_k, R_k = unpack(v)
        mu, Rs = p["mu"].copy(), p["R"].copy()
        mu[k], Rs[k] = mu_k, R_k
        return _nll(p, mu=mu, R=Rs)

    L0 = np.linalg.cholesky(p["R"][k])
    L0[np.diag_indices(P)] = np.log(np.diag(L0))
    v0 = np.r_[p["mu"][k], L0[tri]]
    res = optimize.minimize(f, v0, method="BFGS", options={"gtol": 1e-9})
    mu_opt, R_opt = unpack(res.x)
    np.testing.assert_allclose(m, mu_opt, atol=1e-4)
    np.testing.assert_allclose(R, R_opt, rtol=1e-4, atol=1e-5)
    # the marginal Wishart mode (a - P - 1) B is not the joint minimiser
    mm, cc, BB, aa = nw_posterior(members, **p["prior"])
    mu, Rs = p["mu"].copy(), p["R"].copy()
    mu[k], Rs[k] = mm, (aa - P - 1) * BB
    mu2, Rs2 = p["mu"].copy(), p["R"].copy()
    mu2[k], Rs2[k] = m, R
    assert _nll(p, mu=mu2, R=Rs2) < _nll(p, mu=mu, R=Rs)


@pytest.mark.parametrize("seed", [0, 4])
def test_neg_log_joint_equals_plain_formula(seed):
    p = _small_problem(seed)
    pr = p["prior"]
    want = 0.0
    for j, yj in enumerate(p["y"]):
        want -= stats.norm.logpdf(yj, p["X"][j] @ p["beta"][p["codes"][j]], 1 / math.sqrt(p["tau"]))
    for i, b in enumerate(p["beta"]):
        k = p["labels"][i]
        want -= stats.multivariate_normal.logpdf(b, p["mu"][k], np.linalg.inv(p["R"][k]))
    K = len(p["mu"])
    for k in range(K):
        want -= stats.multivariate_normal.logpdf(p["mu"][k], pr["m0"], np.linalg.inv(pr["c0"] * p["R"][k]))
        want -= stats.wishart.logpdf(p["R"][k], df=pr["a0"], scale=pr["B0"])
    counts = np.bincount(p["labels"])
    S = len(p["labels"])
    want -= K * math.log(p["N0"]) + sum(math.lgamma(c) for c in counts) + math.lgamma(p["N0"]) - math.lgamma(S + p["N0"])
    want -= stats.gamma.logpdf(p["tau"], p["a_tau"], scale=1 / p["b_tau"])
    assert _nll(p) == pytest.approx(want, rel=1e-10)


def test_student_t_new_cluster_term_matches_scipy():
    p = _small_problem(5)["prior"]
    P = len(p["m0"])
    nu = p["a0"] - P + 1
    Lam = p["c0"] * nu / (p["c0"] + 1) * p["B0"]
    b = np.array([[0.3, -1.2], [2.0, 0.5]])
    want = -stats.multivariate_t.logpdf(b, loc=p["m0"], shape=np.linalg.inv(Lam), df=nu)
    np.testing.assert_allclose(student_nll(b, **p), want, rtol=1e-10)


def test_each_icm_step_lowers_the_nll():
    """Steps (b), (c), (d) each minimise the NLL over their block, so none raises it."""
    X, y, g, _ = _synthetic(seed=1, S=60)
    est = MixedEffectsMAPDP(max_iter=2)
    states = list(est.iter_sweeps(X, y, g))
    est.from_states(X, y, g, states)
    codes = np.repeat(np.arange(60), 5)
    p = dict(y=y, X=X, codes=codes, beta=est.coef_ + 0.3, labels=est.labels_, mu=est.cluster_means_ - 0.2,
             R=est.cluster_precisions_ * 0.5, tau=est.tau_ * 2, prior=est.prior_, N0=1.0, a_tau=1.0, b_tau=1.0)
    before = _nll(p)
    K = len(p["mu"])
    mu, R = np.empty_like(p["mu"]), np.empty_like(p["R"])
    for k in range(K):
        mu[k], R[k] = nw_joint_mode(*nw_posterior(p["beta"][p["labels"] == k], **p["prior"]))
    after_b = _nll(p, mu=mu, R=R)
    XtX = np.stack([X[codes == i].T @ X[codes == i] for i in range(60)])
    Xty = np.stack([X[codes == i].T @ y[codes == i] for i in range(60)])
    beta = beta_step(XtX, Xty, p["tau"], mu[p["labels"]], R[p["labels"]])
    after_c = _nll(p, mu=mu, R=R, beta=beta)
    r = y - np.einsum("ij,ij->i", X, beta[codes])
    tau = tau_step(float(r @ r), len(y), 1.0, 1.0)
    after_d = _nll(p, mu=mu, R=R, beta=beta, tau=tau)
    assert before > after_b > after_c > after_d


# ---------------------------------------------------------------------------- oracles
def test_k1_matches_mixedlm_fixed_effects_on_sleepstudy():
    """N0 = 1e-8 keeps K = 1: the linear mixed model. Fixed effects within 0.5 % of MixedLM's
    REML estimates; the joint-mode ICM shrinks the random-effect SDs (we get about 0.58 and 0.68
    of REML's), so they are only bracketed; the residual SD within 5 %."""
    X, y, g = _sleep()
    m = MixedEffectsMAPDP(N0=1e-8, max_iter=2000, tol=1e-12, random_state=0).fit(X, y, g)
    assert m.n_clusters_ == 1 and m.converged_
    np.testing.assert_allclose(m.cluster_means_[0], MIXEDLM_FE, rtol=5e-3)
    sd = np.sqrt(np.diag(np.linalg.inv(m.cluster_precisions_[0])))
    ratio = sd / np.array(MIXEDLM_RE_SD)
    assert np.all((ratio > 0.4) & (ratio < 1.1)), ratio
    assert 1 / math.sqrt(m.tau_) == pytest.approx(MIXEDLM_RESID_SD, rel=0.05)
    assert len(m.subjects_) == 18 and m.coef_.shape == (18, 2)
    # held-out density with K = 1: N(y | X mu, X R^-1 X' + tau^-1 I) per subject (the new-cluster weight is ~1e-9)
    first = g == g[0]
    cov = X[first] @ np.linalg.inv(m.cluster_precisions_[0]) @ X[first].T + np.eye(first.sum()) / m.tau_
    want = stats.multivariate_normal.logpdf(y[first], X[first] @ m.cluster_means_[0], cov)
    assert m.score_samples(X, y, g)[0] == pytest.approx(want, rel=1e-6)


def test_synthetic_recovery():
    X, y, g, z = _synthetic(seed=0)
    m = MixedEffectsMAPDP(N0=1.0, random_state=0).fit(X, y, g)
    scores = clustering_scores(z, m.labels_)
    assert scores["nmi"] > 0.95 and m.n_clusters_ == 3, scores
    order = np.argsort(m.cluster_means_[:, 0])
    np.testing.assert_allclose(m.cluster_means_[order], [[-2, 0], [0, 1], [3, -0.5]], atol=0.15)
    h = np.asarray(m.objective_history_)
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h[:-1]))  # observed here; not guaranteed (monotone = None)
    assert m.neg_log_joint_ == h[-1]
    assert np.isfinite(m.score(X, y, g))


# ---------------------------------------------------------------------------- bookkeeping and errors
def test_subjects_in_order_of_first_appearance_and_contract():
    X, y, g = _sleep()
    rng = np.random.default_rng(3)
    perm = rng.permutation(len(y))
    ids = np.array([f"s{v}" for v in g], dtype=object)[perm]
    m = MixedEffectsMAPDP(N0=1e-8, max_iter=50, n_init=1).fit(X[perm], y[perm], ids)
    assert list(m.subjects_) == list(pd.unique(ids))
    assert m.labels_.shape == (18,) and m.coef_.shape == (18, 2)
    assert (MixedEffectsMAPDP.input, MixedEffectsMAPDP.restart_key, MixedEffectsMAPDP.keep,
            MixedEffectsMAPDP.step, MixedEffectsMAPDP.monotone) == ("numeric", "neg_log_joint", "last", "iteration", None)
    states = list(MixedEffectsMAPDP(N0=1e-8, max_iter=50, n_init=1).iter_sweeps(X[perm], y[perm], ids))
    assert all(isinstance(s, SweepState) for s in states)
    assert [s.neg_log_joint for s in states] == m.objective_history_
    # each subject's coefficients do not depend on the row order
    m2 = MixedEffectsMAPDP(N0=1e-8, max_iter=50, n_init=1).fit(X, y, np.array([f"s{v}" for v in g], dtype=object))
    idx = [list(m2.subjects_).index(s) for s in m.subjects_]
    np.testing.assert_allclose(m.coef_, m2.coef_[idx], rtol=1e-8)


def test_bad_inputs_name_the_problem():
    X, y, g = _sleep()
    with pytest.raises(ValueError, match="y has 179 values but X has 180 rows"):
        MixedEffectsMAPDP().fit(X, y[:-1], g)
    with pytest.raises(ValueError, match="groups has 179 ids but X has 180 rows"):
        MixedEffectsMAPDP().fit(X, y, g[:-1])
    with pytest.raises(ValueError, match="y contains NaN"):
        MixedEffectsMAPDP().fit(X, np.r_[np.nan, y[1:]], g)
    with pytest.raises(ValueError, match="N0"):
        MixedEffectsMAPDP(N0=0).fit(X, y, g)
    with pytest.raises(ValueError, match="prior keys"):
        MixedEffectsMAPDP(prior={"nu": 3}).fit(X, y, g)


def test_subject_with_fewer_rows_than_p_uses_the_prior():
    X, y, g = _sleep()
    keep = np.r_[np.flatnonzero(g != g[0]), 0]  # the first subject keeps one row only (P = 2)
    m = MixedEffectsMAPDP(N0=1e-8, max_iter=200, random_state=0).fit(X[keep], y[keep], g[keep])
    assert len(m.subjects_) == 18 and np.all(np.isfinite(m.coef_))
    lone = list(m.subjects_).index(g[0])
    # its slope is the cluster's (shrunk to mu), its line passes near its one observation
    assert abs(m.coef_[lone, 1] - m.cluster_means_[0, 1]) < 3 * MIXEDLM_RE_SD[1]
    assert np.all(np.isfinite(m.score_samples(X[keep], y[keep], g[keep])))


def test_score_samples_monte_carlo_is_seeded_and_close_to_plugin():
    X, y, g = _sleep()
    m = MixedEffectsMAPDP(N0=1.0, random_state=0).fit(X, y, g)
    a = m.score_samples(X, y, g, method="mc", n_draws=4000)
    b = m.score_samples(X, y, g, method="mc", n_draws=4000)
    np.testing.assert_array_equal(a, b)
    plug = m.score_samples(X, y, g)
    assert a.shape == plug.shape == (18,)
    assert np.max(np.abs(a - plug)) < 1.0  # only the N0/(N+N0) new-cluster term differs


def test_restarts_keep_the_lowest_nll():
    """Seed 9 of the synthetic problem: the input-order run merges two clusters; the best of
    6 runs (restart 0 in input order, then random orders) finds the three, with a lower NLL."""
    X, y, g, z = _synthetic(seed=9)
    one = MixedEffectsMAPDP(N0=1.0, n_init=1).fit(X, y, g)
    best = MixedEffectsMAPDP(N0=1.0, n_init=6, random_state=0).fit(X, y, g)
    assert best.restart_values_[0] == pytest.approx(one.neg_log_joint_)
    assert best.neg_log_joint_ == pytest.approx(best.restart_values_.min())
    assert best.neg_log_joint_ < one.neg_log_joint_ - 10
    assert clustering_scores(z, best.labels_)["nmi"] > 0.95 and best.n_clusters_ == 3


def _small_panel(seed=0, S=20, n=5):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(S), n)
    X = np.column_stack([np.ones(S * n), rng.normal(size=S * n)])
    y = X @ np.array([1.0, 2.0]) + rng.normal(size=S * n) * 0.3
    return X, y, g


@pytest.mark.parametrize("case, message", [
    ("text in X", r"X must be a design matrix of numbers .* holds 'x'"),
    ("text in y", r"y must be one numeric response per row; it holds 'high'"),
    ("huge X", r"X holds values as large as .* rescale X"),
    ("huge y", r"y holds values as large as .* rescale y"),
])
def test_bad_inputs_are_named_as_mapdp_names_them(case, message):
    """Issue 29: MixedEffectsMAPDP said "could not convert string to float" for text and blamed
    "full column rank" for values near 1e200."""
    X, y, g = _small_panel()
    if case == "text in X":
        X = pd.DataFrame({"a": ["x"] * len(y), "b": X[:, 1]})
    elif case == "text in y":
        y = ["high"] * len(y)
    elif case == "huge X":
        X = X * 1e200
    else:
        y = y * 1e200
    with pytest.raises(ValueError, match=message):
        MixedEffectsMAPDP().fit(X, y, g)


def test_score_samples_refuses_a_bad_n0_set_after_fitting():
    X, y, g = _small_panel(1)
    model = MixedEffectsMAPDP().fit(X, y, g)
    assert np.all(np.isfinite(model.score_samples(X, y, g)))
    with pytest.raises(ValueError, match="N0 must be"):
        model.set_params(N0=-1).score_samples(X, y, g)
