"""Issue 28, part 2: MAPDP() on wide tables (far more real-valued columns than a clustering can
use one by one) clusters the principal components above the noise level, and is sensible: no
K = 1 and no cluster per row where groups shift a block of columns."""
import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP, clustering_scores
from mapdp_core.selection.auto import WIDE_COLUMNS, auto_likelihood, screen_columns, wide_projection


def _groups(D: int, seed: int = 0, sizes=(80, 70, 50), informative: int = 50, shift: float = 1.5):
    """Three groups that shift 50 of D standard-normal columns by 1.5 sd (the issue's tables)."""
    rng = np.random.default_rng(seed)
    z = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.normal(size=(sum(sizes), D))
    X[:, :informative] += rng.choice([-1.0, 0.0, 1.0], size=(len(sizes), informative))[z] * shift
    return pd.DataFrame(X, columns=[f"g{j}" for j in range(D)]), z


@pytest.mark.parametrize("D", [1000, 5000, 20000])
def test_wide_tables_get_their_groups_not_one_cluster_nor_one_per_row(D):
    X, z = _groups(D)
    model = MAPDP(random_state=0).fit(X)
    assert 2 <= model.n_clusters_ <= 6 and model.n_clusters_ < len(X) // 4
    assert clustering_scores(z, model.labels_)["nmi"] >= 0.75
    projection = model.wide_projection_
    assert projection is not None and 1 <= len(projection.names) <= 50
    top = projection.loadings().abs().max(axis=1).sort_values(ascending=False).index[:30]
    assert sum(int(c[1:]) < 50 for c in top) >= 27  # the columns that drive the clusters are the informative ones
    assert set(model.likelihood_["column"]) == set(projection.names)
    assert (model.predict(X.iloc[:40]) == model.labels_[:40]).mean() >= 0.95  # new rows through the same projection


def test_noise_components_are_left_out_by_the_marchenko_pastur_edge():
    rng = np.random.default_rng(3)
    noise = pd.DataFrame(rng.normal(size=(150, 600)), columns=[f"c{j}" for j in range(600)])
    projection = wide_projection(noise, list(noise.columns))
    assert len(projection.names) <= 2  # pure noise: nothing (or barely anything) above the edge
    assert projection.edge == pytest.approx((1 + np.sqrt(600 / 150)) ** 2)
    X, _ = _groups(1000, seed=4)
    assert len(wide_projection(X, list(X.columns)).names) >= 2


def test_the_projection_does_not_depend_on_units_and_narrow_tables_keep_their_columns():
    X, z = _groups(400, seed=5)
    scaled = X.copy()
    scaled[X.columns[::3]] = scaled[X.columns[::3]] * 1000.37
    a, b = MAPDP(random_state=0).fit(X), MAPDP(random_state=0).fit(scaled)
    assert a.wide_projection_ is not None
    assert clustering_scores(a.labels_, b.labels_)["ari"] == pytest.approx(1.0)
    narrow = auto_likelihood(X.iloc[:, :WIDE_COLUMNS - 1])
    assert narrow.projection is None and list(narrow.X.columns) == list(X.columns[:WIDE_COLUMNS - 1])


def test_gaps_in_a_wide_table_count_as_the_columns_mean_and_mixed_columns_stay():
    X, z = _groups(800, seed=6)
    rng = np.random.default_rng(6)
    X = X.mask(rng.random(X.shape) < 0.05)
    X["smoker"] = rng.integers(0, 2, len(X))
    model = MAPDP(random_state=0).fit(X)
    assert "smoker" in set(model.likelihood_["column"])
    assert model.wide_projection_ is not None and "smoker" not in model.wide_projection_.columns
    assert clustering_scores(z, model.labels_)["nmi"] >= 0.75


def _energy_reference(Z: np.ndarray) -> np.ndarray:
    """Each column's summed squared correlation with every other column, pair by pair."""
    D = Z.shape[1]
    return np.array([sum(np.corrcoef(Z[:, j], Z[:, k])[0, 1] ** 2 for k in range(D) if k != j) for j in range(D)])


@pytest.mark.parametrize("shape", [(60, 25), (25, 60)])  # both sides of the computation: D <= N and D > N
def test_the_screen_is_the_summed_squared_correlation_against_its_noise_threshold(shape):
    N, D = shape
    rng = np.random.default_rng(11)
    Z = rng.normal(size=(N, D))
    Z[:, :4] += 2.0 * rng.normal(size=(N, 1))  # four columns that share a factor
    Z = (Z - Z.mean(axis=0)) / Z.std(axis=0)
    e = _energy_reference(Z)
    s = (e - (D - 1) / (N - 1)) / (np.sqrt(2 * (D - 1)) / (N - 1))
    expected = s > np.sqrt(2 * np.log(D))
    assert np.array_equal(screen_columns(Z), expected)
    assert expected[:4].all() and not expected[4:].any()


def test_the_screen_keeps_few_noise_columns_and_finds_a_few_informative_among_twenty_thousand():
    rng = np.random.default_rng(12)
    noise = rng.normal(size=(200, 5000))
    assert screen_columns((noise - noise.mean(0)) / noise.std(0)).sum() <= 5
    X, _ = _groups(20000, seed=1)
    Z = X.to_numpy()
    keep = screen_columns((Z - Z.mean(0)) / Z.std(0))
    assert keep[:50].sum() >= 15 and keep[50:].sum() <= 5
    projection = wide_projection(X, list(X.columns))
    assert set(projection.informative) == set(X.columns[keep])
    assert (projection.loadings().loc[X.columns[~keep]] == 0).all().all()  # the rest do not drive the clusters


def test_wide_is_an_explicit_option_with_three_choices_and_a_clear_message():
    X, z = _groups(150, seed=7, sizes=(30, 20, 10), informative=20)  # 60 rows x 150 columns: wide
    screened = MAPDP(random_state=0, wide="auto").fit(X)
    every = MAPDP(random_state=0, wide="components").fit(X)
    columns = MAPDP(random_state=0, wide=None, n_init=1).fit(X)
    assert screened.wide_projection_ is not None and len(screened.wide_projection_.informative) < 150
    assert every.wide_projection_ is not None and every.wide_projection_.informative == list(X.columns)
    assert columns.wide_projection_ is None and set(columns.likelihood_["column"]) == set(X.columns)
    assert MAPDP().get_params()["wide"] == "auto"
    for bad in ("screen", 1, True):
        with pytest.raises(ValueError, match="wide="):
            MAPDP(wide=bad).fit(X)
