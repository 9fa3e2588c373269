"""What makes large fits cheap without changing what is computed (issue 13).

* A sweep after one that moved no row is given, not recomputed: the states must be those a
  run that recomputes every sweep (tol = 0, so it never stops early) produces, bit for bit.
* ``extend_partition`` (the MAP-DP rule without moving the clusters, PLOS Appendix E)
  against the slow reference predictive of tests/naive.py.
* ``MAPDP(restart_rows=...)``: restarts on a subsample, one full run from the best; the kept
  fit is a fixed point of the sweep on every row.
"""
import math

import numpy as np
import pytest

from mapdp_core import MAPDP, map_dp
from mapdp_core.kernels import dp_mixture as _kernels
from mapdp_core.engine import sweeps
from mapdp_core.engine.model_data import extend_partition
from mapdp_core.core.spec import parse
from naive import _row_neg_log_predictive

from test_exactness import MIXED_SPEC, mixed_data, three_shapes


def _spec(spec):
    likelihood = {tuple(cols) if len(cols) > 1 else cols[0]: fam for fam, cols, _ in spec}
    prior = {tuple(cols) if len(cols) > 1 else cols[0]: p for _, cols, p in spec}
    return likelihood, prior


@pytest.mark.parametrize("data", ["shapes", "mixed"])
def test_the_sweep_after_a_still_one_is_given_bit_for_bit(data, monkeypatch):
    calls = []
    sweep = _kernels.sweep

    def counted(*args):
        calls.append(1)
        return sweep(*args)

    monkeypatch.setattr(sweeps.dp_mixture, "sweep", counted)
    shortcuts = 0
    for seed in range(4):
        if data == "shapes":
            X, likelihood, prior, N0 = three_shapes(5 + seed, 300), "normal_wishart", None, 3.0
        else:
            X, N0 = mixed_data(23 + seed), 1.5
            likelihood, prior = _spec(MIXED_SPEC)
        order = np.random.default_rng(seed).permutation(len(X))
        calls.clear()
        fast = list(map_dp(X, N0, likelihood, prior, order=order, tol=1e-6))
        given = len(fast) > 2 and fast[-2].n_changed == 0 and fast[-1].converged
        assert len(calls) == len(fast) - given  # only the repeat of a still sweep is not recomputed
        shortcuts += given
        full = list(map_dp(X, N0, likelihood, prior, order=order, tol=0.0, max_iter=len(fast) + 2))
        assert not any(s.converged for s in full)  # tol = 0: every sweep computed, none stops the run
        for a, b in zip(fast, full):
            assert a.iteration == b.iteration
            np.testing.assert_array_equal(a.labels, b.labels)
            assert a.objective == b.objective and a.neg_log_joint == b.neg_log_joint
            assert a.n_clusters == b.n_clusters and a.n_changed == b.n_changed
    assert shortcuts >= 1


def test_no_shortcut_after_the_first_sweep_from_one_cluster():
    """Appendix B's count of one applies in sweep 1 only, so a still first sweep is not
    repeated: sweep 2 scores with the real count (another E) and is computed."""
    X = np.array([[0.0], [0.1], [0.2], [50.0], [50.1]])
    states = list(map_dp(X, 0.1, "normal_gamma", None, tol=1e-6))
    full = list(map_dp(X, 0.1, "normal_gamma", None, tol=0.0, max_iter=len(states)))
    assert states[0].n_changed == 0 and len(states) == 3 and states[0].objective != states[1].objective
    for a, b in zip(states, full):
        np.testing.assert_array_equal(a.labels, b.labels)
        assert a.objective == b.objective


def _naive_extension(X, sub_rows, sub_labels, N0, blocks):
    K = sub_labels.max() + 1
    members = [sub_rows[sub_labels == k] for k in range(K)]
    out = []
    for i in range(len(X)):
        logw = [math.log(len(m)) - _row_neg_log_predictive(X, i, m, blocks) for m in members]
        new = math.log(N0) - _row_neg_log_predictive(X, i, [], blocks)
        out.append(K if new > max(logw) else int(np.argmax(logw)))
    return np.array(out)


def test_extend_partition_is_the_naive_rule_on_a_mixed_table_with_gaps():
    X = mixed_data(31)
    likelihood, prior = _spec(MIXED_SPEC)
    parsed = parse(X, likelihood, prior)
    rng = np.random.default_rng(0)
    rows = np.sort(rng.choice(len(X), 40, replace=False))
    labels = rng.integers(0, 3, 40)
    labels[:3] = [0, 1, 2]
    from mapdp_core.core.spec import ParsedData

    sub = ParsedData(X[rows], parsed.names, parsed.blocks, parsed.categories)
    got = extend_partition(sub, labels, X, 0.7, chunk=17)  # several chunks
    want = _naive_extension(X, rows, labels, 0.7, MIXED_SPEC)
    # the same partition of the rows (the result is numbered by first appearance)
    pairs = set(zip(got.tolist(), want.tolist()))
    assert len(pairs) == len(set(got.tolist())) == len(set(want.tolist()))
    kept = extend_partition(sub, labels, X, 0.7, keep=(rows, labels))
    for k in range(3):  # rows of the partition keep their clusters together
        assert len(set(kept[rows[labels == k]].tolist())) == 1


def _fixed_point(X, m):
    """Whether no row of m's partition would move in a full MAP-DP sweep (in any order: while
    no row moves, every row is scored against the same statistics)."""
    again = MAPDP(N0=m.N0_, likelihood=m.likelihood, prior=m.prior, n_init=1, shuffle=False,
                  restart_rows=None, init=m.labels_).fit(X)
    return again.n_iter_ <= 2 and np.array_equal(again.labels_, m.labels_)


def test_restarts_on_a_subsample_then_one_full_run():
    X = three_shapes(8, 1500)
    kwargs = dict(N0=3.0, likelihood="normal_wishart", prior=None, n_init=4, random_state=3)
    m = MAPDP(restart_rows=300, **kwargs).fit(X)
    assert m.restart_rows_ == 300 and m.restart_neg_log_joints_.shape == (4,)
    assert m.converged_ and _fixed_point(X, m)
    again = MAPDP(restart_rows=300, **kwargs).fit(X)
    np.testing.assert_array_equal(again.labels_, m.labels_)  # the same random_state, the same fit
    assert again.neg_log_joint_ == m.neg_log_joint_
    paper = MAPDP(restart_rows=None, **kwargs).fit(X)
    assert paper.restart_rows_ == len(X) and paper.restart_neg_log_joints_.shape == (4,)
    assert m.n_clusters_ == paper.n_clusters_ == 3
    one = MAPDP(restart_rows=300, **{**kwargs, "n_init": 1}).fit(X)  # one restart: nothing to subsample
    assert one.restart_rows_ == len(X)


def test_restarts_on_a_subsample_from_the_automatic_search():
    X = three_shapes(9, 1200)
    m = MAPDP(random_state=0, restart_rows=400).fit(X)
    assert m.restart_rows_ == 400 and m.n_clusters_ == 3 and m.converged_


@pytest.mark.parametrize("bad", [1, 0, -5, 2.5, "many"])
def test_restart_rows_must_be_a_whole_number_of_rows(bad):
    with pytest.raises((ValueError, TypeError), match="restart_rows"):
        MAPDP(N0=3.0, likelihood="normal_wishart", prior=None, restart_rows=bad).fit(three_shapes(0, 60))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_normal_gamma_pruning_keeps_the_reference_run(seed):
    """Independent Normal-Gamma columns only: the sweep drops a cluster as soon as a lower bound
    of its score (every column's constant plus the log terms so far) passes the best; labels
    and every sweep's E stay those of the slow reference, with gaps and a far-out row."""
    from naive import naive_mapdp

    rng = np.random.default_rng(seed)
    z = rng.integers(0, 4, 140)
    centres = rng.normal(0, 6, (4, 5))
    X = centres[z] + rng.normal(0, 1 + z[:, None] * 0.5, (140, 5))
    X[rng.random(X.shape) < 0.08] = np.nan
    X[7] = [60.0, -45.0, np.nan, 50.0, 0.0]  # far from every cluster
    prior = {"m0": 0.0, "c0": 0.05, "a0": 2.0, "b0": 3.0}
    blocks = [("normal_gamma", list(range(5)), prior)]
    order = rng.permutation(len(X))
    for N0 in (0.5, 5.0):
        states = list(map_dp(X, N0, "normal_gamma", prior, order=order))
        labels, E = naive_mapdp(X, N0, blocks, order=order)
        np.testing.assert_array_equal(states[-1].labels, labels)
        np.testing.assert_allclose([s.objective for s in states], E, rtol=1e-9, atol=1e-9)
        assert states[-1].n_clusters >= 3


def _tables():
    """Tables that reach every branch of the shared sweep: Normal-Wishart (its mode pruning),
    with gaps (no pruning for those rows), Normal-Gamma columns (their bound), a mixed table
    with gaps, and many clusters (new ones opened inside a block, and the arrays grown)."""
    rng = np.random.default_rng(4)
    shapes = three_shapes(2, 400)
    gappy = shapes.copy()
    gappy[rng.random(gappy.shape) < 0.1] = np.nan
    gappy[np.isnan(gappy).all(axis=1), 0] = 0.0
    many = (rng.integers(0, 20, 600)[:, None] * 7.0 + rng.normal(0, 1, (600, 2)))
    ng = np.column_stack([shapes, rng.normal(size=400)])
    ng[rng.random(ng.shape) < 0.05] = np.nan
    likelihood, prior = _spec(MIXED_SPEC)
    return [
        (shapes, "normal_wishart", None, 3.0),
        (gappy, "normal_wishart", None, 3.0),
        (ng, "normal_gamma", None, 0.5),
        (mixed_data(40, n=300), likelihood, prior, 1.5),
        (many, "spherical_gaussian", {"sigma2": 1.0}, 1.0),
        (many, "normal_gamma", {"b0": 4.0, "c0": 0.01}, 3.0),
    ]


@pytest.mark.parametrize("case", range(6))
@pytest.mark.parametrize("block", [1, 7, 64])
def test_a_sweep_shared_by_threads_is_the_serial_sweep_bit_for_bit(case, block, monkeypatch):
    X, likelihood, prior, N0 = _tables()[case]
    monkeypatch.setattr(sweeps, "SWEEP_BLOCK", block)
    monkeypatch.setattr(sweeps, "PARALLEL_SWEEP_ROWS", 0)
    monkeypatch.setattr(sweeps, "_worth_sharing", lambda *args: True)
    calls = []
    sweep = _kernels.sweep

    def counted(*args):
        if args[-1]:  # prescoring
            calls.append(1)
        return sweep(*args)

    monkeypatch.setattr(sweeps.dp_mixture, "sweep", counted)
    parsed = parse(X, likelihood, prior)
    order = np.random.default_rng(case).permutation(len(X))
    serial = list(sweeps.run_sweeps(parsed, N0, order, 1e-6, 100))
    assert not calls
    shared = list(sweeps.run_sweeps(parsed, N0, order, 1e-6, 100, threads=3))
    assert len(calls) >= 3 * (len(shared) - 2)  # every sweep after the first, in blocks, by 3 threads
    assert len(shared) == len(serial) and sum(s.n_changed for s in serial) > 0
    for a, b in zip(shared, serial):
        np.testing.assert_array_equal(a.labels, b.labels)
        assert a.objective == b.objective and a.neg_log_joint == b.neg_log_joint and a.n_changed == b.n_changed
    if case == 4:
        assert serial[-1].n_clusters > 8  # past the first capacity: grown inside a sweep
    start = serial[1].labels  # from a partition (no first-sweep count), still the same
    serial = list(sweeps.run_sweeps(parsed, N0, order, 1e-6, 100, init=start))
    shared = list(sweeps.run_sweeps(parsed, N0, order, 1e-6, 100, init=start, threads=2))
    assert [s.objective for s in shared] == [s.objective for s in serial]
    np.testing.assert_array_equal(shared[-1].labels, serial[-1].labels)


def test_mapdp_shares_the_sweep_only_when_one_run_is_all_there_is():
    X = three_shapes(1, 90)
    problem = MAPDP(N0=3.0, likelihood="normal_wishart", prior=None, n_init=3)._validate(X)
    assert MAPDP(N0=3.0, likelihood="normal_wishart", prior=None, n_init=3)._sweep_threads(problem) == 1
    one = MAPDP(N0=3.0, likelihood="normal_wishart", prior=None, n_init=1)
    import os

    assert one._sweep_threads(problem) == (os.cpu_count() or 1)
    assert MAPDP(N0=3.0, likelihood="normal_wishart", prior=None, n_init=1, n_jobs=1)._sweep_threads(problem) == 1


@pytest.mark.parametrize("case", [0, 1, 3])
def test_rows_stored_in_visiting_order_give_the_same_numbers(case, monkeypatch):
    """_run copies the rows into visiting order (memory read in sequence); the run must be
    the one over the table as given, bit for bit, for MAP-DP and for Gibbs's draws. A
    Normal-Wishart block with gaps (case 1) enters the joint by a chain rule over the table's
    rows in the table's order (normal_wishart.observed_log_marginals), which differs between
    X and X[order]: there the two runs' statistics and completions must be the same, and the
    joint of the run on X that of those statistics chained in X's order."""
    X, likelihood, prior, N0 = _tables()[case]
    order = np.random.default_rng(9).permutation(len(X))
    ident = np.arange(len(X))
    models = []

    class Recorded(sweeps.ModelData):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            models.append(self)

    monkeypatch.setattr(sweeps, "ModelData", Recorded)
    given = list(sweeps.run_sweeps(parse(X, likelihood, prior), N0, order, 1e-6, 100))
    stored = list(sweeps.run_sweeps(parse(X[order], likelihood, prior), N0, ident, 1e-6, 100))
    assert len(given) == len(stored)
    gappy_block = models[1].nw_gaps
    assert gappy_block == (case == 1)
    for a, b in zip(given, stored):
        np.testing.assert_array_equal(a.labels[order], b.labels)
        assert a.objective == b.objective and (gappy_block or a.neg_log_joint == b.neg_log_joint)
    if gappy_block:
        run_x, run_stored = models
        for u, v in zip(run_x.fams[2], run_stored.fams[2]):  # data, completions, statistics
            np.testing.assert_array_equal(u, v)
        assert run_stored.input_rows is None and np.array_equal(order[run_x.input_rows], ident)
        assert given[-1].neg_log_joint != stored[-1].neg_log_joint
        run_stored.input_rows = run_x.input_rows
        assert run_stored.neg_log_joint(given[-1].n_clusters, N0) == given[-1].neg_log_joint

    class Permuted:  # row t of X[order] gets the draw row order[t] gets in the run on X
        def __init__(self):
            self.base = np.random.default_rng(3)

        def random(self, n):
            return self.base.random(n)[order]

    gibbs = list(sweeps.run_sweeps(parse(X, likelihood, prior), N0, order, 0.0, 4, np.random.default_rng(3)))
    twin = list(sweeps.run_sweeps(parse(X[order], likelihood, prior), N0, ident, 0.0, 4, Permuted()))
    assert sum(s.n_changed for s in gibbs) > 0
    for a, b in zip(gibbs, twin):
        np.testing.assert_array_equal(a.labels[order], b.labels)
        assert a.objective == b.objective
