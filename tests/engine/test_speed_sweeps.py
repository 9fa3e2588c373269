"""``run_sweeps(final_only=True)`` (what ``last_state`` runs for the hyperparameter search)
gives only the states that can be the run's last, each whole and equal to the whole run's state
at that sweep, and ends with the same state, bit for bit (issue 26: faster, same results)."""
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
    by_sweep = {s.iteration: s for s in whole}
    assert light and len(light) <= len(whole)
    for s in light:  # every state given is whole, and the whole run's at that sweep
        assert s.labels is not None and np.isfinite(s.neg_log_joint) and s.summaries is not None
        assert np.array_equal(s.labels, by_sweep[s.iteration].labels)
        assert s.neg_log_joint == by_sweep[s.iteration].neg_log_joint
    a, b = whole[-1], light[-1]
    assert np.array_equal(a.labels, b.labels)
    assert a.neg_log_joint == b.neg_log_joint and a.objective == b.objective
    assert a.n_clusters == b.n_clusters and a.converged == b.converged and a.iteration == b.iteration
    assert [s.objective for s in light] == [by_sweep[s.iteration].objective for s in light]
    state = last_state(parsed, 0.5, 0, init, max_iter=max_iter)
    assert state.labels is not None and np.isfinite(state.neg_log_joint)
