"""One row's decision (PLOS Algorithm 3, :mod:`mapdp_core.engine.decisions`): the costs agree with
a slow reference built from scratch, and at a converged fit every row's least cost is its own
cluster (the partition is a fixed point of the sweep), for each kind of likelihood."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mapdp_core import MAPDP
from mapdp_core.data.synthetic import plos_scenario


def _mixed(seed=0, n=150):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 3, n)
    X = pd.DataFrame({"a": rng.normal(z * 3.0, 1.0), "b": rng.normal(-z * 2.0, 1.0),
                      "smoker": (rng.random(n) < 0.2 + 0.3 * z).astype(float),
                      "visits": rng.poisson(1 + 2 * z).astype(float)})
    X.loc[rng.random(n) < 0.1, "a"] = np.nan
    return X


@pytest.mark.parametrize("likelihood", ["normal_wishart", "normal_gamma", "mixed"])
def test_at_a_converged_fit_every_rows_least_cost_is_its_own_cluster(likelihood):
    if likelihood == "mixed":
        X = _mixed()
        model = MAPDP(N0=1.0, likelihood={"a": "normal_gamma", "b": "normal_gamma", "smoker": "bernoulli",
                                          "visits": "poisson"}, n_init=1, random_state=0).fit(X)
    else:
        X, _ = plos_scenario("5.2", 300, seed=2)
        model = MAPDP(N0=3.0, likelihood=likelihood, n_init=1, random_state=0).fit(X)
    assert model.n_iter_ < model.max_iter  # converged (its last sweep moved no row)
    for i in range(len(model.component_labels_)):
        costs = model.row_costs(i)
        chosen = costs.loc[costs["chosen"], "cluster"].item()
        assert chosen == model.component_labels_[i], (i, costs)
        assert costs["cost"].to_numpy() == pytest.approx((costs["fit"] + costs["size_term"]).to_numpy())


def test_the_costs_equal_a_slow_reference_for_known_variance_gaussians():
    """One real column with a Normal prior on the mean and known variance (spherical_gaussian), by hand:
    the predictive of cluster k is Normal(mu_k, s2 + v_k) with the posterior mean and variance."""
    X, _ = plos_scenario("5.1", 120, seed=4)
    x = X[:, :1]
    s2, m0, v0 = 1.5, 0.0, 10.0
    model = MAPDP(N0=2.0, likelihood="spherical_gaussian", prior={"sigma2": s2, "mu0": m0, "sigma0_2": v0},
                  n_init=1, random_state=0).fit(x)
    labels = model.component_labels_
    for i in (0, 7, 55):
        costs = model.row_costs(i).set_index("option")
        others = np.arange(len(x)) != i
        for k in np.unique(labels[others]):
            xs = x[others & (labels == k), 0]
            v = 1.0 / (1.0 / v0 + len(xs) / s2)
            mu = v * (m0 / v0 + xs.sum() / s2)
            expected = -stats.norm.logpdf(x[i, 0], mu, math.sqrt(s2 + v)) - math.log(len(xs))
            assert costs.loc[f"cluster {k}", "cost"] == pytest.approx(expected, rel=1e-9, abs=1e-9)
        new = -stats.norm.logpdf(x[i, 0], m0, math.sqrt(s2 + v0)) - math.log(2.0)
        assert costs.loc["new cluster", "cost"] == pytest.approx(new, rel=1e-9, abs=1e-9)


def test_a_row_alone_in_its_cluster_has_the_new_cluster_as_its_place_and_bad_rows_are_refused():
    X = np.array([[0.0], [0.1], [-0.1], [0.05], [40.0]])
    model = MAPDP(N0=1.0, likelihood="normal_gamma", n_init=1, random_state=0).fit(X)
    alone = int(np.flatnonzero(np.bincount(model.component_labels_)[model.component_labels_] == 1)[0])
    costs = model.row_costs(alone)
    assert model.component_labels_[alone] not in set(costs["cluster"])  # its cluster is empty without it
    assert costs.loc[costs["chosen"], "option"].item() == "new cluster"
    with pytest.raises(ValueError, match="rows 0 to 4"):
        model.row_costs(5)
    with pytest.raises(ValueError):
        model.row_costs(-1)
    one = MAPDP(N0=1.0, likelihood="normal_gamma", n_init=1).fit(np.array([[1.0]]))
    with pytest.raises(ValueError, match="one row"):
        one.row_costs(0)
