"""Issue 29 (reading real files): long record numbers and codes with a leading zero are codes,
kept exactly as text and never clustered on as quantities."""
import numpy as np
import pandas as pd

from mapdp_core import MAPDP
from mapdp_core.core.encoding import as_numeric, code_reason
from mapdp_core.data.loading import read_table, suggest_roles_and_families

TEXT = ("record,age,zip\n110101199003071234,34,02134\n110101199003071235,40,10115\n"
        "110101199003071236,51,02139\n110101199003071237,29,80331\n110101199003071238,31,02134\n")


def test_long_record_numbers_stay_exact_and_are_identifiers():
    table, report = read_table(TEXT, min_rows=1)
    assert table["record"].tolist()[:2] == ["110101199003071234", "110101199003071235"]
    assert table["record"].nunique() == 5  # as floats all five were one value
    assert "more than 15 digits" in report.column_notes["record"]
    roles = suggest_roles_and_families(table).set_index("column")
    assert roles.loc["record", "role"] == "identifier"
    # stored as integers (pandas' own reader) they are identifiers too, never a feature
    ints = pd.DataFrame({"record": np.array([110101199003071234 + i for i in range(5)], dtype=np.int64)})
    assert suggest_roles_and_families(ints).set_index("column").loc["record", "role"] == "identifier"


def test_codes_with_a_leading_zero_keep_it_and_are_categories():
    table, report = read_table(TEXT, min_rows=1)
    assert table["zip"].tolist() == ["02134", "10115", "02139", "80331", "02134"]
    assert "leading zero" in report.column_notes["zip"]
    assert suggest_roles_and_families(table).set_index("column").loc["zip", "family"] == "categorical"
    assert as_numeric(pd.Series(["02134", "10115"])) is None
    assert as_numeric(pd.Series(["0", "10", "0.5"])) is not None  # a plain 0 and decimals are numbers
    assert code_reason(pd.Series(["1.05", "0.5"])) == "" and code_reason(pd.Series(["-07"])) != ""


def test_mapdp_leaves_the_record_number_out_and_keeps_every_row():
    table, _ = read_table(TEXT * 1, min_rows=1)
    rng = np.random.default_rng(0)
    big = pd.concat([table] * 8, ignore_index=True)
    big["age"] = rng.normal(45, 10, len(big)).round()
    big["record"] = [f"1101011990030{i:05d}" for i in range(len(big))]
    model = MAPDP(random_state=0).fit(big)
    assert "record" in set(model.dropped_columns_["column"]) and len(model.labels_) == len(big)
