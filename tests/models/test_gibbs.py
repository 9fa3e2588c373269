"""Collapsed Gibbs sampling through the shared sweep: seeded, and sampling the exact posterior."""
from collections import Counter

import numpy as np
import pytest

from mapdp_core.models.gibbs import CollapsedGibbs, collapsed_gibbs
from naive import naive_neg_log_joint


def set_partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in set_partitions(rest):
        for j in range(len(p)):
            yield p[:j] + [[first] + p[j]] + p[j + 1:]
        yield [[first]] + p


def canonical(labels):
    """The partition as a tuple of first-appearance block ids (label names do not matter)."""
    seen = {}
    return tuple(seen.setdefault(z, len(seen)) for z in labels)


@pytest.mark.parametrize("family,X,prior", [
    ("normal_gamma", np.array([[0.0], [0.3], [2.5], [2.9]]), {"m0": 1.0, "c0": 0.2, "a0": 2.0, "b0": 0.5}),
    ("poisson", np.array([[0.0], [1.0], [7.0], [9.0]]), {"alpha0": 2.0, "beta0": 0.5}),
])
def test_chain_visits_partitions_with_their_exact_posterior_probability(family, X, prior):
    N0 = 1.5
    blocks = [(family, [0], prior)]
    exact = {}
    for p in set_partitions(list(range(len(X)))):
        z = np.empty(len(X), dtype=int)
        for b, block in enumerate(p):
            z[block] = b
        exact[canonical(z)] = -naive_neg_log_joint(X, z, N0, blocks)
    logs = np.array(list(exact.values()))
    probs = dict(zip(exact, np.exp(logs - logs.max()) / np.exp(logs - logs.max()).sum()))
    n_sweeps = 12000
    counts = Counter()
    for state in collapsed_gibbs(X, N0, family, prior, n_sweeps=n_sweeps, random_state=1):
        if state.iteration > 1:  # the first sweep uses the count-1 initialisation fix
            counts[canonical(state.labels)] += 1
    total = sum(counts.values())
    tv = 0.5 * sum(abs(counts[p] / total - q) for p, q in probs.items())
    assert tv < 0.03, (tv, sorted(((probs[p], counts[p] / total) for p in probs), reverse=True)[:5])


def test_seeded_and_reproducible():
    X = np.random.default_rng(0).normal(size=(60, 2))
    a = [s.labels.copy() for s in collapsed_gibbs(X, n_sweeps=5, random_state=3)]
    b = [s.labels.copy() for s in collapsed_gibbs(X, n_sweeps=5, random_state=3)]
    c = [s.labels.copy() for s in collapsed_gibbs(X, n_sweeps=5, random_state=4)]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_estimator_keeps_the_most_probable_state_seen():
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(7, 1, (40, 2))])
    m = CollapsedGibbs(n_sweeps=30, random_state=0).fit(X)
    assert m.neg_log_joint_ == min(m.neg_log_joint_history_)
    assert m.n_iter_ == 30 and len(m.labels_) == 80
    assert m.n_clusters_ == 2


def test_mixed_families_with_missing_values_run():
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.normal(size=50), rng.poisson(3, 50).astype(float), rng.integers(0, 2, 50).astype(float)])
    X[rng.random((50, 3)) < 0.1] = np.nan
    states = list(collapsed_gibbs(X, 1.0, ["normal_gamma", "poisson", "bernoulli"], n_sweeps=10, random_state=0))
    assert all(np.isfinite(s.neg_log_joint) and s.algorithm == "Gibbs" for s in states)


def test_bad_sweep_count():
    with pytest.raises(ValueError, match="n_sweeps"):
        collapsed_gibbs(np.zeros((3, 2)), n_sweeps=0)
