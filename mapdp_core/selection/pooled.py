"""The automatic search's pool of partitions, each judged under every candidate by the exact joint.

Every distinct partition of the searched rows that some candidate's run found is kept, and a
candidate is judged by its lowest joint over the pool (:mod:`mapdp_core.selection.auto`: a greedy
run can stop in a poorer optimum than another candidate's partition gives it). Under candidate
theta = (structure, spread, weight, N0),

    -ln p(X, z | theta0, N0) = -ln p(z | N0) - sum_k ln p(X_k | theta0) + constants,

and the second term does not depend on N0: each partition is loaded into the statistics once
per prior setting (structure, spread, weight), and every N0 adds its own ln p(z | N0) (PLOS
eqs 11-12, in the order :meth:`~mapdp_core.engine.model_data.ModelData.neg_log_joint` adds the
terms, so that a value is the one a fit would report).

The loads are most of a search's work on small mixed tables (on the 418 rows of
primary_biliary_cholangitis, 6 455 of them took 3.3 of the 10.2 seconds of a profiled fit); those of different
prior settings use statistics of their own, so :meth:`PartitionPool.load` runs one prior setting
per thread (the kernels release the GIL), with the same numbers as one after the other.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from mapdp_core.core.estimator import run_many
from mapdp_core.engine.model_data import ModelData
from mapdp_core.engine.partition_prior import as_partition_prior

__all__ = ["PartitionPool"]


class PartitionPool:
    """The partitions found so far (``labels``, by key: the labels' bytes) and their joints.

    ``parsed_for(candidate)`` gives the searched rows parsed under a candidate's prior (the
    same object for every candidate of one prior setting, ``candidate[:3]``)."""

    def __init__(self, parsed_for: Callable):
        self.parsed_for = parsed_for
        self.labels: dict[bytes, np.ndarray] = {}
        self._joints: dict[tuple, float] = {}  # (key, candidate) -> -ln p(X, z)
        self._models: dict[tuple, ModelData] = {}  # one set of statistics per prior setting
        self._likelihoods: dict[tuple, tuple] = {}  # (key, prior) -> (sizes, sum ln p(X_k), constants)

    def add(self, labels: np.ndarray, candidate, value: float) -> bytes:
        """A partition a candidate's own run ended in, with the run's joint: that value is the
        candidate's for it (with gaps in a Normal-Wishart block the completed statistics, hence
        the joint, depend on the order rows joined, so a recomputation may differ)."""
        key = labels.tobytes()
        self.labels.setdefault(key, labels)
        self._joints[(key, candidate)] = min(value, self._joints.get((key, candidate), math.inf))
        return key

    def load(self, keys, candidates, workers: int) -> None:
        """Compute, in ``workers`` threads, every ln p(X | z, theta0) that judging ``candidates``
        on ``keys`` needs, one prior setting per thread."""
        todo: dict[tuple, list] = {}
        for cand in candidates:
            prior = cand[:3]
            for key in keys:
                if (key, cand) not in self._joints and (key, prior) not in self._likelihoods:
                    todo.setdefault(prior, {})[key] = None
                    self._model(cand)  # built here, before the threads
        if not todo:
            return
        priors = list(todo)
        for prior, values in zip(priors, run_many(lambda p: [self._likelihood(k, p) for k in todo[p]], priors,
                                                  workers)):
            for key, value in zip(todo[prior], values):
                self._likelihoods[(key, prior)] = value

    def _model(self, candidate) -> ModelData:
        """The statistics of ``candidate``'s prior setting, built once."""
        prior = candidate[:3]
        if prior not in self._models:
            self._models[prior] = ModelData(self.parsed_for(candidate))
        return self._models[prior]

    def _likelihood(self, key: bytes, prior) -> tuple:
        model = self._models[prior]
        K = model.start(self.labels[key])
        return model.cnt[:K].copy(), float(model.log_marginals(K).sum()), model.pconst_total

    def joint(self, key: bytes, candidate) -> float:
        """-ln p(X, z | theta0, N0) of the partition ``key`` under ``candidate``."""
        if (key, candidate) not in self._joints:
            prior = candidate[:3]
            if (key, prior) not in self._likelihoods:
                self._model(candidate)
                self._likelihoods[(key, prior)] = self._likelihood(key, prior)
            sizes, log_ml, constants = self._likelihoods[(key, prior)]
            log_crp = as_partition_prior(candidate[3]).log_prob(sizes, len(self.labels[key]))
            self._joints[(key, candidate)] = -log_crp - log_ml + constants
        return self._joints[(key, candidate)]
