"""``MAPDP().fit`` on a Dask array or DataFrame: the exact fit on a ``dask.distributed`` cluster.

The design of ``benchmarks/DISTRIBUTED.md``, in three phases:

1. **The sample, on this process.** ``restart_rows`` rows (default
   :data:`~mapdp_core.models.mapdp.RESTART_ROWS`) drawn uniformly from the whole table, the only
   rows that come here. ``MAPDP`` with the same settings is fitted to them as to any table: the
   automatic choices (likelihood per column, prior, N0: all read from the sample, which at
   50 000 rows pins a column's mean and spread to about 0.5 % of its sd) and the ``n_init``
   restarts, the best kept by the exact joint. The encoding of text columns (categories and
   their codes) is the sample's.
2. **The extension, one pass on the workers.** Every part is encoded as the sample was and its
   rows join the sample partition's clusters by the MAP-DP rule without moving them (PLOS
   Appendix E, :func:`~mapdp_core.engine.model_data.extension_labels`); the sample's own rows
   keep their labels. A category that a part holds and the sample did not stops the fit with a
   message naming it: its rows could not be scored as the model's, and silently treating the
   cell as missing would cluster them on the other columns only (give ``restart_rows`` more
   rows, or group rare categories first).
3. **The sweeps, in rounds on the workers** (:mod:`mapdp_core.engine.partitioned`): labels
   equal to the serial MAP-DP run over the rows in one global visiting order (part by part,
   each part's rows in its own seeded order), started from the extension.

What stays where: rows and labels in the parts (futures on the workers); this process holds the
sample, the cluster statistics and per-part totals. ``labels_`` is a Dask array (call
``.compute()`` to bring the labels here); prediction on a Dask collection is lazy, part by
part. Components are grouped into clusters (``merge``) from their overlap measured on the
sample's rows, a uniform sample of the same sums Hennig's DEMP takes over every row.
"""
from __future__ import annotations

import copy
import dataclasses
import time

import numpy as np


class FitStopped(RuntimeError):
    """A fit of a Dask collection stopped (``stop``) before one sweep over every row was complete."""


def _client():
    try:
        from distributed import get_client

        return get_client()
    except (ImportError, ValueError):
        raise ValueError(
            "MAPDP fits a Dask collection on a dask.distributed cluster, and no client is running: start one "
            "first (from dask.distributed import Client; client = Client() for this machine, or Client(address) "
            "for a cluster), or call .compute() on the data to fit it in memory.") from None


def _parts_of(X) -> list:
    """One delayed object per part of the rows, each with every column."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"a Dask array to cluster must have 2 dimensions (rows x columns), got {X.ndim}; "
                             "reshape a single feature with x.reshape(-1, 1).")
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})  # a part must hold whole rows
        return list(X.to_delayed()[:, 0])
    if isinstance(X, dd.Series):
        X = X.to_frame()
    if isinstance(X, dd.DataFrame):
        return list(X.to_delayed())
    raise TypeError(f"MAPDP can fit a dask.array.Array or a dask.dataframe.DataFrame, not {type(X).__name__}; "
                    "call .compute() first to fit it in memory.")


def _seed_of(random_state) -> int:
    if isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        from mapdp_core.core.validation import make_rng

        return int(make_rng(random_state).integers(0, 2**63 - 1))
    if random_state is None:
        return int(np.random.SeedSequence().entropy % (2**63))
    return int(random_state)


def plan(seed: int, lengths: list, n_sample: int):
    """The fit's random choices, fixed by ``seed`` and the parts' lengths: the sample's rows
    (positions in the whole table, sorted) and one SeedSequence per part for its visiting order."""
    root = np.random.SeedSequence(seed)
    sample_seq, *part_seqs = root.spawn(len(lengths) + 1)
    N = int(sum(lengths))
    rows = np.sort(np.random.default_rng(sample_seq).choice(N, min(n_sample, N), replace=False))
    return rows, part_seqs


def visiting_order(seq, n: int) -> np.ndarray:
    """A part's visiting order from its SeedSequence."""
    return np.random.default_rng(seq).permutation(n).astype(np.int64)


def part_length(part) -> int:
    """The rows of one part (a pandas frame or an array), run where the part lies."""
    return len(part)


def rows_at(part, positions):
    """The rows of one part at ``positions`` (counted from the part's first row)."""
    return part.iloc[positions] if hasattr(part, "iloc") else np.asarray(part)[positions]


def positions_by_part(rows: np.ndarray, lengths) -> list:
    """Rows of the whole table (sorted positions) as positions within each part, one array per part."""
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    where = np.searchsorted(offsets, rows, side="right") - 1
    return [rows[where == w] - offsets[w] for w in range(len(lengths))]


def _encode_and_extend(part, sample_fit, keep_at, keep_labels, offset):
    """Phase 2 on one part: (encoded rows, raw extension labels, their labels in order of first
    appearance)."""
    from mapdp_core.engine.model_data import extension_labels

    unseen: list = []
    M = sample_fit._encode_new(part, unseen)
    if unseen:
        cells = sorted({(c["column"], str(c["value"])) for c in unseen})
        shown = "; ".join(f"{col!r}: {val!r}" for col, val in cells[:5])
        first = offset + min(c["row"] for c in unseen)
        raise ValueError(
            f"{len(unseen)} cell(s) hold categories that the {len(sample_fit._parsed.X)} sampled rows the model was "
            f"built on never showed ({shown}{' ...' if len(cells) > 5 else ''}; first at row {first}): their rows "
            "cannot be scored as the model's. Give restart_rows more rows (so that the sample sees every category), "
            "or group rare categories into one before fitting.")
    raw = extension_labels(sample_fit._parsed, np.asarray(sample_fit.component_labels_, dtype=np.int64), M,
                           sample_fit.N0_, keep=(keep_at, keep_labels) if len(keep_at) else None)
    values, first = np.unique(raw, return_index=True)
    return M, raw, values[np.argsort(first)]


def _make_part(encoded, seq, remap, layout):
    from mapdp_core.engine.partitioned import make_part

    M, raw, _ = encoded
    order = np.arange(len(M), dtype=np.int64) if seq is None else visiting_order(seq, len(M))
    return make_part(M, order, remap[raw], layout)


def fit_partitioned(est, X, default_sample_rows: int, progress=None, stop=None):
    """Fit ``est`` (a MAPDP) to the Dask collection ``X``; see the module docstring.
    ``default_sample_rows``: the sample's size for ``restart_rows="auto"`` (or None).

    For an app: ``progress(step)``, if given, is called with a dict at each step: ``{"phase":
    "sample" | "extension"}``, then ``{"phase": "sweep", "sweep", "round", "committed", "parts",
    "moved"}`` after every round. ``stop`` (anything with ``is_set()``): when set, the fit ends
    at the next round with the last complete sweep (``converged_`` False,
    ``partitions_.attrs["stopped"]`` True), or raises :class:`FitStopped` if no sweep over
    every row was complete."""
    import dask.array as da
    import pandas as pd
    from sklearn.base import clone

    from mapdp_core.engine.model_data import ModelData
    from mapdp_core.engine.partitioned import DaskParts, Layout, item_of, partitioned_sweeps, table_labels
    from mapdp_core.core.spec import refuse_shared_statistics
    from mapdp_core.core.validation import check_bool, check_int

    t0 = time.perf_counter()
    est._check_shared_params()
    est._merge_cutoff(None)  # a bad ``merge`` is said before any work
    if est.init is not None:
        raise ValueError("init= gives a starting partition of rows in memory; a Dask collection's fit starts from "
                         "its sample's partition. Leave init out, or fit the rows in memory.")
    shuffle = check_bool(est.shuffle, "shuffle")
    client = _client()
    ex = DaskParts(client)
    data = client.compute(_parts_of(X))
    all_lengths = client.gather([client.submit(part_length, d, pure=False) for d in data])
    data = [d for d, n in zip(data, all_lengths) if n]  # an empty part holds nothing to visit
    lengths = [n for n in all_lengths if n]
    N = int(sum(lengths))
    if N == 0:
        raise ValueError("the Dask collection has no rows; there is nothing to cluster.")
    rows_option = est.restart_rows
    n_sample = (default_sample_rows if rows_option is None or rows_option == "auto"
                else check_int(rows_option, "restart_rows", 2))
    seed = _seed_of(est.random_state)
    sample_rows, part_seqs = plan(seed, lengths, n_sample)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    at = positions_by_part(sample_rows, lengths)
    tell = progress if progress is not None else (lambda step: None)
    tell({"phase": "sample"})
    pieces = client.gather([client.submit(rows_at, d, a, pure=False) for d, a in zip(data, at)])
    sample = pd.concat(pieces) if isinstance(pieces[0], pd.DataFrame) else np.concatenate(pieces)

    # phase 1: the sample, fitted here as any table (its restarts kept by the exact joint)
    sample_fit = clone(est).set_params(restart_rows=None, merge=None, random_state=seed)
    # the parts are swept in rounds that keep each part's scores while other parts move rows, which a
    # covariance shared by all clusters (every move changes every score) does not allow: not offered
    sample_fit._partitioned_sample = True
    sample_fit.fit(sample)
    refuse_shared_statistics(sample_fit._parsed, "MAPDP on a Dask collection", "sweeps the parts in rounds that "
                             "keep each part's scores while other parts move rows")
    sample_seconds = time.perf_counter() - t0
    if stop is not None and stop.is_set():
        raise FitStopped("stopped while the sample was fitted; nothing is fitted.")
    tell({"phase": "extension"})
    # phase 2: every part encoded and extended on its worker
    sample_labels = np.asarray(sample_fit.component_labels_, dtype=np.int64)
    shared_fit = client.scatter(_slim(sample_fit), broadcast=True, hash=False)
    bounds = np.concatenate([[0], np.cumsum([len(a) for a in at])])
    encoded = [client.submit(_encode_and_extend, d, shared_fit, a, sample_labels[lo:hi], int(offsets[w]), pure=False)
               for w, (d, a, lo, hi) in enumerate(zip(data, at, bounds[:-1], bounds[1:]))]
    del data
    firsts = client.gather([client.submit(item_of, e, 2, pure=False) for e in encoded])
    K_raw = int(max(int(f.max()) for f in firsts if len(f))) + 1
    remap = np.full(K_raw, -1, dtype=np.int64)  # numbered by first appearance in the table's order
    K = 0
    for f in firsts:
        for k in f:
            if remap[k] < 0:
                remap[k] = K
                K += 1
    layout = Layout.of(sample_fit._parsed)
    parts = [client.submit(_make_part, e, seq if shuffle else None, remap, layout, pure=False)
             for e, seq in zip(encoded, part_seqs)]
    del encoded
    # phase 3: the sweeps in rounds
    layout_model = ModelData(sample_fit._parsed)
    tol, max_iter = float(est.tol), check_int(est.max_iter, "max_iter", 1)

    def on_round(sweep, round_, committed, n_parts, moved):
        tell({"phase": "sweep", "sweep": sweep, "round": round_, "committed": committed, "parts": n_parts,
              "moved": moved})

    states = list(partitioned_sweeps(ex, parts, K, layout_model, float(sample_fit.N0_), tol, max_iter,
                                     on_round=on_round, stop=stop))
    if not states:
        raise FitStopped("stopped before the first sweep over every row was complete; nothing is fitted.")
    stopped = stop is not None and stop.is_set() and not states[-1].converged
    label_parts = [client.submit(table_labels, p, pure=False) for p in states[-1].parts]
    last = dataclasses.replace(states[-1], parts=[])
    pieces = iter(da.from_delayed(f, shape=(n,), dtype=np.int64) for f, n in zip(label_parts, lengths))
    labels = da.concatenate([next(pieces) if n else da.zeros(0, dtype=np.int64) for n in all_lengths])
    labels = labels.persist()
    history = pd.DataFrame({"sweep": [s.iteration for s in states], "rounds": [s.rounds for s in states],
                            "moved": [s.n_changed for s in states], "clusters": [s.n_clusters for s in states],
                            "neg_log_joint": [s.neg_log_joint for s in states],
                            "seconds": [s.elapsed for s in states]})
    objectives = [s.objective for s in states]
    n_iter = len(states)
    del parts, states  # the parts' rows are released; their labels stay on the workers

    # the fitted model: the sample fit's choices and encoding, the full fit's statistics
    est.__dict__.update({k: v for k, v in sample_fit.__dict__.items() if k.endswith("_") or k.startswith("_")})
    est.labels_ = est.component_labels_ = labels
    est.n_clusters_ = est.n_components_ = int(last.n_clusters)
    est.cluster_sizes_ = est.component_sizes_ = np.array(last.cluster_sizes)
    est.n_iter_ = n_iter
    est.objective_history_ = objectives
    est.neg_log_joint_history_ = list(history["neg_log_joint"])
    est.neg_log_joint_ = float(last.neg_log_joint)
    est.converged_ = bool(last.converged) and not stopped
    est.cluster_summaries_ = last.summaries
    est.restart_neg_log_joints_ = np.asarray(sample_fit.restart_neg_log_joints_)
    est.restart_rows_ = len(sample_rows)
    est._fitted_stats = last.stats
    est._model = type(sample_fit._model)()
    est._k_evidence_of = None
    est.partitions_ = history
    est.partitions_.attrs.update(parts=len(all_lengths), rows=N, sample_rows=len(sample_rows), seed=seed,
                                 sample_seconds=sample_seconds, seconds=time.perf_counter() - t0, stopped=stopped)
    _group_on_sample(est, sample_fit)
    return est


def _slim(fitted):
    """A fitted MAPDP without its labels (what the workers need to encode and score rows)."""
    slim = copy.copy(fitted)
    for name in ("labels_", "merges_", "hyperparameter_search_"):
        slim.__dict__.pop(name, None)
    return slim


def _group_on_sample(est, sample_fit) -> None:
    """``merge``: components grouped by DEMP (``engine.merging.group_components``) from the
    posterior weights of the sample's rows under the full fit's statistics."""
    from mapdp_core.engine.merging import group_components, posterior_weights_from

    cutoff = est._merge_cutoff(sample_fit.hyperparameter_search_)  # "auto" merges when the search ran
    K = est.n_components_
    if cutoff is not None and K > 2:
        tau = posterior_weights_from(est._fitted_model(), K, sample_fit._parsed.X)
    else:  # nothing to merge: the weights of no rows over the K components
        tau = np.zeros((0, K))
    # no folding here: the joint of a union needs its rows in this process
    cluster_of, merges = group_components(sample_fit._parsed, None, cutoff, None, None, tau=tau)
    est.cluster_of_component_ = cluster_of
    est.merges_ = merges
    est.merge_cutoff_ = cutoff
    est.min_cluster_size_ = None
    if len(merges):
        table = cluster_of
        est.labels_ = est.component_labels_.map_blocks(lambda b: table[b], dtype=np.int64)
        est.n_clusters_ = int(cluster_of.max()) + 1
        est.cluster_sizes_ = np.bincount(cluster_of, weights=est.component_sizes_,
                                         minlength=est.n_clusters_).astype(np.int64)


def lazily(est, method: str, X):
    """``est.<method>(X)`` for a Dask collection ``X``, part by part and lazily."""
    import dask.array as da
    import pandas as pd

    slim = copy.copy(est)
    slim.labels_ = slim.component_labels_ = np.zeros(0, dtype=np.int64)  # the parts need no labels
    fn = getattr(slim, method)
    width = {"predict_proba": est.n_clusters_ + 1}.get(method)
    dtype = np.int64 if method == "predict" else float
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"new rows as a Dask array must have 2 dimensions, got {X.ndim}.")
        X = X.rechunk({1: -1})
        if width is None:
            return X.map_blocks(fn, drop_axis=1, dtype=dtype)
        return X.map_blocks(fn, chunks=(X.chunks[0], (width,)), dtype=dtype)
    if width is None:
        return X.map_partitions(lambda df: pd.Series(fn(df), index=df.index), meta=(method, dtype))
    cols = [*range(est.n_clusters_), "new"]
    return X.map_partitions(lambda df: pd.DataFrame(fn(df), index=df.index, columns=cols),
                            meta=pd.DataFrame({c: pd.Series(dtype=float) for c in cols}))
