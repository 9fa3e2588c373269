"""Issue 29 (reading real files): line separators inside cells, accounting negatives, currency
with European formatting, mixed decimal marks in one column, percentages mixed with fractions.
Each case is read by the careful reader and by the large-file (pandas) reader, which must agree;
every file is built in memory."""
import csv
import io
import warnings

import numpy as np
import pandas as pd
import pytest

import mapdp_core.data.loading.read as read
from mapdp_core.data.loading import DataLoadWarning, read_table, suggest_roles_and_families
from mapdp_core.data.loading.read import _read_table
from mapdp_core.data.loading.text_rows import _lines


def _read(data, fast: bool, header="auto"):
    if isinstance(data, str):
        data = data.encode("utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataLoadWarning)
        return _read_table(data, sheet=None, header=header, name=None, min_rows=2,
                           fast_path_bytes=0 if fast else 10**9)


def _both(data, header="auto"):
    """The careful reader's table and report, after checking that the pandas reader gives the same."""
    careful, rep = _read(data, False, header)
    fast, rep_f = _read(data, True, header)
    pd.testing.assert_frame_equal(fast, careful, check_exact=True)
    assert rep_f.column_notes == rep.column_notes and rep_f.warnings == rep.warnings
    assert (rep_f.delimiter, rep_f.decimal, rep_f.header) == (rep.delimiter, rep.decimal, rep.header)
    return careful, rep


def _same(values, expected) -> None:
    got = np.asarray(values, dtype=float)
    assert np.array_equal(got, np.asarray(expected, dtype=float), equal_nan=True), (list(got), expected)


# ----------------------------------------------------------------------------- 1. line separators in a cell

SEPARATORS = {"U+2028": "\u2028", "U+2029": "\u2029", "NEL": "\x85", "form feed": "\x0c", "vertical tab": "\x0b",
              "FS": "\x1c", "GS": "\x1d", "RS": "\x1e"}


def test_lines_end_at_lf_crlf_and_cr_only():
    assert _lines("a\u2028b\r\nc\rd\ne\x0cf\x85g\n") == ["a\u2028b", "c", "d", "e\x0cf\x85g"]
    assert _lines("a\nb") == ["a", "b"] and _lines("a\n\nb\n") == ["a", "", "b"] and _lines("") == []


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
@pytest.mark.parametrize("quoted", [False, True], ids=["bare", "quoted"])
@pytest.mark.parametrize("sep", list(SEPARATORS.values()), ids=list(SEPARATORS))
def test_a_line_separator_inside_a_cell_stays_in_the_cell(sep, quoted, end):
    q = '"' if quoted else ""
    # 4 lines: a header and 3 rows (one separator in the first row, one in the third)
    text = end.join(["id,memo,x", f"1,{q}first{sep}half{q},10", "2,plain,20", f"3,{q}a{sep}b{q},30"]) + end
    df, rep = _both(text)
    assert df.shape == (3, 3) and list(df.columns) == ["id", "memo", "x"] and rep.header
    assert df["memo"].tolist() == [f"first{sep}half", "plain", f"a{sep}b"]
    assert df["id"].tolist() == [1, 2, 3] and df["x"].tolist() == [10, 20, 30]
    assert df["x"].dtype == np.int64 and not rep.warnings


def test_line_separators_in_a_semicolon_file_with_a_bom_and_a_sep_line():
    text = "\ufeffsep=;\r\nname;weight\r\nJo\u2028Ann;70,5\r\nB\x0bob;82,25\r\nCy\u2029;65\r\n"
    df, rep = _both(text.encode("utf-8"))
    assert rep.delimiter == ";" and rep.decimal == "," and df.shape == (3, 2)
    assert df["name"].tolist() == ["Jo\u2028Ann", "B\x0bob", "Cy"]  # an edge separator is stripped, as spaces are
    _same(df["weight"], [70.5, 82.25, 65.0])


def test_a_large_file_with_line_separators_and_number_formats_takes_the_pandas_reader(monkeypatch):
    rows = ["id,memo,amount,share"]
    memos = ["one\u2028two", "plain", "form\x0cfeed", '"quoted\u2029para"', "nel\x85x"]
    amounts = ["(12)", "5", '"(1,234.50)"', "7", '"$1,200.50"']
    shares = ["12%", "45%", "0.5", "80%"]
    n = 82_000
    for i in range(n):
        rows.append(f"{i},{memos[i % 5]},{amounts[i % 5]},{shares[i % 4]}")
    data = ("\n".join(rows) + "\n").encode("utf-8")
    assert len(data) > read.FAST_PATH_BYTES
    results = []
    original = read._fast_frame
    monkeypatch.setattr(read, "_fast_frame", lambda *a, **k: results.append(original(*a, **k)) or results[-1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataLoadWarning)
        df, rep = read_table(data)
    assert len(results) == 1 and results[0] is not None  # the pandas reader read it, without falling back
    careful, rep_c = _read(data, False)
    pd.testing.assert_frame_equal(df, careful, check_exact=True)
    assert rep.column_notes == rep_c.column_notes
    assert df.shape == (n, 4) and df["id"].tolist()[-3:] == [n - 3, n - 2, n - 1]
    assert df["memo"].tolist()[:5] == ["one\u2028two", "plain", "form\x0cfeed", "quoted\u2029para", "nel\x85x"]
    _same(df["amount"].iloc[:5], [-12, 5, -1234.5, 7, 1200.5])
    _same(df["share"].iloc[:4], [12, 45, 50, 80])
    assert "parentheses" in rep.column_notes["amount"] and "same scale" in rep.column_notes["share"]


# ----------------------------------------------------------------------------- 2. accounting negatives

def test_accounting_negatives_are_negative_numbers_with_a_note():
    df, rep = _both('id,balance\na,(12)\nb,5\nc,"(1,234.50)"\nd,7\ne,"$(2,000)"\n')
    _same(df["balance"], [-12, 5, -1234.5, 7, -2000])
    note = rep.column_notes["balance"]
    assert "3 cell(s) in parentheses read as negative numbers" in note and "'(12)' reads -12" in note
    sug = suggest_roles_and_families(df).set_index("column")
    assert sug.loc["balance", "role"] == "feature" and sug.loc["balance", "kind"] != "text"


def test_accounting_negatives_whole_numbers_stay_integers():
    df, rep = _both("id,delta\na,(12)\nb,5\nc,(3)\nd,0\n")
    assert df["delta"].dtype == np.int64 and df["delta"].tolist() == [-12, 5, -3, 0]
    assert "2 cell(s) in parentheses" in rep.column_notes["delta"]


def test_accounting_negatives_in_a_european_file():
    df, rep = _both("id;saldo\na;(1.234,50 \u20ac)\nb;2,5 \u20ac\nc;(7 \u20ac)\n".encode("cp1252"))
    assert rep.decimal == ","
    _same(df["saldo"], [-1234.5, 2.5, -7])
    assert "parentheses" in rep.column_notes["saldo"] and "decimal comma" in rep.column_notes["saldo"]


def test_parentheses_that_are_not_a_number_stay_text():
    df, rep = _both("id,remark\na,(see note)\nb,(12) mg and (3) g\nc,(-12)\nd,((5))\n")
    assert df["remark"].tolist() == ["(see note)", "(12) mg and (3) g", "(-12)", "((5))"]
    assert "remark" not in rep.column_notes


# ----------------------------------------------------------------------------- 3. currency, European formatting

def test_euro_amounts_with_thousands_points_and_decimal_commas():
    df, rep = _both("id;price\na;1.200 \u20ac\nb;\u20ac1.200\nc;3,50 \u20ac\nd;1 200,50 \u20ac\n".encode("utf-8"))
    _same(df["price"], [1200, 1200, 3.5, 1200.5])
    note = rep.column_notes["price"]
    assert "in \u20ac" in note and "decimal comma" in note and "groups thousands" in note


def test_dollar_amounts_with_thousands_commas():
    df, rep = _both('id,cost\na,"$1,200.50"\nb,$3\nc,$10.25\n')
    _same(df["cost"], [1200.5, 3, 10.25])
    assert "in $" in rep.column_notes["cost"] and "decimal point, ',' groups thousands" in rep.column_notes["cost"]


def test_space_grouped_euro_amounts():
    df, rep = _both('id,total\na,"1 200,50 \u20ac"\nb,15 \u20ac\nc,"2 000 000,00 \u20ac"\n'.encode("utf-8"))
    _same(df["total"], [1200.5, 15, 2_000_000])
    assert "decimal comma, a space groups thousands" in rep.column_notes["total"]


@pytest.mark.parametrize("delimiter", [",", ";"])
def test_money_that_no_cell_decides_reads_as_thousands_and_says_so(delimiter):
    # "1.200" alone could be 1.2 or 1200; money is written with 0 or 2 decimals: 1200, and the note says why
    df, rep = _both(f"id{delimiter}price\na{delimiter}\u20ac1.200\nb{delimiter}\u20ac2.500\nc{delimiter}\u20ac30\n"
                    .encode("utf-8"))
    _same(df["price"], [1200, 2500, 30])
    note = rep.column_notes["price"]
    assert "no cell shows which mark is the decimal one" in note and "2 cell(s) such as '\u20ac1.200'" in note
    assert "(which could be 1.2)" in note and "money" in note


def test_several_thousands_groups_decide_the_column():
    df, rep = _both("id,price\na,1.234.567 \u20ac\nb,1.200 \u20ac\nc,5 \u20ac\n".encode("utf-8"))
    _same(df["price"], [1_234_567, 1200, 5])
    assert "'.' groups thousands" in rep.column_notes["price"]


def test_an_ambiguous_money_cell_read_as_decimals_is_said():
    df, rep = _both("id,price\na,$1.200\nb,$3.50\nc,$4.25\n")
    _same(df["price"], [1.2, 3.5, 4.25])
    note = rep.column_notes["price"]
    assert "1 cell(s) such as '$1.200' could also mean 1200" in note and "decimal point" in note


def test_plain_ambiguous_numbers_in_a_point_file_are_unchanged():
    df, rep = _both("a,b\n1.234,1.5\n2.500,2.5\n3.750,3.5\n")  # the ordinary reading, as every CSV reader gives
    _same(df["a"], [1.234, 2.5, 3.75])
    assert "a" not in rep.column_notes


# ----------------------------------------------------------------------------- 4. mixed separators in one column

def test_twelve_thousand_next_to_a_decimal_comma_is_not_silently_twelve():
    df, rep = _both('id,x\na,"12,000"\nb,"1,5"\nc,3\n')
    _same(df["x"], [12, 1.5, 3])  # the column proves a decimal comma ("1,5"): "12,000" reads 12.000
    note = rep.column_notes["x"]
    assert "1 cell(s) such as '12,000' could also mean 12000" in note
    assert "read as 12 with the decimal comma that the column's other cells prove" in note


def test_ambiguous_cells_read_by_the_files_own_mark_are_ordinary():
    # the mirror of "1.234" reading 1.234 in a point file: with the file's decimal comma, "12,000" is 12
    # (a European writes twelve thousand "12.000"); the notes do not call the ordinary reading out
    df, rep = _both("id;x;y\na;12,000;1,5\nb;3,000;2,5\nc;7;3\n")
    assert rep.decimal == ","
    _same(df["x"], [12, 3, 7])
    assert "x" not in rep.column_notes and not rep.warnings
    # the same cells in a file with a decimal point are not the file's convention: said
    df, rep = _both('id,x,y\na,"12,000",1.5\nb,"3,000",2.5\nc,"7,5",3\n')
    assert rep.decimal == "."
    _same(df["x"], [12, 3, 7.5])
    assert "2 cell(s) such as '12,000' could also mean 12000" in rep.column_notes["x"]


def test_contradicting_cells_are_read_by_the_majority_with_a_note_and_a_warning():
    text = 'id,x\na,"1,5"\nb,"2,5"\nc,3.5\nd,"4,25"\ne,"1,234,567"\n'
    df, rep = _both(text)
    _same(df["x"], [1.5, 2.5, 3.5, 4.25, 1_234_567])
    note = rep.column_notes["x"]
    assert "both decimal marks: 3 cell(s) prove a decimal comma and 2 a decimal point" in note
    assert "convention is the decimal comma" in note and "'3.5' reads 3.5" in note
    assert any(w.startswith("column 'x' writes numbers with both decimal marks: 2 cell(s)") for w in rep.warnings)
    with pytest.warns(DataLoadWarning, match="column 'x' writes numbers with both decimal marks"):
        read_table(text.encode())


def test_a_point_majority_reads_a_stray_decimal_comma():
    df, rep = _both('id,x\na,1.5\nb,2.25\nc,"3,5"\nd,"1,200"\n')
    _same(df["x"], [1.5, 2.25, 3.5, 1200])  # "1,200" is ambiguous: the majority's point makes it 1200
    assert "convention is the decimal point" in rep.column_notes["x"]
    assert "1 a decimal comma (such as '3,5')" in rep.column_notes["x"]


def test_a_tie_follows_the_files_decimal_mark():
    df, rep = _both('id,x\na,1.5\nb,"2,5"\nc,3\n')
    _same(df["x"], [1.5, 2.5, 3])
    assert "convention is the decimal point" in rep.column_notes["x"] and rep.warnings


# ----------------------------------------------------------------------------- 5. percentages and fractions

def test_an_all_percent_column_keeps_its_scale():
    df, rep = _both("id,rate\na,79%\nb,12%\nc,3,5 %\n".replace("3,5 %", '"3,5 %"'))
    _same(df["rate"], [79, 12, 3.5])
    assert "percentages ('12%' reads 12)" in rep.column_notes["rate"]


def test_fractions_in_a_percent_column_are_put_on_its_scale():
    df, rep = _both("id,rate\na,0.12\nb,12%\nc,45%\nd,0.07\ne,50%\nf,0\ng,80%\n")
    _same(df["rate"], [12, 12, 45, 7, 50, 0, 80])  # exactly 7, not 7.000000000000001
    note = rep.column_notes["rate"]
    assert "2 cell(s) written as fractions without '%' were put on the same scale ('0.12' reads 12)" in note
    assert not rep.warnings


def test_percentages_in_a_column_of_fractions_are_put_on_its_scale():
    df, rep = _both("id,rate\na,0.12\nb,0.3\nc,45%\nd,0.5\n")
    _same(df["rate"], [0.12, 0.3, 0.45, 0.5])
    assert "fractions, as most cells are written; 1 cell(s) written with '%'" in rep.column_notes["rate"]


@pytest.mark.parametrize("cells, plain", [(["15", "12%", "45%"], 1), (["1", "45%", "60%"], 1),
                                          (["0.5%", "0.3", "0.2%"], 1), (["120", "40", "12%"], 2)])
def test_plain_numbers_that_may_be_on_another_scale_are_flagged(cells, plain):
    df, rep = _both("id,rate\n" + "".join(f"r{i},{c}\n" for i, c in enumerate(cells)))
    _same(df["rate"], [float(c.rstrip("%")) for c in cells])  # read as written
    assert f"{plain} cell(s) written without '%'" in rep.column_notes["rate"]
    assert any(w.startswith("column 'rate' mixes") and f"and {plain} without" in w for w in rep.warnings)


def test_zeros_are_the_same_on_both_scales():
    df, rep = _both("id,rate\na,0\nb,12%\nc,45%\n")
    _same(df["rate"], [0, 12, 45])
    assert rep.column_notes["rate"] == "read as numbers: percentages ('12%' reads 12)" and not rep.warnings


# ----------------------------------------------------------------------------- fuzz-style combinations

# (name, cells of column "v", expected values, what the note on "v" must say (by delimiter when it depends
# on it; None: no note), whether a warning names "v")
KINDS = [
    ("accounting", ["(12)", "5", "(1,234.50)", "7"], [-12, 5, -1234.5, 7], "in parentheses read as negative", False),
    ("accounting money", ["$(12)", "$5", "($1,234.50)"], [-12, 5, -1234.5], "2 cell(s) in parentheses", False),
    ("euro suffix", ["1.200 \u20ac", "3,50 \u20ac", "12 \u20ac"], [1200, 3.5, 12], "'.' groups thousands", False),
    ("euro prefix", ["\u20ac1.200", "\u20ac3,50", "\u20ac 7"], [1200, 3.5, 7], "decimal comma", False),
    ("dollar", ["$1,200.50", "$3", "$10.25"], [1200.5, 3, 10.25], "',' groups thousands", False),
    ("space groups", ["1 200,50 \u20ac", "15 \u20ac", "2,5 \u20ac"], [1200.5, 15, 2.5], "a space groups", False),
    ("money undecided", ["\u20ac1.200", "\u20ac2.500"], [1200, 2500], "no cell shows which mark", False),
    # with a comma delimiter the file's mark is a point, and the column's comma is said; with a semicolon or
    # a tab the file's mark is this column's comma, and "12,000" reading 12 is the file's convention
    ("12,000 and 1,5", ["12,000", "1,5", "3"], [12, 1.5, 3],
     {"comma": "could also mean 12000", "semicolon": None, "tab": None}, False),
    ("both marks", ["1,5", "2,5", "3.5", "4,25"], [1.5, 2.5, 3.5, 4.25], "both decimal marks", True),
    ("all percent", ["79%", "12%", "40%"], [79, 12, 40], "percentages ('12%' reads 12)", False),
    ("fractions in percent", ["0.12", "12%", "45%", "50%"], [12, 12, 45, 50], "put on the same scale", False),
    ("percent in fractions", ["0.12", "0.3", "0.5", "45%"], [0.12, 0.3, 0.5, 0.45], "fractions, as most", False),
    ("percent and plain", ["15", "12%", "45%"], [15, 12, 45], "1 cell(s) written without '%'", True),
    # codes: kept as their text on both readers (the values compared here are that text read as numbers)
    ("leading zero", ["02134", "10115", "007", "80331"], [2134, 10115, 7, 80331], "leading zero", False),
    ("long id", ["110101199003071234", "110101199003071235", "9920101199003071236"],
     [110101199003071234, 110101199003071235, 9920101199003071236], "more than 15 digits", False),
]
DELIMITERS = {"comma": ",", "semicolon": ";", "tab": "\t"}
MEMO_SEPARATORS = ["\u2028", "\x0c", "\x85", "\u2029", "\x0b"]


def _fuzz_cases():
    cases = []
    for k, (kind, cells, expected, said, warned) in enumerate(KINDS):
        for d, delimiter in enumerate(DELIMITERS):
            for v in range(4):  # quoting, byte-order mark, a gap and a line separator vary together
                quote_all, bom, gap = bool(v & 1), bool(v & 2), (k + v) % 2 == 1
                sep = MEMO_SEPARATORS[(k + v + d) % len(MEMO_SEPARATORS)]
                cases.append(pytest.param(kind, delimiter, quote_all, bom, gap, sep,
                                          id=f"{kind}-{delimiter}-{'quoted' if quote_all else 'bare'}"
                                             f"{'-bom' if bom else ''}{'-gap' if gap else ''}-{ord(sep):x}"))
    return cases


@pytest.mark.parametrize("kind, delimiter, quote_all, bom, gap, sep", _fuzz_cases())
def test_number_formats_in_many_files(kind, delimiter, quote_all, bom, gap, sep):
    _, cells, expected, said, warned = next(k for k in KINDS if k[0] == kind)
    cells, expected = list(cells), [float(x) for x in expected]
    if gap:  # a missing cell in the middle: NaN there, the rest unchanged
        cells.insert(1, "" if len(cells) % 2 else "NA")
        expected.insert(1, np.nan)
    memo = [f"note{i}{sep}more" for i in range(len(cells))]
    out = io.StringIO()
    writer = csv.writer(out, delimiter=DELIMITERS[delimiter], lineterminator="\r\n" if bom else "\n",
                        quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
    writer.writerow(["id", "memo", "v"])
    writer.writerows([f"r{i}", m, c] for i, (m, c) in enumerate(zip(memo, cells)))
    data = (("\ufeff" if bom else "") + out.getvalue()).encode("utf-8")
    df, rep = _both(data)
    assert list(df.columns) == ["id", "memo", "v"] and len(df) == len(cells)
    assert df["memo"].tolist() == memo  # the separator stayed inside its cell, on both readers
    _same(df["v"], expected)
    if kind in ("leading zero", "long id"):  # the cells' exact text
        assert df["v"].dropna().tolist() == [c for c in cells if c not in ("", "NA")]
    said = said[delimiter] if isinstance(said, dict) else said
    if said is None:
        assert "v" not in rep.column_notes, rep.column_notes
    else:
        assert said in rep.column_notes.get("v", ""), rep.column_notes
    assert any(w.startswith("column 'v' ") for w in rep.warnings) == warned, rep.warnings
