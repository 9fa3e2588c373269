"""Step 2: a suggested role (feature, label, identifier, ignored) and likelihood family per
column, with the reason, as a table a user can inspect and override."""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from mapdp_core.core.encoding import as_numeric as _as_numeric
from mapdp_core.core.encoding import examples as _examples
from mapdp_core.core.encoding import EXACT_DIGITS, MAX_SCALE_LEVELS, code_reason, lattice, stored_whole
from mapdp_core.core.validation import duplicate_names
from .cells import parse_dates, parse_numbers
from .errors import DataLoadError, DuplicateColumnsError, EmptyFileError

__all__ = ["COUNT_WORDS", "FREE_TEXT_CHARS", "FREE_TEXT_WORDS", "MAX_BINOMIAL_N", "MAX_CATEGORIES",
           "MAX_POISSON_DISPERSION", "MEASUREMENT_WORDS", "ROLES", "suggest_roles_and_families", "suspicious_zeros"]

#: A text column with more distinct values than this is not suggested as categorical.
MAX_CATEGORIES = 50
#: Roles a column can take. "outcome": what happened after the measurements (a later diagnosis, a
#: time to death and its flag), left out of the clustering like "ignored" and compared across the
#: clusters afterwards (:func:`mapdp_core.evaluation.outcomes.outcome_spec`); never suggested.
ROLES = ("feature", "label", "identifier", "outcome", "ignored")
#: Largest n (number of trials) for which a whole-number column is suggested as binomial.
MAX_BINOMIAL_N = MAX_SCALE_LEVELS - 1
#: Variance/mean above which a count column is suggested as Gaussian instead of Poisson.
MAX_POISSON_DISPERSION = 10.0
#: Name words that say a whole-number column counts something (the count rule below).
COUNT_WORDS = frozenset({
    "count", "counts", "number", "num", "nr", "no", "n", "visits", "visit", "episodes", "admissions",
    "pregnancies", "pregnant", "children", "births", "events", "times", "cigarettes", "falls", "relapses",
    "lesions", "nodes", "seizures", "attacks", "occurrences", "freq", "frequency", "calls", "errors", "items",
    "cases", "deaths", "infections", "hospitalizations", "hospitalisations", "prescriptions", "steps"})
#: Name words that say a column measures something on a continuous scale, so whole numbers
#: in it are rounded measurements, not counts.
MEASUREMENT_WORDS = frozenset({
    "age", "height", "weight", "length", "width", "depth", "diameter", "radius", "area", "volume", "mass", "bmi",
    "size", "ratio", "index", "rate", "pressure", "bp", "sbp", "dbp", "glucose", "cholesterol", "insulin",
    "level", "concentration", "temperature", "temp", "dose", "angle", "distance", "perimeter", "skewness",
    "kurtosis", "circularity", "compactness", "elongatedness", "rectangularity", "variance", "gyration",
    "moment", "mm", "cm", "kg", "mg", "ml", "mmhg", "mmol", "triceps", "thickness", "pulse", "hr", "heart"})
#: Text whose distinct values average at least this many words (or :data:`FREE_TEXT_CHARS`
#: characters) is free text (sentences, notes), left out however often its phrases repeat; the
#: wordiest category labels of the shipped and benchmark tables average 2.5 words and 15 characters
#: (cars93's AirBags: "Driver & Passenger", "Driver only"; ``tests/data/test_free_text.py``).
FREE_TEXT_WORDS = 3
FREE_TEXT_CHARS = 30
#: cells of a text column tried first, so that a long column of words is not parsed cell by cell
_SAMPLE = 1000


_LABEL_WORDS = {"label", "labels", "class", "classes", "target", "diagnosis", "outcome", "cluster", "clusters"}
_ID_WORDS = {"id", "ids", "identifier", "uuid", "guid", "mrn"}


def _tokens(name) -> set[str]:
    s = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", s)
    return {t for t in re.split(r"[^0-9a-zA-Z]+", s.lower()) if t}


def _check_frame(df) -> None:
    if not isinstance(df, pd.DataFrame):
        raise DataLoadError(f"expected a DataFrame (from read_table), got {type(df).__name__}.")
    dup = duplicate_names(df.columns)
    if dup:
        raise DuplicateColumnsError(
            f"duplicate column name(s) {dup}; rename the columns so each is unique (read_table renames "
            "repeats to name_2, name_3, ... for you)."
        )
    if df.shape[1] == 0:
        raise EmptyFileError("the table has no columns; choose the file that holds the data.")


def suspicious_zeros(values) -> int:
    """How many zeros in a column of numbers look like "not measured" (0 if none do).

    Zeros are suspicious when there are no negative values and the smallest non-zero value
    lies far from zero: more than twice the largest gap between consecutive distinct values
    in the lower half of the non-zero values (pima: glucose 0 then 44, 56, 57, ...; blood
    pressure 0 then 24, 30, 38, ...). Counts with zeros (0, 1, 2, ...) and zero-inflated
    amounts (0, then 0.5, 1, 1.5, ...) are not flagged. At least five distinct non-zero
    values are needed to judge.
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0 or (x < 0).any():
        return 0
    n_zero = int((x == 0).sum())
    if n_zero == 0:
        return 0
    nonzero = np.unique(x[x > 0])
    if nonzero.size < 5:
        return 0
    lower = nonzero[: max(2, nonzero.size // 2)]
    typical_gap = float(np.max(np.diff(lower)))
    return n_zero if nonzero[0] > 2 * typical_gap else 0


def _count_evidence(values: np.ndarray, words: set, zeros_flagged: bool) -> tuple[bool, str]:
    """Whether non-negative whole numbers are plausibly counts, and why (for the reason)."""
    n = values.size
    with np.errstate(over="ignore"):  # values near 1e308: var = inf reads as far too spread, no warning needed
        mean, var = float(values.mean()), float(values.var())
    sd = math.sqrt(var)
    disp = var / mean if mean > 0 else 0.0
    if zeros_flagged:
        return False, "the non-zero values are far from zero: a measurement, modelled as real"
    if disp > MAX_POISSON_DISPERSION:
        return False, (f"far more spread than Poisson counts (variance/mean = {disp:.0f} > "
                       f"{MAX_POISSON_DISPERSION:g}); modelled as a real measurement")
    named_count = bool(words & COUNT_WORDS)
    named_measure = sorted(words & MEASUREMENT_WORDS)
    if named_measure and not named_count:
        return False, f"named like a measurement ('{named_measure[0]}'); modelled as real"
    if named_count:
        return True, "named like a count"
    if sd > 0 and mean <= 2 * sd:
        return True, f"small counts reaching down to zero (mean {mean:.3g} within 2 sd of 0)"
    if n > 1 and abs(disp - 1) <= 3 * math.sqrt(2 / (n - 1)):
        return True, f"spread like Poisson counts (variance/mean = {disp:.2f})"
    return False, (f"far from zero with a small relative spread (mean {mean:.3g} = {mean / sd if sd else 0:.1f} sd, "
                   f"variance/mean = {disp:.2f}): a measurement, modelled as real")


def _object_kind(s: pd.Series) -> str | None:
    """date / duration for datetime-like columns (numpy, pandas or Python objects), else None."""
    if pd.api.types.is_datetime64_any_dtype(s.dtype):
        return "date"
    if pd.api.types.is_timedelta64_dtype(s.dtype):
        return "duration"
    if s.dtype == object:
        inferred = pd.api.types.infer_dtype(s, skipna=True)
        if inferred in ("datetime", "datetime64", "date"):
            return "date"
        if inferred == "timedelta":
            return "duration"
    return None


def _with_note(reason: str, note: str) -> str:
    return reason if not note else reason.rstrip(".") + f"; {note}."


def _suggest_one(s: pd.Series, n_rows: int, max_categories: int, note: str = "") -> dict:
    name = s.name
    n_missing = int(s.isna().sum())
    words = _tokens(name)
    row = {"column": name, "role": "feature", "family": None, "kind": "", "reason": "",
           "n_missing": n_missing, "n_distinct": 0, "examples": "", "suspect_zeros": 0}
    special = _object_kind(s)
    if special is not None:
        present = s.dropna()
        row.update(kind=special, n_distinct=int(present.nunique()), examples=_examples(present.astype(str)))
        if present.empty:
            return {**row, "kind": "empty", "role": "ignored",
                    "reason": f"an empty column: all {n_rows} values are missing; there is nothing to cluster on."}
        what = note or ("a date" if special == "date" else "a duration")
        return {**row, "role": "ignored",
                "reason": f"left out: {what} (use it as a number of days if you want it: make it a feature with "
                          "family normal_gamma, and prepare counts "
                          + ("days since 1970-01-01)." if special == "date" else "its length in days).")}
    num = _as_numeric(s)
    if num is not None and pd.api.types.is_integer_dtype(s.dtype) and s.notna().any() \
            and int(s.dropna().abs().max()) >= 10 ** EXACT_DIGITS:  # before floats round their last digits away
        return {**row, "role": "identifier", "kind": "integer", "n_distinct": int(s.nunique()),
                "examples": _examples(s.dropna().astype(str)),
                "reason": f"whole numbers of more than {EXACT_DIGITS} digits: record or card numbers, not quantities "
                          "(kept to label rows, not clustered)."}
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
        if values.size and not (pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype)):
            inferred = pd.api.types.infer_dtype(s, skipna=True)
            if inferred != "boolean":
                how = ("stored as Python objects" if inferred in ("integer", "floating", "mixed-integer-float",
                                                                  "decimal") else "written as text")
                note = "; ".join(x for x in (note, f"numbers {how}, read as numbers") if x)
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
                "reason": f"an empty column: all {n_rows} values are missing" + (" or infinite" if n_inf else "")
                + "; there is nothing to cluster on."}
    row = _suggest_values(row, s, values, distinct, words, n_rows, max_categories, inf_note)
    row["reason"] = _with_note(row["reason"], note)
    return row


#: Real numbers need more distinct values than an ordinal scale can have (:func:`_floats_rule`).
_PLAIN_MIN_DISTINCT = MAX_BINOMIAL_N + 2


def _plain_real_rows(df: pd.DataFrame, notes: dict) -> dict[int, dict]:
    """The suggestion of every column that is plainly a real measurement, by position, computed
    for all such columns at once: a wide table (a gene panel of 20 000 columns) is read in
    seconds, where :func:`_suggest_one` costs a millisecond a column in pandas' overheads.

    Plain: stored as numpy floats, no note from the reader, a name that is no label's or
    identifier's, no infinite value, no zero unless a negative value is there too (so no zeros
    that look like "not measured"), at least one value that is not whole, and more distinct
    values than an ordinal scale has. For
    these the rules of :func:`_suggest_one` end, without exception, at "real numbers; modelled
    as Gaussian (normal_gamma)"; every other column goes through :func:`_suggest_one`
    (``tests/data/test_wide_read.py`` compares the two on varied tables)."""
    positions = [j for j, (c, t) in enumerate(zip(df.columns, df.dtypes))
                 if isinstance(t, np.dtype) and t.kind == "f" and not notes.get(c)
                 and not (_tokens(c) & (_LABEL_WORDS | _ID_WORDS))]
    if not positions:
        return {}
    M = df.iloc[:, positions].to_numpy(dtype=float)
    finite = np.isfinite(M)
    nan = np.isnan(M)
    n_finite = finite.sum(axis=0)
    with np.errstate(invalid="ignore"):
        whole = np.where(finite, M == np.round(M), True).all(axis=0)
    S = np.sort(np.where(finite, M, np.nan), axis=0)  # NaN last in each column
    n_distinct = ((np.diff(S, axis=0) != 0) & ~np.isnan(S[1:])).sum(axis=0) + (n_finite > 0)
    # zeros with no negative value beside them may mean "not measured" (suspicious_zeros): careful path
    doubtful_zeros = (M == 0).any(axis=0) & ~(M < 0).any(axis=0)
    eligible = ((n_finite + nan.sum(axis=0) == len(M)) & (n_finite > 0) & ~whole
                & (n_distinct >= _PLAIN_MIN_DISTINCT) & ~doubtful_zeros)
    rows = {}
    for k in np.flatnonzero(eligible):
        j = positions[k]
        values = M[finite[:, k], k]
        rows[j] = {"column": df.columns[j], "role": "feature", "family": "normal_gamma", "kind": "real",
                   "reason": "real numbers; modelled as Gaussian (normal_gamma).", "n_missing": int(nan[:, k].sum()),
                   "n_distinct": int(n_distinct[k]), "examples": _examples(values), "suspect_zeros": 0}
    return rows


def _text_rule(row: dict, present: pd.Series, n_obs: int, nd: int, max_categories: int) -> dict | None:
    """Free text, numbers written with units or separators, and dates written as text: left out."""
    cells = present.str.strip()
    if nd > 2:
        # how the values read, each distinct value once (a frequent short phrase does not hide sentences)
        sample = pd.Series(pd.unique(cells.iloc[:_SAMPLE * 10]), dtype=object)
        n_words = float(sample.str.split().str.len().mean())
        n_chars = float(sample.str.len().mean())
        if n_words >= FREE_TEXT_WORDS or n_chars >= FREE_TEXT_CHARS:
            mostly_different = nd > n_obs / 2 or nd > max_categories
            how = (f"{nd} different values in {n_obs} rows" if mostly_different else
                   f"{nd} different phrases, repeated, in {n_obs} rows")
            return {**row, "role": "ignored", "kind": "text",
                    "reason": f"free text: {how}, about {n_words:.0f} words ({n_chars:.0f} characters) each, reads as "
                              "sentences rather than category labels; left out"
                              + (f" (too many categories to learn from: more than {max_categories}, or most seen only "
                                 "once or twice). Group it into a few categories first if it matters."
                                 if mostly_different else
                                 ". If its phrases are really categories, make it a feature with family categorical.")}
    head = cells.iloc[:_SAMPLE].tolist()
    if code_reason(cells):  # record numbers, postal codes: text to the rules below, never numbers
        return None
    if parse_numbers(head) is not None:
        parsed = parse_numbers(cells.tolist())
        if parsed is not None and len(parsed.bad) <= 0.1 * n_obs:
            what = parsed.note or "numbers written as text"
            return {**row, "role": "ignored",
                    "reason": f"numbers written as text ({what}); left out here: read the file with read_table, "
                              "which reads them as numbers, or convert the column with pandas.to_numeric."}
    if parse_dates(head) is not None and parse_dates(cells.tolist()) is not None:
        return {**row, "role": "ignored", "kind": "date",
                "reason": "left out: a date written as text (use it as a number of days if you want it: make it a "
                          "feature with family normal_gamma, and prepare counts days since 1970-01-01)."}
    return None


def _suggest_values(row, s, values, distinct, words, n_rows, max_categories, inf_note) -> dict:
    n_obs = len(values)
    nd = row["n_distinct"]
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
    if row["kind"] == "text":
        rule = _text_rule(row, s.dropna().astype(str), n_obs, nd, max_categories)
        if rule is not None:
            return rule
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
    n_zero = suspicious_zeros(values)
    zero_note = ""
    if n_zero:
        first = float(np.min(values[values > 0]))
        zero_note = (f"; {n_zero} zero(s) look like 'not measured' (the other values start at {_examples([first])}): "
                     "if 0 means 'not measured' here, mark this column's zeros as missing")
        row = {**row, "suspect_zeros": n_zero}
    lo, hi = float(values.min()), float(values.max())
    if row["kind"] == "integer" and not stored_whole(s):
        # whole values stored as floats: gaps forced them to float, or a unit made them whole
        # (1.234 kg is 1234 g), so whole values alone say nothing; the rules below are unit-free
        return _floats_rule(row, values, words, lo, hi, nd, n_zero, inf_note, zero_note)
    if row["kind"] == "real":
        return _floats_rule(row, values, words, lo, hi, nd, n_zero, inf_note, zero_note)
    if row["kind"] == "integer":
        if lo >= 0 and hi <= MAX_BINOMIAL_N:
            return {**row, "family": "binomial",
                    "reason": f"whole numbers {int(lo)}..{int(hi)}: a small ordinal scale or count, modelled as "
                              f"binomial with n = {int(hi)}" + inf_note + zero_note + "."}
        if lo < 0 and hi - lo <= MAX_BINOMIAL_N:
            return {**row, "family": "binomial",
                    "reason": f"whole numbers {int(lo)}..{int(hi)}: an ordinal scale, shifted to 0..{int(hi - lo)} and "
                              f"modelled as binomial with n = {int(hi - lo)}" + inf_note + "."}
        if lo >= 0:
            counted, why = _poisson_rule(row, values, words, n_zero, lo, hi, inf_note + zero_note)
            if counted is not None:
                return counted
            return {**row, "family": "normal_gamma",
                    "reason": f"whole numbers {int(lo)}..{int(hi)}, {why} (choose poisson if these are counts)"
                              + inf_note + zero_note + "."}
        return {**row, "family": "normal_gamma",
                "reason": f"whole numbers {int(lo)}..{int(hi)} including negatives; modelled as real" + inf_note + "."}
    return {**row, "family": "normal_gamma", "reason": "real numbers; modelled as Gaussian (normal_gamma)"
            + inf_note + zero_note + "."}


def _poisson_rule(row: dict, values: np.ndarray, words: set, n_zero: int, lo: float, hi: float,
                  notes: str) -> tuple[dict | None, str]:
    """(the Poisson suggestion, why) for non-negative whole numbers spread like counts, else
    (None, why not); suspicious zeros are left out of the judgement (:func:`_count_evidence`)."""
    judged = values[values != 0] if n_zero else values
    counts, why = _count_evidence(judged.astype(float), words, bool(n_zero))
    if not counts:
        return None, why
    return {**row, "family": "poisson", "reason": f"non-negative whole numbers {int(lo)}..{int(hi)}, {why}: counts, "
                                                  "modelled as Poisson" + notes + "."}, why


def _floats_rule(row: dict, values: np.ndarray, words: set, lo: float, hi: float, nd: int, n_zero: int,
                 inf_note: str, zero_note: str) -> dict:
    """The family of a numeric column stored as floats, by rules that give the same answer in
    any unit: three to :data:`MAX_BINOMIAL_N` + 1 evenly spaced levels (:func:`lattice`) are an
    ordinal scale (binomial over the levels); whole values from zero up are counts only when
    the name says so and they are spread like counts; anything else is a real measurement."""
    grid = lattice(values, MAX_BINOMIAL_N + 1) if nd >= 3 else None
    if grid is None and nd >= 3:  # levels that do not reach 0 within the bound: counted from the lowest
        grid = lattice(values)
        if grid is not None and round((hi - lo) / grid[0]) + 1 <= MAX_BINOMIAL_N + 1:
            grid = (grid[0], lo)
        else:
            grid = None
    if grid is not None:
        step, origin = grid
        n = int(round((hi - origin) / step))
        if step == 1.0 and origin == 0.0:
            how = (f"whole numbers {int(lo)}..{int(hi)}: a small ordinal scale or count, modelled as binomial "
                   f"with n = {n}")
        else:
            start = "from 0" if origin == 0.0 else f"from {_examples([origin])}"
            how = (f"{nd} values on evenly spaced levels ({_examples([lo])} to {_examples([hi])}, steps of "
                   f"{_examples([step])} counted {start}): an ordinal scale, modelled as binomial with n = {n}")
        return {**row, "family": "binomial", "reason": how + inf_note + zero_note + "."}
    if row["kind"] == "integer" and lo >= 0 and words & COUNT_WORDS:
        counted, _ = _poisson_rule(row, values, words, n_zero, lo, hi, inf_note + zero_note)
        if counted is not None:
            return counted
    if row["kind"] == "integer":
        return {**row, "family": "normal_gamma",
                "reason": f"whole numbers {int(lo)}..{int(hi)} stored as decimals: modelled as a real measurement "
                          "(store counts as whole numbers, or choose poisson, if they are counts)"
                          + inf_note + zero_note + "."}
    return {**row, "family": "normal_gamma", "reason": "real numbers; modelled as Gaussian (normal_gamma)"
            + inf_note + zero_note + "."}


def suggest_roles_and_families(df: pd.DataFrame, *, max_categories: int = MAX_CATEGORIES) -> pd.DataFrame:
    """Suggest a role and a likelihood family for each column, with the reason.

    Rules, in order (the first that applies wins):

    * dates (datetime64, or Python dates) and durations (timedelta) -> ``ignored``, with
      a note: use one as a number of days by making it a feature with a real family
      (:func:`prepare` converts it);
    * all values missing -> ``ignored`` ("an empty column"); one value only -> ``ignored``;
    * named like a label (a word of the name is label, class, target, diagnosis,
      outcome or cluster) -> ``label`` (only the first such column; a later one is
      ``ignored``); with a single value -> ``ignored``;
    * text that is free text (more than two distinct values averaging at least
      :data:`FREE_TEXT_WORDS` words or :data:`FREE_TEXT_CHARS` characters, however often
      they repeat: notes, not labels) -> ``ignored`` ("free text"; make it a categorical
      feature if its phrases are really categories); text that is numbers with units,
      percentages or thousands separators, or dates, in a table that did not come from
      :func:`read_table` -> ``ignored`` with how to read them as numbers;
    * named like an identifier (a word id, identifier, uuid, guid, mrn) with whole
      numbers or text, text with a different value in every row, or whole numbers that
      are the row numbers 0..N-1 / 1..N -> ``identifier`` (only the first);
    * two distinct values (numbers or text) -> ``bernoulli`` (recoded to 0/1);
    * text: at most ``max_categories`` categories (and, above 10, at most one per two
      rows) -> ``categorical``; more -> ``ignored`` (too many categories);
    * whole numbers 0..n with n <= 10 -> ``binomial`` (n = the maximum; an ordinal
      scale); a range of at most 10 with negatives -> ``binomial`` after a shift to 0;
    * other non-negative whole numbers -> ``poisson`` only where counting is plausible
      (the first that applies decides): zeros that look like "not measured"
      (:func:`suspicious_zeros`) -> real; variance above 10 times the mean -> real; a
      name word in :data:`MEASUREMENT_WORDS` (age, pressure, glucose, ratio, ...) and none
      in :data:`COUNT_WORDS` -> real; a name word in :data:`COUNT_WORDS` -> counts; values
      reaching down to zero (mean within two standard deviations of 0) -> counts; a
      variance/mean ratio within 3 standard errors of Poisson's 1 (3 sqrt(2/(n-1))) ->
      counts; otherwise (far from zero with a small relative spread: ages, blood
      pressures, shape measurements) -> ``normal_gamma``. For large means a Gaussian
      describes counts as well as a Poisson does, so the cost of calling such counts
      real is small, while a Poisson forces variance = mean on a measurement;
    * everything else numeric -> ``normal_gamma``.

    Numeric columns whose zeros look like "not measured" get a note in the reason and
    their number in ``suspect_zeros``; :func:`prepare` treats them as missing only when
    asked (``zeros_as_missing=``). The notes :func:`read_table` made (units, percentages,
    thousands separators, decimal comma, date style; ``df.attrs["column_notes"]``) are
    added to the reasons.

    Parameters
    ----------
    df : DataFrame
        As returned by :func:`read_table` (any DataFrame with unique column names works).
    max_categories : int, default :data:`MAX_CATEGORIES`

    Returns
    -------
    DataFrame
        One row per column of ``df``, in order, with ``column``, ``role``, ``family``
        (None for non-features), ``kind`` (integer, real, text, date, duration, empty),
        ``reason``, ``n_missing``, ``n_distinct``, ``examples`` and ``suspect_zeros`` (how
        many zeros look like "not measured"; 0 if none). Pass it (possibly edited) to
        :func:`prepare`.
    """
    _check_frame(df)
    notes = df.attrs.get("column_notes", {}) if isinstance(df.attrs.get("column_notes"), dict) else {}
    plain = _plain_real_rows(df, notes)
    rows = [plain[j] if j in plain else _suggest_one(df.iloc[:, j], len(df), max_categories, str(notes.get(c, "")))
            for j, c in enumerate(df.columns)]
    taken = set()
    for r in rows:
        if r["role"] in ("label", "identifier"):
            if r["role"] in taken:
                r["reason"] = (f"another {r['role']} column comes first; make this one the {r['role']} instead if it "
                               f"is the right one. ({r['reason']})")
                r["role"] = "ignored"
            else:
                taken.add(r["role"])
    cols = ["column", "role", "family", "kind", "reason", "n_missing", "n_distinct", "examples", "suspect_zeros"]
    out = pd.DataFrame(rows, columns=cols)
    out["family"] = pd.Series([r["family"] for r in rows], dtype=object)
    return out
