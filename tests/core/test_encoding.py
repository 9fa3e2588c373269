"""mapdp_core.core.encoding: one set of rules for fitting (prepare, spec) and for new rows (Predict)."""
import numpy as np
import pandas as pd
import pytest

from mapdp_core.core.encoding import YES_TOKENS, category_codes, codes_of, encode_column, encode_new_rows, is_yes
from mapdp_core.data.loading import prepare
from mapdp_core.evaluation.profiles import cluster_profiles
from mapdp_core.core.spec import parse, parse_rows, to_matrix


@pytest.mark.parametrize("yes, no", [("ja", "nein"), ("oui", "non"), ("si", "no"), ("Yes", "No"), ("abnormal", "normal")])
def test_a_yes_word_is_encoded_and_profiled_as_the_same_level(yes, no):
    # "ja" sorts before "nein": only the yes-words make it code 1, and the profile must report
    # the proportion of that same level (the lists used to disagree for ja/oui/si)
    assert is_yes(yes) and not is_yes(no)
    df = pd.DataFrame({"smoker": [yes, no, yes, yes, no, no, no, yes]})
    prep = prepare(df, families={"smoker": "bernoulli"})
    assert prep.encodings["smoker"]["codes"] == [no, yes]
    x = prep.X["smoker"].to_numpy()
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    tidy = cluster_profiles(df, labels, {"smoker": "bernoulli"}).tidy.set_index("cluster")
    for k in (0, 1):
        assert tidy.loc[k, "value"] == pytest.approx(x[labels == k].mean())


def test_yes_tokens_are_lower_case_and_read_numbers():
    assert all(t == t.strip().lower() for t in YES_TOKENS)
    assert is_yes(1.0) and is_yes(" TRUE ") and not is_yes(0)


def test_categories_get_sorted_codes_in_prepare_and_in_spec():
    s = pd.Series(["b", "a", None, "c", "a"])
    codes, labels = category_codes(s)
    assert labels == ["a", "b", "c"] and np.array_equal(codes, [1, 0, np.nan, 2, 0], equal_nan=True)
    M, _, cats = to_matrix(pd.DataFrame({"s": s}))
    x, enc = encode_column(s, "categorical", "s", max_categories=50, warn=lambda m: None)
    assert cats["s"] == enc["codes"] == labels
    assert np.array_equal(M[:, 0], x, equal_nan=True) and np.array_equal(x, codes, equal_nan=True)


def test_bernoulli_without_a_yes_word_codes_the_second_value_as_one():
    x, enc = encode_column(pd.Series(["low", "high", "low"]), "bernoulli", "b", max_categories=50,
                           warn=lambda m: None)
    assert enc == {"codes": ["high", "low"]} and x.tolist() == [1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="'b' has 3 different values.*bernoulli needs two"):
        encode_column(pd.Series(["x", "y", "z"]), "bernoulli", "b", max_categories=50, warn=lambda m: None)


def test_codes_of_exact_for_the_engine_and_text_matching_for_forms():
    assert codes_of(["b", None, "a"], ["a", "b"], "s").tolist()[::2] == [1.0, 0.0]
    with pytest.raises(ValueError, match=r"'s' has categories \[' a'\] not seen when fitting \(known: \['a', 'b'\]\)"):
        codes_of([" a"], ["a", "b"], "s")
    assert codes_of([" a", "2", "2.0"], ["a", 2], "s", match_text=True).tolist() == [0.0, 1.0, 1.0]


def test_new_rows_use_the_fitted_encoding():
    table = pd.DataFrame({"colour": ["red", "blue", "red"], "score": [-1, 0, 2], "size": [1.0, 2.0, 3.0]})
    prep = prepare(table, roles=dict.fromkeys(table.columns, "feature"),
                   families={"colour": "categorical", "score": "binomial", "size": "normal_gamma"},
                   standardize="zscore")
    assert list(prep.X.columns) == ["colour", "score", "size"]
    new = encode_new_rows(table.astype(str), list(prep.X.columns), prep.encodings)
    pd.testing.assert_frame_equal(new, prep.X.reset_index(drop=True), check_dtype=False)
    with pytest.raises(ValueError, match=r"lack the column\(s\) \['size'\]"):
        encode_new_rows(table[["colour", "score"]], list(prep.X.columns), prep.encodings)
    # the engine's parse_rows shares the category rule and message
    fitted = parse(table[["colour"]], "categorical")
    assert parse_rows(pd.DataFrame({"colour": ["red", None]}), fitted)[0, 0] == 1.0
    with pytest.raises(ValueError, match="not seen when fitting"):
        parse_rows(pd.DataFrame({"colour": ["green"]}), fitted)
