r"""Small-variance-asymptotic ("hard") HDP mixture for grouped data: :class:`HardHDP`.

Sources: HSJ eq 19 (Huggins, "small-variance asymptotics for the HDP and the HDP-HMM") and
Kulis & Jordan (2012), ICML, Algorithm 2 (hard Gaussian HDP, "HDP-means"), same fixed points;
see ``shared/OTHER-SYSTEMS.md`` §3 for the corrected objective and errata H1-H9, and
:mod:`.hard_common` for the divergences D, the penalties, their conversions (H8) and the
coordinate descent (OTHER-SYSTEMS §3.2(a)).

Objective (``lambda_global`` = HSJ λ1, ``lambda_local`` = HSJ λ2, ``lambda_mean`` = HSJ λ3):

.. math::

   J_{HDP}(z,\mu) = \sum_{i,j} D(y_{ij}, \mu_{z_{ij}}) + \lambda_1 (K-1)
                    + \lambda_2 \sum_i \max(m_i - 1, 0) + \lambda_3 \sum_k \lVert\mu_k\rVert^2

``m_i`` is the number of distinct global clusters used by group i. The ``max(., 0)`` is
erratum H5 (an empty restaurant pays nothing); for the HDP mixture it only matters while a
group is momentarily empty during a sweep (every group has at least one row), but it is what
makes a one-row group free of the local penalty, hence the "every row its own group =
DP-means with λ1" reduction.

Prediction (the papers have none): :meth:`HardHDP.predict` gives every new row its nearest
fitted centre.

The hard HDP-HMMs, formerly here, are in :mod:`.hdp_hmm` (HSJ eq 29) and :mod:`.hdp_hmm_direct`
(HSJ eq 36); their names are still importable from this module.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from mapdp_core.core.validation import check_bool
from mapdp_core.core.estimator import Problem, SweepEstimator
from mapdp_core.core.state import SweepState

from .hard_common import (_UI, DEFAULT_LOCAL_FACTOR, _HardModel, _hdp_J, _hdp_run, _labelled, _penalties,
                          _prepare, _resolve_lambdas)
from .sequence_common import _ExtraArgMixin

__all__ = ["HardHDP", "hdp_objective"]


def hdp_objective(X, labels, groups=None, *, lambda_global, lambda_local, lambda_mean=0.0,
                  divergence="squared_euclidean") -> float:
    """J_HDP (HSJ eq 19, H5) of ``labels`` with every centre at its optimum S_k/(W_k + λ3)."""
    Y, w, z, M, kind = _labelled(X, labels, divergence, lambda_mean, "HardHDP")
    gidx = _group_index(groups, Y.shape[0])[1]
    return _hdp_J(Y, w, z, M, gidx, *_penalties(lambda_global, lambda_local), float(lambda_mean), kind)


def _is_missing(value) -> bool:
    """Whether a group id is a missing value of any kind (None, NaN, pandas' NA and NaT, numpy's NaT)."""
    if value is None:
        return True
    try:
        missing = value != value  # NaN and NaT are not equal to themselves
    except TypeError:  # pandas' NA answers comparisons with NA, whose truth is ambiguous
        return True
    try:
        return bool(missing)
    except TypeError:  # NA again
        return True


def _group_index(groups, N: int) -> tuple[list, np.ndarray]:
    """(group ids in order of first appearance, group index of every row)."""
    if groups is None:
        return [0], np.zeros(N, dtype=np.int64)
    if isinstance(groups, (str, bytes, dict, set, frozenset)) or not hasattr(groups, "__len__"):
        raise ValueError(f"groups must be a sequence with one group id per row of X ({N} rows), got {groups!r}.")
    arr = np.asarray(groups, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"groups must be one-dimensional (one group id per row of X), got shape {arr.shape}.")
    if arr.shape[0] != N:
        raise ValueError(f"groups has {arr.shape[0]} entries but X has {N} rows; give one group id per row.")
    ids, index, gidx = [], {}, np.empty(N, dtype=np.int64)
    for n, g in enumerate(list(groups)):
        if isinstance(g, np.generic):
            g = g.item()
        try:
            code = index.get(g)
        except TypeError:
            raise ValueError(f"every group id must be hashable (a number, a string, ...); row {n} has {g!r}.") from None
        if _is_missing(g):  # None, NaN, pd.NA, pd.NaT, numpy's NaT: one rule for every kind of gap
            raise ValueError(f"groups has a missing id ({g!r}) at row {n}; give every row a group (or leave the "
                             "rows without one out).")
        if code is None:
            code = index[g] = len(ids)
            ids.append(g)
        gidx[n] = code
    return ids, gidx


class HardHDP(_ExtraArgMixin, _HardModel):
    r"""Hard HDP mixture (HSJ eq 19; Kulis & Jordan 2012, Algorithm 2): groups of rows share
    global clusters; each group pays ``lambda_local`` for every cluster it uses beyond its first.

    Minimises J_HDP of the module docstring by the coordinate descent of :mod:`.hard_common`
    (steps 1-3 and 5). Start: one cluster at the (shrunk) grand mean, as DP-means.

    Parameters
    ----------
    lambda_global : float >= 0 or None
        HSJ λ1 / Kulis-Jordan λ_g: penalty per global cluster (divergence units). None
        (:func:`~.hard_common.default_lambdas`): for the squared Euclidean distance ``3u``,
        ``u = σ̂² q`` with σ̂² the noise variance per column of a structure-blind MAP-DP fit and
        q the ``1 − 1/N`` quantile of χ²_D (HSJ's scaling γ = exp(−λ1/(2σ²))), so that a new
        cluster costs a row ``λ1 + λ2 = 4u``, the squared diameter of a Gaussian cluster; for
        the other divergences the data's Bregman information B.
    lambda_local : float >= 0 or None
        HSJ λ2 / Kulis-Jordan λ_l: penalty per local cluster beyond the first in each group.
        None: ``u`` (squared Euclidean; a row's noise never pays for an extra cluster of its
        group), B/2 for the other divergences.
    lambda_mean : float >= 0, default 0
        HSJ λ3: ridge penalty on the centres (a Gaussian prior with σ0² = σ²/λ3), squared
        Euclidean only; the centres are ``S_k/(n_k + λ3)``.
    divergence : {"squared_euclidean", "poisson", "bernoulli", "multinomial"}
    max_iter : int, default 100
    tol : float, default 1e-9
        Stop when a sweep changes no label or lowers J by at most ``tol·|J|``.
    local_moves : bool, default True
        Also move whole (group, cluster) blocks after each sweep (Kulis & Jordan).
    random_state : ignored (kept for the library's common interface): the algorithm is
        deterministic, rows are visited group by group in input order.

    Attributes
    ----------
    labels_, n_clusters_, cluster_sizes_, cluster_centers_ (K, D), objective_,
    objective_history_ (J after every sweep, never increasing), n_iter_, converged_,
    groups_ : list, the group ids in order of first appearance;
    group_usage_ : ndarray (G, K), rows of group i in cluster k;
    n_local_clusters_ : ndarray (G,), m_i;
    lambda_global_, lambda_local_ : the penalties used (resolved defaults).
    """

    name = "Hard HDP"
    ui = dict(_UI)

    def __init__(self, lambda_global=None, lambda_local=None, lambda_mean=0.0, divergence="squared_euclidean",
                 max_iter=100, tol=1e-9, local_moves=True, random_state=None):
        self._init_params(locals())

    def fit(self, X, groups=None):
        """Fit on X (N, D) with ``groups`` (one hashable id per row; None: one group)."""
        return self._with_extra(groups, lambda: SweepEstimator.fit(self, X))

    def fit_predict(self, X, groups=None):
        return self.fit(X, groups).labels_

    def iter_sweeps(self, X, groups=None, *, restart: int = 0, order=None):
        """The generator of the states of one run (validated now); ``order`` reorders the rows
        within each group (groups are always visited in order of first appearance)."""
        return self._with_extra(groups, lambda: SweepEstimator.iter_sweeps(self, X, restart=restart, order=order))

    def from_states(self, X, states, restart_values=None, groups=None):
        return self._with_extra(groups, lambda: SweepEstimator.from_states(self, X, states, restart_values))

    def _validate(self, X) -> Problem:
        kind, lam3, settings = self._check_params()
        settings["local_moves"] = check_bool(self.local_moves, "local_moves")
        Y, w = _prepare(X, kind, "Hard HDP", self)
        ids, gidx = _group_index(self._extra(), Y.shape[0])
        lam1, lam2 = _resolve_lambdas(self, Y, w, kind, "hdp", DEFAULT_LOCAL_FACTOR)
        settings.update(kind=kind, lam1=lam1, lam2=lam2, lam3=lam3, groups=ids, gidx=gidx)
        return Problem((Y, w), Y.shape[0], settings)

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        s = problem.settings
        Y, w = problem.data
        gidx = s["gidx"]
        order = np.arange(problem.n_rows, dtype=np.int64) if order is None else np.asarray(order, dtype=np.int64)
        order = order[np.argsort(gidx[order], kind="stable")]
        return _hdp_run(Y, w, gidx, len(s["groups"]), order, s["lam1"], s["lam2"], s["lam3"], s["kind"],
                        s["max_iter"], s["tol"], s["local_moves"], self.name)

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        super()._store(problem, state, history)
        self.groups_ = list(problem.settings["groups"])
        self.group_usage_ = state.summaries["usage"]
        self.n_local_clusters_ = (self.group_usage_ > 0).sum(axis=1)

    def predict(self, X):
        """The fitted cluster of smallest divergence ``D(y, μ_k)`` of every row of X (for the
        squared Euclidean distance, the nearest centre; ties go to the lowest index).

        Kept simple on purpose: new rows never open clusters and no group is read, so the
        local penalty is not charged (with a group it would add ``lambda_local`` to every
        cluster that group has not used yet; the nearest centre is the choice for a row whose
        group is new or unknown)."""
        return np.argmin(self._new_divergences(X)[1], axis=1).astype(np.int64)
