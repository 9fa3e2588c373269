"""Priors on N0 and the prior's scale: what the automatic search and the sliders are built on
(PLOS Appendix G).

Raykov, Boukouvalas, Baig & Little (2016), "What to do when K-means clustering fails",
PLOS ONE 11(9): e0162259, Appendix G lists four ways to set the hyperparameters
(theta0, N0) of MAP-DP. This module holds the ones that need no fitting, and the prior's
scale that every fit uses:

* from an expected number of clusters: under the Chinese restaurant process
  E[K] = sum_{i=0}^{N-1} N0/(N0 + i) (:func:`expected_clusters`), inverted by
  :func:`n0_for_expected_clusters` (the paper quotes the approximation N0 ln N);
* approach 3, the MAP estimate under a Gamma(a, b) prior on N0 (eq 35), found by
  Newton's method on u = ln N0, where the objective is concave (Rasmussen 2000,
  "The infinite Gaussian mixture model", NIPS 12): :func:`map_n0`;
* a multiplier on the within-cluster spread of the Gaussian families and on the other
  families' prior weight: :func:`scaled_prior`.

Approaches 2 and 4, which refit the model (a grid of N0 compared by the exact joint, and
cross-validation), are :mod:`mapdp_core.evaluation.model_selection`.
"""
from __future__ import annotations

from dataclasses import replace

import math
import numbers
from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq
from scipy.special import digamma, polygamma

from mapdp_core.core.spec import ParsedData, _groups, parse
from mapdp_core.core.validation import check_int, check_real
from mapdp_core.families import FAMILIES, GAUSSIAN_FAMILIES

__all__ = [
    "SCALED_FAMILIES",
    "MapN0",
    "expected_clusters",
    "map_n0",
    "n0_for_expected_clusters",
    "scaled_prior",
]

#: Gaussian families whose within-cluster spread :func:`scaled_prior` multiplies by s.
SCALED_FAMILIES = GAUSSIAN_FAMILIES

# direct summation of the CRP sums up to this N (exact to rounding); digamma beyond
_DIRECT_MAX_N = 1_000_000
_CHUNK = 4_000_000  # elements per broadcasting chunk


# ----------------------------------------------------------------------------- E[K]

def _check_N(N) -> int:
    # 1e6 is a natural way to write a number of points, so whole floats pass
    return check_int(N, "N (the number of data points)", 0, whole_floats=True)


def _crp_sums(n0: np.ndarray, N: int) -> tuple[np.ndarray, np.ndarray]:
    """S1 = sum_{i<N} n0/(n0+i) (= E[K]) and S2 = sum_{i<N} n0 i/(n0+i)^2, elementwise.

    By direct summation (in chunks) for N <= 1e6, otherwise through the identities
    S1 = n0 (psi(n0+N) - psi(n0)) and S2 = S1 - n0^2 (psi'(n0) - psi'(n0+N)).
    """
    n0 = np.asarray(n0, dtype=float).reshape(-1)
    if N == 0:
        return np.zeros_like(n0), np.zeros_like(n0)
    if N > _DIRECT_MAX_N:
        s1 = n0 * (digamma(n0 + N) - digamma(n0))
        s2 = s1 - n0 ** 2 * (polygamma(1, n0) - polygamma(1, n0 + N))
        return s1, s2
    i = np.arange(N, dtype=float)
    s1, s2 = np.empty_like(n0), np.empty_like(n0)
    step = max(1, _CHUNK // N)
    for start in range(0, n0.size, step):
        a = n0[start:start + step, None]
        frac = a / (a + i[None, :])
        s1[start:start + step] = frac.sum(axis=1)
        s2[start:start + step] = (frac * (i[None, :] / (a + i[None, :]))).sum(axis=1)
    return s1, s2


def expected_clusters(N0, N):
    """Expected number of clusters of N points under the Chinese restaurant process.

    E[K] = sum_{i=0}^{N-1} N0 / (N0 + i) (PLOS Appendix G; approximately N0 ln(1 + N/N0),
    the paper's N0 ln N for N >> N0).

    Parameters
    ----------
    N0 : float or array-like of float > 0
        Concentration(s); vectorised over this argument.
    N : int >= 0
        Number of data points.

    Returns
    -------
    float or ndarray
        E[K], of the shape of ``N0``. Exact: the sum is taken directly (numpy's pairwise
        summation) for N <= 10^6, and through N0 (psi(N0 + N) - psi(N0)) beyond.
    """
    N = _check_N(N)
    a = np.asarray(N0, dtype=float)
    if a.size and (not np.all(np.isfinite(a)) or np.any(a <= 0)):
        raise ValueError("N0 must be finite and > 0.")
    s1, _ = _crp_sums(a, N)
    return float(s1[0]) if a.ndim == 0 else s1.reshape(a.shape)


def _invert_one(K: float, N: int) -> float:
    if not math.isfinite(K):
        raise ValueError(f"the expected number of clusters must be finite, got {K!r}.")
    if K < 1 or K > N:
        raise ValueError(f"the expected number of clusters must lie between 1 and N = {N}, got {K!r}.")
    if K == 1:
        raise ValueError("E[K] = 1 is reached only in the limit N0 -> 0 (every point in one cluster); "
                         "ask for K > 1.")
    if K == N:
        raise ValueError(f"E[K] = N = {N} is reached only in the limit N0 -> infinity (every point alone); "
                         "ask for K < N.")
    # E(N0) <= 1 + N0 H_{N-1} and E(N0) >= N N0/(N0 + N - 1) bracket the root
    harmonic = float(digamma(N) + np.euler_gamma)
    lo = 0.5 * (K - 1.0) / harmonic
    hi = 2.0 * K * (N - 1.0) / (N - K)
    u = brentq(lambda v: expected_clusters(math.exp(v), N) - K, math.log(lo), math.log(hi),
               xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)
    return math.exp(u)


def n0_for_expected_clusters(K, N):
    """The N0 at which the CRP's expected number of clusters equals K (PLOS Appendix G).

    Inverts :func:`expected_clusters`, which increases strictly from 1 (N0 -> 0) to
    N (N0 -> infinity), by Brent's method on ln N0 inside the bracket
    [(K - 1)/(2 H_{N-1}), 2 K (N - 1)/(N - K)], which always contains the root.

    Parameters
    ----------
    K : float or array-like of float, 1 < K < N
        Expected number(s) of clusters; need not be whole.
    N : int
        Number of data points.

    Returns
    -------
    float or ndarray of the shape of ``K``

    Raises
    ------
    ValueError
        If K < 1 or K > N (impossible), or K equals 1 or N (reached only in the limits
        N0 -> 0 and N0 -> infinity).
    """
    N = _check_N(N)
    k = np.asarray(K, dtype=float)
    out = np.array([_invert_one(float(v), N) for v in k.reshape(-1)])
    return float(out[0]) if k.ndim == 0 else out.reshape(k.shape)


# ----------------------------------------------------------------------------- MAP N0

class MapN0(NamedTuple):
    """Result of :func:`map_n0`: the posterior mode of N0 and the Newton iterations used."""
    N0: float
    n_iter: int


def map_n0(N, K, a: float = 1.0, b: float = 1.0, *, tol: float = 1e-12, max_iter: int = 100) -> MapN0:
    """MAP estimate of N0 given N points in K clusters, under a Gamma(a, b) prior (PLOS
    Appendix G, approach 3, eq 35).

    Maximises g(N0) = ln G(N0) - ln G(N0 + N) + (K + a - 1) ln N0 - b N0 by Newton's method
    on u = ln N0, where g is concave (Rasmussen 2000): with S1 = sum_{i<N} N0/(N0 + i) (the
    CRP's E[K]) and S2 = sum_{i<N} N0 i/(N0 + i)^2,

        dg/du = K + a - 1 - S1 - b N0,    d2g/du2 = -S2 - b N0 < 0.

    So the mode solves E[K](N0) + b N0 = K + a - 1 (with a = 1, b = 0 it is the N0 whose
    expected K is the observed K). Newton steps are safeguarded by bisection inside a
    bracket on which dg/du changes sign.

    Parameters
    ----------
    N : int >= 1
        Number of data points.
    K : float, 1 <= K <= N
        Number of clusters (for example a fitted ``n_clusters_``).
    a : float > 0, default 1.0
        Shape of the Gamma prior on N0.
    b : float >= 0, default 1.0
        Rate of the Gamma prior on N0 (0: an improper flat-in-N0 prior).
    tol : float
        Stop when the Newton step in ln N0 is below ``tol``.
    max_iter : int
        Maximum number of Newton iterations.

    Returns
    -------
    MapN0
        ``(N0, n_iter)``: the mode and the number of Newton iterations.

    Raises
    ------
    ValueError
        For invalid arguments, or when the posterior has no mode at a finite N0 > 0:
        K + a <= 2 (the density keeps rising as N0 -> 0) or b = 0 with K + a - 1 >= N.
    """
    N = _check_N(N)
    if N < 1:
        raise ValueError("N must be >= 1.")
    for name, v in (("K", K), ("a", a), ("b", b)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}.")
    K, a, b = float(K), float(a), float(b)
    if K < 1 or K > N:
        raise ValueError(f"K must lie between 1 and N = {N}, got {K!r}.")
    if a <= 0:
        raise ValueError(f"a (the Gamma prior's shape) must be > 0, got {a!r}.")
    if b < 0:
        raise ValueError(f"b (the Gamma prior's rate) must be >= 0, got {b!r}.")
    c = K + a - 1.0
    if c - 1.0 <= 0:
        raise ValueError(f"no mode at N0 > 0: with K + a = {K + a:g} <= 2 the posterior of N0 increases "
                         "all the way to N0 -> 0; use a prior shape a > 2 - K.")
    if b == 0 and c >= N:
        raise ValueError(f"no mode at a finite N0: with b = 0 and K + a - 1 = {c:g} >= N = {N} the posterior "
                         "increases without bound; use a rate b > 0.")

    def derivs(u: float) -> tuple[float, float]:
        n0 = math.exp(u)
        s1, s2 = _crp_sums(np.array([n0]), N)
        return c - float(s1[0]) - b * n0, -float(s2[0]) - b * n0

    # start near the solution of E[K] ~ N0 ln(1 + N/N0) = c - 1, then bracket the root
    u = math.log(max((c - 1.0) / math.log1p(N), 1e-8))
    g1, _ = derivs(u)
    lo = hi = None
    step = 1.0
    if g1 > 0:
        lo = u
        while hi is None:
            v = u + step
            if derivs(v)[0] > 0:
                lo = v
            else:
                hi = v
            step *= 2.0
    else:
        hi = u
        while lo is None:
            v = u - step
            if derivs(v)[0] > 0:
                lo = v
            else:
                hi = v
            step *= 2.0
    u = lo if abs(derivs(lo)[0]) < abs(derivs(hi)[0]) else hi
    for it in range(1, max_iter + 1):
        g1, g2 = derivs(u)
        if g1 == 0.0:
            return MapN0(math.exp(u), it)
        if g1 > 0:
            lo = u
        else:
            hi = u
        step = -g1 / g2
        if abs(step) < tol:
            return MapN0(math.exp(u + step), it)
        new = u + step
        if not (lo < new < hi):  # safeguard: bisect the bracket
            new = 0.5 * (lo + hi)
        u = new
    raise RuntimeError(f"map_n0 did not converge in {max_iter} iterations (N={N}, K={K}, a={a}, b={b}).")


# ----------------------------------------------------------------------------- prior scale

def _check_scale(value, name: str = "the prior scale s") -> float:
    return check_real(value, name, positive=True)


def _scaled_block_prior(family: str, prior: dict, s: float, weight: float = 1.0) -> dict:
    """A copy of one block's resolved hyperparameters with the within-cluster spread times s
    (Gaussian families) or the prior's weight times ``weight`` (the others), holding only the
    keys that the family's ``prior=`` accepts."""
    out = {k: (v.copy() if isinstance(v, np.ndarray) else
               [np.array(x, dtype=float) for x in v] if isinstance(v, list) else v)
           for k, v in prior.items()}
    record = FAMILIES[family]
    for key in record.derived_keys:  # fixed by the family (the Bernoulli's n = 1), not a prior key
        out.pop(key, None)
    if record.spread_key is not None:
        # B0 is a precision: B0 / s makes the prior scatter B0^-1 (and E[Sigma]) s times larger
        key = record.spread_key
        out[key] = out[key] / s if record.spread_power < 0 else out[key] * s
    elif weight != 1.0:
        # Beta, Gamma and Dirichlet priors: times w keeps the prior mean and makes it weigh
        # like w times as many pseudo-observations
        for key in record.weight_keys:
            if key in out:
                v = out[key]
                out[key] = [x * weight for x in v] if isinstance(v, list) else v * weight
    return out


def scaled_parsed(parsed: ParsedData, s: float, weight: float = 1.0) -> ParsedData:
    """``parsed`` with every block's resolved prior scaled as :func:`_scaled_block_prior` scales it
    (its derived keys kept): what parsing the same rows again with ``_prior_argument(parsed, ...,
    s, weight)`` gives, without validating and resolving every block again (the automatic search
    parses its rows once per structure and scales them per candidate)."""
    blocks = []
    for b in parsed.blocks:
        prior = _scaled_block_prior(b.family, b.prior, s, weight)
        prior.update({key: b.prior[key] for key in FAMILIES[b.family].derived_keys if key in b.prior})
        blocks.append(replace(b, prior=prior))
    return ParsedData(parsed.X, parsed.names, blocks, parsed.categories)


def _prior_argument(parsed: ParsedData, likelihood, s: float, weight: float = 1.0):
    """The ``prior=`` argument reproducing ``parsed``'s resolved priors, Gaussian spreads times s
    and the other families' prior weights times ``weight``."""
    groups = _groups(likelihood, parsed.names)
    if len(groups) != len(parsed.blocks):  # parse builds one block per group, in order
        raise RuntimeError("internal: the likelihood's groups do not match the parsed blocks.")
    entries = [(key, _scaled_block_prior(block.family, block.prior, s, weight))
               for (_, _, key), block in zip(groups, parsed.blocks)]
    if isinstance(likelihood, str):
        return entries[0][1]
    return {key: value for key, value in entries}


def scaled_prior(X, likelihood="normal_wishart", s: float = 1.0, prior=None, weight: float = 1.0):
    """Empirical-Bayes priors with the Gaussian families' within-cluster spread times s.

    Appendix G (approaches 2 and 4) tunes theta0 by likelihood; this gives that search
    one interpretable knob. Starting from the empirical-Bayes defaults computed on ``X``
    (and any ``prior`` values you pass, which take precedence), the expected
    within-cluster (co)variance of each Gaussian block is multiplied by s:

    * normal_wishart: B0 -> B0 / s (the prior scatter B0^-1, hence E[Sigma], times s);
    * normal_gamma: b0 -> b0 s (E[sigma^2] = b0/(a0 - 1) times s);
    * spherical_gaussian: sigma2 -> sigma2 s;
    * gaussian_known_cov: Sigma -> Sigma s.

    The hyperparameters c0, sigma0_2, Sigma0 and every other family are unchanged.
    Moderately, s > 1 asks for wider clusters, hence fewer, and s < 1 for tighter ones.
    For the known-variance families the spread of the cluster means (sigma0_2, Sigma0)
    stays fixed; for normal_wishart and normal_gamma the conjugate prior ties it to the
    within-cluster spread (Cov(mu) = E[Sigma]/c0), so it is scaled too, and a very small s
    makes a new cluster improbable away from m0 (few clusters) rather than splitting.

    Parameters
    ----------
    X : array-like or DataFrame
    likelihood : str, list or dict
        As for :class:`~mapdp_core.MAPDP`.
    s : float > 0, default 1.0
    prior : dict, optional
        Hyperparameters to use instead of the defaults before scaling.
    weight : float > 0, default 1.0
        For every other family (Beta, Gamma and Dirichlet priors: bernoulli, binomial,
        categorical, poisson, geometric, exponential), ``alpha0`` and ``beta0`` times
        ``weight``: the same prior mean, weighing like ``weight`` times as many
        pseudo-observations (a weaker prior lets small differences between clusters count).

    Returns
    -------
    dict
        A ``prior=`` argument for :class:`~mapdp_core.MAPDP` with ``likelihood``: for a
        single family name, that family's dict; for a list or mapping, a dict keyed as
        :mod:`mapdp_core.core.spec` looks blocks up (the likelihood's key, or the family name for
        a multivariate family given column by column). Every block is given in full, so
        with s = 1 it reproduces the defaults exactly.
    """
    s = _check_scale(s)
    weight = _check_scale(weight, "weight")
    return _prior_argument(parse(X, likelihood, prior), likelihood, s, weight)


