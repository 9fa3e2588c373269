"""Seeded synthetic data with known clusters.

* :mod:`.plos`: the six two-dimensional scenarios of Raykov et al. (2016), PLOS ONE
  Section 5, and their padding to more dimensions.
* :mod:`.ejs`: the generators of the EJS paper (2016): CRP partitions and CRP /
  Normal-Wishart mixtures, a mixed-type clinical simulator, a Gaussian HMM sequence.
"""
from .ejs import (CLINICAL_SUBTYPES, EJS_NW_PRIOR, clinical_simulator, crp_expected_clusters,
                  crp_normal_wishart, crp_partition, hmm_sequence)
from .plos import PLOS_SCENARIOS, plos_scenario, plos_scenario_nd, plos_scenario_parameters

__all__ = [
    "CLINICAL_SUBTYPES", "EJS_NW_PRIOR", "PLOS_SCENARIOS", "clinical_simulator", "crp_expected_clusters",
    "crp_normal_wishart", "crp_partition", "hmm_sequence", "plos_scenario", "plos_scenario_nd",
    "plos_scenario_parameters",
]
