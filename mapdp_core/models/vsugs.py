"""V-SUGS: variational sequential updating and greedy search, one pass per visiting order.

Zhang, Nott, Yau & Jasra (2014) as written in Greaves-Tunnell's report (GT §2.3, Algorithm 2,
eqs 4-11), with the errata of OTHER-SYSTEMS.md 1.4 fixed: the prior weights of eq 5 (E4),
the sign of the KL term of the ELBO (E5) and a/b in its expected log-likelihood (E6).

A truncated DP mixture with T components, each with a conjugate posterior that starts at the
prior. Each row, visited once, gets soft responsibilities (eq 4)

    r_l  proportional to  q_il f_l(y_i),    q_il = (s_l + alpha/T)/(alpha + i - 1)  (l <= A),
                                             q_i,A+1 = alpha (1 - A/T)/(alpha + i - 1)  (A < T),

over the A = min(i - 1, T) active components and, while A < T, the next one; s_l is the
soft count so far and f_l the Student-t predictive. Every component with r_l > 0 is then
updated with weight r_l (eqs 8-11). The cost of a pass is O(N T), whatever alpha is (GT
Table 1), where SUGS's grows with the number of clusters alpha opens.

The objective is the ELBO, a sum of per-row terms (GT L238-248, corrected):
L_i = -sum_l KL(q_i(theta_l) || q_(i-1)(theta_l)) + sum_l r_l E_l - sum_l r_l ln r_l + sum_l r_l ln q_il,
and the visiting order with the largest ELBO is kept.

Components: a Normal-Gamma per column (the report's model; ``likelihood="normal_gamma"``) or
one Normal-Wishart over all columns (``"normal_wishart"``: the derived update of E11), with
the engine's empirical-Bayes priors by default, so that the same prior means the same model
as MAP-DP's ``normal_gamma`` / ``normal_wishart`` families.

Hard labels and K (E12, unspecified in GT; our rule): each row's label is the component of
largest responsibility when it was visited (what a one-pass method knows of it); clusters
are the components that are some row's label, numbered by first activation, and K counts
them. ``neg_log_joint`` of the final state is MAP-DP's exact -ln p(X, z | alpha, theta0) of
that hard partition under the same prior, so V-SUGS can be compared with MAP-DP and SUGS.
The report's concentration grid for V-SUGS (GT §2.4.1) is not offered here.
"""
from __future__ import annotations

import math
import time
from typing import Iterator

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from mapdp_core.kernels import vsugs as _vk
from mapdp_core.engine.model_data import ModelData
from mapdp_core.core.validation import as_data, check_choice, check_int, check_numeric_frame, check_real
from mapdp_core.core.estimator import Control, Problem, SweepEstimator, warm_up_hook
from mapdp_core.core.spec import parse, to_matrix
from mapdp_core.core.state import SweepState

__all__ = ["VSUGS"]

FAMILIES = ("normal_gamma", "normal_wishart")
DEFAULT_FRAMES = 20


def _complete_data(X, name: str, estimator, reset: bool) -> np.ndarray:
    """``X`` as the float array V-SUGS works on (:func:`~mapdp_core.core.validation.as_data`),
    refused first in plain words where it holds what V-SUGS cannot use: arrays as MAP-DP
    refuses them (ragged, complex, text, 1-D; :func:`~mapdp_core.core.spec.to_matrix`), frames'
    date or text columns by name, and any missing (NaN, None, pd.NA) or infinite cell, by row
    and column: the truncated mixture has no way to leave a value out of a row's likelihood
    (GT's eqs 4-11 need every coordinate), where MAP-DP and SUGS marginalise gaps."""
    if isinstance(X, pd.Series):
        X = X.to_frame()
    if isinstance(X, pd.DataFrame):
        data = check_numeric_frame(X, name)
        names = [str(c) for c in data.columns]
        try:
            values = data.to_numpy(dtype=float, na_value=np.nan)
        except (TypeError, ValueError):  # left to as_data's messages
            values = np.zeros((0, 0))
    else:
        try:
            values, names, _ = to_matrix(X)
        except ValueError as exc:
            if str(exc).startswith("Complex"):
                raise ValueError(f"Complex data not supported: {name} needs real numbers.") from None
            raise
        data = values
    bad = ~np.isfinite(values)
    if bad.any():
        row, col = (int(v) for v in np.argwhere(bad)[0])
        missing = int(np.isnan(values).sum())
        infinite = int(bad.sum()) - missing
        what = " and ".join(part for part in (f"{missing} missing value(s) (NaN, None or NA)" if missing else "",
                                              f"{infinite} infinite value(s)" if infinite else "") if part)
        raise ValueError(
            f"{name} needs a finite number in every cell, but X holds {what}, the first in row {row}, column "
            f"{names[col]!r}; drop or impute those rows, or use SUGS or MAP-DP, which leave missing values out of "
            "a row's likelihood.")
    return as_data(data, name, estimator, reset=reset)


class _Components:
    """The T components' posterior parameters (slots beyond N never activate, so min(T, N) are kept)."""

    def __init__(self, family: str, prior: dict, T: int, N: int, D: int):
        self.family = family
        n = min(T, N)
        self.s = np.zeros(n)
        if family == "normal_gamma":
            self.params = tuple(np.tile(np.asarray(prior[k], dtype=float).reshape(1, D), (n, 1))
                                for k in ("m0", "c0", "a0", "b0"))
        else:
            B0 = np.asarray(prior["B0"], dtype=float)
            self.params = (np.tile(np.asarray(prior["m0"], dtype=float), (n, 1)), np.full(n, float(prior["c0"])),
                           np.tile(B0, (n, 1, 1)), np.full(n, np.linalg.slogdet(B0)[1]),
                           np.full(n, float(prior["a0"])))
        self.scratch = (np.empty(D), np.empty((D, D)))

    @property
    def means(self) -> np.ndarray:
        return self.params[0]

    def log_predictive(self, Y: np.ndarray) -> np.ndarray:
        """(rows, components) ln f_l(y) with the current parameters."""
        out = np.empty((len(Y), len(self.s)))
        for l in range(len(self.s)):
            for i, y in enumerate(Y):
                if self.family == "normal_gamma":
                    m, c, a, b = (p[l] for p in self.params)
                    out[i, l] = sum(_vk.ng_log_predictive(y[d], m[d], c[d], a[d], b[d]) for d in range(len(y)))
                else:
                    m, c, B, ld, a = (p[l] for p in self.params)
                    out[i, l] = _vk.nw_log_predictive(y, m, c, B, ld, a)
        return out


def _run(X: np.ndarray, family: str, prior: dict, parsed, alpha: float, T: int, order: np.ndarray, block: int,
         hard: bool, name: str) -> Iterator[SweepState]:
    t0 = time.perf_counter()
    N, D = X.shape
    comp = _Components(family, prior, T, N, D)
    n_slots = len(comp.s)
    labels = np.full(N, -1, dtype=np.int64)
    resp = np.zeros((N, n_slots))
    logq, logw = np.empty(n_slots), np.empty(n_slots)
    elbo, done, frame = 0.0, 0, 0
    while done < N:
        stop = min(done + block, N)
        if family == "normal_gamma":
            m, c, a, b = comp.params
            m0, c0, a0, b0 = (np.asarray(prior[k], dtype=float).reshape(D) for k in ("m0", "c0", "a0", "b0"))
            elbo += _vk.ng_pass(X, order, done, stop, alpha, T, m, c, a, b, comp.s, m0, c0, a0, b0, hard, labels,
                                resp, logq, logw)
        else:
            m, c, B, ld, a = comp.params
            elbo += _vk.nw_pass(X, order, done, stop, alpha, T, m, c, B, ld, a, comp.s, hard, labels, resp, logq,
                                logw, *comp.scratch)
        first, done, frame = done, stop, frame + 1
        seen = labels >= 0
        used = np.unique(labels[seen])  # components in order of activation
        remap = np.full(n_slots, -1, dtype=np.int64)
        remap[used] = np.arange(len(used))
        hard_labels = np.where(seen, remap[np.maximum(labels, 0)], -1)
        K = len(used)
        complete = done == N
        joint = math.nan
        if complete:
            model = ModelData(parsed)
            model.start(hard_labels.copy())
            joint = model.neg_log_joint(K, alpha)
        yield SweepState(
            iteration=frame, labels=hard_labels, n_clusters=K, objective=-elbo, neg_log_joint=joint,
            n_changed=done - first, cluster_sizes=np.bincount(hard_labels[seen], minlength=K),
            summaries={"mean": comp.means[used].copy(), "covariance": {}, "proportions": {},
                       "vsugs": {"soft_counts": comp.s.copy(), "components": used.copy(), "elbo": elbo,
                                 "params": tuple(p.copy() for p in comp.params) if complete else None}},
            elapsed=time.perf_counter() - t0, converged=complete, algorithm=name,
        )


class VSUGS(SweepEstimator):
    """Variational SUGS (GT §2.3): one soft pass per visiting order, truncation T, the best ELBO kept.

    Parameters
    ----------
    N0 : float > 0, default=1.0
        The concentration alpha.
    T : int, default=20
        Truncation: the most components (GT used 10, 50 and 100). The cost of a pass is linear in T.
    likelihood : {"normal_gamma", "normal_wishart"}, default="normal_gamma"
        A Normal-Gamma per column (the report's model) or one Normal-Wishart over all columns.
    prior : dict, optional
        The family's hyperparameters as in :class:`~mapdp_core.MAPDP` (``m0, c0, a0, b0`` or
        ``m0, c0, B0, a0``); missing ones take the empirical-Bayes defaults.
    %(n_init)s
        Visiting orders tried.
    %(shuffle)s
        False: the first order is the input order (the others, if any, random).
    assignment : {"soft", "hard"}, default="soft"
        "hard" makes each row's responsibilities one-hot at their argmax (with T >= N this is
        SUGS with prior counts n_l + alpha/T: a check of the implementation).
    block_size : int, optional
        Rows per yielded state (for an animation); default N / 20.
    %(random_state)s
    %(n_jobs)s

    Attributes
    ----------
    labels_, n_clusters_, cluster_sizes_ : the hard partition (module docstring).
    elbo_ : float
        The ELBO of the kept pass (``objective_history_`` holds minus the running ELBO).
    neg_log_joint_ : float
        MAP-DP's exact -ln p(X, z | N0, theta0) of the hard partition.
    soft_counts_ : ndarray of shape (min(T, N),)
        Each component's soft count s_l after the pass.
    cluster_centers_ : ndarray (n_clusters_, n_features)
        The posterior means m of the clusters' components.
    """

    name = "V-SUGS"
    precompile = False  # opt-in: its first run compiles its kernel (see estimator.py)
    input = "numeric"
    restart_key = "objective"  # minus the ELBO
    step = "block of rows"
    ui = {"T": Control("V-SUGS truncation T (components)", "int", 20, 2, 200, short="T",
                       help="The most components V-SUGS keeps; a pass costs O(N T)."),
          "N0": Control("V-SUGS concentration α", "float", 1.0, 1e-2, 1e3, log=True, short="α",
                        help="The DP concentration of the truncated mixture.")}

    def __init__(self, N0=1.0, T=20, likelihood="normal_gamma", prior=None, n_init=10, shuffle=True,
                 assignment="soft", block_size=None, random_state=None, n_jobs=None):
        self._init_params(locals())

    def _plan(self, n_rows: int):
        return self._plan_first_as_given(n_rows)

    warm_up = warm_up_hook(*({"T": 3, "likelihood": family, "n_init": 1, "shuffle": False} for family in FAMILIES))

    def _validate(self, X) -> Problem:
        alpha = check_real(self.N0, "N0 (the concentration)", positive=True)
        T = check_int(self.T, "T", 1)
        check_choice(self.likelihood, "likelihood", FAMILIES)
        check_choice(self.assignment, "assignment", ("soft", "hard"))
        if self.block_size is not None:
            check_int(self.block_size, "block_size", 1)
        if self.prior is not None and not isinstance(self.prior, dict):
            raise TypeError(f"prior must be None or a dict of {self.likelihood} hyperparameters, got {self.prior!r:.80}.")
        X = _complete_data(X, self.name, self, reset=True)
        parsed = parse(X, self.likelihood, self.prior)
        return Problem(X, X.shape[0], {"alpha": alpha, "T": T, "parsed": parsed, "prior": parsed.blocks[0].prior})

    def _sweeps(self, problem: Problem, order, rng) -> Iterator[SweepState]:
        s = problem.settings
        N = problem.n_rows
        order = np.arange(N, dtype=np.int64) if order is None else order
        block = int(self.block_size) if self.block_size is not None else max(1, math.ceil(N / DEFAULT_FRAMES))
        return _run(problem.data, self.likelihood, s["prior"], s["parsed"], s["alpha"], s["T"], order, block,
                    self.assignment == "hard", self.name)

    def _store(self, problem: Problem, state: SweepState, history) -> None:
        info = state.summaries["vsugs"]
        self.elbo_ = float(info["elbo"])
        self.neg_log_joint_ = state.neg_log_joint
        self.soft_counts_ = info["soft_counts"]
        self.cluster_centers_ = state.summaries["mean"]
        self.n_features_in_ = problem.data.shape[1]
        self.prior_ = problem.settings["prior"]
        self.N0_ = problem.settings["alpha"]
        comp = _Components(self.likelihood, self.prior_, int(problem.settings["T"]), problem.n_rows,
                           problem.data.shape[1])
        comp.params = info["params"]
        comp.s = info["soft_counts"]
        self._components = comp
        self._component_cluster = np.full(len(comp.s), -1, dtype=np.int64)
        self._component_cluster[info["components"]] = np.arange(len(info["components"]))

    def predict(self, X):
        """The cluster of the component of largest weight for each new row: ln q_l + ln f_l(x)
        with the weights a further row would get (eq 5 after N rows); -1 where that component
        holds no row (a new cluster)."""
        check_is_fitted(self, "labels_")
        X = _complete_data(X, self.name, self, reset=False)
        comp = self._components
        N, T, alpha = len(self.labels_), int(self.T), float(self.N0_)
        logq = np.empty(len(comp.s))
        n = _vk._prior_weights(N, T, alpha, comp.s, logq)
        logw = comp.log_predictive(X)[:, :n] + logq[None, :n]
        return self._component_cluster[np.argmax(logw, axis=1)]
