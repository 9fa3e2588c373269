"""The automatic search reads a column suggested as binomial (counts of trials, an ordinal
scale's levels 0..n) as binomial or as categorical, whichever the exact joint prefers: both
are distributions over the same levels, so the evidence compares them as it compares the
Gaussian structures (selection/auto.structures)."""
import numpy as np
import pandas as pd

from mapdp_core import MAPDP
from mapdp_core.selection.auto import CATEGORICAL_SCALES, is_block, is_joint, structured_likelihood, structures


def test_the_categorical_reading_is_offered_beside_each_structure_only_for_binomial_columns():
    lik = {"a": "binomial", "b": "normal_gamma", "c": "normal_gamma", "d": "categorical"}
    assert structures(lik, True) == ("independent", "joint", "shared", "independent" + CATEGORICAL_SCALES,
                                     "joint" + CATEGORICAL_SCALES, "shared" + CATEGORICAL_SCALES)
    assert structures({**lik, "a": "poisson"}, True) == ("independent", "joint", "shared")
    assert structures({**lik, "a": "poisson"}, True, allow_shared=False) == ("independent", "joint")
    assert structures(lik, False) == ("independent",)  # a user's own likelihood is kept as given
    read = structured_likelihood(lik, "joint" + CATEGORICAL_SCALES)
    assert read == {"a": "categorical", "d": "categorical", ("b", "c"): "normal_wishart"}
    assert structured_likelihood(lik, "independent") == lik
    assert is_joint("joint" + CATEGORICAL_SCALES) and not is_joint("independent" + CATEGORICAL_SCALES)
    shared = structured_likelihood(lik, "shared" + CATEGORICAL_SCALES)
    assert shared == {"a": "categorical", "d": "categorical", ("b", "c"): "normal_wishart_tied"}
    assert not is_joint("shared") and is_block("shared") and not is_block("independent" + CATEGORICAL_SCALES)


def _scored(seed: int, binomial_within: bool) -> pd.DataFrame:
    """Two groups told apart by a real measurement and four 0-6 scores: Binomial(6, p) within
    each group, or, where ``binomial_within`` is false, scores piled at both ends of the scale
    within each group (far more spread than a binomial allows: what 1-10 clinical scores do)."""
    rng = np.random.default_rng(seed)
    n = 240
    z = rng.integers(0, 2, n)
    frame = pd.DataFrame({"size": rng.normal(3.0 * z, 1.0)})
    for j in range(4):
        if binomial_within:
            frame[f"score_{j}"] = rng.binomial(6, np.where(z == 1, 0.7, 0.3))
        else:
            high = rng.random(n) < np.where(z == 1, 0.8, 0.2)
            frame[f"score_{j}"] = np.where(high, rng.choice([5, 6], n), rng.choice([0, 1], n))
    return frame


def test_scores_piled_at_both_ends_are_read_as_categories_and_said_so():
    model = MAPDP(random_state=0).fit(_scored(0, binomial_within=False))
    assert model.hyperparameters_["structure"].endswith(CATEGORICAL_SCALES)
    rows = model.likelihood_.set_index("column")
    assert (rows.loc[[f"score_{j}" for j in range(4)], "family"] == "categorical").all()
    assert rows.loc["score_0", "reason"].endswith("chosen over binomial by the evidence")
    searched = model.hyperparameter_search_
    assert set(searched["structure"]) >= {"independent", "independent" + CATEGORICAL_SCALES}


def test_binomial_scores_stay_binomial():
    model = MAPDP(random_state=0).fit(_scored(1, binomial_within=True))
    assert not model.hyperparameters_["structure"].endswith(CATEGORICAL_SCALES)
    assert (model.likelihood_.set_index("column").loc[[f"score_{j}" for j in range(4)], "family"]
            == "binomial").all()
