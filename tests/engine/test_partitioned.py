"""The partitioned sweep (engine.partitioned) is the serial sweep over the same global visiting
order: labels and statistics bit for bit, E and the joint to rounding; here with the parts in
this process (the Dask runs are in tests/engine/test_dask_fit.py)."""
import numpy as np
import pytest

from mapdp_core.core.spec import parse
from mapdp_core.engine import partitioned as pt
from mapdp_core.engine.model_data import ModelData
from mapdp_core.engine.sweeps import run_sweeps

from test_exactness import MIXED_SPEC, mixed_data, three_shapes


class _Wide(pt.LocalParts):
    """Every remaining part visits in each round (as on a cluster with a worker per part), so
    that rounds repeat the visits after a mover: the speculative path."""

    def width(self) -> int:
        return 1000


def _both(parsed, N0, start, cuts, seed=0, max_iter=100, ex=None):
    """(serial states, partitioned states) from ``start`` with parts cut at ``cuts``."""
    N = parsed.X.shape[0]
    bounds = list(zip([0, *cuts], [*cuts, N]))
    orders = [np.random.default_rng([seed, w]).permutation(b - a) for w, (a, b) in enumerate(bounds)]
    global_order = np.concatenate([a + o for (a, _), o in zip(bounds, orders)])
    serial = list(run_sweeps(parsed, N0, global_order, 1e-6, max_iter, init=start))
    layout = pt.Layout.of(parsed)
    parts = [pt.make_part(parsed.X[a:b], o, start[a:b], layout) for (a, b), o in zip(bounds, orders)]
    K = int(start.max()) + 1
    states = list(pt.partitioned_sweeps(ex or pt.LocalParts(), parts, K, ModelData(parsed), N0, 1e-6, max_iter))
    return serial, states


def _assert_same(serial, states):
    assert [s.n_changed for s in states] == [s.n_changed for s in serial]
    assert [s.n_clusters for s in states] == [s.n_clusters for s in serial]
    labels = np.concatenate([pt.table_labels(p) for p in states[-1].parts])
    np.testing.assert_array_equal(labels, serial[-1].labels)
    for a, b in zip(serial, states):
        np.testing.assert_array_equal(b.cluster_sizes, a.cluster_sizes)
        assert b.neg_log_joint == pytest.approx(a.neg_log_joint, rel=1e-12, abs=1e-9)
        assert b.objective == pytest.approx(a.objective, rel=1e-12, abs=1e-9)
        for key, cov in a.summaries["covariance"].items():  # the statistics themselves, bit for bit
            np.testing.assert_array_equal(b.summaries["covariance"][key], cov)
        np.testing.assert_array_equal(b.summaries["mean"], a.summaries["mean"])


@pytest.mark.parametrize("ex", [pt.LocalParts(), _Wide()], ids=["one at a time", "every part at once"])
@pytest.mark.parametrize("family", ["normal_wishart", "normal_gamma"])
@pytest.mark.parametrize("gaps", [False, True])
def test_partitioned_sweeps_are_the_serial_sweeps(family, gaps, ex):
    rng = np.random.default_rng(3)
    X = three_shapes(1, 1500)
    X = X[rng.permutation(len(X))]
    if gaps:
        X[rng.random(X.shape) < 0.1] = np.nan
    parsed = parse(X, family, None)
    start = rng.integers(0, 4, len(X))  # a poor start: many moves and rounds in the first sweeps
    serial, states = _both(parsed, 2.0, start, [400, 401, 1100], ex=ex)
    assert serial[0].n_changed > 100 and len(serial) >= 3
    # one part a round: four rounds a sweep; every part at once: a round per part that moved
    assert states[0].rounds == 4 if isinstance(ex, _Wide) else all(s.rounds in (0, 4) for s in states)
    _assert_same(serial, states)


def test_every_family_with_gaps_in_parts():
    X = mixed_data(5, n=600, missing=0.1)
    X[np.random.default_rng(5).random(len(X)) < 0.1, 0] = np.nan  # and in the Normal-Wishart block
    likelihood = {tuple(cols) if len(cols) > 1 else cols[0]: fam for fam, cols, _ in MIXED_SPEC}
    prior = {tuple(cols) if len(cols) > 1 else cols[0]: p for _, cols, p in MIXED_SPEC}
    parsed = parse(X, likelihood, prior)
    start = np.random.default_rng(1).integers(0, 3, len(X))
    serial, states = _both(parsed, 1.5, start, [150, 300, 450], seed=4, ex=_Wide())
    _assert_same(serial, states)
    assert serial[-1].n_clusters >= 2


def test_one_part_and_tiny_parts():
    X = three_shapes(2, 300)
    parsed = parse(X, "normal_wishart", None)
    start = np.zeros(len(X), dtype=np.int64)
    start[::2] = 1
    for cuts in ([], [1, 2, 3, 299]):
        _assert_same(*_both(parsed, 3.0, start, cuts))


def test_a_step_leaves_the_part_it_was_given_unchanged():
    """Dask may run a task twice or drop its result: every step works on copies."""
    X = three_shapes(4, 200)
    X[::7, 1] = np.nan  # gaps: the Normal-Wishart block's completed values are row state
    parsed = parse(X, "normal_wishart", None)
    labels = np.zeros(len(X), dtype=np.int64)
    labels[100:] = 1
    part = pt.make_part(parsed.X, np.arange(len(X)), labels, pt.Layout.of(parsed))
    fill = part.model.fams[pt._NW][pt._FILL].copy()
    loaded, stats = pt.load_part(part, None, 8)
    scored = pt.prescore_part(loaded, stats, 0.0)
    before = (scored.labels.copy(), scored.model.fams[pt._NW][pt._FILL].copy(), scored.model.cnt.copy())
    moved, result = pt.pass_part(scored, stats, np.zeros(8, dtype=np.uint8), 0.0)
    assert result.changed > 0
    np.testing.assert_array_equal(scored.labels, before[0])
    np.testing.assert_array_equal(scored.model.fams[pt._NW][pt._FILL], before[1])
    np.testing.assert_array_equal(scored.model.cnt, before[2])
    np.testing.assert_array_equal(part.model.fams[pt._NW][pt._FILL], fill)
    assert not np.array_equal(moved.labels, scored.labels)
