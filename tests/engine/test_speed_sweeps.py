"""``run_sweeps(final_only=True)`` (what ``last_state`` runs for the hyperparameter search)
ends with the same state as the whole run, bit for bit (issue 26: faster, same results)."""
import numpy as np
import pytest

from mapdp_core.core.spec import parse
from mapdp_core.data.synthetic import plos_scenario
from mapdp_core.engine.sweeps import last_state, run_sweeps


@pytest.mark.parametrize("max_iter", [1, 2, 3, 100])
@pytest.mark.parametrize("with_init", [False, True])
@pytest.mark.parametrize("likelihood", ["normal_wishart", "normal_gamma"])
def test_final_only_ends_like_the_whole_run(max_iter, with_init, likelihood):
    X, y = plos_scenario("5.4", 600, seed=1)
    parsed = parse(X, likelihood, None)
    order = np.random.default_rng(3).permutation(len(X)).astype(np.int64)
    init = (np.arange(len(X)) % 7) if with_init else None
    whole = list(run_sweeps(parsed, 0.5, order, 1e-6, max_iter, init=init))
    light = list(run_sweeps(parsed, 0.5, order, 1e-6, max_iter, init=init, final_only=True))
    assert len(light) == len(whole)
    a, b = whole[-1], light[-1]
    assert np.array_equal(a.labels, b.labels)
    assert a.neg_log_joint == b.neg_log_joint and a.objective == b.objective
    assert a.n_clusters == b.n_clusters and a.converged == b.converged and a.iteration == b.iteration
    assert [s.objective for s in whole] == [s.objective for s in light]
    state = last_state(parsed, 0.5, 0, init, max_iter=max_iter)
    assert state.labels is not None and np.isfinite(state.neg_log_joint)
