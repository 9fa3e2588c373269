"""Priors on the partition: the Dirichlet process's Chinese restaurant process, and the mixture of
finite mixtures (MFM) of Miller & Harrison (2018).

MAP-DP's sweep and its exact joint -ln p(X, z) need three things from the prior on partitions,
and nothing else: the weight of an existing cluster and of a new one for a row given the others
(the sweep's argmin, PLOS Algorithm 3 line 10), ln p(z) (the joint), and the weights of a new row's
cluster given a fitted partition (prediction, PLOS Appendix E). Each prior here gives those three.

**Dirichlet process** (PLOS eq 7; Pitman 2006): for a partition of n rows into t clusters of sizes
n_1..n_t,

    p(z) = N0^t Gamma(N0) / Gamma(N0 + n) prod_k Gamma(n_k),

so a row joins existing cluster k with weight n_k (without the row) and a new one with weight N0.

**Mixture of finite mixtures** (Miller & Harrison, "Mixture models with a prior on the number of
components", JASA 113 (2018) 340-356): K ~ p_K on {1, 2, ...}, weights
~ Dirichlet_K(gamma, ..., gamma), z_i ~ weights. The partition's distribution is

    p(z) = V_n(t) prod_k gamma^(n_k),
    V_n(t) = sum_{k >= 1} k_(t) / (gamma k)^(n) p_K(k),

with the rising factorial x^(m) = x (x+1) ... (x+m-1) and the falling factorial
x_(m) = x (x-1) ... (x-m+1) (0 when m > x). The restaurant process that follows:
a row joins existing cluster k with weight n_k + gamma, a new one with weight
gamma V_n(t+1) / V_n(t), where t counts the clusters of the other rows and n every row of the
partition. Unlike the Dirichlet process, whose number of clusters grows without end as rows are
added (and which is inconsistent for the number of components: Miller & Harrison, JMLR 15 (2014)
3333-3370), the MFM's posterior on K concentrates at the true K when the components are of the
model's shape (Nobile 1994; Miller & Harrison 2018, Section 2). ln V_n(t) is summed here over k
in log space until the terms are 50 nats below the largest.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import gammaln, logsumexp

__all__ = ["DirichletProcess", "MixtureOfFiniteMixtures", "PartitionPrior", "as_partition_prior",
           "finite_mixture_prior", "mfm_log_v"]

#: p_K families of :class:`MixtureOfFiniteMixtures`, each set by its mean
K_PRIORS = ("geometric", "poisson")


class PartitionPrior:
    """What MAP-DP needs of a prior on partitions (see the module docstring)."""

    #: the existing-cluster weight is n_k + ``gamma`` (0 for the Dirichlet process)
    gamma: float = 0.0

    def new_cluster_log_weights(self, n: int, length: int) -> np.ndarray:
        """ln of a new cluster's weight (relative to the existing clusters' n_k + gamma) when the
        other rows of a partition of ``n`` rows hold t clusters, for t = 0 .. ``length`` - 1; a
        kernel reads the last entry for any larger t (so the Dirichlet process gives one entry)."""
        raise NotImplementedError

    def log_prob(self, sizes, n: int | None = None) -> float:
        """ln p(z) of a partition with cluster sizes ``sizes`` (of ``n`` rows: their sum by default)."""
        raise NotImplementedError

    def log_cluster_factor(self, n: int) -> float:
        """The factor of ln p(z) that one cluster of ``n`` rows contributes besides the number
        of clusters: ln Gamma(n) for the Dirichlet process, ln gamma^(n) for the MFM."""
        raise NotImplementedError

    def sweep_log_prior(self, sizes) -> float:
        """The prior's part of the sweep objective E (PLOS Algorithm 3 line 17): ln p(z) up to a
        constant of n alone (the Dirichlet process leaves out ln Gamma(N0) - ln Gamma(N0 + n), as
        the paper's E does)."""
        return self.log_prob(sizes)

    def describe(self) -> str:
        """The prior in words, for reports."""
        raise NotImplementedError

    def predictive_log_weights(self, sizes) -> tuple[np.ndarray, float]:
        """ln p(z_new = k | z) for the clusters of sizes ``sizes`` and, second, for a new cluster:
        the prior weights of one more row (PLOS Appendix E, eq 33); they sum to 1."""
        raise NotImplementedError

    def mixture_log_weights(self, sizes) -> tuple[np.ndarray, float, float]:
        """:meth:`predictive_log_weights` as prediction reads them: the ln weights of the clusters
        and of a new one, and the ln of their sum (here 0: they are normalised)."""
        existing, new = self.predictive_log_weights(sizes)
        return existing, new, 0.0


@dataclass(frozen=True)
class DirichletProcess(PartitionPrior):
    """The Dirichlet process's partition prior with concentration (prior count) ``N0`` (PLOS eq 7)."""

    N0: float

    def new_cluster_log_weights(self, n: int, length: int) -> np.ndarray:
        return np.array([math.log(self.N0)])

    def log_prob(self, sizes, n: int | None = None) -> float:
        sizes = np.asarray(sizes, dtype=np.float64)
        n = float(sizes.sum()) if n is None else float(n)
        if n == 0:
            return 0.0
        return (len(sizes) * math.log(self.N0) + float(gammaln(sizes).sum())
                + math.lgamma(self.N0) - math.lgamma(self.N0 + n))

    def log_cluster_factor(self, n: int) -> float:
        return math.lgamma(n)

    def sweep_log_prior(self, sizes) -> float:
        sizes = np.asarray(sizes, dtype=np.float64)
        return len(sizes) * math.log(self.N0) + float(gammaln(sizes).sum())

    def mixture_log_weights(self, sizes) -> tuple[np.ndarray, float, float]:
        # N_k, N0 and N0 + N as PLOS eq 33 writes them (the sum taken last, as prediction always did)
        sizes = np.asarray(sizes, dtype=np.float64)
        return np.log(sizes), math.log(self.N0), math.log(self.N0 + sizes.sum())

    def predictive_log_weights(self, sizes) -> tuple[np.ndarray, float]:
        sizes = np.asarray(sizes, dtype=np.float64)
        total = math.log(self.N0 + sizes.sum())
        with np.errstate(divide="ignore"):
            return np.log(sizes) - total, math.log(self.N0) - total

    def describe(self) -> str:
        return f"Dirichlet process, N0 = {self.N0:g}"


@dataclass(frozen=True)
class MixtureOfFiniteMixtures(PartitionPrior):
    """Miller & Harrison's (2018) mixture of finite mixtures: K ~ p_K, weights ~ Dirichlet(gamma).

    Parameters
    ----------
    gamma : float > 0, default 1.0
        The symmetric Dirichlet parameter of the weights (Miller & Harrison use 1 in most of
        their examples): smaller values favour unequal cluster sizes.
    k_prior : "geometric" or "poisson", default "geometric"
        p_K: "geometric" is P(K = k) = p (1 - p)^(k-1) for k >= 1 with p = 1 / ``k_mean``;
        "poisson" is K - 1 ~ Poisson(``k_mean`` - 1).
    k_mean : float >= 1, default 10.0
        The prior mean of K, the number of components.
    """

    gamma: float = 1.0
    k_prior: str = "geometric"
    k_mean: float = 10.0

    def __post_init__(self):
        if not (isinstance(self.gamma, (int, float)) and math.isfinite(self.gamma) and self.gamma > 0):
            raise ValueError(f"gamma (the Dirichlet parameter of the weights) must be a finite number > 0, "
                             f"got {self.gamma!r}.")
        if self.k_prior not in K_PRIORS:
            raise ValueError(f"k_prior={self.k_prior!r}: pass one of {', '.join(map(repr, K_PRIORS))}.")
        if not (isinstance(self.k_mean, (int, float)) and math.isfinite(self.k_mean) and self.k_mean >= 1):
            raise ValueError(f"k_mean (the prior mean number of components) must be a finite number >= 1, "
                             f"got {self.k_mean!r}.")
        if self.k_prior == "geometric" and self.k_mean == 1:
            raise ValueError("k_mean=1 with a geometric p_K puts every row in one cluster: pass k_mean > 1.")

    def log_p_k(self, k: np.ndarray) -> np.ndarray:
        """ln p_K(k) for whole numbers k >= 1."""
        k = np.asarray(k, dtype=np.float64)
        if self.k_prior == "geometric":
            p = 1.0 / self.k_mean
            return math.log(p) + (k - 1.0) * math.log1p(-p)
        lam = self.k_mean - 1.0
        if lam == 0.0:
            return np.where(k == 1.0, 0.0, -np.inf)
        return (k - 1.0) * math.log(lam) - lam - gammaln(k)

    def log_v(self, n: int, t_max: int) -> np.ndarray:
        """ln V_n(t) for t = 0 .. ``t_max`` (:func:`mfm_log_v`)."""
        return mfm_log_v(int(n), int(t_max), float(self.gamma), self.k_prior, float(self.k_mean))

    def log_cluster_factor(self, n: int) -> float:
        return math.lgamma(n + self.gamma) - math.lgamma(self.gamma)

    def new_cluster_log_weights(self, n: int, length: int) -> np.ndarray:
        length = max(int(length), 1)
        lv = self.log_v(n, length)
        out = np.full(length, -np.inf)  # -inf: p_K allows no more clusters (the kernel never opens one)
        live = np.isfinite(lv[1:length + 1])
        out[live] = math.log(self.gamma) + lv[1:length + 1][live] - lv[:length][live]
        return out

    def log_prob(self, sizes, n: int | None = None) -> float:
        sizes = np.asarray(sizes, dtype=np.float64)
        n = int(sizes.sum()) if n is None else int(n)
        if n == 0:
            return 0.0
        t = len(sizes)
        log_rising = float((gammaln(sizes + self.gamma) - math.lgamma(self.gamma)).sum())
        return float(self.log_v(n, t)[t]) + log_rising

    def predictive_log_weights(self, sizes) -> tuple[np.ndarray, float]:
        sizes = np.asarray(sizes, dtype=np.float64)
        n, t = int(sizes.sum()), len(sizes)
        now, more = self.log_v(n, t), self.log_v(n + 1, t + 1)
        # p(z_new = k | z) = p(z with the new row in k) / p(z): the ratios of p(z) for n + 1 and n rows
        existing = np.log(sizes + self.gamma) + more[t] - now[t]
        new = math.log(self.gamma) + more[t + 1] - now[t]
        return existing, float(new)

    def describe(self) -> str:
        return (f"mixture of finite mixtures, {self.k_prior} prior on K with mean {self.k_mean:g}, "
                f"Dirichlet weights gamma = {self.gamma:g}")


@lru_cache(maxsize=64)
def mfm_log_v(n: int, t_max: int, gamma: float, k_prior: str, k_mean: float) -> np.ndarray:
    """ln V_n(t) = ln sum_{k >= 1} k_(t) / (gamma k)^(n) p_K(k) for t = 0 .. ``t_max`` (Miller &
    Harrison 2018, the partition distribution), -inf where t > n is impossible. The sum over k
    runs, in log space, until its terms lie 50 nats below the largest for every t (the range is
    doubled until then). Read-only result (cached)."""
    prior = MixtureOfFiniteMixtures(gamma, k_prior, k_mean)
    out = np.full(t_max + 1, -np.inf)
    span = 256
    while True:
        k = np.arange(1, t_max + span + 1, dtype=np.float64)
        # ln p_K(k) - ln (gamma k)^(n); (gamma k)^(n) = Gamma(gamma k + n) / Gamma(gamma k)
        base = prior.log_p_k(k) - (gammaln(gamma * k + n) - gammaln(gamma * k))
        lgk1 = gammaln(k + 1.0)
        converged = True
        for t in range(min(t_max, n) + 1):
            terms = base[max(t, 1) - 1:] + lgk1[max(t, 1) - 1:] - gammaln(k[max(t, 1) - 1:] - t + 1.0)
            top = float(np.max(terms))
            if top == -np.inf:
                continue
            if terms[-1] > top - 50.0:
                converged = False
                break
            out[t] = logsumexp(terms)
        if converged:
            out.flags.writeable = False
            return out
        span *= 2


def finite_mixture_prior(value, N0) -> MixtureOfFiniteMixtures | None:
    """The mixture of finite mixtures that an estimator's ``partition_prior`` asks for ("mfm": the
    defaults; or an instance), or None for "dp" (the Dirichlet process, whose ``N0`` is then given
    or searched); anything else, or an N0 beside the MFM, is refused in words."""
    if isinstance(value, MixtureOfFiniteMixtures):
        mfm = value
    elif isinstance(value, str) and value == "mfm":
        mfm = MixtureOfFiniteMixtures()
    elif isinstance(value, str) and value == "dp":
        return None
    else:
        raise ValueError(f"partition_prior={value!r}: pass 'dp' (the Dirichlet process, with N0), 'mfm' (a "
                         "mixture of finite mixtures) or a MixtureOfFiniteMixtures(gamma=, k_prior=, k_mean=).")
    if not (isinstance(N0, str) and N0 == "auto"):
        raise ValueError(f"N0={N0!r} is the Dirichlet process's concentration, and a mixture of finite mixtures "
                         "has none: leave N0='auto' with partition_prior='mfm', or pass partition_prior='dp'.")
    return mfm


def as_partition_prior(value) -> PartitionPrior:
    """A :class:`PartitionPrior` as given, or the Dirichlet process of concentration ``value``."""
    if isinstance(value, PartitionPrior):
        return value
    return DirichletProcess(float(value))
