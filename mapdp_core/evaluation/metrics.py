"""Clustering scores and label matching (stable colours across frames and algorithms).

NMI is the normalised mutual information with the arithmetic-mean normaliser (scikit-learn's
default; Vinh, Epps & Bailey 2010, "Information theoretic measures for clusterings
comparison", JMLR), the score of the PLOS and EJS tables; ARI is Hubert & Arabie's (1985)
adjusted Rand index. Label matching solves the assignment problem on the contingency table
(Kuhn 1955, the Hungarian method, as implemented by ``scipy.optimize.linear_sum_assignment``).
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from scipy.optimize import linear_sum_assignment

from mapdp_core.core.labels import codes, relabel_by_first_appearance  # noqa: F401  (re-exported)

__all__ = ["clustering_scores", "match_label_sequence", "match_labels"]


def _as_labels(labels, name: str) -> np.ndarray:
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one label per row (1-D), got shape {arr.shape}.")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all() or not np.array_equal(arr, np.round(arr)):
            raise ValueError(f"{name} must hold whole-number cluster ids; found non-integer or missing values.")
        arr = arr.astype(np.int64)
    elif arr.dtype.kind not in "iub":
        raise TypeError(f"{name} must hold integer cluster ids, got dtype {arr.dtype}; "
                        "encode text labels first (for example with pandas.factorize).")
    return arr.astype(np.int64, copy=False)


def _check_pair(a, b, name_a: str, name_b: str) -> tuple[np.ndarray, np.ndarray]:
    a = _as_labels(a, name_a)
    b = _as_labels(b, name_b)
    if a.shape != b.shape:
        raise ValueError(f"{name_a} and {name_b} must label the same rows: lengths {a.size} and {b.size}.")
    return a, b


def _contingency(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    _, ti = codes(t)
    _, pi = codes(p)
    nt, npred = int(ti.max()) + 1, int(pi.max()) + 1
    return np.bincount(ti * npred + pi, minlength=nt * npred).reshape(nt, npred)


def _nmi(table: np.ndarray) -> float:
    """Arithmetic-mean NMI from a contingency table (the special cases as scikit-learn's)."""
    if np.count_nonzero(table) == table.shape[0] == table.shape[1]:
        return 1.0  # the same partition (up to names): exactly 1, not 1 - rounding
    n = table.sum()
    a, b = table.sum(axis=1), table.sum(axis=0)
    i, j = np.nonzero(table)
    nij = table[i, j].astype(float)
    mi = float(np.sum(nij / n * (np.log(nij) + np.log(n) - np.log(a[i]) - np.log(b[j]))))
    if mi <= 0.0:
        return 0.0
    h = lambda c: -float(np.sum(c[c > 0] / n * np.log(c[c > 0] / n)))  # noqa: E731
    return mi / max(0.5 * (h(a) + h(b)), np.finfo(float).eps)


def _ari(table: np.ndarray) -> float:
    """Adjusted Rand index from the pair confusion counts (exact integer arithmetic)."""
    n = int(table.sum())
    squares = int((table.astype(np.int64) ** 2).sum())
    a, b = table.sum(axis=1).astype(np.int64), table.sum(axis=0).astype(np.int64)
    same_both = squares - n
    same_pred = int((b.astype(object) ** 2).sum()) - squares
    same_true = int((a.astype(object) ** 2).sum()) - squares
    diff_both = n * n - same_pred - same_true - squares
    if same_pred == 0 and same_true == 0:
        return 1.0
    num = 2 * (same_both * diff_both - same_true * same_pred)
    den = (same_both + same_true) * (same_true + diff_both) + (same_both + same_pred) * (same_pred + diff_both)
    return float(num) / float(den)


def clustering_scores(labels_true, labels_pred) -> dict:
    """NMI, ARI and the number of clusters found.

    Computed from one contingency table (equal to scikit-learn's
    ``normalized_mutual_info_score`` and ``adjusted_rand_score``, tested, at a fraction of the
    cost: the app scores every animation frame).

    Parameters
    ----------
    labels_true : array-like of int, shape (N,)
    labels_pred : array-like of int, shape (N,)

    Returns
    -------
    dict
        ``nmi`` (normalised mutual information, arithmetic normaliser), ``ari`` (adjusted
        Rand index) and ``K`` (distinct labels in ``labels_pred``).
    """
    t, p = _check_pair(labels_true, labels_pred, "labels_true", "labels_pred")
    if t.size == 0:
        raise ValueError("labels_true and labels_pred are empty; pass one label per row.")
    table = _contingency(t, p)
    return {"nmi": _nmi(table), "ari": _ari(table), "K": int(table.shape[1])}


#: The label of a row not assigned yet: SUGS and DP search leave the rows they have not visited
#: or placed at -1 in every state but their last (:class:`~mapdp_core.SweepState`).
UNASSIGNED = -1


def match_labels(reference, labels) -> np.ndarray:
    """Renumber ``labels`` so that its clusters carry the ids of the ``reference`` clusters they overlap most.

    The pairing maximises the total number of rows on which the two labellings agree (a
    maximum-weight matching on the contingency table, Hungarian method); each reference id
    is used at most once. Clusters of ``labels`` left unmatched, or matched only to a
    reference cluster they share no row with, get new ids ``max(reference) + 1, + 2, ...``
    in order of their original id. The partition itself is unchanged.

    The label -1 (:data:`UNASSIGNED`) marks a row not assigned yet (a row SUGS has not
    visited or DP search has not placed, in an animation frame): such a row stays -1 in the
    result, and a row that is -1 in ``reference`` counts for no reference cluster. -1 is never
    matched, nor counted as a cluster.

    Use it to keep a cluster's colour from one animation frame to the next (pass the
    previous frame's *matched* labels as ``reference``), between algorithms, or against a
    ground truth (DESIGN.md, "Labels across frames").

    Parameters
    ----------
    reference : array-like of int, shape (N,)
        Any integer ids; -1 for a row without a cluster.
    labels : array-like of int, shape (N,)
        Any integer ids; -1 for a row without a cluster.

    Returns
    -------
    ndarray of int64, shape (N,)
    """
    ref, lab = _check_pair(reference, labels, "reference", "labels")
    if lab.size == 0:
        return lab.copy()
    out = np.full(lab.shape, UNASSIGNED, dtype=np.int64)
    placed = lab != UNASSIGNED
    if not placed.any():
        return out
    known = ref != UNASSIGNED
    next_id = int(ref[known].max()) + 1 if known.any() else 0  # new ids start above every reference id
    lab_ids, lab_idx = codes(lab[placed])
    new_id = np.full(lab_ids.size, -1, dtype=np.int64)
    both = known[placed]
    if both.any():
        ref_ids, ref_idx = codes(ref[placed][both])
        overlap = np.bincount(lab_idx[both] * ref_ids.size + ref_idx,
                              minlength=lab_ids.size * ref_ids.size).reshape(lab_ids.size, ref_ids.size)
        rows, cols = linear_sum_assignment(overlap, maximize=True)
        keep = overlap[rows, cols] > 0
        new_id[rows[keep]] = ref_ids[cols[keep]]
    unmatched = np.flatnonzero(new_id < 0)
    new_id[unmatched] = next_id + np.arange(unmatched.size)
    out[placed] = new_id[lab_idx]
    return out


def match_label_sequence(frames: Iterable, reference=None) -> list[np.ndarray]:
    """Match every labelling of a sequence to the one before it (stable colours in an animation).

    Parameters
    ----------
    frames : iterable of array-like of int, each of shape (N,)
        For example ``[state.labels for state in map_dp(X)]``.
    reference : array-like of int, optional
        If given, the first frame is matched to it (for example the ground truth).

    Returns
    -------
    list of ndarray
        The relabelled frames; frame t is ``match_labels(result[t - 1], frames[t])``. A row
        labelled -1 (not assigned yet, see :func:`match_labels`) stays -1.
    """
    out: list[np.ndarray] = []
    previous = None if reference is None else _as_labels(reference, "reference")
    for t, frame in enumerate(frames):
        current = _as_labels(frame, f"frames[{t}]")
        if previous is not None:
            current = match_labels(previous, current)
        else:
            current = current.copy()
        out.append(current)
        previous = current
    return out
