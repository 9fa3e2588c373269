"""mapdp_core: MAP-DP clustering (Raykov et al., PLOS ONE 2016; EJS 2016), numba-accelerated."""
from mapdp_core.core.config import ensure_numba_cache_dir

ensure_numba_cache_dir()

# the public names, layer by layer (ARCHITECTURE.md)
from mapdp_core.families import FAMILIES  # noqa: E402
from mapdp_core.core.estimator import Control, SweepEstimator  # noqa: E402
from mapdp_core.core.state import SweepState  # noqa: E402
from mapdp_core.engine.k_evidence import k_sentence, outlier_sentence  # noqa: E402
from mapdp_core.engine.merging import grouping_sentence  # noqa: E402
from mapdp_core.engine.partition_prior import DirichletProcess, MixtureOfFiniteMixtures  # noqa: E402
from mapdp_core.selection.auto import auto_likelihood, choose_hyperparameters  # noqa: E402
from mapdp_core.selection.priors import (MapN0, expected_clusters, map_n0, n0_for_expected_clusters,  # noqa: E402
                                         scaled_prior)
from mapdp_core.models.dpmeans import DPMeans, LambdaSearch, dp_means, dpmeans_lambda_for_k  # noqa: E402
from mapdp_core.models.gibbs import CollapsedGibbs, collapsed_gibbs  # noqa: E402
from mapdp_core.models.hdp import HardHDP  # noqa: E402
from mapdp_core.models.hdp_hmm import HardHDPHMM  # noqa: E402
from mapdp_core.models.hdp_hmm_direct import HardHDPHMMDirect  # noqa: E402
from mapdp_core.models.ihmm import MAPIHMM  # noqa: E402
from mapdp_core.models.kmeans import KMeans, KMeansBIC, kmeans, kmeans_bic, kmeans_plusplus  # noqa: E402
from mapdp_core.models.mapdp import MAPDP, UnseenCategoryWarning, default_prior, map_dp  # noqa: E402
from mapdp_core.models.mixed_effects import MixedEffectsMAPDP  # noqa: E402
from mapdp_core.models.mixtures import EMGaussianMixture, VariationalDP, em_gaussian_mixture, variational_dp  # noqa: E402
from mapdp_core.models.registry import ALGORITHMS, algorithm, register, warm_up  # noqa: E402
from mapdp_core.models.search import DPSearch  # noqa: E402
from mapdp_core.models.sugs import SUGS  # noqa: E402
from mapdp_core.models.vsugs import VSUGS  # noqa: E402
from mapdp_core.evaluation.metrics import clustering_scores, match_label_sequence, match_labels  # noqa: E402
from mapdp_core.evaluation.model_selection import CrossValidation, N0Grid, cross_validate, n0_grid  # noqa: E402
from mapdp_core.evaluation.profiles import Profiles, bh_adjust, cluster_profiles, feature_tests  # noqa: E402
from mapdp_core.evaluation.stability import cluster_stability, stability_summary  # noqa: E402
from mapdp_core.evaluation.outcomes import OutcomeComparison, compare_outcome  # noqa: E402

# The module paths the README has always given (``mapdp_core.datasets``, ``.loading``,
# ``.synthetic``, ``.explain``) name the same modules in their layers, so that
# ``from mapdp_core.datasets import load_dataset`` keeps working (see ARCHITECTURE.md).
import sys as _sys  # noqa: E402

from mapdp_core.data import datasets, loading, synthetic  # noqa: E402
from mapdp_core.evaluation import explain  # noqa: E402

for _module in (datasets, loading, synthetic, explain):
    _real = _module.__name__
    _alias = f"{__name__}.{_real.rsplit('.', 1)[-1]}"
    for _name in [n for n in _sys.modules if n == _real or n.startswith(_real + ".")]:
        # submodules too, so that mapdp_core.loading.errors is the very module (one set of classes)
        _sys.modules.setdefault(_alias + _name[len(_real):], _sys.modules[_name])
del _module, _real, _alias, _name

__all__ = [
    "MAPDP", "UnseenCategoryWarning", "map_dp", "default_prior", "warm_up", "SweepState", "FAMILIES",
    "SweepEstimator", "Control", "ALGORITHMS", "algorithm", "register", "EMGaussianMixture", "VariationalDP",
    "CollapsedGibbs", "collapsed_gibbs", "SUGS", "VSUGS", "DPSearch", "KMeans", "KMeansBIC", "kmeans", "kmeans_bic",
    "kmeans_plusplus",
    "DPMeans", "LambdaSearch", "dp_means", "dpmeans_lambda_for_k", "em_gaussian_mixture", "variational_dp",
    "clustering_scores", "match_labels", "match_label_sequence",
    "expected_clusters", "n0_for_expected_clusters", "map_n0", "MapN0", "n0_grid", "N0Grid",
    "scaled_prior", "cross_validate", "CrossValidation",
    "cluster_profiles", "feature_tests", "bh_adjust", "Profiles", "cluster_stability", "stability_summary", "compare_outcome", "OutcomeComparison", "k_sentence", "outlier_sentence", "grouping_sentence",
    "auto_likelihood", "choose_hyperparameters",
    "HardHDP", "HardHDPHMM", "HardHDPHMMDirect", "MAPIHMM",
    "MixedEffectsMAPDP", "DirichletProcess", "MixtureOfFiniteMixtures",
]
