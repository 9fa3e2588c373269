"""Plain-language prior descriptions restate the resolved hyperparameters correctly."""
import numpy as np
import pandas as pd

from mapdp_core.evaluation.explain import describe_priors


def test_default_gaussian_priors_read_as_a_45_percent_spread():
    X = np.random.default_rng(0).normal(size=(200, 2)) * [1.0, 30.0]
    for likelihood in ("normal_wishart", "normal_gamma"):
        text = " ".join(describe_priors(X, likelihood)["meaning"])
        assert "spreads about 45 % as widely" in text  # sqrt(0.2) = 0.447
        assert "weighs like 10 observations" in text


def test_user_prior_changes_the_words():
    X = np.random.default_rng(1).normal(size=(100, 1))
    var = X.var()
    # E[sigma^2] = b0/(a0 - 1) = 0.25 var: half as wide as the whole feature
    text = describe_priors(X, "normal_gamma", {"m0": 0.0, "c0": 1.0, "a0": 3.0, "b0": 0.5 * var})["meaning"][0]
    assert "about 50 % as widely" in text


def test_discrete_families_state_rates_and_weights():
    df = pd.DataFrame({"smoker": [0, 1, 1, 1], "visits": [2, 4, 6, 8], "stage": ["a", "b", "b", "b"],
                       "score": [0, 1, 2, 4]})
    table = describe_priors(df, {"smoker": "bernoulli", "visits": "poisson", "stage": "categorical",
                                 "score": "binomial"}).set_index("columns")["meaning"]
    assert "smoker: 75 %" in table["smoker"]          # alpha0/(alpha0+beta0) = the column's rate
    assert "visits: 5" in table["visits"]             # alpha0/beta0 = the column mean
    assert "out of 4" in table["score"]
    assert "/" in table["stage"] and "weighing like" in table["stage"]
