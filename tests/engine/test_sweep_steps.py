"""One MAP-DP sweep watched part-way (engine.sweeps.sweep_in_steps, MAPDP.sweep_steps): the
kernel's sweep run over the visiting order in pieces ends in the partition of the whole sweep,
for every sweep of every restart, and the steps add up to that sweep."""
import numpy as np
import pandas as pd
import pytest

from mapdp_core import MAPDP
from mapdp_core.evaluation.metrics import clustering_scores


def _mixed(seed=0, n=300):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 3, n)
    X = pd.DataFrame({"a": rng.normal(4.0 * z, 1.0), "b": rng.normal(-3.0 * z, 1.5),
                      "flag": (rng.random(n) < np.array([0.1, 0.5, 0.9])[z]).astype(float),
                      "kind": rng.integers(0, 3, n).astype(float), "count": rng.poisson(1 + 2 * z).astype(float)})
    X.loc[rng.random(n) < 0.1, "a"] = np.nan
    X.loc[rng.random(n) < 0.1, "kind"] = np.nan
    return X


CASES = {
    "mixed with gaps, from one cluster": (dict(N0=1.0, likelihood={"a": "normal_gamma", "b": "normal_gamma",
                                                                  "flag": "bernoulli", "kind": "categorical",
                                                                  "count": "poisson"}, prior=None), _mixed()),
    "correlated block with gaps": (dict(N0=0.5, likelihood={("a", "b"): "normal_wishart"}, prior=None),
                                   _mixed(1)[["a", "b"]]),
    "the automatic settings (from the search's partition)": (dict(), _mixed(2)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_sweep_watched_in_steps_ends_in_that_sweeps_partition(case):
    settings, X = CASES[case]
    est = MAPDP(n_init=2, random_state=0, restart_rows=None, merge=None, **settings)
    for restart in range(2):
        states = list(est.iter_sweeps(X, restart=restart))
        for sweep, state in enumerate(states, start=1):
            steps = est.sweep_steps(X, restart=restart, sweep=sweep, steps=9)
            assert len(steps) == 9
            assert [s.visited for s in steps][-1] == len(X)
            visited = np.concatenate([s.rows for s in steps])
            assert sorted(visited) == list(range(len(X)))  # each row once, in the visiting order
            assert clustering_scores(state.labels, steps[-1].labels)["ari"] == 1.0
            assert steps[-1].n_clusters == state.n_clusters
            assert sum(s.moved for s in steps) == state.n_changed


def test_a_sweep_the_fit_never_ran_is_refused_in_words():
    settings, X = CASES["mixed with gaps, from one cluster"]
    est = MAPDP(random_state=0, restart_rows=None, **settings)
    n = len(list(est.iter_sweeps(X)))
    with pytest.raises(ValueError, match=f"stops after {n} sweeps: ask for a sweep from 1 to {n}"):
        est.sweep_steps(X, sweep=n + 1)
    with pytest.raises(ValueError, match="restart must be below"):
        est.sweep_steps(X, restart=5)


def test_the_first_sweep_from_one_cluster_opens_clusters_as_it_goes():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(m, 1.0, (100, 2)) for m in (0.0, 8.0, 16.0)])
    est = MAPDP(N0=1.0, likelihood="spherical_gaussian", prior={"sigma2": 1.0}, random_state=0)
    steps = est.sweep_steps(X, steps=20)
    first = next(iter(est.iter_sweeps(X)))
    assert steps[0].n_clusters < first.n_clusters == steps[-1].n_clusters
    assert sum(s.opened for s in steps) >= first.n_clusters - 1  # every cluster but the first opens in it
