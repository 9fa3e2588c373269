"""Issue 27, clinic downloads: the assignments give the uploaded cells back as written, with the
values read beside the columns a rule converted; the profiles file names the level of each share;
the Data page shows each column's reason in full."""
import csv
import io

import numpy as np
import pandas as pd

from apptools import ok, start
from explorer import report, sources
from mapdp_core.data.loading import read_table
from mapdp_core.data.loading.export import csv_bytes

TIMEOUT = 240


def _clinic_csv(n: int = 60) -> str:
    rng = np.random.default_rng(0)
    lines = ["id,age,sex,ldl,adherence,bp,dose"]
    for i in range(n):
        age = "" if i % 7 == 0 else str(30 + i % 40)
        ldl = f"\"{1000 + 37 * i:,}\""  # "1,452"-style values
        bp = "0" if i % 9 == 0 else str(int(60 + 40 * (i % 2) + rng.integers(0, 10)))
        lines.append(f"{i + 1},{age},{'MF'[i % 2]},{ldl},{50 + i % 40}%,{bp},{-5 + i % 3}")
    return "\n".join(lines) + "\n"


def _rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def test_assignments_keep_the_uploaded_cells_and_add_the_values_read():
    raw = _clinic_csv().encode()
    table, how = read_table(raw, name="clinic.csv")
    assert table["ldl"].iloc[0] == 1000 and table["adherence"].iloc[0] == 50  # read as numbers
    assert report.keep_uploaded_cells(table, raw, how)
    d = sources.table_data(table, name="clinic.csv")
    out = report.assignments(d, np.arange(len(table)) % 2)
    rows = _rows(csv_bytes(out))
    head = rows[0]
    assert head[:5] == ["id", "age", "sex", "ldl", "ldl (as read)"] and head[-1] == "cluster"
    first = dict(zip(head, rows[1]))
    assert first["ldl"] == "1,000" and first["ldl (as read)"] == "1000"
    assert first["adherence"] == "50%" and float(first["adherence (as read)"]) == 50
    assert first["age"] == "" and dict(zip(head, rows[2]))["age"] == "31"  # "31", not 31.0
    assert first["dose"] == "-5"  # a plain negative number goes back as written, without a quote
    assert first["bp"] == "0" and "bp (as read)" not in head  # read as written: no second column
    assert len(rows) == len(table) + 1


def test_assignments_fall_back_to_the_values_when_the_file_does_not_line_up():
    raw = _clinic_csv().encode()
    table, how = read_table(raw, name="clinic.csv")
    assert not report.keep_uploaded_cells(table.iloc[:-1], raw, how)  # a row fewer: not the same table
    d = sources.table_data(table, name="clinic.csv")
    out = report.assignments(d, np.zeros(len(table), dtype=int))
    assert list(out.columns) == list(table.columns) + ["cluster"] and out["ldl"].iloc[0] == 1000


def test_profiles_csv_names_the_level_a_proportion_counts():
    from mapdp_core.evaluation.profiles import cluster_profiles

    table, _ = read_table(_clinic_csv().encode(), name="clinic.csv")
    prof = cluster_profiles(table[["sex", "age"]], np.arange(len(table)) % 2,
                            {"sex": "bernoulli", "age": "normal_gamma"})
    rows = _rows(csv_bytes(prof.tidy))
    assert rows[0][:6] == ["cluster", "feature", "kind", "statistic", "level", "value"]
    sex = [r for r in rows[1:] if r[1] == "sex" and r[3] == "proportion"]
    assert sex and all(r[4] == "M" for r in sex)


def test_data_page_shows_every_reason_in_full_and_the_download_keeps_the_cells():
    at = start(TIMEOUT)
    at.switch_page("pages/data.py").run()
    at.radio(key="w_data_source").set_value("Upload a table").run()
    at.file_uploader(key="w_upload").upload("clinic.csv", _clinic_csv().encode(), "text/csv").run()
    ok(at)
    reasons = next(e for e in at.expander if e.label == "Why each column is handled this way")
    text = " ".join(m.value for m in reasons.markdown)
    assert "thousands separators" in text and "percentages" in text and "look like 'not measured'" in text
    at.button(key="use_upload").click().run()
    ok(at)
    d = at.session_state["data"]
    out = report.assignments(d, np.zeros(d.n_rows, dtype=int))
    assert out["ldl"].iloc[0] == "1,000" and out["adherence"].iloc[0] == "50%"
