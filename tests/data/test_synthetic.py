"""The PLOS Section 5 scenario generators: seeded, shaped as described, and hard for K-means."""
import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.metrics import normalized_mutual_info_score as nmi

from mapdp_core.data.synthetic import PLOS_SCENARIOS, plos_scenario, plos_scenario_nd


@pytest.mark.parametrize("section", sorted(PLOS_SCENARIOS))
def test_seeded_and_shaped(section):
    X, y = plos_scenario(section, n=1000, seed=3)
    X2, y2 = plos_scenario(section, n=1000, seed=3)
    assert X.shape == (1000, 2) and y.shape == (1000,)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert not np.array_equal(X, plos_scenario(section, n=1000, seed=4)[0])
    assert set(np.unique(y)) >= {0, 1, 2}


def test_unequal_density_proportions():
    _, y = plos_scenario("5.2", n=4000, seed=0)
    np.testing.assert_allclose(np.bincount(y) / 4000, [0.69, 0.29, 0.02], atol=0.005)


def test_outlier_pairs_have_their_own_labels():
    _, y = plos_scenario("5.3", n=4000, seed=0)
    assert np.sum(y == 3) == 2 and np.sum(y == 4) == 2


def test_embedding_in_more_dimensions_keeps_the_first_two():
    X, y = plos_scenario_nd("5.1", n=500, d=10, seed=0)
    assert X.shape == (500, 10)


@pytest.mark.parametrize("section", ["5.1", "5.2", "5.4", "5.6"])
def test_kmeans_fails_where_the_paper_says_it_does(section):
    X, y = plos_scenario(section, n=4000, seed=0)
    assert nmi(y, KMeans(3, n_init=10, random_state=0).fit_predict(X)) < 0.8


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="section"):
        plos_scenario("9.9")
    with pytest.raises(ValueError):
        plos_scenario("5.1", n=0)
