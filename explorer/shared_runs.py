"""Work shared across a server's sessions, never data: results computed on *public* data sets
(the built-in tables, the PLOS scenarios, the simulated data, each made from its name and
settings alone) are kept once per server process and handed to every session that asks for the
same (data set, kind, settings), so a class of thirty opening the default demo costs one run,
not thirty.

An uploaded table is never public: its results stay in its session (``ui.common``'s per-session
cache) and never enter :data:`SERVER`. A data set is public only when its key (a digest of its
features and likelihood, :attr:`explorer.sources.AppData.key`) was registered by one of the
public sources (:func:`mark_public`): an upload with exactly the contents of a public data set
shares its results, which are then the public data set's results and tell nothing about it.

:class:`SharedResults` is a bounded LRU store with single flight: while one session computes a
key, the others asking for it wait for that value instead of computing it again; if the
computation fails or is interrupted (a Stop, a closed tab), the next waiter computes it itself.
Values are shared as they are (no copy): callers must treat them as read-only.
Without Streamlit, so it can be tested and used from a notebook.
"""
from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextlib import contextmanager

__all__ = ["SharedResults", "SERVER", "FIGURES", "MAX_FIGURES", "ESTIMATES", "MAX_ESTIMATES", "mark_public", "is_public", "recipe_of", "MAX_ENTRIES", "RunSlots", "RUN_SLOTS"]

#: How many results a server keeps (least recently used dropped first). A run of the default demo
#: (4 000 rows, 3 restarts) holds a few MB of labels; 96 of them stay well under a GB.
MAX_ENTRIES = 96

_MISSING = object()


class SharedResults:
    """A thread-safe LRU store of computed values with single flight (see the module's docstring)."""

    def __init__(self, max_entries: int = MAX_ENTRIES):
        self.max_entries = int(max_entries)
        self._lock = threading.Lock()
        self._values: OrderedDict = OrderedDict()
        self._pending: dict = {}
        self.computed = 0  # how many values were computed here (for tests and the benchmark)
        self.reused = 0    # how many requests were answered from the store or by waiting

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._values

    def __len__(self) -> int:
        with self._lock:
            return len(self._values)

    def keys(self) -> list:
        with self._lock:
            return list(self._values)

    def get(self, key: Hashable, default=None):
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
            return default

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self.computed = self.reused = 0

    def get_or_compute(self, key: Hashable, compute: Callable, keep: Callable = lambda value: True,
                       wait: Callable | None = None):
        """The value under ``key``: stored, or waited for while another thread computes it, or
        computed here by ``compute()`` and stored when ``keep(value)`` (e.g. not a run a time
        limit cut short). ``wait(event)`` is called while another thread computes the key (a page
        shows a line and waits on the event); without it the thread blocks on the event."""
        while True:
            with self._lock:
                if key in self._values:
                    self._values.move_to_end(key)
                    self.reused += 1
                    return self._values[key]
                event = self._pending.get(key)
                owner = event is None
                if owner:
                    event = self._pending[key] = threading.Event()
            if not owner:
                (wait or (lambda e: e.wait()))(event)
                continue  # stored: returned above; failed, interrupted or not kept: computed here next
            try:
                value = compute()
            except BaseException:
                with self._lock:
                    self._pending.pop(key, None)
                event.set()
                raise
            with self._lock:
                self.computed += 1
                if keep(value):
                    self._values[key] = value
                    self._values.move_to_end(key)
                    while len(self._values) > self.max_entries:
                        self._values.popitem(last=False)
                self._pending.pop(key, None)
            event.set()
            return value


#: The server's store: one per process, so one per Streamlit server.
SERVER = SharedResults()

#: How many built figures (and animation frames) a server keeps: the default demo's animation figure
#: (3 panels of 4 000 points) holds about 0.2 MB, so 256 of them stay around 50 MB.
MAX_FIGURES = 256

#: The server's built figures on public data (issue 43: a class opening the same demo builds its
#: Plotly figures once, not once per student; a figure is the same object in every session, never
#: changed once built: ``st.plotly_chart`` copies it). Apart from :data:`SERVER`, so that the frames
#: of an animation played by many students never push the runs out.
FIGURES = SharedResults(MAX_FIGURES)

#: How many run-time estimates a server keeps (a small table each).
MAX_ESTIMATES = 256

#: The server's estimates of how long a run on public data takes (its first steps timed on this
#: server, ``ui.common.run_estimate``): the same for every session, so a class opening the same demo
#: times each algorithm once, not once per student (issue 43: thirty sessions' own probes were most
#: of the class's CPU, 38.7 s of probing against 4.4 s of runs in one N0 step of thirty). Apart from
#: :data:`SERVER`, so that estimates never push runs out.
ESTIMATES = SharedResults(MAX_ESTIMATES)

_PUBLIC: dict = {}  # a public data set's key -> its recipe ("scenario:5.6", "builtin:hepatitis", ...) or None
_PUBLIC_LOCK = threading.Lock()


def mark_public(key: str, recipe: str | None = None) -> None:
    """Register a data set's key as public (made by a built-in source from its name and settings
    alone), with the recipe that makes it again (a link carries it: :func:`recipe_of`)."""
    with _PUBLIC_LOCK:
        _PUBLIC[str(key)] = recipe if recipe is not None else _PUBLIC.get(str(key))


def is_public(key: str) -> bool:
    """Whether results on the data set with this key may be shared between sessions."""
    with _PUBLIC_LOCK:
        return str(key) in _PUBLIC


def recipe_of(key: str) -> str | None:
    """The recipe of a public data set (None: not public, or made without one)."""
    with _PUBLIC_LOCK:
        return _PUBLIC.get(str(key))


class RunSlots:
    """A bounded pool of places for runs on this server, first come first served (issue 43, item 2):
    at most ``slots`` runs compute at once (each in its own session's thread; the kernels release
    the GIL), the others wait in order, told how many runs are ahead and about how long the wait is
    (from the runs' own estimates). One session runs one script at a time (Streamlit interrupts
    that thread for a rerun or Stop, never starts a second beside it), and a page takes a place for
    each run separately, so a session holds at most one ticket: a heavy run takes one place, never
    the whole server, and a session's next run joins the line behind every run already waiting, so
    first come first served across tickets is round robin across sessions, run by run
    (``tests/app/test_run_slots_fair.py``). A run holds its place until it ends, its time limit
    passes or Stop (or a closed tab) interrupts it at its next step; a wait interrupted so gives
    its ticket up at once."""

    def __init__(self, slots: int):
        self.slots = max(1, int(slots))
        self._cond = threading.Condition()
        self._queue: list = []      # tickets waiting, in order
        self._expected: dict = {}   # ticket -> its run's expected seconds, while it waits
        self._running: dict = {}    # ticket -> (started, expected seconds)
        self._held = threading.local()  # depth of the places this thread holds (0 or more)

    def busy(self) -> int:
        with self._cond:
            return len(self._running)

    def waiting(self) -> int:
        with self._cond:
            return len(self._queue)

    def _wait_estimate(self, ticket) -> float:
        """Seconds until ``ticket`` may start, about: the work left of the runs holding places and of
        those ahead in the queue, shared among the places (unknown estimates count as 0)."""
        now = time.perf_counter()
        left = sum(max(expected - (now - started), 0.0) for started, expected in self._running.values())
        ahead = self._queue[:self._queue.index(ticket)]
        left += sum(self._expected.get(t, 0.0) for t in ahead)
        return left / self.slots

    @contextmanager
    def place(self, expected: float | None = None, wait: Callable | None = None, every: float = 0.5):
        """Hold a place while the block runs. While none is free, ``wait(ahead, seconds)`` is called
        about every ``every`` seconds (a page says the server is busy; a Streamlit call there lets a
        click or a closed tab interrupt the wait, which gives the place in the queue up). A thread
        that holds a place already (a page's heavy computation that runs an algorithm inside it)
        takes no second one: it would wait for itself where there is one place."""
        if getattr(self._held, "depth", 0):
            self._held.depth += 1
            try:
                yield
            finally:
                self._held.depth -= 1
            return
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
            self._expected[ticket] = float(expected or 0.0)
        try:
            while True:
                with self._cond:
                    if len(self._running) < self.slots and self._queue[0] is ticket:
                        self._queue.pop(0)
                        self._running[ticket] = (time.perf_counter(), self._expected.pop(ticket))
                        break
                    ahead, seconds = self._queue.index(ticket), self._wait_estimate(ticket)
                if wait is not None:
                    wait(ahead, seconds)
                with self._cond:
                    self._cond.wait(every)
        except BaseException:
            with self._cond:
                if ticket in self._queue:
                    self._queue.remove(ticket)
                self._expected.pop(ticket, None)
                self._cond.notify_all()
            raise
        self._held.depth = 1
        try:
            yield
        finally:
            self._held.depth = 0
            with self._cond:
                self._running.pop(ticket, None)
                self._cond.notify_all()


def _slots_from_environment() -> int:
    try:
        return max(1, int(os.environ.get("MAPDP_RUN_SLOTS", "") or (os.cpu_count() or 2)))
    except ValueError:
        return max(1, os.cpu_count() or 2)


#: The server's places for runs: ``MAPDP_RUN_SLOTS`` (``scripts/serve.py`` sets it from the config's
#: ``[server] run_slots``), else one per core.
RUN_SLOTS = RunSlots(_slots_from_environment())
