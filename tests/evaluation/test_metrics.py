"""Scores (NMI, ARI, K) and Hungarian label matching across frames and algorithms."""
import itertools

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from mapdp_core.evaluation.metrics import clustering_scores, match_label_sequence, match_labels


def test_scores_agree_with_sklearn():
    rng = np.random.default_rng(0)
    t = rng.integers(0, 3, 200)
    p = np.where(rng.random(200) < 0.8, t, rng.integers(0, 5, 200))
    s = clustering_scores(t, p)
    assert s == {"nmi": pytest.approx(normalized_mutual_info_score(t, p)),
                 "ari": pytest.approx(adjusted_rand_score(t, p)), "K": len(np.unique(p))}
    assert clustering_scores(t, t + 7) == {"nmi": 1.0, "ari": 1.0, "K": 3}
    assert isinstance(s["K"], int) and isinstance(s["nmi"], float)


@pytest.mark.parametrize("seed", range(40))
def test_scores_agree_with_sklearn_on_random_and_edge_cases(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    cases = [(rng.integers(0, rng.integers(1, 6), n), rng.integers(0, rng.integers(1, 8), n)),
             (np.zeros(n, int), np.zeros(n, int)), (np.zeros(n, int), np.arange(n)),
             (np.arange(n), np.arange(n)[::-1]), (rng.integers(0, 2, n), np.zeros(n, int))]
    for t, p in cases:
        s = clustering_scores(t, p)
        assert s["nmi"] == pytest.approx(normalized_mutual_info_score(t, p), abs=1e-12)
        assert s["ari"] == pytest.approx(adjusted_rand_score(t, p), abs=1e-12)


def test_scores_exact_for_large_n():
    rng = np.random.default_rng(1)
    t = rng.integers(0, 4, 400_000)
    p = np.where(rng.random(400_000) < 0.9, t, rng.integers(0, 6, 400_000))
    s = clustering_scores(t, p)
    assert s["ari"] == pytest.approx(adjusted_rand_score(t, p), rel=1e-12)
    assert s["nmi"] == pytest.approx(normalized_mutual_info_score(t, p), rel=1e-12)


def test_scores_validation():
    with pytest.raises(ValueError, match="same rows: lengths 3 and 2"):
        clustering_scores([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="1-D"):
        clustering_scores([[0, 1]], [[0, 1]])
    with pytest.raises(ValueError, match="empty"):
        clustering_scores([], [])
    with pytest.raises(TypeError, match="factorize"):
        clustering_scores(["a", "b"], [0, 1])
    with pytest.raises(ValueError, match="whole-number"):
        clustering_scores([0.5, 1.0], [0, 1])


def test_match_recovers_a_permutation():
    ref = np.repeat([0, 1, 2, 3], 5)
    for perm in itertools.permutations([10, 11, 12, 13]):
        lab = np.asarray(perm)[ref]
        np.testing.assert_array_equal(match_labels(ref, lab), ref)


def test_match_maximises_overlap_not_greedy():
    # greedy on the largest cell would pair a->0 (4 rows) and leave b->1 (0 rows): total 4.
    # the optimum pairs a->1 (3) and b->0 (3): total 6.
    ref = np.array([0, 0, 0, 0, 0, 0, 0, 1, 1, 1])
    lab = np.array([5, 5, 5, 5, 6, 6, 6, 5, 5, 5])
    out = match_labels(ref, lab)
    np.testing.assert_array_equal(out, [1, 1, 1, 1, 0, 0, 0, 1, 1, 1])
    assert (out == ref).sum() == 6


def test_unmatched_clusters_get_new_ids_after_the_reference():
    ref = np.array([0, 0, 0, 2, 2, 2])        # ids need not be consecutive
    lab = np.array([3, 3, 1, 0, 0, 7])         # four clusters, two reference clusters
    out = match_labels(ref, lab)
    np.testing.assert_array_equal(out, [0, 0, 3, 2, 2, 4])  # 3->0, 0->2, then 1->3, 7->4 in id order
    # a cluster sharing no row with any free reference cluster is new, not recycled
    out = match_labels([0, 0, 1, 1], [0, 0, 0, 0])
    np.testing.assert_array_equal(out, [0, 0, 0, 0])
    out = match_labels([0, 0, 1, 1], [4, 4, 9, 9])
    np.testing.assert_array_equal(out, [0, 0, 1, 1])
    out = match_labels([0, 0, 0, 0], [1, 1, 2, 2])
    np.testing.assert_array_equal(out, [0, 0, 1, 1])


def test_match_keeps_the_partition():
    rng = np.random.default_rng(1)
    for _ in range(20):
        ref = rng.integers(0, rng.integers(1, 6), 50)
        lab = rng.integers(0, rng.integers(1, 8), 50)
        out = match_labels(ref, lab)
        assert adjusted_rand_score(lab, out) == 1.0
        assert len(np.unique(out)) == len(np.unique(lab))
        # no other relabelling agrees with ref on more rows (brute force over matchings)
        ids_lab, ids_ref = np.unique(lab), np.unique(ref)
        best = 0
        for perm in itertools.permutations(range(max(len(ids_lab), len(ids_ref))), len(ids_lab)):
            agree = sum(((lab == a) & (ref == ids_ref[j])).sum()
                        for a, j in zip(ids_lab, perm) if j < len(ids_ref))
            best = max(best, agree)
        assert (out == ref).sum() == best


def test_sequence_keeps_colours_across_frames():
    truth = np.repeat([0, 1, 2], 4)
    frames = [np.repeat([2, 0, 1], 4), np.repeat([1, 2, 0], 4), np.r_[np.repeat([5, 6], 4), np.repeat([7, 8], 2)]]
    out = match_label_sequence(frames)
    np.testing.assert_array_equal(out[0], frames[0])
    np.testing.assert_array_equal(out[1], frames[0])
    np.testing.assert_array_equal(out[2], np.r_[np.repeat([2, 0], 4), [1, 1, 3, 3]])
    out = match_label_sequence(frames[:2], reference=truth)
    np.testing.assert_array_equal(out[0], truth)
    np.testing.assert_array_equal(out[1], truth)


def test_match_validation():
    with pytest.raises(ValueError, match="same rows"):
        match_labels([0, 1], [0, 1, 2])
    assert match_labels([], []).size == 0


# ----------------------------------------------------------------------------- -1: a row not assigned yet

def test_unassigned_rows_stay_unassigned_and_are_never_matched():
    # a SUGS / DP search frame: rows not visited yet carry -1; they are no cluster
    ref = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    lab = np.array([7, 7, -1, 3, 3, -1, -1, -1])
    out = match_labels(ref, lab)
    np.testing.assert_array_equal(out, [0, 0, -1, 1, 1, -1, -1, -1])
    # nothing placed yet: every row stays -1
    np.testing.assert_array_equal(match_labels(ref, np.full(8, -1)), np.full(8, -1))
    # -1 in the reference counts for no reference cluster: the new cluster is not given id -1
    out = match_labels([-1, -1, 0, 0], [5, 5, 6, 6])
    np.testing.assert_array_equal(out, [1, 1, 0, 0])
    out = match_labels(np.full(4, -1), [5, 5, 6, -1])
    np.testing.assert_array_equal(out, [0, 0, 1, -1])


def test_unassigned_rows_do_not_change_the_matching_of_the_others():
    rng = np.random.default_rng(3)
    for _ in range(30):
        ref = np.r_[[0, 1, 2, 3], rng.integers(0, 4, 36)]
        lab = rng.integers(0, 5, 40)
        hidden = np.r_[[False] * 4, rng.random(36) < 0.3]
        out = match_labels(ref, np.where(hidden, -1, lab))
        assert (out[hidden] == -1).all()
        # the placed rows are matched exactly as if they were alone
        np.testing.assert_array_equal(out[~hidden], match_labels(ref[~hidden], lab[~hidden]))


def test_sequence_of_partial_frames_keeps_grey_rows_grey():
    final = np.repeat([0, 1, 2], 4)
    frames = [np.r_[[4, 4, 4], np.full(9, -1)], np.r_[[2, 2, 2, 2, 0, 0], np.full(6, -1)], final]
    out = match_label_sequence(frames, reference=np.repeat([1, 2, 0], 4))
    np.testing.assert_array_equal(out[0], np.r_[[1, 1, 1], np.full(9, -1)])
    np.testing.assert_array_equal(out[1], np.r_[[1, 1, 1, 1, 2, 2], np.full(6, -1)])
    # the cluster first seen in the last frame gets a new id, never the -1 of the rows it takes
    np.testing.assert_array_equal(out[2], np.repeat([1, 2, 3], 4))


def test_codes_equals_numpy_unique_on_every_kind_of_label():
    from mapdp_core.evaluation.metrics import codes

    rng = np.random.default_rng(3)
    cases = [rng.integers(0, 5, 1000), rng.integers(0, 10**9, 50), np.array([3, 3, 7]), np.array([-1, 0, 2, -1]),
             np.array([], dtype=np.int64), rng.integers(0, 3, 20).astype(np.uint8), np.array([0]),
             rng.integers(0, 300, 40), np.array([10**6, 2])]
    for x in cases:
        got = codes(x, return_counts=True)
        want = np.unique(x, return_inverse=True, return_counts=True)
        for g, w in zip(got, want):
            assert np.array_equal(g, w), x
        ids, inverse = codes(x)
        assert np.array_equal(ids[inverse], x)
