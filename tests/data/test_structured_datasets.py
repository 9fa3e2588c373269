"""The structured tables of datasets/structured/ (sequences, groups, subjects) load with the
shapes, columns and roles documented in datasets/README.md ("Sequences, groups and
subjects"), their files have the README's SHA-256, and each kind's intended estimator runs on
a small slice."""
import hashlib
import re
import time

import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP, MAPIHMM, HardHDP, HardHDPHMM, MixedEffectsMAPDP
from mapdp_core.data.datasets import (
    DATASETS_DIR, STRUCTURED, STRUCTURED_DIR, StructuredDataset, list_datasets, list_structured, load_structured,
    structured_path)

README = DATASETS_DIR / "README.md"

#: name -> (rows, columns in file order, kind, features, time, subject, truth, response)
EXPECTED = {
    "beaver2": (100, ["minutes", "day", "clock_hhmm", "temp", "activ"], "sequence", ["temp"], "minutes",
                None, "activ", None),
    "geyser": (299, ["eruption", "waiting", "duration"], "sequence", ["waiting", "duration"], "eruption",
               None, None, None),
    "exam": (4059, ["school", "student", "normexam", "standLRT"], "groups", ["normexam", "standLRT"], None,
             "school", None, None),
    "mathachieve": (7185, ["School", "MathAch", "SES", "Minority", "Sex"], "groups", ["MathAch", "SES"], None,
                    "School", None, None),
    "sleepstudy": (180, ["Reaction", "Days", "Subject"], "longitudinal", ["Days"], "Days", "Subject", None,
                   "Reaction"),
    "chickweight": (578, ["Chick", "Time", "weight", "Diet"], "longitudinal", ["Time"], "Time", "Chick", "Diet",
                    "weight"),
    "btheb": (380, ["patient", "month", "bdi", "drug", "length", "treatment"], "longitudinal", ["month"], "month",
              "patient", "treatment", "bdi"),
}
#: distinct groups / subjects per table
N_GROUPS = {"exam": 65, "mathachieve": 160, "sleepstudy": 18, "chickweight": 50, "btheb": 100}


def _readme_sha256() -> dict:
    found = re.findall(r"^([0-9a-f]{64})  structured/(\S+)\.csv$", README.read_text(encoding="utf-8"), re.M)
    return {name: sha for sha, name in found}


def test_registry_and_listing_match_the_documented_tables():
    assert set(STRUCTURED) == set(EXPECTED)
    df = list_structured()
    assert list(df.columns) == ["name", "kind", "rows", "description"]
    assert list(df["name"]) == sorted(EXPECTED)
    for row in df.itertuples():
        assert (row.rows, row.kind) == (EXPECTED[row.name][0], EXPECTED[row.name][2])
        assert isinstance(row.description, str) and row.description.endswith(".")
    # the flat-table API is untouched: none of these is listed there
    assert set(list_datasets()["name"]).isdisjoint(EXPECTED)
    assert {p.stem for p in STRUCTURED_DIR.glob("*.csv")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_loads_with_documented_shape_columns_and_roles(name):
    rows, columns, kind, features, time_col, subject, truth, response = EXPECTED[name]
    d = load_structured(name)
    assert isinstance(d, StructuredDataset) and d.name == name
    assert d.table.shape == (rows, len(columns))
    assert list(d.table.columns) == columns
    assert (d.kind, d.features, d.time, d.subject, d.truth, d.response) == (
        kind, features, time_col, subject, truth, response)
    assert isinstance(d.description, str) and d.description
    for role in [*d.features, d.time, d.subject, d.truth, d.response]:
        assert role is None or role in d.table.columns
    for c in d.features + [c for c in (d.time, d.response) if c is not None]:
        assert pd.api.types.is_numeric_dtype(d.table[c]), c
    needed = d.features + [c for c in (d.time, d.subject, d.truth, d.response) if c is not None]
    assert not d.table[needed].isna().any().any()
    assert int(d.table.isna().sum().sum()) == 0  # documented: no file has a missing cell
    if d.subject is not None:
        assert d.table[d.subject].nunique() == N_GROUPS[name]
    if kind == "groups":
        assert d.time is None and d.response is None
    if kind == "sequence":
        assert d.subject is None and d.table[d.time].is_monotonic_increasing
    if kind == "longitudinal":
        assert d.time in d.features and d.response is not None
        # rows in time order within subject, subjects contiguous
        t = d.table
        assert (t.groupby(t[d.subject], sort=False)[d.time].apply(lambda s: s.is_monotonic_increasing)).all()
        assert (t[d.subject] != t[d.subject].shift()).sum() == N_GROUPS[name]
    if d.truth is not None and d.subject is not None:
        assert (d.table.groupby(d.subject)[d.truth].nunique() == 1).all()  # constant within subject


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sha256_equals_the_readme(name):
    documented = _readme_sha256()
    assert set(documented) == set(EXPECTED)
    assert hashlib.sha256(structured_path(name).read_bytes()).hexdigest() == documented[name]


def test_sleepstudy_copy_is_the_test_file():
    test_copy = DATASETS_DIR.parent / "tests" / "fixtures" / "sleepstudy.csv"
    assert structured_path("sleepstudy").read_bytes() == test_copy.read_bytes()


def test_rows_in_file_order_and_documented_values():
    b = load_structured("beaver2").table
    assert list(b["minutes"]) == list(range(0, 1000, 10))
    assert list(b["activ"]) == [0] * 38 + [1] * 62
    assert (b["day"].iloc[0], b["clock_hhmm"].iloc[0], b["temp"].iloc[0]) == (307, 930, 36.58)
    assert list(load_structured("geyser").table["eruption"]) == list(range(1, 300))
    bt = load_structured("btheb").table
    assert bt.groupby("month").size().to_dict() == {0: 100, 2: 97, 4: 73, 6: 58, 8: 52}
    assert list(bt["patient"].iloc[:7]) == [1, 1, 1, 2, 2, 2, 2]
    assert list(bt["bdi"].iloc[:3]) == [29, 2, 2]
    assert bt.drop_duplicates("patient")["treatment"].value_counts().to_dict() == {"BtheB": 52, "TAU": 48}
    ch = load_structured("chickweight").table
    assert ch.drop_duplicates("Chick")["Diet"].value_counts().sort_index().to_dict() == {1: 20, 2: 10, 3: 10, 4: 10}
    assert list(ch["weight"].iloc[:3]) == [42, 51, 59]
    ex = load_structured("exam").table
    assert ex["school"].is_monotonic_increasing and int(ex.duplicated(["school", "student"]).sum()) == 4
    m = load_structured("mathachieve").table
    assert m["Minority"].value_counts().to_dict() == {"No": 5211, "Yes": 1974}
    assert m["School"].iloc[0] == 1224


def test_unknown_name_raises_and_lists_the_choices():
    with pytest.raises(ValueError) as info:
        load_structured("nope")
    for name in EXPECTED:
        assert name in str(info.value)
    with pytest.raises(ValueError):
        load_structured(3)
    with pytest.raises(ValueError):
        structured_path("iris")  # a flat table is not a structured one


def test_case_insensitive_and_fresh_tables():
    a, b = load_structured("BeAvEr2 "), load_structured("beaver2")
    assert a.name == "beaver2"
    a.table.loc[0, "temp"] = -1.0
    a.features.append("day")
    assert b.table.loc[0, "temp"] == 36.58 and load_structured("beaver2").features == ["temp"]
    with pytest.raises(AttributeError):
        b.kind = "groups"  # frozen


# ----------------------------------------------------------------- smoke tests, one per kind
def test_sequence_smoke_beaver2_univariate_defaults():
    d = load_structured("beaver2")
    X = d.table[d.features].to_numpy(dtype=float)[:60]
    t0 = time.perf_counter()
    for est in (MAPIHMM(), HardHDPHMM(), MAPDP(random_state=0)):
        labels = est.fit(X).labels_
        assert labels.shape == (60,) and 1 <= est.n_clusters_ <= 60
    assert time.perf_counter() - t0 < 5  # the numba kernels are compiled by conftest's session fixture


def test_groups_smoke_exam_hard_hdp():
    d = load_structured("exam")
    part = d.table[d.table[d.subject] <= 4]
    X = part[d.features].to_numpy(dtype=float)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    t0 = time.perf_counter()
    model = HardHDP().fit(X, part[d.subject].to_numpy())
    assert time.perf_counter() - t0 < 5
    assert model.labels_.shape == (len(part),)
    assert len(model.groups_) == 4 and model.n_local_clusters_.shape == (4,)
    assert np.all(model.n_local_clusters_ >= 1)


def test_longitudinal_smoke_chickweight_mixed_effects():
    d = load_structured("chickweight")
    part = d.table[d.table[d.subject] <= 12]
    X = np.column_stack([np.ones(len(part)), part[d.time].to_numpy(dtype=float)])
    t0 = time.perf_counter()
    model = MixedEffectsMAPDP(random_state=0, n_init=1).fit(X, part[d.response].to_numpy(dtype=float),
                                                           part[d.subject].to_numpy())
    assert time.perf_counter() - t0 < 5
    assert list(model.subjects_) == list(range(1, 13))
    assert model.labels_.shape == (12,) and model.cluster_means_.shape == (model.n_clusters_, 2)
