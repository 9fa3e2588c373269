"""Plain-language descriptions of the priors in use (for the app's sliders and for reports).

Each description restates a family's hyperparameters in the data's own terms: how widely a
typical cluster spreads compared with the whole feature, where cluster centres are expected,
and how many observations' worth of weight the prior carries (PLOS Appendix G on choosing
theta0). Values come from the resolved priors, so they describe exactly what a fit uses.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from mapdp_core.families import FAMILIES
from mapdp_core.core.spec import parse


def _describe(block, X: np.ndarray) -> list[str]:
    """The sentences of one block: each family words its own prior (``Family.describe``)."""
    return FAMILIES[block.family].describe(block, X)


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
