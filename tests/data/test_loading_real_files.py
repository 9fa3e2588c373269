"""Real files as users send them (issue 14): numbers with separators, units and dates, other
encodings, count-like measurements, free text, zeros for "not measured", odd dtypes, family
support, merged lines, Excel formulas without values, and the large-file reader.
Every file is built in memory."""
import io
import os
import re
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest

from mapdp_core.data.loading import (
    DataLoadError,
    DataLoadWarning,
    EncodingError,
    prepare,
    read_table,
    suggest_roles_and_families,
    suspicious_zeros,
)
from mapdp_core.data.loading.read import _read_table

DATASETS = os.path.join(os.path.dirname(__file__), "..", "..", "datasets")


def _quiet_read(data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataLoadWarning)
        return read_table(data, **kw)


def _sug(df):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataLoadWarning)
        return suggest_roles_and_families(df).set_index("column")


def _dataset(name):
    return _quiet_read(os.path.join(DATASETS, name))[0]


# ----------------------------------------------------------------------------- 1. numbers as people write them

def test_thousands_separators_in_a_point_decimal_file():
    df, rep = _quiet_read(b'id,amount,n\na,"1,234",1.5\nb,"12,500.5",2.5\nc,3,3.5\nd,"1,000,000",4.5\n')
    assert df["amount"].tolist() == [1234.0, 12500.5, 3.0, 1_000_000.0]
    assert "thousands separators" in rep.column_notes["amount"]
    sug = _sug(df)
    assert sug.loc["amount", "family"] == "normal_gamma"  # not a category per value
    assert "thousands separators" in sug.loc["amount", "reason"]


def test_european_file_with_thousands_points_and_decimal_commas():
    df, rep = _quiet_read("x;y;z\n1.234,5;2;1,5\n12,25;3;2,5\n7;4;3\n".encode("cp1252"))
    assert rep.delimiter == ";" and rep.decimal == ","
    assert df["x"].tolist() == [1234.5, 12.25, 7.0]
    assert df["z"].tolist() == [1.5, 2.5, 3.0]


def test_an_ambiguous_column_follows_the_files_decimal_mark():
    # "1.234" alone could be 1.234 or 1234: the file's convention decides (documented rule)
    european, rep = _quiet_read(b"a;b\n1.234;1,5\n2.500;2,5\n3.750;3,5\n")
    assert rep.decimal == "," and european["a"].tolist() == [1234, 2500, 3750]
    assert "thousands separators" in rep.column_notes["a"]
    english, rep = _quiet_read(b"a,b\n1.234,1.5\n2.500,2.5\n3.750,3.5\n")
    assert rep.decimal == "." and english["a"].tolist() == [1.234, 2.5, 3.75]
    assert "a" not in rep.column_notes


def test_a_column_proves_its_own_decimal_mark():
    # a decimal-comma column inside a point-decimal file (quoted, as exporters write it)
    df, rep = _quiet_read(b'a,b\n"1,5",1.5\n"2,25",2.5\n"3,125",3.5\n')
    assert df["a"].tolist() == [1.5, 2.25, 3.125]
    assert "decimal comma" in rep.column_notes["a"]


def test_percentages_and_units_are_numbers_with_a_note():
    text = ("pct;dose;bp;temp\n12%;5,2 mg;120 mmHg;37,5 \u00b0C\n3,5 %;10 mg;135 mmHg;38,1 \u00b0C\n"
            "0;2,5 mg;110 mmHg;36,9 \u00b0C\n40%;7 mg;;37 \u00b0C\n")
    df, rep = _quiet_read(text.encode("utf-8"))
    assert df["pct"].tolist() == [12.0, 3.5, 0.0, 40.0]
    assert df["dose"].tolist() == [5.2, 10.0, 2.5, 7.0]
    assert df["bp"].iloc[:3].tolist() == [120.0, 135.0, 110.0] and np.isnan(df["bp"].iloc[3])
    assert df["temp"].tolist() == [37.5, 38.1, 36.9, 37.0]
    assert "percentages" in rep.column_notes["pct"]
    assert "in mg" in rep.column_notes["dose"] and "in mmHg" in rep.column_notes["bp"]
    sug = _sug(df)
    for c in ("pct", "dose", "bp", "temp"):
        assert sug.loc[c, "role"] == "feature" and sug.loc[c, "family"] != "categorical"
    assert "mmHg" in sug.loc["bp", "reason"]


def test_two_units_in_one_column_stay_text_with_a_warning():
    with pytest.warns(DataLoadWarning, match=r"column 'dose' has numbers in different units \(mg, g\)"):
        df, _ = read_table(b"dose,x\n5 mg,1.5\n3 g,2.5\n7 mg,3.5\n")
    assert pd.api.types.is_string_dtype(df["dose"]) and df["dose"].tolist() == ["5 mg", "3 g", "7 mg"]


def test_dates_are_dates_and_left_out_with_a_note():
    df, rep = _quiet_read(b"visit,x\n2021-03-04,1.5\n2021-12-31,2.5\n,3.5\n2022-01-15,4.5\n")
    assert pd.api.types.is_datetime64_any_dtype(df["visit"])
    assert df["visit"].isna().tolist() == [False, False, True, False]
    sug = _sug(df)
    assert sug.loc["visit", "role"] == "ignored" and sug.loc["visit", "kind"] == "date"
    assert "a date" in sug.loc["visit", "reason"]
    assert "use it as a number of days if you want it" in sug.loc["visit", "reason"]
    with pytest.warns(DataLoadWarning, match="days since 1970-01-01"):
        X = prepare(df, {"visit": "feature"}, {"visit": "normal_gamma"}).X
    assert X["visit"].iloc[0] == (pd.Timestamp("2021-03-04") - pd.Timestamp("1970-01-01")).days
    assert np.isnan(X["visit"].iloc[2]) and len(X) == 4


def test_day_first_dates_and_the_ambiguous_case():
    df, rep = _quiet_read(b"d,x\n31/12/2020,1.5\n04/03/2021,2.5\n")
    assert df["d"].tolist() == [pd.Timestamp("2020-12-31"), pd.Timestamp("2021-03-04")]
    assert "day/month/year" in rep.column_notes["d"]
    df, rep = _quiet_read(b"d;x\n03/04/2021;1,5\n05/06/2021;2,5\n")  # no day above 12: the file's convention
    assert df["d"].iloc[0] == pd.Timestamp("2021-04-03") and "check a few dates" in rep.column_notes["d"]


# ----------------------------------------------------------------------------- 2. encodings

@pytest.mark.parametrize("data, encoding", [
    ("a,b\nJos\u00e9,1\nZo\u00eb,2\n".encode("utf-16"), "utf-16"),
    ("a,b\nJos\u00e9,1\nZo\u00eb,2\n".encode("utf-32"), "utf-32"),
    (b"\x00\x00\xfe\xff" + "a,b\nJos\u00e9,1\nZo\u00eb,2\n".encode("utf-32-be"), "utf-32"),
    ("a,b\nJos\u00e9,1\nZo\u00eb,2\n".encode("utf-32-le"), "utf-32-le"),
    ("a,b\nJos\u00e9,1\nZo\u00eb,2\n".encode("utf-32-be"), "utf-32-be"),
    ("a,b\nJos\u00e9,1\nZo\u00eb,2\n".encode("utf-16-be"), "utf-16-be"),
])
def test_wide_encodings_with_and_without_a_byte_order_mark(data, encoding):
    df, rep = _quiet_read(data)
    assert rep.encoding == encoding
    assert list(df.columns) == ["a", "b"] and df["a"].tolist() == ["Jos\u00e9", "Zo\u00eb"]


def test_gbk_text_is_read_as_chinese():
    text = "\u59d3\u540d,\u5e74\u9f84,\u57ce\u5e02\n\u5f20\u4e09,30,\u5317\u4eac\n\u674e\u56db,40,\u4e0a\u6d77\n"
    df, rep = _quiet_read(text.encode("gbk"))
    assert rep.encoding == "gb18030"
    assert list(df.columns) == ["\u59d3\u540d", "\u5e74\u9f84", "\u57ce\u5e02"]
    assert df.iloc[:, 0].tolist() == ["\u5f20\u4e09", "\u674e\u56db"]


def test_windows_1252_with_only_typographic_quotes():
    df, rep = _quiet_read("a,b\n\u201cquoted\u201d,1\nit\u2019s,2\n".encode("cp1252"))
    assert rep.encoding == "cp1252" and df["a"].tolist() == ["\u201cquoted\u201d", "it\u2019s"]


@pytest.mark.parametrize("data", [
    "\u59d3\u540d,\u5e74\u9f61\n\u5f35\u4e09,30\n\u674e\u56db,40\n".encode("big5"),
    "\u30c7\u30fc\u30bf,\u5024\n\u6771\u4eac,2\n\u5927\u962a,4\n".encode("shift_jis"),
])
def test_other_double_byte_encodings_are_refused_not_misread(data):
    with pytest.raises(EncodingError, match="could not be recognised.*Shift-JIS, Big5.*CSV UTF-8"):
        read_table(data)


def test_utf8_with_a_stray_latin1_byte_is_refused():
    data = "a,b\nJos\u00e9,1\nZo\u00eb,2\n".encode("utf-8") + "Ren\u00e9e,3\n".encode("latin-1")
    with pytest.raises(EncodingError, match=r"not valid UTF-8.*position 22.*CSV UTF-8"):
        read_table(data)


# ------------------------------------------------------------------- 3. counts only where counting is plausible

def test_pima_measurements_are_real_and_pregnancies_counts():
    sug = _sug(_dataset("pima_indians_diabetes.csv"))
    for c in ("age", "glucose", "pressure", "triceps", "insulin", "mass"):
        assert sug.loc[c, "family"] == "normal_gamma", (c, sug.loc[c, "reason"])
    assert sug.loc["pregnant", "family"] == "poisson"


def test_vehicle_shape_measurements_are_real():
    sug = _sug(_dataset("vehicle_statlog.csv"))
    features = sug[sug["role"] == "feature"]
    assert len(features) == 18 and (features["family"] == "normal_gamma").all(), features["family"].to_dict()


def test_auto_likelihood_uses_the_same_rule():
    from mapdp_core.selection.auto import auto_likelihood

    df = _dataset("pima_indians_diabetes.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lik = auto_likelihood(df).likelihood
    assert lik["age"] == lik["glucose"] == lik["pressure"] == "normal_gamma" and lik["pregnant"] == "poisson"


@pytest.mark.parametrize("lam", [6.0, 15.0, 40.0, 100.0])  # below about 5 the maximum is <= 10: binomial
def test_synthetic_poisson_columns_stay_counts(lam):
    rng = np.random.default_rng(int(lam))
    df = pd.DataFrame({"v1": rng.poisson(lam, 300), "other": rng.normal(size=300)})
    assert _sug(df).loc["v1", "family"] == "poisson"


def test_a_shifted_narrow_measurement_without_a_telling_name_is_real():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"v1": np.round(rng.normal(120, 6, 300)).astype(int), "other": rng.normal(size=300)})
    sug = _sug(df)
    assert sug.loc["v1", "family"] == "normal_gamma" and "far from zero" in sug.loc["v1", "reason"]


def test_a_named_count_stays_a_count_and_a_named_measurement_is_real():
    rng = np.random.default_rng(4)
    counts = rng.poisson(30, 200)
    df = pd.DataFrame({"n_admissions": counts, "heart_rate": counts + 40, "x": rng.normal(size=200)})
    sug = _sug(df)
    assert sug.loc["n_admissions", "family"] == "poisson" and "named like a count" in sug.loc["n_admissions", "reason"]
    assert sug.loc["heart_rate", "family"] == "normal_gamma"


# ----------------------------------------------------------------------------- 4. free text

def test_free_text_is_left_out_with_a_note():
    rng = np.random.default_rng(5)
    words = ["pain", "after", "meals", "improved", "slightly", "no", "change", "since", "last", "visit"]
    notes = [" ".join(rng.choice(words, 6)) + f" ({i})" for i in range(40)]
    df = pd.DataFrame({"comment": notes, "x": rng.normal(size=40)})
    sug = _sug(df)
    assert sug.loc["comment", "role"] == "ignored" and sug.loc["comment", "family"] is None
    assert sug.loc["comment", "reason"].startswith("free text")
    short = pd.DataFrame({"code": [f"K{i:03d}" for i in range(40)], "x": rng.normal(size=40)})
    assert _sug(short).loc["code", "role"] == "identifier"  # short unique codes still identify rows


# ----------------------------------------------------------------------------- 5. zeros that mean "not measured"

def test_suspicious_zeros_are_flagged_in_pima():
    df = _dataset("pima_indians_diabetes.csv")
    sug = _sug(df)
    assert sug.loc["glucose", "suspect_zeros"] == int((df["glucose"] == 0).sum()) == 5
    assert sug.loc["pressure", "suspect_zeros"] == 35 and sug.loc["mass", "suspect_zeros"] == 11
    assert "look like 'not measured'" in sug.loc["glucose", "reason"]
    assert "mark this column's zeros as missing" in sug.loc["glucose", "reason"]  # in words, no Python (issue 42)
    assert sug.loc["pregnant", "suspect_zeros"] == 0 and sug.loc["age", "suspect_zeros"] == 0


def test_zeros_that_are_values_are_not_flagged():
    rng = np.random.default_rng(6)
    assert suspicious_zeros(rng.poisson(2, 500)) == 0  # counts with zeros
    amounts = np.where(rng.random(500) < 0.4, 0.0, np.round(rng.gamma(2, 2, 500), 1))
    assert suspicious_zeros(amounts) == 0  # zero-inflated amounts reach down to 0.1
    assert suspicious_zeros(np.r_[0, 0, rng.normal(0, 1, 50)]) == 0  # negatives: 0 is mid-range
    assert suspicious_zeros(np.r_[0, 0, 0, np.arange(80, 120)]) == 3


def test_zeros_become_missing_only_when_asked():
    df = _dataset("pima_indians_diabetes.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataLoadWarning)
        plain = prepare(df)
        asked = prepare(df, zeros_as_missing=["glucose"])
        suggested = prepare(df, zeros_as_missing="suggested")
    assert plain.X["glucose"].isna().sum() == 0 and (plain.X["glucose"] == 0).sum() == 5
    assert asked.X["glucose"].isna().sum() == 5 and asked.X["pressure"].isna().sum() == 0
    assert any("5 zero(s) treated as missing" in n for n in asked.notes)
    for c in ("glucose", "pressure", "triceps", "insulin", "mass"):
        assert suggested.X[c].isna().sum() == (df[c] == 0).sum() > 0
    assert suggested.X["pregnant"].isna().sum() == 0 and len(suggested.X) == len(df)
    with pytest.raises(DataLoadError, match="zeros_as_missing names column"):
        prepare(df, zeros_as_missing=["nope"])


# ----------------------------------------------------------------------------- 6. kinds named correctly

def test_dates_durations_object_integers_and_empty_columns_are_named():
    n = 8
    df = pd.DataFrame({
        "admitted": pd.date_range("2020-01-01", periods=n),
        "stay": pd.to_timedelta(np.arange(n), unit="D") * 1.5,
        "visits": pd.Series([1, 5, 3, None, 7, 2, 3, 2], dtype=object),
        "blank": [None] * n,
        "x": np.linspace(0.5, 4, n),
    })
    sug = _sug(df)
    assert sug.loc["admitted", "kind"] == "date" and "a date" in sug.loc["admitted", "reason"]
    assert sug.loc["stay", "kind"] == "duration" and "a duration" in sug.loc["stay", "reason"]
    assert sug.loc["visits", "kind"] == "integer" and sug.loc["visits", "role"] == "feature"
    assert "read as numbers" in sug.loc["visits", "reason"]
    assert sug.loc["blank", "kind"] == "empty" and "an empty column" in sug.loc["blank", "reason"]
    assert not any("text" in sug.loc[c, "reason"] for c in ("admitted", "stay", "visits", "blank"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataLoadWarning)
        X = prepare(df, {"admitted": "feature", "stay": "feature"},
                    {"admitted": "normal_gamma", "stay": "normal_gamma"}).X
    assert X["stay"].tolist() == list(np.arange(n) * 1.5)
    assert X["admitted"].iloc[0] == (pd.Timestamp("2020-01-01") - pd.Timestamp("1970-01-01")).days


# ------------------------------------------------------------------- 7. a family whose support the column violates

@pytest.mark.parametrize("values, family, message", [
    ([0, 1, 2, 0, 1, 2], "bernoulli", "3 different values.*bernoulli needs two"),
    (["yes", "no", "maybe", "yes", "no", "no"], "bernoulli", "3 different values.*bernoulli needs two"),
    (pd.Categorical(["a", "b", "c", "a", "b", "c"]), "bernoulli", "bernoulli needs two"),
    (pd.array([1, 2, 3, 1, None, 2], dtype="Int64"), "bernoulli", "bernoulli needs two"),
    ([0, -1, 2, 3, 4, 5], "poisson", "negative.*poisson"),
    ([0, 1.5, 2, 3, 4, 5], "poisson", "non-integer.*poisson"),
    ([0, 1.37, 2, 3, 4, 5], "binomial", "not whole numbers.*binomial"),  # no scale of <= 11 levels
    ([0, 1.5, 2, 3, 4, 5], "geometric", "non-integer.*geometric"),
    ([0, -1.5, 2, 3, 4, 5], "exponential", "negative.*exponential"),
])
def test_prepare_refuses_a_family_the_column_does_not_fit(values, family, message):
    df = pd.DataFrame({"c": values, "x": [0.1, 0.7, 0.3, 0.9, 0.2, 0.5]})
    with pytest.raises(DataLoadError, match=message):
        prepare(df, {"c": "feature"}, {"c": family})


# ----------------------------------------------------------------------------- 8. unbalanced quotes

def test_quotes_that_merge_lines_are_reported():
    text = b'a,b\n1,"x\n2,y"\n3,"z\n4,w"\n5,v\n'
    with pytest.warns(DataLoadWarning, match=r"2 row\(s\) run over several lines of the file \(lines 2-3, 4-5\).*"
                                             r"6 non-blank lines gave 4 rows.*double quote"):
        df, rep = read_table(text)
    assert len(df) == 3 and any("double quote" in w for w in rep.warnings)
    with pytest.warns(DataLoadWarning, match=r"line break inside quotes.*double quote"):
        _read_table(text, sheet=None, header="auto", name=None, min_rows=2, fast_path_bytes=0)


def test_a_quote_never_closed_is_refused():
    with pytest.raises(DataLoadError, match=r"opened on line 3 is never closed"):
        read_table(b'a,b\n1,x\n2,"y\n3,z\n4,w\n')


# ----------------------------------------------------------------------------- 9. Excel formulas without values

def _workbook_with_formulas(cached: bool) -> bytes:
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "data"
    ws.append(["a", "b", "total"])
    for i in range(4):
        ws.append([i + 1.5, 2 * i, f"=A{i + 2}+B{i + 2}"])
    buf = io.BytesIO()
    wb.save(buf)
    data = buf.getvalue()
    if not cached:
        return data
    out = io.BytesIO()  # add the values a spreadsheet program would have saved
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            content = src.read(item.filename)
            if item.filename.startswith("xl/worksheets/"):
                content = re.sub(rb"<f>([^<]*)</f>", rb"<f>\1</f><v>1</v>", content)
            dst.writestr(item, content)
    return out.getvalue()


def test_formula_cells_without_saved_values_are_reported():
    with pytest.warns(DataLoadWarning, match=r"4 formula cell\(s\) in sheet 'data' have no saved result.*"
                                             r"column C \('total'\): 4 \(C2, C3, C4, \.\.\.\).*recalculate"):
        df, rep = read_table(_workbook_with_formulas(cached=False))
    assert df["total"].isna().all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataLoadWarning)
        df, rep = read_table(_workbook_with_formulas(cached=True))
    assert df["total"].tolist() == [1, 1, 1, 1] and rep.warnings == []


# ----------------------------------------------------------------------------- 10. the large-file reader

def _regular_file(n=300) -> bytes:
    rng = np.random.default_rng(7)
    lines = ["id;weight;dose;visit;group;flag;note"]
    for i in range(n):
        w = "NA" if i % 17 == 0 else f"{rng.normal(70, 9):.2f}".replace(".", ",")
        dose = f"{rng.integers(1, 40)} mg"
        visit = f"2021-{rng.integers(1, 13):02d}-{rng.integers(1, 29):02d}"
        lines.append(f"P{i:04d};{w};{dose};{visit};{rng.choice(['a', 'b', 'c'])};{rng.choice(['TRUE', 'FALSE'])};"
                     f"{'' if i % 5 else 'n.d.'}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def test_the_fast_reader_gives_the_careful_readers_table():
    data = _regular_file()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataLoadWarning)
        careful, rep_c = _read_table(data, sheet=None, header="auto", name=None, min_rows=2, fast_path_bytes=10**9)
        fast, rep_f = _read_table(data, sheet=None, header="auto", name=None, min_rows=2, fast_path_bytes=0)
    pd.testing.assert_frame_equal(fast, careful)
    assert rep_f.column_notes == rep_c.column_notes and rep_f.decimal == rep_c.decimal == ","
    assert (rep_f.delimiter, rep_f.header, rep_f.n_rows) == (rep_c.delimiter, rep_c.header, rep_c.n_rows)
    assert pd.api.types.is_datetime64_any_dtype(fast["visit"]) and fast["weight"].isna().sum() == 18


def test_the_fast_reader_falls_back_on_irregular_rows():
    data = b"a,b\n1,2\n3,4\n5,6,7\n"
    with pytest.raises(DataLoadError, match=r"row\(s\) 4 have more cells than the others"):
        _read_table(data, sheet=None, header="auto", name=None, min_rows=2, fast_path_bytes=0)


def test_quoted_header_and_cells_take_the_fast_reader():
    rng = np.random.default_rng(8)
    lines = ['"id","x","group"'] + [f'"r{i}",{rng.normal():.4f},"{rng.choice(["a", "b"])}"' for i in range(200)]
    data = ("\n".join(lines) + "\n").encode()
    careful, _ = _read_table(data, sheet=None, header="auto", name=None, min_rows=2, fast_path_bytes=10**9)
    fast, rep = _read_table(data, sheet=None, header="auto", name=None, min_rows=2, fast_path_bytes=0)
    pd.testing.assert_frame_equal(fast, careful)
    assert list(fast.columns) == ["id", "x", "group"] and rep.header


def test_a_large_file_is_read_by_the_fast_reader(monkeypatch):
    import mapdp_core.data.loading.read as read

    rng = np.random.default_rng(9)
    n = 220_000
    body = "\n".join(f"{a:.3f},{b},{c}" for a, b, c in zip(rng.normal(size=n), rng.poisson(3, n),
                                                              rng.choice(["x", "y"], n)))
    data = ("a,k,g\n" + body + "\n").encode()
    assert len(data) > read.FAST_PATH_BYTES
    calls = []
    original = read._fast_frame
    monkeypatch.setattr(read, "_fast_frame", lambda *a, **k: calls.append(1) or original(*a, **k))
    df, rep = read_table(data)
    assert calls and df.shape == (n, 3) and df["k"].dtype == np.int64 and rep.header


def test_values_converted_by_a_chunk_are_written_back_with_the_files_decimal_mark():
    # pandas' chunked reader may hand back a column as floats from one chunk and text from another
    from mapdp_core.data.loading.read import _cell_text

    assert _cell_text(70.12, ",") == "70,12" and _cell_text(70.12, ".") == "70.12"
    assert _cell_text(3, ",") == "3" and _cell_text(True, ".") == "TRUE"
    assert _cell_text("n.d.", ",") == "n.d." and _cell_text(None, ",") is None


@pytest.mark.parametrize("text", ["w;g\n70,12;a\n68,81;b\n75,76;a\n",
                                  "name;wert\n" + "".join(f"Jos\u00e9{i};{i},5\n" for i in range(50))])
def test_a_two_column_european_file_with_text_is_split_at_the_semicolon(text):
    df, rep = _quiet_read(text.encode("cp1252"))
    assert rep.delimiter == ";" and rep.decimal == "," and df.shape[1] == 2 and (df.dtypes == float).sum() == 1
