"""The algorithms the library and the app know, by display name (bnpy's constructor dicts).

Every entry is a :class:`~mapdp_core.estimator.SweepEstimator` subclass; the app's algorithm
lists, per-algorithm controls, restarts and comparisons are read from here, so a new
algorithm costs its module and one line below (or a :func:`register` call from outside).
"""
from __future__ import annotations

import time

from .dpmeans import DPMeans
from .estimator import SweepEstimator
from .gibbs import CollapsedGibbs
from .kmeans import KMeans
from .mapdp import MAPDP
from .mixtures import EMGaussianMixture, VariationalDP
from .search import DPSearch
from .sugs import SUGS
from .vsugs import VSUGS

#: display name -> estimator class, in display order
ALGORITHMS: dict[str, type[SweepEstimator]] = {
    cls.name: cls for cls in (MAPDP, KMeans, DPMeans, CollapsedGibbs, SUGS, VSUGS, DPSearch, EMGaussianMixture,
                              VariationalDP)
}


def register(cls: type[SweepEstimator]) -> type[SweepEstimator]:
    """Add an algorithm (usable as a class decorator); its ``name`` must be new."""
    if not (isinstance(cls, type) and issubclass(cls, SweepEstimator)) or not cls.name:
        raise TypeError("register takes a SweepEstimator subclass with a display name (its 'name').")
    if cls.name in ALGORITHMS and ALGORITHMS[cls.name] is not cls:
        raise ValueError(f"an algorithm named {cls.name!r} is registered already; choose another name.")
    ALGORITHMS[cls.name] = cls
    return cls


def algorithm(name: str) -> type[SweepEstimator]:
    """The estimator class registered as ``name``."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; choose among {list(ALGORITHMS)}.") from None


def warm_up(everything: bool = False) -> float:
    """Compile (or load from numba's disk cache) the kernels; returns the seconds it took.

    Runs the ``warm_up`` hook of each registered algorithm whose ``precompile`` is True (all of
    them with ``everything=True``) on a tiny data set (MAP-DP's uses every likelihood family),
    so that the first real run in an app does not pay for compilation. The opt-in algorithms
    left out (SUGS, V-SUGS) compile their own kernels at their first run instead: together
    about 17 s here, which would otherwise be added to every first visit.
    """
    t0 = time.perf_counter()
    for cls in ALGORITHMS.values():
        hook = getattr(cls, "warm_up", None)
        if hook is not None and (everything or cls.precompile):
            hook()
    return time.perf_counter() - t0
