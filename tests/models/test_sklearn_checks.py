"""scikit-learn's estimator checks on every registered algorithm (DESIGN.md, convention 6).

Every estimator passes every check, with scikit-learn's own conventions for the input: a
1-D X is refused with scikit-learn's "Reshape your data" message, numbers in an object
array are numbers, and empty data are refused with scikit-learn's wording. The settings
below keep the suite quick (few sweeps and restarts) without changing what is checked.
"""
from sklearn.utils.estimator_checks import parametrize_with_checks

from mapdp_core.models.dpmeans import DPMeans
from mapdp_core.models.gibbs import CollapsedGibbs
from mapdp_core.models.kmeans import KMeans
from mapdp_core.models.mapdp import MAPDP
from mapdp_core.models.mixtures import EMGaussianMixture, VariationalDP
from mapdp_core.models.registry import ALGORITHMS
from mapdp_core.models.search import DPSearch
from mapdp_core.models.sugs import SUGS
from mapdp_core.models.vsugs import VSUGS

ESTIMATORS = [MAPDP(), DPMeans(), KMeans(n_init=2), CollapsedGibbs(n_sweeps=5),
              EMGaussianMixture(max_iter=10), VariationalDP(n_components=3, max_iter=10),
              SUGS(n_init=2), VSUGS(T=5, n_init=2), DPSearch(beam_size=5)]


def test_every_registered_algorithm_is_checked():
    assert {type(e) for e in ESTIMATORS} == set(ALGORITHMS.values())


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
