"""The shipped data sets load with the shapes and class counts of PROVENANCE.md, and
their default likelihood specs fit with MAPDP."""
import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP
from mapdp_core.datasets import DATASETS_DIR, dataset_path, list_datasets, load_dataset

EXPECTED = {  # rows, features, label counts, missing cells
    "iris": (150, 4, {"setosa": 50, "versicolor": 50, "virginica": 50}, 0),
    "wine": (178, 13, {1: 59, 2: 71, 3: 48}, 0),
    "breast_cancer_wisconsin_original": (683, 9, {"benign": 444, "malignant": 239}, 0),
    "hepatitis": (155, 19, {"die": 32, "live": 123}, 167),
    "heart_disease_cleveland": (297, 13, {0: 160, 1: 54, 2: 35, 3: 35, 4: 13}, 0),
    "primary_biliary_cholangitis": (418, 16, {"censored": 232, "transplant": 25, "dead": 161}, 927),
}


def test_list_datasets_is_tidy_and_complete():
    df = list_datasets()
    assert list(df.columns) == ["name", "rows", "columns", "description"]
    assert set(df["name"]) == set(EXPECTED)
    for row in df.itertuples():
        assert (row.rows, row.columns) == EXPECTED[row.name][:2]
        assert isinstance(row.description, str) and row.description


def test_every_shipped_csv_is_listed():
    shipped = {p.stem for p in DATASETS_DIR.glob("*.csv")}
    assert shipped == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_load_shapes_labels_and_fit(name):
    rows, cols, counts, missing = EXPECTED[name]
    X, y, spec = load_dataset(name)
    assert X.shape == (rows, cols)
    assert isinstance(y, pd.Series) and y.name == "label" and len(y) == rows
    assert y.value_counts().to_dict() == counts
    assert int(X.isna().sum().sum()) == missing
    covered = [c for key in spec for c in (key if isinstance(key, tuple) else (key,))]
    assert sorted(covered) == sorted(X.columns)
    model = MAPDP(likelihood=spec, random_state=0).fit(X)
    assert model.labels_.shape == (rows,)
    assert np.all(model.labels_ >= 0)
    assert 1 <= model.n_clusters_ <= rows


def test_hepatitis_missing_per_column_matches_provenance():
    X, _, spec = load_dataset("hepatitis")
    expected = {"steroid": 1, "fatigue": 1, "malaise": 1, "anorexia": 1, "liver_big": 10,
                "liver_firm": 11, "spleen_palpable": 5, "spiders": 5, "ascites": 5, "varices": 5,
                "bilirubin": 6, "alk_phosphate": 29, "sgot": 4, "albumin": 16, "protime": 67}
    counts = X.isna().sum()
    assert counts[counts > 0].to_dict() == expected
    assert int(X.isna().any(axis=1).sum()) == 75
    assert spec["ascites"] == "bernoulli" and spec["protime"] == "normal_gamma"


def test_load_returns_fresh_objects_and_is_case_insensitive():
    X1, _, s1 = load_dataset("Iris")
    X1.iloc[0, 0] = -1.0
    s1.clear()
    X2, _, s2 = load_dataset("iris")
    assert X2.iloc[0, 0] == 5.1 and s2


def test_unknown_name_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown dataset 'nope'.*iris"):
        load_dataset("nope")
    with pytest.raises(ValueError, match="must be a string"):
        dataset_path(3)
