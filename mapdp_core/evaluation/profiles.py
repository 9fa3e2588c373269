"""Cluster profiles and tests between clusters, in the manner of PLOS Tables 3-4.

Raykov, Boukouvalas, Baig & Little (2016), "What to do when K-means clustering fails",
PLOS ONE 11(9): e0162259, Section 6 describes each Parkinson's subtype found by MAP-DP by
the summary that suits each feature (the proportion with a symptom for yes/no features,
the mean score for ordinal ratings, Table 3) and marks the features that differ
significantly between subtypes (Table 4). :func:`cluster_profiles` gives those summaries
for any clustering and :func:`feature_tests` the tests, corrected for testing many
features at once by Benjamini & Hochberg (1995), and the features ranked by how well they
separate the clusters.

Missing values are left out feature by feature (the counts are reported); every row
keeps its cluster. The kind of each feature follows its likelihood family:

=========================  ===========  ======================================  ============================
family                     kind         summary                                 test (2 clusters / more)
=========================  ===========  ======================================  ============================
bernoulli                  binary       proportion of the "yes" value           Fisher (small) or chi-square
categorical                categorical  share of each category                  chi-square (Fisher if 2x2)
binomial                   ordinal      mean score and share of each score      Mann-Whitney / Kruskal-Wallis
poisson, geometric         count        rate (mean per row) and sd              Mann-Whitney / Kruskal-Wallis
Gaussian families,         real         mean +- sd, median                      Welch t / Welch ANOVA
exponential                                                                     (``method="rank"``: as ordinal)
=========================  ===========  ======================================  ============================
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from mapdp_core.families import FAMILIES
from mapdp_core.data.loading import suggest_roles_and_families
from mapdp_core.core.spec import _groups

__all__ = ["Profiles", "bh_adjust", "cluster_profiles", "feature_kinds", "feature_tests", "split_sample_tests"]

_KIND = {name: family.profile_kind for name, family in FAMILIES.items()}
from mapdp_core.core.encoding import YES_TOKENS as _YES  # noqa: E402  (the same yes-words prepare encodes with)


class Profiles(NamedTuple):
    """Result of :func:`cluster_profiles`.

    Attributes
    ----------
    sizes : DataFrame
        ``cluster``, ``n``, ``fraction``.
    tidy : DataFrame
        One row per (cluster, feature, statistic): ``cluster`` ("all" for every row),
        ``feature``, ``kind``, ``statistic`` (``proportion``, ``mean``, ``sd``, ``median``,
        ``rate`` or ``level:<value>``), ``level`` (the value a ``proportion`` or ``level:``
        share counts, e.g. ``M`` for "M: 51 %"; empty for means, rates and spreads), ``value``,
        ``n_observed``, ``n_missing``.
    table : DataFrame
        Display-ready: one row per feature, one column per cluster and ``all``, a short text
        per cell ("62 % (31/50)", "5.1 ± 0.4", "A 40 %, B 35 %", ...).
    """

    sizes: pd.DataFrame
    tidy: pd.DataFrame
    table: pd.DataFrame


# ----------------------------------------------------------------------------- inputs

def _check(df, labels) -> tuple[pd.DataFrame, np.ndarray]:
    if not isinstance(df, pd.DataFrame):
        df = pd.DataFrame(np.asarray(df))
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise ValueError(f"the table is empty ({df.shape[0]} rows x {df.shape[1]} columns); profiles need rows "
                         "and at least one feature.")
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size != len(df):
        raise ValueError(f"{labels.size} labels for {len(df)} rows; pass one cluster label per row, in row order.")
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise ValueError("some labels are missing (NaN); every row needs a cluster.")
    return df.reset_index(drop=True), labels


def feature_kinds(df: pd.DataFrame, likelihood=None) -> dict:
    """``{column: kind}`` with kind in binary, categorical, ordinal, count, real.

    From the likelihood (a family name, a list, or a dict keyed by column or tuple of
    columns, as for :class:`~mapdp_core.MAPDP`) or, when it is None, from the families that
    :func:`mapdp_core.data.loading.suggest_roles_and_families` would suggest.
    """
    names = list(df.columns)
    if likelihood is None:
        sug = suggest_roles_and_families(df)
        out = {}
        for c, fam, kind in zip(sug["column"], sug["family"], sug["kind"]):
            if fam is None or (isinstance(fam, float) and np.isnan(fam)):
                fam = "categorical" if kind == "text" else "normal_gamma"
            out[c] = _KIND[fam]
        return out
    out = {}
    for fam, cols, _ in _groups(likelihood, names):
        for c in cols:
            out[names[c]] = _KIND[fam]
    for c, kind in out.items():  # a two-level categorical reads best as a proportion
        if kind == "categorical" and df[c].dropna().nunique() <= 2:
            out[c] = "binary"
    return out


def _levels(s: pd.Series) -> list:
    return sorted(pd.unique(s.dropna()), key=lambda v: (isinstance(v, str), v))


def _yes_level(levels: list):
    """The level a proportion is reported for: a "yes"-like one, else the larger/second."""
    for v in levels:
        if str(v).strip().lower() in _YES:
            return v
    return levels[-1] if levels else None


def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _num(x: float) -> str:
    return f"{x:.3g}" if np.isfinite(x) else "–"


# ----------------------------------------------------------------------------- profiles

def cluster_profiles(df, labels, likelihood=None) -> Profiles:
    """Per cluster and feature, the summary that suits the feature's kind (PLOS Table 3).

    Parameters
    ----------
    df : DataFrame
        The features as shown to a reader (text categories are fine), one row per row
        clustered, in the order of ``labels``. NaN or None = missing.
    labels : array-like, shape (N,)
        Cluster of every row (any hashable ids; -1 for "new cluster" is a cluster too).
    likelihood : str, list or dict, optional
        The families used for clustering; decides each feature's kind (see the module
        table). Default: suggested from the data.

    Returns
    -------
    Profiles
    """
    df, labels = _check(df, labels)
    kinds = feature_kinds(df, likelihood)
    clusters = sorted(pd.unique(labels).tolist())
    groups = [("all", np.ones(len(df), dtype=bool))] + [(k, labels == k) for k in clusters]
    sizes = pd.DataFrame({"cluster": clusters, "n": [int(np.sum(labels == k)) for k in clusters]})
    sizes["fraction"] = sizes["n"] / len(df)
    rows, cells = [], {}
    for c in df.columns:
        kind = kinds[c]
        col = df[c]
        levels = _levels(col)
        numeric = pd.to_numeric(col, errors="coerce") if kind in ("ordinal", "count", "real") else None
        for name, mask in groups:
            s = col[mask]
            obs = s.dropna()
            n_obs, n_miss = int(obs.size), int(s.size - obs.size)
            base = {"cluster": name, "feature": c, "kind": kind, "n_observed": n_obs, "n_missing": n_miss}
            stats_ = []
            if kind == "binary":
                yes = _yes_level(levels)
                k = int((obs == yes).sum())
                p = k / n_obs if n_obs else np.nan
                stats_.append(("proportion", p, _fmt(yes) if yes is not None else ""))
                prefix = "" if _fmt(yes) == "1" else f"{_fmt(yes)}: "  # 0/1 data: the share of 1s
                text = f"{prefix}{p:.0%} ({k}/{n_obs})" if n_obs else "–"
            elif kind == "categorical":
                shares = obs.value_counts(normalize=True) if n_obs else pd.Series(dtype=float)
                for v in levels:
                    stats_.append((f"level:{_fmt(v)}", float(shares.get(v, 0.0)) if n_obs else np.nan, _fmt(v)))
                top = shares.sort_values(ascending=False, kind="stable").head(4)
                text = ", ".join(f"{_fmt(v)} {p:.0%}" for v, p in top.items()) if n_obs else "–"
            else:
                x = numeric[mask].dropna().to_numpy(dtype=float)
                mean = float(x.mean()) if x.size else np.nan
                sd = float(x.std(ddof=1)) if x.size > 1 else np.nan
                if kind == "ordinal":
                    stats_.append(("mean", mean))
                    vals, counts = np.unique(x, return_counts=True)
                    share = dict(zip(vals, counts / max(x.size, 1)))
                    for v in sorted(pd.unique(numeric.dropna())):
                        stats_.append((f"level:{_fmt(v)}", float(share.get(v, 0.0)) if x.size else np.nan, _fmt(v)))
                    dist = ", ".join(f"{_fmt(v)}:{p:.0%}" for v, p in sorted(share.items()))
                    text = f"mean {_num(mean)}; {dist}" if x.size else "–"
                elif kind == "count":
                    stats_ += [("rate", mean), ("sd", sd)]
                    text = f"rate {_num(mean)} (sd {_num(sd)})" if x.size else "–"
                else:
                    stats_ += [("mean", mean), ("sd", sd), ("median", float(np.median(x)) if x.size else np.nan)]
                    text = f"{_num(mean)} ± {_num(sd)}" if x.size else "–"
            if n_miss and text != "–":
                text += f" [{n_miss} missing]"
            cells[(c, name)] = text
            # the level a share counts goes with it: "M: 51 %" on screen is (proportion, M, 0.51) here
            rows += [{**base, "statistic": st[0], "level": st[2] if len(st) > 2 else "", "value": st[1]}
                     for st in stats_]
    tidy = pd.DataFrame(rows, columns=["cluster", "feature", "kind", "statistic", "level", "value", "n_observed",
                                       "n_missing"])
    table = pd.DataFrame({str(name): [cells[(c, name)] for c in df.columns] for name, _ in groups[1:] + groups[:1]},
                         index=pd.Index(list(df.columns), name="feature"))
    table.insert(0, "kind", [kinds[c] for c in df.columns])
    return Profiles(sizes=sizes, tidy=tidy, table=table)


# ----------------------------------------------------------------------------- tests

def bh_adjust(p) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values); NaN entries stay NaN and do not count.

    q_(i) = min over j >= i of p_(j) m / j, capped at 1, for the m non-missing p-values
    sorted increasingly (Benjamini & Hochberg 1995, the step-up procedure).
    """
    p = np.asarray(p, dtype=float)
    q = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise ValueError("p-values must lie in [0, 1].")
    m = int(ok.sum())
    if m == 0:
        return q
    order = np.argsort(p[ok], kind="stable")
    ranked = p[ok][order] * m / np.arange(1, m + 1)
    ranked = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(ranked, 1.0)
    q[ok] = out
    return q


def _test_one(kind: str, values: pd.Series, labels: np.ndarray, method: str) -> dict:
    """One feature: the test, its statistic and p-value, an effect size."""
    keep = values.notna().to_numpy()
    v, lab = values[keep], labels[keep]
    res = {"test": None, "statistic": np.nan, "p_value": np.nan, "effect_size": np.nan, "effect": None,
           "n_used": int(keep.sum()), "note": ""}
    if kind in ("binary", "categorical"):
        table = pd.crosstab(lab, v.to_numpy())
        table = table.loc[table.sum(axis=1) > 0, table.sum(axis=0) > 0]
        if table.shape[0] < 2 or table.shape[1] < 2:
            res["note"] = "fewer than two clusters or categories observed"
            return res
        obs = table.to_numpy()
        chi2, p, _, expected = stats.chi2_contingency(obs, correction=False)
        n = obs.sum()
        res.update(effect_size=float(np.sqrt(chi2 / (n * (min(obs.shape) - 1)))), effect="Cramér's V")
        if obs.shape == (2, 2) and expected.min() < 5:
            _, p = stats.fisher_exact(obs)
            res.update(test="Fisher exact", statistic=np.nan, p_value=float(p))
        else:
            res.update(test="chi-square", statistic=float(chi2), p_value=float(p))
        return res
    x = pd.to_numeric(v, errors="coerce").to_numpy(dtype=float)
    ids = [k for k in sorted(pd.unique(lab).tolist()) if np.sum(lab == k) >= 2]
    groups = [x[lab == k] for k in ids]
    if len(groups) < 2:
        res["note"] = "fewer than two clusters with two or more observed values"
        return res
    if np.ptp(np.concatenate(groups)) == 0:
        res["note"] = "the feature is constant"
        return res
    n = sum(g.size for g in groups)
    parametric = kind == "real" and method != "rank"
    constant = [str(k) for k, g in zip(ids, groups) if np.ptp(g) == 0]
    if parametric and (len(constant) == len(groups) or (len(groups) > 2 and constant)):
        # Welch's tests weigh each cluster by 1 / its variance: a cluster in which the feature never
        # varies makes the statistic infinite and scipy's p-value NaN (or exactly 0), which says nothing.
        parametric = False
        res["note"] = (f"constant within cluster(s) {', '.join(constant)}, so Welch's test (which divides by each "
                       "cluster's variance) cannot be computed; the rank test is used instead")
    if len(groups) == 2:
        a, b = groups
        if parametric:
            t, p = stats.ttest_ind(a, b, equal_var=False)
            pooled = np.sqrt(((a.size - 1) * a.var(ddof=1) + (b.size - 1) * b.var(ddof=1)) / (a.size + b.size - 2))
            d = (a.mean() - b.mean()) / pooled if pooled > 0 else np.nan
            res.update(test="Welch t", statistic=float(t), p_value=float(p), effect_size=float(d), effect="Cohen's d")
        else:
            u, p = stats.mannwhitneyu(a, b, alternative="two-sided")
            res.update(test="Mann-Whitney U", statistic=float(u), p_value=float(p),
                       effect_size=float(1.0 - 2.0 * u / (a.size * b.size)), effect="rank-biserial r")
        return res
    if parametric:
        f, p = stats.f_oneway(*groups, equal_var=False)
        grand = np.concatenate(groups).mean()
        between = sum(g.size * (g.mean() - grand) ** 2 for g in groups)
        total = float(((np.concatenate(groups) - grand) ** 2).sum())
        res.update(test="Welch ANOVA", statistic=float(f), p_value=float(p),
                   effect_size=between / total if total > 0 else np.nan, effect="eta squared")
    else:
        h, p = stats.kruskal(*groups)
        res.update(test="Kruskal-Wallis", statistic=float(h), p_value=float(p),
                   effect_size=float(h / (n - 1)), effect="epsilon squared")
    return res


def feature_tests(df, labels, likelihood=None, alpha: float = 0.05, method: str = "auto") -> pd.DataFrame:
    """Does each feature differ between the clusters? (PLOS Table 4), with the features ranked.

    Parameters
    ----------
    df, labels, likelihood
        As for :func:`cluster_profiles`.
    alpha : float, default 0.05
        False discovery rate for ``significant`` (q < alpha).
    method : {"auto", "rank"}
        ``auto``: Welch's t (two clusters) or Welch's ANOVA for real features; ``rank``:
        Mann-Whitney / Kruskal-Wallis for them too. Ordinal and count features always use
        the rank tests, binary and categorical ones chi-square (Fisher's exact test for a
        2 x 2 table with an expected count below 5).

    Returns
    -------
    DataFrame
        One row per feature: ``feature``, ``kind``, ``test``, ``statistic``, ``p_value``,
        ``q_value`` (Benjamini-Hochberg over the features tested), ``significant``,
        ``effect_size`` and ``effect`` (its name: Cohen's d, rank-biserial r, eta or epsilon
        squared, Cramér's V), ``n_used``, ``note`` (why a feature could not be tested) and
        ``rank`` (1 separates the clusters best: by q, then by the size of the effect;
        untested features last), sorted by rank.
    """
    df, labels = _check(df, labels)
    if method not in ("auto", "rank"):
        raise ValueError(f"method must be 'auto' or 'rank', got {method!r}.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}.")
    if pd.unique(labels).size < 2:
        raise ValueError("all rows are in one cluster; tests between clusters need at least two.")
    kinds = feature_kinds(df, likelihood)
    rows = [{"feature": c, "kind": kinds[c], **_test_one(kinds[c], df[c], labels, method)} for c in df.columns]
    out = pd.DataFrame(rows)
    out["q_value"] = bh_adjust(out["p_value"].to_numpy(dtype=float))
    out["significant"] = out["q_value"] < alpha
    strength = out["effect_size"].abs().fillna(-1.0)
    order = np.lexsort((-strength.to_numpy(), out["q_value"].fillna(np.inf).to_numpy()))
    out["rank"] = 0
    out.loc[out.index[order], "rank"] = np.arange(1, len(out) + 1)
    cols = ["rank", "feature", "kind", "test", "statistic", "p_value", "q_value", "significant", "effect_size",
            "effect", "n_used", "note"]
    return out.sort_values("rank")[cols].reset_index(drop=True)


# ----------------------------------------------------------------------------- sample splitting

SPLIT_MIN_ROWS = 20


def split_sample_tests(model, df, likelihood=None, *, fraction: float = 0.5, random_state=0, alpha: float = 0.05,
                       method: str = "auto", n_init: int = 2) -> pd.DataFrame:
    """:func:`feature_tests` on rows the clusters were not formed from (sample splitting).

    Why. :func:`feature_tests` on the rows MAP-DP clustered tests the features the clusters
    were formed from: a clustering finds the groups that differ most, so the tests then
    "find" differences even in data with no groups at all (p down to 1e-200 on one Gaussian
    blob cut in two). This is the selective-inference problem of Gao, Bien & Witten (2022),
    "Selective inference for hierarchical clustering", JASA, who condition on the clustering;
    the simpler remedy they compare against is sample splitting, given here.

    How. The rows are split at random: ``fraction`` of them (half A) are clustered again
    with the fitted model's settings held fixed (its likelihood, prior and N0, as chosen or
    given; the same refit as :func:`~mapdp_core.evaluation.stability.cluster_stability`), and
    the other rows (half B) are assigned by that half-A model's ``predict`` (-1: a new
    cluster). The tests then run on half B only.

    What it does not fix, and the cost. Half B's clusters come from half A's rule, but the
    rule is applied to half B's own features, so a feature that decides the assignment
    still differs between half B's groups when the data have no groups (Gao, Bien & Witten,
    Section 1: sample splitting does not control the type I error for clusters). It removes
    the fit to half B's noise, not the selection; read small p-values as "half A's rule
    sorts new rows by this feature", and weigh them with the stability of the clusters. It
    costs half the rows (less power), and half A's clusters may differ from the full fit's
    (other K, other numbering): the table describes half A's clusters, not the full fit's.

    Parameters
    ----------
    model : fitted MAPDP
    df : DataFrame
        The features as shown to a reader, one row per row the model was fitted on, in the
        same order (as for :func:`feature_tests`).
    likelihood : optional
        As for :func:`feature_tests`.
    fraction : float in (0, 1), default 0.5
        Share of the rows in half A.
    random_state : int, Generator or None
    alpha, method
        As for :func:`feature_tests`.
    n_init : int, default 2
        Restarts of the half-A refit.

    Returns
    -------
    DataFrame
        :func:`feature_tests`' columns (empty when nothing could be tested), with
        ``attrs["rows_used"]``, ``attrs["rows_fit"]``, ``attrs["clusters_fit"]`` (K on half A),
        ``attrs["clusters_tested"]`` and ``attrs["message"]`` (what was done, or why nothing
        was tested, in a plain sentence).
    """
    import warnings

    from sklearn.utils.validation import check_is_fitted

    from mapdp_core.core.validation import check_int, check_real
    from mapdp_core.evaluation.stability import _refit_arguments
    from mapdp_core.models.mapdp import MAPDP

    check_is_fitted(model, "labels_")
    df, _ = _check(df, np.asarray(model.labels_))
    fraction = check_real(fraction, "fraction", positive=True)
    if not fraction < 1:
        raise ValueError(f"fraction must be below 1 (a share of the rows), got {fraction!r}.")
    n_init = check_int(n_init, "n_init", 1)
    cols = ["rank", "feature", "kind", "test", "statistic", "p_value", "q_value", "significant", "effect_size",
            "effect", "n_used", "note"]

    def empty(message, **info):
        out = pd.DataFrame(columns=cols)
        out.attrs.update({"rows_used": 0, "rows_fit": 0, "clusters_fit": 0, "clusters_tested": 0, **info,
                          "message": message})
        return out

    N = len(df)
    if N < SPLIT_MIN_ROWS:
        return empty(f"Only {N} rows: splitting them leaves too few to test on (sample splitting needs at least "
                     f"{SPLIT_MIN_ROWS}).")
    X, fam, prior = _refit_arguments(model)
    rng = np.random.default_rng(random_state)
    m = min(N - 2, max(2, int(round(fraction * N))))
    order = rng.permutation(N)
    rows_a, rows_b = np.sort(order[:m]), np.sort(order[m:])
    refit = MAPDP(**model.partition_arguments(), likelihood=fam, prior=prior, n_init=n_init,
                  random_state=int(rng.integers(0, 2**31 - 1)), tol=model.tol, max_iter=model.max_iter,
                  merge=getattr(model, "merge_cutoff_", None)).fit(X.iloc[rows_a].reset_index(drop=True))
    with warnings.catch_warnings():  # a category half A never saw is scored as missing; fine here
        warnings.simplefilter("ignore")
        labels_b = np.asarray(refit.predict(X.iloc[rows_b].reset_index(drop=True)))
    info = {"rows_used": int(rows_b.size), "rows_fit": int(rows_a.size), "clusters_fit": int(refit.n_clusters_),
            "clusters_tested": int(np.unique(labels_b).size)}
    if info["clusters_tested"] < 2:
        return empty(f"MAP-DP refitted on {rows_a.size:,} rows (half A) found {refit.n_clusters_} cluster"
                     f"{'s' if refit.n_clusters_ != 1 else ''}, and the other {rows_b.size:,} rows all fell in one, "
                     "so there is nothing to test between clusters on rows they were not formed from.", **info)
    out = feature_tests(df.iloc[rows_b].reset_index(drop=True), labels_b, likelihood, alpha=alpha, method=method)
    out.attrs.update(info, message=(
        f"Clusters formed on {rows_a.size:,} random rows (half A: K = {refit.n_clusters_} with the same settings); "
        f"tested on the other {rows_b.size:,} rows (half B), each assigned to half A's most probable cluster"
        + (f" ({int(np.sum(labels_b < 0))} to a new one)" if np.any(labels_b < 0) else "") + "."))
    return out
