"""SUGS: sequential updating and greedy search, one pass over the rows per visiting order.

Wang & Dunson (2011), "Fast Bayesian inference in Dirichlet process mixture models", JCGS,
as specified in Greaves-Tunnell's report on SUGS and V-SUGS (GT, ``../shared/papers``),
Section 2.1, Algorithm 1, with the errata of OTHER-SYSTEMS.md section 1.4 (E1-E3, E9, E13).

Each row, visited once in a given order, joins the cluster that maximises
``n_h / (alpha + i - 1) * f(y_i | theta_h)`` over the clusters formed by the rows before it,
or opens a new one with weight ``alpha / (alpha + i - 1) * f(y_i | theta0)``; its cluster's
conjugate posterior is then updated and the choice is never revised. In logs this is exactly
MAP-DP's score ``-ln f(x | theta_h) - ln n_h`` with ``N0 = alpha`` (PLOS eq 11; OTHER-SYSTEMS
1.2), computed by the same family kernels, so every likelihood, mixed table and gap that
MAP-DP supports works here too. Compared with MAP-DP, a row sees only the rows before it
and no row is ever moved: one pass costs about one MAP-DP sweep.

Departures from GT, documented:

* Visiting orders are chosen by the exact, order-free joint ``-ln p(X, z | alpha, theta0)``
  (the objective MAP-DP minimises) by default; GT's "pseudo-marginal likelihood" has no
  formula in the papers (E13). The in-sample LPML of sugsvarsel's ``sugscompPml``,
  ``sum_i ln[sum_h pi_h f(y_i | theta_h) + pi_new f(y_i | theta0)]`` with the final
  posteriors, is offered as ``select="lpml"`` and always reported (``lpml_``).
* With a concentration grid (GT 2.4.1), the allocation weights average the prior
  probabilities over the grid's running posterior phi, which is updated by the chosen
  allocation's prior probability (Wang & Dunson's update; E9); the joint is then evaluated at
  the grid value of highest posterior weight (``N0_``).
"""
from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Iterator

import numpy as np
from scipy.special import gammaln, logsumexp

from mapdp_core.kernels import dp_mixture
from mapdp_core.engine.model_data import ModelData
from mapdp_core.core.validation import check_choice, check_int
from mapdp_core.core.estimator import Problem, SweepEstimator, warm_up_hook
from mapdp_core.families import warm_up_example
from .mapdp import MAPDP
from .predicts_as_mapdp import PredictsAsMAPDP
from mapdp_core.core.state import SweepState

__all__ = ["SUGS", "sugs"]

#: frames a pass is cut into when ``block_size`` is None (enough for an animation)
DEFAULT_FRAMES = 20


def check_grid(grid, weights) -> tuple[np.ndarray, np.ndarray]:
    """A concentration grid (values > 0) and its prior weights (>= 0, normalised) as arrays."""
    try:
        values = np.asarray(grid, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"N0_grid must be a list of concentrations > 0, got {grid!r:.80}.") from None
    if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"N0_grid must be a non-empty list of finite concentrations > 0, got {grid!r:.80}.")
    if weights is None:
        w = np.full(values.size, 1.0 / values.size)
    else:
        try:
            w = np.asarray(weights, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ValueError(f"N0_grid_weights must be numbers, got {weights!r:.80}.") from None
        if w.shape != values.shape or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(f"N0_grid_weights must give one weight >= 0 per grid value ({values.size}), "
                             f"not all zero; got {weights!r:.80}.")
        w = w / w.sum()
    return values, w


def in_sample_lpml(model: ModelData, K: int, log_weights: np.ndarray) -> float:
    """sum_i ln[sum_h pi_h f(x_i | theta_h) + pi_new f(x_i | theta0)] with the final statistics
    (sugsvarsel's ``sugscompPml``; OTHER-SYSTEMS 1.2.3): ``log_weights`` holds ln pi_h for the
    K clusters and, last, ln pi_new."""
    nlp, nlp_prior = model.score_rows(model.parsed.X, K)
    terms = np.concatenate([log_weights[None, :K] - nlp, (log_weights[K] - nlp_prior)[:, None]], axis=1)
    return float(logsumexp(terms, axis=1).sum())


def _run(parsed, grid: np.ndarray, grid_weights: np.ndarray, order: np.ndarray, block: int,
         algorithm: str = "SUGS") -> Iterator[SweepState]:
    """One SUGS pass in ``order``, yielding a state after every ``block`` rows (the last one
    complete). Rows not yet visited carry the label -1 in the states before the last."""
    t0 = time.perf_counter()
    model = ModelData(parsed)
    N = model.N
    labels = np.full(N, -1, dtype=np.int64)
    log_alpha = np.log(grid)
    with np.errstate(divide="ignore"):
        log_phi = np.log(grid_weights)
    K, done, score, frame, pconst_seen = 0, 0, 0.0, 0, 0.0
    while done < N:
        first, stop_at = done, min(done + block, N)
        chunk = order[:stop_at]  # the kernel visits chunk[done:]
        while True:
            stop, K, s = dp_mixture.sugs_pass(chunk, done, labels, K, log_alpha, log_phi, model.d_new,
                                            model.cnt, model.logcnt, model.fams)
            score += s
            pconst_seen += float(model.pconst[chunk[done:stop]].sum())
            done = stop
            if stop == stop_at:
                break
            model.grow(K)
        frame += 1
        alpha = float(grid[int(np.argmax(log_phi))])
        yield SweepState(
            iteration=frame, labels=labels, n_clusters=K,
            objective=score + pconst_seen,  # -ln p(x_seen, z_seen), sequentially (marginal over a grid)
            neg_log_joint=model.neg_log_joint(K, alpha, done, pconst_seen, labels=labels),
            n_changed=done - first, cluster_sizes=model.cnt[:K].astype(np.int64), summaries=model.summaries(K),
            elapsed=time.perf_counter() - t0, converged=done == N, algorithm=algorithm,
        )


def grid_posterior(grid: np.ndarray, grid_weights: np.ndarray, sizes) -> np.ndarray:
    """phi after a pass: the grid's prior weights times the probability of the chosen
    allocations, normalised. Wang & Dunson's running update multiplies phi_l by each chosen
    allocation's CRP probability in turn; their product over the pass is the EPPF
    alpha^K prod_h Gamma(n_h) Gamma(alpha)/Gamma(alpha + N), so phi does not depend on the
    visiting order and equals the kernel's running phi."""
    sizes = np.asarray(sizes, dtype=float)
    N, K = sizes.sum(), len(sizes)
    with np.errstate(divide="ignore"):
        log_post = np.log(grid_weights) + K * np.log(grid) + gammaln(grid) - gammaln(grid + N)
    return np.exp(log_post - logsumexp(log_post))


def pass_weights(grid: np.ndarray, phi: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """ln pi_h (h < K) and, last, ln pi_new after the pass: pi_h = sum_l phi_l n_h / (alpha_l + N)
    and pi_new = sum_l phi_l alpha_l / (alpha_l + N), the predictive weights of a further row
    (GT eq 1 with erratum E1's normaliser; sugsvarsel's ``sugscompPml``)."""
    sizes = np.asarray(sizes, dtype=float)
    N = sizes.sum()
    a = float(np.sum(phi / (grid + N)))
    b = float(np.sum(phi * grid / (grid + N)))
    return np.log(np.concatenate([sizes * a, [b]]))


def sugs(X, N0: float = 1.0, likelihood="normal_wishart", prior=None, *, order=None, block_size=None):
    """One SUGS pass in ``order`` (input order by default), one :class:`SweepState` per block of
    rows; the generator of :meth:`SUGS.iter_sweeps` (validated before it returns)."""
    model = SUGS(N0=N0, likelihood=likelihood, prior=prior, n_init=1, shuffle=False, block_size=block_size)
    return model.iter_sweeps(X, order=order)


class SUGS(PredictsAsMAPDP, SweepEstimator):
    """SUGS: one greedy pass per visiting order, the best order kept (Wang & Dunson 2011; GT §2.1).

    Each row joins, once and for good, the cluster with the best MAP-DP score among those the
    earlier rows formed, or opens a new one (see the module docstring). ``n_init`` visiting
    orders are tried and the one with the lowest exact joint -ln p(X, z | N0, theta0) is kept.

    Parameters
    ----------
    N0 : float > 0 or "auto", default=1.0
        The concentration alpha (MAP-DP's N0). "auto" chooses it, like ``prior="auto"``, by
        MAP-DP's evidence search (:func:`mapdp_core.selection.auto.choose_hyperparameters`).
    likelihood : "auto", str, list or dict, default="auto"
        As :class:`~mapdp_core.MAPDP`: one family per column or Gaussian blocks; gaps allowed.
    prior : "auto", None or dict, default=None
        As :class:`~mapdp_core.MAPDP`; None takes each family's empirical-Bayes defaults.
    %(n_init)s
        Visiting orders tried (GT ran 50 per run).
    %(shuffle)s
        False: the first order is the input order (the others, if any, random).
    N0_grid, N0_grid_weights : sequences, optional
        A grid of concentrations and their prior weights (uniform by default); replaces ``N0``
        (GT §2.4.1). Its posterior after the pass is ``N0_posterior_``.
    select : {"joint", "lpml"}, default="joint"
        How the best order is chosen: the lowest exact joint, or the highest in-sample LPML.
    block_size : int, optional
        Rows per yielded state (for an animation of the pass); default N / 20.
    %(random_state)s
    %(n_jobs)s

    Attributes
    ----------
    labels_, n_clusters_, cluster_sizes_ : the kept pass's partition.
    neg_log_joint_ : float
        -ln p(X, z | N0_, theta0).
    lpml_ : float
        In-sample log pseudo-marginal likelihood of the kept pass.
    N0_ : float
        N0, or the grid value with the highest posterior weight.
    N0_posterior_ : ndarray or None
        The grid's posterior weights (None without a grid).
    %(restart_values_)s
        Here every order's joint, or its -LPML with ``select="lpml"``.
    prior_, likelihood_, dropped_columns_ : as :class:`~mapdp_core.MAPDP`.
    """

    name = "SUGS"
    precompile = False  # opt-in: its first run compiles its kernel (see estimator.py)
    step = "block of rows"

    def __init__(self, N0=1.0, likelihood="auto", prior=None, n_init=10, shuffle=True, N0_grid=None,
                 N0_grid_weights=None, select="joint", block_size=None, random_state=None, n_jobs=None):
        self._init_params(locals())

    @property
    def restart_key(self) -> str:
        # under select="lpml" the last state's objective is -LPML (see _sweeps)
        return "objective" if self.select == "lpml" else "neg_log_joint"

    def _plan(self, n_rows: int):
        return self._plan_first_as_given(n_rows)

    warm_up = warm_up_hook({"N0": 1.0, "n_init": 1, "shuffle": False}, data=warm_up_example)

    def _validate(self, X) -> Problem:
        check_choice(self.select, "select", ("joint", "lpml"))
        if self.block_size is not None:
            check_int(self.block_size, "block_size", 1)
        problem = MAPDP(N0=self.N0, likelihood=self.likelihood, prior=self.prior, max_iter=1,
                        random_state=self.random_state)._validate(X)
        if self.N0_grid is not None:
            grid, weights = check_grid(self.N0_grid, self.N0_grid_weights)
        else:
            grid, weights = np.array([problem.settings["N0"]]), np.ones(1)
        return Problem(problem.data, problem.n_rows, {**problem.settings, "grid": grid, "grid_weights": weights})

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        N = problem.n_rows
        order = np.arange(N, dtype=np.int64) if order is None else order
        s = problem.settings
        block = int(self.block_size) if self.block_size is not None else max(1, math.ceil(N / DEFAULT_FRAMES))
        states = _run(problem.data, s["grid"], s["grid_weights"], order, block, self.name)
        if self.select != "lpml":
            return states
        return (replace(st, objective=-self._lpml(problem, st)) if st.converged else st for st in states)

    def _lpml(self, problem: Problem, state: SweepState) -> float:
        s = problem.settings
        phi = grid_posterior(s["grid"], s["grid_weights"], state.cluster_sizes)
        model = ModelData(problem.data)
        model.start(np.array(state.labels))
        return in_sample_lpml(model, state.n_clusters, pass_weights(s["grid"], phi, state.cluster_sizes))

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        s = problem.settings
        if self.N0_grid is not None:
            self.N0_posterior_ = grid_posterior(s["grid"], s["grid_weights"], state.cluster_sizes)
            self.N0_ = float(s["grid"][int(np.argmax(self.N0_posterior_))])
        else:
            self.N0_posterior_ = None
            self.N0_ = float(s["N0"])
        self.neg_log_joint_ = state.neg_log_joint
        self.cluster_summaries_ = state.summaries
        # under select="lpml" the kept state's objective is -LPML already (see _sweeps)
        self.lpml_ = -state.objective if self.select == "lpml" else self._lpml(problem, state)
        self._hold_as_mapdp(problem, history, self.N0_)  # prediction, priors, the choices record
