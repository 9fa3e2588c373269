"""Subtypes: the split-sample tests under the tests table (issue 27, circular p-values)."""
from apptools import ok, simulate_clinical, start


def _tests_tables(at) -> list:
    """Every tests table shown, in page order: the full-data one, then the split one if shown."""
    return [df.value for df in at.dataframe if {"rank", "feature", "p_value", "q_value"} <= set(df.value.columns)]


def test_the_split_sample_button_shows_the_held_out_tests_and_keeps_them():
    at = start(300)
    simulate_clinical(at)
    at.switch_page("pages/subtypes.py").run()
    ok(at)
    assert any("sample splitting" in e.label for e in at.expander)
    assert len(_tests_tables(at)) == 1  # the split tests wait for the button
    at.button(key="split_tests_run").click().run()
    ok(at)
    shown = _tests_tables(at)[1:]
    said = " ".join(c.value for c in at.caption)
    assert len(shown) == 1  # half B holds several of half A's clusters: feature_tests' table, on half B only
    split = shown[0]
    assert {"rank", "feature", "p_value", "q_value", "significant"} <= set(split.columns)
    assert "tested on the other 150 rows" in said and "Gao, Bien & Witten" in said
    assert set(split["feature"]) == set(_tests_tables(at)[0]["feature"])
    at.run()  # a rerun keeps the result without another click
    ok(at)
    assert len(_tests_tables(at)) == 2
