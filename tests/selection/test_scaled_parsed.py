"""The search parses its rows once per structure and scales the priors per candidate
(selection.priors.scaled_parsed): the same priors, to the bit, as parsing the rows again with the
candidate's prior argument, for every family of a mixed table with gaps."""
import numpy as np
import pandas as pd
import pytest

from mapdp_core.core.spec import parse
from mapdp_core.selection.auto import auto_likelihood, structured_likelihood
from mapdp_core.selection.priors import _prior_argument, scaled_parsed


def _table():
    rng = np.random.default_rng(5)
    n = 120
    z = rng.integers(0, 2, n)
    df = pd.DataFrame({"a": rng.normal(3 * z, 1.0), "b": rng.normal(-z, 2.0), "c": rng.normal(z, 0.5),
                       "yes": rng.random(n) < 0.3 + 0.4 * z, "level": rng.integers(0, 4, n),
                       "kind": np.array(["x", "y", "w"])[rng.integers(0, 3, n)], "count": rng.poisson(2 + 3 * z)})
    df.loc[rng.choice(n, 8, replace=False), "b"] = np.nan
    return df


@pytest.mark.parametrize("structure", ["independent", "joint", "shared", "shared+categorical scales"])
@pytest.mark.parametrize("s,w", [(1.0, 1.0), (0.25, 1.0), (4.0, 0.3), (1.0, 3.0)])
def test_scaling_a_parsed_table_is_parsing_it_with_the_scaled_prior(structure, s, w):
    auto = auto_likelihood(_table())
    likelihood = structured_likelihood(auto.likelihood, structure)
    whole = parse(auto.X, likelihood)
    unit = parse(auto.X, likelihood, _prior_argument(whole, likelihood, 1.0, 1.0))
    expected = parse(auto.X, likelihood, _prior_argument(whole, likelihood, s, w))
    got = scaled_parsed(unit, s, w)
    assert [b.family for b in got.blocks] == [b.family for b in expected.blocks]
    for mine, theirs in zip(got.blocks, expected.blocks):
        assert mine.columns == theirs.columns and set(mine.prior) == set(theirs.prior)
        for key, value in theirs.prior.items():
            if isinstance(value, list):
                assert all(np.array_equal(x, y) for x, y in zip(mine.prior[key], value))
            else:
                assert np.array_equal(np.asarray(mine.prior[key]), np.asarray(value)), key
