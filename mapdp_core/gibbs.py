"""Collapsed Gibbs sampling for the same Dirichlet process mixtures (Neal 2000, Algorithm 3).

MAP-DP is this sampler with the draw replaced by the most probable choice (PLOS Section 4,
ALGORITHMS.md); both run through the same numba sweep, so every likelihood family, missing
value rule and prior is shared. Each row's new cluster is drawn with probability
proportional to N_k^{-i} f(x_i | theta_k^{-i}) for an existing cluster and N0 f(x_i | theta0)
for a new one. The chain starts, like MAP-DP, from one cluster, with the first sweep's count
of that cluster replaced by 1 (Appendix B: otherwise the reinforcement of the single
cluster keeps the chain there for a very long time).
"""
from __future__ import annotations

import numbers
from typing import Iterator

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ._checks import check_order
from .mapdp import _check_params, _run
from .spec import parse
from .state import SweepState


def _check_sweeps(n_sweeps) -> int:
    if isinstance(n_sweeps, bool) or not isinstance(n_sweeps, numbers.Integral) or n_sweeps < 1:
        raise ValueError(f"n_sweeps must be a whole number >= 1, got {n_sweeps!r}.")
    return int(n_sweeps)


def collapsed_gibbs(X, N0: float = 3.0, likelihood="normal_wishart", prior=None, *, n_sweeps: int = 600,
                    random_state=None, order=None) -> Iterator[SweepState]:
    """Yield one :class:`SweepState` per Gibbs sweep (``algorithm="Gibbs"``).

    Parameters are those of :func:`mapdp_core.map_dp`; ``n_sweeps`` sweeps are always run
    (PLOS Section 5 ran 600). ``random_state`` seeds the draws. Each state carries the
    exact -ln p(X, z | N0, theta0), by which the best state of a chain is chosen.
    """
    _check_params(N0, 0.0, 1)
    n_sweeps = _check_sweeps(n_sweeps)
    parsed = parse(X, likelihood, prior)
    order = check_order(order, parsed.X.shape[0])
    return _run(parsed, float(N0), order, 0.0, n_sweeps, np.random.default_rng(random_state))


class CollapsedGibbs(ClusterMixin, BaseEstimator):
    """Collapsed Gibbs sampler that keeps the most probable partition it visits.

    Attributes
    ----------
    labels_ : ndarray of shape (N,)
        The state with the lowest exact -ln p(X, z) seen in the chain.
    n_clusters_, neg_log_joint_, best_iteration_ : its K, -ln p and sweep number.
    neg_log_joint_history_, n_clusters_history_ : per sweep, for trace plots.
    n_iter_ : int
        Sweeps run.
    """

    def __init__(self, N0=3.0, likelihood="normal_wishart", prior=None, n_sweeps=600, random_state=None):
        self.N0 = N0
        self.likelihood = likelihood
        self.prior = prior
        self.n_sweeps = n_sweeps
        self.random_state = random_state

    def fit(self, X, y=None):
        best = None
        joints, ks = [], []
        for state in collapsed_gibbs(X, self.N0, self.likelihood, self.prior, n_sweeps=self.n_sweeps,
                                     random_state=self.random_state):
            joints.append(state.neg_log_joint)
            ks.append(state.n_clusters)
            if best is None or state.neg_log_joint < best.neg_log_joint:
                best = state
        self.labels_ = np.array(best.labels)
        self.n_clusters_ = best.n_clusters
        self.neg_log_joint_ = best.neg_log_joint
        self.best_iteration_ = best.iteration
        self.neg_log_joint_history_ = joints
        self.n_clusters_history_ = ks
        self.n_iter_ = len(joints)
        self.n_features_in_ = np.asarray(X).shape[1] if np.ndim(X) == 2 else 1
        return self
