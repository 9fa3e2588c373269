"""The algorithms the library and the app know, by display name (bnpy's constructor dicts).

Every entry is a :class:`~mapdp_core.core.estimator.SweepEstimator` subclass; the app's algorithm
lists, per-algorithm controls, restarts and comparisons are read from here, so a new
algorithm costs its module and one line below (or a :func:`register` call from outside).
"""
from __future__ import annotations

import time

from .dpmeans import DPMeans
from mapdp_core.core.estimator import SweepEstimator
from .gibbs import CollapsedGibbs
from .hdp import HardHDP
from .hdp_hmm import HardHDPHMM
from .hdp_hmm_direct import HardHDPHMMDirect
from .ihmm import MAPIHMM
from .kmeans import KMeans
from .mapdp import MAPDP
from .mixed_effects import MixedEffectsMAPDP
from .mixtures import EMGaussianMixture, VariationalDP
from .search import DPSearch
from .sugs import SUGS
from .vsugs import VSUGS

#: display name -> estimator class, in display order
ALGORITHMS: dict[str, type[SweepEstimator]] = {
    cls.name: cls for cls in (MAPDP, KMeans, DPMeans, CollapsedGibbs, SUGS, VSUGS, DPSearch, EMGaussianMixture,
                              VariationalDP)
}


#: The roles a column can play besides "feature", as the Data page sets them: ``"time"`` orders
#: the rows as a time series (several series when a group column is set too), ``"group"``
#: says which group or subject a row belongs to (a school, a ward, a patient seen at several
#: visits).
ROLES = ("time", "group")

#: The algorithms for data with more structure than a table of exchangeable rows, by display
#: name: the estimator class and the column roles it needs (issue 16). Their ``fit`` takes the
#: structure as an argument (``lengths``, ``groups``), so they are not run on a plain table,
#: and the app shows each only when the data have its roles (:func:`available`).
STRUCTURED: dict[str, tuple[type[SweepEstimator], frozenset]] = {
    MAPIHMM.name: (MAPIHMM, frozenset({"time"})),
    HardHDPHMM.name: (HardHDPHMM, frozenset({"time"})),
    HardHDPHMMDirect.name: (HardHDPHMMDirect, frozenset({"time"})),
    HardHDP.name: (HardHDP, frozenset({"group"})),
    MixedEffectsMAPDP.name: (MixedEffectsMAPDP, frozenset({"group"})),
}


def needs(name: str) -> frozenset:
    """The column roles the algorithm ``name`` needs (empty for a table algorithm)."""
    if name in STRUCTURED:
        return STRUCTURED[name][1]
    algorithm(name)  # a clear error for an unknown name
    return frozenset()


def available(roles=()) -> list[str]:
    """The algorithms the data allow, by display name: every table algorithm, then each
    structured one whose roles are all among ``roles`` (an iterable of :data:`ROLES`).

    >>> available() == list(ALGORITHMS)
    True
    >>> [a for a in available({"time"}) if a in STRUCTURED]
    ['MAP-iHMM', 'Hard HDP-HMM', 'Hard HDP-HMM (direct)']
    """
    roles = frozenset(roles)
    unknown = sorted(roles - set(ROLES))
    if unknown:
        raise ValueError(f"unknown column role(s) {unknown}; the roles are {list(ROLES)}.")
    return list(ALGORITHMS) + [name for name, (_, wanted) in STRUCTURED.items() if wanted <= roles]


def register(cls: type[SweepEstimator]) -> type[SweepEstimator]:
    """Add an algorithm (usable as a class decorator); its ``name`` must be new."""
    if not (isinstance(cls, type) and issubclass(cls, SweepEstimator)) or not cls.name:
        raise TypeError("register takes a SweepEstimator subclass with a display name (its 'name').")
    if cls.name in ALGORITHMS and ALGORITHMS[cls.name] is not cls:
        raise ValueError(f"an algorithm named {cls.name!r} is registered already; choose another name.")
    ALGORITHMS[cls.name] = cls
    return cls


def algorithm(name: str) -> type[SweepEstimator]:
    """The estimator class registered as ``name`` (a table algorithm or a structured one)."""
    if name in ALGORITHMS:
        return ALGORITHMS[name]
    if name in STRUCTURED:
        return STRUCTURED[name][0]
    raise ValueError(f"unknown algorithm {name!r}; choose among {list(ALGORITHMS) + list(STRUCTURED)}.")


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
