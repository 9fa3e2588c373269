r"""Small-variance-asymptotic ("hard") HDP-HMM, "combinatorial" form: :class:`HardHDPHMM`.

Sources: HSJ eq 29 (Huggins, "small-variance asymptotics for the HDP and the HDP-HMM") and
EJS eq 6.8 (Raykov, Boukouvalas & Little 2016, the same objective reparameterised, see the
conversions in :mod:`.hard_common`); ``shared/OTHER-SYSTEMS.md`` §3 for the corrected objective
and errata H1-H9, §3.2(b) for the sweep. :mod:`.hard_common` describes the divergences D, the
penalties and the coordinate descent; :mod:`.hdp_hmm_direct` holds the "direct" form (HSJ eq 36),
which shares this module's estimator plumbing (:class:`_HardHMM`).

Objective (``lambda_global`` = HSJ λ1, ``lambda_local`` = HSJ λ2, ``lambda_mean`` = HSJ λ3):

.. math::

   J_{comb}(z,\mu) = \sum_t D(y_t, \mu_{z_t}) + \lambda_1 (K-1)
                    + \lambda_2 \sum_i \max(s_i - 1, 0) + \lambda_3 \sum_i \lVert\mu_i\rVert^2

``s_i`` is the number of distinct successors of state i; the ``max(., 0)`` is erratum H5 (a
state that is only ever last in its sequence pays nothing). Transitions never cross the
``lengths`` bounds.

Prediction (the papers have none): :meth:`HardHDPHMM.predict` labels new sequences by exact
Viterbi over the fitted states, eq 29's successor penalty charged relative to the fitted
successor sets.

Also here (OTHER-SYSTEMS §3.1(d)): :func:`asymp_ihmm_objective`, Roychowdhury et al.'s
objective (EJS eq 6.9), evaluated only.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from mapdp_core.core.validation import check_bool, check_choice, check_nonneg
from mapdp_core.core.estimator import Problem
from mapdp_core.core.state import SweepState

from .hard_common import (_UI, DEFAULT_SUCCESSOR_FACTOR, _Clusters, _descent, _dpmeans_labels, _fit_term, _HardModel,
                          _kernel_args, _labelled, _new_cluster_costs, _optimal_means, _penalties,
                          _prepare, _resolve_lambdas, divergence)
from .sequence_common import _lengths_of, _LengthsMixin, _neighbours, _sequence_lengths, _transition_counts, _viterbi
from mapdp_core.kernels import hdp as _hk

__all__ = ["HardHDPHMM", "hdp_hmm_objective", "asymp_ihmm_objective"]


# ------------------------------------------------------------------------ objectives
def _successor_counts(z, nxt, K) -> np.ndarray:
    t = np.flatnonzero(nxt >= 0)
    pairs = np.unique(z[t] * K + z[nxt[t]])
    return np.bincount(pairs // K, minlength=K)


def _hmm_J(Y, w, z, M, nxt, lam1, lam2, lam3, kind) -> float:
    K = int(z.max()) + 1
    s = _successor_counts(z, nxt, K)
    ks = np.unique(z)
    return (_fit_term(Y, w, z, M, kind) + lam1 * (len(ks) - 1) + lam2 * np.maximum(s - 1, 0).sum()
            + lam3 * float((M[ks] ** 2).sum()))


def hdp_hmm_objective(X, labels, lengths=None, *, lambda_global, lambda_local, lambda_mean=0.0,
                      divergence="squared_euclidean") -> float:
    """J_comb (HSJ eq 29 with H5) of the state sequence ``labels``, centres at their optimum."""
    Y, w, z, M, kind = _labelled(X, labels, divergence, lambda_mean, "HardHDPHMM")
    nxt = _neighbours(lengths, Y.shape[0])[1]
    return _hmm_J(Y, w, z, M, nxt, *_penalties(lambda_global, lambda_local), float(lambda_mean), kind)


def asymp_ihmm_objective(X, labels, *, lam, lambda_local, lambda_global, lengths=None,
                         divergence="squared_euclidean") -> float:
    r"""Roychowdhury, Jiang & Kulis's (2013) asymp-iHMM objective as printed in EJS eq 6.9,
    read with the indicators ``[z_t = k]`` that the print omits (erratum H7):

    .. math::

       J_{asymp}(z) = \sum_t w_t D(y_t, \mu_{z_t})
                      - \lambda \sum_{t \ge 2} \log \frac{N_{z_{t-1} z_t}}{N_{z_{t-1} \cdot}}
                      + \lambda_{local} \sum_p K_p^{local} + \lambda_{global} K

    ``N_{ij}`` counts the transitions i -> j and ``N_{i·}`` all transitions out of i; the sum
    over t, and the counts, stop at the ``lengths`` bounds (a sequence's first step has no
    transition term). ``K_p^local`` is the number of distinct successors of state p (0 for a
    state that is only ever last in its sequence), ``K`` the number of distinct labels, and
    every centre ``μ_k`` is its cluster's (weighted) mean. ``lam`` = EJS λ, ``lambda_local``
    = EJS λ1, ``lambda_global`` = EJS λ2. The transition term is ``lam·Σ_i N_{i·}·H_i``,
    ``H_i`` the entropy of row i of the empirical transition matrix ``N_{ij}/N_{i·}``, hence 0
    for a chain in which every state always moves to the same successor. With ``lam = 0`` it
    is :func:`hdp_hmm_objective` with ``lambda_global + lambda_local`` as its global and
    ``lambda_local`` as its local penalty, plus the constant ``lambda_global + lambda_local``
    (when every state has a successor; H5 otherwise).

    Evaluation only: the asymp-iHMM *algorithm* ("dynamic programming plus new states") is in
    Roychowdhury et al. (2013), which is not among the project's papers (OTHER-SYSTEMS
    §3.1(d), 3.2(d)), so none is implemented. Relabelling the states does not change it.
    """
    Y, w, z, M, kind = _labelled(X, labels, divergence, 0.0, "asymp-iHMM")
    _, nxt = _neighbours(lengths, Y.shape[0])
    K = M.shape[0]
    lam = check_nonneg(lam, "lam")
    lam_l = check_nonneg(lambda_local, "lambda_local")
    lam_g = check_nonneg(lambda_global, "lambda_global")
    N = _transition_counts(z, nxt, K).astype(float)
    rows = N.sum(axis=1, keepdims=True)
    used = N > 0
    trans = -float((N[used] * np.log((N / np.where(rows > 0, rows, 1.0))[used])).sum())
    return _fit_term(Y, w, z, M, kind) + lam * trans + lam_l * float(used.sum()) + lam_g * K


# ------------------------------------------------------------------------ the coordinate descent
def _hmm_sweep(Y, w, z, C: _Clusters, prv, nxt, order, lam1, lam2, lam3, kind, newcost) -> int:
    """One assignment sweep of OTHER-SYSTEMS 3.2(b), in place; returns time steps changed (the
    numba kernel :func:`~mapdp_core.kernels.hdp.hmm_sweep`)."""
    Y, w, newcost = _kernel_args(Y, w, newcost)
    changed, C.K, C.M, C.count = _hk.hmm_sweep(
        Y, w, z, C.M, C.count, int(C.K), np.ascontiguousarray(prv, dtype=np.int64),
        np.ascontiguousarray(nxt, dtype=np.int64), np.ascontiguousarray(order, dtype=np.int64), float(lam1),
        float(lam2), float(lam3), _hk.KIND_CODES[kind], newcost)
    return int(changed)


def _hmm_merges(Y, w, z, M, J, nxt, lam1, lam2, lam3, kind, max_states=50):
    """Greedy merges of two states (not in the papers; added because the time-step sweep can
    only split): while some merge of states a < b, with the centres at their optimum, lowers
    J_comb, apply the best one. Skipped above ``max_states`` states. Returns (labels,
    centres, J, rows relabelled). ``z`` holds the labels 0..K-1, all used, and ``M`` their
    optimal centres (``_optimal_means``), as ``_hmm_run`` passes them.

    A candidate's J_comb is assembled from pieces instead of calling ``_hmm_J`` on the merged
    labels: the fit terms of the states the merge leaves alone are kept from the pass's start
    (their rows and centres do not change), and only the merged state's centre and fit term
    are computed, with the NumPy operations ``_optimal_means`` and ``_fit_term`` apply to it
    (``np.add.at`` and ``bincount`` over its rows in time order, the same sums), then added up
    in the same order; the successor counts come from the merged transition counts. So every
    candidate's J is the one ``_hmm_J`` gives, to the bit, at O((n_a + n_b)·D + K²) instead of
    O(T·K·D) (``tests/models/test_hdp.py`` keeps the former loop as its twin)."""
    moved = 0
    D = Y.shape[1]
    while 1 < M.shape[0] <= max_states:
        K = M.shape[0]
        members = [np.flatnonzero(z == k) for k in range(K)]
        fit = [float((w[r] * divergence(Y[r], M[k][None], kind)[:, 0]).sum()) for k, r in enumerate(members)]
        N = _transition_counts(z, nxt, K)
        best = (J, None)
        for a in range(K):
            for b in range(a + 1, K):
                r = np.sort(np.concatenate([members[a], members[b]]))
                S = np.zeros((1, D))
                at = np.zeros(r.size, dtype=np.int64)
                np.add.at(S, at, w[r][:, None] * Y[r])
                W = np.bincount(at, weights=w[r], minlength=1)
                with np.errstate(invalid="ignore", divide="ignore"):
                    mu = S / (W + lam3)[:, None]
                total = 0.0
                for k in range(K):
                    if k == a:
                        total += float((w[r] * divergence(Y[r], mu, kind)[:, 0]).sum())
                    elif k != b:
                        total += fit[k]
                NN = N.copy()
                NN[a] += NN[b]
                NN[:, a] += NN[:, b]
                keep = np.arange(K) != b
                s = (NN[keep][:, keep] > 0).sum(axis=1)
                MM = M.copy()
                MM[a] = mu[0]
                MM = MM[keep]
                JJ = (total + lam1 * (K - 2) + lam2 * np.maximum(s - 1, 0).sum()
                      + lam3 * float((MM ** 2).sum()))
                if JJ < best[0] - 1e-12 * abs(best[0]):
                    best = (JJ, (a, b))
        if best[1] is None:
            break
        a, b = best[1]
        zz = np.where(z == b, a, z)
        zz = np.where(zz > b, zz - 1, zz)
        moved += int((z == b).sum())
        J, z, M = best[0], zz, _optimal_means(Y, w, zz, K - 1, lam3)
    return z, M, J, moved


def _hmm_run(Y, w, prv, nxt, order, lam1, lam2, lam3, kind, max_iter, tol, z0,
             algorithm="HardHDPHMM", merges=True) -> Iterator[SweepState]:
    """The states of HardHDPHMM's coordinate descent from the labels ``z0`` (steps 1 and 3-5 of
    :mod:`.hard_common`, by its ``_descent``): the time-step sweep, the mean step and the merges
    (``merges``); each state's ``summaries["transitions"]`` holds the (K, K) transition counts."""
    newcost = _new_cluster_costs(Y, w, lam3)
    return _descent(Y, w, z0, lam3, lambda z, M: _hmm_J(Y, w, z, M, nxt, lam1, lam2, lam3, kind),
                    [lambda z, C: _hmm_sweep(Y, w, z, C, prv, nxt, order, lam1, lam2, lam3, kind, newcost)],
                    (lambda z, M, J: _hmm_merges(Y, w, z, M, J, nxt, lam1, lam2, lam3, kind)) if merges else None,
                    lambda z, M: {"transitions": _transition_counts(z, nxt, M.shape[0])}, max_iter, tol, algorithm)


# ------------------------------------------------------------------------ the estimators
class _HardHMM(_LengthsMixin, _HardModel):
    """What both hard HDP-HMMs (this module's and :mod:`.hdp_hmm_direct`'s) share as
    estimators: ``lengths``, the checks of ``init`` and ``merges``, the start (``init``), the
    fitted transitions and the Viterbi labels of new sequences."""

    #: the rule of the default penalties (:func:`~.hard_common.default_lambdas`; None: B multiples)
    _default_model = "hmm"
    #: the default ``lambda_local`` as a multiple of the data's Bregman information B, where
    #: the B multiples are used (other divergences, the direct form)
    _local_factor = DEFAULT_SUCCESSOR_FACTOR

    def _check_params(self) -> tuple[str, float, dict]:
        kind, lam3, settings = super()._check_params()
        settings.update(init=check_choice(self.init, "init", ("dpmeans", "one")),
                        merges=check_bool(self.merges, "merges"))
        return kind, lam3, settings

    def _validate(self, X) -> Problem:
        kind, lam3, settings = self._check_params()
        Y, w = _prepare(X, kind, self.name, self)
        prv, nxt = _neighbours(self._extra(), Y.shape[0])
        lam1, lam2 = _resolve_lambdas(self, Y, w, kind, self._default_model, self._local_factor)
        settings.update(kind=kind, lam1=lam1, lam2=lam2, lam3=lam3, prv=prv, nxt=nxt, lengths=_lengths_of(prv))
        return Problem((Y, w), Y.shape[0], settings)

    def _start(self, problem: Problem) -> np.ndarray:
        """The first labels: DP-means' with λ = ``lambda_global`` (``init="dpmeans"``, time
        ignored) or one state (``"one"``)."""
        s = problem.settings
        if s["init"] == "dpmeans":
            return _dpmeans_labels(*problem.data, s["lam1"], s["lam3"], s["kind"], s["max_iter"], s["tol"])
        return np.zeros(problem.n_rows, dtype=np.int64)

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        super()._store(problem, state, history)
        self.transitions_ = state.summaries["transitions"]
        self.lengths_ = list(problem.settings["lengths"])

    def _transition_costs_of_fit(self) -> np.ndarray:
        """(K, K): what a transition j -> k between fitted states costs in ``predict``."""
        raise NotImplementedError  # pragma: no cover - each model has its own

    def _predict_states(self, X, lengths) -> np.ndarray:
        """The exact Viterbi labels of new sequences: emission ``w_t D(y_t, μ_k)`` from the fitted
        centres, the transition costs of the fit, the first step of each sequence free."""
        w, div = self._new_divergences(X)
        return _viterbi(w[:, None] * div, self._transition_costs_of_fit(), _sequence_lengths(lengths, len(w)))[0]


class HardHDPHMM(_HardHMM):
    r"""Hard HDP-HMM (HSJ eq 29, "combinatorial", with erratum H5): every time step gets a
    state; states are clusters, and every distinct successor of a state beyond its first
    costs ``lambda_local``.

    Minimises J_comb of the module docstring by the sweep of OTHER-SYSTEMS 3.2(b): for each
    time step, remove it and its (at most two) transitions, cost(k) = D(y_t, μ_k) +
    λ2·Δ_k (Δ_k the change in Σ max(s_i-1, 0) after adding z_{t-1}→k and k→z_{t+1}, the
    self-edge counted once), new state λ1 + λ2·[s_{z_{t-1}} ≥ 1] + its centre cost (0 for a
    Bregman divergence); then the mean step. Transitions never cross the ``lengths`` bounds.

    Initialisation (``init``; the papers give none, H9): ``"dpmeans"`` (default) runs the hard
    HDP with one group and ``lambda_local = 0`` (DP-means with λ1 = ``lambda_global``,
    ignoring time) to its fixed point and starts the HMM sweeps from its labels; ``"one"``
    starts from one state at the grand mean. The states of the initial phase are not
    reported: ``objective_history_`` holds J_comb after every HMM sweep, never increasing.

    Merges (``merges=True``; not in the papers): after each mean step, while merging two
    states (centres re-optimised) lowers J_comb, the best merge is applied (up to 50 states).
    The time-step sweep can only split states, so without it a DP-means start that
    over-splits stays over-split.

    What eq 29 can see of time: only each state's set of distinct successors. On a chain in
    which every state reaches every other (the page's sticky 3-state demo), that set is the
    same for every labelling near the truth, so the fit is k-means' at its K: with the default
    penalties K = 3 and NMI 0.879, which k-means started from the true means also reaches
    (measured, issue 27); the direct form (:mod:`.hdp_hmm_direct`), which prices every
    transition, reaches 0.99 there.

    Measured on a sticky 3-state sequence (2-D, centres 6 apart, σ = 1, stay 0.95, T = 600,
    5 seeds; K and NMI): λ = (20, 40) or (20, 200): "one" freezes at K = 1 in 5 of 5 (from one
    state a new state pays λ1 + λ2 and every row is within that of the grand mean) while
    "dpmeans" + merges finds K = 3 (NMI 0.97-1.0); λ = (30, 10): "one" K = 3 (0.97-1.0),
    "dpmeans" K = 3-4 (0.90-0.98); λ = (20, 10): both K = 3-5 (0.79-0.98). Hence "dpmeans".

    Parameters
    ----------
    lambda_global, lambda_local, lambda_mean, divergence, max_iter, tol : as :class:`~mapdp_core.HardHDP`
        (``lambda_local`` penalises successors). Defaults (None, :func:`~.hard_common.default_lambdas`):
        for the squared Euclidean distance ``lambda_global = u = σ̂² q`` (σ̂² the noise variance
        per column of a structure-blind MAP-DP fit with K̂ clusters, q the ``1 − 1/N`` quantile
        of χ²_D: the threshold of the DP-means start) and ``lambda_local = (2/π) σ̂² N/K̂`` (a
        split of a state of the mean size into halves does not pay, so the merges undo the
        start's over-splits); for the other divergences B and 2B, B the Bregman information.
    init : {"dpmeans", "one"}, default "dpmeans"
    merges : bool, default True
    random_state : ignored (deterministic; time steps are visited in order).

    Attributes
    ----------
    labels_ (one state per time step), n_clusters_, cluster_sizes_, cluster_centers_,
    objective_, objective_history_, n_iter_, converged_,
    transitions_ : ndarray (K, K) transition counts, n_successors_ : ndarray (K,),
    lengths_ : list of the sequence lengths, lambda_global_, lambda_local_.
    """

    name = "Hard HDP-HMM"
    ui = dict(_UI)

    def __init__(self, lambda_global=None, lambda_local=None, lambda_mean=0.0, divergence="squared_euclidean",
                 max_iter=100, tol=1e-9, init="dpmeans", merges=True, random_state=None):
        self._init_params(locals())

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        s = problem.settings
        Y, w = problem.data
        order = np.arange(problem.n_rows, dtype=np.int64) if order is None else np.asarray(order, dtype=np.int64)
        return _hmm_run(Y, w, s["prv"], s["nxt"], order, s["lam1"], s["lam2"], s["lam3"], s["kind"],
                        s["max_iter"], s["tol"], self._start(problem), self.name, s["merges"])

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        super()._store(problem, state, history)
        self.n_successors_ = (self.transitions_ > 0).sum(axis=1)

    def _transition_costs_of_fit(self) -> np.ndarray:
        return self.lambda_local_ * (self.transitions_ == 0).astype(float)

    def predict(self, X, lengths=None):
        r"""States of new sequences among the K fitted ones, by exact dynamic programming
        (Viterbi): the labels minimise

        .. math:: \sum_t w_t D(y_t, \mu_{z_t}) + \lambda_{local} \sum_{t \ge 2} [z_t \notin S(z_{t-1})]

        where ``S(j)`` is the fitted successor set of state j (``transitions_[j] > 0``): the
        cost of eq 29 relative to the fitted transitions, a transition that the fit already
        holds is free and any other costs ``lambda_local``. Choices (the papers have no
        prediction): no new state is opened (``lambda_global`` plays no part); a new
        transition is charged at every occurrence (the successor sets are not updated along
        the new sequences, which keeps the cost a Markov chain, so the Viterbi minimum is
        exact); a state with no fitted successor (only ever last in its sequences) pays for
        every transition out of it; the first step of each sequence is free. Transitions
        never cross the ``lengths`` bounds; ties go to the lowest state index."""
        return self._predict_states(X, lengths)

