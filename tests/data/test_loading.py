"""mapdp_core.data.loading: reading tables in memory, suggestions, preparation, and one test per bad file."""
import io
import os
import warnings

import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP
from mapdp_core.data.loading import (
    DataLoadError,
    DataLoadWarning,
    DuplicateColumnsError,
    EmptyFileError,
    EncodingError,
    LabelError,
    NotATableError,
    TooFewRowsError,
    missing_summary,
    prepare,
    read_table,
    suggest_roles_and_families,
)

HEPATITIS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "datasets", "hepatitis.csv")
if not os.path.exists(HEPATITIS):
    HEPATITIS = "/work/shared/datasets/hepatitis.csv"


def _role(sug, col):
    return sug.set_index("column").loc[col]


# ----------------------------------------------------------------------------- positive cases

def test_semicolon_decimal_comma_csv():
    text = "patient;weight;smoker;stage\np1;70,5;ja;2\np2;82,25;nein;3\np3;65,0;ja;1\n"
    df, rep = read_table(text.encode("cp1252"))
    assert rep.delimiter == ";" and rep.decimal == "," and rep.header
    assert list(df.columns) == ["patient", "weight", "smoker", "stage"]
    assert df["weight"].tolist() == [70.5, 82.25, 65.0]
    assert df["stage"].dtype == np.int64


def test_tsv_with_utf8_bom_and_missing_tokens():
    text = "\ufeffa\tb\tgroup\n1.5\t?\tx\n2.5\t3\ty\nNA\t4\tx\n"
    df, rep = read_table(io.BytesIO(text.encode("utf-8")))
    assert rep.delimiter == "\t" and rep.encoding == "utf-8-sig"
    assert df["a"].isna().tolist() == [False, False, True]
    assert df["b"].isna().tolist() == [True, False, False]


def test_headerless_numeric_csv():
    df, rep = read_table(b"1,2.5,3\n4,5.5,6\n7,8.5,9\n")
    assert not rep.header
    assert list(df.columns) == ["col_1", "col_2", "col_3"]
    assert df.shape == (3, 3)


def test_latin1_text_is_read():
    df, rep = read_table("name,value\nJos\u00e9,1\nRen\u00e9e,2\nZo\u00eb,3\n".encode("latin-1"))
    assert rep.encoding == "cp1252"
    assert df["name"].tolist() == ["Jos\u00e9", "Ren\u00e9e", "Zo\u00eb"]


def test_rows_of_empty_cells_are_left_out_and_said():
    text = "a,b,c\n1,2,3\n,,\n4,5,6\n\n7,8,9\n,,\n"
    with pytest.warns(DataLoadWarning, match=r"2 row\(s\) with no value in any cell \(row 3, 7 of the file\)"):
        df, rep = read_table(text)
    assert df["a"].tolist() == [1, 4, 7] and len(rep.warnings) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # blank lines alone are not rows: nothing to say
        df, rep = read_table("a,b\n1,2\n\n3,4\n\n")
    assert df.shape == (2, 2) and rep.warnings == []


def test_excel_in_memory():
    pytest.importorskip("openpyxl")
    frame = pd.DataFrame({"id": ["a", "b", "c", "d"], "age": [30, 41, 52, 63],
                          "crp": [1.5, 2.0, np.nan, 7.25], "sex": ["f", "m", "m", "f"]})
    buf = io.BytesIO()
    with pd.ExcelWriter(buf, engine="openpyxl") as xl:
        pd.DataFrame().to_excel(xl, sheet_name="notes", index=False)
        frame.to_excel(xl, sheet_name="data", index=False)
    with pytest.warns(DataLoadWarning, match="sheets"):
        df, rep = read_table(io.BytesIO(buf.getvalue()))
    assert rep.format == "excel" and rep.sheet == "data" and rep.header
    assert list(df.columns) == ["id", "age", "crp", "sex"]
    assert df["crp"].isna().tolist() == [False, False, True, False]
    assert df["age"].tolist() == [30, 41, 52, 63]
    df2, _ = read_table(buf.getvalue(), sheet="data")
    assert df2.equals(df)


def test_hepatitis_suggestions_and_fit():
    with open(HEPATITIS, "rb") as fh:
        data = fh.read()
    df, rep = read_table(io.BytesIO(data), name="hepatitis.csv")
    assert df.shape == (155, 20) and rep.header and rep.delimiter == ","
    sug = suggest_roles_and_families(df)
    assert _role(sug, "label")["role"] == "label"
    assert _role(sug, "sex_female")["family"] == "bernoulli"
    assert _role(sug, "bilirubin")["family"] == "normal_gamma"
    assert _role(sug, "age")["family"] == "normal_gamma"  # ages are measurements, not counts (issue 14)
    assert _role(sug, "sgot")["family"] == "normal_gamma"  # overdispersed lab value, not counts
    assert _role(sug, "protime")["n_missing"] == 67
    assert (sug["role"] == "feature").sum() == 19
    X, likelihood, labels, ids = prepared = prepare(df, sug, sug, standardize="robust")
    assert len(X) == 155 and list(X.index) == list(range(155)) and ids is None
    assert labels.tolist() == df["label"].tolist()
    assert "bilirubin" in prepared.encodings and "center" in prepared.encodings["bilirubin"]
    model = MAPDP(likelihood=likelihood, random_state=0).fit(X)
    assert model.labels_.shape == (155,)
    summary, rows = missing_summary(df)
    assert list(summary.columns) == ["column", "n_missing", "fraction"]
    assert summary.set_index("column").loc["protime", "n_missing"] == 67
    assert len(rows) == int(df.isna().any(axis=1).sum())


def test_mixed_suggestions_and_encodings():
    rng = np.random.default_rng(0)
    n = 40
    df = pd.DataFrame({
        "PatientID": [f"P{i:03d}" for i in range(n)],
        "smoker": rng.choice(["yes", "no"], n),
        "pain_score": rng.integers(0, 6, n),
        "likert": rng.integers(-2, 3, n),
        "visits": rng.poisson(15, n),
        "blood_type": rng.choice(["A", "B", "AB", "O"], n),
        "bmi": rng.normal(25, 4, n),
        "Diagnosis": rng.choice(["x", "y"], n),
    })
    sug = suggest_roles_and_families(df).set_index("column")
    assert sug.loc["PatientID", "role"] == "identifier"
    assert sug.loc["Diagnosis", "role"] == "label"
    assert sug.loc["smoker", "family"] == "bernoulli"
    assert sug.loc["pain_score", "family"] == "binomial"
    assert sug.loc["likert", "family"] == "binomial"
    assert sug.loc["visits", "family"] == "poisson"
    assert sug.loc["blood_type", "family"] == "categorical"
    assert sug.loc["bmi", "family"] == "normal_gamma"
    X, lik, labels, ids = p = prepare(df, standardize="zscore")
    assert set(X["smoker"].unique()) == {0.0, 1.0}
    assert p.encodings["smoker"]["codes"] == ["no", "yes"]  # "yes" is 1
    assert X["likert"].min() == 0 and p.encodings["likert"]["shift"] == -2
    assert p.encodings["blood_type"]["codes"] == ["A", "AB", "B", "O"]
    assert abs(X["bmi"].mean()) < 1e-12 and abs(X["bmi"].std(ddof=0) - 1) < 1e-12
    assert X["visits"].tolist() == df["visits"].astype(float).tolist()  # only Gaussian columns standardised
    assert ids.tolist() == df["PatientID"].tolist() and labels.tolist() == df["Diagnosis"].tolist()
    MAPDP(likelihood=lik, random_state=0).fit(X)


def test_user_override():
    df = pd.DataFrame({"a": [1, 2, 3, 1, 2, 3], "b": [0.1, 0.5, 0.2, 0.9, 0.3, 0.4]})
    X, lik, _, _ = prepare(df, {"b": "ignored"}, {"a": "categorical"})
    assert list(X.columns) == ["a"] and lik == {"a": "categorical"}
    with pytest.raises(DataLoadError, match="holds text.*categorical"):
        prepare(pd.DataFrame({"t": ["u", "v", "w"], "x": [1.5, 2.0, 3.0]}), {"t": "feature"}, {"t": "poisson"})


# ----------------------------------------------------------------------------- bad files: one test each

def test_empty_file():
    with pytest.raises(EmptyFileError, match="empty"):
        read_table(b"")
    with pytest.raises(EmptyFileError, match="empty"):
        read_table(io.BytesIO(b"\n \n\r\n"))


def test_header_only():
    with pytest.raises(TooFewRowsError, match="header row.*no data rows.*at least 2"):
        read_table(b"age,sex,weight\n")


def test_single_data_row():
    with pytest.raises(TooFewRowsError, match="only 1 data row.*at least 2 rows"):
        read_table(b"age,sex,weight\n30,1,70.5\n")


def test_not_a_table_png():
    png = b"\x89PNG\r\n\x1a\n" + bytes(np.random.default_rng(0).integers(0, 256, 500, dtype=np.uint8))
    with pytest.raises(NotATableError, match="PNG image"):
        read_table(png, name="scan.csv")


def test_not_a_table_random_binary():
    blob = bytes(np.random.default_rng(1).integers(0, 256, 4000, dtype=np.uint8))
    with pytest.raises(NotATableError, match="binary data"):
        read_table(blob)


def test_unknown_encoding():
    data = "\u30c7\u30fc\u30bf,\u5024\n1,2\n3,4\n".encode("shift_jis")  # has byte 0x81, undefined in cp1252
    with pytest.raises(EncodingError, match="encoding could not be recognised.*CSV UTF-8"):
        read_table(data)


def test_thousands_of_categories():
    n = 3000
    codes = [f"free text note {i % 1500}" for i in range(n)]
    df = pd.DataFrame({"note": codes, "x": np.arange(n) % 7 + 0.5})
    sug = _role(suggest_roles_and_families(df), "note")
    assert sug["role"] == "ignored"
    assert "1500 different values" in sug["reason"] and "too many categories" in sug["reason"]
    with pytest.warns(DataLoadWarning, match="1500 categories"):
        prepare(df, {"note": "feature"}, {"note": "categorical"})


def test_all_missing_column():
    df, _ = read_table(b"a,b,c\n1,,2\n3,NA,4\n5,?,6\n")
    sug = _role(suggest_roles_and_families(df), "b")
    assert sug["role"] == "ignored" and "all 3 values are missing" in sug["reason"]
    with pytest.raises(DataLoadError, match="'b' has no values.*ignored"):
        prepare(df, {"b": "feature"}, {"b": "normal_gamma"})


def test_infinities():
    with pytest.warns(DataLoadWarning, match="'x' has 1 infinite"):
        df, rep = read_table(b"x,y\n1.5,1\ninf,2\n2.5,3\n3.5,4\n")
    assert any("infinite" in w for w in rep.warnings)
    assert "infinite value(s) will be treated as missing" in _role(suggest_roles_and_families(df), "x")["reason"]
    with pytest.warns(DataLoadWarning, match="infinite value"):
        X, _, _, _ = prepare(df)
    assert np.isnan(X["x"].iloc[1]) and len(X) == 4
    assert missing_summary(df)[0].set_index("column").loc["x", "n_missing"] == 1


def test_duplicate_column_names():
    with pytest.warns(DataLoadWarning, match=r"duplicate column name\(s\) \['age'\]"):
        df, _ = read_table(b"age,age,sex\n1,2,0\n3,4,1\n5,6,0\n")
    assert list(df.columns) == ["age", "age_2", "sex"]
    frame = pd.DataFrame([[1, 2], [3, 4]], columns=["a", "a"])
    with pytest.raises(DuplicateColumnsError, match="rename the columns"):
        suggest_roles_and_families(frame)


def test_label_with_one_value():
    df = pd.DataFrame({"class": ["a"] * 5, "x": [1.0, 2.5, 3.0, 4.5, 5.0]})
    sug = _role(suggest_roles_and_families(df), "class")
    assert sug["role"] == "ignored" and "single value" in sug["reason"]
    with pytest.raises(LabelError, match="only one value.*at least two classes"):
        prepare(df, {"class": "label"})


def test_no_error_is_a_pandas_traceback():
    """Every bad input above raises a DataLoadError (a ValueError) and nothing else."""
    bad = [b"", b"a,b\n", b"%PDF-1.4 ...", b"<html><body>hi</body></html>", b"a,b\n1,2\n3,4,5\n6,7\n",
           b'a,b\n"1,2\n3,4\n', bytes(range(256)) * 4]
    for data in bad:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                read_table(data)
            except DataLoadError as exc:
                assert str(exc)
            else:
                pass  # some of these are readable; the point is no other exception type
