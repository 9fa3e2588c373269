"""What the app's pages display, computed in mapdp_core (no Streamlit): p-values, the tests table,
imputed rows, the N0 picture, saved settings, the comparison estimate, the Home page's grouping."""
import json

import numpy as np
import pandas as pd
import pytest

from explorer import comparison, report, runner, sharing, sources
from mapdp_core.models import registry
from mapdp_core.evaluation.profiles import feature_tests
from mapdp_core.selection.priors import expected_clusters


@pytest.mark.parametrize("p, shown", [(0.5, "0.5"), (0.0312, "0.031"), (0.001, "0.001"), (0.00099, "9.9e-04"),
                                      (3.2e-5, "3.2e-05"), (1.076651e-117, "1.1e-117"), (0.0, "< 1e-300"),
                                      (1e-310, "< 1e-300"), (np.nan, ""), (None, "")])
def test_p_values_read_as_two_significant_figures(p, shown):
    assert report.format_p(p) == shown


def test_welch_on_a_cluster_without_variation_falls_back_to_the_rank_test_with_a_note():
    # scipy's Welch ANOVA divides by each cluster's variance: a constant cluster gave p = NaN ("None" on screen)
    rng = np.random.default_rng(0)
    labels = np.repeat([0, 1, 2], 10)
    df = pd.DataFrame({"steps": np.r_[np.ones(10), np.full(10, 2.0), np.linspace(3, 4, 10)],
                       "noise": rng.normal(size=30)})
    tests = feature_tests(df, labels, {"steps": "normal_gamma", "noise": "normal_gamma"}).set_index("feature")
    assert np.isfinite(tests.loc["steps", "p_value"]) and tests.loc["steps", "test"] == "Kruskal-Wallis"
    assert "constant within cluster(s) 0, 1" in tests.loc["steps", "note"]
    assert tests.loc["noise", "test"] == "Welch ANOVA" and tests.loc["noise", "note"] == ""


def test_the_tests_table_says_why_a_feature_was_not_tested_instead_of_none():
    labels = np.repeat([0, 1], 10)
    df = pd.DataFrame({"flat": np.ones(20), "x": np.r_[np.zeros(10), np.ones(10)] + np.linspace(0, 0.1, 20)})
    tests = feature_tests(df, labels, {"flat": "normal_gamma", "x": "normal_gamma"})
    shown = report.tests_for_display(tests).set_index("feature")
    assert shown.loc["flat", "p_value"] == "not testable: the feature is constant"
    assert shown.loc["flat", "q_value"] == "–" and shown.loc["flat", "significant"] == "–"
    assert shown.loc["x", "p_value"] == report.format_p(tests.set_index("feature").loc["x", "p_value"])
    assert shown.loc["x", "significant"] == "yes"
    assert not shown.isna().any().any()  # nothing for the table to print as "None"


def test_imputed_rows_show_names_ids_and_which_cells_were_filled():
    table = pd.DataFrame({"patient": ["p1", "p2", "p3", "p4", "p5", "p6"],
                          "side": ["left", None, "right", "left", "right", "left"],
                          "dose": [1.0, 2.0, np.nan, 4.0, 5.0, 6.0]})
    d = sources.table_data(table, roles={"patient": "identifier", "side": "feature", "dose": "feature"},
                            families={"side": "categorical", "dose": "normal_gamma"}, name="t")
    assert d.id_column == "patient"
    filled = d.X.copy()
    filled.loc[1, "side"] = 1.0  # code 1 = "right" (codes follow the sorted names)
    filled.loc[2, "dose"] = 3.5
    labels = np.array([0, 0, 1, 1, 1, 0])
    shown, mask = report.imputed_rows(d, labels, filled, d.X.isna())
    assert list(shown["patient"]) == ["p2", "p3"] and list(shown["cluster"]) == [0, 1]
    assert list(shown["side"]) == ["right", "right"] and list(shown["filled"]) == ["side", "dose"]
    assert shown.loc[1, "dose"] == 3.5
    assert mask.loc[0, "side"] and not mask.loc[0, "dose"] and mask.loc[1, "dose"] and not mask["patient"].any()


def test_without_an_id_column_rows_are_numbered_from_one():
    d = sources.clinical_data(n=60, missing_rate=0.2, seed=1)
    name, ids = report.row_ids(d)
    assert name == "row" and ids.tolist() == list(range(1, 61))


def test_expected_clusters_curve_is_the_crp_sum():
    curve = report.expected_clusters_curve([0.3, 3.0], 4000)
    for n0 in (0.3, 3.0):
        part = curve[curve["N0"] == n0]
        assert part["N"].iloc[0] == 1 and part["expected_K"].iloc[0] == pytest.approx(1.0)
        assert part["N"].iloc[-1] == 4000
        assert part["expected_K"].iloc[-1] == pytest.approx(expected_clusters(n0, 4000), rel=1e-12)
        assert (np.diff(part["expected_K"]) > 0).all()
    with pytest.raises(ValueError, match="positive"):
        report.expected_clusters_curve([0.0], 10)


def test_settings_survive_a_json_file_and_a_link_and_bad_ones_are_named():
    settings = {"N0": 0.312, "spread": 2.0, "algorithms": ["K-means", "MAP-DP"], "K-means:n_clusters": 4,
                "restarts": 5, "match_k": False, "seed": 7, "cv_shown": True}
    back, ignored = sharing.settings_from_json(sharing.settings_to_json(settings))
    assert back == {k: v for k, v in settings.items() if k != "cv_shown"} | {"algorithms": ["MAP-DP", "K-means"]}
    assert "cv_shown" not in json.loads(sharing.settings_to_json(settings))["settings"] and ignored == []
    assert sharing.settings_from_query(sharing.settings_to_query(settings))[0] == back
    with pytest.raises(ValueError, match="not JSON"):
        sharing.settings_from_json(b"N0 = 3")
    with pytest.raises(ValueError, match="'restarts' must be a whole number"):
        sharing.settings_from_query({"restarts": "2.5"})
    with pytest.raises(ValueError, match="'N0' must be at least"):
        sharing.settings_from_query({"N0": "-1"})
    with pytest.raises(ValueError, match="'algorithms' must list algorithms"):
        sharing.settings_from_query({"algorithms": "MAP-DP,SVM"})
    assert sharing.settings_from_query({"N0": "2", "colour": "red"}) == ({"N0": 2.0}, ["colour"])


def test_compare_estimate_times_each_algorithm_on_the_data():
    d = sources.scenario_data("5.2", n=400)
    est = comparison.compare_estimate(d, ["MAP-DP", "K-means", "Gibbs"], N0=1.0, K=3, restarts=2, gibbs_sweeps=30)
    assert list(est["algorithm"]) == ["MAP-DP", "K-means", "Gibbs"]
    assert (est["step_seconds"] > 0).all() and (est["setup_seconds"] > 0).all()
    gibbs = est.set_index("algorithm").loc["Gibbs"]
    assert gibbs["max_steps"] == 30
    assert gibbs["max_seconds"] == pytest.approx(2 * (gibbs["setup_seconds"] + 29 * gibbs["step_seconds"]))
    with pytest.raises(ValueError, match="unknown algorithm"):
        comparison.compare_estimate(d, ["SVM"])


def test_compare_reports_each_algorithm_as_it_starts():
    d = sources.scenario_data("5.2", n=300)
    started, steps = [], []
    table = comparison.compare(d, ["MAP-DP", "K-means"], N0=1.0, K=3, restarts=2,
                             on_algorithm=lambda *a: started.append(a), on_step=lambda i, n: steps.append((i, n)))
    assert started == [("MAP-DP", 1, 2), ("K-means", 2, 2)]
    assert steps == [(1, 4), (2, 4), (3, 4), (4, 4)] and len(table) == 4


def test_home_groups_match_kmeans_measured_on_the_scenarios():
    """5.5 is where K-means succeeds (PLOS Table 1 and Section 5.5): measured here, given the true K."""
    groups = report.scenarios_by_kmeans()
    assert groups == {"fails": ["5.1", "5.2", "5.3", "5.4", "5.6"], "succeeds": ["5.5"]}
    from mapdp_core import clustering_scores

    for section, fails in (("5.5", False), ("5.2", True)):
        d = sources.scenario_data(section, n=1000)
        run = runner.run(d, "K-means", {"n_clusters": int(d.truth.max() + 1)}, restarts=3)
        nmi = clustering_scores(d.truth, run.final.labels)["nmi"]
        assert (nmi < 0.9) == fails, (section, nmi)


def test_compare_runs_sugs_and_dp_search_with_explores_settings():
    d = sources.scenario_data("5.2", n=300)
    options = comparison.compare_options({"DP search:beam_size": 4, "DP search:heuristic": "trivial",
                                        "K-means:n_clusters": 7, "Gibbs:n_sweeps": 11, "N0": 2.0},
                                       ["SUGS", "DP search", "K-means", "Gibbs"])
    # Compare sets K and the Gibbs sweeps itself: only DP search's own settings come from Explore
    assert options == (("DP search:beam_size", 4), ("DP search:heuristic", "trivial"))
    steps = []
    table = comparison.compare(d, ["SUGS", "DP search", "K-means"], N0=1.0, K=3, restarts=2, options=options,
                             on_step=lambda i, n: steps.append((i, n)))
    assert table.attrs["stopped"] is False
    # DP search has no random element: one run whatever the restarts, and no "ended early" warning
    assert table.groupby("algorithm", sort=False).size().to_dict() == {"SUGS": 2, "DP search": 1, "K-means": 2}
    assert steps[-1] == (5, 5)
    assert np.isfinite(table["nmi"]).all() and (table["K"] >= 1).all()
    est = comparison.compare_estimate(d, ["SUGS", "DP search"], N0=1.0, restarts=3, options=options).set_index("algorithm")
    assert est.loc["DP search", "one_run"] and est.loc["DP search", "restarts"] == 1
    assert not est.loc["SUGS", "one_run"] and est.loc["SUGS", "restarts"] == 3
    again = comparison.scale_estimate(est.reset_index(), 6).set_index("algorithm")
    assert again.loc["SUGS", "max_seconds"] == pytest.approx(2 * est.loc["SUGS", "max_seconds"])
    assert again.loc["DP search", "max_seconds"] == pytest.approx(est.loc["DP search", "max_seconds"])


def test_a_comparison_cut_by_its_time_limit_says_so():
    d = sources.scenario_data("5.2", n=300)
    table = comparison.compare(d, ["MAP-DP", "K-means"], N0=1.0, restarts=2, should_stop=lambda: True)
    assert table.attrs["stopped"] is True and len(table) == 0


def test_a_run_stopped_midway_scores_only_the_rows_placed():
    from mapdp_core import clustering_scores

    d = sources.scenario_data("5.2", n=400)
    run = runner.run(d, "SUGS", {"N0": 1.0}, restarts=1, should_stop=lambda: True)  # stops after one block
    labels = run.final.labels
    assert run.stopped and (labels == -1).any() and (labels >= 0).any()
    placed = labels >= 0
    want = clustering_scores(d.truth[placed], labels[placed])
    assert run.restarts["nmi"].iloc[0] == pytest.approx(want["nmi"])
    assert run.restarts["K"].iloc[0] == run.final.n_clusters == len(np.unique(labels[placed]))
    heat = report.cluster_heatmap(d, labels)
    assert -1 not in heat.columns and list(heat.columns) == list(range(run.final.n_clusters))


def test_steps_are_counted_in_words_for_every_registered_algorithm():
    assert runner.count_steps("sweep", 1) == "1 sweep" and runner.count_steps("sweep", 7) == "7 sweeps"
    assert runner.count_steps("pass", 2) == "2 passes" and runner.count_steps("block of rows", 5) == "5 blocks of rows"
    for cls in registry.ALGORITHMS.values():
        assert runner.count_steps(cls.step, 2).startswith("2 ") and "ss " not in runner.count_steps(cls.step, 2)


def test_settings_files_and_links_carry_the_new_algorithms_and_their_controls():
    settings, ignored = sharing.settings_from_query({"algorithms": "MAP-DP,SUGS,DP search", "DP search:beam_size": "5",
                                                      "DP search:heuristic": "trivial", "SUGS:beam_size": "3"})
    assert settings == {"algorithms": ["MAP-DP", "SUGS", "DP search"], "DP search:beam_size": 5,
                        "DP search:heuristic": "trivial"} and ignored == ["SUGS:beam_size"]
    with pytest.raises(ValueError, match="heuristic"):
        sharing.check_settings({"DP search:heuristic": "psychic"})
    assert sharing.settings_from_json(sharing.settings_to_json(settings))[0] == settings
