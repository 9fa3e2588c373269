"""Small real data sets shipped with the repository, each with a default likelihood spec.

The CSV files live in ``datasets/`` at the repository root (next to this package) and
are rebuilt from registry packages by ``scripts/build_datasets.py``; provenance,
licences and the preprocessing of each file are in ``datasets/README.md``.  Every file
has one header row, the features first and the class in the last column, ``label``;
missing values are empty cells (read as NaN).

Iris, Wine and Breast cancer (original Wisconsin, 683 x 9) are three of the six UCI
sets of Raykov, Boukouvalas, Baig & Little (2016), "Simple approximate MAP inference for
Dirichlet process mixtures", Electron. J. Statist. 10, Section 5.2 and Table 2.
Hepatitis, Heart disease (Cleveland) and Primary biliary cholangitis are mixed-type
clinical sets (binary, ordinal, categorical and real columns, two with missing values)
for the patient-subtyping use case of the PLOS paper (Raykov et al. 2016, PLOS ONE
11(9): e0162259, Section 6, Parkinson's disease subtypes).

Nothing here writes to disk; each call reads the CSV afresh.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

__all__ = ["list_datasets", "load_dataset", "dataset_path", "DATASETS_DIR"]

#: Folder of the shipped CSV files: ``datasets/`` at the repository root.
DATASETS_DIR = Path(__file__).resolve().parent.parent / "datasets"

LABEL = "label"


@dataclass(frozen=True)
class _Info:
    rows: int
    columns: int          # feature columns (the label excluded)
    description: str
    spec: dict            # column -> family; a tuple key is one joint block


def _same(columns, family) -> dict:
    return {c: family for c in columns}


_HEPATITIS_BINARY = [
    "sex_female", "steroid", "antivirals", "fatigue", "malaise", "anorexia", "liver_big",
    "liver_firm", "spleen_palpable", "spiders", "ascites", "varices", "histology",
]
_BREAST = [
    "clump_thickness", "cell_size_uniformity", "cell_shape_uniformity", "marginal_adhesion",
    "single_epithelial_cell_size", "bare_nuclei", "bland_chromatin", "normal_nucleoli", "mitoses",
]
_WINE = [
    "alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols",
    "flavanoids", "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue",
    "od280_od315_of_diluted_wines", "proline",
]

_REGISTRY: dict[str, _Info] = {
    "iris": _Info(
        150, 4,
        "Fisher's iris: 4 flower measurements (cm), 3 species of 50 (UCI; scikit-learn copy).",
        {("sepal_length", "sepal_width", "petal_length", "petal_width"): "normal_wishart"},
    ),
    "wine": _Info(
        178, 13,
        "Chemical analysis of wines from 3 cultivars (59/71/48), 13 continuous features (UCI).",
        _same(_WINE, "normal_gamma"),
    ),
    "breast_cancer_wisconsin_original": _Info(
        683, 9,
        "Wisconsin breast cytology (original): 9 ordinal 1-10 scores, benign 444 / malignant 239 (UCI).",
        _same(_BREAST, "categorical"),
    ),
    "hepatitis": _Info(
        155, 19,
        "Hepatitis outcome (die 32 / live 123): 13 binary signs, age and 5 lab values; "
        "167 missing cells (UCI).",
        {"age": "normal_gamma", **_same(_HEPATITIS_BINARY, "bernoulli"),
         **_same(["bilirubin", "alk_phosphate", "sgot", "albumin", "protime"], "normal_gamma")},
    ),
    "heart_disease_cleveland": _Info(
        297, 13,
        "Cleveland heart disease (297 complete cases): binary, categorical, count and real "
        "features; label 0 = no disease (160), 1-4 = disease (UCI, KEEL copy).",
        {"age": "normal_gamma", "sex_male": "bernoulli", "chest_pain_type": "categorical",
         "resting_bp": "normal_gamma", "cholesterol": "normal_gamma",
         "fasting_sugar_high": "bernoulli", "rest_ecg": "categorical",
         "max_heart_rate": "normal_gamma", "exercise_angina": "bernoulli",
         "st_depression": "normal_gamma", "st_slope": "categorical",
         "n_major_vessels": "binomial", "thal": "categorical"},
    ),
    "primary_biliary_cholangitis": _Info(
        418, 16,
        "Mayo Clinic PBC trial (R survival::pbc): binary signs, edema, histologic stage and "
        "lab values; 927 missing cells; label = status censored/transplant/dead.",
        {"age": "normal_gamma", **_same(["sex_female", "ascites", "hepato", "spiders"], "bernoulli"),
         "edema": "categorical",
         **_same(["bili", "chol", "albumin", "copper", "alk_phos", "ast", "trig", "platelet",
                  "protime"], "normal_gamma"),
         "stage": "categorical"},
    ),
}


def _check_name(name) -> str:
    if not isinstance(name, str):
        raise ValueError(f"dataset name must be a string, got {name!r}; choose one of {sorted(_REGISTRY)}.")
    key = name.strip().lower()
    if key not in _REGISTRY:
        raise ValueError(f"unknown dataset {name!r}; choose one of {sorted(_REGISTRY)}.")
    return key


def dataset_path(name: str) -> Path:
    """Path of the shipped CSV file of data set ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a known data set.
    FileNotFoundError
        If the file is not there (the package was installed without the repository's
        ``datasets/`` folder); the message says how to rebuild it.
    """
    path = DATASETS_DIR / f"{_check_name(name)}.csv"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: the data sets ship in the repository's datasets/ folder; run "
            "`python scripts/build_datasets.py` from a checkout (or use an editable install)."
        )
    return path


def list_datasets() -> pd.DataFrame:
    """The data sets that :func:`load_dataset` can load.

    Returns
    -------
    pandas.DataFrame
        One row per data set, sorted by name, with columns ``name``, ``rows``,
        ``columns`` (number of features, the label excluded) and ``description``.
    """
    rows = [
        {"name": name, "rows": info.rows, "columns": info.columns, "description": info.description}
        for name, info in sorted(_REGISTRY.items())
    ]
    return pd.DataFrame(rows, columns=["name", "rows", "columns", "description"])


def load_dataset(name: str) -> tuple[pd.DataFrame, pd.Series, dict]:
    """Load a shipped data set with its default likelihood specification.

    Parameters
    ----------
    name : str
        One of the names of :func:`list_datasets` (case-insensitive).

    Returns
    -------
    X : pandas.DataFrame
        The features, one row per observation, in file order; missing values are NaN.
        Whole-number columns with missing values are float.
    y : pandas.Series
        The ground-truth class of each row (named ``"label"``).
    likelihood : dict
        Family per column, ready for ``mapdp_core.MAPDP(likelihood=likelihood)``: a
        tuple key is one joint (Normal-Wishart) block.  A fresh dict on every call.

    Raises
    ------
    ValueError
        If ``name`` is unknown.
    FileNotFoundError
        If the CSV file is missing (see :func:`dataset_path`).

    Examples
    --------
    >>> from mapdp_core import MAPDP
    >>> X, y, spec = load_dataset("iris")
    >>> X.shape, y.nunique()
    ((150, 4), 3)
    >>> labels = MAPDP(likelihood=spec, random_state=0).fit(X).labels_
    """
    info = _REGISTRY[_check_name(name)]
    df = pd.read_csv(dataset_path(name))
    if df.columns[-1] != LABEL:
        raise ValueError(f"{dataset_path(name)} should have '{LABEL}' as its last column.")
    X = df.drop(columns=LABEL)
    y = df[LABEL].rename(LABEL)
    spec = {tuple(k) if isinstance(k, tuple) else k: v for k, v in info.spec.items()}
    return X, y, spec
