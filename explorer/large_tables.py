"""Tables too large for a browser session: fitted out of core on a Dask cluster, explored through samples.

What a visitor may reach is the server operator's choice, written in the app's config file
(``MAPDP_APP_CONFIG``, else ``mapdp_app.toml`` in the repository root; see
``mapdp_app.example.toml``), section ``[large_tables]``:

- ``folders``: absolute directories whose ``.parquet`` and ``.csv`` files (and parquet
  directories) are offered;
- ``scheduler``: ``"local"`` (a LocalCluster of worker processes started on this server) or
  ``"tcp://host:port"`` of a running Dask scheduler;
- ``workers``: the LocalCluster's worker processes (default 2);
- ``sample_rows``: the rows brought into the session to explore (default 5000).

A visitor only picks among :func:`list_tables`' names: never a typed path or address, so
the page cannot be made to read another file of the server or reach another host. A
missing file or section turns the feature off; a bad one raises :class:`ConfigProblem`, a
sentence for the operator naming the key and what to write.

Nothing of a table is written to disk here: the rows stay in the Dask workers' memory (or
are read part by part from the operator's files), the fit's labels on the workers, and the
sample in the caller's memory. No Streamlit here (the app's Data page draws it).
"""
from __future__ import annotations

import itertools
import os
import threading
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

__all__ = ["CONFIG_ENV", "ConfigProblem", "LargeTableError", "WorkerLost", "MAX_FIT_TRIES", "LargeTablesConfig", "Table",
           "FitJob", "LABEL_COLUMN",
           "ROW_COLUMN", "config_path", "load_config", "list_tables", "open_table", "describe_table", "client_for",
           "fit_large", "sample_of", "suggested_features", "start_fit", "progress_text", "close_clients", "part_lengths"]

#: The environment variable that names the app's config file.
CONFIG_ENV = "MAPDP_APP_CONFIG"
#: The config file's default place: the repository root.
DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "mapdp_app.toml"
SECTION = "large_tables"
#: How deep below an allowed folder tables are looked for, and how many are listed at most.
MAX_DEPTH = 4
MAX_TABLES = 500
#: Folder entries looked at per listing, at most (a folder of millions of files is not walked).
MAX_ENTRIES = 20_000
#: A CSV's part size: each part is read by one worker.
CSV_BLOCKSIZE = "64MB"
#: The columns a sample gets besides the table's: the out-of-core fit's cluster, the row's place in the table.
LABEL_COLUMN = "out_of_core_cluster"
ROW_COLUMN = "row_in_table"
#: Fits that may run at once on this server (each holds a sample and a thread here).
MAX_RUNNING_FITS = 2
_KEYS = {"folders", "scheduler", "workers", "sample_rows"}


class ConfigProblem(ValueError):
    """The operator's config file is wrong: the message names the key and what to write."""


class LargeTableError(ValueError):
    """A table or the cluster cannot be used; the message says why in a sentence."""


class WorkerLost(LargeTableError):
    """The cluster lost a worker during a fit, every try (:data:`MAX_FIT_TRIES`): said in a sentence."""


@dataclass(frozen=True)
class LargeTablesConfig:
    """The operator's ``[large_tables]`` section, checked."""

    folders: tuple
    scheduler: str = "local"
    workers: int = 2
    sample_rows: int = 5000
    source: str = ""


class Table(NamedTuple):
    """One table a visitor may pick: its name on screen (relative to its folder) and its path."""

    name: str
    path: Path


_TOLD: set = set()
_TOLD_LOCK = threading.Lock()


def tell_operator(problem: str) -> None:
    """Write a config problem once to the server's console (stderr), where the operator reads it:
    the page tells visitors only that the source is off, not the server's paths and folders."""
    import sys

    with _TOLD_LOCK:
        if problem in _TOLD:
            return
        _TOLD.add(problem)
    sys.stderr.write(f"MAP-DP Explorer, large tables are off: {problem}\n")


def config_path() -> Path:
    """Where the config file is read from: ``$MAPDP_APP_CONFIG``, else the repository root's ``mapdp_app.toml``."""
    named = os.environ.get(CONFIG_ENV, "").strip()
    return Path(named) if named else DEFAULT_CONFIG


def _problem(path, key: str, what: str) -> ConfigProblem:
    return ConfigProblem(f"The app's config file ({path}), section [{SECTION}], key '{key}': {what}")


def _whole(value, key: str, path, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise _problem(path, key, f"write a whole number of at least {least} (e.g. {key} = {max(least, 2)}), "
                                  f"not {value!r}.")
    return int(value)


def load_config(path=None) -> LargeTablesConfig | None:
    """The operator's ``[large_tables]`` settings; None (the feature is off) when the file or the
    section is missing. Raises :class:`ConfigProblem` with a sentence for the operator otherwise."""
    path = Path(path) if path is not None else config_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigProblem(f"The app's config file ({path}) cannot be read: {exc.strerror or exc}.") from None
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigProblem(f"The app's config file ({path}) is not valid TOML: {exc}. See mapdp_app.example.toml "
                            "for a file that works.") from None
    if SECTION not in doc:
        return None
    section = doc[SECTION]
    if not isinstance(section, dict):
        raise ConfigProblem(f"The app's config file ({path}): '{SECTION}' must be a section ([{SECTION}] on a line "
                            "of its own, then its keys), not a value.")
    unknown = sorted(set(section) - _KEYS)
    if unknown:
        raise _problem(path, unknown[0], f"unknown key; the keys are {', '.join(sorted(_KEYS))}.")
    folders = section.get("folders")
    if folders is None:
        raise _problem(path, "folders", 'missing: write the absolute folders whose tables visitors may open, e.g. '
                                        'folders = ["/srv/data/tables"].')
    if isinstance(folders, str):
        folders = [folders]
    if not isinstance(folders, list) or not folders or not all(isinstance(f, str) and f.strip() for f in folders):
        raise _problem(path, "folders", 'write a list of absolute folders, e.g. folders = ["/srv/data/tables"], '
                                        f"not {folders!r}.")
    checked = []
    for f in folders:
        p = Path(f)
        if not p.is_absolute():
            raise _problem(path, "folders", f"'{f}' is not an absolute path; write it from the root, e.g. "
                                            '"/srv/data/tables".')
        if not p.is_dir():
            raise _problem(path, "folders", f"'{f}' is not a folder on this server.")
        checked.append(p.resolve())
    scheduler = section.get("scheduler", "local")
    if not isinstance(scheduler, str) or not _scheduler_ok(scheduler):
        raise _problem(path, "scheduler", 'write "local" (a cluster started on this server) or the address of a '
                                          f'running Dask scheduler, e.g. "tcp://10.0.0.5:8786", not {scheduler!r}.')
    workers = _whole(section.get("workers", 2), "workers", path, 1)
    sample_rows = _whole(section.get("sample_rows", 5000), "sample_rows", path, 10)
    return LargeTablesConfig(folders=tuple(checked), scheduler=scheduler.strip(), workers=workers,
                             sample_rows=sample_rows, source=str(path))


def _scheduler_ok(text: str) -> bool:
    text = text.strip()
    if text == "local":
        return True
    for scheme in ("tcp://", "tls://"):
        if text.startswith(scheme):
            host, _, port = text[len(scheme):].rpartition(":")
            return bool(host) and port.isdigit() and 0 < int(port) < 65536 and "/" not in host
    return False


# ----------------------------------------------------------------------------- the tables offered

def _hidden(name: str) -> bool:
    return name.startswith(".")


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a broken or looping link
        return False


def _parquet_dir(path: Path, root: Path) -> bool | None:
    """A folder as a parquet dataset (a folder whose name ends in .parquet, as Dask and Spark write
    one): None when it is not one; True when every file in it lies inside ``root`` after resolving
    links; False (refused) when one leads out, or it holds too many entries to check."""
    if path.suffix.lower() != ".parquet":
        return None
    try:
        checked = 0
        for sub, dirs, files in os.walk(path, followlinks=True):
            dirs[:] = [d for d in dirs if not _hidden(d)]
            for name in dirs + files:
                checked += 1
                if checked > MAX_ENTRIES or not _inside(Path(sub) / name, root):
                    return False
    except OSError:
        return False
    return True


def list_tables(config: LargeTablesConfig | None) -> list[Table]:
    """The .parquet and .csv files (and parquet datasets: folders named ``*.parquet``) under the
    allowed folders, in name order.

    Only what lies inside an allowed folder after resolving symbolic links, no hidden files or
    folders (names starting with "."), at most :data:`MAX_DEPTH` folders deep and :data:`MAX_TABLES`
    tables. With several folders a name starts with its folder's name."""
    if config is None:
        return []
    found: list[Table] = []
    seen_names: set = set()
    budget = [MAX_ENTRIES]
    for root in config.folders:
        root = Path(root).resolve()
        prefix = root.name + "/" if len(config.folders) > 1 else ""
        visited: set = set()

        def walk(folder: Path, depth: int):
            real = folder.resolve()
            if real in visited or not real.is_relative_to(root):
                return
            visited.add(real)
            try:
                with os.scandir(folder) as listing:  # at most the entries left to look at, even in a huge folder
                    entries = sorted(itertools.islice(listing, max(budget[0], 0)), key=lambda e: e.name)
            except OSError:
                return
            for entry in entries:
                if len(found) >= MAX_TABLES or budget[0] <= 0:
                    return
                budget[0] -= 1
                if _hidden(entry.name):
                    continue
                path = Path(entry.path)
                if not _inside(path, root):
                    continue  # a link that leads out of the allowed folder
                try:
                    is_dir, is_file = path.is_dir(), path.is_file()
                except OSError:
                    continue
                if is_dir:
                    kind = _parquet_dir(path, root)
                    if kind is True:
                        _add(path)
                    elif kind is None and depth < MAX_DEPTH:
                        walk(path, depth + 1)
                elif is_file and path.suffix.lower() in (".parquet", ".csv"):
                    _add(path)

        def _add(path: Path):
            name = prefix + path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
            base, n = name, 2
            while name in seen_names:
                name, n = f"{base} ({n})", n + 1
            seen_names.add(name)
            found.append(Table(name, path))

        walk(root, 0)
    return sorted(found, key=lambda t: t.name.lower())


def _chosen(config, choice) -> Table:
    for table in list_tables(config):
        if table.name == choice:
            return table
    raise LargeTableError(f"'{str(choice)[:200]}' is not one of the tables this server offers; pick one from the list.")


def open_table(config: LargeTablesConfig | None, choice: str, blocksize=None):
    """The table ``choice`` (a name from :func:`list_tables`, checked again here) as a Dask
    DataFrame, read lazily part by part (CSV: parts of ``blocksize`` bytes, default :data:`CSV_BLOCKSIZE`)."""
    import dask.dataframe as dd

    table = _chosen(config, choice)
    try:
        if table.path.is_dir() or table.path.suffix.lower() == ".parquet":
            return dd.read_parquet(str(table.path))
        return dd.read_csv(str(table.path), blocksize=blocksize or CSV_BLOCKSIZE, assume_missing=True, sample_rows=1000)
    except (OSError, ValueError) as exc:
        raise LargeTableError(f"'{table.name}' could not be read as a table: {exc}") from None


# ----------------------------------------------------------------------------- the cluster

_CLIENTS: dict = {}
_CLIENT_LOCK = threading.Lock()


def client_for(config: LargeTablesConfig):
    """The server process's one dask.distributed Client for ``config``'s scheduler, started on first
    use and kept (a LocalCluster of ``workers`` processes for "local"). Raises
    :class:`LargeTableError` when the cluster cannot be reached or started."""
    import dask
    from distributed import Client, LocalCluster

    key = (config.scheduler, config.workers if config.scheduler == "local" else None)
    with _CLIENT_LOCK:
        client = _CLIENTS.get(key)
        if client is not None and client.status == "running":
            return client
        try:
            if config.scheduler == "local":
                # no spilling: the workers hold the rows in memory and never write them to disk
                with dask.config.set({"distributed.worker.memory.target": False,
                                      "distributed.worker.memory.spill": False}):  # the nannies pass it on
                    cluster = LocalCluster(n_workers=config.workers, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=40)
                client = Client(cluster)
            else:
                client = Client(config.scheduler, timeout=10)
        except (OSError, TimeoutError, RuntimeError) as exc:
            where = ("a local cluster could not be started on this server" if config.scheduler == "local"
                     else f"the Dask scheduler at {config.scheduler} could not be reached")
            raise LargeTableError(f"The large tables cannot be fitted now: {where} ({type(exc).__name__}: {exc}). "
                                  "Ask the server's operator to check the scheduler in the app's config file.") from None
        _CLIENTS[key] = client
        return client


def _compute(config, *things):
    client = client_for(config)
    with client.as_current():
        return client.gather(client.compute(list(things)))


def part_lengths(config, ddf) -> list[int]:
    """Each part's rows, counted on the cluster."""
    import dask

    from mapdp_core.models.partitioned_fit import part_length

    return [int(n) for n in _compute(config, *[dask.delayed(part_length)(p) for p in ddf.to_delayed()])]


_DESCRIBED: dict = {}


def describe_table(config, choice: str) -> dict:
    """``{"rows", "columns", "parts", "names"}`` of a table (rows counted on the cluster, once per
    file version)."""
    table = _chosen(config, choice)
    ddf = open_table(config, choice)
    st = table.path.stat()
    key = (str(table.path), st.st_mtime_ns, st.st_size)
    if key not in _DESCRIBED:
        _DESCRIBED[key] = sum(part_lengths(config, ddf))
    return {"rows": _DESCRIBED[key], "columns": len(ddf.columns), "parts": ddf.npartitions,
            "names": [str(c) for c in ddf.columns]}


def suggested_features(ddf, rows: int = 2000) -> list:
    """The columns suggested as features from the table's first rows (labels, identifiers and
    constant columns left out), as the Data page suggests for an uploaded table."""
    from mapdp_core.data.loading import suggest_roles_and_families

    head = ddf.head(rows, npartitions=-1 if ddf.npartitions <= 4 else 4, compute=True)
    suggested = suggest_roles_and_families(head)
    features = [c for c, r in zip(suggested["column"], suggested["role"]) if r == "feature"]
    return features or list(ddf.columns)


# ----------------------------------------------------------------------------- the fit

def fit_large(config, choice: str, progress=None, stop=None, columns=None, **mapdp_params):
    """``MAPDP(random_state=0, **mapdp_params)`` fitted out of core to the table ``choice`` (its
    ``columns``, or all) on the config's cluster (:func:`mapdp_core.models.partitioned_fit.fit_partitioned`:
    ``progress`` gets each step, ``stop.is_set()`` ends the fit after the round in progress).
    Returns the fitted model; its ``labels_`` are a Dask array on the workers."""
    from mapdp_core import MAPDP
    from mapdp_core.models.mapdp import RESTART_ROWS
    from mapdp_core.models.partitioned_fit import fit_partitioned

    ddf = open_table(config, choice)
    if columns is not None:
        columns = list(columns)
        missing = [c for c in columns if c not in ddf.columns]
        if missing or not columns:
            raise LargeTableError(f"choose columns of '{choice}' to cluster; {missing[:5] or 'none'} are not its columns.")
        ddf = ddf[columns]
    model = MAPDP(random_state=0, **mapdp_params)
    client = client_for(config)
    with client.as_current():
        return fit_partitioned(model, ddf, RESTART_ROWS, progress=progress, stop=stop)


def sample_of(ddf, model, n: int, seed: int = 0, config=None) -> pd.DataFrame:
    """``n`` rows drawn uniformly from the whole table (all of them when it has fewer), in table
    order, with the out-of-core fit's cluster of each (column :data:`LABEL_COLUMN`) and its place in
    the table (column :data:`ROW_COLUMN`, counted from 0). ``model`` was fitted to ``ddf`` (or to some
    of its columns); ``config`` names the cluster (None: the current client)."""
    import dask

    from mapdp_core.models.partitioned_fit import part_length, positions_by_part, rows_at

    parts = ddf.to_delayed()
    lengths = part_lengths(config, ddf) if config is not None else [int(n) for n in dask.compute(
        *[dask.delayed(part_length)(p) for p in parts])]
    N = int(sum(lengths))
    n = min(int(n), N)
    rows = np.sort(np.random.default_rng(seed).choice(N, n, replace=False)) if n < N else np.arange(N)
    pieces = [dask.delayed(rows_at)(p, at) for p, at in zip(parts, positions_by_part(rows, lengths)) if len(at)]
    labels = model.labels_
    if len(labels) != N:
        raise LargeTableError(f"the fit labelled {len(labels):,} rows but the table now has {N:,}: it changed since "
                              "the fit; fit it again.")
    if config is not None:
        got = _compute(config, labels[rows], *pieces)
    else:
        got = dask.compute(labels[rows], *pieces)
    fitted, frames = np.asarray(got[0]), got[1:]
    sample = pd.concat(frames, ignore_index=True) if frames else ddf._meta.copy()
    label, row = _free(LABEL_COLUMN, sample.columns), _free(ROW_COLUMN, sample.columns)
    sample[label] = fitted.astype(np.int64)
    sample[row] = rows.astype(np.int64)
    return sample


def _free(name: str, columns) -> str:
    while name in columns:
        name = "_" + name
    return name


def progress_text(step: dict | None) -> str:
    """A step of :func:`fit_large`'s progress in words."""
    if not step:
        return "Starting: connecting to the cluster and counting the rows of every part..."
    phase = step.get("phase")
    if phase == "sample":
        return "Phase 1 of 3: fitting a uniform sample of the rows here (the automatic choices and restarts)..."
    if phase == "extension":
        return "Phase 2 of 3: every part's rows join the sample's clusters, on the workers..."
    if phase == "retry":
        return (f"A worker of the cluster stopped during the fit, and the rows it held were lost: starting the fit "
                f"again from the table (try {step['attempt']} of {step['tries']})...")
    if phase == "sweep":
        return (f"Phase 3 of 3: sweep {step['sweep']}, round {step['round']}: parts committed {step['committed']}/"
                f"{step['parts']}, rows moved so far in this sweep {step['moved']:,}.")
    return str(phase)


_RUNNING = threading.BoundedSemaphore(MAX_RUNNING_FITS)
#: Tries of a fit whose cluster lost a worker (a process killed, e.g. out of memory): the fit starts
#: again from the table, whose parts are read again from the operator's files.
MAX_FIT_TRIES = 3
#: Seconds a new try waits for the cluster's workers to be back (a LocalCluster's nanny restarts them).
WORKERS_BACK_WITHIN = 60.0


def _worker_lost(exc: BaseException) -> bool:
    """Whether ``exc`` says the cluster lost a worker, or the results it held, during a computation
    (the partitioned sweeps keep only each part's newest version, so a lost part cannot be computed
    again from its history: the fit's futures come back cancelled), rather than a problem of the
    table or the settings."""
    from concurrent.futures import CancelledError

    try:
        from distributed import KilledWorker
        from distributed.comm.core import CommClosedError
    except ImportError:  # pragma: no cover - distributed is a requirement
        return isinstance(exc, CancelledError)
    return isinstance(exc, (CancelledError, KilledWorker, CommClosedError))


def _workers_back(config) -> None:
    """Wait until the cluster has its workers again (all of a LocalCluster's, at least one of a
    scheduler's), or say that it has not in a sentence."""
    client = client_for(config)
    want = config.workers if config.scheduler == "local" else 1
    try:
        client.wait_for_workers(want, timeout=WORKERS_BACK_WITHIN)
    except (TimeoutError, OSError) as exc:
        raise WorkerLost(_lost_sentence(f" and its workers were not back within {WORKERS_BACK_WITHIN:.0f} s")) from exc


def _lost_sentence(more: str = "") -> str:
    return ("A worker of the cluster stopped during the fit (a worker process that ends, often for lack of memory, "
            f"loses the rows it held){more}: nothing is fitted, and no labels are shown. Fit again; if it happens "
            "again, ask the server's operator to check the Dask workers (their memory, their logs).")


@dataclass(eq=False)
class FitJob:
    """An out-of-core fit running in a background thread (see :func:`start_fit`): the page polls
    :attr:`step` and :attr:`done`, and :meth:`request_stop` ends it after the round in progress."""

    choice: str
    columns: list | None
    step: dict | None = None
    rounds: list = field(default_factory=list)
    model: object = None
    error: str | None = None
    stopped_early: bool = False
    retries: int = 0  # fits started again after the cluster lost a worker
    started: float = field(default_factory=time.time)
    finished: float | None = None
    stop_event: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    @property
    def done(self) -> bool:
        return self.finished is not None

    @property
    def stopping(self) -> bool:
        return self.stop_event.is_set()

    def request_stop(self) -> None:
        self.stop_event.set()

    def _progress(self, step: dict) -> None:
        self.step = dict(step)
        if step.get("phase") == "sweep":
            self.rounds.append(dict(step))
            del self.rounds[:-1000]

    def wait(self, timeout=None) -> bool:
        if self.thread is not None:
            self.thread.join(timeout)
        return self.done


def start_fit(config, choice: str, columns=None, **mapdp_params) -> FitJob:
    """:func:`fit_large` in a background thread; returns at once. At most :data:`MAX_RUNNING_FITS`
    run at once on this server: beyond that, :class:`LargeTableError` says to wait."""
    _chosen(config, choice)  # a name not offered is refused here, before any thread
    if not _RUNNING.acquire(blocking=False):
        raise LargeTableError(f"{MAX_RUNNING_FITS} out-of-core fits are running on this server already; "
                              "try again when one has finished.")
    job = FitJob(choice=choice, columns=None if columns is None else list(columns))

    def work():
        from mapdp_core.models.partitioned_fit import FitStopped

        try:
            for attempt in range(1, MAX_FIT_TRIES + 1):
                try:
                    job.model = fit_large(config, choice, job._progress, job.stop_event, columns=job.columns,
                                          **mapdp_params)
                    break
                except Exception as exc:  # noqa: BLE001 - only the loss of a worker is tried again
                    if not _worker_lost(exc) or job.stop_event.is_set():
                        raise
                    if attempt == MAX_FIT_TRIES:
                        raise WorkerLost(_lost_sentence(f", {MAX_FIT_TRIES} times")) from None
                # nothing of the lost try is kept: its rounds are forgotten, the next starts from the table
                job.retries += 1
                job.rounds.clear()
                job._progress({"phase": "retry", "attempt": attempt + 1, "tries": MAX_FIT_TRIES})
                _workers_back(config)
        except WorkerLost as exc:
            job.error = str(exc)
        except FitStopped as exc:
            job.stopped_early, job.error = True, f"Stopped: {exc}"
        except (ValueError, TypeError, OSError, RuntimeError, MemoryError) as exc:
            job.error = f"The fit failed: {exc}"
        except Exception as exc:  # noqa: BLE001 - a worker's error comes back as its own type; say it in words
            job.error = f"The fit failed ({type(exc).__name__}): {exc}"
        finally:
            job.finished = time.time()
            _RUNNING.release()

    job.thread = threading.Thread(target=work, name=f"mapdp-large-fit-{choice[:40]}", daemon=True)
    job.thread.start()
    return job


def close_clients() -> None:
    """Close the clients :func:`client_for` started (and their local clusters): at shutdown, or in tests."""
    with _CLIENT_LOCK:
        for client in _CLIENTS.values():
            cluster = getattr(client, "cluster", None)
            try:
                client.close()
                if cluster is not None:
                    cluster.close()
            except (OSError, RuntimeError, TimeoutError):
                pass
        _CLIENTS.clear()
