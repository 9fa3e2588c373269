"""An outcome the clustering never saw, compared across the clusters afterwards.

A profile of the columns that formed the clusters is circular: the clusters were chosen to
differ on them, so their tests' p-values are too small (the † of the subtype report). An
outcome left out of the clustering (a later diagnosis, a death, a response to treatment) is
not: whether it differs between subtypes is the one comparison here that validates them
(Hennig 2015, "What are the true clusters?", Sec. 5: external validation). Three kinds:

* ``"binary"`` (0/1, yes/no): the event rate per cluster with Wilson's 95 % interval (Wilson
  1927), and Pearson's chi-square test of the clusters x outcome table;
* ``"numeric"``: the mean per cluster with Student's t 95 % interval, and the Kruskal-Wallis
  test (ranks: no normality assumed);
* ``"time_to_event"``: a follow-up time with an event flag (1 = the event, 0 = censored, the
  follow-up ended first): Kaplan-Meier curves per cluster (Kaplan & Meier 1958) with
  Greenwood's variance and log(-log) 95 % bands (Kalbfleisch & Prentice 2002, Sec. 1.4), the
  median survival, the log-rank test across clusters (Mantel 1966; Peto & Peto 1972), and
  each cluster's hazard ratio against the largest cluster from a Cox proportional-hazards
  model with the cluster as its only covariate (Cox 1972; Breslow's handling of tied times),
  with Wald 95 % intervals.

Rows without an outcome (a missing value, or a missing time or flag) are left out of the
comparison and counted; the clusters themselves are never changed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["OUTCOME_KINDS", "OutcomeComparison", "compare_outcome", "cox_hazard_ratios", "kaplan_meier",
           "logrank_test", "outcome_spec"]

OUTCOME_KINDS = ("binary", "numeric", "time_to_event")
_Z = float(stats.norm.ppf(0.975))
#: |log hazard ratio| beyond which Newton's steps are taken to run away: the partial likelihood is
#: monotone (a ratio of e^20 is no estimate), and the ratios are given as unknown
_MONOTONE = 20.0


@dataclass(frozen=True)
class OutcomeComparison:
    """One outcome across the clusters (:func:`compare_outcome`).

    ``table``: one row per cluster with at least one row with an outcome: ``cluster``, ``n``
    (rows with an outcome) and, by kind, ``events`` / ``rate`` / ``low`` / ``high`` (binary),
    ``mean`` / ``sd`` / ``low`` / ``high`` (numeric), or ``events`` / ``median`` (median
    survival, NaN where the curve never falls to one half) / ``follow_up`` (the longest time
    observed: the curve holds its last value until then) / ``hazard_ratio`` / ``hr_low`` /
    ``hr_high`` (time to event; the reference cluster has 1); ``curves``: the Kaplan-Meier
    steps per cluster (``cluster``, ``time``, ``at_risk``, ``events``, ``survival``, ``low``,
    ``high``), None for the other kinds; ``test``, ``statistic``, ``df``, ``p_value``: the test
    across clusters; ``reference``: the cluster the hazard ratios compare with (None where
    there are none); ``left_out``: rows without an outcome."""

    name: str
    kind: str
    table: pd.DataFrame
    test: str
    statistic: float
    df: int
    p_value: float
    curves: pd.DataFrame | None = None
    reference: int | None = None
    left_out: int = 0

    def sentence(self, why: bool = True) -> str:
        """What the comparison says, in words a reader of the subtype report reads; ``why``: with
        the sentence on why it is not circular (a page that says so already leaves it out)."""
        p = "p < 0.001" if self.p_value < 0.001 else f"p = {self.p_value:.3f}"
        if not np.isfinite(self.p_value):
            p = "no test (one cluster, or no variation in the outcome)"
        what = {"binary": "The rate of", "numeric": "The mean of",
                "time_to_event": "The time to"}[self.kind]
        gone = f"; {self.left_out} row(s) without an outcome left out" if self.left_out else ""
        because = (" The outcome was not used to form the clusters, so this comparison is not circular, unlike the "
                   "profiles' tests.") if why else ""
        return f"{what} '{self.name}' across the clusters: {self.test}, {p}{gone}.{because}"


def _as_float(values, what: str) -> np.ndarray:
    try:
        x = pd.to_numeric(pd.Series(np.asarray(values, dtype=object).ravel()), errors="raise").to_numpy(float)
    except (TypeError, ValueError):
        raise ValueError(f"the outcome's {what} must be numbers (blank or NaN where unknown); "
                         "give a numeric column.") from None
    if np.isinf(x).any():
        raise ValueError(f"the outcome's {what} holds infinite values; mark them missing or correct them.")
    return x


def _event_flags(values) -> np.ndarray:
    """0/1 as floats (NaN where unknown); booleans, 0/1 numbers and yes/no text are accepted."""
    s = pd.Series(np.asarray(values, dtype=object).ravel())
    words = {"1": 1.0, "0": 0.0, "true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0, "y": 1.0, "n": 0.0}
    out = np.full(len(s), np.nan)
    for i, v in enumerate(s):
        if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
            continue
        key = str(v).strip().lower()
        key = key[:-2] if key.endswith(".0") else key
        if key not in words:
            raise ValueError(f"the outcome flag holds {v!r}; it must be 0/1 (or yes/no, true/false), with 1 for the "
                             "event and blank where unknown.")
        out[i] = words[key]
    return out


def kaplan_meier(time, event) -> pd.DataFrame:
    """The Kaplan-Meier estimate of S(t) = P(T > t) at each distinct event time (a first row at
    time 0 with S = 1): ``time``, ``at_risk``, ``events``, ``survival``, and the 95 % band
    ``low``/``high`` from Greenwood's variance on the log(-log S) scale (exact where S is 1
    or 0, where the band is S itself)."""
    time, event = np.asarray(time, float), np.asarray(event, float)
    order = np.argsort(time, kind="stable")
    time, event = time[order], event[order]
    t_event = np.unique(time[event == 1])
    at_risk = len(time) - np.searchsorted(time, t_event, side="left")
    deaths = np.array([np.sum((time == t) & (event == 1)) for t in t_event], dtype=float)
    surv = np.cumprod(1.0 - deaths / at_risk)
    with np.errstate(divide="ignore", invalid="ignore"):
        greenwood = np.cumsum(deaths / (at_risk * (at_risk - deaths)))
        log_s = np.log(surv)
        se = np.sqrt(greenwood) / np.abs(log_s)
        low = surv ** np.exp(_Z * se)
        high = surv ** np.exp(-_Z * se)
    flat = (surv <= 0) | (surv >= 1) | ~np.isfinite(se)
    low, high = np.where(flat, surv, low), np.where(flat, surv, high)
    return pd.DataFrame({"time": np.r_[0.0, t_event], "at_risk": np.r_[len(time), at_risk].astype(int),
                         "events": np.r_[0.0, deaths].astype(int), "survival": np.r_[1.0, surv],
                         "low": np.r_[1.0, low], "high": np.r_[1.0, high]})


def _median(curve: pd.DataFrame) -> float:
    """The first time the curve falls to one half or below (NaN where it never does)."""
    below = curve.index[curve["survival"] <= 0.5]
    return float(curve.loc[below[0], "time"]) if len(below) else math.nan


def logrank_test(time, event, groups) -> tuple[float, int, float]:
    """The log-rank test that every group has the same hazard: (chi-square, degrees of
    freedom, p-value). At each distinct event time the deaths are shared among the groups in
    proportion to their numbers at risk (hypergeometric means and covariances); the statistic
    is (O - E)' V^- (O - E) over the groups, with G - 1 degrees of freedom."""
    time, event = np.asarray(time, float), np.asarray(event, float)
    names, g = np.unique(np.asarray(groups), return_inverse=True)
    G = len(names)
    if G < 2 or not np.any(event == 1):
        return math.nan, max(G - 1, 0), math.nan
    O, E, V = np.zeros(G), np.zeros(G), np.zeros((G, G))
    for t in np.unique(time[event == 1]):
        risk = time >= t
        n_g = np.bincount(g[risk], minlength=G).astype(float)
        d_g = np.bincount(g[(time == t) & (event == 1)], minlength=G).astype(float)
        n, d = n_g.sum(), d_g.sum()
        O += d_g
        E += d * n_g / n
        if n > 1:
            share = n_g / n
            V += d * (n - d) / (n - 1) * (np.diag(share) - np.outer(share, share))
    diff = (O - E)[:-1]
    statistic = float(diff @ np.linalg.pinv(V[:-1, :-1]) @ diff)
    df = G - 1
    return statistic, df, float(stats.chi2.sf(statistic, df))


def cox_hazard_ratios(time, event, groups, reference, max_iter: int = 50) -> pd.DataFrame:
    """Each group's hazard ratio against ``reference`` from a Cox model whose only covariate is
    the group (indicators), fitted by Newton-Raphson on Breslow's partial likelihood (Cox 1972;
    Breslow 1974): ``group``, ``hazard_ratio``, ``hr_low``, ``hr_high`` (Wald 95 %). A group
    with no event has no finite estimate (the partial likelihood keeps rising as its ratio falls
    to 0): its ratio is 0 and its interval NaN, and it is left out of the fit. Where the fit
    has no finite maximum otherwise (a group whose events all come first), or the reference
    has no event, every other ratio is NaN."""
    time, event, groups = np.asarray(time, float), np.asarray(event, float), np.asarray(groups)
    names = [x for x in np.unique(groups) if x != reference]
    with_events = [x for x in names if np.any(event[groups == x] == 1)]
    keep = np.isin(groups, [reference, *with_events])
    t, e, gr = time[keep], event[keep], groups[keep]
    Z = np.column_stack([(gr == x).astype(float) for x in with_events]) if with_events else np.zeros((len(t), 0))
    beta, cov = np.zeros(Z.shape[1]), np.full((Z.shape[1], Z.shape[1]), np.nan)
    if Z.shape[1] and np.any(e == 1) and np.any(e[gr == reference] == 1):
        event_times = np.unique(t[e == 1])

        def partial(b, derivatives=True):
            """Breslow's log partial likelihood at b, with its gradient and Hessian."""
            eta = Z @ b
            w = np.exp(eta - eta.max())  # the shift cancels in every ratio below
            value, grad, hess = 0.0, np.zeros_like(b), np.zeros((len(b), len(b)))
            for s_ in event_times:
                risk = t >= s_
                dead = (t == s_) & (e == 1)
                W, d = w[risk].sum(), dead.sum()
                value += eta[dead].sum() - d * (math.log(W) + eta.max())
                if derivatives:
                    mean = (Z[risk] * w[risk, None]).sum(axis=0) / W
                    grad += Z[dead].sum(axis=0) - d * mean
                    hess -= d * ((Z[risk].T * w[risk]) @ Z[risk] / W - np.outer(mean, mean))
            return value, grad, hess

        value, grad, hess = partial(beta)
        for _ in range(max_iter):
            try:
                step = np.linalg.solve(hess, -grad)
            except np.linalg.LinAlgError:
                break
            # Newton's step, halved until the (concave) partial likelihood does not fall
            scale = 1.0
            while scale > 1e-8 and partial(beta + scale * step, False)[0] < value - 1e-12:
                scale /= 2
            beta = beta + scale * step
            if not np.all(np.isfinite(beta)) or np.max(np.abs(beta)) > _MONOTONE:
                break  # no finite maximum: one group's events all come before (or after) the others'
            value, grad, hess = partial(beta)
            if np.max(np.abs(scale * step)) < 1e-10:
                cov = np.linalg.inv(-hess)
                break
    rows = [{"group": reference, "hazard_ratio": 1.0, "hr_low": math.nan, "hr_high": math.nan}]
    for x in names:
        if x in with_events and np.all(np.isfinite(cov)):
            j = with_events.index(x)
            se = math.sqrt(cov[j, j])
            rows.append({"group": x, "hazard_ratio": math.exp(beta[j]), "hr_low": math.exp(beta[j] - _Z * se),
                         "hr_high": math.exp(beta[j] + _Z * se)})
        else:
            rows.append({"group": x, "hazard_ratio": 0.0 if x not in with_events else math.nan,
                         "hr_low": math.nan, "hr_high": math.nan})
    return pd.DataFrame(rows)


def _wilson(k: float, n: float) -> tuple[float, float]:
    if n == 0:
        return math.nan, math.nan
    p = k / n
    centre = (p + _Z ** 2 / (2 * n)) / (1 + _Z ** 2 / n)
    half = _Z * math.sqrt(p * (1 - p) / n + _Z ** 2 / (4 * n * n)) / (1 + _Z ** 2 / n)
    return centre - half, centre + half


def compare_outcome(labels, outcome, kind: str, *, event=None, name: str = "outcome") -> OutcomeComparison:
    """Compare an outcome across the clusters ``labels`` (one per row, the fit's ``labels_``).

    ``outcome``: one value per row (a follow-up time for ``"time_to_event"``, then ``event`` is
    the 0/1 flag, 1 = the event happened, 0 = censored); ``kind``: one of :data:`OUTCOME_KINDS`.
    See the module docstring for the estimates and tests."""
    if kind not in OUTCOME_KINDS:
        raise ValueError(f"outcome kind {kind!r} is not known; choose one of {list(OUTCOME_KINDS)}.")
    labels = np.asarray(labels).ravel()
    n_rows = len(labels)
    if kind == "binary":
        y = _event_flags(outcome)
    else:
        y = _as_float(outcome, "follow-up time" if kind == "time_to_event" else "values")
    if len(y) != n_rows:
        raise ValueError(f"the outcome has {len(y)} values for {n_rows} rows; give one per row, in the rows' order.")
    ok = ~np.isnan(y)
    if kind == "time_to_event":
        if event is None:
            raise ValueError("a time-to-event outcome needs its event flag (1 = the event, 0 = censored).")
        flag = _event_flags(event)
        if len(flag) != n_rows:
            raise ValueError(f"the event flag has {len(flag)} values for {n_rows} rows; give one per row.")
        if np.any(y[ok] < 0):
            raise ValueError("the follow-up times include negative values; a time must be 0 or more.")
        ok &= ~np.isnan(flag)
    left_out = int(n_rows - ok.sum())
    if not ok.any():
        raise ValueError(f"no row has a value of the outcome '{name}'; choose a column with values.")
    g, y = labels[ok], y[ok]
    clusters = np.unique(g)
    rows, curves, reference = [], None, None
    if kind == "binary":
        for c in clusters:
            k, n = float(y[g == c].sum()), int(np.sum(g == c))
            low, high = _wilson(k, n)
            rows.append({"cluster": c, "n": n, "events": int(k), "rate": k / n, "low": low, "high": high})
        counts = np.array([[np.sum((g == c) & (y == v)) for v in (0.0, 1.0)] for c in clusters])
        usable = counts[:, counts.sum(axis=0) > 0]
        if len(clusters) > 1 and usable.shape[1] == 2:
            chi2, p, df, _ = stats.chi2_contingency(counts, correction=False)
        else:
            chi2, p, df = math.nan, math.nan, len(clusters) - 1
        test = "Pearson's chi-square test"
    elif kind == "numeric":
        for c in clusters:
            v = y[g == c]
            n, mean = len(v), float(v.mean())
            sd = float(v.std(ddof=1)) if n > 1 else math.nan
            half = float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n) if n > 1 else math.nan
            rows.append({"cluster": c, "n": n, "mean": mean, "sd": sd, "low": mean - half, "high": mean + half})
        parts = [y[g == c] for c in clusters]
        if len(parts) > 1 and len(np.unique(y)) > 1:
            chi2, p = stats.kruskal(*parts)
        else:
            chi2, p = math.nan, math.nan
        df = len(clusters) - 1
        test = "Kruskal-Wallis test"
    else:
        e = flag[ok]
        sizes = {c: int(np.sum(g == c)) for c in clusters}
        reference = max(clusters, key=lambda c: (sizes[c], -list(clusters).index(c)))
        hr = cox_hazard_ratios(y, e, g, reference).set_index("group")
        per = []
        for c in clusters:
            curve = kaplan_meier(y[g == c], e[g == c])
            per.append(curve.assign(cluster=c))
            rows.append({"cluster": c, "n": sizes[c], "events": int(e[g == c].sum()), "median": _median(curve),
                         "follow_up": float(y[g == c].max()),
                         "hazard_ratio": hr.loc[c, "hazard_ratio"], "hr_low": hr.loc[c, "hr_low"],
                         "hr_high": hr.loc[c, "hr_high"]})
        curves = pd.concat(per, ignore_index=True)[["cluster", "time", "at_risk", "events", "survival", "low", "high"]]
        chi2, df, p = logrank_test(y, e, g)
        test = "log-rank test"
    return OutcomeComparison(name, kind, pd.DataFrame(rows), test, float(chi2), int(df), float(p), curves,
                             reference, left_out)


def _is_flag(values) -> bool:
    try:
        flags = _event_flags(values)
    except ValueError:
        return False
    return bool(np.isfinite(flags).any())


def outcome_spec(table: pd.DataFrame, columns) -> dict:
    """How the outcome columns of ``table`` are read, from their values: one column of 0/1 (or
    yes/no) values is ``{"kind": "binary", "column": c}``, one of other numbers ``{"kind":
    "numeric", "column": c}``; two columns, one of non-negative numbers and one of 0/1 flags, are
    a time to event ``{"kind": "time_to_event", "time": t, "event": e}`` (the flag 1 where the
    event happened, 0 where follow-up ended first). Anything else gets a message that says what
    to choose."""
    columns = [c for c in columns]
    if len(columns) == 1:
        c = columns[0]
        if _is_flag(table[c]):
            return {"kind": "binary", "column": c}
        _as_float(table[c], f"column '{c}'")
        return {"kind": "numeric", "column": c}
    if len(columns) == 2:
        flags = [c for c in columns if _is_flag(table[c])]
        if len(flags) == 2:
            raise ValueError(f"the outcome columns {columns} both hold only 0/1 values; a time to event needs a "
                             "follow-up time and a 0/1 event flag. Mark one outcome column, or the time and its flag.")
        if len(flags) == 1:
            time = [c for c in columns if c != flags[0]][0]
            t = _as_float(table[time], f"column '{time}'")
            if np.any(t[np.isfinite(t)] < 0):
                raise ValueError(f"the outcome column '{time}' has negative values; a follow-up time must be 0 or more.")
            return {"kind": "time_to_event", "time": time, "event": flags[0]}
        raise ValueError(f"the outcome columns {columns} hold no 0/1 event flag; a time to event needs a follow-up "
                         "time and a 0/1 flag (1 = the event happened). Mark one outcome column, or the time and "
                         "its flag.")
    raise ValueError(f"{len(columns)} columns are marked 'outcome'; mark one (a yes/no or a numeric outcome) or two "
                     "(a follow-up time and its 0/1 event flag).")
