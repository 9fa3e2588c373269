"""Likelihood families, each a module with one contract (DESIGN.md, convention 3).

Numba side: module-level ``@njit(cache=True, inline="always")`` functions whose
arguments after the indices are the family's arrays, in the order of the tuple that
``build`` returns (the first ``N_FIXED`` entries are data and prior, the rest per-cluster
arrays with the cluster on axis 0; see the layout comment in each module):
``reset(k, ...)`` puts slot k in the prior state; ``move(i, k, sign, ...)`` adds (+1) or
removes (-1) row i's statistics; ``nlp(i, k, ...)`` is -ln f(x_i | theta_k) up to
data-only constants; ``nlp_loo(i, k, ...)`` the same with row i left out of cluster k,
without changing k; ``logml(k, ...)`` is ln p(X_k | theta0) up to the same constants;
optional ``pconst(i, ...)`` returns those data-only constants for row i. The kernels in
``_kernels.py`` unpack each tuple once and pass the arrays explicitly (see there why).

Python side: ``check_data``, ``default_prior`` (empirical Bayes, formulas in each module's
docstring), ``resolve_prior`` (user values over defaults, validated), ``build`` and
``summary``.
"""
from . import beta_binomial, categorical, exponential, gaussian_known, geometric, normal_gamma, normal_wishart, poisson

#: family name -> (kind, module); "block" families model several columns jointly.
FAMILIES = {
    "spherical_gaussian": ("block", gaussian_known),
    "gaussian_known_cov": ("block", gaussian_known),
    "normal_wishart": ("block", normal_wishart),
    "normal_gamma": ("column", normal_gamma),
    "bernoulli": ("column", beta_binomial),
    "binomial": ("column", beta_binomial),
    "categorical": ("column", categorical),
    "poisson": ("column", poisson),
    "exponential": ("column", exponential),
    "geometric": ("column", geometric),
}

#: order of the family tuples handed to the kernel
KERNEL_SLOTS = (gaussian_known, normal_gamma, normal_wishart, beta_binomial, categorical, poisson, exponential, geometric)
