"""The outcome comparison across clusters against slow references written here from the
definitions and against scipy's independent Kaplan-Meier (``scipy.stats.ecdf`` of censored data)
and two-sample log-rank test (``scipy.stats.logrank``)."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from mapdp_core.evaluation.outcomes import compare_outcome, cox_hazard_ratios, kaplan_meier, logrank_test


def survival_data(seed=0, n=120, ties=True):
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, 3, n)
    rate = np.array([0.5, 1.0, 2.5])[groups]
    t = rng.exponential(1 / rate)
    c = rng.exponential(1.5, n)
    time = np.minimum(t, c)
    if ties:
        time = np.round(time, 1) + 0.1
    return time, (t <= c).astype(float), groups


def naive_km(time, event, at):
    """S(at) by the product-limit definition, one event time at a time."""
    s = 1.0
    for u in sorted(set(time[event == 1])):
        if u > at:
            break
        n = np.sum(time >= u)
        d = np.sum((time == u) & (event == 1))
        s *= 1 - d / n
    return s


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kaplan_meier_matches_the_product_limit_and_scipy(seed):
    time, event, _ = survival_data(seed)
    curve = kaplan_meier(time, event)
    for at in curve["time"]:
        assert curve.loc[curve["time"] == at, "survival"].item() == pytest.approx(naive_km(time, event, at), abs=1e-12)
    done = event == 1
    theirs = stats.ecdf(stats.CensoredData(uncensored=time[done], right=time[~done])).sf
    with warnings.catch_warnings():  # scipy warns where the band is undefined (S = 1 or 0)
        warnings.simplefilter("ignore", RuntimeWarning)
        band = theirs.confidence_interval(0.95, method="log-log")
    steps = curve.iloc[1:]
    at = np.searchsorted(theirs.quantiles, steps["time"])
    assert np.allclose(theirs.probabilities[at], steps["survival"], atol=1e-12)
    inside = (steps["survival"] > 0) & (steps["survival"] < 1)
    assert np.allclose(band.low.probabilities[at][inside], steps["low"][inside], rtol=1e-9)
    assert np.allclose(band.high.probabilities[at][inside], steps["high"][inside], rtol=1e-9)


def slow_logrank(time, event, groups):
    """(O - E)' V^- (O - E) written out one event time and one pair of groups at a time."""
    names = sorted(set(groups))
    G = len(names)
    O, E, V = [0.0] * G, [0.0] * G, [[0.0] * G for _ in range(G)]
    for t in sorted(set(time[event == 1])):
        n = [sum(1 for ti, gi in zip(time, groups) if ti >= t and gi == g) for g in names]
        d = [sum(1 for ti, ei, gi in zip(time, event, groups) if ti == t and ei == 1 and gi == g) for g in names]
        N, D = sum(n), sum(d)
        for i in range(G):
            O[i] += d[i]
            E[i] += D * n[i] / N
            for j in range(G):
                if N > 1:
                    V[i][j] += D * (N - D) / (N - 1) * n[i] / N * ((i == j) - n[j] / N)
    diff = np.array(O[:-1]) - np.array(E[:-1])
    return float(diff @ np.linalg.pinv(np.array(V)[:-1, :-1]) @ diff)


@pytest.mark.parametrize("seed", [0, 3])
def test_logrank_matches_scipy_and_the_slow_formula(seed):
    time, event, groups = survival_data(seed)
    chi2, df, p = logrank_test(time, event, groups)
    assert chi2 == pytest.approx(slow_logrank(time, event, groups), rel=1e-9)
    assert df == 2 and p == pytest.approx(stats.chi2.sf(chi2, 2))
    two = groups < 2
    chi2, df, p = logrank_test(time[two], event[two], groups[two])
    t, e, g = time[two], event[two] == 1, groups[two]
    theirs = stats.logrank(stats.CensoredData(uncensored=t[e & (g == 0)], right=t[~e & (g == 0)]),
                           stats.CensoredData(uncensored=t[e & (g == 1)], right=t[~e & (g == 1)]))
    assert chi2 == pytest.approx(theirs.statistic ** 2, rel=1e-9)
    assert p == pytest.approx(theirs.pvalue, rel=1e-7)


def test_logrank_is_small_without_a_difference_and_large_with_one():
    rng = np.random.default_rng(5)
    g = np.repeat([0, 1], 300)
    same = rng.exponential(1.0, 600)
    assert logrank_test(same, np.ones(600), g)[2] > 0.01
    differ = rng.exponential(np.where(g == 0, 1.0, 3.0))
    assert logrank_test(differ, np.ones(600), g)[2] < 1e-6


def slow_cox(time, event, groups, reference):
    """Breslow's log partial likelihood written out, maximised by scipy (BFGS from 0), with the
    standard errors from a finite-difference Hessian: (log ratios, standard errors)."""
    others = sorted(set(groups) - {reference})
    Z = np.array([[float(g == o) for o in others] for g in groups])

    def minus_log_pl(beta):
        total = 0.0
        for i in np.flatnonzero(event == 1):
            risk = time >= time[i]
            total += Z[i] @ beta - math.log(np.exp(Z[risk] @ beta).sum())
        return -total

    fit = optimize.minimize(minus_log_pl, np.zeros(len(others)), method="BFGS", options={"gtol": 1e-10})
    h, k = 1e-4, len(others)
    H = np.zeros((k, k))
    for a in range(k):
        for b in range(k):
            ea, eb = np.eye(k)[a] * h, np.eye(k)[b] * h
            H[a, b] = (minus_log_pl(fit.x + ea + eb) - minus_log_pl(fit.x + ea - eb)
                       - minus_log_pl(fit.x - ea + eb) + minus_log_pl(fit.x - ea - eb)) / (4 * h * h)
    return fit.x, np.sqrt(np.diag(np.linalg.inv(H)))


@pytest.mark.parametrize("ties", [False, True])
def test_cox_hazard_ratios_match_the_slow_partial_likelihood(ties):
    time, event, groups = survival_data(1, n=150, ties=ties)
    ours = cox_hazard_ratios(time, event, groups, reference=0).set_index("group")
    beta, se = slow_cox(time, event, groups, 0)
    z = stats.norm.ppf(0.975)
    for j, g in enumerate((1, 2)):
        assert ours.loc[g, "hazard_ratio"] == pytest.approx(math.exp(beta[j]), rel=1e-5)
        assert ours.loc[g, "hr_low"] == pytest.approx(math.exp(beta[j] - z * se[j]), rel=1e-4)
        assert ours.loc[g, "hr_high"] == pytest.approx(math.exp(beta[j] + z * se[j]), rel=1e-4)


def test_cox_recovers_a_known_hazard_ratio():
    rng = np.random.default_rng(7)
    g = np.repeat([0, 1], 2000)
    t = rng.exponential(1 / np.where(g == 0, 1.0, 2.0))
    hr = cox_hazard_ratios(t, np.ones_like(t), g, reference=0).set_index("group")
    assert hr.loc[1, "hazard_ratio"] == pytest.approx(2.0, rel=0.1)
    assert hr.loc[1, "hr_low"] < 2.0 < hr.loc[1, "hr_high"]


def test_a_cluster_without_events_gets_no_finite_ratio():
    time = np.array([1, 2, 3, 4, 5, 6, 7, 8.0])
    event = np.array([1, 1, 0, 1, 0, 0, 0, 0.0])
    g = np.array([0, 0, 0, 0, 1, 1, 2, 2])
    out = compare_outcome(g, time, "time_to_event", event=event)
    row = out.table.set_index("cluster")
    assert row.loc[1, "hazard_ratio"] == 0.0 and math.isnan(row.loc[1, "hr_low"])
    assert out.reference == 0


def test_binary_rates_wilson_intervals_and_chi_square():
    labels = np.repeat([0, 1, 2], [50, 30, 20])
    y = np.r_[np.ones(10), np.zeros(40), np.ones(15), np.zeros(15), np.ones(18), np.zeros(2)]
    out = compare_outcome(labels, y, "binary", name="relapse")
    t = out.table.set_index("cluster")
    assert t.loc[0, "rate"] == 0.2 and t.loc[2, "events"] == 18
    # Wilson's interval for 10 / 50, written out
    z, p, n = stats.norm.ppf(0.975), 0.2, 50
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert t.loc[0, "low"] == pytest.approx(centre - half) and t.loc[0, "high"] == pytest.approx(centre + half)
    table = [[40, 10], [15, 15], [2, 18]]
    assert out.p_value == pytest.approx(stats.chi2_contingency(table, correction=False)[1])
    assert "not circular" in out.sentence()


def test_numeric_means_intervals_and_kruskal():
    rng = np.random.default_rng(2)
    labels = np.repeat([0, 1], 40)
    y = np.r_[rng.normal(0, 1, 40), rng.normal(1, 1, 40)]
    out = compare_outcome(labels, y, "numeric")
    t = out.table.set_index("cluster")
    mean, sem = y[:40].mean(), stats.sem(y[:40])
    low, high = stats.t.interval(0.95, 39, loc=mean, scale=sem)
    assert t.loc[0, "low"] == pytest.approx(low) and t.loc[0, "high"] == pytest.approx(high)
    assert out.p_value == pytest.approx(stats.kruskal(y[:40], y[40:]).pvalue)


def test_rows_without_an_outcome_are_left_out_and_counted():
    labels = np.array([0, 0, 1, 1, 1])
    out = compare_outcome(labels, [1, np.nan, 0, 1, None], "binary")
    assert out.left_out == 2 and out.table["n"].sum() == 3
    out = compare_outcome(labels, [1.0, 2.0, 3.0, np.nan, 5.0], "time_to_event", event=[1, 0, None, 1, 1])
    assert out.left_out == 2
    # cluster 1's one event comes when no other row is at risk: no finite hazard ratio, no crash
    assert math.isnan(out.table.set_index("cluster").loc[1, "hazard_ratio"])


@pytest.mark.parametrize("outcome, kind, event, words", [
    (["a", "b", "c"], "numeric", None, "must be numbers"),
    ([1, 2, 3, 4], "numeric", None, "one per row"),
    ([1, 2, 3], "time_to_event", None, "event flag"),
    ([1, -2, 3], "time_to_event", [1, 1, 1], "negative"),
    ([1, 2, 3], "time_to_event", [1, 2, 1], "0/1"),
    ([1, 0, 1], "survival", None, "not known"),
    ([np.nan] * 3, "numeric", None, "no row has a value"),
    ([1.0, np.inf, 2.0], "numeric", None, "infinite"),
])
def test_bad_outcomes_get_plain_messages(outcome, kind, event, words):
    with pytest.raises(ValueError, match=words):
        compare_outcome([0, 1, 1], outcome, kind, event=event)


def test_cox_with_a_large_ratio_converges():
    """Plain Newton steps from 0 overshoot when a ratio is large (PBC's subtypes: about 17): the
    halved steps reach the maximum the slow reference finds."""
    rng = np.random.default_rng(11)
    g = np.repeat([0, 1, 2], [150, 20, 25])
    t = rng.exponential(1 / np.array([0.05, 1.0, 0.4])[g])
    c = rng.exponential(20.0, len(g))
    time, event = np.minimum(t, c), (t <= c).astype(float)
    ours = cox_hazard_ratios(time, event, g, reference=0).set_index("group")
    beta, _ = slow_cox(time, event, g, 0)
    assert ours.loc[1, "hazard_ratio"] > 10
    for j, name in enumerate((1, 2)):
        assert ours.loc[name, "hazard_ratio"] == pytest.approx(math.exp(beta[j]), rel=1e-5)


def test_the_shipped_outcomes_line_up_with_their_table():
    from mapdp_core.data.datasets import OUTCOMES, load_dataset, load_outcomes

    for name, roles in OUTCOMES.items():
        X, _, _ = load_dataset(name)
        out = load_outcomes(name)
        assert len(out) == len(X)
        assert out[roles["time"]].gt(0).all() and set(out[roles["event"]].unique()) <= {0, 1}
    assert load_outcomes("iris") is None


def test_outcome_columns_are_read_by_their_values():
    from mapdp_core.evaluation.outcomes import outcome_spec

    t = pd.DataFrame({"years": [1.5, 2.0, 0.3], "died": [1, 0, 1], "relapse": ["yes", "no", None],
                      "score": [3.2, 4.1, 5.0], "flag2": [0, 1, 1]})
    assert outcome_spec(t, ["relapse"]) == {"kind": "binary", "column": "relapse"}
    assert outcome_spec(t, ["score"]) == {"kind": "numeric", "column": "score"}
    assert outcome_spec(t, ["died", "years"]) == {"kind": "time_to_event", "time": "years", "event": "died"}
    for cols, words in [(["died", "flag2"], "both hold only 0/1"), (["years", "score"], "no 0/1 event flag"),
                        (["years", "died", "score"], "3 columns")]:
        with pytest.raises(ValueError, match=words):
            outcome_spec(t, cols)
    with pytest.raises(ValueError, match="negative"):
        outcome_spec(t.assign(years=[-1.0, 2.0, 3.0]), ["years", "died"])
