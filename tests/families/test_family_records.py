"""The family records (mapdp_core.families.FAMILIES) say what the old switches said."""
import numpy as np
import pytest

from mapdp_core.evaluation import explain
from mapdp_core.evaluation import profiles
from mapdp_core.selection import priors as tuning
from mapdp_core.families import FAMILIES, GAUSSIAN_FAMILIES, KERNEL_SLOTS, SLOT_OF, Family, warm_up_example
from mapdp_core.core.spec import parse


def test_every_family_has_a_complete_record():
    assert set(FAMILIES) == {"spherical_gaussian", "gaussian_known_cov", "normal_wishart", "normal_wishart_tied",
                             "normal_gamma", "bernoulli", "binomial", "categorical", "poisson", "exponential", "geometric"}
    for name, f in FAMILIES.items():
        assert isinstance(f, Family) and f.name == name
        assert f.help and f.kind in ("block", "column")
        assert f.module in KERNEL_SLOTS and KERNEL_SLOTS[SLOT_OF[name]] is f.module
        assert callable(f.module.describe) and callable(f.module.impute)
        assert (f.spread_key is not None) == f.gaussian  # every Gaussian family has a spread
        assert not (f.gaussian and f.weight_keys)


def test_gaussian_set_is_the_old_one():
    assert set(GAUSSIAN_FAMILIES) == {"normal_wishart", "normal_wishart_tied", "normal_gamma", "spherical_gaussian",
                                      "gaussian_known_cov"}
    assert tuning.SCALED_FAMILIES == GAUSSIAN_FAMILIES


def test_profile_kinds_are_the_old_ones():
    assert profiles._KIND == {
        "bernoulli": "binary", "categorical": "categorical", "binomial": "ordinal", "poisson": "count",
        "geometric": "count", "exponential": "real", "normal_gamma": "real", "normal_wishart": "real",
        "normal_wishart_tied": "real", "spherical_gaussian": "real", "gaussian_known_cov": "real"}


def test_only_the_tied_covariance_shares_statistics_across_clusters():
    from mapdp_core.families import SHARED_FAMILIES
    assert SHARED_FAMILIES == ("normal_wishart_tied",)


def test_kind_module_view_for_old_callers():
    kind, module = FAMILIES["poisson"]
    assert (kind, module) == ("column", FAMILIES["poisson"].module) and FAMILIES["normal_wishart"][0] == "block"


@pytest.mark.parametrize("family, key, factor", [
    ("normal_wishart", "B0", 1 / 2.0), ("normal_gamma", "b0", 2.0),
    ("spherical_gaussian", "sigma2", 2.0), ("gaussian_known_cov", "Sigma", 2.0)])
def test_spread_scales_the_old_key(family, key, factor):
    prior = {"B0": np.eye(2), "b0": np.ones(2), "sigma2": 1.5, "Sigma": np.eye(2), "a0": 3.0}
    out = tuning._scaled_block_prior(family, prior, 2.0, weight=3.0)
    assert np.allclose(out[key], np.asarray(prior[key]) * factor)
    assert out["a0"] == 3.0  # the weight knob leaves Gaussian priors alone


def test_weight_scales_alpha_beta_and_bernoulli_drops_n():
    prior = {"alpha0": np.array([1.0, 2.0]), "beta0": np.array([3.0, 4.0]), "n": np.ones(2)}
    out = tuning._scaled_block_prior("bernoulli", prior, 2.0, weight=0.5)
    assert "n" not in out and np.allclose(out["alpha0"], [0.5, 1.0]) and np.allclose(out["beta0"], [1.5, 2.0])
    out = tuning._scaled_block_prior("binomial", prior, 2.0, weight=0.5)
    assert np.allclose(out["n"], 1.0)
    cat = tuning._scaled_block_prior("categorical", {"alpha0": [np.array([1.0, 3.0])]}, 2.0, weight=2.0)
    assert np.allclose(cat["alpha0"][0], [2.0, 6.0])


def test_describe_unchanged():
    """The sentences the old if-chain of explain._describe wrote, for a few blocks."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=50), rng.integers(0, 2, 50), rng.poisson(3.0, 50),
                         rng.exponential(2.0, 50)]).astype(float)
    parsed = parse(X, {0: "normal_gamma", 1: "bernoulli", 2: "poisson", 3: "exponential"}, None)
    text = [explain._describe(b, parsed.X) for b in parsed.blocks]
    assert text[0] == ["a typical cluster spreads about 45 % as widely as the whole feature",
                       "cluster centres are expected within about 1.0 times the feature's spread of its prior centre",
                       "the prior on each cluster's spread weighs like 10 observations"]
    p = parsed.blocks[1].prior
    rate = p["alpha0"][0] / (p["alpha0"][0] + p["beta0"][0])
    assert text[1] == [f"before seeing a cluster's data, the chance of a 'yes' is taken as 1: {100 * rate:.0f} %",
                       "that guess weighs like 2 observations"]
    p = parsed.blocks[2].prior
    assert text[2][0] == f"before seeing a cluster's data, its typical count is taken as 2: {p['alpha0'][0]:.3g}"
    p = parsed.blocks[3].prior
    assert text[3][0] == (f"before seeing a cluster's data, its typical value is taken as "
                          f"3: {p['beta0'][0] / (p['alpha0'][0] - 1):.3g}")


def test_warm_up_example_uses_every_family():
    X, likelihood = warm_up_example()
    assert set(likelihood.values()) == set(FAMILIES)
    assert X.shape[1] == sum(len(k) if isinstance(k, tuple) else 1 for k in likelihood)
    assert len(parse(X, likelihood, None).blocks) == len(FAMILIES)
