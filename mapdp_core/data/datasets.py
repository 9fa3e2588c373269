"""Small real data sets shipped with the repository, each with a default likelihood spec.

The CSV files live in ``datasets/`` at the repository root (next to this package) and
are rebuilt from registry packages by ``scripts/build_datasets.py``; provenance,
licences and the preprocessing of each file are in ``datasets/README.md``.  Every file
has one header row, the features first and the class in the last column, ``label``;
missing values are empty cells (read as NaN).

Iris, Wine and Breast cancer (original Wisconsin, 683 x 9) are three of the six UCI
sets of Raykov, Boukouvalas, Baig & Little (2016), "Simple approximate MAP inference for
Dirichlet process mixtures", Electron. J. Statist. 10, Section 5.2 and Table 2.
Soybean (large, complete training cases), Pima Indians diabetes and Statlog vehicle
are the other three.  Hepatitis, Heart disease (Cleveland) and Primary biliary
cholangitis are mixed-type clinical sets (binary, ordinal, categorical and real columns,
two with missing values) for the patient-subtyping use case of the PLOS paper (Raykov et
al. 2016, PLOS ONE 11(9): e0162259, Section 6, Parkinson's disease subtypes).

The names in :data:`HELD_OUT` (penguins, crabs, Reaven-Miller diabetes, neurocognition in
psychosis, carnivore scats, dermatology, zoo, E. coli protein sites, hypothyroid) are
further labelled biological and clinical tables kept for judging default settings: nobody
has fitted or tuned anything on them, and nothing should be tuned on them.

Sequences, groups and subjects (``datasets/structured/``, :data:`STRUCTURED`): tables whose
rows have an order or a grouping -- beaver2 and geyser (time series), Exam and MathAchieve
(students in schools), sleepstudy, ChickWeight and BtheB (subjects measured repeatedly).
:func:`load_structured` returns a :class:`StructuredDataset`: the whole table and the role of
each column (features, time, subject or group, known truth, response). These files keep the
source's column names and have no ``label`` column; :func:`list_datasets` does not list them.

Nothing here writes to disk; each call reads the CSV afresh.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

__all__ = ["list_datasets", "load_dataset", "load_outcomes", "OUTCOMES", "dataset_path", "DATASETS_DIR", "HELD_OUT",
           "StructuredDataset", "STRUCTURED", "STRUCTURED_DIR", "list_structured", "load_structured",
           "structured_path"]

#: Folder of the shipped CSV files: ``datasets/`` at the repository root.
DATASETS_DIR = Path(__file__).resolve().parents[2] / "datasets"

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

_PIMA_REAL = ["glucose", "pressure", "triceps", "insulin", "mass", "pedigree", "age"]
_VEHICLE = [
    "compactness", "circularity", "distance_circularity", "radius_ratio", "pr_axis_aspect_ratio",
    "max_length_aspect_ratio", "scatter_ratio", "elongatedness", "pr_axis_rectangularity",
    "max_length_rectangularity", "scaled_variance_major", "scaled_variance_minor",
    "scaled_radius_of_gyration", "skewness_about_major", "skewness_about_minor",
    "kurtosis_about_minor", "kurtosis_about_major", "hollows_ratio",
]
_SOYBEAN = [
    "date", "plant_stand", "precip", "temp", "hail", "crop_hist", "area_dam", "sever", "seed_tmt",
    "germ", "plant_growth", "leaves", "leaf_halo", "leaf_marg", "leaf_size", "leaf_shread",
    "leaf_malf", "leaf_mild", "stem", "lodging", "stem_cankers", "canker_lesion",
    "fruiting_bodies", "ext_decay", "mycelium", "int_discolor", "sclerotia", "fruit_pods",
    "fruit_spots", "seed", "mold_growth", "seed_discolor", "seed_size", "shriveling", "roots",
]
_DERMATOLOGY_SCORES = [
    "erythema", "scaling", "definite_borders", "itching", "koebner_phenomenon",
    "polygonal_papules", "follicular_papules", "oral_mucosal_involvement",
    "knee_and_elbow_involvement", "scalp_involvement", "melanin_incontinence",
    "eosinophils_in_infiltrate", "pnl_infiltrate", "fibrosis_papillary_dermis", "exocytosis",
    "acanthosis", "hyperkeratosis", "parakeratosis", "clubbing_rete_ridges",
    "elongation_rete_ridges", "thinning_suprapapillary_epidermis", "spongiform_pustule",
    "munro_microabscess", "focal_hypergranulosis", "disappearance_granular_layer",
    "vacuolisation_basal_layer", "spongiosis", "saw_tooth_rete_ridges", "follicular_horn_plug",
    "perifollicular_parakeratosis", "inflammatory_mononuclear_infiltrate", "band_like_infiltrate",
]
_ZOO_BINARY = ["hair", "feathers", "eggs", "milk", "airborne", "aquatic", "predator", "toothed",
               "backbone", "breathes", "venomous", "fins", "tail", "domestic", "catsize"]
_HYPOTHYROID_BINARY = [
    "sex_female", "on_thyroxine", "query_on_thyroxine", "on_antithyroid_medication",
    "thyroid_surgery", "query_hypothyroid", "query_hyperthyroid", "pregnant", "sick", "tumor",
    "lithium", "goitre",
]

#: Data sets kept for judging default settings: never fit, tune or choose anything on them
#: while developing (see ``datasets/README.md``).
HELD_OUT = frozenset({
    "palmer_penguins", "leptograpsus_crabs", "diabetes_reaven_miller", "neurocognition_psychosis",
    "carnivore_scat", "dermatology", "zoo", "ecoli_protein_localization", "hypothyroid",
})

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
    "pima_indians_diabetes": _Info(
        768, 8,
        "Pima Indian women tested for diabetes (neg 500 / pos 268): pregnancies, 6 clinical "
        "measurements and age; zeros that mean 'not measured' kept as zeros (UCI via mlbench/KEEL).",
        {"pregnant": "poisson", **_same(_PIMA_REAL, "normal_gamma")},
    ),
    "vehicle_statlog": _Info(
        846, 18,
        "Statlog vehicle silhouettes: 18 shape measures of bus 218 / opel 212 / saab 217 / "
        "van 199 images (UCI).",
        _same(_VEHICLE, "normal_gamma"),
    ),
    "soybean_large_train_complete": _Info(
        266, 35,
        "Soybean diseases (large, the 266 complete training cases): 35 coded plant and "
        "seed attributes, 15 diseases (UCI via CRAN mlbench).",
        _same(_SOYBEAN, "categorical"),
    ),
    # --- held out (HELD_OUT): for judging defaults only -------------------------------
    "palmer_penguins": _Info(
        344, 6,
        "Palmer penguins: island and sex (text) and 4 body measurements; species Adelie 152 / "
        "Chinstrap 68 / Gentoo 124; 19 missing cells (palmerpenguins). Held out.",
        {"island": "categorical",
         **_same(["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"],
                 "normal_gamma"),
         "sex": "categorical"},
    ),
    "leptograpsus_crabs": _Info(
        200, 5,
        "Leptograpsus rock crabs: 5 body measurements (mm); label colour form x sex, 4 groups "
        "of 50 (MASS::crabs). Held out.",
        {("frontal_lobe", "rear_width", "carapace_length", "carapace_width", "body_depth"):
         "normal_wishart"},
    ),
    "diabetes_reaven_miller": _Info(
        145, 5,
        "Reaven & Miller (1979): relative weight and 4 glucose/insulin measures; Normal 76 / "
        "Chemical_Diabetic 36 / Overt_Diabetic 33 (heplots::Diabetes). Held out.",
        _same(["relative_weight", "fasting_glucose", "glucose_area", "insulin_area",
               "steady_state_glucose"], "normal_gamma"),
    ),
    "neurocognition_psychosis": _Info(
        242, 9,
        "MATRICS cognitive domain T scores, age and sex (text); Schizophrenia 58 / "
        "Schizoaffective 39 / Control 145 (heplots::NeuroCog). Held out.",
        {**_same(["speed", "attention", "working_memory", "verbal_learning", "visual_learning",
                  "problem_solving", "social_cognition", "age"], "normal_gamma"),
         "sex": "categorical"},
    ),
    "carnivore_scat": _Info(
        110, 16,
        "Carnivore scats: site and location (text), ordinal, count, binary and real "
        "measurements incl. isotopes; bobcat 57 / coyote 28 / gray_fox 25; 47 missing cells "
        "(modeldata::scat). Held out.",
        {"site": "categorical", "location": "categorical", "age": "binomial", "number": "poisson",
         **_same(["length", "diameter", "taper", "taper_index", "mass", "d13c", "d15n",
                  "c_n_ratio"], "normal_gamma"),
         **_same(["ropey", "segmented", "flat", "scrape"], "bernoulli")},
    ),
    "dermatology": _Info(
        358, 34,
        "Erythemato-squamous skin diseases: 32 clinical and histopathological 0-3 scores, "
        "family history and age; 6 diagnoses (UCI, KEEL copy). Held out.",
        {**_same(_DERMATOLOGY_SCORES[:10], "binomial"), "family_history": "bernoulli",
         **_same(_DERMATOLOGY_SCORES[10:], "binomial"), "age": "normal_gamma"},
    ),
    "zoo": _Info(
        101, 16,
        "Zoo animals: 15 yes/no traits and number of legs; 7 types (mammal 41 ... amphibian 4) "
        "(UCI, KEEL copy). Held out.",
        {**_same(_ZOO_BINARY[:12], "bernoulli"), "legs": "poisson",
         **_same(_ZOO_BINARY[12:], "bernoulli")},
    ),
    "ecoli_protein_localization": _Info(
        336, 7,
        "E. coli protein localisation: 5 sequence scores and 2 binary signals; 8 sites "
        "(cp 143 ... imL 2, imS 2) (UCI). Held out.",
        {**_same(["mcgeoch_signal", "von_heijne_signal"], "normal_gamma"),
         **_same(["lipoprotein_signal", "n_terminus_charge"], "bernoulli"),
         **_same(["amino_acid_content", "alom_membrane", "alom_membrane_no_signal"],
                 "normal_gamma")},
    ),
    "hypothyroid": _Info(
        3163, 19,
        "Thyroid referrals (Garavan Institute): age, sex, 11 yes/no history flags and 6 lab "
        "values; hypothyroid 151 / negative 3012; 5329 missing cells (UCI). Held out.",
        {"age": "normal_gamma", **_same(_HYPOTHYROID_BINARY, "bernoulli"),
         **_same(["tsh", "t3", "tt4", "t4u", "fti", "tbg"], "normal_gamma")},
    ),
}


def _check_name(name, registry=None, what: str = "dataset") -> str:
    """``name`` as a key of ``registry`` (default: the flat tables), or a ValueError that lists them."""
    registry = _REGISTRY if registry is None else registry
    choices = sorted(registry)
    if not isinstance(name, str):
        raise ValueError(f"{what} name must be a string, got {name!r}; choose one of {choices}.")
    key = name.strip().lower()
    if key not in registry:
        raise ValueError(f"unknown {what} {name!r}; choose one of {choices}.")
    return key


def _takes_a_name(lister: str):
    """Decorate a loader whose docstring has the line ``%(name)s``: it becomes the Parameters
    section of the ``name`` every loader takes (looked up by :func:`_check_name`) among the
    names the function ``lister`` lists."""

    def decorate(loader):
        entry = ("Parameters\n    ----------\n    name : str\n"
                 f"        One of the names of :func:`{lister}` (case-insensitive).")
        loader.__doc__ = loader.__doc__.replace("%(name)s", entry)
        return loader

    return decorate


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


@_takes_a_name("list_datasets")
def load_dataset(name: str) -> tuple[pd.DataFrame, pd.Series, dict]:
    """Load a shipped data set with its default likelihood specification.

    %(name)s

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


# ---------------------------------------------------------------------------------------
# Sequences, groups and subjects: datasets/structured/
# ---------------------------------------------------------------------------------------

#: Folder of the structured tables: ``datasets/structured/``.
#: Outcomes recorded after the measurements of a flat table (``datasets/outcomes/NAME.csv``, one
#: row per row of the table, in its order): what a subtyping is validated on, never clustered on.
#: Each entry names its columns' roles: ``time`` and ``event`` (a follow-up time and its 0/1
#: flag, 1 = the event, 0 = censored), or ``binary`` / ``numeric`` outcome columns.
OUTCOMES = {
    "primary_biliary_cholangitis": {
        "time": "years", "event": "died",
        "description": "years from registration to death (died = 1) or to the end of follow-up or a liver "
                       "transplant (died = 0, censored); R survival::pbc's time and status",
    },
}


@_takes_a_name("list_datasets")
def load_outcomes(name: str) -> pd.DataFrame | None:
    """The outcomes recorded for data set ``name`` after its measurements, one row per row of
    :func:`load_dataset`'s ``X`` in the same order, or None where none are shipped
    (:data:`OUTCOMES` says which columns hold what). They are not features: compare them across
    the clusters afterwards (:func:`mapdp_core.evaluation.outcomes.compare_outcome`).

    %(name)s
    """
    key = _check_name(name)
    if key not in OUTCOMES:
        return None
    return pd.read_csv(DATASETS_DIR / "outcomes" / f"{key}.csv")


STRUCTURED_DIR = DATASETS_DIR / "structured"

STRUCTURED_KINDS = ("sequence", "groups", "longitudinal")


@dataclass(frozen=True)
class _StructuredInfo:
    columns: tuple        # every column of the file, in file order
    rows: int
    kind: str
    features: tuple
    time: str | None
    subject: str | None
    truth: str | None
    response: str | None
    description: str


@dataclass(frozen=True, eq=False)
class StructuredDataset:
    """A shipped table with an order or a grouping: a time series, rows in groups, or subjects
    measured repeatedly.

    Attributes
    ----------
    name : str
        The registry name (lower case).
    table : pandas.DataFrame
        Every column of the file, rows in file order (a fresh frame on every load).
    features : list of str
        The columns to model. For ``kind="longitudinal"`` these are the covariates of the
        regression besides the intercept (the design is ``[1, *features]``, fitted to
        ``response`` within ``subject``).
    time : str or None
        The time column (rows are already in time order within subject).
    subject : str or None
        The group (``"groups"``) or subject (``"longitudinal"``) id column.
    truth : str or None
        Known states or groups to compare a clustering with (never to fit on).
    kind : {"sequence", "groups", "longitudinal"}
    response : str or None
        The response of a longitudinal table.
    description : str
        One sentence.
    """

    name: str
    table: pd.DataFrame
    features: list
    time: str | None
    subject: str | None
    truth: str | None
    kind: str
    response: str | None
    description: str


#: The structured tables: name -> columns, rows and roles (read only; see ``datasets/README.md``,
#: "Sequences, groups and subjects").
STRUCTURED: dict[str, _StructuredInfo] = {
    "beaver2": _StructuredInfo(
        ("minutes", "day", "clock_hhmm", "temp", "activ"), 100, "sequence", ("temp",), "minutes", None,
        "activ", None,
        "Body temperature (deg C) of one beaver every 10 minutes for 16.5 hours, with its activity "
        "outside the retreat (activ 0: 38 readings, then 1: 62) (R datasets::beaver2)."),
    "geyser": _StructuredInfo(
        ("eruption", "waiting", "duration"), 299, "sequence", ("waiting", "duration"), "eruption", None,
        None, None,
        "299 successive Old Faithful eruptions, 1-15 August 1985: waiting time and duration (min); "
        "no labels (R MASS::geyser)."),
    "exam": _StructuredInfo(
        ("school", "student", "normexam", "standLRT"), 4059, "groups", ("normexam", "standLRT"), None,
        "school", None, None,
        "Exam and intake reading scores of 4,059 students in 65 inner-London schools "
        "(R mlmRev::Exam)."),
    "mathachieve": _StructuredInfo(
        ("School", "MathAch", "SES", "Minority", "Sex"), 7185, "groups", ("MathAch", "SES"), None,
        "School", None, None,
        "Mathematics achievement and socio-economic status of 7,185 students in 160 US high "
        "schools (R nlme::MathAchieve)."),
    "sleepstudy": _StructuredInfo(
        ("Reaction", "Days", "Subject"), 180, "longitudinal", ("Days",), "Days", "Subject", None,
        "Reaction",
        "Mean reaction time (ms) of 18 subjects over 10 days of sleep restriction "
        "(R lme4::sleepstudy)."),
    "chickweight": _StructuredInfo(
        ("Chick", "Time", "weight", "Diet"), 578, "longitudinal", ("Time",), "Time", "Chick", "Diet",
        "weight",
        "Weight (g) of 50 chicks from hatching to day 21 on four diets (20/10/10/10 chicks) "
        "(R datasets::ChickWeight)."),
    "btheb": _StructuredInfo(
        ("patient", "month", "bdi", "drug", "length", "treatment"), 380, "longitudinal", ("month",),
        "month", "patient", "treatment", "bdi",
        "Depression score (BDI-II) of 100 patients at months 0, 2, 4, 6, 8 of a trial of "
        "computerised CBT, 120 missed visits left out; the randomised arm is only a weak reference "
        "(R HSAUR::BtheB)."),
}


def structured_path(name: str) -> Path:
    """Path of the CSV file of structured data set ``name`` (ValueError if unknown,
    FileNotFoundError if the file is missing)."""
    path = STRUCTURED_DIR / (_check_name(name, STRUCTURED, "structured data set") + ".csv")
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: the structured data sets ship in the repository's datasets/structured/ "
            "folder; run `python scripts/build_datasets.py --only <name>` from a checkout.")
    return path


def list_structured() -> pd.DataFrame:
    """The data sets that :func:`load_structured` can load.

    Returns
    -------
    pandas.DataFrame
        One row per data set, sorted by name, with columns ``name``, ``kind``, ``rows`` and
        ``description``.
    """
    rows = [{"name": name, "kind": info.kind, "rows": info.rows, "description": info.description}
            for name, info in sorted(STRUCTURED.items())]
    return pd.DataFrame(rows, columns=["name", "kind", "rows", "description"])


@_takes_a_name("list_structured")
def load_structured(name: str) -> StructuredDataset:
    """Load a shipped sequence, grouped or longitudinal table with the roles of its columns.

    %(name)s

    Returns
    -------
    StructuredDataset
        The whole table (rows in file order) and which columns are the features, time,
        subject (or group), known truth and response.

    Raises
    ------
    ValueError
        If ``name`` is unknown (the message lists the valid names), or the file's columns
        are not the documented ones.
    FileNotFoundError
        If the CSV file is missing.

    Examples
    --------
    >>> from mapdp_core import MixedEffectsMAPDP
    >>> d = load_structured("sleepstudy")
    >>> d.kind, d.table.shape
    ('longitudinal', (180, 3))
    >>> X = d.table[d.features].assign(intercept=1.0)[["intercept", *d.features]]  # design [1, Days]
    >>> model = MixedEffectsMAPDP(random_state=0).fit(X, d.table[d.response], d.table[d.subject])
    >>> len(model.labels_)  # one cluster per subject
    18
    """
    key = _check_name(name, STRUCTURED, "structured data set")
    info = STRUCTURED[key]
    path = structured_path(key)
    table = pd.read_csv(path)
    if tuple(table.columns) != info.columns:
        raise ValueError(f"{path} has columns {list(table.columns)}, expected {list(info.columns)}.")
    return StructuredDataset(name=key, table=table, features=list(info.features), time=info.time,
                             subject=info.subject, truth=info.truth, kind=info.kind, response=info.response,
                             description=info.description)
