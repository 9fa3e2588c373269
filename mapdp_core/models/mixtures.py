"""E-M for a finite Gaussian mixture and variational inference for a DP mixture (Blei &
Jordan 2006), the comparators of the papers' tables, as per-iteration generators.

Both wrap scikit-learn's estimators (GaussianMixture, BayesianGaussianMixture with a
Dirichlet-process weight prior) and advance them one iteration at a time with
``warm_start=True, max_iter=1``, which runs exactly the E and M steps a single long fit
would (tested), so that they can be animated beside MAP-DP.
"""
from __future__ import annotations

import math
import time
import warnings
from typing import Iterator

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import BayesianGaussianMixture, GaussianMixture

from mapdp_core.core.validation import as_data, check_choice, check_int, check_real
from mapdp_core.core.estimator import Control, Problem, SweepEstimator
from mapdp_core.core.state import SweepState

_COVARIANCE_TYPES = ("full", "tied", "diag", "spherical")


def _check(X, n_components, max_iter, tol, covariance_type, algorithm: str = "E-M",
           estimator=None) -> np.ndarray:
    """The data as a complete float matrix and the parameters checked, in scikit-learn's
    wording for the data (``estimator`` records ``n_features_in_`` as ``fit`` must)."""
    try:
        X = as_data(X, algorithm, estimator)
    except ValueError as exc:
        if "NaN" in str(exc) or "infinity" in str(exc):
            raise ValueError("X has missing or infinite values; E-M and variational DP need complete data "
                             "(MAP-DP handles gaps).") from None
        raise
    n_components = check_int(n_components, "n_components", 1)
    if n_components > X.shape[0]:
        raise ValueError(f"n_components must be a whole number between 1 and N = {X.shape[0]} (the rows of X), "
                         f"got {n_components!r}.")
    check_int(max_iter, "max_iter", 1)
    check_real(tol, "tol", low=0)
    check_choice(covariance_type, "covariance_type", _COVARIANCE_TYPES)
    return X


def _full_covariances(model, covariance_type, K, D):
    c = model.covariances_
    if covariance_type == "full":
        return np.array(c)
    if covariance_type == "tied":
        return np.repeat(c[None], K, axis=0)
    if covariance_type == "diag":
        return np.array([np.diag(v) for v in c])
    return np.array([np.eye(D) * v for v in c])


def _iterate(model, X, max_iter, tol, algorithm, covariance_type) -> Iterator[SweepState]:
    t0 = time.perf_counter()
    N, D = X.shape
    previous = None
    bound_old = -math.inf
    for iteration in range(1, max_iter + 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X)
        raw = model.predict(X)
        used, labels = np.unique(raw, return_inverse=True)  # components with points, renumbered
        bound = float(model.lower_bound_)
        converged = abs(bound - bound_old) < tol
        covs = _full_covariances(model, covariance_type, len(model.weights_), D)[used]
        yield SweepState(
            iteration=iteration, labels=labels, n_clusters=len(used),
            objective=-bound * N, neg_log_joint=math.nan,
            n_changed=int(N if previous is None else np.sum(raw != previous)),
            cluster_sizes=np.bincount(labels), elapsed=time.perf_counter() - t0, converged=converged,
            summaries={"mean": model.means_[used], "covariance": {tuple(str(j) for j in range(D)): covs},
                       "proportions": {}, "weights": model.weights_[used]},
            algorithm=algorithm,
        )
        if converged:
            return
        previous, bound_old = raw, bound


def em_gaussian_mixture(X, n_components: int = 3, *, covariance_type: str = "full", max_iter: int = 100,
                        tol: float = 1e-3, random_state=None, means_init=None) -> Iterator[SweepState]:
    """E-M for a finite Gaussian mixture (PLOS Section 2.1), one state per iteration.

    ``objective`` is -N times the average log-likelihood that E-M increases
    (sklearn's ``lower_bound_``); ``neg_log_joint`` does not apply and is NaN.
    Labels are the most responsible component, numbered over the components that
    have points. ``means_init`` starts from given means (the PLOS tables started E-M
    at the true parameters); otherwise k-means initialisation as in scikit-learn.
    """
    X = _check(X, n_components, max_iter, tol, covariance_type)
    model = GaussianMixture(n_components=n_components, covariance_type=covariance_type, max_iter=1, tol=0.0,
                            warm_start=True, random_state=random_state, means_init=means_init)
    return _iterate(model, X, max_iter, tol, "E-M", covariance_type)


def variational_dp(X, n_components: int = 20, *, weight_concentration_prior=None, covariance_type: str = "full",
                   max_iter: int = 200, tol: float = 1e-3, random_state=None) -> Iterator[SweepState]:
    """Variational inference in a truncated DP Gaussian mixture (Blei & Jordan 2006), one
    state per iteration: scikit-learn's BayesianGaussianMixture with
    ``weight_concentration_prior_type="dirichlet_process"``, truncated at ``n_components``.

    ``objective`` is -N times sklearn's per-sample evidence lower bound.
    """
    X = _check(X, n_components, max_iter, tol, covariance_type, "Variational DP")
    if weight_concentration_prior is not None:
        check_real(weight_concentration_prior, "weight_concentration_prior (None: 1/n_components)", positive=True)
    model = BayesianGaussianMixture(
        n_components=n_components, covariance_type=covariance_type, max_iter=1, tol=0.0, warm_start=True,
        weight_concentration_prior_type="dirichlet_process", weight_concentration_prior=weight_concentration_prior,
        random_state=random_state)
    return _iterate(model, X, max_iter, tol, "Variational DP", covariance_type)


def _seed(rng: np.random.Generator) -> int:
    """An int seed for scikit-learn from the restart's generator."""
    return int(rng.integers(0, 2**31 - 1))


class _Mixture(SweepEstimator):
    """What the two scikit-learn mixture wrappers share: numeric input, validation, the name as
    the state's algorithm; subclasses build the scikit-learn model of one restart."""

    input = "numeric"
    step = "iteration"

    def _validate(self, X) -> Problem:
        X = _check(X, self.n_components, self.max_iter, self.tol, self.covariance_type, self.name, self)
        self._check_extra_params()
        return Problem(X, X.shape[0])

    def _check_extra_params(self) -> None:
        """Parameters particular to one mixture (none by default)."""

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        return _iterate(self._model(_seed(rng)), problem.data, self.max_iter, self.tol, self.name,
                        self.covariance_type)


class EMGaussianMixture(_Mixture):
    """E-M for a finite Gaussian mixture with ``n_components`` components (PLOS Section 2.1),
    restarted ``n_init`` times; the lowest ``objective`` (-N times the average log-likelihood)
    is kept. Labels are the most responsible component among those that have points.

    Parameters
    ----------
    n_components : int, default=3
    covariance_type : {"full", "tied", "diag", "spherical"}, default="full"
        As in scikit-learn's ``GaussianMixture``.
    %(max_iter)s
    %(tol)s
        Stop when the average log-likelihood changes by less than ``tol``.
    %(n_init)s
    %(random_state)s
    """

    name = "E-M"
    monotone = "objective"
    ui = {"n_components": Control("Components (K) for E-M", "int", 3, 1, 30, short="K")}

    def __init__(self, n_components=3, covariance_type="full", max_iter=100, tol=1e-3, n_init=1,
                 random_state=None):
        self._init_params(locals())

    def _model(self, seed: int) -> GaussianMixture:
        return GaussianMixture(n_components=self.n_components, covariance_type=self.covariance_type,
                               max_iter=1, tol=0.0, warm_start=True, random_state=seed)


class VariationalDP(_Mixture):
    """Variational inference in a truncated DP Gaussian mixture (Blei & Jordan 2006), as
    :func:`variational_dp`, restarted ``n_init`` times; the lowest ``objective`` (-N times
    the evidence lower bound) is kept.

    Parameters
    ----------
    n_components : int, default=20
        The truncation: the most components.
    covariance_type : {"full", "tied", "diag", "spherical"}, default="full"
    weight_concentration_prior : float > 0 or None, default=None
        The DP concentration (None: 1/n_components, scikit-learn's default).
    %(max_iter)s
    %(tol)s
        Stop when the evidence lower bound per row changes by less than ``tol``.
    %(n_init)s
    %(random_state)s
    """

    name = "Variational DP"
    monotone = None  # scikit-learn's bound can dip by rounding between single iterations
    ui = {"n_components": Control("Variational DP: most components (truncation)", "int", 20, 1, 100, short="T")}

    def __init__(self, n_components=20, covariance_type="full", weight_concentration_prior=None, max_iter=200,
                 tol=1e-3, n_init=1, random_state=None):
        self._init_params(locals())

    def _check_extra_params(self) -> None:
        if self.weight_concentration_prior is not None:
            check_real(self.weight_concentration_prior, "weight_concentration_prior (None: 1/n_components)",
                       positive=True)

    def _model(self, seed: int) -> BayesianGaussianMixture:
        return BayesianGaussianMixture(
            n_components=self.n_components, covariance_type=self.covariance_type, max_iter=1, tol=0.0,
            warm_start=True, weight_concentration_prior_type="dirichlet_process",
            weight_concentration_prior=self.weight_concentration_prior, random_state=seed)
