"""Issue 29 (reading real files): long record numbers and codes with a leading zero are codes,
kept exactly as text and never clustered on as quantities."""
import numpy as np
import pytest
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


# ----------------------------------------------------------------------------- both readers

def _read_both(text: str):
    """The careful reader's table and report, after checking that the large-file (pandas) reader
    gives the same table, dtypes, notes, warnings and suggested roles."""
    import warnings

    from mapdp_core.data.loading import DataLoadWarning
    from mapdp_core.data.loading.read import _read_table

    out = []
    for limit in (10**9, 0):  # the careful reader, then pandas' reader
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataLoadWarning)
            out.append(_read_table(text.encode("utf-8"), sheet=None, header="auto", name=None, min_rows=1,
                                   fast_path_bytes=limit))
    (careful, rep), (fast, rep_f) = out
    pd.testing.assert_frame_equal(fast, careful, check_exact=True)
    assert rep_f.column_notes == rep.column_notes and rep_f.warnings == rep.warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pd.testing.assert_frame_equal(suggest_roles_and_families(fast), suggest_roles_and_families(careful))
    return careful, rep


def _ids(first: int, n: int, gap: int | None = None) -> list[str]:
    return ["" if i == gap else str(first + i) for i in range(n)]


def _file(**columns) -> str:
    names = list(columns)
    n = len(columns[names[0]])
    return ",".join(names) + "\n" + "".join(",".join(columns[c][i] for c in names) + "\n" for i in range(n))


def test_both_readers_keep_record_numbers_and_leading_zeros():
    table, report = _read_both(TEXT)
    assert table["record"].tolist()[:2] == ["110101199003071234", "110101199003071235"]
    assert table["zip"].tolist() == ["02134", "10115", "02139", "80331", "02134"]
    assert "more than 15 digits" in report.column_notes["record"] and "leading zero" in report.column_notes["zip"]
    roles = suggest_roles_and_families(table).set_index("column")
    assert roles.loc["record", "role"] == "identifier" and roles.loc["zip", "family"] == "categorical"


def test_both_readers_keep_leading_zero_codes_with_a_gap():
    zips = ["02134", "", "10115", "007", "NA", "80331"] * 3
    table, report = _read_both(_file(zip=zips, age=[str(20 + i) for i in range(len(zips))]))
    assert table["zip"].dropna().tolist() == [z for z in zips if z not in ("", "NA")] and table["zip"].isna().sum() == 6
    assert "leading zero" in report.column_notes["zip"] and table["age"].dtype == np.int64


@pytest.mark.parametrize("digits, gap", [(18, None), (18, 3), (19, None), (19, 5), (20, None), (20, 0)],
                         ids=["18", "18-gap", "19", "19-gap", "20", "20-gap"])
def test_both_readers_keep_long_record_numbers_exact(digits, gap):
    first = int("1101011990030712345678"[:digits])
    ids = _ids(first, 60, gap)
    table, report = _read_both(_file(record=ids, x=[str(i % 7) for i in range(60)]))
    present = [v for v in ids if v]
    assert table["record"].dropna().tolist() == present  # exact text, every row in order
    assert table["record"].nunique() == len(present)
    assert "more than 15 digits" in report.column_notes["record"]
    role = suggest_roles_and_families(table).set_index("column").loc["record", "role"]
    assert role == ("identifier" if gap is None else "ignored")  # never a feature; with a gap not a row label


def test_both_readers_keep_signed_codes_and_plain_numbers():
    table, report = _read_both(_file(code=["-07", "+03", "12", "-1"], n=["0", "10", "3", "-0"],
                                     q=['"0044"', '" 05"', "12", "7"]))
    assert table["code"].tolist() == ["-07", "+03", "12", "-1"] and table["q"].tolist() == ["0044", "05", "12", "7"]
    assert table["n"].dtype == np.int64 and "n" not in report.column_notes
