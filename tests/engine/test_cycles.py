"""A MAP-DP run caught in a cycle of partitions ends at the cycle's best member
(``engine.sweeps.CycleWatch``), instead of alternating until ``max_iter``."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mapdp_core.core.spec import parse
from mapdp_core.core.validation import restart_plan
from mapdp_core.engine.sweeps import CycleWatch, last_state, run_sweeps
from mapdp_core.selection.auto import auto_likelihood, sparse_real_columns, structured_likelihood

DATA = Path(__file__).resolve().parents[2] / "datasets"


def _walk(watch, sequence):
    """Feed (labels, joint) pairs to ``watch``; the sweep (from 1) it ends at, or None."""
    for iteration, (labels, joint) in enumerate(sequence, start=1):
        if watch.ends_at(iteration, np.asarray(labels, dtype=np.int64), lambda j=joint: j):
            return iteration
    return None


def test_watch_ends_at_the_best_member_of_a_two_cycle():
    a, b, c = [0, 0, 1], [0, 1, 1], [0, 1, 0]
    # a, then b and c alternate; c has the lower joint
    seq = [(a, 9.0), (b, 5.0), (c, 4.0), (b, 5.0), (c, 4.0), (b, 5.0), (c, 4.0), (b, 5.0)]
    end = _walk(CycleWatch(), seq)
    assert end is not None and seq[end - 1][0] == c
    assert end <= 2 + 2 * 2 + 1  # the repeat at sweep 4, then at most twice the period


def test_watch_three_cycle_and_no_cycle():
    p = [[0, 1, 2, 2], [0, 0, 1, 2], [0, 1, 1, 2]]
    joints = [3.0, 1.0, 2.0]
    seq = [(p[i % 3], joints[i % 3]) for i in range(20)]
    end = _walk(CycleWatch(), seq)
    assert end is not None and seq[end - 1][0] == p[1] and end < 12
    # every partition new: never ends
    assert _walk(CycleWatch(), [([0] * k + [1] * (9 - k), float(k)) for k in range(9)]) is None


def test_watch_period_one_ends_when_it_repeats_once_more():
    # the same partition again after a sweep that moved a row (a singleton re-opening its own
    # cluster): ended a sweep later, where the tol rule ends such a run when E repeats too
    assert _walk(CycleWatch(), [([0, 1], 2.0), ([0, 0], 1.0), ([0, 0], 1.0)]) is None
    assert _walk(CycleWatch(), [([0, 1], 2.0), ([0, 0], 1.0), ([0, 0], 1.0), ([0, 0], 1.0)]) == 4


def test_watch_asks_joints_only_on_the_tour():
    asked = []
    watch = CycleWatch()
    for it, labels in enumerate([[0, 1], [1, 0], [0, 0], [1, 1], [0, 0]], start=1):
        watch.ends_at(it, np.asarray(labels, dtype=np.int64), lambda it=it: asked.append(it) or 0.0)
    assert asked == [5]  # the repeat of sweep 3's partition starts the tour; nothing before


@pytest.fixture(scope="module")
def cycling_run():
    """PBC's table, the real columns as one Normal-Wishart block with gaps and the ordinal scales
    categorical, from one cluster: without the watch its sweeps alternate between two partitions
    (found 2026-12-07: sweeps 13 and 14 repeated up to sweep 100)."""
    X = pd.read_csv(DATA / "primary_biliary_cholangitis.csv").drop(columns=["label"])
    auto = auto_likelihood(X)
    sparse = sparse_real_columns(auto.X, auto.likelihood)
    parsed = parse(auto.X, structured_likelihood(auto.likelihood, "joint+categorical scales", sparse))
    order = restart_plan(0, 1, len(auto.X), shuffle=True)[0][0]
    return parsed, order


def test_a_cycling_run_ends_at_the_cycles_lowest_joint(cycling_run):
    parsed, order = cycling_run
    # the reference: the same sweeps without the watch (tol = 0 turns it and the tol rule off)
    plain = [(s.iteration, np.array(s.labels), s.neg_log_joint) for s in run_sweeps(parsed, 1.0, order, 0.0, 40)]
    digests = [s[1].tobytes() for s in plain]
    first_repeat = next(i for i, d in enumerate(digests) if d in digests[:i])
    assert first_repeat < 30, "this run no longer cycles: the test needs another cycling case"
    cycle = plain[digests.index(digests[first_repeat]):]
    best = min(cycle, key=lambda s: s[2])

    states = list(run_sweeps(parsed, 1.0, order, 1e-6, 100))
    last = states[-1]
    assert last.converged and last.iteration < first_repeat + 1 + 2 * (first_repeat - digests.index(digests[first_repeat]))
    assert last.neg_log_joint == pytest.approx(best[2], abs=1e-9)
    np.testing.assert_array_equal(last.labels, best[1])
    # every state before the end is the plain run's, bit for bit
    for s, (it, labels, joint) in zip(states, plain):
        assert s.iteration == it and s.neg_log_joint == joint
        np.testing.assert_array_equal(s.labels, labels)
    # the search's runs (final state only) end at the same state
    quick = last_state(parsed, 1.0, 0, None)
    assert quick.iteration == last.iteration and quick.neg_log_joint == last.neg_log_joint
