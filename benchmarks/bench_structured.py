#!/usr/bin/env python
"""Issue 16 item 5: the sequence, group and longitudinal estimators on real data, defaults only.

Run from the repository root::

    python benchmarks/bench_structured.py            # 30-40 s on 2 cores

Data: the tables of ``datasets/structured/`` (``mapdp_core.data.datasets.load_structured``; provenance
in ``datasets/README.md``, "Sequences, groups and subjects"). Every estimator runs with its
defaults; the only argument given is a seed (``random_state=0``) where the estimator has
restarts in random orders (MAPDP, MixedEffectsMAPDP), so that a rerun prints the same numbers.
Known states or groups (beaver2's ``activ``, ChickWeight's ``Diet``, BtheB's ``treatment``) are
used only to score the fitted labels, never to choose anything.

1. Sequences: beaver2 (``temp``, deg C, as measured, univariate) and geyser (``waiting`` and
   ``duration``, each standardised to mean 0, sd 1): ``MAPIHMM()``, ``HardHDPHMM()`` and the
   time-blind ``MAPDP(random_state=0)``, rows in time order, one sequence. K, iterations,
   NMI/ARI against ``activ`` (beaver2), the model's own objective, seconds; then each state's
   size and mean in the data's units. The "likelihood, N0" column is what the fit used: MAPDP's
   own record (``likelihood_``, ``N0_``: both chosen automatically by default), MAPIHMM's
   default ``likelihood="auto"`` as resolved by MAP-DP's validation, with its default N0 = 1 (the
   hard HDP-HMM has no likelihood: squared Euclidean distance, default penalties).
2. Groups: Exam (``normexam``, ``standLRT``; groups = ``school``) and MathAchieve (``MathAch``,
   ``SES``; groups = ``School``), features standardised: ``HardHDP()`` with the groups against
   the group-blind ``DPMeans()`` and ``MAPDP(random_state=0)``. K, mean number of clusters used
   per group, objective, seconds.
3. Longitudinal: ``MixedEffectsMAPDP(random_state=0)`` with X = [1, time], y = response,
   groups = subject: sleepstudy (Reaction ~ Days), ChickWeight (weight ~ Time; NMI/ARI of the
   chicks' clusters against Diet) and BtheB (bdi ~ month; NMI/ARI against the randomised arm,
   a weak reference only). K, cluster sizes, each cluster's mean intercept and slope, the
   residual sd 1/sqrt(tau), NLL, iterations, seconds.
4. Sensitivity to N0 (every row printed; no setting is chosen from it): ``MAPIHMM(N0=...)`` and
   ``MixedEffectsMAPDP(N0=..., random_state=0)`` for N0 in {0.3, 1, 3} (1 is their default),
   everything else at its default.

Objectives are each model's own and are comparable only within one method: MAP-iHMM its iHMM
NLL (nats), the hard HDP-HMM J_comb and the hard HDP J_HDP (squared-distance units plus
penalties), DP-means SSE + lambda K, MAP-DP -ln p(X, z) (nats), the mixed-effects model the NLL of
its step (e). Seconds: wall seconds of one fit after numba's warm-up and one untimed fit of
every estimator on a small slice; the median of 3 when a fit takes under 5 s.
"""
from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import mapdp_core  # noqa: E402
from _timing import REPEAT_BELOW, REPEATS, timed  # noqa: E402
from mapdp_core import MAPDP, MAPIHMM, DPMeans, HardHDP, HardHDPHMM, MixedEffectsMAPDP  # noqa: E402
from mapdp_core.data.datasets import load_structured  # noqa: E402
from mapdp_core.evaluation.metrics import clustering_scores  # noqa: E402

N0_GRID = (0.3, 1.0, 3.0)


def header() -> None:
    import numba
    import sklearn

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        commit, dirty = "?", ""
    print(f"Structured real data (issue 16, item 5), {time.strftime('%Y-%m-%d')}; "
          f"command: python benchmarks/bench_structured.py")
    print(f"machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}, {platform.system()}; "
          f"commit {commit}{' (working tree)' if dirty else ''}; python {platform.python_version()}, "
          f"numpy {np.__version__}, pandas {pd.__version__}, numba {numba.__version__}, "
          f"scikit-learn {sklearn.__version__}")


def standardise(A: np.ndarray) -> np.ndarray:
    A = np.asarray(A, dtype=float)
    return (A - A.mean(axis=0)) / A.std(axis=0)


def resolved_likelihood(model, X) -> str:
    """The likelihood families and N0 a fitted model used: MAPDP reports them (``likelihood_``,
    ``N0_``); MAPIHMM resolves its default ``likelihood="auto"`` by MAP-DP's own validation with
    its N0, which is repeated here; the hard (small-variance) models have no likelihood."""
    if isinstance(model, MAPDP):
        families = list(model.likelihood_["family"])
    elif isinstance(model, MAPIHMM):
        families = [b.family for b in model._validate(X).data.blocks]
    else:
        return "sq. Euclidean"
    return f"{'+'.join(sorted(set(families)))} N0 {model.N0_:g}"


def fmt(x, digits=3) -> str:
    if x is None:
        return "-"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{x:.{digits}f}"


def warm_up() -> float:
    t0 = time.perf_counter()
    mapdp_core.warm_up()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    g = np.repeat(np.arange(6), 10)
    MAPIHMM().fit(X)
    HardHDPHMM().fit(X)
    MAPDP(random_state=0).fit(X)
    HardHDP().fit(X, g)
    DPMeans().fit(X)
    t = np.tile(np.arange(5.0), 12)
    y = 1.0 + 0.5 * t + rng.normal(size=60)
    MixedEffectsMAPDP(random_state=0).fit(np.column_stack([np.ones(60), t]), y, np.repeat(np.arange(12), 5))
    return time.perf_counter() - t0


# ------------------------------------------------------------------------------------ 1
def sequence_data(name: str):
    d = load_structured(name)
    values = d.table[d.features].to_numpy(dtype=float)
    X = values if name == "beaver2" else standardise(values)
    truth = None if d.truth is None else d.table[d.truth].to_numpy()
    return d, X, values, truth


SEQUENCE_METHODS = {
    "MAPIHMM()": (lambda: MAPIHMM(), "iHMM NLL"),
    "HardHDPHMM()": (lambda: HardHDPHMM(), "J_comb"),
    "MAPDP(random_state=0) time-blind": (lambda: MAPDP(random_state=0), "-ln p(X,z)"),
}


def table_sequences() -> None:
    print("\n1. Sequences, defaults (beaver2: temp in deg C; geyser: waiting and duration standardised)")
    cols = f"{'data':9s} {'T x D':>7s}  {'method':34s} {'likelihood, N0':20s} {'K':>3s} {'iter':>4s} " \
           f"{'conv':>5s} {'NMI':>6s} {'ARI':>6s}  {'objective':>22s} {'seconds':>8s}"
    print(cols)
    details = []
    for name in ("beaver2", "geyser"):
        d, X, values, truth = sequence_data(name)
        for method, (make, objective_name) in SEQUENCE_METHODS.items():
            seconds, model = timed(lambda: make().fit(X))
            likelihood = resolved_likelihood(model, X)
            labels = np.asarray(model.labels_)
            nmi = ari = None
            if truth is not None:
                s = clustering_scores(truth, labels)
                nmi, ari = s["nmi"], s["ari"]
            objective = model.objective_ if method.startswith("HardHDPHMM") else model.neg_log_joint_
            print(f"{name:9s} {f'{X.shape[0]}x{X.shape[1]}':>7s}  {method:34s} {likelihood:20s} "
                  f"{model.n_clusters_:3d} {model.n_iter_:4d} {str(bool(model.converged_)):>5s} "
                  f"{fmt(nmi):>6s} {fmt(ari):>6s}  {f'{objective_name} {objective:.2f}':>22s} {seconds:8.3f}")
            details.append((name, d, method, labels, values, truth))
    print("\n   States in time order of first appearance: size and mean of each state in the data's units"
          + " (beaver2: temp, and the share of activ = 1)")
    for name, d, method, labels, values, truth in details:
        parts = []
        for k in pd.unique(labels):
            rows = labels == k
            mean = ", ".join(f"{v:.2f}" for v in values[rows].mean(axis=0))
            extra = f", activ {truth[rows].mean():.2f}" if truth is not None else ""
            parts.append(f"{int(rows.sum())}: ({mean}{extra})")
        print(f"   {name:9s} {method:34s} " + "; ".join(parts))
        if method == "MAPIHMM()":
            first = {int(k): i for i, k in enumerate(pd.unique(labels))}
            runs = int(np.sum(labels[1:] != labels[:-1])) + 1
            print(f"   {'':9s} {'':34s} state sequence: {runs} runs; "
                  + "".join(chr(ord('a') + first[int(k)]) for k in labels))


# ------------------------------------------------------------------------------------ 2
def per_group_mean(labels, groups) -> float:
    return float(pd.DataFrame({"g": groups, "z": labels}).groupby("g", sort=False)["z"].nunique().mean())


def table_groups() -> None:
    print("\n2. Groups, defaults (features standardised; HardHDP uses the groups, DP-means and MAP-DP do not)")
    print(f"{'data':11s} {'N x D':>8s} {'groups':>6s}  {'method':24s} {'K':>3s} {'per group':>9s} "
          f"{'iter':>4s} {'conv':>5s}  {'objective':>24s} {'penalties or likelihood':>26s} {'seconds':>8s}")
    for name in ("exam", "mathachieve"):
        d = load_structured(name)
        X = standardise(d.table[d.features].to_numpy(dtype=float))
        groups = d.table[d.subject].to_numpy()
        G = len(pd.unique(groups))
        runs = [
            ("HardHDP() with groups", lambda: HardHDP().fit(X, groups), "J_HDP"),
            ("DPMeans() group-blind", lambda: DPMeans().fit(X), "SSE+lam*K"),
            ("MAPDP(random_state=0)", lambda: MAPDP(random_state=0).fit(X), "-ln p(X,z)"),
        ]
        for method, fit, objective_name in runs:
            seconds, model = timed(fit)
            labels = np.asarray(model.labels_)
            if isinstance(model, HardHDP):
                objective = model.objective_
                per_group = float(np.mean(model.n_local_clusters_))
                penalties = f"l_glob {model.lambda_global_:.3f} l_loc {model.lambda_local_:.3f}"
            elif isinstance(model, DPMeans):
                objective = model.objective_
                per_group = per_group_mean(labels, groups)
                penalties = f"lam {model.lam:.3f}"
            else:
                objective = model.neg_log_joint_
                per_group = per_group_mean(labels, groups)
                penalties = resolved_likelihood(model, X)
            print(f"{name:11s} {f'{X.shape[0]}x{X.shape[1]}':>8s} {G:6d}  {method:24s} {model.n_clusters_:3d} "
                  f"{per_group:9.2f} {model.n_iter_:4d} {str(bool(model.converged_)):>5s}  "
                  f"{f'{objective_name} {objective:.2f}':>24s} "
                  f"{penalties:>26s} {seconds:8.3f}")


# ------------------------------------------------------------------------------------ 3
def longitudinal_data(name: str):
    d = load_structured(name)
    t = d.table[d.time].to_numpy(dtype=float)
    X = np.column_stack([np.ones(len(t)), t])
    y = d.table[d.response].to_numpy(dtype=float)
    subjects = d.table[d.subject].to_numpy()
    return d, X, y, subjects


def truth_scores(d, model):
    if d.truth is None:
        return None, None
    per_subject = d.table.groupby(d.subject, sort=False)[d.truth].first().reindex(model.subjects_)
    codes = pd.factorize(per_subject)[0]
    s = clustering_scores(codes, np.asarray(model.labels_))
    return s["nmi"], s["ari"]


def table_longitudinal() -> None:
    print("\n3. Longitudinal, MixedEffectsMAPDP(random_state=0) defaults, X = [1, time], y = response, "
          "groups = subject")
    print(f"{'data':11s} {'formula':16s} {'obs':>4s} {'subj':>4s} {'K':>3s} {'truth':>9s} {'NMI':>6s} {'ARI':>6s} "
          f"{'resid sd':>8s} {'iter':>4s} {'conv':>5s} {'NLL':>10s} {'seconds':>8s}")
    fits = []
    for name in ("sleepstudy", "chickweight", "btheb"):
        d, X, y, subjects = longitudinal_data(name)
        seconds, model = timed(lambda: MixedEffectsMAPDP(random_state=0).fit(X, y, subjects))
        nmi, ari = truth_scores(d, model)
        formula = f"{d.response}~{d.time}"
        print(f"{name:11s} {formula:16s} {len(y):4d} {model.n_subjects_:4d} {model.n_clusters_:3d} "
              f"{(d.truth or '-'):>9s} {fmt(nmi):>6s} {fmt(ari):>6s} {1 / np.sqrt(model.tau_):8.2f} "
              f"{model.n_iter_:4d} {str(bool(model.converged_)):>5s} {model.neg_log_joint_:10.2f} {seconds:8.3f}")
        fits.append((name, d, model))
    print("\n   Clusters (largest first): size, mean intercept, mean slope (per unit of time)"
          + "; where a reference is known, its counts in the cluster")
    for name, d, model in fits:
        sizes = np.asarray(model.cluster_sizes_)
        labels = np.asarray(model.labels_)
        ref = None
        if d.truth is not None:
            ref = d.table.groupby(d.subject, sort=False)[d.truth].first().reindex(model.subjects_).to_numpy()
        for k in np.argsort(-sizes, kind="stable"):
            line = (f"   {name:11s} cluster {int(k)}: {int(sizes[k]):3d} subjects, intercept "
                    f"{model.cluster_means_[k, 0]:8.2f}, slope {model.cluster_means_[k, 1]:7.2f}")
            if ref is not None:
                counts = pd.Series(ref[labels == k]).value_counts().sort_index()
                line += f"; {d.truth} " + ", ".join(f"{v}: {c}" for v, c in counts.items())
            print(line)


# ------------------------------------------------------------------------------------ 4
def table_sensitivity() -> None:
    print("\n4. Sensitivity to N0 (every row printed; default N0 = 1 for both; nothing chosen from this table)")
    print(f"{'data':11s} {'method':46s} {'K':>3s} {'iter':>4s} {'NMI':>6s} {'ARI':>6s} {'objective':>12s} "
          f"{'seconds':>8s}")
    for name in ("beaver2", "geyser"):
        d, X, values, truth = sequence_data(name)
        for N0 in N0_GRID:
            seconds, model = timed(lambda: MAPIHMM(N0=N0).fit(X))
            nmi = ari = None
            if truth is not None:
                s = clustering_scores(truth, np.asarray(model.labels_))
                nmi, ari = s["nmi"], s["ari"]
            print(f"{name:11s} {f'MAPIHMM(N0={N0:g})':46s} {model.n_clusters_:3d} {model.n_iter_:4d} "
                  f"{fmt(nmi):>6s} {fmt(ari):>6s} {model.neg_log_joint_:12.2f} {seconds:8.3f}")
    for name in ("sleepstudy", "chickweight", "btheb"):
        d, X, y, subjects = longitudinal_data(name)
        for N0 in N0_GRID:
            seconds, model = timed(lambda: MixedEffectsMAPDP(N0=N0, random_state=0).fit(X, y, subjects))
            nmi, ari = truth_scores(d, model)
            sizes = "/".join(str(int(s)) for s in sorted(model.cluster_sizes_, reverse=True))
            print(f"{name:11s} {f'MixedEffectsMAPDP(N0={N0:g}) sizes {sizes}':46s} {model.n_clusters_:3d} "
                  f"{model.n_iter_:4d} {fmt(nmi):>6s} {fmt(ari):>6s} {model.neg_log_joint_:12.2f} {seconds:8.3f}")


def main() -> int:
    header()
    warm = warm_up()
    print(f"warm-up (numba kernels and one small fit of each estimator, untimed): {warm:.1f} s; "
          f"seconds = wall seconds of one fit, median of {REPEATS} when under {REPEAT_BELOW:g} s")
    t0 = time.perf_counter()
    table_sequences()
    table_groups()
    table_longitudinal()
    table_sensitivity()
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
