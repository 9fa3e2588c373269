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

from typing import Iterator

import numpy as np

from mapdp_core.core.validation import check_int
from mapdp_core.core.estimator import Control, Problem, SweepEstimator
from mapdp_core.engine.partition_prior import finite_mixture_prior
from mapdp_core.engine.sweeps import run_sweeps

from .mapdp import MAPDP
from mapdp_core.core.state import SweepState


def collapsed_gibbs(X, N0: float = 3.0, likelihood="normal_wishart", prior=None, *, n_sweeps: int = 600,
                    random_state=None, order=None) -> Iterator[SweepState]:
    """Yield one :class:`SweepState` per Gibbs sweep (``algorithm="Gibbs"``).

    Parameters are those of :func:`mapdp_core.map_dp`; ``n_sweeps`` sweeps are always run
    (PLOS Section 5 ran 600). ``random_state`` seeds the draws. Each state carries the
    exact -ln p(X, z | N0, theta0), by which the best state of a chain is chosen. The
    generator of :meth:`CollapsedGibbs.iter_sweeps`.
    """
    model = CollapsedGibbs(N0=N0, likelihood=likelihood, prior=prior, n_sweeps=n_sweeps, random_state=random_state)
    return model.iter_sweeps(X, order=order)


class CollapsedGibbs(SweepEstimator):
    """Collapsed Gibbs sampler that keeps the most probable partition it visits.

    Parameters
    ----------
    N0, likelihood, prior : as :class:`~mapdp_core.MAPDP`.
    partition_prior : "dp", "mfm" or MixtureOfFiniteMixtures, default="dp"
        As :class:`~mapdp_core.MAPDP`: under the mixture of finite mixtures (N0 is then unused) this
        is Miller & Harrison's (2018) collapsed Gibbs sampler for the MFM, the restaurant-process
        weights N_k + gamma and gamma V_N(t+1) / V_N(t) in place of N_k and N0.
    n_sweeps : int, default=600
        Sweeps of each chain (all are run: a sampler does not converge to a point).
    %(n_init)s
        Chains, each with its own seed; the most probable state over all chains is kept.
    %(random_state)s

    Attributes
    ----------
    %(labels_)s
        The state with the lowest exact -ln p(X, z) seen in the chain.
    n_clusters_, neg_log_joint_, best_iteration_ : its K, -ln p and sweep number.
    neg_log_joint_history_, n_clusters_history_ : per sweep, for trace plots.
    %(n_iter_)s
    """

    name = "Gibbs"
    restart_key = "neg_log_joint"
    keep = "best"
    monotone = None  # a sampler wanders
    ui = {"n_sweeps": Control("Gibbs sweeps", "int", 100, 10, 600, short="sweeps",
                              help="PLOS Section 5 ran 600; the most probable partition visited is kept.")}

    def __init__(self, N0=3.0, likelihood="normal_wishart", prior=None, n_sweeps=600, n_init=1, random_state=None,
                 partition_prior="dp"):
        self._init_params(locals())

    def _validate(self, X) -> Problem:
        n_sweeps = check_int(self.n_sweeps, "n_sweeps", 1)
        mfm = finite_mixture_prior(self.partition_prior, "auto")  # the MFM has no N0: N0 is not read then
        problem = MAPDP(N0=self.N0 if mfm is None else "auto", likelihood=self.likelihood, prior=self.prior,
                        max_iter=n_sweeps, partition_prior=self.partition_prior if mfm is None else mfm)._validate(X)
        return Problem(problem.data, problem.n_rows, {**problem.settings, "n_sweeps": n_sweeps})

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        order = np.arange(problem.n_rows, dtype=np.int64) if order is None else order
        return run_sweeps(problem.data, problem.settings["N0"], order, 0.0, problem.settings["n_sweeps"], rng)

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        self.neg_log_joint_ = state.neg_log_joint
        self.best_iteration_ = state.iteration
        self.neg_log_joint_history_ = history.neg_log_joints
        self.n_clusters_history_ = history.n_clusters
        self.n_features_in_ = problem.data.X.shape[1]
