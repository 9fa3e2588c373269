"""The shipped data sets load with the shapes and class counts of PROVENANCE.md and
datasets/README.md, and their default likelihood specs fit with MAPDP (the held-out tables
are only loaded and validated, never fitted)."""
import hashlib

import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP
from mapdp_core.data.datasets import DATASETS_DIR, HELD_OUT, dataset_path, list_datasets, load_dataset
from mapdp_core.core.spec import parse

EXPECTED = {  # rows, features, label counts, missing cells
    "iris": (150, 4, {"setosa": 50, "versicolor": 50, "virginica": 50}, 0),
    "wine": (178, 13, {1: 59, 2: 71, 3: 48}, 0),
    "breast_cancer_wisconsin_original": (683, 9, {"benign": 444, "malignant": 239}, 0),
    "hepatitis": (155, 19, {"die": 32, "live": 123}, 167),
    "heart_disease_cleveland": (297, 13, {0: 160, 1: 54, 2: 35, 3: 35, 4: 13}, 0),
    "primary_biliary_cholangitis": (418, 16, {"censored": 232, "transplant": 25, "dead": 161}, 927),
    "pima_indians_diabetes": (768, 8, {"neg": 500, "pos": 268}, 0),
    "vehicle_statlog": (846, 18, {"bus": 218, "opel": 212, "saab": 217, "van": 199}, 0),
    "soybean_large_train_complete": (266, 35, {
        "alternarialeaf-spot": 40, "brown-spot": 40, "frog-eye-leaf-spot": 40, "anthracnose": 20,
        "brown-stem-rot": 20, "phytophthora-rot": 16, "bacterial-blight": 10,
        "bacterial-pustule": 10, "charcoal-rot": 10, "diaporthe-stem-canker": 10,
        "downy-mildew": 10, "phyllosticta-leaf-spot": 10, "powdery-mildew": 10,
        "purple-seed-stain": 10, "rhizoctonia-root-rot": 10}, 0),
    # held out: loaded and validated here, never fitted
    "palmer_penguins": (344, 6, {"Adelie": 152, "Chinstrap": 68, "Gentoo": 124}, 19),
    "leptograpsus_crabs": (200, 5, {"blue_male": 50, "blue_female": 50, "orange_male": 50,
                                    "orange_female": 50}, 0),
    "diabetes_reaven_miller": (145, 5, {"Normal": 76, "Chemical_Diabetic": 36,
                                        "Overt_Diabetic": 33}, 0),
    "neurocognition_psychosis": (242, 9, {"Schizophrenia": 58, "Schizoaffective": 39,
                                          "Control": 145}, 0),
    "carnivore_scat": (110, 16, {"bobcat": 57, "coyote": 28, "gray_fox": 25}, 47),
    "dermatology": (358, 34, {"psoriasis": 111, "seborrheic_dermatitis": 60, "lichen_planus": 71,
                              "pityriasis_rosea": 48, "chronic_dermatitis": 48,
                              "pityriasis_rubra_pilaris": 20}, 0),
    "zoo": (101, 16, {"mammal": 41, "bird": 20, "reptile": 5, "fish": 13, "amphibian": 4,
                      "insect": 8, "invertebrate": 10}, 0),
    "ecoli_protein_localization": (336, 7, {"cp": 143, "im": 77, "pp": 52, "imU": 35, "om": 20,
                                            "omL": 5, "imL": 2, "imS": 2}, 0),
    "hypothyroid": (3163, 19, {"hypothyroid": 151, "negative": 3012}, 5329),
}
#: Text (string) feature columns of the held-out tables.
TEXT_COLUMNS = {"palmer_penguins": ["island", "sex"], "carnivore_scat": ["site", "location"],
                "neurocognition_psychosis": ["sex"]}


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


def _load_and_check(name):
    rows, cols, counts, missing = EXPECTED[name]
    X, y, spec = load_dataset(name)
    assert X.shape == (rows, cols)
    assert isinstance(y, pd.Series) and y.name == "label" and len(y) == rows
    assert y.value_counts().to_dict() == counts
    assert int(X.isna().sum().sum()) == missing
    covered = [c for key in spec for c in (key if isinstance(key, tuple) else (key,))]
    assert sorted(covered) == sorted(X.columns)
    return X, y, spec


def test_held_out_names_are_registered():
    assert HELD_OUT <= set(EXPECTED) and len(HELD_OUT) == 9
    assert {"iris", "wine", "pima_indians_diabetes", "hepatitis"}.isdisjoint(HELD_OUT)


@pytest.mark.parametrize("name", sorted(HELD_OUT))
def test_held_out_loads_and_validates_without_fitting(name):
    X, y, spec = _load_and_check(name)
    assert 2 <= y.nunique() <= 8 and 4 <= X.shape[1] <= 40 and 100 <= len(X) <= 5000
    assert [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])] == TEXT_COLUMNS.get(name, [])
    assert dataset_path(name).stat().st_size < 1_000_000
    parse(X, spec)  # every column passes its family's data check; no clustering is run


def test_soybean_is_the_checked_copy():
    data = dataset_path("soybean_large_train_complete").read_bytes()
    assert hashlib.sha256(data).hexdigest() == (
        "6afced5fb7c6ce8ca49384b62b28d4d94e52f9f9af19843fee9c7fa144079caa")


@pytest.mark.parametrize("name", sorted(set(EXPECTED) - HELD_OUT))
def test_load_shapes_labels_and_fit(name):
    rows = EXPECTED[name][0]
    X, y, spec = _load_and_check(name)
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
