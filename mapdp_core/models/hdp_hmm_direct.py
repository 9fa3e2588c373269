r"""Small-variance-asymptotic ("hard") HDP-HMM, "direct" form: :class:`HardHDPHMMDirect`.

Source: HSJ eq 36 (Huggins, "small-variance asymptotics for the HDP and the HDP-HMM"): the
transition matrix π and the global weights β kept, α → ∞; ``shared/OTHER-SYSTEMS.md``
§3.1(c) and 3.2(c) for the objective, the algorithm (alternating exact π, β, Viterbi and μ
steps) and errata H6, H9. The class docstring gives J_dir; :mod:`.hard_common` describes the
divergences D and the penalties, and :mod:`.hdp_hmm` holds the "combinatorial" form (HSJ
eq 29), whose estimator plumbing (``_HardHMM``: ``lengths``, the start, Viterbi prediction)
this class shares.
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterator

import numpy as np
from scipy.special import rel_entr

from mapdp_core.core.validation import check_int, check_nonneg
from mapdp_core.core.estimator import Control, Problem
from mapdp_core.core.state import SweepState

from .hard_common import (_UI, DEFAULT_GLOBAL_FACTOR, _check_divergence, _check_lambda, _check_lambda_mean, _fit_term,
                          _optimal_means, _prepare, _relabel, _state, bregman_information, divergence)
from .hdp_hmm import _HardHMM
from .sequence_common import _neighbours, _path_cost, _transition_counts, _viterbi

__all__ = ["HardHDPHMMDirect", "hdp_hmm_direct_objective", "default_direct_params"]

#: Default ``zeta`` and ``lambda_local`` of :class:`HardHDPHMMDirect` as multiples of the data's
#: Bregman information B (``lambda_global`` = B); see :func:`default_direct_params`. They stay B
#: multiples (measured in the class docstring; the page's demo: K = 3, NMI 0.99), while the hard
#: HDP and the combinatorial HDP-HMM take theirs from a noise variance (hard_common.default_lambdas).
DEFAULT_ZETA_FACTOR = 0.25
DEFAULT_KL_FACTOR = 1.0


def default_direct_params(X, divergence: str = "squared_euclidean") -> tuple[float, float, float]:
    """The data-driven ``(lambda_global, lambda_local, zeta)`` of :class:`HardHDPHMMDirect`
    used when they are None: ``(B, DEFAULT_KL_FACTOR·B, DEFAULT_ZETA_FACTOR·B)``, B the
    Bregman information of the data (see :func:`~.hard_common.default_lambdas`). See the class for what was
    measured."""
    kind = _check_divergence(divergence)
    Y, w = _prepare(X, kind, "HardHDPHMMDirect")
    B = bregman_information(Y, w, kind)
    B = B if B > 0 else 1.0
    return DEFAULT_GLOBAL_FACTOR * B, DEFAULT_KL_FACTOR * B, DEFAULT_ZETA_FACTOR * B


def _direct_pi(N, beta, zeta, lam2) -> np.ndarray:
    r"""The π step, exact: row i of the result minimises, over the (K+1)-simplex,

    ``f(π_i) = -ζ Σ_j N_ij log π_ij + λ2 KL(β‖π_i) = -Σ_j (ζ N_ij + λ2 β_j) log π_ij + const``

    (N_{i,K+1} = 0: no transition goes to the leftover state). A sum ``-Σ_j a_j log π_j``
    with ``a ≥ 0`` is convex on the simplex and the Lagrange condition ``a_j/π_j = ν`` gives
    its minimiser ``π_j = a_j/Σ a``: ``π_ij = (ζ N_ij + λ2 β_j)/(ζ N_i· + λ2)`` (Σ β = 1). A
    row with ``ζ N_i· + λ2 = 0`` does not enter J; it is set to β. An entry that underflows to
    0 where β_j > 0 and λ2 > 0 (a tiny λ2) is set to the smallest normal float, so the KL
    stays finite (J changes by less than 1e-300)."""
    K = N.shape[0]
    Ne = np.zeros((K, K + 1))
    Ne[:, :K] = N
    num = zeta * Ne + lam2 * beta[None, :]
    den = zeta * Ne.sum(axis=1) + lam2
    pi = np.repeat(beta[None, :], K, axis=0)
    ok = den > 0
    pi[ok] = num[ok] / den[ok, None]
    if lam2 > 0:
        pi[(pi == 0) & (beta[None, :] > 0)] = np.finfo(float).tiny
    return pi


def _direct_beta(pi, beta) -> np.ndarray:
    r"""The β step, exact: the minimiser over the (K+1)-simplex of ``Σ_{i≤K} KL(β‖π_i) =
    K Σ_j β_j log β_j - Σ_j β_j Σ_i log π_ij``. This is strictly convex (K times the negative
    entropy plus a linear term), and the Lagrange condition ``K(log β_j + 1) - Σ_i log π_ij +
    ν = 0`` gives ``β_j ∝ exp((1/K) Σ_i log π_ij) = Π_i π_ij^{1/K}``, the renormalised
    geometric mean of the rows (0 in a column where some π_ij = 0, where any β_j > 0 would
    make a KL infinite). If every column has a zero, β is kept (J is infinite anyway).

    Weights below 1e-250 are set to 0: the leftover column's weight decays geometrically
    along the alternation (see :class:`HardHDPHMMDirect`), and once subnormal, the π step's
    ``λ2 β_j/(ζ N_i· + λ2)`` underflows to 0 while β_j does not, an infinite KL; the change
    in J is below 1e-247."""
    with np.errstate(divide="ignore"):
        L = np.log(pi).mean(axis=0)
    top = L.max()
    if not np.isfinite(top):
        return beta
    b = np.exp(L - top)
    b /= b.sum()
    b[b < 1e-250] = 0.0
    return b / b.sum()


def _fit_pi_beta(N, beta, zeta, lam2, max_inner=500):
    """Alternate the exact π and β steps (block coordinate descent on the jointly convex
    ``-ζ Σ N log π + λ2 Σ_i KL(β‖π_i)``) until β moves by at most 1e-13 or ``max_inner``
    rounds; ends with a π step, so π is optimal for the β returned. With ``lambda_local = 0``
    β does not enter J and is kept."""
    pi = _direct_pi(N, beta, zeta, lam2)
    if lam2 == 0:
        return pi, beta
    for _ in range(max_inner):
        new = _direct_beta(pi, beta)
        done = float(np.abs(new - beta).max()) <= 1e-13
        beta = new
        pi = _direct_pi(N, beta, zeta, lam2)
        if done:
            break
    return pi, beta


def _transition_costs(pi, zeta) -> np.ndarray:
    """A (K, K): the cost ``-ζ log π_jk`` of a transition j -> k between represented states."""
    K = pi.shape[0]
    if zeta == 0:
        return np.zeros((K, K))
    with np.errstate(divide="ignore"):
        return -zeta * np.log(pi[:, :K])


def _direct_J(Y, w, z, M, beta, pi, nxt, zeta, lam1, lam2, lam3, kind) -> float:
    """J_dir (HSJ eq 36) with K = the number of rows of π (a state emptied by the Viterbi step
    still counts until it is dropped)."""
    K = pi.shape[0]
    J = _fit_term(Y, w, z, M, kind) + lam1 * K + lam3 * float((M ** 2).sum())
    if zeta > 0:
        N = _transition_counts(z, nxt, K)
        used = N > 0
        with np.errstate(divide="ignore"):
            J -= zeta * float((N[used] * np.log(pi[:, :K][used])).sum())
    if lam2 > 0:
        J += lam2 * float(rel_entr(beta[None, :], pi).sum())
    return J


def _drop_empty(z, M, beta, pi=None):
    """Remove the states no time step uses. Never increases J_dir: λ1·K falls; an empty
    state's row of π leaves the KL sum (a KL is ≥ 0); its column holds no transition, and
    adding its mass to the leftover column K+1 in β and in every π_i cannot increase a KL
    (log-sum inequality: merging two categories never increases a KL divergence); and its
    ``λ3 ||μ||²`` goes."""
    K = M.shape[0]
    used = np.bincount(z, minlength=K) > 0
    if used.all():
        return z, M, beta, pi
    keep = np.flatnonzero(used)
    beta2 = np.append(beta[keep], beta[K] + beta[:K][~used].sum())
    if pi is not None:
        rows = pi[keep]
        pi = np.column_stack([rows[:, keep], rows[:, K] + rows[:, :K][:, ~used].sum(axis=1)])
    return np.searchsorted(keep, z).astype(np.int64), M[keep], beta2, pi


def _check_step(steps, J, algorithm, what):
    prev = steps[-1]
    if J > prev + 1e-9 * (1.0 + abs(prev)) or (math.isnan(J) and not math.isnan(prev)):
        raise RuntimeError(f"internal error in {algorithm}: the {what} step raised the objective from {prev!r} "
                           f"to {J!r}; please report it.")
    steps.append(J)


class _DirectProblem:
    """The fixed pieces of one direct fit (data, sequence bounds, penalties)."""

    def __init__(self, Y, w, nxt, lengths, lam1, lam2, zeta, lam3, kind):
        self.Y, self.w, self.nxt, self.lengths = Y, w, nxt, lengths
        self.lam1, self.lam2, self.zeta, self.lam3, self.kind = lam1, lam2, zeta, lam3, kind

    def J(self, z, M, beta, pi) -> float:
        return _direct_J(self.Y, self.w, z, M, beta, pi, self.nxt, self.zeta, self.lam1, self.lam2, self.lam3,
                         self.kind)

    def refit(self, z, K, beta, max_inner=500):
        """(M, β, π) optimal for the labels z (μ exactly; β, π by the alternation from β)."""
        M = _optimal_means(self.Y, self.w, z, K, self.lam3)
        pi, beta = _fit_pi_beta(_transition_counts(z, self.nxt, K), beta, self.zeta, self.lam2, max_inner)
        return M, beta, pi


def _direct_merges(P: _DirectProblem, z, M, beta, pi, J, max_states=30):
    """Greedy merges of two states (as :class:`~mapdp_core.HardHDPHMM`'s; not in the papers): while some
    merge of states a < b, with μ, β, π re-optimised (β from the merged β, up to 100 rounds of
    the alternation), lowers J_dir, apply the best one. Skipped above ``max_states`` states."""
    moved = 0
    while 1 < M.shape[0] <= max_states:
        K = M.shape[0]
        best = (J, None)
        for a in range(K):
            for b in range(a + 1, K):
                zz = np.where(z == b, a, z)
                zz = np.where(zz > b, zz - 1, zz)
                bb = np.delete(beta, b)
                bb[a] += beta[b]
                MM, bb, pp = P.refit(zz, K - 1, bb, max_inner=100)
                JJ = P.J(zz, MM, bb, pp)
                if JJ < best[0] - 1e-12 * abs(best[0]):
                    best = (JJ, (zz, MM, bb, pp, int((z == b).sum())))
        if best[1] is None:
            break
        J, (z, M, beta, pi, n) = best[0], best[1]
        moved += n
    return z, M, beta, pi, J, moved


def _direct_propose(P: _DirectProblem, z, M, beta, pi, J, n_proposals):
    """The point-wise new-state proposal (the papers do not say how K grows; ours): the
    ``n_proposals`` time steps with the largest emission cost ``w_t D(y_t, μ_{z_t})`` are each
    tried alone in a new state K+1 (centre at its optimum ``w y/(w + λ3)``, the other centres
    re-optimised, β extended by a column of mass 1/(K+2) before renormalising, then up to 100
    rounds of the π/β alternation; a state the move empties is dropped). The best candidate
    is accepted only if its J_dir is lower than the current J (so J never increases);
    at most one new state per iteration. Returns (z, M, β, π, J, time steps moved)."""
    K = M.shape[0]
    T = len(z)
    cost = P.w * divergence(P.Y, M, P.kind)[np.arange(T), z]
    best = (J, None)
    for t in np.argsort(-cost, kind="stable")[:n_proposals]:
        if not cost[t] > 0:
            break
        zz = z.copy()
        zz[t] = K
        bb = np.concatenate([beta[:K], [1.0 / (K + 2)], beta[K:]])
        bb /= bb.sum()
        MM = np.zeros((K + 1, M.shape[1]))
        zz, MM, bb, _ = _drop_empty(zz, MM, bb)
        MM, bb, pp = P.refit(zz, MM.shape[0], bb, max_inner=100)
        JJ = P.J(zz, MM, bb, pp)
        if JJ < best[0] - 1e-12 * abs(best[0]):
            best = (JJ, (zz, MM, bb, pp))
    if best[1] is None:
        return z, M, beta, pi, J, 0
    return (*best[1], best[0], 1)


def _direct_run(P: _DirectProblem, z0, max_iter, tol, merges, n_proposals,
                algorithm="HardHDPHMMDirect") -> Iterator[SweepState]:
    t0 = time.perf_counter()
    z = _relabel(z0)
    K = int(z.max()) + 1
    M, beta, pi = P.refit(z, K, np.full(K + 1, 1.0 / (K + 1)))
    J_old = P.J(z, M, beta, pi)
    for iteration in range(1, max_iter + 1):
        steps = [J_old]
        # 1. exact Viterbi for the K current states (emission w D(y, μ_k), transition -ζ log π_jk);
        #    the current path is kept unless the optimum is strictly cheaper (no churn on ties)
        E = P.w[:, None] * divergence(P.Y, M, P.kind)
        A = _transition_costs(pi, P.zeta)
        zv, best = _viterbi(E, A, P.lengths)
        current = _path_cost(E, A, z, P.nxt)
        changed = 0
        if best < current - 1e-12 * (1.0 + abs(current)):
            changed = int((zv != z).sum())
            z = zv
        _check_step(steps, P.J(z, M, beta, pi), algorithm, "Viterbi")
        # 2. states the Viterbi step emptied are dropped
        z, M, beta, pi = _drop_empty(z, M, beta, pi)
        _check_step(steps, P.J(z, M, beta, pi), algorithm, "empty-state")
        if merges:
            z, M, beta, pi, J, moved = _direct_merges(P, z, M, beta, pi, steps[-1])
            changed += moved
            _check_step(steps, J, algorithm, "merge")
        if n_proposals:
            z, M, beta, pi, J, moved = _direct_propose(P, z, M, beta, pi, steps[-1], n_proposals)
            changed += moved
            _check_step(steps, J, algorithm, "new-state")
        # 3. the μ step, then the π/β alternation
        M = _optimal_means(P.Y, P.w, z, M.shape[0], P.lam3)
        _check_step(steps, P.J(z, M, beta, pi), algorithm, "mean")
        N = _transition_counts(z, P.nxt, M.shape[0])
        pi, beta = _fit_pi_beta(N, beta, P.zeta, P.lam2)
        J = P.J(z, M, beta, pi)
        _check_step(steps, J, algorithm, "π/β")
        converged = changed == 0 or (J_old - J) <= tol * abs(J_old)
        yield _state(iteration, z, M, J, changed, t0, converged, algorithm, steps, transitions=N,
                     beta=beta.copy(), pi=pi.copy())
        if converged:
            return
        J_old = J


def hdp_hmm_direct_objective(X, labels, beta, pi, lengths=None, *, zeta, lambda_global, lambda_local,
                             lambda_mean=0.0, divergence="squared_euclidean", means=None) -> float:
    r"""J_dir (HSJ eq 36, with μ under the min, H6) of the state sequence ``labels`` (values
    0..K-1, K = ``pi.shape[0]``), ``beta`` (K+1,) and ``pi`` (K, K+1) on the simplex (last
    entry: the leftover mass):

    ``Σ_t w_t D(y_t, μ_{z_t}) - ζ Σ_{t≥2} log π_{z_{t-1} z_t}``
    ``+ λ1 K + λ2 Σ_{i≤K} KL(β‖π_i) + λ3 Σ_i ||μ_i||²``

    (transitions inside each sequence of ``lengths`` only). ``means`` (K, D): the centres;
    None puts each at its optimum ``S_k/(W_k + λ3)`` (0 for a state no step uses)."""
    kind = _check_divergence(divergence)
    Y, w = _prepare(X, kind, "HardHDPHMMDirect")
    _, nxt = _neighbours(lengths, Y.shape[0])
    pi = np.asarray(pi, dtype=float)
    beta = np.asarray(beta, dtype=float)
    if pi.ndim != 2 or pi.shape[1] != pi.shape[0] + 1 or beta.shape != (pi.shape[1],):
        raise ValueError(f"pi must have shape (K, K+1) and beta (K+1,); got {pi.shape} and {beta.shape}.")
    K = pi.shape[0]
    z = np.asarray(labels)
    if (z.shape != (Y.shape[0],) or not np.issubdtype(z.dtype, np.integer) or (z < 0).any()
            or (z >= K).any()):
        raise ValueError(f"labels must be {Y.shape[0]} whole numbers in 0..{K - 1} (rows of pi), one per row.")
    z = z.astype(np.int64)
    lam3 = _check_lambda_mean(lambda_mean, kind)
    if means is None:
        M = np.nan_to_num(_optimal_means(Y, w, z, K, lam3), nan=0.0)
    else:
        M = np.asarray(means, dtype=float)
    return _direct_J(Y, w, z, M, beta, pi, nxt, check_nonneg(zeta, "zeta"),
                     check_nonneg(lambda_global, "lambda_global"), check_nonneg(lambda_local, "lambda_local"),
                     lam3, kind)


class HardHDPHMMDirect(_HardHMM):
    r"""Hard HDP-HMM, "direct" objective (HSJ eq 36, OTHER-SYSTEMS §3.1(c), 3.2(c), H6): the
    transition matrix π and the global weights β are kept instead of integrated out,

    ``J_dir = Σ_t w_t D(y_t, μ_{z_t}) - ζ Σ_{t≥2} log π_{z_{t-1} z_t}``
    ``+ λ1 K + λ2 Σ_{i≤K} KL(β‖π_i) + λ3 Σ ||μ_i||²``

    with β and every π_i on the (K+1)-simplex (the last entry is the leftover mass). HSJ
    writes λ1·K (the combinatorial objectives J_HDP and J_comb use λ1(K-1); a constant). ζ is
    a free weight (HSJ gives no derivation, H6); this is the α → ∞ limit, the opposite of
    eq 29's α → 0 (:class:`~mapdp_core.HardHDPHMM`), so the two do not share fixed points.

    A separate class rather than an option of :class:`~mapdp_core.HardHDPHMM`: it has its own parameter
    (``zeta``), its own fitted quantities (``beta_``, ``pi_``) and its own algorithm, and
    ``lambda_local`` means a different thing (the weight of the KL terms, not a price per
    successor); one class with a switch would carry parameters that mean nothing in one of
    its two modes, and ``HardHDPHMM`` stays exactly as it was.

    Algorithm (the papers give none, H9; coordinate descent, every step exact or accepted
    only if J falls, so J never increases; each state's ``summaries["step_objectives"]``
    records J after every step and a rise beyond 1e-9·(1 + |J|) raises ``RuntimeError``):

    1. z by exact Viterbi over the K current states, emission ``w_t D(y_t, μ_k)``,
       transition ``-ζ log π_jk``, the first step of each sequence free; the current path
       is kept on ties;
    2. states left empty are dropped (their β and π columns join the leftover column; this
       never increases J, see ``_drop_empty``);
    3. (``merges=True``) greedy merges of two states while J falls, as in :class:`~mapdp_core.HardHDPHMM`;
    4. (``n_proposals > 0``) the point-wise new-state proposal: each of the ``n_proposals``
       time steps with the largest emission cost is tried alone in a new state (its own
       centre, its own β column), and the best is accepted only if J falls (at most one new
       state per iteration). Not in the papers (they do not say how K grows);
    5. the μ step ``μ_k = S_k/(W_k + λ3)``;
    6. π and β alternated to convergence: π_ij = (ζ N_ij + λ2 β_j)/(ζ N_i· + λ2) (the exact
       minimiser in π_i of ``-ζ Σ_j N_ij log π_ij + λ2 KL(β‖π_i)``), and β_j ∝ Π_i π_ij^{1/K}
       (the exact minimiser in β of ``Σ_i KL(β‖π_i)`` on the simplex). Erratum to
       OTHER-SYSTEMS 3.2(c) step 1, which prints ``ζ N_i·`` in the numerator: it is the row
       of counts ``ζ N_ij``, entry-wise (the printed form does not sum to 1).

    Stop when an iteration changes no label, lowers J by at most ``tol·|J|``, or after
    ``max_iter``. One iteration costs O(T·K·D + T·K²), plus O(K²·(T + K²)) for the merges.

    Note (measured and derived): with z fixed, the optimum over (β, π) puts no mass on the
    leftover column (no transition goes there, so any mass on it only adds to the KL terms),
    and the alternation drives it towards 0: a new state cannot enter through the leftover
    column, hence the proposal opens a column of its own. K therefore mostly comes from the
    start (``init``) and the merges; a single-step new state pays λ1, about ``ζ log N_{a·}``
    to enter it and a KL row, so the proposal mainly catches outlying time steps.

    Defaults (``None``; B the Bregman information of the data, :func:`~.hard_common.bregman_information`):
    ``lambda_global = B`` (the former default of the other two classes, whose defaults now come
    from a noise variance, :func:`~.hard_common.default_lambdas`), ``lambda_local = B``, ``zeta = B/4``
    (:func:`default_direct_params`). Measured on synthetic sequences only (4 seeds each,
    λ1 = λ2 = B, ζ = c·B for c = 0.1, 0.25, 0.5, 1; K found and NMI):

    * sticky 3 states (2-D, centres 6 apart, σ = 1, stay 0.95, T = 600): K = 3 throughout,
      NMI 1.0, 0.99-1.0, 0.97-1.0, 0.93-0.98;
    * the same with centres 3 apart: K 9-11 (NMI 0.50-0.58), K 3-4 (0.91-0.96), K 3
      (0.92-0.96), K 3 (0.78-0.95);
    * not sticky (stay 1/3, centres 6 apart): K 3 (NMI 0.97-1.0) for c ≤ 0.5, K 1 for c = 1
      (every switch then costs more than the fit it buys);
    * 5 states on a line in 3-D (EJS §6.4's means, covariance 0.9·I, stay 0.96, T = 1000):
      K 4-19 (0.43-0.76), K 3-4 (0.73-0.87), K 3-4 (0.61-0.87), K 2-4 (0.58-0.75);
    * ``lambda_local`` from B/10 to 10 B changed little (c = 0.25: NMI 0.99-1.0 and 0.86-0.96
      on the first two).

    Hence c = 1/4: too small a ζ lets the DP-means start's extra states stay, too large a ζ
    merges states whose switches are frequent. Time (2 shared cores): T = 4000, 3-D, 5
    states (EJS Table 4's sequence): 0.9 s, of which the DP-means start takes about 0.15 s and the
    merges most of the rest.

    Parameters
    ----------
    lambda_global : float >= 0 or None
        HSJ λ1, the price of a state.
    lambda_local : float >= 0 or None
        HSJ λ2, the weight of the KL terms pulling every π_i towards β.
    zeta : float >= 0 or None
        HSJ ζ, the weight of the transition log-probabilities.
    lambda_mean, divergence, max_iter, tol : as :class:`~mapdp_core.HardHDPHMM`.
    init : {"dpmeans", "one"}, default "dpmeans"
        The start, as :class:`~mapdp_core.HardHDPHMM` (DP-means with λ = ``lambda_global``, or one state).
    merges : bool, default True
    n_proposals : int >= 0, default 5
        Time steps tried as a new state per iteration (0: K never grows).
    random_state : ignored (deterministic).

    Attributes
    ----------
    labels_, n_clusters_, cluster_sizes_, cluster_centers_, objective_, objective_history_,
    n_iter_, converged_, transitions_ (K, K) counts, beta_ (K+1,), pi_ (K, K+1),
    lengths_, lambda_global_, lambda_local_, zeta_, divergence_.
    """

    name = "Hard HDP-HMM (direct)"
    _local_factor = DEFAULT_KL_FACTOR
    _default_model = None  # its defaults stay the B multiples of default_direct_params (measured there)
    ui = {**_UI,
          "zeta": Control("ζ (weight of the transition log-probabilities)", "float", None, 0.0, None, short="ζ",
                          help="Empty: B/4, B the default global penalty.")}

    def __init__(self, lambda_global=None, lambda_local=None, zeta=None, lambda_mean=0.0,
                 divergence="squared_euclidean", max_iter=100, tol=1e-9, init="dpmeans", merges=True,
                 n_proposals=5, random_state=None):
        self._init_params(locals())

    def _check_params(self) -> tuple[str, float, dict]:
        kind, lam3, settings = super()._check_params()
        settings["n_proposals"] = check_int(self.n_proposals, "n_proposals", 0)
        return kind, lam3, settings

    def _validate(self, X) -> Problem:
        problem = super()._validate(X)
        s = problem.settings
        zeta = _check_lambda(self.zeta, "zeta", "the weight of the transition log-probabilities")
        if zeta is None:
            B = bregman_information(*problem.data, s["kind"])
            zeta = DEFAULT_ZETA_FACTOR * (B if B > 0 else 1.0)
        s["zeta"] = zeta
        return problem

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        """The states of one run (``order`` is ignored: the Viterbi step labels all time steps at once)."""
        s = problem.settings
        Y, w = problem.data
        P = _DirectProblem(Y, w, s["nxt"], s["lengths"], s["lam1"], s["lam2"], s["zeta"], s["lam3"], s["kind"])
        return _direct_run(P, self._start(problem), s["max_iter"], s["tol"], s["merges"], s["n_proposals"], self.name)

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        super()._store(problem, state, history)
        self.beta_ = state.summaries["beta"]
        self.pi_ = state.summaries["pi"]
        self.zeta_ = problem.settings["zeta"]

    def _transition_costs_of_fit(self) -> np.ndarray:
        return _transition_costs(self.pi_, self.zeta_)

    def predict(self, X, lengths=None):
        """States of new sequences among the K fitted ones by exact Viterbi with the fitted
        centres and transition costs ``-ζ log π_jk`` (the leftover column is not a state: no
        new state is opened); the first step of each sequence is free, ties go to the lowest
        index."""
        return self._predict_states(X, lengths)
