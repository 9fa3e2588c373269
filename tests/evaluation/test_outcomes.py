"""The outcome comparison across clusters against slow references written here and against
lifelines (an independent implementation of Kaplan-Meier, the log-rank test and Cox's model)."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mapdp_core.evaluation.outcomes import compare_outcome, cox_hazard_ratios, kaplan_meier, logrank_test

lifelines = pytest.importorskip("lifelines")


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
def test_kaplan_meier_matches_the_product_limit_and_lifelines(seed):
    time, event, _ = survival_data(seed)
    curve = kaplan_meier(time, event)
    for at in curve["time"]:
        assert curve.loc[curve["time"] == at, "survival"].item() == pytest.approx(naive_km(time, event, at), abs=1e-12)
    km = lifelines.KaplanMeierFitter().fit(time, event)
    theirs = km.survival_function_["KM_estimate"]
    band = km.confidence_interval_
    for row in curve.itertuples():
        assert theirs.loc[row.time] == pytest.approx(row.survival, abs=1e-12)
        if 0 < row.survival < 1:
            assert band.loc[row.time].iloc[0] == pytest.approx(row.low, rel=1e-6)
            assert band.loc[row.time].iloc[1] == pytest.approx(row.high, rel=1e-6)


@pytest.mark.parametrize("seed", [0, 3])
def test_logrank_matches_lifelines(seed):
    from lifelines.statistics import multivariate_logrank_test

    time, event, groups = survival_data(seed)
    chi2, df, p = logrank_test(time, event, groups)
    theirs = multivariate_logrank_test(time, groups, event)
    assert chi2 == pytest.approx(theirs.test_statistic, rel=1e-9)
    assert df == 2
    assert p == pytest.approx(theirs.p_value, rel=1e-7)
    two = groups < 2
    chi2, df, p = logrank_test(time[two], event[two], groups[two])
    assert chi2 == pytest.approx(multivariate_logrank_test(time[two], groups[two], event[two]).test_statistic, rel=1e-9)


def test_logrank_is_small_without_a_difference_and_large_with_one():
    rng = np.random.default_rng(5)
    g = np.repeat([0, 1], 300)
    same = rng.exponential(1.0, 600)
    assert logrank_test(same, np.ones(600), g)[2] > 0.01
    differ = rng.exponential(np.where(g == 0, 1.0, 3.0))
    assert logrank_test(differ, np.ones(600), g)[2] < 1e-6


def test_cox_hazard_ratios_match_lifelines_without_ties():
    time, event, groups = survival_data(1, n=200, ties=False)
    ours = cox_hazard_ratios(time, event, groups, reference=0).set_index("group")
    frame = pd.DataFrame({"T": time, "E": event, "g1": (groups == 1) * 1.0, "g2": (groups == 2) * 1.0})
    cph = lifelines.CoxPHFitter().fit(frame, "T", "E")  # Efron's ties = Breslow's without ties
    for j, name in ((1, "g1"), (2, "g2")):
        assert ours.loc[j, "hazard_ratio"] == pytest.approx(math.exp(cph.params_[name]), rel=1e-4)  # lifelines stops at its own tolerance
        low, high = np.exp(cph.confidence_intervals_.loc[name])
        assert ours.loc[j, "hr_low"] == pytest.approx(low, rel=1e-4)
        assert ours.loc[j, "hr_high"] == pytest.approx(high, rel=1e-4)


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


def test_cox_with_a_large_ratio_converges_as_lifelines_does():
    """Plain Newton steps from 0 overshoot when a ratio is large (PBC's subtypes: about 17):
    the halved steps reach lifelines' maximum."""
    rng = np.random.default_rng(11)
    g = np.repeat([0, 1, 2], [300, 20, 25])
    t = rng.exponential(1 / np.array([0.05, 1.0, 0.4])[g])
    c = rng.exponential(20.0, len(g))
    time, event = np.minimum(t, c), (t <= c).astype(float)
    ours = cox_hazard_ratios(time, event, g, reference=0).set_index("group")
    frame = pd.DataFrame({"T": time, "E": event, "g1": (g == 1) * 1.0, "g2": (g == 2) * 1.0})
    cph = lifelines.CoxPHFitter().fit(frame, "T", "E", fit_options={"step_size": 0.5})
    assert ours.loc[1, "hazard_ratio"] > 10
    for j, name in ((1, "g1"), (2, "g2")):
        assert ours.loc[j, "hazard_ratio"] == pytest.approx(math.exp(cph.params_[name]), rel=1e-4)


def test_the_shipped_outcomes_line_up_with_their_table():
    from mapdp_core.data.datasets import OUTCOMES, load_dataset, load_outcomes

    for name, roles in OUTCOMES.items():
        X, _, _ = load_dataset(name)
        out = load_outcomes(name)
        assert len(out) == len(X)
        assert out[roles["time"]].gt(0).all() and set(out[roles["event"]].unique()) <= {0, 1}
    assert load_outcomes("iris") is None
