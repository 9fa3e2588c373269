"""Validation shared by the public functions and estimators (being consolidated here)."""
from __future__ import annotations

import numpy as np

from ._checks import as_data, check_int, check_nonneg, check_order, make_rng  # noqa: F401


def restart_plan(random_state, n_restarts: int, N: int, *, shuffle: bool = True,
                 first_in_input_order: bool = False) -> list:
    """Per restart, ``(order, seed)``: the visiting order (a permutation of the N rows, or
    None for input order) and an int seed for anything else the restart draws.

    Each restart takes its own child of ``numpy.random.SeedSequence(random_state)``, so that
    restart r is the same whether restarts run one by one, in threads or on a cluster.
    """
    if isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        random_state = int(make_rng(random_state).integers(0, 2**63 - 1))
    children = np.random.SeedSequence(random_state).spawn(n_restarts)
    plan = []
    for r, child in enumerate(children):
        order_seed, seed = child.generate_state(2, dtype=np.uint64)
        order = None
        if shuffle and not (first_in_input_order and r == 0):
            order = np.random.default_rng(int(order_seed)).permutation(N).astype(np.int64)
        plan.append((order, int(seed)))
    return plan
