"""Step 2: a suggested role (feature, label, identifier, ignored) and likelihood family per
column, with the reason, as a table a user can inspect and override."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..encoding import as_numeric as _as_numeric
from ..encoding import examples as _examples
from .errors import DataLoadError, DuplicateColumnsError, EmptyFileError

__all__ = ["MAX_BINOMIAL_N", "MAX_CATEGORIES", "MAX_POISSON_DISPERSION", "ROLES", "suggest_roles_and_families"]

#: A text column with more distinct values than this is not suggested as categorical.
MAX_CATEGORIES = 50
#: Roles a column can take.
ROLES = ("feature", "label", "identifier", "ignored")
#: Largest n (number of trials) for which a whole-number column is suggested as binomial.
MAX_BINOMIAL_N = 10
#: Variance/mean above which a count column is suggested as Gaussian instead of Poisson.
MAX_POISSON_DISPERSION = 10.0


_LABEL_WORDS = {"label", "labels", "class", "classes", "target", "diagnosis", "outcome", "cluster", "clusters"}
_ID_WORDS = {"id", "ids", "identifier", "uuid", "guid", "mrn"}


def _tokens(name) -> set[str]:
    s = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", s)
    return {t for t in re.split(r"[^0-9a-zA-Z]+", s.lower()) if t}


def _check_frame(df) -> None:
    if not isinstance(df, pd.DataFrame):
        raise DataLoadError(f"expected a DataFrame (from read_table), got {type(df).__name__}.")
    names = [str(c) for c in df.columns]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DuplicateColumnsError(
            f"duplicate column name(s) {dup}; rename the columns so each is unique (read_table renames "
            "repeats to name_2, name_3, ... for you)."
        )
    if df.shape[1] == 0:
        raise EmptyFileError("the table has no columns; choose the file that holds the data.")


def _suggest_one(s: pd.Series, n_rows: int, max_categories: int) -> dict:
    name = s.name
    num = _as_numeric(s)
    n_missing = int(s.isna().sum())
    words = _tokens(name)
    row = {"column": name, "role": "feature", "family": None, "kind": "", "reason": "",
           "n_missing": n_missing, "n_distinct": 0, "examples": ""}
    if num is not None:
        n_inf = int(np.isinf(num).sum())
        finite = num[np.isfinite(num)]
        values = finite.to_numpy()
        distinct = np.unique(values)
        row["n_distinct"] = int(distinct.size)
        row["examples"] = _examples(values)
        integer = bool(values.size) and bool(np.all(values == np.round(values)))
        row["kind"] = "integer" if integer else "real"
        inf_note = (f"; {n_inf} infinite value(s) will be treated as missing" if n_inf else "")
    else:
        present = s.dropna().astype(str)
        distinct = pd.unique(present)
        row["n_distinct"] = len(distinct)
        row["examples"] = _examples(present)
        row["kind"] = "text"
        inf_note = ""
        n_inf = 0
        values = present.to_numpy()
    n_obs = len(values)
    nd = row["n_distinct"]
    if n_obs == 0:
        return {**row, "role": "ignored", "kind": "empty",
                "reason": f"all {n_rows} values are missing" + (" or infinite" if n_inf else "")
                + "; there is nothing to cluster on."}
    if words & _LABEL_WORDS:
        if nd < 2:
            return {**row, "role": "ignored",
                    "reason": f"named like a ground-truth label but has a single value ({row['examples']}); a label "
                              "needs at least two classes to compare clusters with."}
        return {**row, "role": "label",
                "reason": f"named like a ground-truth label ({nd} classes); used to evaluate the clusters, not to "
                          "form them."}
    if nd == 1:
        return {**row, "role": "ignored",
                "reason": f"constant: every observed value is {row['examples']}; it cannot separate clusters."}
    if words & _ID_WORDS and (row["kind"] in ("integer", "text")):
        return {**row, "role": "identifier", "reason": "named like an identifier; kept to label rows, not clustered."}
    if row["kind"] == "text" and nd == n_obs == n_rows and nd > 2:
        return {**row, "role": "identifier",
                "reason": "text with a different value in every row; looks like an identifier (kept to label rows)."}
    if row["kind"] == "integer" and nd == n_obs == n_rows and nd > 2:
        srt = np.sort(values)
        if np.array_equal(srt, np.arange(srt[0], srt[0] + n_rows)) and srt[0] in (0, 1):
            return {**row, "role": "identifier",
                    "reason": f"the row numbers {int(srt[0])}..{int(srt[-1])}; looks like an identifier, not a "
                              "measurement."}
    if nd == 2:
        vals = sorted(str(v) for v in distinct) if row["kind"] == "text" else [_examples([v]) for v in distinct]
        is01 = row["kind"] != "text" and set(np.asarray(distinct, dtype=float)) == {0.0, 1.0}
        recode = "" if is01 else " (recoded to 0/1)"
        return {**row, "family": "bernoulli", "reason": f"two values ({', '.join(vals)}){recode}" + inf_note + "."}
    if row["kind"] == "text":
        if nd > max_categories or (nd > 10 and nd > n_obs / 2):
            return {**row, "role": "ignored",
                    "reason": f"text with {nd} different values in {n_obs} rows: too many categories to learn from "
                              f"(more than {max_categories}, or most seen only once or twice). If it identifies rows, "
                              "make it the identifier; if it is free text, group it into a few categories first."}
        return {**row, "family": "categorical", "reason": f"text with {nd} categories."}
    lo, hi = float(values.min()), float(values.max())
    if row["kind"] == "integer":
        if lo >= 0 and hi <= MAX_BINOMIAL_N:
            return {**row, "family": "binomial",
                    "reason": f"whole numbers {int(lo)}..{int(hi)}: a small ordinal scale or count, modelled as "
                              f"binomial with n = {int(hi)}" + inf_note + "."}
        if lo < 0 and hi - lo <= MAX_BINOMIAL_N:
            return {**row, "family": "binomial",
                    "reason": f"whole numbers {int(lo)}..{int(hi)}: an ordinal scale, shifted to 0..{int(hi - lo)} and "
                              f"modelled as binomial with n = {int(hi - lo)}" + inf_note + "."}
        if lo >= 0:
            mean, var = values.mean(), values.var()
            disp = var / mean if mean > 0 else 0.0
            if disp <= MAX_POISSON_DISPERSION:
                return {**row, "family": "poisson",
                        "reason": f"non-negative whole numbers {int(lo)}..{int(hi)}: counts, modelled as Poisson"
                                  + inf_note + "."}
            return {**row, "family": "normal_gamma",
                    "reason": f"whole numbers {int(lo)}..{int(hi)} but far more spread than Poisson counts "
                              f"(variance/mean = {disp:.0f} > {MAX_POISSON_DISPERSION:g}); modelled as a real "
                              "measurement (choose poisson if these are counts)" + inf_note + "."}
        return {**row, "family": "normal_gamma",
                "reason": f"whole numbers {int(lo)}..{int(hi)} including negatives; modelled as real" + inf_note + "."}
    return {**row, "family": "normal_gamma", "reason": "real numbers; modelled as Gaussian (normal_gamma)"
            + inf_note + "."}


def suggest_roles_and_families(df: pd.DataFrame, *, max_categories: int = MAX_CATEGORIES) -> pd.DataFrame:
    """Suggest a role and a likelihood family for each column, with the reason.

    Rules, in order (the first that applies wins):

    * all values missing, or one value only -> ``ignored``;
    * named like a label (a word of the name is label, class, target, diagnosis,
      outcome or cluster) -> ``label`` (only the first such column; a later one is
      ``ignored``); with a single value -> ``ignored``;
    * named like an identifier (a word id, identifier, uuid, guid, mrn) with whole
      numbers or text, text with a different value in every row, or whole numbers that
      are the row numbers 0..N-1 / 1..N -> ``identifier`` (only the first);
    * two distinct values (numbers or text) -> ``bernoulli`` (recoded to 0/1);
    * text: at most ``max_categories`` categories (and, above 10, at most one per two
      rows) -> ``categorical``; more -> ``ignored`` (too many categories);
    * whole numbers 0..n with n <= 10 -> ``binomial`` (n = the maximum; an ordinal
      scale); a range of at most 10 with negatives -> ``binomial`` after a shift to 0;
    * other non-negative whole numbers -> ``poisson``, unless the variance exceeds 10
      times the mean (a measurement such as an enzyme level, badly fitted by a
      Poisson) -> ``normal_gamma``;
    * everything else numeric -> ``normal_gamma``.

    Parameters
    ----------
    df : DataFrame
        As returned by :func:`read_table` (any DataFrame with unique column names works).
    max_categories : int, default :data:`MAX_CATEGORIES`

    Returns
    -------
    DataFrame
        One row per column of ``df``, in order, with ``column``, ``role``, ``family``
        (None for non-features), ``kind`` (integer, real, text, empty), ``reason``,
        ``n_missing``, ``n_distinct`` and ``examples``. Pass it (possibly edited) to
        :func:`prepare`.
    """
    _check_frame(df)
    rows = [_suggest_one(df[c], len(df), max_categories) for c in df.columns]
    taken = set()
    for r in rows:
        if r["role"] in ("label", "identifier"):
            if r["role"] in taken:
                r["reason"] = (f"another {r['role']} column comes first; make this one the {r['role']} instead if it "
                               f"is the right one. ({r['reason']})")
                r["role"] = "ignored"
            else:
                taken.add(r["role"])
    cols = ["column", "role", "family", "kind", "reason", "n_missing", "n_distinct", "examples"]
    out = pd.DataFrame(rows, columns=cols)
    out["family"] = pd.Series([r["family"] for r in rows], dtype=object)
    return out
