"""Plain-language descriptions of the priors in use (for the app's sliders and for reports).

Each description restates a family's hyperparameters in the data's own terms: how widely a
typical cluster spreads compared with the whole feature, where cluster centres are expected,
and how many observations' worth of weight the prior carries (PLOS Appendix G on choosing
theta0). Values come from the resolved priors, so they describe exactly what a fit uses.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .spec import parse


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _spread_sentence(ratio: np.ndarray, names) -> str:
    if np.allclose(ratio, ratio.mean(), rtol=0.05):
        return f"a typical cluster spreads about {_pct(float(ratio.mean()))} as widely as the whole feature"
    parts = ", ".join(f"{n}: {_pct(float(r))}" for n, r in zip(names, ratio))
    return f"a typical cluster spreads this widely compared with the whole feature ({parts})"


def _describe(block, X: np.ndarray) -> list[str]:
    p, fam = block.prior, block.family
    sub = X[:, block.columns]
    sd = np.sqrt(np.where(np.nanvar(sub, axis=0) > 0, np.nanvar(sub, axis=0), 1.0))
    if fam == "normal_wishart":
        D = sub.shape[1]
        T0 = np.linalg.inv(p["B0"])
        if p["a0"] > D + 1:
            within = np.sqrt(np.diag(T0) / (p["a0"] - D - 1)) / sd
            centres = np.sqrt(np.diag(T0) / (p["a0"] - D - 1) / p["c0"]) / sd
            return [_spread_sentence(within, block.names),
                    f"cluster centres are expected within about {centres.mean():.1f} times the feature's spread "
                    f"of its prior centre",
                    f"the prior on each cluster's shape weighs like {p['a0']:g} observations"]
        return ["the prior on cluster shapes is too weak (a0 <= D + 1) for a typical spread to exist",
                f"it weighs like {p['a0']:g} observations"]
    if fam == "normal_gamma":
        var = np.where(p["a0"] > 1, p["b0"] / np.maximum(p["a0"] - 1, 1e-300), np.nan)
        return [_spread_sentence(np.sqrt(var) / sd, block.names),
                f"cluster centres are expected within about {np.nanmean(np.sqrt(var / p['c0']) / sd):.1f} times "
                "the feature's spread of its prior centre",
                f"the prior on each cluster's spread weighs like {np.mean(2 * p['a0']):g} observations"]
    if fam == "spherical_gaussian":
        return [_spread_sentence(np.sqrt(p["sigma2"]) / sd, block.names) + " (the same in every direction, known)",
                f"cluster centres are expected within about {np.mean(np.sqrt(p['sigma0_2']) / sd):.1f} times the "
                "feature's spread of its prior centre"]
    if fam == "gaussian_known_cov":
        return [_spread_sentence(np.sqrt(np.diag(p["Sigma"])) / sd, block.names) + " (known, shared by all clusters)",
                f"cluster centres are expected within about {np.mean(np.sqrt(np.diag(p['Sigma0'])) / sd):.1f} "
                "times the feature's spread of its prior centre"]
    if fam == "bernoulli":
        rate = p["alpha0"] / (p["alpha0"] + p["beta0"])
        return ["before seeing a cluster's data, the chance of a 'yes' is taken as "
                + ", ".join(f"{n}: {_pct(r)}" for n, r in zip(block.names, rate)),
                f"that guess weighs like {np.mean(p['alpha0'] + p['beta0']):.2g} observations"]
    if fam == "binomial":
        rate = p["alpha0"] / (p["alpha0"] + p["beta0"])
        return ["before seeing a cluster's data, its typical score is taken as "
                + ", ".join(f"{name}: {n * r:.2g} out of {n:g}" for name, n, r in zip(block.names, p["n"], rate)),
                f"that guess weighs like {np.mean(p['alpha0'] + p['beta0']):.2g} observations"]
    if fam == "categorical":
        out = []
        for name, a in zip(block.names, p["alpha0"]):
            share = a / a.sum()
            out.append(f"{name}: a cluster's category shares start from "
                       + " / ".join(_pct(v) for v in share) + f", weighing like {a.sum():.2g} observations")
        return out
    if fam == "poisson":
        return ["before seeing a cluster's data, its typical count is taken as "
                + ", ".join(f"{n}: {a / b:.3g}" for n, a, b in zip(block.names, p["alpha0"], p["beta0"])),
                f"that guess weighs like {np.mean(p['beta0']):.2g} observations"]
    if fam == "exponential":
        return ["before seeing a cluster's data, its typical value is taken as "
                + ", ".join(f"{n}: {b / (a - 1):.3g}" if a > 1 else f"{n}: (no finite mean)"
                            for n, a, b in zip(block.names, p["alpha0"], p["beta0"])),
                f"that guess weighs like {np.mean(p['alpha0']):.2g} observations"]
    if fam == "geometric":
        return ["before seeing a cluster's data, its typical count is taken as "
                + ", ".join(f"{n}: {b / (a - 1):.3g}" if a > 1 else f"{n}: (no finite mean)"
                            for n, a, b in zip(block.names, p["alpha0"], p["beta0"])),
                f"that guess weighs like {np.mean(p['alpha0'] + p['beta0']):.2g} observations"]
    return []


def describe_priors(X, likelihood="normal_wishart", prior=None) -> pd.DataFrame:
    """One row per block: its columns, family, and what its prior means in plain words.

    Examples
    --------
    >>> describe_priors(df, {"age": "normal_gamma", "smoker": "bernoulli"})  # doctest: +SKIP
    """
    parsed = parse(X, likelihood, prior)
    rows = [{"columns": ", ".join(b.names), "family": b.family, "meaning": "; ".join(_describe(b, parsed.X))}
            for b in parsed.blocks]
    return pd.DataFrame(rows)
