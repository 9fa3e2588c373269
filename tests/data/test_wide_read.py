"""Wide tables (issue 28, part 1): the columns of a wide table are typed in batches
(``columns._typed_columns``), which must give exactly what typing each column alone gives
(``columns._column``, the careful path), on both readers and for Excel."""
import csv
import io
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import mapdp_core.data.loading.columns as columns
from mapdp_core.data.loading import DataLoadWarning, read_table
from mapdp_core.data.loading.read import _read_table

N_ROWS = 30
_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")


def _kinds(rng, n: int, decimal: str) -> list:
    """Generators of one column of ``n`` cells each, one per rule of the cell reader."""
    def num(x, digits=3):
        text = f"{x:.{digits}f}"
        return text.replace(".", ",") if decimal == "," else text

    def blanks(cells, share=0.15, token=""):
        return [token if rng.random() < share else c for c in cells]

    def few(cells, make, share=0.1):
        out = [make() if rng.random() < share else c for c in cells]
        out[1] = make()
        return out

    def day():
        return f"{rng.integers(1, 29):02d}"

    return [
        lambda: [num(v) for v in rng.normal(50, 20, n)],  # plain decimals
        lambda: [str(v) for v in rng.integers(-50, 500, n)],  # whole numbers: int64
        lambda: blanks([str(v) for v in rng.integers(0, 9, n)]),  # whole numbers with blanks: float64
        lambda: ["-0"] + blanks([str(v) for v in rng.integers(-3, 3, n - 1)], token="NA"),  # "-0" reads 0
        lambda: blanks([num(v, 2) for v in rng.normal(0, 1, n)], 0.2, rng.choice(["NA", "n/a", "?", ".", "null"])),
        lambda: list(rng.choice(["mild", "severe", "none", "-", "None"], n)),  # text
        lambda: few(list(rng.choice(["alpha", "beta"], n)), lambda: str(rng.integers(0, 9))),  # text with numbers
        lambda: few([num(v) for v in rng.normal(5, 1, n)], lambda: str(rng.choice(["<5", "n.d."]))),  # tokens
        lambda: few([num(v) for v in rng.normal(5, 1, n)],  # too many tokens: text
                    lambda: str(rng.choice(["<5", "n.d.", "a", "b", "c", "d", "e"])), 0.4),
        lambda: few([str(v) for v in rng.integers(10, 999, n)],  # thousands separators
                    lambda: f"{rng.integers(1000, 99999):,}".replace(",", "." if decimal == "," else ",")),
        lambda: few([num(v, 1) for v in rng.uniform(0, 100, n)], lambda: f"{rng.integers(0, 100)}%"),  # percent
        lambda: [f"{num(v, 1)} mg" for v in rng.uniform(1, 9, n)],  # a unit
        lambda: few([f"{num(v, 1)} mg" for v in rng.uniform(1, 9, n)], lambda: f"{rng.integers(1, 9)} g"),  # two
        lambda: blanks([f"2021-{rng.integers(1, 13):02d}-{day()}" for _ in range(n)]),  # ISO dates
        lambda: [f"{rng.integers(1, 13):02d}/{rng.integers(1, 13):02d}/2020" for _ in range(n)],  # ambiguous
        lambda: [f"{day()}.{rng.integers(1, 13):02d}.1999" for _ in range(n)],  # day first
        lambda: ["NA"] * n,  # missing only: float64 NaN
        lambda: [""] * n,  # empty (a column left out when it has no name either)
        lambda: few([num(v) for v in rng.normal(0, 1, n)], lambda: str(rng.choice(["inf", "-Infinity"]))),
        lambda: [f"{v:.2e}" for v in rng.lognormal(0, 3, n)],  # exponents
        lambda: few([str(v) for v in rng.integers(0, 9, n)], lambda: "12345678901234567890"),  # beyond 2**53
        lambda: few([num(v) for v in rng.normal(0, 1, n)], lambda: str(rng.choice(["TRUE", "FALSE"]))),
        lambda: list(rng.choice(["TRUE", "FALSE"], n)),
        lambda: few([f"{v:.1f}" for v in rng.normal(5, 1, n)], lambda: f"{rng.integers(1, 9)},5"),  # both marks
        lambda: [f"  {num(v)} " for v in rng.normal(0, 1, n)],  # spaces around
        lambda: blanks([f"ID{v:05d}" for v in rng.permutation(n)]),
    ]


def _mixed_table(n_cols: int, seed: int = 0, decimal: str = ".", duplicate: bool = False):
    """A header row and ``N_ROWS`` rows of ``n_cols`` columns of every kind, as a list of columns."""
    rng = np.random.default_rng(seed)
    kinds = _kinds(rng, N_ROWS, decimal)
    names = [f"c{j}" for j in range(n_cols)]
    if duplicate:
        names[5] = names[7] = "dup"
    return names, [kinds[(j * 7) % len(kinds)]() for j in range(n_cols)]


def _csv(names, cells, delimiter=",") -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(names)
    writer.writerows(zip(*cells))
    return out.getvalue().encode()


def _read(data, fast: bool = False, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataLoadWarning)
        return _read_table(data, sheet=None, header=kw.pop("header", "auto"), name=None, min_rows=2,
                           fast_path_bytes=0 if fast else 10**9)


def _column_by_column(monkeypatch, read):
    """``read()`` with every column typed alone by ``columns._column`` (the careful path)."""
    with monkeypatch.context() as m:
        m.setattr(columns, "_BATCH_ROWS", 0)
        return read()


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert list(a.columns) == list(b.columns)
    for name in a.columns:  # and the sign of each zero (assert_frame_equal takes -0.0 for 0.0)
        if a[name].dtype == np.float64:
            assert np.array_equal(np.signbit(a[name].to_numpy()), np.signbit(b[name].to_numpy())), name


def _same_report(a, b) -> None:
    assert a.warnings == b.warnings  # the same words, in the same order
    assert list(a.column_notes.items()) == list(b.column_notes.items())
    assert (a.delimiter, a.decimal, a.header, a.n_rows, a.n_cols) == (b.delimiter, b.decimal, b.header, b.n_rows,
                                                                     b.n_cols)


@pytest.mark.parametrize("fast", [False, True], ids=["careful reader", "pandas reader"])
@pytest.mark.parametrize("batch_cells", [None, 97], ids=["one batch", "many batches"])
def test_wide_table_typed_in_batches_equals_column_by_column(monkeypatch, fast, batch_cells):
    if batch_cells:  # batches that end inside the table (and hold a few columns each)
        monkeypatch.setattr(columns, "_BATCH_CELLS", batch_cells)
    names, cells = _mixed_table(300, duplicate=True)
    data = _csv(names, cells)
    df, rep = _read(data, fast)
    ref, ref_rep = _column_by_column(monkeypatch, lambda: _read(data, fast))
    _same(df, ref)
    _same_report(rep, ref_rep)
    # every rule was exercised
    kinds = df.dtypes.astype(str).value_counts()
    assert {"float64", "int64", "str", "datetime64[ns]"} <= set(kinds.index)
    assert rep.header and df.shape == (N_ROWS, 300)  # an empty column with a name is kept, as NaN
    assert "dup_2" in df.columns
    notes = " ".join(rep.column_notes.values())
    for said in ("percentages", "thousands separators", "in mg", "year-month-day", "day/month/year", "check a few"):
        assert said in notes
    said = " ".join(rep.warnings)
    for warned in ("infinite value", "are treated as missing", "different units", "both decimal marks"):
        assert warned in said


def test_wide_table_with_decimal_commas_equals_column_by_column(monkeypatch):
    names, cells = _mixed_table(200, seed=1, decimal=",")
    data = _csv(names, cells, delimiter=";")
    for fast in (False, True):
        df, rep = _read(data, fast)
        ref, ref_rep = _column_by_column(monkeypatch, lambda: _read(data, fast))
        assert rep.decimal == "," and rep.delimiter == ";"
        _same(df, ref)
        _same_report(rep, ref_rep)


_TRICKY = ["", "NA", "?", "nan", "1", "-0", "0", "2.5", ".5", "5.", "1e3", "inf", "-inf", "1,234", "1.234,5", "1 234",
           "1,5", "12%", "5 mg", "5 g", "$5", "abc", "<5", "None", "-", "2021-01-02", "03/04/2020", "TRUE", "FALSE",
           "12345678901234567890", "-18446744073709551615", "18446744073709551615", "0.001", "Inf", "INFINITY",
           "\u221e", "\u0661\u0662", "\u00fcber", "x-y"]


@pytest.mark.parametrize("seed", range(40))
def test_small_random_tables_typed_in_batches_equal_column_by_column(monkeypatch, seed):
    """Columns drawn from a few tricky cells each (so that some are plain numbers and others not),
    with either delimiter, through both readers."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(2, 8)), int(rng.integers(1, 12))
    cells = [list(rng.choice(rng.choice(_TRICKY, rng.integers(1, 5)), n)) for _ in range(d)]
    data = _csv([f"h{j}" for j in range(d)], cells, delimiter="," if seed % 2 else ";")
    for fast in (False, True):
        df, rep = _read(data, fast)
        ref, ref_rep = _column_by_column(monkeypatch, lambda: _read(data, fast))
        _same(df, ref)
        _same_report(rep, ref_rep)


def test_each_column_of_a_wide_table_reads_as_in_a_narrow_file():
    """Column j of a 30 x 300 table against a 30 x 3 file holding columns j-1, j, j+1: the batch
    leaks nothing from one column into another."""
    names, cells = _mixed_table(300, seed=2)
    whole, rep = _read(_csv(names, cells), header=True)
    for j, name in enumerate(names):
        part = [k for k in (j - 1, j, j + 1) if 0 <= k < len(names)]
        narrow, narrow_rep = _read(_csv([names[k] for k in part], [cells[k] for k in part]), header=True)
        pd.testing.assert_series_equal(whole[name], narrow[name], check_exact=True)
        assert rep.column_notes.get(name) == narrow_rep.column_notes.get(name)
        assert [w for w in rep.warnings if f"'{name}'" in w] == [w for w in narrow_rep.warnings if f"'{name}'" in w]


def test_wide_excel_sheet_equals_column_by_column(monkeypatch):
    openpyxl = pytest.importorskip("openpyxl")
    names, cells = _mixed_table(120, seed=3)
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(names)
    for row in zip(*cells):  # numbers as numbers, the rest as text, as a spreadsheet holds them
        sheet.append([float(c) if _NUMBER.fullmatch(c) else (c or None) for c in row])
    out = io.BytesIO()
    book.save(out)
    data = out.getvalue()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataLoadWarning)
        df, rep = read_table(data)
        ref, ref_rep = _column_by_column(monkeypatch, lambda: read_table(data))
    assert rep.format == "excel"
    _same(df, ref)
    _same_report(rep, ref_rep)


def test_a_100_by_5000_numeric_csv_reads():
    rng = np.random.default_rng(5)
    values = np.round(rng.normal(50, 20, size=(100, 5000)), 3)
    values[:, 1] = rng.integers(0, 100, 100)  # a column of whole numbers
    header = ",".join(f"v{j + 1}" for j in range(5000))
    lines = [",".join(f"{v:.3f}" if j != 1 else str(int(v)) for j, v in enumerate(row)) for row in values]
    data = (header + "\n" + "\n".join(lines) + "\n").encode()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataLoadWarning)
        df, rep = read_table(data)
    assert df.shape == (100, 5000) and (rep.n_rows, rep.n_cols) == (100, 5000) and rep.header
    assert list(df.columns[:3]) == ["v1", "v2", "v3"] and df.columns[-1] == "v5000"
    assert df["v2"].dtype == np.int64 and (df.dtypes == np.float64).sum() == 4999
    assert df["v2"].tolist() == values[:, 1].astype(int).tolist()
    for i, j in [(0, 0), (99, 4999), (50, 2500), (7, 123)]:
        assert df.iat[i, j] == float(f"{values[i, j]:.3f}")
    assert rep.warnings == [] and rep.column_notes == {}
