"""One call on any table: MAPDP() with likelihood, prior and N0 all "auto" (mapdp_core.selection.auto).

The simple cases come from the defaults issue: each must end at a labelling that the exact joint
-ln p(X, z | theta0, N0) (checked with the slow reference of tests/naive.py) prefers to one
cluster, and a real structure must be found whatever the data's units.
"""
import warnings

import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP, KMeans, map_dp
from mapdp_core.selection.auto import N0_GRID, AutoLikelihoodWarning, auto_likelihood, is_block
from mapdp_core.evaluation.metrics import clustering_scores
from naive import naive_neg_log_joint


def _fit(X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AutoLikelihoodWarning)
        return MAPDP(random_state=0, **kw).fit(X)


_JOINT = ("normal_wishart", "spherical_gaussian", "gaussian_known_cov")


def _blocks(model):
    """The fitted blocks in the reference's form: joint families whole, the others one column each."""
    out = []
    for b in model._parsed.blocks:
        if b.family in _JOINT:
            out.append((b.family, list(b.columns), b.prior))
            continue
        for j, col in enumerate(b.columns):
            prior = {k: (v[j] if isinstance(v, (list, np.ndarray)) and np.ndim(v) and len(v) == len(b.columns)
                         else v) for k, v in b.prior.items()}
            out.append((b.family, [col], prior))
    return out


def _assert_beats_one_cluster(model):
    """The fit's joint is the reference's, and no worse than putting every row in one cluster."""
    X = model._parsed.X
    mine = naive_neg_log_joint(X, model.labels_, model.N0_, _blocks(model))
    assert model.neg_log_joint_ == pytest.approx(mine, rel=1e-9, abs=1e-6)
    one = naive_neg_log_joint(X, np.zeros(len(X), dtype=int), model.N0_, _blocks(model))
    assert mine <= one + 1e-9


def _mixed_table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 3, n)
    df = pd.DataFrame({
        "patient_id": np.arange(1000, 1000 + n),
        "age": rng.normal(40 + 15 * z, 4.0),
        "bmi": rng.normal(22 + 4 * z, 1.5),
        "smoker": np.where(rng.random(n) < 0.2 + 0.3 * z, "yes", "no"),
        "site": pd.Categorical(np.array(["north", "south", "east"])[z]),
        "visits": pd.array(rng.poisson(1 + 3 * z), dtype="Int64"),
        "treated": rng.random(n) < 0.5,
        "clinic": "A",  # constant
    })
    df.loc[rng.choice(n, 15, replace=False), "bmi"] = np.nan
    df.loc[rng.choice(n, 10, replace=False), "smoker"] = None
    df.loc[rng.choice(n, 5, replace=False), "visits"] = pd.NA
    return df, z


def test_one_call_on_a_mixed_gappy_table_with_an_id_and_a_constant_column():
    df, z = _mixed_table()
    with pytest.warns(AutoLikelihoodWarning, match="patient_id"):
        m = MAPDP(random_state=0).fit(df)
    assert m.labels_.shape == (len(df),)  # every row comes back, in order
    assert set(m.dropped_columns_["column"]) == {"patient_id", "clinic"}
    fams = dict(zip(m.likelihood_["column"], m.likelihood_["family"]))
    assert fams["smoker"] == "bernoulli" and fams["site"] == "categorical" and fams["visits"] == "poisson"
    assert fams["treated"] == "bernoulli"
    assert fams["age"] in ("normal_gamma", "normal_wishart", "normal_wishart_tied")
    assert all(m.likelihood_["reason"].str.len() > 0)
    assert clustering_scores(z, m.labels_)["nmi"] > 0.8
    assert list(m.feature_names_in_) == list(df.columns) and m.n_features_in_ == df.shape[1]
    # new rows as the table gives them: text, categories and gaps
    # the fitted rows themselves, given as the table gave them, mostly go back to their own cluster
    assert np.mean(m.predict(df) == m.labels_) > 0.9
    p = m.predict_proba(df.iloc[:5])
    assert p.shape == (5, m.n_clusters_ + 1) and np.allclose(p.sum(axis=1), 1.0)
    filled, was_missing = m.impute()
    assert was_missing["smoker"].sum() == 10 and set(filled["smoker"].dropna()) <= {"yes", "no"}
    assert set(filled["site"]) <= {"north", "south", "east"}


def test_the_search_is_recorded_and_the_choice_is_its_best():
    df, _ = _mixed_table()
    m = _fit(df)
    table = m.hyperparameter_search_
    assert {"stage", "structure", "spread", "weight", "N0", "K", "neg_log_joint", "evidence", "K_best", "seconds",
            "chosen"} <= set(table)
    assert table["chosen"].sum() == 1
    assert (table["evidence"] <= table["neg_log_joint"] + 1e-9).all()  # a candidate's own fit is in the pool
    best = table.loc[table["evidence"].idxmin()]
    assert bool(best["chosen"]) and best["N0"] == m.N0_ and m.N0_ in N0_GRID
    assert m.hyperparameters_["spread"] == best["spread"] and m.hyperparameters_["weight"] == best["weight"]
    # all rows were searched, and every restart started from the search's partition: never worse
    assert m.hyperparameters_["rows_searched"] == len(df)
    assert m.neg_log_joint_ <= best["evidence"] + 1e-6


def test_explicit_settings_bypass_the_search_and_match_the_free_function():
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(6, 1, (40, 2))])
    m = MAPDP(N0=3.0, likelihood="normal_wishart", prior=None, shuffle=False).fit(X)
    assert m.hyperparameter_search_ is None and m.dropped_columns_.empty
    states = list(map_dp(X, N0=3.0))
    assert np.array_equal(m.labels_, states[-1].labels)
    assert m.N0_ == 3.0
    # an explicit N0 with an automatic prior searches the prior only
    m2 = _fit(X, N0=2.0)
    assert set(m2.hyperparameter_search_["N0"]) == {2.0} and m2.N0_ == 2.0
    # an explicit prior with an automatic N0 searches N0 only
    m3 = _fit(X, likelihood="normal_wishart", prior=None)
    assert set(m3.hyperparameter_search_["spread"]) == {1.0} and set(m3.hyperparameter_search_["N0"]) == set(N0_GRID)


def test_bad_settings_are_refused_with_a_clear_message():
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(ValueError, match="prior must be 'auto', None"):
        MAPDP(prior="eb").fit(X)
    with pytest.raises(ValueError, match="N0 .* must be 'auto' or a finite number"):
        MAPDP(N0="many").fit(X)
    with pytest.raises(ValueError, match="no column to cluster on"):
        _fit(pd.DataFrame({"id": range(10), "k": [1] * 10}))


@pytest.mark.parametrize("case", ["binary", "text3", "groups", "groups_text"])
def test_simple_columns_end_where_the_exact_joint_prefers(case):
    rng = np.random.default_rng(2)
    if case == "binary":
        X = pd.DataFrame({"b": rng.integers(0, 2, 40)})
    elif case == "text3":
        X = pd.DataFrame({"t": np.array(["a", "b", "c"])[rng.integers(0, 3, 60)]})
    else:
        z = np.repeat([0, 1, 2], 33)
        X = pd.DataFrame({"x": 10.0 * z + rng.normal(0, 1, z.size)})
        if case == "groups_text":
            X["g"] = np.array(["lo", "mid", "hi"])[z]
    m = _fit(X)
    assert m.n_clusters_ < len(X) / 4  # the old default put every row alone here
    _assert_beats_one_cluster(m)
    if case.startswith("groups"):
        assert m.n_clusters_ == 3 and clustering_scores(z, m.labels_)["nmi"] > 0.95


def test_a_constant_column_beside_informative_ones_is_left_out():
    rng = np.random.default_rng(3)
    z = np.repeat([0, 1], 50)
    X = np.column_stack([rng.normal(4.0 * z, 1.0), rng.normal(-4.0 * z, 1.0), np.full(100, 7.0)])
    m = _fit(X)
    assert list(m.dropped_columns_["column"]) == ["2"]
    assert m.n_clusters_ == 2 and clustering_scores(z, m.labels_)["nmi"] > 0.95


@pytest.mark.parametrize("D", [20, 100])
def test_many_well_separated_dimensions(D):
    rng = np.random.default_rng(4)
    z = np.repeat([0, 1, 2, 3], 50)
    centres = rng.normal(0, 3.0, (4, D))
    X = centres[z] + rng.normal(0, 1.0, (z.size, D))
    m = _fit(X)
    assert m.n_clusters_ == 4 and clustering_scores(z, m.labels_)["nmi"] > 0.95


def test_results_do_not_depend_on_the_data_units():
    rng = np.random.default_rng(5)
    z = np.repeat([0, 1, 2], 40)
    X = np.column_stack([rng.normal(5.0 * z, 1.0), rng.normal(2.0 * (z == 1), 0.7)])
    ref = _fit(X).labels_
    for c in (1e-6, 1e-3, 1e3, 1e6):
        assert np.array_equal(_fit(X * c).labels_, ref), c


@pytest.mark.parametrize("c", [1e-300, 1e300])
def test_magnitudes_beyond_floating_point_get_a_clear_message(c):
    X = np.random.default_rng(6).normal(size=(30, 2)) * c
    with pytest.raises(ValueError, match="rescale"):
        _fit(X)


def test_a_label_column_never_changes_the_fit():
    df, z = _mixed_table(seed=7)
    df["label"] = z
    a = _fit(df)
    df["label"] = np.random.default_rng(0).permutation(z)
    b = _fit(df)
    assert "label" in set(a.dropped_columns_["column"])
    assert np.array_equal(a.labels_, b.labels_)


def test_auto_likelihood_reports_families_and_reasons_for_arrays_and_frames():
    rng = np.random.default_rng(8)
    X = np.column_stack([rng.normal(size=50), rng.integers(0, 2, 50), rng.poisson(30.0, 50)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        auto = auto_likelihood(X)
    # a float array holds its whole numbers as floats, which a unit can make whole: no evidence of
    # counting, so the third column is a measurement (issue 24); the same counts stored as integers are counts
    assert list(auto.likelihood.values()) == ["normal_gamma", "bernoulli", "normal_gamma"]
    assert "stored as decimals" in auto.table["reason"].iloc[2]
    assert list(auto.X.columns) == ["0", "1", "2"] and auto.dropped.empty
    typed = pd.DataFrame({"x": X[:, 0], "flag": X[:, 1].astype(int), "k": X[:, 2].astype(int)})
    assert list(auto_likelihood(typed).likelihood.values()) == ["normal_gamma", "bernoulli", "poisson"]
    frame = pd.DataFrame({"flag": [True, False] * 10, "n": pd.array([1, 2, None, 4] * 5, dtype="Int64")})
    auto = auto_likelihood(frame)
    assert auto.likelihood == {"flag": "bernoulli", "n": "binomial"}
    assert auto.X["n"].isna().sum() == 5


def test_a_subsampled_search_extends_to_every_row(monkeypatch):
    """Above SEARCH_ROWS the search runs on a subsample; values absent from it (the largest count
    of a binomial column, a rare category) must not stop the full fit."""
    import mapdp_core.selection.auto as auto

    monkeypatch.setattr(auto, "SEARCH_ROWS", 60)
    rng = np.random.default_rng(9)
    z = np.repeat([0, 1], 150)
    score = rng.binomial(6, 0.2 + 0.5 * z)
    score[0] = 10  # one row with the largest score
    kind = np.array(["a", "b"])[z].astype(object)
    kind[1] = "rare"
    df = pd.DataFrame({"x": rng.normal(4.0 * z, 1.0), "score": score, "kind": kind})
    m = _fit(df)
    assert m.hyperparameters_["rows_searched"] == 60 and len(m.labels_) == len(df)
    assert clustering_scores(z, m.labels_)["nmi"] > 0.8


@pytest.mark.parametrize("check_rows", [150, 10_000])
def test_a_subsampled_search_checks_the_structure_on_more_rows(monkeypatch, check_rows):
    """Stage 4: on a table searched on a subsample with both structures offered, the chosen
    candidate and the other structure's best are fitted again on CHECK_ROWS rows (here fewer
    than the table, then all of it) and the lower exact joint there wins; the fit starts from
    that partition and the choice is recorded."""
    import mapdp_core.selection.auto as auto

    monkeypatch.setattr(auto, "SEARCH_ROWS", 40)
    monkeypatch.setattr(auto, "CHECK_ROWS", check_rows)
    rng = np.random.default_rng(2)
    z = rng.integers(0, 3, 400)
    cov = np.array([[1.0, 0.95, 0.9], [0.95, 1.0, 0.95], [0.9, 0.95, 1.0]])  # thin, strongly correlated clusters
    X = rng.multivariate_normal(np.zeros(3), cov * 0.2, 400) + np.array([[0, 0, 0], [2, -2, 0], [-2, 0, 2]])[z]
    m = MAPDP(random_state=0).fit(pd.DataFrame(X, columns=["a", "b", "c"]))
    table = m.hyperparameter_search_
    check = table[table["stage"] == 4]
    assert len(check) == 2 and len(set(check["structure"])) == 2
    assert set(check["structure"]) <= {"independent", "joint", "shared"}
    assert m.hyperparameters_["rows_checked"] == min(check_rows, 400)
    winner = check.loc[check["neg_log_joint"].idxmin()]
    assert m.hyperparameters_["structure"] == winner["structure"]
    if check_rows >= 400:  # checked on every row: the fit starts there and MAP-DP never raises the joint
        assert m.neg_log_joint_ <= winner["neg_log_joint"] + 1e-6
    assert len(m.labels_) == 400


@pytest.mark.parametrize("case", ["gaussian", "mixed_with_gaps"])
def test_the_searchs_lean_runs_are_the_estimators_fits(case):
    """The search runs its candidates through ``mapdp.last_state`` on rows parsed once; each run
    must end where ``MAPDP(n_init=1, random_state=seed, init=...).fit`` ends (labels, K, joint)."""
    from mapdp_core.engine.sweeps import last_state
    from mapdp_core.core.spec import parse

    rng = np.random.default_rng(3)
    n = 240
    if case == "gaussian":
        X = pd.DataFrame(np.vstack([rng.normal(0, 1, (n // 2, 2)), rng.normal(4, 1, (n // 2, 2))]), columns=["a", "b"])
        likelihood, prior = "normal_wishart", None
    else:
        X = pd.DataFrame({"x": rng.normal(size=n), "y": rng.normal(size=n), "c": rng.integers(0, 3, n).astype(float),
                          "k": rng.poisson(3.0, n).astype(float)})
        X.loc[rng.choice(n, 30, replace=False), "x"] = np.nan
        X.loc[rng.choice(n, 20, replace=False), "c"] = np.nan
        likelihood, prior = {("x", "y"): "normal_wishart", "c": "categorical", "k": "poisson"}, None
    parsed = parse(X, likelihood, prior)
    start = rng.integers(0, 5, n)
    for N0 in (0.3, 3.0):
        for seed in (0, 11):
            for init in (None, start):
                state = last_state(parsed, N0, seed, init)
                m = MAPDP(N0=N0, likelihood=likelihood, prior=prior, n_init=1, random_state=seed, init=init).fit(X)
                assert np.array_equal(state.labels, m.labels_)
                assert state.n_clusters == m.n_clusters_
                assert state.neg_log_joint == m.neg_log_joint_
                # the structure check's run: input order, a few sweeps from the given start
                state = last_state(parsed, N0, None, start, shuffle=False, max_iter=2)
                m = MAPDP(N0=N0, likelihood=likelihood, prior=prior, n_init=1, shuffle=False, max_iter=2,
                          init=start, n_jobs=1).fit(X)
                assert np.array_equal(state.labels, m.labels_)
                assert state.neg_log_joint == m.neg_log_joint_


@pytest.mark.parametrize("k", [2, 5, 16])
def test_the_searchs_kmeans_start_is_the_estimators_fit(k):
    """The over-segmented start runs Lloyd's algorithm without the estimator
    (``engine.lloyd.kmeans_labels``); it must give ``KMeans(n_init=1).fit``'s labels."""
    from mapdp_core.engine.lloyd import kmeans_labels

    rng = np.random.default_rng(k)
    X = np.vstack([rng.normal(c, 1.0, (60, 3)) for c in (0.0, 3.0, 7.0)])
    for seed in (0, 7, 123):
        expected = KMeans(n_clusters=k, n_init=1, random_state=seed).fit(X).labels_
        assert np.array_equal(kmeans_labels(X, k, seed), expected)


def _size_and_shape(seed, D, n=100, shift=1.2):
    """Two groups of n rows measured on D columns that a shared size factor correlates strongly
    (as body measurements are), the groups apart along three of them, each column in its own unit."""
    rng = np.random.default_rng(seed)
    z = np.repeat([0, 1], n)
    size = rng.normal(0.0, 1.0, 2 * n)
    X = size[:, None] * rng.uniform(0.8, 1.2, D) + 0.35 * rng.normal(0.0, 1.0, (2 * n, D))
    X[:, :3] += shift * z[:, None]
    X = X * rng.uniform(1.0, 100.0, D) + rng.uniform(0.0, 200.0, D)
    return pd.DataFrame(X, columns=[f"m{j}" for j in range(D)]), z


def test_the_search_finds_two_groups_that_a_correlated_block_cannot_open_from_one_cluster(monkeypatch):
    """A Normal-Wishart block in many dimensions rarely opens a cluster for one row, so from one
    cluster, and from the fine start whose small clusters each pay the block's Occam factor, the
    search could end at K = 1 although a two-group partition has a lower joint: the coarse
    K-means starts (selection.auto._coarse_starts) reach it."""
    import mapdp_core.selection.auto as auto

    X, z = _size_and_shape(3, D=10, shift=2.0)
    m = _fit(X)
    assert is_block(m.hyperparameters_["structure"])  # one correlated block (a covariance per cluster or shared)
    assert m.n_clusters_ == 2 and clustering_scores(z, m.labels_)["nmi"] > 0.95
    monkeypatch.setattr(auto, "_coarse_starts", lambda view, seed: [])
    monkeypatch.setattr(auto, "_shared_starts", lambda view, seed: [])  # the shared block's own starts find it too
    without = _fit(X)  # measured: K = 3, NMI 0.82, a joint higher by 39 nats
    assert m.neg_log_joint_ < without.neg_log_joint_  # what the search found is better by the joint itself


def test_thirty_correlated_measurements_are_offered_one_block():
    """Up to MAX_JOINT_COLUMNS (40) real columns may form one correlated block: 30 measurements of
    two groups, correlated through a size factor, are not cut into many axis-aligned clusters."""
    from mapdp_core.selection.auto import MAX_JOINT_COLUMNS

    assert MAX_JOINT_COLUMNS >= 30
    X, z = _size_and_shape(0, D=30, n=150, shift=3.0)
    m = _fit(X)  # measured with the old limit of 20: independent columns, K = 10, NMI 0.31
    assert is_block(m.hyperparameters_["structure"])
    assert m.n_clusters_ == 2 and clustering_scores(z, m.labels_)["nmi"] > 0.95


def test_a_mostly_empty_column_stays_out_of_the_correlated_block(monkeypatch):
    """A noise column with 95 % gaps beside three correlated columns: in the block its few values
    looked far out against within-cluster spreads made of completions, and took 3 components to
    10; left on its own (MIN_JOINT_OBSERVED) it costs nothing and K stays 3."""
    import mapdp_core.selection.auto as auto

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], [150, 100, 50])
    C = np.array([[1, .8, .5], [.8, 1, .6], [.5, .6, 1]])
    X = rng.multivariate_normal(np.zeros(3), C, 300) + 3 * np.array([[0, 0, 0], [1, -1, 0], [0, 1, 1]])[y]
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    noise = rng.normal(size=300)
    noise[rng.random(300) < 0.95] = np.nan
    df["n"] = noise
    assert auto.sparse_real_columns(df, {c: "normal_gamma" for c in df.columns}) == {"n"}

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return MAPDP(random_state=0).fit(df)

    model = fit()
    assert model.n_components_ == 3 and model.n_clusters_ == 3
    assert clustering_scores(y, model.labels_)["nmi"] > 0.95
    assert model.likelihood_.set_index("column").loc["n", "family"] == "normal_gamma"
    monkeypatch.setattr(auto, "MIN_JOINT_OBSERVED", 0.0)  # the column in the block again
    assert fit().n_components_ > 3


def test_after_stage_one_the_incumbent_partition_replaces_the_fine_start(monkeypatch):
    """Stage 1 runs every candidate from the over-segmented start; stages 2 and 3 run from the
    best partition found so far instead (selection.auto._choose), and the choice is never
    worse by the joint than that partition under the chosen candidate."""
    import mapdp_core.selection.auto as auto
    import mapdp_core.engine.sweeps as sweeps

    rng = np.random.default_rng(4)
    X = pd.DataFrame(np.r_[rng.normal(0, 1, (60, 2)), rng.normal(5, 1, (60, 2)), rng.normal((0, 6), 1, (60, 2))],
                     columns=["a", "b"])
    a = auto_likelihood(X)
    seen = []
    real_last_state = sweeps.last_state

    def recording(parsed, N0, random_state, init=None, **kw):
        seen.append(None if init is None else np.asarray(init).copy())
        return real_last_state(parsed, N0, random_state, init, **kw)

    fines = []
    real_fine = auto._oversegmented

    def fine_start(view, seed):
        fines.append(real_fine(view, seed))
        return fines[-1]

    monkeypatch.setattr(sweeps, "last_state", recording)
    monkeypatch.setattr(auto, "_oversegmented", fine_start)
    choice = auto.choose_hyperparameters(a.X, a.likelihood, allow_joint=True, random_state=0)
    table = choice.table
    (fine,) = fines
    inits = [s for s in seen if s is not None]
    n_stage1 = int((table["stage"] == 1).sum())
    assert n_stage1 and (table["stage"] > 1).any()
    # every init after stage 1's runs: none is the fine start, and some are an incumbent partition
    firsts = [k for k, s in enumerate(inits) if np.array_equal(s, fine)]
    assert firsts, "stage 1 starts from the over-segmented partition"
    later = inits[max(firsts) + 1:]
    assert later and not any(np.array_equal(s, fine) for s in later)
    stage1_best = table[table["stage"] == 1]["evidence"].min()
    assert choice.neg_log_joint <= stage1_best + 1e-9
