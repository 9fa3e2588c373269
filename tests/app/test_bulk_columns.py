"""Issue 28, part 4: with hundreds or thousands of columns, roles and likelihoods are set for every
column a filter picks (its name contains a text, its role or likelihood now is one value), on the
upload's editor and on the likelihood control after "Use this table"; nothing else changes."""
import numpy as np
import pandas as pd
import pytest

from apptools import ok, start
from explorer.report import matching_columns


def test_matching_columns_filters_by_name_and_fields_and_never_by_pattern():
    spec = pd.DataFrame({"column": ["Q1", "q2", "age", "q.3", "Sex"],
                         "family": ["binomial", "binomial", "normal_gamma", "categorical", "bernoulli"]})
    assert list(matching_columns(spec, "q")) == [True, True, False, True, False]  # case-insensitive
    assert list(matching_columns(spec, "q.")) == [False, False, False, True, False]  # "." is a dot, not a pattern
    assert list(matching_columns(spec, "Q", family="binomial")) == [True, True, False, False, False]
    assert matching_columns(spec, "", family="any").all() and matching_columns(spec, "  ", family=None).all()
    assert not matching_columns(spec, "zzz").any()


@pytest.fixture
def questionnaire() -> bytes:
    """120 answers on a 0-4 scale (q1 ... q120), an age and a weight: 60 rows."""
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.integers(0, 5, size=(60, 120)), columns=[f"q{j + 1}" for j in range(120)])
    table["age"] = rng.normal(50, 10, 60).round(1)
    table["weight"] = rng.normal(70, 12, 60).round(1)
    return table.to_csv(index=False).encode()


def test_the_upload_editor_sets_a_role_and_a_likelihood_for_every_matching_column(questionnaire):
    at = start(300)
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Upload a table").run()
    at.file_uploader(key="w_upload").upload("survey.csv", questionnaire, "text/csv").run()
    ok(at)
    at.text_input(key="w_upload_bulk_contains").set_value("q1").run()  # q1, q10-q19, q100-q120
    ok(at)
    assert any("32 of 122 columns match" in c.value for c in at.caption)
    at.selectbox(key="w_upload_bulk_set_family").set_value("categorical").run()
    at.button(key="w_upload_bulk_apply").click().run()
    ok(at)
    at.text_input(key="w_upload_bulk_contains").set_value("weight").run()
    at.selectbox(key="w_upload_bulk_set_family").set_value("(unchanged)").run()
    at.selectbox(key="w_upload_bulk_set_role").set_value("ignored").run()
    at.button(key="w_upload_bulk_apply").click().run()
    ok(at)
    at.button(key="use_upload").click().run()
    ok(at)
    d = at.session_state["data"]
    picked = {c for c in d.features if c.startswith("q1")}
    assert len(picked) == 32 and all(d.family_of(c) == "categorical" for c in picked)
    assert all(d.family_of(c) != "categorical" for c in d.features if c.startswith("q") and c not in picked)
    assert "weight" not in d.features and "age" in d.features


def test_after_use_every_column_with_one_likelihood_gets_another(questionnaire):
    at = start(300)
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Upload a table").run()
    at.file_uploader(key="w_upload").upload("survey.csv", questionnaire, "text/csv").run()
    at.button(key="use_upload").click().run()
    ok(at)
    d = at.session_state["data"]
    before = d.family_of("q1")
    same = [c for c in d.features if d.family_of(c) == before]
    assert len(same) >= 100 and before != "categorical"
    at.selectbox(key="w_many_now").set_value(before).run()
    assert any(f"{len(same)} of {len(d.features)} columns match" in c.value for c in at.caption)
    at.selectbox(key="w_many_family").set_value("categorical").run()
    at.button(key="apply_many").click().run()
    ok(at)
    d = at.session_state["data"]
    assert all(d.family_of(c) == "categorical" for c in same)
    assert d.family_of("age") == "normal_gamma"
