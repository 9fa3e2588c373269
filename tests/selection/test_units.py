"""Issue 24, part 1: an answer must not depend on a column's unit. Rescaling any subset of the
real-valued columns by any factor, with and without gaps, gives the same families, settings and
partition from one MAPDP() call; whole values alone (a unit can make them whole) never make a
count."""

import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP
from mapdp_core.core.encoding import encode_column, lattice, stored_whole
from mapdp_core.data.loading import read_table, suggest_roles_and_families


def _table(seed: int, gaps: float) -> pd.DataFrame:
    """Three groups in mixed columns: three correlated measurements with three decimals, a count
    stored as whole numbers, a yes/no finding and a category; ``gaps`` of the measurements missing."""
    rng = np.random.default_rng(seed)
    n = 240
    z = rng.integers(0, 3, n)
    centre = np.array([[0.0, 0.0, 0.0], [2.5, 1.0, -1.5], [-1.0, 3.0, 1.0]])[z]
    cov = np.array([[1.0, 0.6, 0.3], [0.6, 1.0, 0.5], [0.3, 0.5, 1.0]])
    real = np.round(centre + rng.multivariate_normal(np.zeros(3), cov, n), 3) + np.array([5.0, 2.0, 9.0])
    frame = pd.DataFrame(real, columns=["weight", "height", "score"])
    frame["visits"] = rng.poisson(np.array([1.0, 4.0, 8.0])[z])
    frame["smoker"] = (rng.random(n) < np.array([0.2, 0.5, 0.8])[z]).astype(int)
    frame["group"] = np.array(["a", "b", "c"])[(z + (rng.random(n) < 0.3)) % 3]
    if gaps:
        for c in ("weight", "height", "score"):
            frame.loc[rng.random(n) < gaps, c] = np.nan
    return frame


@pytest.mark.parametrize("gaps", [0.0, 0.12], ids=["complete", "with-gaps"])
@pytest.mark.parametrize("columns, factor", [(["weight"], 1000.0), (["weight", "score"], 1000.37),
                                             (["height"], 0.001), (["weight", "height", "score"], 1e-3 * 3.7)])
def test_rescaling_real_columns_never_changes_the_answer(gaps, columns, factor):
    base = _table(seed=5, gaps=gaps)
    scaled = base.copy()
    scaled[columns] = scaled[columns] * factor
    a = MAPDP(random_state=0).fit(base)
    b = MAPDP(random_state=0).fit(scaled)
    assert list(a.likelihood_["family"]) == list(b.likelihood_["family"])
    assert {k: v for k, v in a.hyperparameters_.items()} == {k: v for k, v in b.hyperparameters_.items()}
    assert np.array_equal(a.labels_, b.labels_)
    observed = int(base[columns].notna().to_numpy().sum())  # the joint moves by ln(factor) per observed cell
    assert b.neg_log_joint_ - a.neg_log_joint_ == pytest.approx(observed * np.log(factor), rel=1e-6, abs=1e-6)


def test_whole_values_from_a_unit_are_not_counts_but_whole_numbers_stored_as_such_are():
    rng = np.random.default_rng(0)
    kg = np.round(rng.gamma(2.0, 0.005, 300), 3) + 0.001  # grams 1..60 by the thousand: spread like counts
    frame = pd.DataFrame({"x1": np.round(kg * 1000.0), "visits": rng.poisson(2.0, 300)})  # a neutral name
    families = suggest_roles_and_families(frame).set_index("column")["family"]
    assert families["x1"] == "normal_gamma" and families["visits"] in ("poisson", "binomial")
    assert suggest_roles_and_families(pd.DataFrame({"x1": kg})).set_index("column")["family"]["x1"] == (
        "normal_gamma")
    assert stored_whole(frame["visits"]) and not stored_whole(frame["x1"])
    assert stored_whole(pd.Series([1, None, 3], dtype="Int64")) and stored_whole(pd.Series(["3", "4", None]))
    assert not stored_whole(pd.Series(["3.0", "4"]))


def test_a_file_keeps_numbers_written_with_decimals_as_decimals():
    for text in ("grams,count\n1500.0,3\n2250.0,0\n1250.0,7\n",  # plain numbers: the fast reader
                 "grams,count\n\"1,500.0\",3\n\"2,250.0\",0\n\"1,250.0\",7\n"):  # separators: the careful one
        table = read_table(text, min_rows=1)[0]
        assert table["grams"].dtype == np.float64 and table["count"].dtype == np.int64, text


@pytest.mark.parametrize("levels", [[0.0, 0.5, 1.0, 1.5, 2.0], [1.0, 2.0, 3.0, 4.0, 5.0], [0.15, 0.25, 0.35, 0.45]])
def test_an_ordinal_scale_is_read_the_same_in_any_unit(levels):
    rng = np.random.default_rng(1)
    x = rng.choice(levels, 200)
    codes = None
    for factor in (1.0, 10.0, 1000.37, 0.01):
        s = pd.Series(x * factor, name="scale")
        family = suggest_roles_and_families(s.to_frame()).set_index("column")["family"]["scale"]
        assert family == "binomial"
        coded, _ = encode_column(s, "binomial", "scale", max_categories=50, warn=lambda m: None)
        codes = coded if codes is None else codes
        assert np.array_equal(coded, codes)  # the same trials in every unit
    step, origin = lattice(x * 7.0)
    assert step == pytest.approx(7.0 * (levels[1] - levels[0]))


def test_a_scale_whose_step_is_not_exact_in_binary_predicts_its_own_rows():
    # levels 4.0, 4.1, ..., 4.5 in steps of 0.1: 0.5 / 0.1 is 5.000000000000002 in floats, which
    # fitting rounds to the level's number; new rows must be coded the same, not refused as
    # "not whole numbers" (found by predicting a held-out table on its own rows)
    rng = np.random.default_rng(3)
    z = rng.integers(0, 2, 160)
    scale = np.round(4.0 + 0.1 * np.clip(rng.poisson(np.where(z == 1, 4.0, 0.5)), 0, 5), 1)
    frame = pd.DataFrame({"scale": scale, "size": rng.normal(np.where(z == 1, 3.0, 0.0), 1.0)})
    model = MAPDP(random_state=0).fit(frame)
    # the scale's level numbers are read as binomial or as categorical (the search's choice): either
    # family refuses a code that is not whole
    assert model.likelihood_.set_index("column")["family"]["scale"] in ("binomial", "categorical")
    assert model.predict_proba(frame).shape == (len(frame), model.n_clusters_ + 1)
    assert np.isfinite(model.score_samples(frame)).all()
    with pytest.raises(ValueError, match="whole numbers|category codes"):  # off the levels: still refused
        model.predict(pd.DataFrame({"scale": [4.05], "size": [0.0]}))
