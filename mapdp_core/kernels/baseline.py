"""numba kernels of the baselines: K-means (Lloyd) and DP-means. No validation here.

The public functions in :mod:`mapdp_core.models.kmeans` and :mod:`mapdp_core.models.dpmeans` check and
convert their input once; these kernels assume C-contiguous float64 ``X`` of shape (N, D),
int64 labels and float64 centres, and mutate their output arrays in place.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def nearest(X, i, centres, K):
    """(index, squared Euclidean distance) of the centre among the first K nearest to row i
    of X; ties go to the lowest index, as in scikit-learn. K = 0 gives (0, inf)."""
    best = np.inf
    best_k = 0
    for k in range(K):
        s = 0.0
        for d in range(X.shape[1]):
            t = X[i, d] - centres[k, d]
            s += t * t
        if s < best:
            best = s
            best_k = k
    return best_k, best


@njit(cache=True, nogil=True)
def assign_nearest(X, centres, labels, dist):
    """Lloyd's assignment step (PLOS Algorithm 1, lines 5-11), with squared distances.

    Writes the nearest centre of every row into ``labels`` (ties go to the lowest index,
    as in scikit-learn) and its squared Euclidean distance into ``dist``; returns the
    number of rows whose label changed.
    """
    N = X.shape[0]
    changed = 0
    for i in range(N):
        best_k, best = nearest(X, i, centres, centres.shape[0])
        dist[i] = best
        if labels[i] != best_k:
            labels[i] = best_k
            changed += 1
    return changed


@njit(cache=True, nogil=True)
def fill_empty(labels, dist, counts):
    """Give every empty cluster the row farthest from its centre (taken from a cluster of >= 2 rows).

    ``counts`` holds the cluster sizes and is updated; the moved row's ``dist`` becomes 0
    (it is the new centre). Moving a row into an empty cluster whose centre becomes that
    row cannot raise the sum of squared distances, so Lloyd's objective stays monotone.
    Returns the number of rows moved.
    """
    N = labels.shape[0]
    K = counts.shape[0]
    moved = 0
    for k in range(K):
        if counts[k] > 0:
            continue
        best = -1.0
        best_i = -1
        for i in range(N):
            if counts[labels[i]] >= 2 and dist[i] > best:
                best = dist[i]
                best_i = i
        if best_i < 0:  # fewer rows than clusters: cannot happen after validation
            break
        counts[labels[best_i]] -= 1
        labels[best_i] = k
        counts[k] = 1
        dist[best_i] = 0.0
        moved += 1
    return moved


@njit(cache=True, nogil=True)
def cluster_means(X, labels, centres, counts):
    """Lloyd's update step (PLOS Algorithm 1, lines 14-15): centres[k] = mean of cluster k.

    ``centres`` (K, D) and ``counts`` (K,) are overwritten; a cluster without rows keeps a
    centre of zeros (callers fill empty clusters first).
    """
    N, D = X.shape
    K = centres.shape[0]
    for k in range(K):
        counts[k] = 0
        for d in range(D):
            centres[k, d] = 0.0
    for i in range(N):
        k = labels[i]
        counts[k] += 1
        for d in range(D):
            centres[k, d] += X[i, d]
    for k in range(K):
        if counts[k] > 0:
            for d in range(D):
                centres[k, d] /= counts[k]


@njit(cache=True, nogil=True)
def squared_error(X, labels, centres):
    """Sum over rows of the squared Euclidean distance to the row's centre."""
    N, D = X.shape
    total = 0.0
    for i in range(N):
        k = labels[i]
        for d in range(D):
            t = X[i, d] - centres[k, d]
            total += t * t
    return total


@njit(cache=True, nogil=True)
def dpmeans_sweep(X, order, start, labels, centres, K, lam):
    """One assignment pass of DP-means (Kulis & Jordan 2012, Algorithm 1, inner loop).

    Visits rows ``order[start:]``; a row whose squared distance to every current centre
    exceeds ``lam`` opens a new cluster centred on itself, otherwise it joins the nearest
    centre (ties to the lowest index). Centres of existing clusters are not moved during
    the pass. Returns (stop, K, rows whose label changed): ``stop < N`` means the row
    ``order[stop]`` needs a new cluster but ``centres`` is full; grow it and call again
    from ``stop``.
    """
    N, D = X.shape
    changed = 0
    for j in range(start, N):
        i = order[j]
        best_k, best = nearest(X, i, centres, K)
        if best > lam:
            if K == centres.shape[0]:
                return j, K, changed
            for d in range(D):
                centres[K, d] = X[i, d]
            best_k = K
            K += 1
        if labels[i] != best_k:
            labels[i] = best_k
            changed += 1
    return N, K, changed


@njit(cache=True, nogil=True)
def compact_labels(labels, K):
    """Renumber the non-empty clusters 0..K'-1 in order of their old index; returns K'."""
    counts = np.zeros(K, dtype=np.int64)
    for i in range(labels.shape[0]):
        counts[labels[i]] += 1
    new_id = np.full(K, -1, dtype=np.int64)
    K_new = 0
    for k in range(K):
        if counts[k] > 0:
            new_id[k] = K_new
            K_new += 1
    for i in range(labels.shape[0]):
        labels[i] = new_id[labels[i]]
    return K_new
