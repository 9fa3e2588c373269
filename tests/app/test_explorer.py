"""explorer and explorer.figures: what the app computes and draws."""
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from scipy.optimize import linear_sum_assignment

from mapdp_core import MAPDP, clustering_scores
from explorer import animation, comparison, figures, report, runner, sources


@pytest.fixture(scope="module")
def scenario():
    return sources.scenario_data("5.2", n=600, seed=1)


@pytest.fixture(scope="module")
def clinical():
    return sources.clinical_data(n=200, n_subtypes=3, missing_rate=0.15, seed=2)


def test_scenario_data_holds_every_row_with_truth(scenario):
    assert scenario.n_rows == 600 and scenario.features == ["x", "y"]
    assert scenario.likelihood == {("x", "y"): "normal_wishart"}
    assert scenario.truth.shape == (600,) and set(np.unique(scenario.truth)) == {0, 1, 2}
    assert len(scenario.table) == 600


def test_key_identifies_the_problem(scenario):
    again = sources.scenario_data("5.2", n=600, seed=1)
    other = sources.scenario_data("5.2", n=600, seed=2)
    assert again.key == scenario.key != other.key
    assert sources.with_likelihood(scenario, {"x": "normal_gamma", "y": "normal_gamma"}).key != scenario.key


def test_with_likelihood_groups_normal_wishart_columns_into_one_block():
    d = sources.builtin_data("iris")
    cols = d.features
    fams = {cols[0]: "normal_gamma", cols[1]: "normal_wishart", cols[2]: "normal_gamma", cols[3]: "normal_wishart"}
    new = sources.with_likelihood(d, fams)
    assert new.likelihood == {cols[0]: "normal_gamma", (cols[1], cols[3]): "normal_wishart", cols[2]: "normal_gamma"}
    assert new.family_of(cols[3]) == "normal_wishart"


def test_with_likelihood_groups_each_block_family_into_its_own_block():
    d = sources.builtin_data("iris")
    cols = d.features
    fams = {cols[0]: "normal_wishart_tied", cols[1]: "normal_wishart", cols[2]: "normal_wishart_tied",
            cols[3]: "normal_wishart"}
    new = sources.with_likelihood(d, fams)
    assert new.likelihood == {(cols[0], cols[2]): "normal_wishart_tied", (cols[1], cols[3]): "normal_wishart"}
    assert new.family_of(cols[2]) == "normal_wishart_tied"


def test_with_likelihood_passes_on_the_engines_message():
    d = sources.builtin_data("iris")
    with pytest.raises(ValueError, match="poisson"):
        sources.with_likelihood(d, {d.features[0]: "poisson"})
    with pytest.raises(ValueError, match="not features"):
        sources.with_likelihood(d, {"nope": "poisson"})


def test_numeric_matrix_is_complete_standardised_and_one_hot(clinical):
    Z = sources.numeric_matrix(clinical)
    assert Z.shape[0] == clinical.n_rows and np.isfinite(Z).all()
    n_cat_levels = sum(np.unique(clinical.X[c].dropna()).size for c in clinical.features
                       if clinical.family_of(c) == "categorical")
    n_other = sum(clinical.family_of(c) != "categorical" for c in clinical.features)
    assert Z.shape[1] == n_other + n_cat_levels
    # a real column: mean 0 over its observed rows (gaps sit at 0, the mean)
    j = next(i for i, c in enumerate(clinical.features) if clinical.family_of(c) == "normal_gamma")
    assert abs(Z[:, j].mean()) < 1e-9


def test_projection_pca_matches_svd_and_two_features_pass_through(clinical, scenario):
    coords, names = sources.projection(clinical)
    Z = sources.numeric_matrix(clinical)
    Z = Z - Z.mean(axis=0)
    # principal components are uncorrelated and ordered by variance
    c = np.cov(coords, rowvar=False)
    assert abs(c[0, 1]) < 1e-8 * c[0, 0] and c[0, 0] >= c[1, 1]
    assert np.isclose(c[0, 0], np.linalg.svd(Z, compute_uv=False)[0] ** 2 / (len(Z) - 1))
    assert names[0].startswith("PC1")
    xy, names = sources.projection(scenario)
    assert np.array_equal(xy, scenario.X.to_numpy()) and names == ["x", "y"]
    with pytest.raises(ValueError, match="two different features"):
        sources.projection(scenario, ["x", "x"])


def test_display_sample():
    assert np.array_equal(sources.display_sample(10, 20), np.arange(10))
    s = sources.display_sample(100_000, 4000, seed=3)
    assert s.size == 4000 and np.all(np.diff(s) > 0) and s.max() < 100_000


@pytest.mark.parametrize("restarts", [1, 3])
def test_run_is_what_the_estimator_fits(scenario, restarts):
    """One restart plan: refitting the run's estimator gives the labels the app animates."""
    run = runner.run_mapdp(scenario, N0=3.0, restarts=restarts, seed=7)
    model = clone(run.estimator).fit(scenario.X)
    assert isinstance(model, MAPDP) and model.n_init == restarts
    assert np.array_equal(run.labels, model.labels_)
    np.testing.assert_allclose(run.restarts["objective"], model.restart_neg_log_joints_)
    assert [s.iteration for s in run.states] == list(range(1, len(run.states) + 1))


def test_run_keeps_the_restart_of_lowest_neg_log_joint(scenario):
    run = runner.run_mapdp(scenario, N0=3.0, restarts=4, seed=5)
    assert len(run.restarts) == 4
    assert run.final.neg_log_joint == pytest.approx(run.restarts["objective"].min())
    assert {"nmi", "ari"} <= set(run.restarts.columns)


def test_run_stops_at_the_time_budget(scenario):
    run = runner.run_mapdp(scenario, N0=3.0, restarts=3, time_budget=0.0)
    assert run.stopped and len(run.states) == 1 and len(run.restarts) == 1


def test_kmeans_and_dpmeans_runs(scenario):
    k = runner.run_kmeans(scenario, K=3, restarts=3, seed=0)
    assert k.final.n_clusters == 3 and k.final.objective == pytest.approx(k.restarts["objective"].min())
    lam, reached = runner.lambda_for_k(scenario, 3)
    dp = runner.run_dpmeans(scenario, lam)
    assert reached and dp.final.n_clusters == 3


def test_animation_frames_colours_are_stable_and_final_frames_match_the_truth(scenario):
    # at most MAX_FRAMES sweeps, so that no frame is thinned away
    runs = [runner.run_mapdp(scenario, 3.0, max_iter=animation.MAX_FRAMES), runner.run_kmeans(scenario, 3)]
    coords, _ = sources.projection(scenario)
    sample = np.arange(scenario.n_rows)  # every row: the truth is matched on every row
    fr = animation.animation_frames(runs, coords, sample, scenario.truth)
    assert fr.algorithms == ["MAP-DP", "K-means"]
    assert fr.n_frames == max(len(r.states) for r in runs)
    for a, run in enumerate(runs):
        assert len(fr.colours[a]) == len(run.states) == len(fr.info[a])
        assert all(c.shape == (scenario.n_rows,) for c in fr.colours[a])
        # the colour ids are a relabelling of the partition, frame by frame
        for c, st in zip(fr.colours[a], run.states):
            assert clustering_scores(st.labels[sample], c)["ari"] == pytest.approx(1.0)
        # the final frame carries the truth's ids: as many points agree as under the best relabelling
        final, truth = fr.colours[a][-1], scenario.truth[sample]
        table = pd.crosstab(run.final.labels[sample], truth).to_numpy()
        rows, cols = linear_sum_assignment(table, maximize=True)
        assert np.sum(final == truth) == table[rows, cols].sum()
    # consecutive frames keep ids: most points keep their colour from one sweep to the next
    c = fr.colours[0]
    for t in range(1, len(c)):
        assert np.mean(c[t] == c[t - 1]) > 0.5


def test_animation_frames_thin_long_runs(scenario):
    run = runner.run_mapdp(scenario, 3.0)
    coords, _ = sources.projection(scenario)
    fr = animation.animation_frames([run], coords, max_frames=3)
    assert fr.sweeps[0][0] == 1 and fr.sweeps[0][-1] == run.final.iteration and len(fr.sweeps[0]) <= 3
    # the history keeps every sweep, which the K/objective curves draw
    assert list(fr.history[0]["sweep"]) == [st.iteration for st in run.states]
    assert (fr.thinned == ["MAP-DP"]) == (len(run.states) > 3)
    curves = figures.trace_figure(fr)
    assert list(curves.data[0].x) == list(fr.history[0]["sweep"])


def test_ellipses_are_two_sd_of_each_cluster():
    rng = np.random.default_rng(0)
    pts = rng.multivariate_normal([1.0, -2.0], [[4.0, 1.0], [1.0, 1.0]], size=5000)
    (cid, ring), = animation._ellipses(pts, np.zeros(5000, dtype=int))
    centre = ring[:-1].mean(axis=0)
    assert cid == 0 and np.allclose(centre, pts.mean(axis=0), atol=1e-9)
    # every ellipse point has Mahalanobis distance 2 from the mean under the sample covariance
    inv = np.linalg.inv(np.cov(pts, rowvar=False))
    d = ring - pts.mean(axis=0)
    assert np.allclose(np.einsum("ij,jk,ik->i", d, inv, d), 4.0)


def test_assignments_keep_every_row_in_order_with_gaps(clinical):
    labels = np.arange(clinical.n_rows) % 3
    out = report.assignments(clinical, labels)
    assert len(out) == clinical.n_rows and list(out.index) == list(clinical.table.index)
    assert out.drop(columns="cluster").isna().sum().sum() == clinical.table.isna().sum().sum()
    assert np.array_equal(out["cluster"], labels)
    with pytest.raises(ValueError, match="one label per row"):
        report.assignments(clinical, labels[:-1])


def test_fitted_model_is_the_run(clinical):
    run = runner.run_mapdp(clinical, 1.0, restarts=2, seed=3)
    model = runner.fitted_model(clinical, run)
    assert np.array_equal(model.labels_, run.labels) and model.n_clusters_ == run.final.n_clusters
    refit = clone(model).fit(clinical.X)
    assert np.array_equal(refit.labels_, model.labels_)
    assert refit.neg_log_joint_ == pytest.approx(model.neg_log_joint_)
    proba = model.predict_proba(clinical.X.iloc[:20])
    assert proba.shape == (20, model.n_clusters_ + 1) and np.allclose(proba.sum(axis=1), 1.0)


def test_encode_new_rows_repeats_the_tables_encoding():
    table = pd.DataFrame({"colour": ["red", "blue", None, "red", "green"] * 4,
                          "size": [1.0, 2.5, 3.0, np.nan, 5.0] * 4,
                          "score": [-1, 0, 1, 2, -1] * 4})
    d = sources.table_data(table, families={"colour": "categorical", "size": "normal_gamma", "score": "binomial"},
                            standardize="zscore")
    again = sources.encode_new_rows(d, table)
    pd.testing.assert_frame_equal(again, d.X.reset_index(drop=True), check_dtype=False)
    with pytest.raises(ValueError, match="not seen when fitting"):
        sources.encode_new_rows(d, table.assign(colour="purple"))
    with pytest.raises(ValueError, match="needs numbers"):
        sources.encode_new_rows(d, table.assign(size="big"))


def test_compare_tabulates_every_algorithm(scenario):
    tab = comparison.compare(scenario, ["MAP-DP", "K-means", "Gibbs", "E-M"], restarts=2, gibbs_sweeps=5)
    assert list(tab["algorithm"].unique()) == ["MAP-DP", "K-means", "Gibbs", "E-M"]
    assert len(tab) == 8 and {"K", "nmi", "ari", "iterations", "seconds", "objective"} <= set(tab.columns)
    assert (tab.loc[tab["algorithm"] == "Gibbs", "iterations"] == 5).all()
    summary = comparison.compare_summary(tab)
    assert list(summary["restarts"]) == [2, 2, 2, 2]
    with pytest.raises(ValueError, match="unknown algorithm"):
        comparison.compare(scenario, ["Magic"])


def test_cluster_heatmap_is_standardised_mean_difference(scenario):
    labels = (scenario.X["x"] > scenario.X["x"].median()).to_numpy().astype(int)
    h = report.cluster_heatmap(scenario, labels)
    x = scenario.X["x"].to_numpy()
    assert h.loc["x", 1] == pytest.approx((x[labels == 1].mean() - x.mean()) / x.std())


def test_cluster_heatmap_of_many_features_keeps_the_farthest_apart():
    rng = np.random.default_rng(5)
    labels = np.repeat([0, 1], 50)
    table = pd.DataFrame(rng.normal(size=(100, 60)), columns=[f"f{j}" for j in range(60)])
    shifted = [f"f{j}" for j in range(0, 60, 6)]  # 10 features the clusters move apart
    table.loc[labels == 1, shifted] += 3.0
    data = sources.table_data(table, name="many")
    every = report.cluster_heatmap(data, labels, most=None)
    kept = report.cluster_heatmap(data, labels)
    assert len(every) == 60 and len(kept) == report.HEATMAP_FEATURES
    assert set(shifted) <= set(kept.index[:10])  # farthest first
    farthest = every.abs().max(axis=1)
    assert farthest[kept.index].min() >= farthest.drop(kept.index).max()
    assert list(report.cluster_heatmap(data, labels, most=100).index) == list(every.index)  # few: the table's order


def test_animation_figure_has_a_frame_per_sweep_and_controls(scenario):
    runs = [runner.run_mapdp(scenario, 3.0), runner.run_kmeans(scenario, 3)]
    coords, names = sources.projection(scenario)
    fr = animation.animation_frames(runs, coords, None, scenario.truth)
    fig = figures.animation_figure(fr, coords, names, start=0)
    assert len(fig.frames) == fr.n_frames
    labels = [b.label for b in fig.layout.updatemenus[0].buttons]
    assert any("Play" in s for s in labels) and any("Pause" in s for s in labels)
    assert fig.layout.sliders[0].active == 0 and len(fig.layout.sliders[0].steps) == fr.n_frames
    # the slider counts frames (issue 27: it read one algorithm's sweeps); each title its own steps
    assert [s.label for s in fig.layout.sliders[0].steps] == [str(f + 1) for f in range(fr.n_frames)]
    assert fig.layout.sliders[0].currentvalue.prefix == "frame "
    # the initial traces show frame 0; the last frame shows the converged colours
    assert list(fig.data[0].marker.color) == (fr.colours[0][0] % len(figures.PALETTE)).tolist()
    assert list(fig.frames[-1].data[0].marker.color) == (fr.colours[0][-1] % len(figures.PALETTE)).tolist()
    assert "NMI" in fig.frames[-1].layout.annotations[0].text


def test_builtin_tables_with_text_columns_load_and_get_the_automatic_choice():
    d = sources.builtin_data("palmer_penguins")
    assert d.n_rows == len(d.table) and d.truth is not None and (d.truth >= 0).all()
    assert {"island", "sex"} <= set(d.features) and d.family_of("island") == "categorical"
    choice = runner.auto_settings(d)
    params = runner.mapdp_settings(choice, None, 2.0, 0.5)
    assert params["N0"] == choice.N0 and params["spread"] == 2.0 * choice.spread
    assert params["weight"] == 0.5 * choice.weight and params["structure"] == choice.structure
    r = runner.run(d, "MAP-DP", params)
    assert len(r.final.labels) == d.n_rows


def test_the_apps_run_at_the_chosen_settings_is_mapdps_with_those_settings(scenario):
    """The app's MAP-DP at the automatic choice equals MAPDP with the same explicit settings."""
    from sklearn.base import clone

    choice = runner.auto_settings(scenario)
    r = runner.run(scenario, "MAP-DP", runner.mapdp_settings(choice), restarts=2)
    refit = clone(r.estimator).fit(scenario.X)
    assert np.array_equal(refit.component_labels_, r.final.labels)
    assert np.array_equal(refit.labels_, runner.fitted_model(scenario, r).labels_)
    assert refit.N0_ == choice.N0


def _uploaded(d):
    """``d``'s table as a user would upload it, families as the Data page suggests them."""
    label = d.table.columns[-1]
    return sources.table_data(d.table, roles={label: "label"}), d.table.drop(columns=[label])


def _with_stray_rows():
    """Two groups and three rows far from both (small components that MAPDP() folds)."""
    rng = np.random.default_rng(0)
    table = pd.DataFrame(np.vstack([rng.normal([0, 0], 1.0, (150, 2)), rng.normal([7, 0], 1.0, (150, 2)),
                                    [[3.5, 6.0], [3.6, 6.3], [-4.0, -5.0]]]), columns=["x", "y"])
    table["group"] = ["a"] * 150 + ["b"] * 150 + ["odd"] * 3
    return _uploaded(sources.table_data(table, roles={"group": "label"}))


@pytest.mark.parametrize("make", [lambda: (sources.scenario_data("5.3", n=800, seed=3),) * 2,
                                  lambda: _uploaded(sources.clinical_data(n=200, n_subtypes=3, missing_rate=0.15,
                                                                          seed=2)),
                                  lambda: _uploaded(sources.builtin_data("palmer_penguins")),
                                  _with_stray_rows],
                         ids=["scenario-block", "mixed-with-gaps", "text-columns", "small-groups-folded"])
def test_the_apps_mapdp_is_the_librarys_answer_on_the_raw_table(make):
    """One answer: at the chosen settings the app's recorded run gives what ``MAPDP()`` gives on
    the raw table (structure, prior, N0 and the search's start), partition and joint."""
    d, raw = make()
    raw = raw.X if isinstance(raw, sources.AppData) else raw
    choice = runner.auto_settings(d)
    r = runner.run(d, "MAP-DP", runner.mapdp_settings(choice), restarts=3, seed=0, choice=choice)
    m = MAPDP(random_state=0, n_init=3).fit(raw)
    assert r.final.n_clusters == m.n_components_  # the run records MAP-DP's components
    assert np.array_equal(r.final.labels, m.component_labels_)
    assert r.restarts["objective"].min() == pytest.approx(m.neg_log_joint_, rel=1e-12)
    model = runner.fitted_model(d, r)  # and its fitted model groups them as MAPDP() does
    assert np.array_equal(model.labels_, m.labels_) and model.n_clusters_ == m.n_clusters_
    assert model.min_cluster_size_ == m.min_cluster_size_ and model.merges_.equals(m.merges_)
    # without the choice the runner makes the same one
    again = runner.run(d, "MAP-DP", runner.mapdp_settings(choice), restarts=3, seed=0)
    assert np.array_equal(again.final.labels, r.final.labels)


def test_the_apps_mfm_is_the_librarys_answer_on_the_raw_table():
    """One answer under the mixture of finite mixtures too: the app's search and run under
    ``partition="mfm"`` give what ``MAPDP(partition_prior="mfm")`` gives on the raw table."""
    d, raw = _uploaded(sources.clinical_data(n=200, n_subtypes=3, missing_rate=0.15, seed=2))
    choice = runner.auto_settings(d, partition="mfm")
    settings = runner.mapdp_settings(choice, partition="mfm")
    assert np.isnan(settings["N0"]) and settings["partition_prior"] == "mfm"
    r = runner.run(d, "MAP-DP", settings, restarts=3, seed=0, choice=choice)
    m = MAPDP(random_state=0, n_init=3, partition_prior="mfm").fit(raw)
    assert np.array_equal(r.final.labels, m.component_labels_)
    assert r.restarts["objective"].min() == pytest.approx(m.neg_log_joint_, rel=1e-12)
    model = runner.fitted_model(d, r)
    assert np.array_equal(model.labels_, m.labels_) and np.isnan(model.N0_)
    # the Gibbs sampler follows the MFM; an algorithm without the option (SUGS) keeps the
    # Dirichlet process at the slider's N0
    est, _ = runner.estimator(d, "Gibbs", {**settings, "N0": 2.0}, choice=choice)
    assert est.partition_prior == "mfm"
    est, _ = runner.estimator(d, "SUGS", {**settings, "N0": 2.0}, choice=choice)
    assert est.N0 == 2.0 and "partition_prior" not in est.get_params()


def test_search_likelihood_reads_default_blocks_as_real_columns_and_keeps_a_users_mix(scenario, clinical):
    split, free = runner.search_likelihood(scenario)  # a scenario's default (x, y) block
    assert free and split == {"x": "normal_gamma", "y": "normal_gamma"}
    assert runner.likelihood_for(scenario, "joint") == {("x", "y"): "normal_wishart"}
    assert runner.likelihood_for(scenario, "independent") == split
    assert runner.likelihood_for(scenario, None) == scenario.likelihood
    real = [c for c in clinical.features if clinical.family_of(c) == "normal_gamma"]
    assert len(real) >= 3
    mixed = sources.with_likelihood(clinical, {real[0]: "normal_wishart", real[1]: "normal_wishart"})
    kept, free = runner.search_likelihood(mixed)  # a block beside independent real columns: the user's choice
    assert not free and kept == mixed.likelihood
    assert runner.auto_settings(mixed).structure == "independent"
    assert runner.likelihood_for(mixed, "independent") == mixed.likelihood


def test_the_start_setting_is_checked_and_one_cluster_starts_from_one_cluster(scenario):
    choice = runner.auto_settings(scenario)
    with pytest.raises(ValueError, match="starts from one of"):
        runner.mapdp_settings(choice, start="middle")
    r = runner.run(scenario, "MAP-DP", runner.mapdp_settings(choice, start="one cluster"), restarts=1)
    assert r.estimator.init is None
    searched = runner.run(scenario, "MAP-DP", runner.mapdp_settings(choice), restarts=1, choice=choice)
    assert searched.estimator.init is not None and len(searched.estimator.init) == scenario.n_rows


def test_a_scenario_tells_kmeans_its_clusters_not_its_outliers():
    d = sources.scenario_data("5.3", n=800, seed=0)
    assert int(d.truth.max() + 1) == 5 and d.true_k == 3  # two outlier pairs are classes, not clusters to ask for
    assert sources.scenario_data("5.2", n=800, seed=0).true_k == 3
    assert sources.clinical_data(n=60, seed=0).true_k == int(sources.clinical_data(n=60, seed=0).truth.max() + 1)


def test_a_restart_cut_short_never_wins_over_a_complete_one(scenario):
    """A one-pass method stopped part-way is scored on the rows it reached only; it must not be
    kept over a complete pass, and a fitted model is never made from rows left unplaced."""
    whole = runner.run(scenario, "SUGS", {}, restarts=1, seed=0)
    steps = len(whole.states)
    assert steps > 1 and (whole.final.labels >= 0).all()
    calls = [0]

    def stop_in_second_restart():
        calls[0] += 1
        return calls[0] == steps + 1  # the first step of the second restart

    cut = runner.run(scenario, "SUGS", {}, restarts=2, seed=0, should_stop=stop_in_second_restart)
    assert cut.stopped and cut.restarts["complete"].tolist() == [True, False]
    assert cut.restarts["objective"].iloc[1] < cut.restarts["objective"].iloc[0]  # partial: fewer rows scored
    assert len(cut.states) == steps and (cut.final.labels >= 0).all()  # the complete restart is kept
    only_partial = runner.run(scenario, "SUGS", {}, restarts=1, seed=0, should_stop=lambda: True)
    assert (only_partial.final.labels < 0).any()
    with pytest.raises(ValueError, match="without a cluster"):
        runner.fitted_model(scenario, only_partial)


def test_the_last_frame_says_how_each_run_ended(scenario):
    """Issue 27: every last frame said "(done)", beside a warning that the run had been stopped."""
    converged = runner.run(scenario, "MAP-DP", {"N0": 1.0}, restarts=1)
    limited = runner.run(scenario, "K-means", {"n_clusters": 3, "max_iter": 1}, restarts=1)
    stopped = runner.run(scenario, "Gibbs", {"n_sweeps": 50}, restarts=1, should_stop=lambda: True)
    assert [animation.ending(r) for r in (converged, limited, stopped)] == ["converged", "step limit", "stopped"]
    coords, names = sources.projection(scenario)
    frames = animation.animation_frames([converged, limited, stopped], coords, None, scenario.truth)
    fig = figures.animation_figure(frames, coords, names)
    titles = [a.text for a in fig.frames[-1].layout.annotations[:3]]
    assert "(converged)" in titles[0] and "(step limit)" in titles[1] and "(stopped)" in titles[2]


def test_a_run_that_converged_after_the_deadline_is_done_not_stopped():
    from types import SimpleNamespace

    from explorer.runner import _collect
    states = [SimpleNamespace(converged=False), SimpleNamespace(converged=True)]
    kept, cut = _collect(iter(states[1:]), deadline=0.0, should_stop=None)
    assert kept == states[1:] and cut is False
    kept, cut = _collect(iter(states), deadline=0.0, should_stop=None)
    assert kept == states[:1] and cut is True  # an unconverged state past the deadline is cut


def test_the_chosen_structure_is_said_in_words():
    assert runner.structure_phrase("independent").startswith(", the real-valued features each on its own, each "
                                                             "cluster with its own spread per column")
    assert runner.structure_phrase("joint") == (", the real-valued features as one correlated block, each cluster with "
                                                "a covariance of its own (mclust VVV: variable volume, shape and "
                                                "orientation)")
    assert "one covariance shared by all clusters (mclust EEE" in runner.structure_phrase("shared")
    both = runner.structure_phrase("joint+categorical scales")
    assert both.startswith(", the real-valued features as one correlated block, each cluster with a covariance")
    assert ", the ordinal scales' levels" in both
    assert "categorical, not binomial" in runner.structure_phrase("independent+categorical scales")
    assert runner.structure_phrase("independent", {"a": "categorical", "b": "poisson"}) == ""
