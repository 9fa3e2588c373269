"""E-M and variational DP, advanced one iteration at a time, equal scikit-learn's long fits."""
import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import BayesianGaussianMixture, GaussianMixture

from mapdp_core.models.mixtures import em_gaussian_mixture, variational_dp


def data(seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal([0, 0], 1, (150, 2)), rng.normal([5, 1], 0.5, (80, 2)), rng.normal([1, 6], 1.5, (70, 2))])


@pytest.mark.parametrize("t", [1, 3, 8])
def test_em_steps_equal_one_long_fit(t):
    X = data()
    states = list(em_gaussian_mixture(X, 3, max_iter=t, tol=0.0, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = GaussianMixture(3, max_iter=t, tol=0.0, random_state=0).fit(X)
    assert len(states) == t
    np.testing.assert_allclose(states[-1].summaries["mean"], ref.means_[np.unique(ref.predict(X))], rtol=1e-10)
    assert states[-1].objective == pytest.approx(-ref.lower_bound_ * len(X))


def test_variational_dp_steps_equal_one_long_fit():
    X = data(1)
    states = list(variational_dp(X, 10, max_iter=5, tol=0.0, random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = BayesianGaussianMixture(n_components=10, weight_concentration_prior_type="dirichlet_process",
                                      max_iter=5, tol=0.0, random_state=0).fit(X)
    np.testing.assert_array_equal(states[-1].labels, np.unique(ref.predict(X), return_inverse=True)[1])


def test_em_converges_and_states_are_well_formed():
    X = data(2)
    states = list(em_gaussian_mixture(X, 3, random_state=0))
    assert states[-1].converged and states[-1].n_clusters == 3
    assert all(math.isnan(s.neg_log_joint) and s.cluster_sizes.sum() == len(X) for s in states)
    assert all(b.objective <= a.objective + 1e-9 for a, b in zip(states, states[1:]))  # E-M never worsens


def test_missing_values_are_refused_with_a_pointer_to_mapdp():
    X = data()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="MAP-DP handles gaps"):
        em_gaussian_mixture(X, 3)
