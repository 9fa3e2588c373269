"""The data sets as the app holds them: one :class:`AppData` per data set (the table as loaded,
every row in order, its encoded features and the likelihood per column), made from a PLOS
scenario, a shipped or simulated set or a user's table; a new likelihood per column; new rows
encoded as the data were; and the views the app draws and K-means reads (:func:`numeric_matrix`,
:func:`projection`, :func:`display_sample`).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from mapdp_core.data.datasets import OUTCOMES, load_dataset, load_outcomes, load_structured
from mapdp_core.data.loading import prepare
from mapdp_core.evaluation.outcomes import outcome_spec
from mapdp_core.core.spec import parse
from mapdp_core.selection.auto import WideProjection, project_wide
from mapdp_core.data.synthetic import (PLOS_SCENARIOS, clinical_simulator, crp_normal_wishart, plos_scenario,
                                       plos_scenario_parameters)

__all__ = ["AppData", "analysed_table", "zero_cells", "zero_choices", "with_zeros_missing", "scenario_data", "builtin_data", "structured_data", "crp_data", "clinical_data", "table_data",
           "with_likelihood", "input_columns", "encode_new_rows", "numeric_matrix", "projection", "display_sample", "DISPLAY_MAX"]

#: Most points drawn in a scatter; above this a random sample is shown (and the app says so).
DISPLAY_MAX = 4000


@dataclass(frozen=True, eq=False)
class AppData:
    """One data set as the app holds it.

    Attributes
    ----------
    name : str
        What to call it on screen.
    table : DataFrame
        The table as loaded, every row in input order (labels and identifiers included).
    X : DataFrame
        The encoded feature columns (float64, NaN = missing), one row per row of ``table``.
    likelihood : dict
        ``{column or tuple of columns: family}`` for :class:`~mapdp_core.MAPDP`; a tuple
        is one joint (Normal-Wishart) block.
    truth : ndarray of int or None
        Ground-truth class per row (codes 0..C-1, -1 where unknown), if the data have one.
    truth_names : list
        The class of each code.
    description : str
    notes : tuple of str
        Warnings from loading, to show.
    encodings : dict
        Per feature, how it was encoded (see :func:`mapdp_core.data.loading.prepare`).
    key : str
        A digest of the features and likelihood: equal keys mean the same clustering problem.
    id_column : str or None
        The column of ``table`` that identifies each row (role "identifier"), if there is one.
    n_groups : int or None
        How many clusters a K-means user would be told: the true classes less those made of
        outliers (PLOS Section 5.3: K = 3 beside two outlier pairs); None: every class of ``truth``.
    wide : WideProjection or None
        For a wide table (thousands of real-valued columns), the principal components that stand
        for its real-valued columns in ``X``, exactly as ``MAPDP()`` summarises them
        (:func:`mapdp_core.selection.auto.project_wide`); None otherwise.
    summarised : DataFrame or None
        With ``wide``: the real-valued columns it summarises, as encoded (profiles rank them).
    zeros_missing : tuple of str
        The columns whose zeros the user said mean "not measured": MAP-DP saw those cells as
        gaps, and so does everything else the app shows or writes (:func:`analysed_table`).
    outcome : dict or None
        The columns of ``table`` given the role "outcome" (left out of the clustering, compared
        across the clusters afterwards), as :func:`mapdp_core.evaluation.outcomes.outcome_spec`
        reads them: ``{"kind": "time_to_event", "time": ..., "event": ...}`` or ``{"kind": "binary"
        | "numeric", "column": ...}``; None without one.
    """

    name: str
    table: pd.DataFrame = field(repr=False)
    X: pd.DataFrame = field(repr=False)
    likelihood: dict
    truth: np.ndarray | None = field(default=None, repr=False)
    truth_names: list = field(default_factory=list, repr=False)
    description: str = ""
    notes: tuple = ()
    encodings: dict = field(default_factory=dict, repr=False)
    key: str = ""
    id_column: str | None = None
    n_groups: int | None = None
    wide: WideProjection | None = field(default=None, repr=False)
    summarised: pd.DataFrame | None = field(default=None, repr=False)
    zeros_missing: tuple = ()
    outcome: dict | None = None

    def __post_init__(self):
        if not self.key:
            h = hashlib.sha256()
            h.update(np.ascontiguousarray(self.X.to_numpy(dtype=float)).tobytes())
            h.update(repr(sorted((str(k), v) for k, v in self.likelihood.items())).encode())
            h.update(repr(list(self.X.columns)).encode())
            object.__setattr__(self, "key", h.hexdigest()[:16])

    @property
    def n_rows(self) -> int:
        return len(self.X)

    @property
    def features(self) -> list:
        return list(self.X.columns)

    @property
    def has_gaps(self) -> bool:
        return bool(self.X.isna().to_numpy().any())

    @property
    def true_k(self) -> int | None:
        """The number of true clusters to give an algorithm told K (:attr:`n_groups`, else the
        number of classes in ``truth``); None without ground truth."""
        if self.n_groups is not None:
            return int(self.n_groups)
        if self.truth is None or not (self.truth >= 0).any():
            return None
        return int(self.truth.max() + 1)

    def family_of(self, column) -> str:
        for key, fam in self.likelihood.items():
            if key == column or (isinstance(key, tuple) and column in key):
                return fam
        raise KeyError(column)


def zero_cells(data: AppData, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """True at each cell of ``table`` (default ``data.table``; new rows in the table's columns)
    that is a 0 in a column whose zeros the user marked "not measured" (``data.zeros_missing``)."""
    table = data.table if table is None else table
    mask = pd.DataFrame(False, index=table.index, columns=table.columns)
    for c in data.zeros_missing:
        if c in table.columns:
            mask[c] = (pd.to_numeric(table[c], errors="coerce") == 0).to_numpy()
    return mask


def analysed_table(data: AppData) -> pd.DataFrame:
    """The table as the app analyses it: ``data.table`` with the zeros the user marked "not
    measured" (``data.zeros_missing``) as missing cells, every row in order. The profiles, the
    tests, the missing-value counts, the preview, the downloads and the report read this table,
    so that a zero MAP-DP left out never comes back in a number shown beside it."""
    if not data.zeros_missing:
        return data.table
    mask = zero_cells(data)
    out = data.table.copy()
    for c in data.zeros_missing:
        if c in out.columns and mask[c].any():
            out[c] = out[c].mask(mask[c])
    out.attrs = dict(data.table.attrs)
    return out


def _codes(labels) -> tuple[np.ndarray | None, list]:
    if labels is None:
        return None, []
    s = pd.Series(labels).reset_index(drop=True)
    known = s.notna()
    names = sorted(pd.unique(s[known]), key=lambda v: (isinstance(v, str), v))
    lookup = {v: i for i, v in enumerate(names)}
    codes = np.full(len(s), -1, dtype=np.int64)
    codes[known.to_numpy()] = [lookup[v] for v in s[known]]
    return codes, [v.item() if hasattr(v, "item") else v for v in names]


def scenario_data(section: str = "5.2", n: int = 4000, seed: int = 0) -> AppData:
    """One of the six PLOS Section 5 scenarios, with a Normal-Wishart block over (x, y)."""
    X, y = plos_scenario(section, n=n, seed=seed)
    table = pd.DataFrame(X, columns=["x", "y"])
    table["truth"] = y
    title = PLOS_SCENARIOS[section]
    truth, names = _codes(y)
    return AppData(name=f"PLOS {section}: {title}", table=table, X=table[["x", "y"]].astype(float),
                   likelihood={("x", "y"): "normal_wishart"}, truth=truth, truth_names=names,
                   description=f"PLOS ONE 2016, Section {section} ({n} points, seed {seed}).",
                   n_groups=len(plos_scenario_parameters(section)["weights"]))


def builtin_data(name: str) -> AppData:
    """A data set shipped in datasets/, with its documented default likelihoods (text columns
    encoded as :func:`mapdp_core.data.loading.prepare` encodes an uploaded table's)."""
    X, y, spec = load_dataset(name)
    table = X.copy()
    table["label"] = y.to_numpy()
    description = f"Built-in data set '{name}' ({len(X)} rows, {X.shape[1]} features)."
    outcomes, outcome = load_outcomes(name), None
    if outcomes is not None:  # what happened afterwards: beside the table, never clustered (datasets.OUTCOMES)
        shipped = OUTCOMES[name.strip().lower()]  # which columns hold what
        for c in outcomes.columns:
            table[c] = outcomes[c].to_numpy()
        outcome = outcome_spec(table, [shipped["time"], shipped["event"]] if "time" in shipped else list(outcomes.columns))
        description += f" Outcome, not clustered: {shipped['description']}."
    if all(pd.api.types.is_numeric_dtype(X[c]) for c in X.columns):
        truth, names = _codes(y)
        return AppData(name=name, table=table, X=X.astype(float), likelihood=spec, truth=truth, truth_names=names,
                       description=description, outcome=outcome)
    per_column = {c: fam for key, fam in spec.items() for c in (key if isinstance(key, tuple) else (key,))}
    roles = {"label": "label"} | ({c: "outcome" for c in outcomes.columns} if outcomes is not None else {})
    data = with_likelihood(table_data(table, roles=roles, families=per_column, name=name), per_column)
    return AppData(name=name, table=table, X=data.X, likelihood=data.likelihood, truth=data.truth,
                   truth_names=data.truth_names, encodings=data.encodings, notes=data.notes, description=description,
                   id_column=data.id_column, outcome=outcome)


def structured_data(name: str) -> tuple[AppData, dict]:
    """A shipped sequence, grouped or longitudinal table (:func:`mapdp_core.data.datasets.load_structured`)
    as app data, and its column roles for the Sequences page: ``{"time": column or None,
    "subject": column or None}``. The features are the set's modelled columns (a longitudinal
    set's response and covariates); the truth, when known, is the label; the other columns
    stay in the table, unmodelled."""
    s = load_structured(name)
    modelled = list(s.features) + ([s.response] if s.response and s.response not in s.features else [])
    roles = {c: "ignored" for c in s.table.columns if c not in modelled}
    if s.truth is not None:
        roles[s.truth] = "label"
    data = table_data(s.table, roles=roles, name=s.name)
    data = AppData(name=data.name, table=data.table, X=data.X, likelihood=data.likelihood, truth=data.truth,
                   truth_names=data.truth_names, notes=data.notes, encodings=data.encodings,
                   description=s.description, id_column=data.id_column)
    return data, {"time": s.time, "subject": s.subject}


def crp_data(n: int = 2000, N0: float = 3.0, d: int = 2, seed: int = 0) -> AppData:
    """Data drawn from the DP mixture itself: a CRP partition with Normal-Wishart clusters (EJS Section 5)."""
    out = crp_normal_wishart(n, N0=N0, d=d, seed=seed)
    X, y = out[0], out[1]
    cols = [f"x{j + 1}" for j in range(X.shape[1])]
    table = pd.DataFrame(X, columns=cols)
    table["truth"] = y
    truth, names = _codes(y)
    return AppData(name=f"CRP mixture (N0={N0:g}, d={d})", table=table, X=table[cols].astype(float),
                   likelihood={tuple(cols): "normal_wishart"}, truth=truth, truth_names=names,
                   description=f"{n} points from a Chinese restaurant process with N0 = {N0:g}, seed {seed}.")


def clinical_data(n: int = 500, n_subtypes: int = 3, missing_rate: float = 0.1, seed: int = 0) -> AppData:
    """Simulated patients of mixed feature types with gaps (PLOS Section 6 style)."""
    out = clinical_simulator(n=n, n_subtypes=n_subtypes, missing_rate=missing_rate, seed=seed)
    df, y, spec = out[0], out[1], out[2]
    table = df.copy()
    table.attrs = {}  # the simulator's outlier mask is not part of the table shown or downloaded
    table["subtype"] = np.asarray(y)
    roles = {c: "feature" for c in df.columns} | {"subtype": "label"}
    data = table_data(table, roles=roles, families=dict(spec), name=f"Simulated clinical ({n_subtypes} subtypes)")
    return AppData(name=data.name, table=table, X=data.X, likelihood=data.likelihood, truth=data.truth,
                   truth_names=data.truth_names, encodings=data.encodings, notes=data.notes,
                   description=f"{n} simulated patients, {missing_rate:.0%} of entries missing, seed {seed}.")


def table_data(table: pd.DataFrame, roles=None, families=None, standardize: str = "none",
               name: str = "uploaded table", zeros_as_missing=None) -> AppData:
    """A user's table: roles and families as chosen (or suggested), features encoded by
    :func:`mapdp_core.data.loading.prepare` (``zeros_as_missing``: the columns whose zeros mean
    "not measured", as there). Every row is kept, in order."""
    prepared = prepare(table, roles=roles, families=families, standardize=standardize,
                       zeros_as_missing=zeros_as_missing)
    truth, names = _codes(prepared.labels)
    ids = prepared.ids
    encoded = prepared.X.astype(float)
    X, likelihood, wide = project_wide(encoded, dict(prepared.likelihood))
    notes, description = tuple(prepared.notes), f"{name}: {len(table)} rows, {prepared.X.shape[1]} features."
    if wide is not None:
        screened = (f"; {len(wide.informative):,} of them share structure with the others and make the components, "
                    "the rest look like noise" if len(wide.informative) < len(wide.columns) else "")
        said = (f"{len(wide.columns):,} real-valued columns are clustered through {len(wide.names)} leading "
                f"principal component(s) ({', '.join(wide.names)}), those above the noise level, as MAPDP() does with "
                f"a wide table{screened}; the profiles rank the columns themselves.")
        notes, description = notes + (said,), description + " " + said
    zeros = tuple(c for c in _zero_columns(zeros_as_missing, table) if c in prepared.X.columns)
    outcome, outcome_columns = None, _outcome_columns(roles, table)
    if outcome_columns:
        try:
            outcome = outcome_spec(table, outcome_columns)
        except ValueError as exc:  # the table is still clustered; the page says why there is no outcome
            notes += (f"Outcome: {exc}",)
    return AppData(name=name, table=table, X=X, likelihood=likelihood, truth=truth, truth_names=names, notes=notes,
                   encodings=prepared.encodings, description=description, id_column=None if ids is None else ids.name,
                   wide=wide, summarised=None if wide is None else encoded[wide.columns], zeros_missing=zeros,
                   outcome=outcome)


def _outcome_columns(roles, table: pd.DataFrame) -> list:
    """The columns ``roles`` (a dict, or the Data page's edited suggestion table) marks "outcome",
    in the table's order."""
    if roles is None:
        return []
    if isinstance(roles, pd.DataFrame):
        marked = set(roles.loc[roles["role"] == "outcome", "column"]) if {"column", "role"} <= set(roles) else set()
    elif isinstance(roles, pd.Series):
        marked = set(roles[roles == "outcome"].index)
    else:
        marked = {c for c, r in dict(roles).items() if r == "outcome"}
    return [c for c in table.columns if c in marked]


def _zero_columns(zeros_as_missing, table: pd.DataFrame) -> list:
    """The columns named by ``zeros_as_missing`` as :func:`prepare` reads it (a list, one name,
    ``"suggested"`` or None)."""
    if zeros_as_missing is None or zeros_as_missing is False:
        return []
    if isinstance(zeros_as_missing, str):
        if zeros_as_missing != "suggested":
            return [zeros_as_missing]
        from mapdp_core.data.loading import suggest_roles_and_families
        s = suggest_roles_and_families(table)
        return [c for c, n in zip(s["column"], s["suspect_zeros"]) if n]
    return list(zeros_as_missing)


def with_likelihood(data: AppData, families: dict) -> AppData:
    """``data`` with a new family per feature column; the columns given a block family
    (``normal_wishart``: a covariance per cluster; ``normal_wishart_tied``: one covariance shared
    by all clusters) form one block of that family, every other column is modelled on its own.

    Raises ValueError (with the engine's message) when a family does not fit its column.
    """
    unknown = [c for c in families if c not in data.features]
    if unknown:
        raise ValueError(f"column(s) {unknown} are not features of '{data.name}'.")
    chosen = {c: families.get(c, data.family_of(c)) for c in data.features}
    joined = ("normal_wishart", "normal_wishart_tied")
    likelihood = {c: f for c, f in chosen.items() if f not in joined}
    for family in joined:
        block = tuple(c for c in data.features if chosen[c] == family)
        if len(block) == 1:
            likelihood[block[0]] = family
        elif block:
            likelihood[block] = family
    ordered = {}
    for c in data.features:  # keep the column order of the data
        for key, fam in likelihood.items():
            if (key == c or (isinstance(key, tuple) and key[0] == c)) and key not in ordered:
                ordered[key] = fam
    parse(data.X, ordered)  # the engine's own checks, with its messages
    return replace(data, likelihood=ordered, key="")


def zero_choices(data: AppData) -> dict:
    """``{column: its number of zeros}``: the feature columns whose zeros a user may mark "not
    measured" once the data are loaded (a built-in or simulated table): number columns clustered
    as they are (no category codes, shift or standardisation; not a wide table's summarised
    columns), with at least one zero in the table or marked already."""
    if data.wide is not None:
        return {}
    out = {}
    for c in data.features:
        if c not in data.table.columns or data.encodings.get(c) or data.family_of(c) == "categorical":
            continue
        values = pd.to_numeric(data.table[c], errors="coerce")
        if values.notna().sum() < data.table[c].notna().sum():  # text in it: not a number column
            continue
        n = int((values == 0).sum())
        if n or c in data.zeros_missing:
            out[c] = n
    return out


def with_zeros_missing(data: AppData, columns) -> AppData:
    """``data`` with the zeros of ``columns`` read as "not measured" (missing), and those of any
    column marked before and not named now read as values again; only columns of
    :func:`zero_choices`. Every row is kept, in order; the model's checks run on the result.

    Raises ValueError (in words) for a column that cannot be chosen, or one left with no value."""
    allowed = zero_choices(data)
    columns = list(dict.fromkeys(columns))
    bad = [c for c in columns if c not in allowed]
    if bad:
        raise ValueError(f"the zeros of {', '.join(map(str, bad))} cannot be marked here: choose among number "
                         "columns that are clustered as they are.")
    X = data.X.copy()
    for c in set(columns) | set(data.zeros_missing):
        if c not in allowed:
            continue
        values = pd.to_numeric(data.table[c], errors="coerce").to_numpy(dtype=float, copy=True)  # pandas 3: a view is read-only
        values[~np.isfinite(values)] = np.nan
        if c in columns:
            values = np.where(values == 0, np.nan, values)
            if np.isnan(values).all():
                raise ValueError(f"column '{c}' would have no value left with its zeros missing.")
        X[c] = values
    parse(X, data.likelihood)  # the engine's own checks, with its messages
    notes = tuple(n for n in data.notes if "treated as missing (0 marked" not in n) + tuple(
        f"column '{c}': {allowed[c]} zero(s) treated as missing (0 marked as 'not measured')." for c in columns)
    return replace(data, X=X, zeros_missing=tuple(columns), notes=notes, key="")


def input_columns(data: AppData) -> list:
    """The table's columns a new row needs: the features, or for a wide table the columns kept as
    they are and those its principal components summarise (:attr:`AppData.wide`)."""
    if data.wide is None:
        return data.features
    return [c for c in data.features if c not in data.wide.names] + list(data.wide.columns)


def encode_new_rows(data: AppData, rows: pd.DataFrame, *, unseen: list | None = None) -> pd.DataFrame:
    """New rows, given as in the original table (:func:`input_columns`), encoded as ``data.X`` was
    (category codes, shifts, standardisation, a wide table's principal components; see
    :func:`mapdp_core.data.loading.prepare`). Text in a numeric column
    raises ValueError naming it; so does a value never seen in a categorical column, unless
    ``unseen`` is a list: then that cell becomes missing and is recorded there (see
    :func:`mapdp_core.core.encoding.unseen_notes`). A 0 in a column whose zeros mean "not
    measured" (``data.zeros_missing``) is missing here too, as it was in the fit."""
    from mapdp_core.core.encoding import encode_new_rows as encode  # the one encoding path (mapdp_core.core.encoding)

    if data.zeros_missing:
        zeros = zero_cells(data, rows)
        if zeros.to_numpy().any():
            rows = rows.copy()
            for c in data.zeros_missing:
                if c in rows.columns and zeros[c].any():
                    rows[c] = rows[c].mask(zeros[c])

    if data.wide is None:
        return encode(rows, data.features, data.encodings, unseen=unseen)
    others = [c for c in data.features if c not in data.wide.names]
    encoded = encode(rows, others + list(data.wide.columns), data.encodings, unseen=unseen)
    scores = pd.DataFrame(data.wide.transform(encoded[data.wide.columns].to_numpy(dtype=float)),
                          columns=data.wide.names, index=encoded.index)
    return pd.concat([encoded[others], scores], axis=1)[data.features]


def numeric_matrix(data: AppData) -> np.ndarray:
    """Features as plain numbers for K-means, DP-means and PCA: every column z-scored,
    categorical columns one-hot (each indicator scaled by 1/sqrt(2) so that two different
    categories lie at distance 1, as two standard deviations of a real feature roughly do),
    and a missing entry set to 0, its column's mean."""
    parts = []
    for c in data.features:
        x = data.X[c].to_numpy(dtype=float)
        if data.family_of(c) == "categorical":
            levels = np.unique(x[~np.isnan(x)])
            onehot = (x[:, None] == levels[None, :]).astype(float) / np.sqrt(2.0)
            onehot[np.isnan(x)] = np.nan
            cols = onehot
        else:
            cols = x[:, None]
        mu = np.nanmean(cols, axis=0)
        sd = np.nanstd(cols, axis=0)
        sd[~(sd > 0)] = 1.0
        z = (cols - mu) / sd if data.family_of(c) != "categorical" else cols - mu
        z[np.isnan(z)] = 0.0
        parts.append(z)
    return np.ascontiguousarray(np.hstack(parts))


def projection(data: AppData, features=None) -> tuple[np.ndarray, list[str]]:
    """2-D coordinates of every row: two chosen features (gaps at the column mean), the
    only two features, or the first two principal components of :func:`numeric_matrix`.

    Returns
    -------
    coords : ndarray (N, 2)
    axis_names : list of two str (with the share of variance for principal components)
    """
    feats = data.features
    if features is not None:
        features = list(features)
        if len(features) != 2 or any(f not in feats for f in features) or features[0] == features[1]:
            raise ValueError(f"choose two different features among {feats}.")
    elif len(feats) == 2:
        features = feats
    elif len(feats) == 1:
        x = data.X[feats[0]].to_numpy(dtype=float)
        x = np.where(np.isnan(x), np.nanmean(x), x)
        jitter = np.random.default_rng(0).uniform(-0.5, 0.5, x.size)
        return np.column_stack([x, jitter]), [feats[0], "(spread out at random)"]
    if features is not None:
        cols = []
        for f in features:
            x = data.X[f].to_numpy(dtype=float)
            cols.append(np.where(np.isnan(x), np.nanmean(x), x))
        return np.column_stack(cols), list(map(str, features))
    Z = numeric_matrix(data)
    Z = Z - Z.mean(axis=0)
    _, s, vt = np.linalg.svd(Z, full_matrices=False)
    share = s ** 2 / max(float((s ** 2).sum()), 1e-300)
    coords = Z @ vt[:2].T
    if coords.shape[1] < 2:
        coords = np.column_stack([coords, np.zeros(len(coords))])
    return coords, [f"PC1 ({share[0]:.0%} of variance)", f"PC2 ({share[1] if share.size > 1 else 0:.0%})"]


def display_sample(n_rows: int, max_points: int = DISPLAY_MAX, seed: int = 0) -> np.ndarray:
    """Sorted indices of the rows to draw: all of them, or a uniform random sample of ``max_points``."""
    if n_rows <= max_points:
        return np.arange(n_rows)
    return np.sort(np.random.default_rng(seed).choice(n_rows, size=max_points, replace=False))
