"""The public API: generator semantics, estimator attributes, restarts, inputs, edge cases."""
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mapdp_core
from mapdp_core import MAPDP, default_prior, map_dp
from mapdp_core.core.config import ensure_numba_cache_dir
from naive import naive_mapdp


def blobs(seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal([0, 0], 1, (100, 2)), rng.normal([8, 0], 1, (60, 2)), rng.normal([0, 9], 1, (40, 2))])


def test_generator_validates_before_the_first_next():
    with pytest.raises(ValueError):
        map_dp(np.zeros((0, 2)))  # no next() needed


def test_states_are_immutable_snapshots():
    states = list(map_dp(blobs(), N0=3.0, tol=0.0, max_iter=4))
    assert [s.iteration for s in states] == [1, 2, 3, 4]
    first = states[0].labels.copy()
    with pytest.raises(ValueError):
        states[0].labels[0] = 5
    np.testing.assert_array_equal(states[0].labels, first)  # later sweeps did not alter it
    assert states[0].labels is not states[1].labels
    assert all(b.elapsed >= a.elapsed for a, b in zip(states, states[1:]))
    assert states[0].n_changed > 0


def test_stops_when_the_objective_settles():
    states = list(map_dp(blobs(), N0=3.0))
    assert states[-1].converged and not any(s.converged for s in states[:-1])
    assert abs(states[-1].objective - states[-2].objective) < 1e-6
    assert states[-1].n_clusters == 3


def test_summaries_have_a_mean_per_column_and_covariances_for_gaussian_blocks():
    s = list(map_dp(blobs(), N0=3.0))[-1]
    K = s.n_clusters
    assert s.summaries["mean"].shape == (K, 2)
    cov = s.summaries["covariance"][("0", "1")]
    assert cov.shape == (K, 2, 2)
    assert np.all(np.linalg.eigvalsh(cov) > 0)
    for k in range(K):  # posterior means sit at the cluster means when the prior is vague
        np.testing.assert_allclose(s.summaries["mean"][k], blobs()[s.labels == k].mean(0), atol=0.05)


def test_the_exact_call_used_by_outside_checks():
    X = blobs(1)
    p = default_prior("normal_wishart", X)
    m = MAPDP(N0=3.0, likelihood="normal_wishart", prior={"m0": p["m0"], "c0": p["c0"], "a0": p["a0"], "B0": p["B0"]},
              n_init=1, shuffle=False, tol=1e-6, max_iter=100).fit(X)
    assert m.labels_.shape == (len(X),)
    assert len(m.objective_history_) == m.n_iter_
    ref = [s.objective for s in map_dp(X, 3.0, "normal_wishart", p)]  # identity order
    assert m.objective_history_ == ref


def test_restarts_keep_the_lowest_exact_joint_and_are_reproducible():
    X = blobs(2)
    a = MAPDP(likelihood="normal_wishart", prior=None, N0=2.0, n_init=4, random_state=7).fit(X)
    b = MAPDP(likelihood="normal_wishart", prior=None, N0=2.0, n_init=4, random_state=7, n_jobs=2).fit(X)
    assert a.neg_log_joint_ == pytest.approx(a.restart_neg_log_joints_.min())
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_allclose(a.restart_neg_log_joints_, b.restart_neg_log_joints_)


def test_user_prior_is_not_modified_and_defaults_are_recorded():
    prior = {"c0": 0.5}
    m = MAPDP(N0=3.0, likelihood="normal_wishart", n_init=1, prior=prior, shuffle=False).fit(blobs())
    assert prior == {"c0": 0.5}
    assert m.prior_[0]["c0"] == 0.5 and m.prior_[0]["family"] == "normal_wishart"
    assert m.prior_[0]["B0"].shape == (2, 2)


def test_dataframe_with_text_bool_and_missing_values_keeps_every_row():
    rng = np.random.default_rng(3)
    n = 90
    z = rng.integers(0, 2, n)
    df = pd.DataFrame({
        "sex": np.where(rng.random(n) < 0.5, "f", "m"),
        "smoker": rng.random(n) < np.where(z == 1, 0.9, 0.1),
        "stage": np.where(z == 1, "late", "early"),
        "age": rng.normal(40 + 20 * z, 5),
        "visits": rng.poisson(1 + 6 * z),
    })
    df.loc[::7, "age"] = np.nan
    df.loc[::5, "stage"] = None
    likelihood = {"sex": "categorical", "smoker": "bernoulli", "stage": "categorical", "age": "normal_gamma",
                  "visits": "poisson"}
    m = MAPDP(prior=None, N0=1.0, likelihood=likelihood, n_init=2, random_state=0).fit(df)
    assert m.labels_.shape == (n,)
    assert list(m.feature_names_in_) == list(df.columns)
    assert set(m.cluster_summaries_["proportions"]) == {"sex", "stage"}
    agreement = max(np.mean(m.labels_ == z), np.mean(m.labels_ == 1 - z))
    assert m.n_clusters_ == 2 and agreement > 0.95


def test_capacity_growth_matches_the_reference():
    """A huge N0 opens a cluster for nearly every point, far beyond the initial capacity."""
    X = np.random.default_rng(4).normal(size=(40, 2)) * 10
    p = {"m0": np.zeros(2), "c0": 0.1, "a0": 3.0, "B0": np.eye(2) * 5}
    states = list(map_dp(X, 1e6, "normal_wishart", p))
    labels, E = naive_mapdp(X, 1e6, [("normal_wishart", [0, 1], p)])
    assert states[-1].n_clusters > 16
    np.testing.assert_array_equal(states[-1].labels, labels)
    np.testing.assert_allclose([s.objective for s in states], E, rtol=1e-9)


def test_exact_duplicates_follow_the_reference():
    """Two stacks of identical points: the reference program's greedy first sweep never opens
    a second cluster (the all-data cluster fits every point better than the prior does),
    although K = 2 is far more probable. We reproduce the reference, limitation included."""
    X = np.column_stack([np.repeat([0.0, 5.0], 30), np.repeat([1.0, -1.0], 30)])
    p = default_prior("normal_wishart", X)
    states = list(map_dp(X, 3.0, "normal_wishart", p))
    labels, E = naive_mapdp(X, 3.0, [("normal_wishart", [0, 1], p)])
    np.testing.assert_array_equal(states[-1].labels, labels)
    assert np.isfinite(states[-1].neg_log_joint)


def test_near_duplicates_split_with_default_priors():
    rng = np.random.default_rng(0)
    X = np.column_stack([np.repeat([0.0, 5.0], 30), np.repeat([1.0, -1.0], 30)]) + rng.normal(size=(60, 2)) * 0.3
    assert list(map_dp(X))[-1].n_clusters == 2


def test_a_constant_column_with_default_priors_gives_finite_results():
    X = np.column_stack([np.random.default_rng(0).normal(size=60), np.full(60, 2.0)])
    for s in map_dp(X):
        assert np.isfinite(s.objective) and np.isfinite(s.neg_log_joint)
        assert np.all(np.isfinite(s.summaries["mean"]))


def test_one_dimensional_input_is_refused_in_scikit_learns_words_and_one_column_works():
    x = np.r_[np.zeros(20), np.full(20, 10.0)] + np.random.default_rng(0).normal(size=40) * 0.1
    with pytest.raises(ValueError, match=r"Expected 2D array, got 1D array instead.*reshape\(-1, 1\)"):
        map_dp(x)
    s = list(map_dp(x.reshape(-1, 1)))[-1]
    assert s.n_clusters == 2


def test_numba_cache_moves_to_a_writable_folder_when_the_package_is_read_only(monkeypatch, tmp_path):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    package = os.path.dirname(mapdp_core.__file__)
    real = mapdp_core.core.config._writable
    monkeypatch.setattr(mapdp_core.core.config, "_writable", lambda p: False if str(p).startswith(package) else real(p))
    ensure_numba_cache_dir()
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "mapdp_core" / "numba")


def test_numba_cache_dir_chosen_by_the_user_is_kept(monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/somewhere/of/my/own")
    ensure_numba_cache_dir()
    assert os.environ["NUMBA_CACHE_DIR"] == "/somewhere/of/my/own"


def test_an_edited_family_module_drops_the_cached_kernels(tmp_path):
    """numba recompiles only when the kernels' own file changes; the kernels inline the
    family functions, so a change to the family sources must drop their cache files."""
    from mapdp_core.kernels import dp_mixture as _kernels

    (tmp_path / "families").mkdir()
    family = tmp_path / "families" / "poisson.py"
    family.write_text("A = 1\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    kernel_files = [cache / "dp_mixture.sweep-120.py311.nbi", cache / "dp_mixture.sweep-120.py311.1.nbc"]
    other = cache / "baseline.assign_nearest-13.py311.nbi"
    for f in kernel_files + [other]:
        f.write_text("")
    digest = _kernels.families_digest(tmp_path / "families")
    assert _kernels.drop_stale_cache(cache, digest)  # no record yet: dropped
    assert not any(f.exists() for f in kernel_files) and other.exists()
    for f in kernel_files:
        f.write_text("")
    assert not _kernels.drop_stale_cache(cache, digest)  # same sources: kept
    assert all(f.exists() for f in kernel_files)
    family.write_text("A = 2\n")
    changed = _kernels.families_digest(tmp_path / "families")
    assert changed != digest and _kernels.drop_stale_cache(cache, changed)
    assert not any(f.exists() for f in kernel_files) and other.exists()
    # the live cache folder carries the current sources' hash
    live = Path(_kernels.sweep._cache._cache_path) / "dp_mixture.families.sha256"
    assert live.read_text() == _kernels.families_digest()


def test_the_readme_module_paths_name_the_layered_modules():
    """The README's module paths keep working after the move into layers, as the very same
    module objects (one set of classes: an error raised in one is caught under the other name)."""
    import importlib

    from mapdp_core.datasets import list_datasets, load_dataset  # noqa: F401
    from mapdp_core.explain import describe_priors  # noqa: F401
    from mapdp_core.loading import prepare, read_table, suggest_roles_and_families  # noqa: F401
    from mapdp_core.synthetic import clinical_simulator, plos_scenario  # noqa: F401

    for old, new in [("datasets", "data.datasets"), ("loading", "data.loading"), ("synthetic", "data.synthetic"),
                     ("explain", "evaluation.explain"), ("loading.errors", "data.loading.errors")]:
        assert importlib.import_module(f"mapdp_core.{old}") is importlib.import_module(f"mapdp_core.{new}")
