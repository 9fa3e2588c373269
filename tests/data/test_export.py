"""mapdp_core.data.loading.csv_bytes: downloads that a spreadsheet opens without running formulas."""
import csv
import io

import numpy as np
import pandas as pd
import pytest

from mapdp_core.data.loading import csv_bytes, read_table


def _cells(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def test_formula_cells_get_a_leading_quote():
    attack = "=cmd|' /C calc'!A0"
    frame = pd.DataFrame({"label": [attack, "+1+2", "-2+3", "@SUM(A1:A2)", "\t=1", "\r=1", "plain", "a=b"]})
    rows = _cells(csv_bytes(frame))
    assert rows[0] == ["label"]
    assert [r[0] for r in rows[1:]] == ["'" + attack, "'+1+2", "'-2+3", "'@SUM(A1:A2)", "'\t=1", "'\r=1",
                                       "plain", "a=b"]


def test_numbers_and_missing_values_are_untouched():
    frame = pd.DataFrame({"x": [-1.5, 2.0, np.nan], "k": [-3, 0, 7], "when": pd.to_datetime(["2021-01-02"] * 3),
                          "flag": [True, False, True]})
    rows = _cells(csv_bytes(frame))
    assert rows[1:] == [["-1.5", "-3", "2021-01-02", "True"], ["2.0", "0", "2021-01-02", "False"],
                        ["", "7", "2021-01-02", "True"]]


def test_text_that_is_only_a_signed_number_goes_back_as_written():
    # issue 27: the assignments give the uploaded cells back as written ("-5", "-1,452", "+12%"); a
    # spreadsheet reads such a cell as that number, never as a formula, so no quote is put in front
    plain = ["-1.5", "-5", "-1,452", "+12%", "-3e-4", "- 7", "-2,5", "-.5"]
    frame = pd.DataFrame({"s": pd.Series(plain, dtype=object), "f": np.arange(len(plain)) - 1.5})
    assert [r[0] for r in _cells(csv_bytes(frame))[1:]] == plain
    # anything more than a number after the sign is still neutralised (OWASP)
    risky = ["-1+2", "-A1", "-5)", "+", "-", "-1e5+cmd|' /C calc'!A0", "-SUM(1)", "+1 2+3"]
    frame = pd.DataFrame({"s": pd.Series(risky, dtype=object)})
    assert [r[0] for r in _cells(csv_bytes(frame))[1:]] == ["'" + v for v in risky]


@pytest.mark.parametrize("dtype", [object, "string", "category", "str"])
def test_every_text_dtype_is_neutralised(dtype):
    frame = pd.DataFrame({"c": pd.Series(["=1+1", None, "ok"], dtype=dtype)})
    assert [r[0] for r in _cells(csv_bytes(frame))[1:]] == ["'=1+1", "", "ok"]


def test_column_names_are_neutralised_and_the_index_is_not_written():
    frame = pd.DataFrame({"=HYPERLINK(\"http://x\")": [1], "ok": ["a"]}, index=["=idx"])
    rows = _cells(csv_bytes(frame))
    assert rows == [["'=HYPERLINK(\"http://x\")", "ok"], ["1", "a"]]


def test_mixed_object_column_and_duplicate_names():
    frame = pd.DataFrame([[-2.5, "=x"], ["@y", 3]], columns=["a", "a"])
    rows = _cells(csv_bytes(frame))
    assert rows == [["a", "a"], ["-2.5", "'=x"], ["'@y", "3"]]


def test_a_line_break_inside_a_cell_cannot_start_an_unescaped_line():
    frame = pd.DataFrame({"c": ["note\r=1+1", "note\n@SUM(A1)", "x"]})
    data = csv_bytes(frame)
    assert data.count(b"\r\n") == 4  # header and three rows: the breaks inside cells are quoted
    assert [r[0] for r in _cells(data)[1:]] == ["note\r=1+1", "note\n@SUM(A1)", "x"]


def test_utf8_bytes_read_back_by_read_table():
    frame = pd.DataFrame({"name": ["Jos\u00e9", "=evil()", "\u5f20\u4e09"], "value": [1.5, -2.0, 3.0]})
    data = csv_bytes(frame)
    assert isinstance(data, bytes) and not data.startswith(b"\xef\xbb\xbf")
    df, rep = read_table(data)
    assert rep.encoding == "utf-8"
    assert df["name"].tolist() == ["Jos\u00e9", "'=evil()", "\u5f20\u4e09"] and df["value"].tolist() == [1.5, -2.0, 3.0]


def test_empty_frames_and_wrong_types():
    assert csv_bytes(pd.DataFrame({"a": []})) == b"a\r\n"
    with pytest.raises(TypeError, match="needs a pandas DataFrame"):
        csv_bytes([[1, 2]])
