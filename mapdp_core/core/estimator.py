"""The one contract every clustering algorithm of the library follows.

An algorithm is a :class:`SweepEstimator`: a scikit-learn estimator whose constructor stores
parameters only, and which declares, as class attributes, what the rest of the library (the
restart loop, the registry, the app) needs to know about it:

``name``         display name, equal to ``SweepState.algorithm``;
``input``        what it reads: ``"mixed"`` (a table with one likelihood per column, gaps
                 allowed: scikit-learn's ``allow_nan`` tag) or ``"numeric"`` (a complete
                 numeric matrix);
``restart_key``  the ``SweepState`` attribute minimised across restarts;
``keep``         ``"last"`` (the converged state) or ``"best"`` (a sampler's lowest
                 ``restart_key`` state along its chain);
``step``         the unit of one state (``"sweep"``, ``"iteration"``, ``"pass"``);
``monotone``     the ``SweepState`` attribute that never increases along a restart, or None;
``ui``           one :class:`Control` per tunable parameter (label, range, log scale, help):
                 hints for an interface, no Streamlit here;
``precompile``   whether the install and the app's start compile its kernels (its ``warm_up``
                 hook, usually made by :func:`warm_up_hook`); False for opt-in algorithms whose
                 own kernels cost more compile time than their place in the first visit is
                 worth: their first run compiles them once, into numba's disk cache.

A subclass writes three small methods: ``_validate(X)`` checks the parameters and the data
once and returns a ``problem`` (anything with ``n_rows``); ``_sweeps(problem, order, rng)``
yields one immutable :class:`~mapdp_core.core.state.SweepState` per step with no validation; and
``_store(problem, state, history)`` sets the attributes particular to the algorithm. The base
class writes the rest once: the restart plan (one plan for every algorithm, seeds from
``numpy.random.SeedSequence``, so a restart does not depend on how restarts are scheduled),
``iter_sweeps`` (validate now, return the generator of one restart), ``fit`` (restarts in
parallel threads: the numba kernels release the GIL), the best-of-restarts choice and the
fitted attributes, and ``from_states`` (the fitted estimator from a restart recorded sweep by
sweep elsewhere, e.g. for an animation, identical to what ``fit`` would have stored).

This follows scikit-learn's template method (``BaseMixture.fit_predict`` owns the ``n_init``
loop and the best-bound choice; the mixtures implement the steps).

What the algorithms share is written here once, as scikit-learn's base classes do: the
constructor stores its arguments with ``self._init_params(locals())`` (no logic, as
scikit-learn requires); the parameters several algorithms have (``n_init``, ``shuffle``,
``max_iter``, ``tol``, ``random_state``, ``n_jobs``) are checked by one rule each
(:data:`SHARED_PARAMETERS`, scikit-learn's ``_parameter_constraints``) and documented by one
entry each: a line ``%(name)s`` in a class docstring becomes that entry, with the type and
the default of the class's own signature (:data:`SHARED_ATTRIBUTES` does the same for the
fitted attributes the base class sets), as matplotlib's and pandas' shared docstrings do.
"""
from __future__ import annotations

import inspect
import os
import re
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterator

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from .validation import check_bool, check_int, check_n_jobs, check_nonneg, check_order, check_seed, restart_plan
from .state import SweepState


@dataclass(frozen=True)
class Control:
    """How an interface should offer one parameter (no Streamlit: a plain description).

    ``kind`` is ``"float"``, ``"int"``, ``"bool"`` or ``"choice"``; ``low``/``high`` bound a
    number, ``options`` lists the choices, ``log`` asks for a logarithmic scale; ``short`` names
    the setting in a caption ("K = 3").
    """

    label: str
    kind: str = "float"
    default: Any = None
    low: float | None = None
    high: float | None = None
    options: tuple = ()
    log: bool = False
    help: str = ""
    short: str = ""


@dataclass(frozen=True)
class Problem:
    """What ``_validate`` hands to ``_sweeps``: the validated data (a ``ParsedData``, a float
    matrix, ...), its number of rows, and parameters resolved from the data (e.g. an
    automatically chosen N0), so that a restart never validates or resolves again."""

    data: Any
    n_rows: int
    settings: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Shared:
    """One parameter or fitted attribute several algorithms share: its numpydoc type, the
    description every algorithm repeats (``{step}``/``{steps}`` read as the algorithm's
    ``step``, singular or plural; a class may add lines of its own below it), and, for a
    parameter, its rule (called with the value; raises ValueError with the message)."""

    type: str
    doc: str = ""
    check: Callable[[Any], Any] | None = None


def _check_random_state(seed) -> None:
    if not isinstance(seed, (np.random.RandomState, np.random.Generator, np.random.SeedSequence)):
        check_seed(seed, "random_state")  # a RandomState is not touched: checking it would draw from it


#: The parameters several algorithms share: each one's rule, checked on every estimator that
#: has the parameter before anything uses it (scikit-learn's ``_parameter_constraints``), and
#: its docstring entry (``%(name)s``; the default is the class's own).
SHARED_PARAMETERS: dict[str, Shared] = {
    "n_init": Shared("int", check=lambda value: check_int(value, "n_init", 1)),
    "shuffle": Shared("bool", check=lambda value: check_bool(value, "shuffle")),
    "max_iter": Shared("int", "The most {steps} of one restart.", lambda value: check_int(value, "max_iter", 1)),
    "tol": Shared("float", check=lambda value: check_nonneg(value, "tol")),
    "random_state": Shared(
        "int, numpy Generator or None",
        "Seeds what is random in a fit: every restart's visiting order and draws come from a seed spawned from "
        "it (numpy's SeedSequence) before any restart runs, so that an int makes the fit reproducible however "
        "the restarts are scheduled.", _check_random_state),
    "n_jobs": Shared(
        "int or None",
        "Restarts run in parallel threads (the kernels release the GIL): None, one per core; 1, one after the "
        "other. Under ``joblib.parallel_config(backend=\"dask\")`` they run on the user's Dask cluster with the "
        "same result (each restart's order and seed are fixed before any runs).", check_n_jobs),
}

#: The fitted attributes :class:`SweepEstimator` sets for every algorithm (and scikit-learn's
#: ``n_features_in_``, ``feature_names_in_``), as docstring entries (``%(name)s``).
SHARED_ATTRIBUTES: dict[str, Shared] = {
    "labels_": Shared("ndarray of shape (n_samples,)"),
    "n_clusters_": Shared("int", "The number of clusters of ``labels_``."),
    "cluster_sizes_": Shared("ndarray of shape (n_clusters_,)", "Rows in each cluster."),
    "n_iter_": Shared("int", "The number of {steps} the kept restart ran."),
    "objective_history_": Shared("list of float", "The objective after every {step} of the kept restart."),
    "converged_": Shared("bool", "Whether the kept restart converged (rather than running out of {steps})."),
    "restart_values_": Shared("ndarray of shape (n_restarts,)",
                              "Every restart's value of the criterion that chose the kept one (the lowest)."),
    "n_features_in_": Shared("int", "Columns of the X seen by ``fit``."),
    "feature_names_in_": Shared("ndarray of str", "Column names of the X seen by ``fit``; only when it has "
                                "column names (all strings)."),
}

_SHARED_LINE = re.compile(r"^(?P<indent>[ \t]*)%\((?P<name>\w+)\)s[ \t]*$", re.MULTILINE)


def _plural(step: str) -> str:
    head, space, tail = step.partition(" ")  # "block of rows" -> "blocks of rows"
    return head + ("es" if head.endswith("s") else "s") + space + tail


def _default_text(value) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return re.sub(r"e([+-])0+(?=\d)", r"e\1", repr(value)) if isinstance(value, float) else repr(value)  # 1e-6


def fill_shared_docs(cls) -> str | None:
    """``cls.__doc__`` with every line ``%(name)s`` replaced by the numpydoc entry of the shared
    parameter or attribute ``name`` (:data:`SHARED_PARAMETERS`, :data:`SHARED_ATTRIBUTES`),
    indented as the line was; a parameter's default is read from ``cls.__init__``. Raises
    TypeError at the class's definition for a name that is neither, or for a parameter the
    class does not have."""
    doc = cls.__doc__
    if not doc or "%(" not in doc:
        return doc
    parameters = inspect.signature(cls.__init__).parameters
    words = {"step": cls.step, "steps": _plural(cls.step)}

    def entry(match) -> str:
        indent, name = match.group("indent"), match.group("name")
        if name in SHARED_PARAMETERS:
            if name not in parameters:
                raise TypeError(f"{cls.__name__}'s docstring documents {name!r}, which is not a parameter.")
            shared = SHARED_PARAMETERS[name]
            head = f"{name} : {shared.type}, default={_default_text(parameters[name].default)}"
        elif name in SHARED_ATTRIBUTES:
            shared = SHARED_ATTRIBUTES[name]
            head = f"{name} : {shared.type}"
        else:
            raise TypeError(f"{cls.__name__}'s docstring names %({name})s, which is no shared parameter or attribute.")
        lines = [indent + head]
        if shared.doc:
            lines += textwrap.wrap(shared.doc.format(**words), width=92, initial_indent=indent + "    ",
                                   subsequent_indent=indent + "    ", break_on_hyphens=False)
        return "\n".join(lines)

    return _SHARED_LINE.sub(entry, doc)


def warm_up_hook(*settings: dict, data: Callable[[], tuple] | None = None):
    """A ``warm_up`` classmethod for an algorithm: fit ``cls(**s)`` for each ``s`` of
    ``settings`` on a tiny data set and predict two of its rows, which compiles (or loads from
    numba's disk cache) the kernels a fit and a prediction run. ``data`` returns the data set as
    ``(X, likelihood)``, and ``likelihood`` is passed to every fit (e.g.
    :func:`mapdp_core.families.warm_up_example`, a column of every family); None: 12 rows of two
    standard normal columns.

    Written in the class as ``warm_up = warm_up_hook({"n_init": 1, "max_iter": 2})``."""

    def warm_up(cls) -> None:
        if data is None:
            X, given = np.random.default_rng(0).normal(size=(12, 2)), {}
        else:
            X, likelihood = data()
            given = {"likelihood": likelihood}
        for params in settings:
            cls(**given, **params).fit(X).predict(X[:2])

    warm_up.__doc__ = ("Compile (or load from numba's disk cache) this algorithm's kernels by a fit and a "
                       "prediction on a tiny data set.")
    return classmethod(warm_up)


@dataclass(frozen=True)
class RestartSummary:
    """What one restart leaves behind in ``fit``: its representative state and per-step scalars."""

    state: SweepState
    value: float
    objectives: list
    neg_log_joints: list
    n_clusters: list
    n_steps: int


def summarize_restart(states, restart_key: str, keep: str) -> RestartSummary:
    """The representative state of one restart (its last, or its lowest ``restart_key``) and
    its per-step histories; ``states`` may be a generator (consumed once, labels not kept)."""
    best = last = None
    objectives, joints, ks = [], [], []
    for state in states:
        objectives.append(state.objective)
        joints.append(state.neg_log_joint)
        ks.append(state.n_clusters)
        last = state
        if keep == "best" and (best is None or getattr(state, restart_key) < getattr(best, restart_key)):
            best = state
    if last is None:
        raise RuntimeError("internal: a restart yielded no state.")
    chosen = best if keep == "best" else last
    return RestartSummary(chosen, float(getattr(chosen, restart_key)), objectives, joints, ks, len(objectives))


class Stopped(Exception):
    """A restart gave up because its caller was interrupted or failed (see :class:`StopFlag`)."""


class StopFlag:
    """Tells parallel restarts to stop at their next sweep boundary, and lets the caller wait
    until every running one has.

    The kernels release the GIL, so a restart in a worker thread keeps its core busy after
    the caller's Ctrl-C unless it is told to stop; a thread cannot be killed from outside, so
    each restart checks the flag between sweeps (``check``) and counts itself as running
    (``running``) until it returns. Pickled (sent to another process, e.g. a Dask worker) a
    flag arrives fresh and unset: remote work cannot be reached from here and runs to its end.
    """

    def __init__(self):
        self._event = threading.Event()
        self._idle = threading.Condition()
        self._running = 0

    def __reduce__(self):
        return (StopFlag, ())

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Stopped` if the flag is set."""
        if self._event.is_set():
            raise Stopped("stopped at a sweep boundary: the caller was interrupted or failed")

    @contextmanager
    def running(self):
        """Count the enclosed work as running until it returns or raises."""
        with self._idle:
            self._running += 1
        try:
            yield
        finally:
            with self._idle:
                self._running -= 1
                self._idle.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no work counted by ``running`` is left; False if ``timeout`` ran out."""
        with self._idle:
            return self._idle.wait_for(lambda: self._running == 0, timeout)


def until_stopped(states, stop: StopFlag):
    """``states`` (a generator of sweeps) checking ``stop`` before each sweep is computed."""
    states = iter(states)
    while True:
        stop.check()
        try:
            state = next(states)
        except StopIteration:
            return
        yield state


def _local_threads() -> bool:
    """True when joblib would run our items in threads of this process (no backend chosen by
    the user through ``joblib.parallel_config``, or the threading one)."""
    from joblib.parallel import ThreadingBackend, get_active_backend

    return isinstance(get_active_backend(prefer="threads")[0], ThreadingBackend)


#: Restart values this close (relative) to the lowest count as ties, won by the earliest restart.
TIE_TOLERANCE = 1e-9


def best_restart(values) -> int:
    """The restart to keep: the first whose value is the lowest, up to :data:`TIE_TOLERANCE`.

    Restarts that reach the same partition give the same value up to rounding, which a change
    of units (1 kg as 1000 g) perturbs; a plain argmin would then keep another of the tied
    restarts, with the same clusters numbered differently."""
    values = np.asarray(values, dtype=float)
    if not np.any(values == values):  # every value NaN: the first, as argmin would
        return 0
    low = np.nanmin(values)
    tied = np.flatnonzero(values <= low + TIE_TOLERANCE * max(1.0, abs(low)))
    return int(tied[0])


def _result_interruptibly(future):
    """``future.result()``, waking every 50 ms: a result that is ready returns at once, and an
    interrupt raised without a signal (``_thread.interrupt_main()``, what Jupyter's interrupt
    does on Windows) reaches this thread at the next wake-up instead of after the whole wait."""
    while True:
        try:
            return future.result(timeout=0.05)
        except FuturesTimeout:
            continue


def run_many(function, items, n_jobs=None, stop: StopFlag | None = None, on_done=None) -> list:
    """``[function(item) for item in items]``, in parallel threads: ``n_jobs`` of them, or with
    None one per item up to the number of cores (as scikit-learn's KMeans uses every core
    through OpenMP whatever its ``n_jobs``); ``n_jobs=1`` runs them one after the other.

    Threads suffice on one machine because the kernels release the GIL; a user with a Dask
    cluster wraps the call in ``joblib.parallel_config(backend="dask")`` and owns the client
    (each item then runs on a worker, its arguments pickled). Results come back in the order
    of ``items``, whatever the backend. ``on_done(done, total)`` is called in the caller's
    thread after each result arrives, in that order (e.g. a Streamlit progress bar, which
    cannot be updated from a worker thread).

    If the caller is interrupted (Ctrl-C) or a call fails, ``stop`` is set, no further item
    starts, and this returns only when every running call has (a ``function`` that checks
    ``stop`` between sweeps, see :func:`until_stopped`, ends at its next one); then the
    exception propagates. joblib alone would return at once and leave the threads running.
    """
    items = list(items)
    if n_jobs is None:  # every core, one thread per item at most (the kernels release the GIL)
        n_jobs = min(len(items), os.cpu_count() or 1)
    results = []

    def collect(result):
        results.append(result)
        if on_done is not None:
            on_done(len(results), len(items))

    if len(items) <= 1 or n_jobs == 1:
        for item in items:
            collect(function(item))
        return results
    from joblib import Parallel, delayed

    stop = StopFlag() if stop is None else stop

    def guarded(item):
        with stop.running():
            stop.check()  # an item not started before the stop never starts
            return function(item)

    try:
        if _local_threads():
            # joblib's own thread pool would do the same, but its ordered retrieval polls every
            # 10 ms: up to 0.2 s of a 0.6 s fit at 400 000 rows went to those waits (measured).
            n_threads = n_jobs if n_jobs > 0 else max(1, (os.cpu_count() or 1) + 1 + n_jobs)
            pool = ThreadPoolExecutor(min(n_threads, len(items)))
            try:
                futures = [pool.submit(guarded, item) for item in items]
                for future in futures:
                    collect(_result_interruptibly(future))
            finally:
                pool.shutdown(wait=False, cancel_futures=True)  # on failure the wait is below
            return results
        for result in Parallel(n_jobs=n_jobs, prefer="threads", return_as="generator")(
                delayed(guarded)(item) for item in items):
            collect(result)
        return results
    except BaseException:
        stop.set()
        stop.wait_idle()  # a second Ctrl-C here interrupts the wait itself
        raise


class SweepEstimator(ClusterMixin, BaseEstimator):
    """Base class of the library's clustering algorithms (see the module docstring)."""

    name: ClassVar[str] = ""
    input: ClassVar[str] = "mixed"
    restart_key: ClassVar[str] = "objective"
    keep: ClassVar[str] = "last"
    step: ClassVar[str] = "sweep"
    monotone: ClassVar[str | None] = None
    ui: ClassVar[dict] = {}
    precompile: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.__doc__ = fill_shared_docs(cls)

    def _init_params(self, arguments: dict) -> None:
        """Store the constructor's arguments under their own names and nothing else
        (scikit-learn's rule for ``__init__``: no logic, no checks): a subclass's ``__init__``
        is its signature and ``self._init_params(locals())``."""
        for name in self._get_param_names():
            setattr(self, name, arguments[name])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.input == "mixed"  # gaps are marginalised by each column's family
        return tags

    # --------------------------------------------------------------- subclass hooks
    def _validate(self, X) -> Problem:  # pragma: no cover - abstract
        """Check the parameters and ``X`` once; return the problem ``_sweeps`` runs on."""
        raise NotImplementedError

    def _sweeps(self, problem: Problem, order: np.ndarray | None, rng: np.random.Generator) -> Iterator[SweepState]:
        raise NotImplementedError  # pragma: no cover - abstract

    def _store(self, problem, state: SweepState, history: RestartSummary) -> None:
        """Set the attributes particular to the algorithm from the kept state."""

    def _n_restarts(self) -> int:
        """How many restarts ``fit`` runs (``n_init`` where the algorithm has one)."""
        return check_int(getattr(self, "n_init", 1), "n_init", 1)

    def _shuffles(self) -> bool:
        """Whether restarts visit the rows in random orders (``shuffle`` where it exists)."""
        return bool(getattr(self, "shuffle", False))

    # --------------------------------------------------------------- written once
    def _check_shared_params(self) -> None:
        """Check the parameters of :data:`SHARED_PARAMETERS` this algorithm has, by their shared
        rules, before anything uses them: at fit time, as scikit-learn does, so that
        ``set_params`` with a bad value is caught by the same message as the constructor's."""
        for name in self._get_param_names():
            if name in SHARED_PARAMETERS:
                SHARED_PARAMETERS[name].check(getattr(self, name))

    def _plan(self, n_rows: int):
        return restart_plan(self.random_state if hasattr(self, "random_state") else None,
                            self._n_restarts(), n_rows, shuffle=self._shuffles())

    def _plan_for(self, problem: Problem):
        """The restart plan of a validated problem (an algorithm whose ``_validate`` already ran
        some restarts, e.g. MAP-DP's on a subsample of a large table, plans fewer here)."""
        return self._plan(problem.n_rows)

    def _plan_first_as_given(self, n_rows: int):
        """The plan of a one-pass method (SUGS, V-SUGS): ``n_init`` visiting orders, random ones
        with ``shuffle``, else the input order first and random ones after it."""
        shuffle = check_bool(self.shuffle, "shuffle")
        n = check_int(self.n_init, "n_init", 1)
        return restart_plan(self.random_state, n, n_rows, shuffle=shuffle or n > 1, first_in_input_order=not shuffle)

    def _restart_of(self, X, restart: int):
        """(the validated problem, the planned visiting order (None: the rows' order), the seed) of
        restart ``restart`` (0-based) of a fit of ``X``, as ``fit`` plans it."""
        self._check_shared_params()
        problem = self._validate(X)
        plan = self._plan_for(problem)
        restart = check_int(restart, "restart", 0)
        if restart >= len(plan):
            raise ValueError(f"restart must be below the number of restarts ({len(plan)}), got {restart}.")
        planned, seed = plan[restart]
        return problem, planned, seed

    def iter_sweeps(self, X, *, restart: int = 0, order=None) -> Iterator[SweepState]:
        """Validate now and return the generator of restart ``restart`` (0-based), one
        immutable state per step, exactly as ``fit`` runs that restart. ``order`` (a
        permutation of the rows) replaces the restart's visiting order."""
        problem, planned, seed = self._restart_of(X, restart)
        order = planned if order is None else check_order(order, problem.n_rows)
        return self._sweeps(problem, order, np.random.default_rng(seed))

    def fit(self, X, y=None):
        """Run every restart (in parallel threads with ``n_jobs``) and keep the one with the
        lowest ``restart_key``; ``y`` is ignored."""
        self._check_shared_params()
        problem = self._validate(X)
        plan = self._plan_for(problem)
        stop = StopFlag()

        def one(task):
            order, seed = task
            states = self._sweeps(problem, order, np.random.default_rng(seed))
            return summarize_restart(until_stopped(states, stop), self.restart_key, self.keep)

        runs = run_many(one, plan, getattr(self, "n_jobs", None), stop)
        values = np.array([r.value for r in runs])
        return self._set_fitted(problem, runs[best_restart(values)], values)

    def from_states(self, X, states, restart_values=None):
        """Fit from a restart recorded elsewhere (e.g. the states of ``iter_sweeps`` kept for an
        animation): the attributes are those ``fit`` would store had that restart won.

        ``restart_values`` gives every restart's ``restart_key`` value (default: this one only).
        """
        self._check_shared_params()
        problem = self._validate(X)
        summary = summarize_restart(iter(states), self.restart_key, self.keep)
        unplaced = int(np.sum(np.asarray(summary.state.labels) < 0))
        if unplaced:
            raise ValueError(f"these states leave {unplaced} of {len(summary.state.labels)} rows without a cluster (a "
                             "run stopped before it reached them); fit a model from a run that reached every row.")
        values = np.asarray([summary.value] if restart_values is None else restart_values, dtype=float)
        return self._set_fitted(problem, summary, values)

    def _set_fitted(self, problem, summary: RestartSummary, restart_values: np.ndarray):
        state = summary.state
        self.labels_ = np.array(state.labels)
        self.n_clusters_ = int(state.n_clusters)
        self.cluster_sizes_ = np.array(state.cluster_sizes)
        self.n_iter_ = summary.n_steps if self.keep == "best" else int(state.iteration)
        self.objective_history_ = summary.objectives
        self.converged_ = bool(state.converged)
        self.restart_values_ = np.asarray(restart_values, dtype=float)
        self._store(problem, state, summary)
        return self

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_

    @classmethod
    def accepts(cls, provided) -> bool:
        """Whether data providing the inputs ``provided`` (e.g. ``{"mixed", "numeric"}``)
        can be given to this algorithm."""
        return cls.input in provided
