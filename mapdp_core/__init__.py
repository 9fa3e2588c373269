"""mapdp_core: MAP-DP clustering (Raykov et al., PLOS ONE 2016; EJS 2016), numba-accelerated."""
from ._config import ensure_numba_cache_dir

ensure_numba_cache_dir()

from .dpmeans import DPMeans, LambdaSearch, dp_means, dpmeans_lambda_for_k  # noqa: E402
from .hdp import HardHDP, HardHDPHMM, HardHDPHMMDirect  # noqa: E402
from .ihmm import MAPIHMM  # noqa: E402
from .estimator import Control, SweepEstimator  # noqa: E402
from .families import FAMILIES  # noqa: E402
from .gibbs import CollapsedGibbs, collapsed_gibbs  # noqa: E402
from .kmeans import KMeans, KMeansBIC, kmeans, kmeans_bic, kmeans_plusplus  # noqa: E402
from .mapdp import MAPDP, UnseenCategoryWarning, default_prior, map_dp  # noqa: E402
from .metrics import clustering_scores, match_label_sequence, match_labels  # noqa: E402
from .mixtures import EMGaussianMixture, VariationalDP, em_gaussian_mixture, variational_dp  # noqa: E402
from .mixed_effects import MixedEffectsMAPDP  # noqa: E402
from .registry import ALGORITHMS, algorithm, register, warm_up  # noqa: E402
from .search import DPSearch  # noqa: E402
from .sugs import SUGS  # noqa: E402
from .vsugs import VSUGS  # noqa: E402
from .profiles import Profiles, bh_adjust, cluster_profiles, feature_tests  # noqa: E402
from .state import SweepState  # noqa: E402
from .auto import auto_likelihood, choose_hyperparameters  # noqa: E402
from .stability import cluster_stability  # noqa: E402
from .tuning import (CrossValidation, MapN0, N0Grid, cross_validate, expected_clusters, map_n0,  # noqa: E402
                     n0_for_expected_clusters, n0_grid, scaled_prior)

__all__ = [
    "MAPDP", "UnseenCategoryWarning", "map_dp", "default_prior", "warm_up", "SweepState", "FAMILIES",
    "SweepEstimator", "Control", "ALGORITHMS", "algorithm", "register", "EMGaussianMixture", "VariationalDP",
    "CollapsedGibbs", "collapsed_gibbs", "SUGS", "VSUGS", "DPSearch", "KMeans", "KMeansBIC", "kmeans", "kmeans_bic",
    "kmeans_plusplus",
    "DPMeans", "LambdaSearch", "dp_means", "dpmeans_lambda_for_k", "em_gaussian_mixture", "variational_dp",
    "clustering_scores", "match_labels", "match_label_sequence",
    "expected_clusters", "n0_for_expected_clusters", "map_n0", "MapN0", "n0_grid", "N0Grid",
    "scaled_prior", "cross_validate", "CrossValidation",
    "cluster_profiles", "feature_tests", "bh_adjust", "Profiles", "cluster_stability",
    "auto_likelihood", "choose_hyperparameters",
    "HardHDP", "HardHDPHMM", "HardHDPHMMDirect", "MAPIHMM",
    "MixedEffectsMAPDP",
]
