"""The search's pool of partitions (mapdp_core.selection.pooled): each joint is the exact
-ln p(X, z) a fit reports, whether loaded lazily or ahead in threads."""
import numpy as np
import pandas as pd
import pytest

from mapdp_core.core.spec import parse
from mapdp_core.engine.model_data import ModelData
from mapdp_core.selection.pooled import PartitionPool
from mapdp_core.selection.priors import _prior_argument, scaled_parsed


def _table(seed=0, gaps=False):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": np.r_[rng.normal(0, 1, 40), rng.normal(4, 1, 40)],
                      "b": np.r_[rng.normal(0, 1, 40), rng.normal(-3, 2, 40)],
                      "c": rng.integers(0, 2, 80).astype(float)})
    if gaps:
        X.iloc[rng.choice(80, 10, replace=False), 0] = np.nan
    return X


@pytest.mark.parametrize("structure", ["normal_gamma", "normal_wishart", "normal_wishart_tied"])
@pytest.mark.parametrize("gaps", [False, True])
def test_pool_joints_are_the_exact_joint_loaded_ahead_or_not(structure, gaps):
    X = _table(1, gaps)
    real = ("a", "b")
    likelihood = ({"a": "normal_gamma", "b": "normal_gamma"} if structure == "normal_gamma"
                  else {real: structure})
    likelihood["c"] = "bernoulli"
    base = parse(X, likelihood, _prior_argument(parse(X, likelihood), likelihood, 1.0, 1.0))
    parsed = {(structure, s, 1.0): scaled_parsed(base, s, 1.0) for s in (0.5, 1.0, 2.0)}
    rng = np.random.default_rng(3)
    partitions = [np.zeros(80, dtype=np.int64), np.r_[np.zeros(40), np.ones(40)].astype(np.int64),
                  rng.integers(0, 4, 80)]
    partitions = [np.unique(p, return_inverse=True)[1].astype(np.int64) for p in partitions]
    cands = [(structure, s, 1.0, n0) for s in (0.5, 1.0, 2.0) for n0 in (0.3, 3.0)]
    lazy, ahead = PartitionPool(lambda c: parsed[c[:3]]), PartitionPool(lambda c: parsed[c[:3]])
    keys = []
    for pool in (lazy, ahead):
        keys = [pool.add(p, ("other", 1.0, 1.0, 1.0), np.inf) for p in partitions]
    ahead.load(keys, cands, workers=2)
    for cand in cands:
        for key, labels in zip(keys, partitions):
            model = ModelData(parsed[cand[:3]])
            K = model.start(labels)
            exact = model.neg_log_joint(K, cand[3])
            assert lazy.joint(key, cand) == pytest.approx(exact, rel=1e-12, abs=1e-9)
            assert ahead.joint(key, cand) == lazy.joint(key, cand)  # the same numbers, bit for bit


def test_a_runs_own_value_stands_for_its_candidate():
    """A candidate's own run's joint is kept for it (the lower of repeated values), not recomputed."""
    X = _table(2)
    likelihood = {"a": "normal_gamma", "b": "normal_gamma", "c": "bernoulli"}
    parsed = parse(X, likelihood)
    pool = PartitionPool(lambda c: parsed)
    labels = np.r_[np.zeros(40), np.ones(40)].astype(np.int64)
    cand = ("independent", 1.0, 1.0, 1.0)
    key = pool.add(labels, cand, 123.0)
    assert pool.add(labels, cand, 456.0) == key
    pool.load([key], [cand], workers=2)
    assert pool.joint(key, cand) == 123.0
    other = ("independent", 1.0, 1.0, 3.0)
    model = ModelData(parsed)
    assert pool.joint(key, other) == pytest.approx(model.neg_log_joint(model.start(labels), 3.0), rel=1e-12)
