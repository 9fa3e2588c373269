"""Wide tables (issue 28, part 4): the suggestion for thousands of plainly real columns is
computed in one pass (``suggest._plain_real_rows``) and must equal what the careful per-column
rules (``suggest._suggest_one``) say, column by column, on tables with every kind of column."""
import time

import numpy as np
import pandas as pd
import pytest

import mapdp_core.data.loading.suggest as suggest
from mapdp_core.data.loading import prepare, suggest_roles_and_families


def _varied(rng, n: int) -> pd.DataFrame:
    """One column per situation the plain path must recognise or leave to the careful rules."""
    real = rng.normal(50, 10, n)
    cols = {
        "x": real,
        "x_gaps": np.where(rng.random(n) < 0.2, np.nan, real + 1),
        "x_inf": np.where(np.arange(n) == 3, np.inf, real),
        "x_zero": np.where(np.arange(n) == 5, 0.0, np.abs(real) + 40),  # a zero far below the rest
        "x_zero_near": np.where(np.arange(n) == 5, 0.0, rng.random(n)),
        "x_zero_negative": np.where(np.arange(n) == 5, 0.0, real - 50),  # a zero among negatives: plain
        "whole_floats": np.round(real),
        "scale_float": rng.integers(0, 5, n) * 0.5,  # an ordinal scale stored as floats
        "twelve_levels": rng.integers(0, 12, n) * 0.25 + 0.1,
        "eleven_levels": rng.integers(0, 11, n) * 0.25 + 0.1,
        "two_values": rng.choice([0.5, 1.5], n),
        "constant": np.full(n, 2.5),
        "empty": np.full(n, np.nan),
        "patient id": real * 3.3,
        "class": real / 7,
        "cluster_score": real * 1.1,
        "float32": real.astype(np.float32),
        "ints": rng.integers(0, 400, n),
        "negative": real - 100,
        "tiny": real * 1e-300,
        "huge": real * 1e300,
        "text": rng.choice(["a", "b", "c"], n),
    }
    return pd.DataFrame(cols)


def _careful(df: pd.DataFrame, monkeypatch) -> pd.DataFrame:
    with monkeypatch.context() as m:
        m.setattr(suggest, "_plain_real_rows", lambda df, notes: {})
        return suggest_roles_and_families(df)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [8, 40, 300])
def test_the_one_pass_suggestion_equals_the_careful_one(seed, n, monkeypatch):
    df = _varied(np.random.default_rng(seed), n)
    df.attrs["column_notes"] = {"negative": "numbers written with a unit (kg), read as numbers"}
    fast = suggest_roles_and_families(df)
    pd.testing.assert_frame_equal(fast, _careful(df, monkeypatch))
    taken = len(suggest._plain_real_rows(df, df.attrs["column_notes"]))
    assert taken > 0 if n >= suggest._PLAIN_MIN_DISTINCT else taken == 0  # fewer rows than a scale's levels: careful


def test_the_plain_path_leaves_every_doubtful_column_to_the_careful_rules():
    df = _varied(np.random.default_rng(0), 300)
    df.attrs["column_notes"] = {"negative": "numbers written with a unit (kg), read as numbers"}
    plain = {df.columns[j] for j in suggest._plain_real_rows(df, df.attrs["column_notes"])}
    # "huge" (values near 1e302 are whole in floating point) and "negative" (a reader's note) go
    # the careful way; so do the scales, the columns with zeros, infinities, a name, or text
    assert plain == {"x", "x_gaps", "tiny", "float32", "twelve_levels", "x_zero_negative"}


def test_a_wide_table_is_suggested_and_prepared_in_seconds(monkeypatch):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(60, 20_000)).round(3), columns=[f"g{j}" for j in range(20_000)])
    df.iloc[::7, 5] = np.nan
    t0 = time.perf_counter()
    table = suggest_roles_and_families(df)
    X, likelihood, _, _ = prepare(df, roles=table, families=table)
    seconds = time.perf_counter() - t0
    assert X.shape == df.shape and list(X.columns) == list(df.columns)
    assert set(likelihood.values()) == {"normal_gamma"}
    np.testing.assert_array_equal(X.to_numpy(), df.to_numpy())
    # generous for a loaded 2-core machine: the per-column path took about a minute here
    assert seconds < 30, f"{seconds:.1f} s"
    careful = _careful(df.iloc[:, :300], monkeypatch)
    pd.testing.assert_frame_equal(table.iloc[:300].reset_index(drop=True), careful)
